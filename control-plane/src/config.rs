//! Command-line flags, each with its environment variable.

use crate::domain::limits::Limits;
use crate::import_command::ImportArgs;
use clap::{Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthType {
    /// Admin API calls need an admin token.
    OpenSource,
    /// No token needed (the spec's method `none`), on the admin API and on the edges' gRPC channel.
    None,
}

/// The format of the log on standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured only on a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "vexil-control-plane",
    version,
    about = "Vexil control plane: admin API and store"
)]
pub struct Config {
    /// Without one: serve.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Address to listen on; port 0 picks a free port (the bound address is printed as `listening on ADDR`).
    #[arg(long, env = "VEXIL_LISTEN", default_value = "0.0.0.0:4242")]
    pub listen: SocketAddr,

    /// Address of the gRPC snapshot stream the edges subscribe to; port 0 picks a free port (printed as
    /// `grpc listening on ADDR`). Every call needs an edge token unless `--auth-type none`.
    #[arg(long, env = "VEXIL_GRPC_LISTEN", default_value = "0.0.0.0:4243")]
    pub grpc_listen: SocketAddr,

    /// PEM certificate chain of the gRPC listener: with `--grpc-tls-key`, edges connect with `https://`.
    /// Without both, the listener speaks plain text (a warning at start unless it is on a loopback address).
    #[arg(
        long,
        env = "VEXIL_GRPC_TLS_CERT",
        value_name = "FILE",
        requires = "grpc_tls_key"
    )]
    pub grpc_tls_cert: Option<PathBuf>,

    /// PEM private key of `--grpc-tls-cert`.
    #[arg(
        long,
        env = "VEXIL_GRPC_TLS_KEY",
        value_name = "FILE",
        requires = "grpc_tls_cert"
    )]
    pub grpc_tls_key: Option<PathBuf>,

    /// Whether `/api/frontend*` answers (here and on the edges); `false` → 404.
    #[arg(long, env = "VEXIL_FRONTEND_API_ENABLED", default_value_t = true, action = clap::ArgAction::Set)]
    pub frontend_api_enabled: bool,

    /// Take the caller's IP from the first `X-Forwarded-For` hop (behind a trusted proxy only).
    #[arg(long, env = "VEXIL_TRUST_PROXY")]
    pub trust_proxy: bool,

    /// `sqlite://FILE` (created if missing) or `postgres://…`.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://vexil.db",
        global = true
    )]
    pub database_url: String,

    /// Where SDKs reach Vexil (your edges' address behind their load balancer, e.g.
    /// `https://flags.example.com`), for the UI's "Connect an SDK" snippets; default: this control plane's
    /// own address, which serves the SDK routes too.
    #[arg(long, env = "VEXIL_SDK_URL", value_parser = parse_sdk_url)]
    pub sdk_url: Option<String>,

    /// The instance's address as its users reach it, with the base path (e.g. `https://flags.example.com`):
    /// links to reset a password, to set one and to sign up start with it. Default: the address each request
    /// came to; required with `--smtp-url` (e-mailed links never follow a request's `Host`).
    #[arg(long, env = "VEXIL_PUBLIC_URL", value_parser = parse_sdk_url)]
    pub public_url: Option<String>,

    /// Serve every route under this path (`/x`), reported as baseUriPath.
    #[arg(long, env = "VEXIL_BASE_PATH", default_value = "", value_parser = parse_base_path)]
    pub base_path: String,

    /// `none` also opens the edges' gRPC channel: no edge token is asked for.
    #[arg(
        long,
        env = "VEXIL_AUTH_TYPE",
        value_enum,
        default_value = "open-source"
    )]
    pub auth_type: AuthType,

    /// Admin token secrets (`*:*.secret`) to create at start when absent, comma-separated.
    #[arg(long, env = "VEXIL_INIT_ADMIN_TOKENS", value_delimiter = ',')]
    pub init_admin_tokens: Vec<String>,

    /// Client token secrets (`project:environment.secret`) to create at start when absent, comma-separated.
    #[arg(long, env = "VEXIL_INIT_CLIENT_TOKENS", value_delimiter = ',')]
    pub init_client_tokens: Vec<String>,

    /// Frontend token secrets (`project:environment.secret`) to create at start when absent, comma-separated.
    #[arg(long, env = "VEXIL_INIT_FRONTEND_TOKENS", value_delimiter = ',')]
    pub init_frontend_tokens: Vec<String>,

    /// Edge token secrets (`*:environment.secret`, or `*:*.secret` for every environment) to create at start
    /// when absent, comma-separated; edges send one with `vexil-edge serve --token`.
    #[arg(long, env = "VEXIL_INIT_EDGE_TOKENS", value_delimiter = ',')]
    pub init_edge_tokens: Vec<String>,

    /// Turn off password sign-in (`POST /auth/simple/login`); reported as `disablePasswordAuth`.
    #[arg(long, env = "VEXIL_DISABLE_PASSWORD_AUTH")]
    pub disable_password_auth: bool,

    /// The log on standard error: `text`, or `json` (every line one JSON object). Standard output is not the
    /// log: it carries only the plain-text lines scripts read (`listening on ADDR`, `grpc listening on ADDR`,
    /// and the first admin token when one is created), whatever the format.
    #[arg(long, env = "VEXIL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Largest accepted request body in bytes; larger ones get 413.
    #[arg(long, env = "VEXIL_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,

    /// Days the hourly usage buckets (minute buckets older than 48 h, rolled up) are kept.
    #[arg(long, env = "VEXIL_METRICS_RETENTION_DAYS", default_value_t = 90)]
    pub metrics_retention_days: u32,

    /// Days an application, an instance, a flag name an application reported, or a registered strategy list
    /// is kept after it was last seen (Unleash drops applications unseen for 30 days), so that names chosen
    /// by clients do not grow the tables forever.
    #[arg(long, env = "VEXIL_CLIENT_RETENTION_DAYS", default_value_t = 30)]
    pub client_retention_days: u32,

    /// How often the tokens used on this process (admin API, SDK routes, gRPC) are written as their "last
    /// used" (`seenAt`): one transaction per interval, never a write per request (`60s`, `500ms`).
    #[arg(long, env = "VEXIL_TOKEN_SEEN_INTERVAL", default_value = "60s",
          value_parser = vexil_serving::serve::parse_duration)]
    pub token_seen_interval: std::time::Duration,

    /// How often flags older than their type's lifetime are marked potentially stale (`60m`, `500ms`).
    #[arg(long, env = "VEXIL_POTENTIALLY_STALE_INTERVAL", default_value = "60m",
          value_parser = vexil_serving::serve::parse_duration)]
    pub potentially_stale_interval: std::time::Duration,

    /// Resource limits: `--limit-<field>` / `VEXIL_LIMIT_<FIELD>` each.
    #[command(flatten)]
    pub limits: Limits,

    /// `--request-timeout` and `--header-read-timeout`.
    #[command(flatten)]
    pub http_timeouts: vexil_serving::serve::HttpTimeouts,

    /// `--max-streams`: the SDKs' change streams this process holds open.
    #[command(flatten)]
    pub streams: vexil_serving::StreamArgs,

    /// `--webhook-*`: how addon deliveries are made.
    #[command(flatten)]
    pub webhooks: crate::webhooks::DeliverySettings,

    /// OpenID Connect sign-in through Unleash's `OIDC_*` variables.
    #[command(flatten)]
    pub oidc: OidcEnv,

    /// SAML 2.0 sign-in through Unleash's `SAML_*` variables.
    #[command(flatten)]
    pub saml: SamlEnv,
    /// `--smtp-url`, `--smtp-from`: e-mail of reset and welcome links.
    #[command(flatten)]
    pub mail: crate::mail::MailSettings,
}

