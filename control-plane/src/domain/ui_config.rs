//! UI configuration (spec endpoints 7 and 8): what the instance reports about itself, and the one setting
//! it stores, the frontend API's allowed origins (`frontendApiOrigins`), which the publisher sends to the
//! edges with every snapshot.

use super::events::EventType;
use super::limits::Limits;
use crate::store::settings as settings_store;
use crate::store::{Store, StoreError, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The crate version, reported as `version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git revision this binary was built from (`build.rs`; "unknown" outside a git checkout).
pub const GIT_REVISION: &str = env!("VEXIL_GIT_REVISION");

/// What the instance knows about itself, from its configuration and the request.
pub struct Instance<'a> {
    /// `scheme://host` the request reached, without the base path.
    pub origin: String,
    pub base_path: &'a str,
    pub auth_enabled: bool,
    /// Password sign-in on now (`sso_settings::password_sign_in`).
    pub password_auth: bool,
    /// The `OIDC_*` variables configure OpenID Connect.
    pub oidc_configured_through_env: bool,
    /// The `SAML_*` variables configure SAML 2.0.
    pub saml_configured_through_env: bool,
    /// An SMTP server is configured (`--smtp-url`).
    pub email_enabled: bool,
    pub limits: &'a Limits,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Revisions {
    /// Git revision of the build.
    pub oss: String,
    /// Always "": there is no enterprise build.
    pub enterprise: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    pub current: Revisions,
    /// Always `{}`: the instance does not look for new releases.
    #[schema(value_type = Object)]
    pub latest: serde_json::Map<String, serde_json::Value>,
    pub is_latest: bool,
    pub instance_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Link {
    pub value: String,
    pub icon: String,
    pub href: String,
    pub title: String,
}

/// `GET /api/admin/ui-config`: every field of the spec's uiConfigSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiConfig {
    pub slogan: String,
    pub name: String,
    pub version: String,
    /// "Open Source".
    pub environment: String,
    pub service_url: String,
    /// The same as `serviceUrl`, for the Unleash UI.
    pub unleash_url: String,
    pub base_uri_path: String,
    pub feedback_uri_path: String,
    pub disable_password_auth: bool,
    pub email_enabled: bool,
    pub maintenance_mode: bool,
    /// Deprecated: `resourceLimits.segmentValues`.
    pub segment_values_limit: u32,
    /// Deprecated: `resourceLimits.strategySegments`.
    pub strategy_segments_limit: u32,
    pub resource_limits: Limits,
    pub network_view_enabled: bool,
    pub frontend_api_origins: Vec<String>,
    /// Always `{}`.
    #[schema(value_type = Object)]
    pub flags: serde_json::Map<String, serde_json::Value>,
    pub links: Vec<Link>,
    /// `open-source`, or `none` with `--auth-type none`.
    pub authentication_type: String,
    pub version_info: VersionInfo,
    pub oidc_configured_through_env: bool,
    pub saml_configured_through_env: bool,
}

/// `POST /api/admin/ui-config` (spec endpoint 7).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetUiConfig {
    pub frontend_settings: FrontendSettings,
}

/// Also the body of `POST /api/admin/ui-config/cors`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FrontendSettings {
    /// `*` or origins `scheme://host[:port]`; at least one.
    pub frontend_api_origins: Vec<String>,
}

/// The stored allowed origins (`["*"]` when unset).
pub async fn frontend_api_origins(conn: &mut AnyConnection) -> Result<Vec<String>, StoreError> {
    Ok(settings_store::frontend_api_origins(conn)
        .await?
        .unwrap_or_else(|| vec!["*".to_owned()]))
}

/// Gives the instance its id at the first start (not configuration: no revision, no event).
pub async fn ensure_instance_id(store: &Store) -> Result<(), StoreError> {
    let mut conn = store.bookkeeping().await?;
    let id = uuid::Uuid::new_v4().to_string();
    settings_store::insert_missing_instance_id(&mut conn, &id).await
}

