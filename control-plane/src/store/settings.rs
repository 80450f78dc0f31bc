//! SQL of instance-wide settings: one JSON value per name.

use super::encoding::{json, json_text};
use super::StoreError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

/// The settings there are, by their stored names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    /// The origins the frontend API's CORS allows: a list of strings.
    FrontendApiOrigins,
    /// This installation's id, given at the first start: a string.
    InstanceId,
    /// OpenID Connect sign-in: the API's settings object with the client secret.
    Oidc,
    /// Maintenance mode: `{"enabled": bool}`.
    Maintenance,
    /// Password sign-in: `{"disabled": bool}`.
    PasswordAuth,
    /// SAML 2.0 sign-in: the API's settings object with the sign-out signing key.
    Saml,
    /// SCIM provisioning: `{"enabled": bool, "tokenHash": string or null}`.
    Scim,
}

impl Setting {
    fn name(self) -> &'static str {
        match self {
            Setting::FrontendApiOrigins => "frontend_api_origins",
            Setting::InstanceId => "instance_id",
            Setting::Maintenance => "maintenance_mode",
            Setting::Oidc => "auth_oidc",
            Setting::PasswordAuth => "auth_simple",
            Setting::Saml => "auth_saml",
            Setting::Scim => "scim",
        }
    }
}

async fn get<T: DeserializeOwned>(
    conn: &mut AnyConnection,
    setting: Setting,
) -> Result<Option<T>, StoreError> {
    let row: Option<AnyRow> = sqlx::query("SELECT value FROM settings WHERE name = $1")
        .bind(setting.name())
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|row| json(&row, "value")).transpose()?)
}

/// The stored allowed origins, if ever set.
pub async fn frontend_api_origins(
    conn: &mut AnyConnection,
) -> Result<Option<Vec<String>>, StoreError> {
    get(conn, Setting::FrontendApiOrigins).await
}

pub async fn set_frontend_api_origins(
    conn: &mut AnyConnection,
    origins: &[String],
) -> Result<(), StoreError> {
    set(conn, Setting::FrontendApiOrigins, origins).await
}

/// The stored maintenance mode, if ever set.
pub async fn maintenance<T: DeserializeOwned>(
    conn: &mut AnyConnection,
) -> Result<Option<T>, StoreError> {
    get(conn, Setting::Maintenance).await
}

pub async fn set_maintenance<T: Serialize>(
    conn: &mut AnyConnection,
    value: &T,
) -> Result<(), StoreError> {
    set(conn, Setting::Maintenance, value).await
}

/// The installation's id, if given.
pub async fn instance_id(conn: &mut AnyConnection) -> Result<Option<String>, StoreError> {
    get(conn, Setting::InstanceId).await
}

/// Gives the installation `id` unless it has one (a concurrent first start keeps the first one).
pub async fn insert_missing_instance_id(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
        .bind(Setting::InstanceId.name())
        .bind(json_text(id)?)
        .execute(conn)
        .await?;
    Ok(())
}

async fn set<T: Serialize + ?Sized>(
    conn: &mut AnyConnection,
    setting: Setting,
    value: &T,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = $2",
    )
    .bind(setting.name())
    .bind(json_text(value)?)
    .execute(conn)
    .await?;
    Ok(())
}

/// The stored OpenID Connect settings (client secret included), if ever set.
pub async fn oidc_settings<T: DeserializeOwned>(
    conn: &mut AnyConnection,
) -> Result<Option<T>, StoreError> {
    get(conn, Setting::Oidc).await
}

pub async fn set_oidc_settings<T: Serialize>(
    conn: &mut AnyConnection,
    settings: &T,
) -> Result<(), StoreError> {
    set(conn, Setting::Oidc, settings).await
}

/// The stored SAML settings (sign-out key included), if ever set.
pub async fn saml_settings<T: DeserializeOwned>(
    conn: &mut AnyConnection,
) -> Result<Option<T>, StoreError> {
    get(conn, Setting::Saml).await
}

pub async fn set_saml_settings<T: Serialize>(
    conn: &mut AnyConnection,
    settings: &T,
) -> Result<(), StoreError> {
    set(conn, Setting::Saml, settings).await
}

/// The stored password sign-in setting (`{disabled}`), if ever set.
pub async fn password_auth<T: DeserializeOwned>(
    conn: &mut AnyConnection,
) -> Result<Option<T>, StoreError> {
    get(conn, Setting::PasswordAuth).await
}

pub async fn set_password_auth<T: Serialize>(
    conn: &mut AnyConnection,
    setting: &T,
) -> Result<(), StoreError> {
    set(conn, Setting::PasswordAuth, setting).await
}

/// The stored SCIM settings (with the token's hash), if ever set.
pub async fn scim<T: DeserializeOwned>(conn: &mut AnyConnection) -> Result<Option<T>, StoreError> {
    get(conn, Setting::Scim).await
}

pub async fn set_scim<T: Serialize>(
    conn: &mut AnyConnection,
    settings: &T,
) -> Result<(), StoreError> {
    set(conn, Setting::Scim, settings).await
}
