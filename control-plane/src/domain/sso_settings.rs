//! Single sign-on settings: OpenID Connect (`/api/admin/auth/oidc/settings`, Unleash's oidcSettingsSchema)
//! and password sign-in (`/api/admin/auth/simple/settings`, passwordAuthSchema), stored as instance-wide
//! settings, or given by Unleash's `OIDC_*` environment variables, which win over the database and make the
//! OIDC settings read-only through the API.
//!
//! The one rule that keeps an instance reachable: password sign-in can be switched off only while a
//! single sign-on (OpenID Connect, or SAML 2.0: `domain::saml_settings`) is configured and enabled; without
//! one, a stored `disabled: true` does not hold (the answer says so). The operator's admin-token sign-in on `/login` stays whatever these say.

use super::events::EventType;
use super::roles::{RoleReference, RootRole};
use super::saml_settings::{self, SamlSettings};
use super::sso_sign_in::Provisioning;
use crate::store::settings as settings_store;
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// The signing algorithms an ID token may use (Unleash's `idTokenSigningAlgorithm`).
pub const SIGNING_ALGORITHMS: [&str; 3] = ["RS256", "RS384", "RS512"];

/// OpenID Connect settings (oidcSettingsSchema). `secret` is taken on a write and never answered: a read
/// leaves it out (`secretSet` says whether one is stored); a write without it keeps the stored one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct OidcSettings {
    pub enabled: bool,
    /// The provider's `.well-known/openid-configuration` URL, or its issuer URL.
    pub discover_url: Option<String>,
    pub client_id: Option<String>,
    /// Write only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Create a user at their first sign-in (else only existing users, matched by e-mail, sign in).
    pub auto_create: bool,
    /// Comma-separated e-mail domains a user must have to be created (empty: any).
    pub email_domains: Option<String>,
    /// The root role of a created user: Viewer, Editor or Admin (default Editor).
    pub default_root_role: Option<String>,
    /// Takes precedence over `defaultRootRole`.
    pub default_root_role_id: Option<i64>,
    pub enable_single_sign_out: bool,
    pub acr_values: Option<String>,
    /// RS256 (default), RS384 or RS512.
    pub id_token_signing_algorithm: Option<String>,
    /// Set the user's membership of every group whose `mappingsSSO` names one of the token's groups.
    pub enable_group_syncing: bool,
    /// Where the groups are in the ID token's claims: a claim name or a dotted path (default `groups`).
    pub group_json_path: Option<String>,
    /// Ask for the `groups` scope too.
    pub add_groups_scope: bool,
    /// Always true in answers: Vexil sends PKCE (S256) with every sign-in whatever a write says.
    pub enable_pkce: bool,
    /// Read only: whether a client secret is stored.
    #[serde(skip_deserializing)]
    pub secret_set: bool,
}

impl OidcSettings {
    /// Enabled with what a sign-in needs.
    pub fn usable(&self) -> bool {
        self.enabled && self.discover_url.is_some() && self.client_id.is_some()
    }

    /// Who may be created, with which role, and whether groups are synced.
    pub fn provisioning(&self) -> Provisioning {
        Provisioning::new(
            self.auto_create,
            self.email_domains.as_deref(),
            self.default_root_role_id,
            self.default_root_role.as_deref(),
            self.enable_group_syncing,
        )
    }

    /// The root role a created user gets.
    pub fn default_role(&self) -> RootRole {
        self.provisioning().default_role
    }

    pub fn group_path(&self) -> &str {
        self.group_json_path
            .as_deref()
            .filter(|path| !path.trim().is_empty())
            .unwrap_or("groups")
    }

    pub fn signing_algorithm(&self) -> &str {
        self.id_token_signing_algorithm
            .as_deref()
            .unwrap_or("RS256")
    }

    /// The settings as answered and recorded in events: no secret.
    pub fn shown(&self) -> OidcSettings {
        OidcSettings {
            secret: None,
            secret_set: self.secret.is_some(),
            enable_pkce: true,
            ..self.clone()
        }
    }
}

