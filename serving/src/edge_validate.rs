//! `POST /edge/validate` (Unleash's route for its Edge): which of the posted token secrets this server
//! serves, with their scopes. An Unleash Edge in front of Vexil validates its SDKs' tokens here, and a
//! `vexil-edge edge` in front of another one does too (through its token resolver, so that edges chain).
//! Open, as Unleash's is: it only confirms tokens the caller already holds, and never names another.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use vexil_shared::time::now_ms;
use vexil_shared::token::{self, TokenKind};
use vexil_shared::ApiError;

use crate::extract::{grant_expired, learn_secret};
use crate::state::ServingState;

/// Most secrets one call may ask about.
pub const MAX_TOKENS: usize = 1_000;

#[derive(serde::Deserialize)]
struct TokenStrings {
    tokens: Vec<String>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ValidatedToken {
    pub token: String,
    /// `client` or `frontend`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub environment: String,
    /// `["*"]`: every project.
    pub projects: Vec<String>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ValidatedTokens {
    pub tokens: Vec<ValidatedToken>,
}

/// `POST /edge/validate`: `{tokens: [secret]}` → the client and frontend tokens among them that are valid
/// and unexpired, with their scopes; the others are left out.
#[utoipa::path(
    post, path = "/edge/validate", tag = "Unleash Edge",
    request_body(content = String, description = "`{tokens: [secret, …]}`", content_type = "application/json"),
    responses((status = 200, body = ValidatedTokens), (status = 400, body = vexil_shared::ErrorBody))
)]
pub async fn validate(
    State(state): State<Arc<ServingState>>,
    body: Bytes,
) -> Result<Json<ValidatedTokens>, ApiError> {
    let TokenStrings { tokens } = serde_json::from_slice(&body)
        .map_err(|error| ApiError::validation(format!("body: {error}")))?;
    if tokens.len() > MAX_TOKENS {
        return Err(ApiError::validation(format!(
            "at most {MAX_TOKENS} tokens per call"
        )));
    }
    let mut valid = Vec::new();
    for secret in tokens {
        // A token this server may not serve is simply not listed.
        let _ = learn_secret(&state, &secret).await;
        let Some(snapshot) = state.current.load_full() else {
            break;
        };
        let Some(grant) = snapshot.tokens.get(&token::sha256(&secret)) else {
            continue;
        };
        if grant_expired(grant, now_ms())
            || !matches!(grant.kind, TokenKind::Client | TokenKind::Frontend)
        {
            continue;
        }
        valid.push(ValidatedToken {
            kind: grant.kind.as_str(),
            environment: grant.environment.to_string(),
            projects: grant.projects.to_list(),
            token: secret,
        });
    }
    Ok(Json(ValidatedTokens { tokens: valid }))
}
