//! Finding what a flag route names, with the answers every such route gives: 404 for a project, flag or
//! project environment that does not exist, 400 for a write to an archived flag's configuration.

use super::projects;
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::projects as project_store;
use sqlx::AnyConnection;
use vexil_shared::ApiError;

fn not_found(project: &str, name: &str) -> ApiError {
    ApiError::not_found(format!("Flag {name} does not exist in project {project}"))
}

/// The project of a flag (archived or not); 404 for an unknown flag.
pub async fn project_of(conn: &mut AnyConnection, name: &str) -> Result<String, ApiError> {
    feature_store::get(conn, name)
        .await?
        .map(|row| row.project_id)
        .ok_or_else(|| ApiError::not_found(format!("Flag {name} does not exist")))
}

/// The flag of a project, archived or not; 404 for an unknown project or flag.
pub async fn require_in_project(
    conn: &mut AnyConnection,
    project: &str,
    name: &str,
) -> Result<FeatureRow, ApiError> {
    projects::require(conn, project).await?;
    match feature_store::get(conn, name).await? {
        Some(row) if row.project_id == project => Ok(row),
        _ => Err(not_found(project, name)),
    }
}

/// The live flag of a project; archived flags are 404 too.
pub async fn require_live(
    conn: &mut AnyConnection,
    project: &str,
    name: &str,
) -> Result<FeatureRow, ApiError> {
    let row = require_in_project(conn, project, name).await?;
    if row.archived_at.is_some() {
        return Err(not_found(project, name));
    }
    Ok(row)
}

/// 404 unless the environment exists and the project uses it.
pub async fn require_project_environment(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
) -> Result<(), ApiError> {
    if !project_store::has_environment(conn, project, environment).await? {
        return Err(ApiError::not_found(format!(
            "Environment {environment} does not exist in project {project}"
        )));
    }
    Ok(())
}

/// 400 for writes to an archived flag's configuration.
pub fn ensure_not_archived(row: &FeatureRow) -> Result<(), ApiError> {
    if row.archived_at.is_some() {
        return Err(ApiError::validation(format!(
            "Flag {} is archived; revive it first",
            row.name
        )));
    }
    Ok(())
}
