//! `POST /edge/issue-token` (Unleash's route for Unleash Edge): client tokens for a list of environment →
//! projects pairs. Unleash answers an existing token's secret when it has one; Vexil keeps only tokens'
//! hashes, so it cannot show a secret twice: every pair gets a new client token (named
//! [`TOKEN_NAME`]), its secret in this answer only, each with its `api-token-created` event, all in one write.
//! Unleash Edge keeps the tokens it is given, so it asks once per pair it needs.

use super::limits::Limits;
use super::tokens::{self, CreateApiToken};
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// The name of the tokens issued here.
pub const TOKEN_NAME: &str = "unleash-edge";
/// The most pairs one request may ask for.
pub const MAX_PAIRS: usize = 50;

/// One environment and the projects wanted in it (`["*"]` for all).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentProjects {
    /// An existing environment.
    #[schema(min_length = 1)]
    pub environment: String,
    /// Existing project ids, or `["*"]`.
    #[schema(min_items = 1)]
    pub projects: Vec<String>,
}

/// Unleash's edgeEnvironmentProjectsListSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EdgeTokenRequest {
    /// 1 to 50 pairs.
    #[schema(min_items = 1, max_items = 50)]
    pub tokens: Vec<EnvironmentProjects>,
}

/// Unleash's edgeTokenSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EdgeToken {
    pub token: String,
    pub projects: Vec<String>,
    /// Always `client`.
    #[serde(rename = "type")]
    pub token_type: String,
    pub environment: String,
}

/// Unleash's validatedEdgeTokensSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EdgeTokens {
    pub tokens: Vec<EdgeToken>,
}

/// A refusal about one pair's field, named as in the request (`tokens[1].environment: …`).
fn within_pair(error: ApiError, index: usize) -> ApiError {
    if error.kind != ErrorKind::Validation {
        return error;
    }
    ApiError {
        message: format!("tokens[{index}].{}", error.message),
        field: error.field.map(|field| format!("tokens[{index}].{field}")),
        ..error
    }
}

/// A new client token for each pair, in the request's order.
pub async fn issue(
    tx: &mut WriteTx,
    request: EdgeTokenRequest,
    limits: &Limits,
) -> Result<EdgeTokens, ApiError> {
    if request.tokens.is_empty() || request.tokens.len() > MAX_PAIRS {
        return Err(ApiError::invalid_field(
            "tokens",
            format!("tokens must list 1 to {MAX_PAIRS} environment/projects pairs"),
        ));
    }
    let mut issued = Vec::with_capacity(request.tokens.len());
    for (index, pair) in request.tokens.into_iter().enumerate() {
        if pair.projects.is_empty() {
            return Err(ApiError::invalid_field(
                format!("tokens[{index}].projects"),
                format!("tokens[{index}].projects must name at least one project, or *"),
            ));
        }
        let created = tokens::create(
            tx,
            CreateApiToken {
                token_name: TOKEN_NAME.to_owned(),
                token_type: "client".to_owned(),
                environment: Some(pair.environment),
                project: None,
                projects: Some(pair.projects),
                expires_at: None,
            },
            limits,
        )
        .await
        .map_err(|error| within_pair(error, index))?;
        issued.push(EdgeToken {
            token: created.secret.unwrap_or_default(),
            projects: created.projects,
            token_type: "client".to_owned(),
            environment: created.environment,
        });
    }
    Ok(EdgeTokens { tokens: issued })
}