pub async fn get(conn: &mut AnyConnection, instance: &Instance<'_>) -> Result<UiConfig, ApiError> {
    let instance_id = settings_store::instance_id(conn).await?.unwrap_or_default();
    let service_url = format!("{}{}", instance.origin, instance.base_path);
    Ok(UiConfig {
        slogan: "Feature flags, wire-compatible with Unleash".to_owned(),
        name: "Vexil".to_owned(),
        version: VERSION.to_owned(),
        environment: "Open Source".to_owned(),
        unleash_url: service_url.clone(),
        service_url,
        base_uri_path: instance.base_path.to_owned(),
        feedback_uri_path: String::new(),
        disable_password_auth: !instance.password_auth,
        email_enabled: instance.email_enabled,
        maintenance_mode: super::maintenance::is_on(conn).await?,
        segment_values_limit: instance.limits.segment_values,
        strategy_segments_limit: instance.limits.strategy_segments,
        resource_limits: instance.limits.clone(),
        network_view_enabled: false,
        frontend_api_origins: frontend_api_origins(conn).await?,
        flags: serde_json::Map::new(),
        links: vec![Link {
            value: "API".to_owned(),
            icon: "api".to_owned(),
            href: format!("{}/docs/openapi.json", instance.base_path),
            title: "The OpenAPI document of this instance".to_owned(),
        }],
        authentication_type: if instance.auth_enabled {
            "open-source"
        } else {
            "none"
        }
        .to_owned(),
        version_info: VersionInfo {
            current: Revisions {
                oss: GIT_REVISION.to_owned(),
                enterprise: String::new(),
            },
            latest: serde_json::Map::new(),
            is_latest: true,
            instance_id,
        },
        oidc_configured_through_env: instance.oidc_configured_through_env,
        saml_configured_through_env: instance.saml_configured_through_env,
    })
}

/// `*`, or an absolute URL with a host and nothing after it but an optional `/`, as the origin a browser
/// sends (`scheme://host[:port]`, host lower-cased, default port dropped).
pub fn normalize_origin(index: usize, text: &str) -> Result<String, ApiError> {
    if text == "*" {
        return Ok(text.to_owned());
    }
    let bad = |why: &str| {
        ApiError::invalid_field(
            format!("frontendApiOrigins[{index}]"),
            format!(
                "frontendApiOrigins[{index}]: {text:?} {why}; expected * or an origin such as \
             https://app.example.com or http://localhost:3000"
            ),
        )
    };
    let url = url::Url::parse(text).map_err(|_| bad("is not an absolute URL"))?;
    let host = url.host_str().filter(|host| !host.is_empty());
    let Some(host) = host else {
        return Err(bad("has no host"));
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("holds credentials"));
    }
    if url.path() != "/" && !url.path().is_empty()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(bad("has a path, query or fragment"));
    }
    Ok(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

/// Replaces the allowed origins; `setting-updated` on a change. The revision moves with it, so the
/// publisher sends the new list to the edges.
pub async fn set_frontend_api_origins(
    tx: &mut WriteTx,
    origins: Vec<String>,
) -> Result<(), ApiError> {
    if origins.is_empty() {
        return Err(ApiError::invalid_field(
            "frontendApiOrigins",
            "frontendApiOrigins must hold at least one origin, or *",
        ));
    }
    let mut normalized: Vec<String> = Vec::with_capacity(origins.len());
    for (index, origin) in origins.iter().enumerate() {
        let origin = normalize_origin(index, origin)?;
        if !normalized.contains(&origin) {
            normalized.push(origin);
        }
    }
    let before = frontend_api_origins(tx.conn()).await?;
    if before == normalized {
        return Ok(());
    }
    settings_store::set_frontend_api_origins(tx.conn(), &normalized).await?;
    tx.record(EventType::SettingUpdated.instance_wide(
        Some(serde_json::json!({"frontendApiOrigins": normalized})),
        Some(serde_json::json!({"frontendApiOrigins": before})),
    ))
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_star_or_scheme_host_port() {
        for (input, expected) in [
            ("*", "*"),
            ("https://app.example.com", "https://app.example.com"),
            ("https://App.Example.com/", "https://app.example.com"),
            ("http://localhost:3000", "http://localhost:3000"),
            ("https://example.com:443", "https://example.com"),
            ("capacitor://localhost", "capacitor://localhost"),
        ] {
            assert_eq!(normalize_origin(0, input).unwrap(), expected, "{input}");
        }
        for input in [
            "",
            "example.com",
            "https://",
            "https://example.com/path",
            "https://example.com?x=1",
            "https://user:pw@example.com",
            "mailto:someone@example.com",
            "**",
        ] {
            let error = normalize_origin(2, input).unwrap_err();
            assert!(
                error.message.starts_with("frontendApiOrigins[2]"),
                "{input}: {}",
                error.message
            );
        }
    }
}
