//! `vexil-edge edge`'s flags, named as Unleash Edge's (version 20.x) flags and environment variables, so
//! that an Unleash Edge deployment's configuration runs it unchanged; and the report, at start, of the
//! Unleash Edge variables that are set but that this command does not implement.

use std::path::PathBuf;

use ipnet::IpNet;

/// Unleash Edge's `edge` mode flags that `vexil-edge edge` implements.
#[derive(clap::Args, Debug)]
pub struct EdgeArgs {
    /// The Unleash server (or Vexil control plane) to mirror, without `/api` (e.g. `https://unleash.example.com`).
    #[arg(short, long, env = "UPSTREAM_URL")]
    pub upstream_url: String,
    /// Client (backend) tokens the features are fetched with, comma-separated; each covers its environment
    /// and projects, and only tokens they cover are served.
    #[arg(
        short,
        long,
        env = "TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub tokens: Vec<String>,
    /// Frontend tokens served without asking the upstream: `project:environment.secret`, or
    /// `secret@environment` (all projects), comma-separated.
    #[arg(
        short,
        long,
        env = "PRETRUSTED_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub pretrusted_tokens: Vec<String>,
    /// Folder the features and validated tokens are backed up to (and restored from at start).
    #[arg(short, long, env = "BACKUP_FOLDER")]
    pub backup_folder: Option<PathBuf>,
    /// Redis the features and validated tokens are backed up to (and restored from at start).
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// Only `single` (one Redis server).
    #[arg(long, env = "REDIS_MODE", default_value = "single")]
    pub redis_mode: String,
    /// Seconds between two fetches of the features.
    #[arg(
        short,
        long,
        env = "FEATURES_REFRESH_INTERVAL_SECONDS",
        default_value_t = 15
    )]
    pub features_refresh_interval_seconds: u64,
    /// Seconds between two posts of the SDKs' metrics to the upstream.
    #[arg(short, long, env = "METRICS_INTERVAL_SECONDS", default_value_t = 60)]
    pub metrics_interval_seconds: u64,
    /// Seconds between two validations of the known tokens with the upstream (a token deleted there stops
    /// working here within this time).
    #[arg(
        long,
        env = "TOKEN_REVALIDATION_INTERVAL_SECONDS",
        default_value_t = 3600
    )]
    pub token_revalidation_interval_seconds: u64,
    /// Headers added to every request to the upstream, `Name: value`, comma-separated.
    #[arg(short = 'H', long, env = "CUSTOM_CLIENT_HEADERS", value_delimiter = ',', value_parser = parse_header)]
    pub custom_client_headers: Vec<(String, String)>,
    /// Do not verify the upstream's TLS certificate.
    #[arg(short, long, env = "SKIP_SSL_VERIFICATION", default_value_t = false)]
    pub skip_ssl_verification: bool,
    /// A PEM file of further CA certificates the upstream's certificate is verified against.
    #[arg(long, env = "UPSTREAM_CERTIFICATE_FILE")]
    pub upstream_certificate_file: Option<PathBuf>,
    /// Seconds an upstream request may take.
    #[arg(long, env = "UPSTREAM_REQUEST_TIMEOUT", default_value_t = 5)]
    pub upstream_request_timeout: u64,
    /// Accepted for compatibility: this edge always serves delta and streaming to its SDKs, and reads its
    /// upstream's delta wherever the upstream has one.
    #[arg(long, env = "STREAMING", default_value_t = false)]
    pub streaming: bool,
    /// Accepted for compatibility (see `--streaming`).
    #[arg(long, env = "DELTA", default_value_t = false)]
    pub delta: bool,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// Unleash Edge's global flags (its HTTP server and identity).
#[derive(clap::Args, Debug)]
pub struct HttpArgs {
    #[arg(short = 'P', long, env = "PORT", default_value_t = 3063)]
    pub port: u16,
    /// Address to listen on (`::`: every address, IPv4 included).
    #[arg(short, long, env = "INTERFACE", default_value = "::")]
    pub interface: String,
    /// A path prefix for every route (e.g. `/unleash`).
    #[arg(long, env = "BASE_PATH", default_value = "")]
    pub base_path: String,
    /// The header SDKs send their token in, and this edge sends its tokens to the upstream in.
    #[arg(long, env = "TOKEN_HEADER", default_value = "Authorization")]
    pub token_header: String,
    /// This edge's application name towards the upstream.
    #[arg(short, long, env = "APP_NAME", default_value = "vexil-edge")]
    pub app_name: String,
    /// This edge's instance id towards the upstream; default `vexil-edge@<random>`.
    #[arg(long, env = "INSTANCE_ID")]
    pub instance_id: Option<String>,
    /// `plain` or `json` log lines.
    #[arg(short, long, env = "LOG_FORMAT", default_value = "plain", value_parser = ["plain", "json", "pretty"])]
    pub log_format: String,
    /// Only callers in these networks (CIDRs, comma-separated) are answered.
    #[arg(long, env = "ALLOW_LIST", value_delimiter = ',')]
    pub allow_list: Vec<IpNet>,
    /// Callers in these networks are refused.
    #[arg(long, env = "DENY_LIST", value_delimiter = ',')]
    pub deny_list: Vec<IpNet>,
    /// Origins allowed on the frontend API (CORS); default every origin.
    #[arg(long, env = "CORS_ORIGIN", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    /// Take the caller's IP from the first `X-Forwarded-For` hop.
    #[arg(long, env = "TRUST_PROXY", default_value_t = false)]
    pub trust_proxy: bool,
    /// `/internal-backstage/metrics` answers 404.
    #[arg(long, env = "DISABLE_METRICS_ENDPOINT", default_value_t = false)]
    pub disable_metrics_endpoint: bool,
    /// `/internal-backstage/features` answers 404.
    #[arg(long, env = "DISABLE_FEATURES_ENDPOINT", default_value_t = false)]
    pub disable_features_endpoint: bool,
    /// `/internal-backstage/tokens` answers 404.
    #[arg(long, env = "DISABLE_TOKENS_ENDPOINT", default_value_t = false)]
    pub disable_tokens_endpoint: bool,
    /// `/internal-backstage/metricsbatch` answers 404 (this edge has none: accepted).
    #[arg(long, env = "DISABLE_METRICS_BATCH_ENDPOINT", default_value_t = false)]
    pub disable_metrics_batch_endpoint: bool,
    /// `/internal-backstage/instancedata` answers 404 (this edge has none: accepted).
    #[arg(long, env = "DISABLE_INSTANCE_DATA_ENDPOINT", default_value_t = false)]
    pub disable_instance_data_endpoint: bool,
    /// `--request-timeout` and `--header-read-timeout`.
    #[command(flatten)]
    pub http_timeouts: vexil_serving::serve::HttpTimeouts,
    /// `--max-streams`.
    #[command(flatten)]
    pub streams: vexil_serving::StreamArgs,
}