/// OpenID Connect sign-in configured by Unleash's environment variables. With `OIDC_ENABLED` given (true
/// or false) these win over the settings stored through the API, which become read-only, and
/// `oidcConfiguredThroughEnv` is true.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OidcEnv {
    /// Turn OpenID Connect sign-in on (true) or off (false); given, the other `OIDC_*` values apply.
    #[arg(long, env = "OIDC_ENABLED", action = clap::ArgAction::Set)]
    pub oidc_enabled: Option<bool>,
    /// The provider's discovery URL (`…/.well-known/openid-configuration`) or issuer URL.
    #[arg(long, env = "OIDC_DISCOVER_URL")]
    pub oidc_discover_url: Option<String>,
    #[arg(long, env = "OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    #[arg(long, env = "OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,
    /// Create users at their first sign-in.
    #[arg(long, env = "OIDC_AUTO_CREATE", action = clap::ArgAction::Set, default_value_t = false)]
    pub oidc_auto_create: bool,
    /// Comma-separated e-mail domains users must have to be created.
    #[arg(long, env = "OIDC_AUTO_CREATE_EMAIL_DOMAINS")]
    pub oidc_auto_create_email_domains: Option<String>,
    /// The root role of created users: Viewer, Editor (default) or Admin.
    #[arg(long, env = "OIDC_DEFAULT_ROOT_ROLE")]
    pub oidc_default_root_role: Option<String>,
    #[arg(long, env = "OIDC_ENABLE_GROUP_SYNCING", action = clap::ArgAction::Set, default_value_t = false)]
    pub oidc_enable_group_syncing: bool,
    /// Where the groups are in the ID token (default `groups`).
    #[arg(long, env = "OIDC_GROUP_JSON_PATH")]
    pub oidc_group_json_path: Option<String>,
    #[arg(long, env = "OIDC_ADD_GROUPS_SCOPE", action = clap::ArgAction::Set, default_value_t = false)]
    pub oidc_add_groups_scope: bool,
    #[arg(long, env = "OIDC_ENABLE_SINGLE_SIGN_OUT", action = clap::ArgAction::Set, default_value_t = false)]
    pub oidc_enable_single_sign_out: bool,
}

