//! What the instance holds and does, for administrators: statistics counted from the store
//! (`GET /api/admin/instance-admin/statistics`) and its telemetry settings (`GET /api/admin/telemetry/settings`:
//! Vexil sends nothing anywhere, so both collections are off).

use super::ui_config::VERSION;
use crate::store::settings as settings_store;
use crate::store::tokens as token_store;
use crate::store::{
    context_fields, environments, features, groups, projects, segments, strategy_definitions, users,
};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::token::TokenKind;
use vexil_shared::ApiError;

/// API tokens by kind (edge tokens are Vexil's own and counted apart).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TokenCounts {
    pub admin: usize,
    pub client: usize,
    pub frontend: usize,
    pub edge: usize,
}

/// `instanceAdminStatsSchema`: the counts Vexil keeps (the optional fields it has no data for are left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceStatistics {
    pub instance_id: String,
    pub timestamp: String,
    #[serde(rename = "versionOSS")]
    pub version_oss: String,
    pub users: usize,
    /// Live flags.
    pub feature_toggles: usize,
    pub projects: usize,
    pub context_fields: usize,
    /// The root roles.
    pub roles: usize,
    pub groups: usize,
    pub environments: usize,
    pub segments: usize,
    /// Strategy definitions, built-in and custom.
    pub strategies: usize,
    #[serde(rename = "SAMLenabled")]
    pub saml_enabled: bool,
    #[serde(rename = "OIDCenabled")]
    pub oidc_enabled: bool,
    pub api_tokens: TokenCounts,
}

/// `telemetrySettingsSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TelemetrySettings {
    pub version_info_collection_enabled: bool,
    pub feature_info_collection_enabled: bool,
}

pub async fn statistics(conn: &mut AnyConnection) -> Result<InstanceStatistics, ApiError> {
    let mut api_tokens = TokenCounts::default();
    for token in token_store::list(conn).await? {
        match token.kind {
            TokenKind::Admin => api_tokens.admin += 1,
            TokenKind::Client => api_tokens.client += 1,
            TokenKind::Frontend => api_tokens.frontend += 1,
            TokenKind::Edge => api_tokens.edge += 1,
        }
    }
    Ok(InstanceStatistics {
        instance_id: settings_store::instance_id(conn).await?.unwrap_or_default(),
        timestamp: Timestamp::now().to_string(),
        version_oss: VERSION.to_owned(),
        users: users::list(conn).await?.len(),
        feature_toggles: features::list_all_live(conn).await?.len(),
        projects: projects::list(conn).await?.len(),
        context_fields: context_fields::list(conn).await?.len(),
        roles: super::roles::root_roles().len(),
        groups: groups::list(conn).await?.len(),
        environments: environments::list(conn).await?.len(),
        segments: segments::list(conn).await?.len(),
        strategies: strategy_definitions::list(conn).await?.len(),
        saml_enabled: false,
        oidc_enabled: false,
        api_tokens,
    })
}

pub fn telemetry_settings() -> TelemetrySettings {
    TelemetrySettings {
        version_info_collection_enabled: false,
        feature_info_collection_enabled: false,
    }
}