/// Password sign-in (passwordAuthSchema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct PasswordAuth {
    /// Whether username/password sign-in is disabled. Holds only while a single sign-on (OpenID Connect
    /// or SAML 2.0) is configured and enabled.
    #[serde(default)]
    pub disabled: bool,
}

/// What the process was started with that bears on sign-in.
#[derive(Debug, Clone, Default)]
pub struct SignInConfig {
    /// False with `--disable-password-auth`.
    pub password_flag: bool,
    /// The OpenID Connect settings of the `OIDC_*` variables (`OIDC_ENABLED` given), which win over the
    /// database.
    pub oidc_env: Option<OidcSettings>,
    /// The SAML settings of the `SAML_*` variables (`SAML_ENABLED` given), which win over the database.
    pub saml_env: Option<SamlSettings>,
}

fn clean(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

/// The OpenID Connect settings in force: the environment's, else the stored ones (secret included).
pub async fn oidc(
    conn: &mut AnyConnection,
    config: &SignInConfig,
) -> Result<OidcSettings, ApiError> {
    if let Some(settings) = &config.oidc_env {
        return Ok(settings.clone());
    }
    Ok(settings_store::oidc_settings(conn)
        .await?
        .unwrap_or_default())
}

/// The stored password setting as set through the API.
pub async fn password_setting(conn: &mut AnyConnection) -> Result<PasswordAuth, ApiError> {
    Ok(settings_store::password_auth(conn)
        .await?
        .unwrap_or_default())
}

/// Whether password sign-in is on: the flag allows it and it is not switched off while a single sign-on is
/// usable (an instance with no single sign-on never loses its password sign-in).
pub async fn password_sign_in(
    conn: &mut AnyConnection,
    config: &SignInConfig,
) -> Result<bool, ApiError> {
    if !config.password_flag {
        return Ok(false);
    }
    if !password_setting(conn).await?.disabled {
        return Ok(true);
    }
    Ok(!oidc(conn, config).await?.usable()
        && !saml_settings::saml(conn, config.saml_env.as_ref())
            .await?
            .usable())
}

/// Checks and normalises OIDC settings from the API; a missing secret keeps `stored`'s.
pub fn validate_oidc(input: OidcSettings, stored: &OidcSettings) -> Result<OidcSettings, ApiError> {
    let discover_url = clean(input.discover_url);
    if let Some(url) = &discover_url {
        let parsed = url::Url::parse(url).ok().filter(|parsed| {
            matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some()
        });
        if parsed.is_none() {
            return Err(ApiError::invalid_field(
                "discoverUrl",
                "discoverUrl must be an http(s) URL such as https://login.example.com/.well-known/openid-configuration",
            ));
        }
    }
    let client_id = clean(input.client_id);
    let secret = clean(input.secret).or_else(|| stored.secret.clone());
    if input.enabled {
        if discover_url.is_none() {
            return Err(ApiError::invalid_field(
                "discoverUrl",
                "discoverUrl is required to enable OpenID Connect",
            ));
        }
        if client_id.is_none() {
            return Err(ApiError::invalid_field(
                "clientId",
                "clientId is required to enable OpenID Connect",
            ));
        }
        if secret.is_none() {
            return Err(ApiError::invalid_field(
                "secret",
                "secret (the client secret) is required to enable OpenID Connect",
            ));
        }
    }
    let default_root_role = clean(input.default_root_role);
    if let Some(name) = &default_root_role {
        RootRole::from_reference("defaultRootRole", &RoleReference::Name(name.clone()))?;
    }
    if let Some(id) = input.default_root_role_id {
        RootRole::from_reference("defaultRootRoleId", &RoleReference::Id(id))?;
    }
    let id_token_signing_algorithm = clean(input.id_token_signing_algorithm);
    if let Some(algorithm) = &id_token_signing_algorithm {
        if !SIGNING_ALGORITHMS.contains(&algorithm.as_str()) {
            return Err(ApiError::invalid_field(
                "idTokenSigningAlgorithm",
                "idTokenSigningAlgorithm must be RS256, RS384 or RS512",
            ));
        }
    }
    Ok(OidcSettings {
        enabled: input.enabled,
        discover_url,
        client_id,
        secret,
        default_root_role,
        id_token_signing_algorithm,
        email_domains: clean(input.email_domains),
        acr_values: clean(input.acr_values),
        group_json_path: clean(input.group_json_path),
        secret_set: false,
        ..input
    })
}

fn read_only() -> ApiError {
    ApiError::new(
        ErrorKind::NoAccess,
        "The OpenID Connect settings come from the OIDC_* environment variables (OIDC_ENABLED is set), \
         which win over the database: change them there and restart the control plane",
    )
}

/// Replaces the stored OIDC settings; `setting-updated` (without the secret) on a change. Refused while
/// the environment configures OIDC.
pub async fn set_oidc(
    tx: &mut WriteTx,
    config: &SignInConfig,
    input: OidcSettings,
) -> Result<OidcSettings, ApiError> {
    if config.oidc_env.is_some() {
        return Err(read_only());
    }
    let stored = settings_store::oidc_settings(tx.conn())
        .await?
        .unwrap_or_default();
    let settings = validate_oidc(input, &stored)?;
    if settings == stored {
        return Ok(settings.shown());
    }
    settings_store::set_oidc_settings(tx.conn(), &settings).await?;
    let event = |settings: &OidcSettings| serde_json::json!({ "oidc": settings.shown() });
    tx.record(
        EventType::SettingUpdated.instance_wide(Some(event(&settings)), Some(event(&stored))),
    )
    .await?;
    Ok(settings.shown())
}

/// Switches password sign-in off or on; `setting-updated` on a change.
pub async fn set_password(tx: &mut WriteTx, input: PasswordAuth) -> Result<PasswordAuth, ApiError> {
    let before = password_setting(tx.conn()).await?;
    if before == input {
        return Ok(input);
    }
    settings_store::set_password_auth(tx.conn(), &input).await?;
    tx.record(EventType::SettingUpdated.instance_wide(
        Some(serde_json::json!({ "passwordAuth": input })),
        Some(serde_json::json!({ "passwordAuth": before })),
    ))
    .await?;
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enabling_needs_the_provider_the_client_and_a_secret() {
        let input = OidcSettings {
            enabled: true,
            discover_url: Some("https://login.example.com".to_owned()),
            client_id: Some(" vexil ".to_owned()),
            ..OidcSettings::default()
        };
        let error = validate_oidc(input.clone(), &OidcSettings::default()).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("secret"));
        let stored = OidcSettings {
            secret: Some("s3cret".to_owned()),
            ..OidcSettings::default()
        };
        let valid = validate_oidc(input, &stored).unwrap();
        assert_eq!(valid.client_id.as_deref(), Some("vexil"));
        assert_eq!(valid.secret.as_deref(), Some("s3cret"));
        assert!(valid.usable());
        assert_eq!(valid.shown().secret, None);
        assert!(valid.shown().secret_set);
        let bad = OidcSettings {
            discover_url: Some("ftp://x".to_owned()),
            ..OidcSettings::default()
        };
        let error = validate_oidc(bad, &stored).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("discoverUrl"));
    }

    #[test]
    fn defaults() {
        let settings = OidcSettings {
            email_domains: Some("Example.com, @corp.example ,".to_owned()),
            default_root_role: Some("viewer".to_owned()),
            ..OidcSettings::default()
        };
        assert_eq!(
            settings.provisioning().email_domains,
            ["example.com", "corp.example"]
        );
        assert_eq!(settings.default_role(), RootRole::Viewer);
        assert_eq!(OidcSettings::default().default_role(), RootRole::Editor);
        assert_eq!(settings.group_path(), "groups");
        assert_eq!(settings.signing_algorithm(), "RS256");
    }
}