impl OidcEnv {
    /// The settings these give, when `OIDC_ENABLED` is given.
    pub fn settings(&self) -> Option<crate::domain::sso_settings::OidcSettings> {
        let enabled = self.oidc_enabled?;
        let text = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
        Some(crate::domain::sso_settings::OidcSettings {
            enabled,
            discover_url: text(&self.oidc_discover_url),
            client_id: text(&self.oidc_client_id),
            secret: text(&self.oidc_client_secret),
            auto_create: self.oidc_auto_create,
            email_domains: text(&self.oidc_auto_create_email_domains),
            default_root_role: text(&self.oidc_default_root_role),
            enable_single_sign_out: self.oidc_enable_single_sign_out,
            enable_group_syncing: self.oidc_enable_group_syncing,
            group_json_path: text(&self.oidc_group_json_path),
            add_groups_scope: self.oidc_add_groups_scope,
            enable_pkce: true,
            ..Default::default()
        })
    }
}

/// SAML 2.0 sign-in configured by Unleash's environment variables. With `SAML_ENABLED` given (true or
/// false) these win over the settings stored through the API, which become read-only, and
/// `samlConfiguredThroughEnv` is true.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SamlEnv {
    /// Turn SAML 2.0 sign-in on (true) or off (false); given, the other `SAML_*` values apply.
    #[arg(long, env = "SAML_ENABLED", action = clap::ArgAction::Set)]
    pub saml_enabled: Option<bool>,
    /// The identity provider's entity ID (the issuer of its responses).
    #[arg(long, env = "SAML_ENTITY_ID")]
    pub saml_entity_id: Option<String>,
    /// The identity provider's single sign-on URL.
    #[arg(long, env = "SAML_SIGNON_URL")]
    pub saml_signon_url: Option<String>,
    /// The identity provider's signing certificate (PEM or its base64 body).
    #[arg(long, env = "SAML_CERTIFICATE")]
    pub saml_certificate: Option<String>,
    /// A file holding that certificate, read at start (when `SAML_CERTIFICATE` is not given).
    #[arg(long, env = "SAML_CERTIFICATE_FILE")]
    pub saml_certificate_file: Option<std::path::PathBuf>,
    /// The identity provider's single logout URL.
    #[arg(long, env = "SAML_SIGNOUT_URL")]
    pub saml_signout_url: Option<String>,
    /// The private key (PEM) that signs sign-out requests.
    #[arg(long, env = "SAML_SIGNOUT_CERTIFICATE", hide_env_values = true)]
    pub saml_signout_certificate: Option<String>,
    /// A file holding that key, read at start.
    #[arg(long, env = "SAML_SIGNOUT_CERTIFICATE_PATH")]
    pub saml_signout_certificate_path: Option<std::path::PathBuf>,
    /// Create users at their first sign-in.
    #[arg(long, env = "SAML_AUTO_CREATE", action = clap::ArgAction::Set, default_value_t = false)]
    pub saml_auto_create: bool,
    /// Comma-separated e-mail domains users must have to be created.
    #[arg(long, env = "SAML_EMAIL_DOMAINS")]
    pub saml_email_domains: Option<String>,
    /// The root role of created users: Viewer, Editor (default) or Admin.
    #[arg(long, env = "SAML_DEFAULT_ROOT_ROLE")]
    pub saml_default_root_role: Option<String>,
    #[arg(long, env = "SAML_ENABLE_GROUP_SYNCING", action = clap::ArgAction::Set, default_value_t = false)]
    pub saml_enable_group_syncing: bool,
    /// The assertion attribute that lists the groups (default `groups`).
    #[arg(long, env = "SAML_GROUP_JSON_PATH")]
    pub saml_group_json_path: Option<String>,
}

