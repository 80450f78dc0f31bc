//! A project's API tokens (`/api/admin/projects/:projectId/api-tokens`): client and frontend tokens for that
//! one project, made, listed and deleted as `/api/admin/api-tokens` does (same events, same `apiTokens`
//! limit, secrets shown once), within the project. They are configuration of the project, so Editors make
//! them (never an admin or edge token here).

use super::limits::Limits;
use super::projects;
use super::tokens::{self, ApiToken, ApiTokenList, CreateApiToken};
use crate::store::tokens as token_store;
use crate::store::WriteTx;
use serde::Deserialize;
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::token::sha256_hex;
use vexil_shared::ApiError;

/// `POST /api/admin/projects/:projectId/api-tokens`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProjectApiToken {
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub token_name: String,
    /// `client` (also `backend`) or `frontend`, in any case.
    #[serde(rename = "type")]
    #[schema(pattern = r"^(client|backend|frontend)$")]
    pub token_type: String,
    /// Default `development`.
    pub environment: Option<String>,
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
}

/// The project's tokens (those whose projects include it), without secrets.
pub async fn list(conn: &mut AnyConnection, project: &str) -> Result<ApiTokenList, ApiError> {
    projects::require(conn, project).await?;
    let mut all = tokens::list(conn).await?;
    all.tokens
        .retain(|token| token.projects.iter().any(|one| one == project));
    Ok(all)
}

pub async fn create(
    tx: &mut WriteTx,
    project: &str,
    input: CreateProjectApiToken,
    limits: &Limits,
) -> Result<ApiToken, ApiError> {
    projects::require(tx.conn(), project).await?;
    let kind = input.token_type.to_ascii_lowercase();
    if !matches!(kind.as_str(), "client" | "backend" | "frontend") {
        return Err(ApiError::invalid_field(
            "type",
            "type of a project token must be client, backend or frontend",
        ));
    }
    let create = CreateApiToken {
        token_name: input.token_name,
        token_type: kind,
        environment: input.environment,
        project: None,
        projects: Some(vec![project.to_owned()]),
        expires_at: input.expires_at,
    };
    tokens::create(tx, create, limits).await
}

/// Deletes the project's token with this secret: 404 when no token of the project has it, 400 for a token
/// of several projects (delete those with `DELETE /api/admin/api-tokens/:token`).
pub async fn delete(tx: &mut WriteTx, project: &str, secret: &str) -> Result<(), ApiError> {
    projects::require(tx.conn(), project).await?;
    let row = token_store::get_by_hash(tx.conn(), &sha256_hex(secret))
        .await?
        .filter(|row| row.projects.iter().any(|one| one == project))
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Project {project} has no API token with this secret"
            ))
        })?;
    if row.projects.len() > 1 {
        return Err(ApiError::validation(
            "This token belongs to several projects: delete it with DELETE /api/admin/api-tokens/:token",
        ));
    }
    tokens::delete(tx, secret).await
}
