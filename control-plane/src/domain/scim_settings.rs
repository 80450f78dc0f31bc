//! SCIM provisioning settings (`/api/admin/scim-settings`, Unleash's Enterprise routes): whether `/scim/v2`
//! answers, and its one bearer token. The token (`scim:<random>`, 224 random bits) is shown once, when it is
//! generated; only its SHA-256 is stored, and a new one replaces it (the old one stops working at once). A
//! presented token is hashed and compared with the stored hash in constant time. Admins only (the Access area);
//! every change is a `setting-updated` event that never carries the token or its hash.

use super::events::EventType;
use super::tokens::{random_hex, SECRET_RANDOM_BYTES};
use crate::store::settings as settings_store;
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use vexil_shared::{token, ApiError, ErrorKind};

/// The prefix of a SCIM token's secret.
pub const SCIM_TOKEN_PREFIX: &str = "scim:";

/// What is stored: the switch and the token's hash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Stored {
    enabled: bool,
    token_hash: Option<String>,
}

/// `GET /api/admin/scim-settings` (scimSettingsSchema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScimSettings {
    /// Whether `/scim/v2` answers.
    pub enabled: bool,
    /// Whether a token is set (it is never shown again).
    pub has_token: bool,
}

/// `POST /api/admin/scim-settings` (setScimSettingsSchema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
pub struct SetScimSettings {
    pub enabled: bool,
}

/// `POST /api/admin/scim-settings/generate-new-token` (scimTokenSchema): the only time the token is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ScimToken {
    pub token: String,
}

impl From<&Stored> for ScimSettings {
    fn from(stored: &Stored) -> Self {
        ScimSettings {
            enabled: stored.enabled,
            has_token: stored.token_hash.is_some(),
        }
    }
}

async fn stored(conn: &mut AnyConnection) -> Result<Stored, ApiError> {
    Ok(settings_store::scim(conn).await?.unwrap_or_default())
}

/// The settings, without the token.
pub async fn get(conn: &mut AnyConnection) -> Result<ScimSettings, ApiError> {
    Ok(ScimSettings::from(&stored(conn).await?))
}

async fn save(tx: &mut WriteTx, before: &Stored, after: &Stored) -> Result<(), ApiError> {
    settings_store::set_scim(tx.conn(), after).await?;
    let shown = |stored: &Stored| serde_json::json!({ "scim": ScimSettings::from(stored) });
    tx.record(EventType::SettingUpdated.instance_wide(Some(shown(after)), Some(shown(before))))
        .await?;
    Ok(())
}

/// Switches SCIM provisioning on or off; `setting-updated` on a change (none: nothing is written).
pub async fn set(tx: &mut WriteTx, input: SetScimSettings) -> Result<ScimSettings, ApiError> {
    let before = stored(tx.conn()).await?;
    let after = Stored {
        enabled: input.enabled,
        ..before.clone()
    };
    if after != before {
        save(tx, &before, &after).await?;
    }
    Ok(ScimSettings::from(&after))
}

/// A new token, replacing any previous one; returned once, stored as its SHA-256.
pub async fn generate_token(tx: &mut WriteTx) -> Result<ScimToken, ApiError> {
    let before = stored(tx.conn()).await?;
    let token = format!("{SCIM_TOKEN_PREFIX}{}", random_hex(SECRET_RANDOM_BYTES)?);
    let after = Stored {
        token_hash: Some(token::sha256_hex(&token)),
        ..before.clone()
    };
    save(tx, &before, &after).await?;
    Ok(ScimToken { token })
}

/// Checks the `Authorization` header of a `/scim/v2` request (`Bearer <token>`): 403 while provisioning is
/// off, 401 without a token or with another one than the stored token (compared by hash, in constant time).
pub async fn check_token(
    conn: &mut AnyConnection,
    authorization: Option<&str>,
) -> Result<(), ApiError> {
    let stored = stored(conn).await?;
    if !stored.enabled {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            "SCIM provisioning is off: an Admin switches it on at Admin → SCIM provisioning \
             (or POST /api/admin/scim-settings {\"enabled\": true})",
        ));
    }
    let unauthenticated = |message: &str| ApiError::new(ErrorKind::AuthenticationRequired, message);
    let secret = authorization
        .map(token::secret_of_authorization)
        .filter(|secret| !secret.is_empty())
        .ok_or_else(|| unauthenticated("Send the SCIM token as Authorization: Bearer <token>"))?;
    let Some(expected) = stored.token_hash.as_deref() else {
        return Err(unauthenticated(
            "No SCIM token has been generated yet: an Admin generates one at Admin → SCIM provisioning",
        ));
    };
    let presented = token::sha256_hex(secret);
    if bool::from(presented.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(unauthenticated("The SCIM token is not valid"))
    }
}