impl SamlEnv {
    /// The settings these give, when `SAML_ENABLED` is given; an error names a file that cannot be read.
    pub fn settings(&self) -> Result<Option<crate::domain::saml_settings::SamlSettings>, String> {
        let Some(enabled) = self.saml_enabled else {
            return Ok(None);
        };
        let text = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
        let from_file =
            |value: &Option<String>, path: &Option<std::path::PathBuf>, name: &str| match (
                text(value),
                path,
            ) {
                (Some(value), _) => Ok(Some(value)),
                (None, Some(path)) => std::fs::read_to_string(path)
                    .map(|text| Some(text.trim().to_owned()))
                    .map_err(|error| format!("{name} {}: {error}", path.display())),
                (None, None) => Ok(None),
            };
        Ok(Some(crate::domain::saml_settings::SamlSettings {
            enabled,
            entity_id: text(&self.saml_entity_id),
            sign_on_url: text(&self.saml_signon_url),
            certificate: from_file(
                &self.saml_certificate,
                &self.saml_certificate_file,
                "SAML_CERTIFICATE_FILE",
            )?,
            sign_out_url: text(&self.saml_signout_url),
            sp_certificate: from_file(
                &self.saml_signout_certificate,
                &self.saml_signout_certificate_path,
                "SAML_SIGNOUT_CERTIFICATE_PATH",
            )?,
            auto_create: self.saml_auto_create,
            email_domains: text(&self.saml_email_domains),
            default_root_role: text(&self.saml_default_root_role),
            enable_group_syncing: self.saml_enable_group_syncing,
            group_json_path: text(&self.saml_group_json_path),
            ..Default::default()
        }))
    }
}

/// What to do instead of serving.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Import flags in Unleash's export format into the store (`--database-url`), all or nothing: an
    /// export file into a project and environment, or everything of a running Unleash.
    Import(ImportArgs),
}

/// "" or "/x…" without a trailing slash; "x" and "/x/" are read as "/x".
fn parse_sdk_url(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|error| format!("not a URL: {error}"))?;
    if !matches!(url.scheme(), "http" | "https")
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err("an http(s) URL without a query, e.g. https://flags.example.com".to_owned());
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

fn parse_base_path(text: &str) -> Result<String, String> {
    let trimmed = text.trim().trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if trimmed.contains(['?', '#', '{', '}', ' ']) {
        return Err(format!("{text:?} is not a URL path"));
    }
    Ok(format!("/{trimmed}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_urls_are_http_without_a_trailing_slash() {
        assert_eq!(
            parse_sdk_url("https://flags.example.com/").unwrap(),
            "https://flags.example.com"
        );
        assert_eq!(
            parse_sdk_url("http://edge:3063/x").unwrap(),
            "http://edge:3063/x"
        );
        assert!(parse_sdk_url("ftp://x").is_err());
        assert!(parse_sdk_url("https://x/?a=1").is_err());
        assert!(parse_sdk_url("nope").is_err());
    }

    #[test]
    fn base_paths_are_normalised() {
        assert_eq!(parse_base_path("").unwrap(), "");
        assert_eq!(parse_base_path("/").unwrap(), "");
        assert_eq!(parse_base_path("unleash/").unwrap(), "/unleash");
        assert_eq!(parse_base_path("/a/b").unwrap(), "/a/b");
        assert!(parse_base_path("/a?b").is_err());
    }

    #[test]
    fn defaults_match_the_issue() {
        let config = Config::try_parse_from(["vexil-control-plane"]).unwrap();
        assert_eq!(config.listen.to_string(), "0.0.0.0:4242");
        assert_eq!(config.database_url, "sqlite://vexil.db");
        assert_eq!(config.base_path, "");
        assert_eq!(config.auth_type, AuthType::OpenSource);
        assert_eq!(config.body_limit, 1024 * 1024);
        assert_eq!(config.grpc_listen.to_string(), "0.0.0.0:4243");
        assert!(config.frontend_api_enabled);
        assert!(!config.trust_proxy);
        assert_eq!(config.limits, Limits::default());
        assert!(!config.disable_password_auth);
        assert_eq!(config.client_retention_days, 30);
        assert!(config.init_edge_tokens.is_empty());
        assert_eq!((config.grpc_tls_cert, config.grpc_tls_key), (None, None));
        // A certificate needs its key, and the other way round.
        assert!(
            Config::try_parse_from(["vexil-control-plane", "--grpc-tls-cert", "c.pem"]).is_err()
        );
        assert!(
            Config::try_parse_from(["vexil-control-plane", "--grpc-tls-key", "k.pem"]).is_err()
        );
        assert_eq!(
            config.http_timeouts,
            vexil_serving::serve::HttpTimeouts::default()
        );
        let config = Config::try_parse_from([
            "vexil-control-plane",
            "--auth-type",
            "none",
            "--init-client-tokens",
            "default:development.a,*:production.b",
            "--frontend-api-enabled",
            "false",
        ])
        .unwrap();
        assert_eq!(config.auth_type, AuthType::None);
        assert!(!config.frontend_api_enabled);
        assert_eq!(
            config.init_client_tokens,
            vec!["default:development.a", "*:production.b"]
        );
    }
}