impl EdgeArgs {
    /// `LOG_FORMAT=json`.
    pub fn json_logs(&self) -> bool {
        self.http.log_format == "json"
    }
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} is not a header `Name: value`"))?;
    let (name, value) = (name.trim(), value.trim());
    axum::http::HeaderName::try_from(name).map_err(|e| format!("header {name:?}: {e}"))?;
    axum::http::HeaderValue::try_from(value).map_err(|e| format!("header {name:?}: {e}"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// Unleash Edge's variables that this command does not implement: each one set is reported at start.
const UNSUPPORTED: &[&str] = &[
    "REDIS_PASSWORD",
    "REDIS_USERNAME",
    "REDIS_PORT",
    "REDIS_HOST",
    "REDIS_SECURE",
    "REDIS_SCHEME",
    "REDIS_READ_CONNECTION_TIMEOUT_MILLISECONDS",
    "REDIS_WRITE_CONNECTION_TIMEOUT_MILLISECONDS",
    "S3_BUCKET_NAME",
    "UPSTREAM_SOCKET_TIMEOUT",
    "CLIENT_KEEPALIVE_TIMEOUT",
    "EDGE_REQUEST_TIMEOUT",
    "EDGE_KEEPALIVE_TIMEOUT",
    "PROMETHEUS_REMOTE_WRITE_URL",
    "PROMETHEUS_PUSH_INTERVAL",
    "PROMETHEUS_USERNAME",
    "PROMETHEUS_PASSWORD",
    "PROMETHEUS_USER_ID",
    "PKCS8_CLIENT_CERTIFICATE_FILE",
    "PKCS8_CLIENT_KEY_FILE",
    "PKCS12_IDENTITY_FILE",
    "PKCS12_PASSPHRASE",
    "PEM_CERT_FILE",
    "TLS_ENABLE",
    "TLS_SERVER_KEY",
    "TLS_SERVER_CERT",
    "TLS_SERVER_PORT",
    "REDIRECT_HTTP_TO_HTTPS",
    "EDGE_AUTH_HEADER",
    "UPSTREAM_AUTH_HEADER",
    "CORS_ALLOWED_HEADERS",
    "CORS_MAX_AGE",
    "CORS_EXPOSED_HEADERS",
    "CORS_METHODS",
    "PROXY_TRUSTED_SERVERS",
    "DISABLE_ALL_ENDPOINT",
    "SENTRY_DSN",
    "DATADOG_URL",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "UNLEASH_CLIENT_SECRET",
    "DESIRED_ENVIRONMENTS",
    "DESIRED_PROJECTS",
];

/// The unimplemented Unleash Edge variables set in `environment` (name, value pairs), in list order.
pub fn unsupported_variables<'e>(
    environment: impl IntoIterator<Item = (&'e str, &'e str)>,
) -> Vec<&'static str> {
    let set: Vec<&str> = environment
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, _)| name)
        .collect();
    UNSUPPORTED
        .iter()
        .copied()
        .filter(|name| set.contains(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_only_the_unsupported_variables_that_are_set() {
        let found = unsupported_variables([
            ("UPSTREAM_URL", "http://x"),
            ("TLS_ENABLE", "true"),
            ("REDIS_PASSWORD", ""),
            ("S3_BUCKET_NAME", "b"),
        ]);
        assert_eq!(found, ["S3_BUCKET_NAME", "TLS_ENABLE"]);
    }

    #[test]
    fn headers_are_name_colon_value() {
        assert_eq!(
            parse_header("X-Tenant: a:b").unwrap(),
            ("X-Tenant".to_owned(), "a:b".to_owned())
        );
        assert!(parse_header("nocolon").is_err());
    }
}
