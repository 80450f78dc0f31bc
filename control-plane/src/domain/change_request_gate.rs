//! The change-request gate: in an environment of a project where change requests are on, a flag's
//! configuration changes only through an approved change request. Every domain write of a flag's switch,
//! strategies or variants in an environment, and every archive, asks the gate first, so no route can forget
//! it; a [`WriteTx`] that applies an approved change request ([`WriteMode::ApplyingChangeRequest`]) passes.

use crate::store::change_requests as change_request_store;
use crate::store::{WriteMode, WriteTx};
use vexil_shared::{ApiError, ErrorKind};

/// 403 for a direct write to a flag in `environment` of `project` when change requests are on there.
pub async fn ensure_writable(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
) -> Result<(), ApiError> {
    if tx.mode() != WriteMode::Direct {
        return Ok(());
    }
    let setting = change_request_store::setting(tx.conn(), project, environment).await?;
    if setting.is_some_and(|setting| setting.enabled) {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Change requests are enabled for environment {environment} of project {project}: \
                 propose this change in a change request \
                 (POST /api/admin/projects/{project}/environments/{environment}/change-requests)"
            ),
        ));
    }
    Ok(())
}

/// 403 for archiving a flag of `project` directly when change requests are on for any of its environments.
pub async fn ensure_archivable(tx: &mut WriteTx, project: &str) -> Result<(), ApiError> {
    if tx.mode() != WriteMode::Direct {
        return Ok(());
    }
    let environments = change_request_store::enabled_environments(tx.conn(), project).await?;
    if let Some(environment) = environments.first() {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Change requests are enabled for environment {environment} of project {project}: \
                 archive flags with an archiveFeature change in a change request \
                 (POST /api/admin/projects/{project}/environments/{environment}/change-requests)"
            ),
        ));
    }
    Ok(())
}

/// 403 for a direct write of a flag's dependencies (which hold in every environment) of `project` when
/// change requests are on for any of its environments.
pub async fn ensure_dependencies_writable(tx: &mut WriteTx, project: &str) -> Result<(), ApiError> {
    if tx.mode() != WriteMode::Direct {
        return Ok(());
    }
    let environments = change_request_store::enabled_environments(tx.conn(), project).await?;
    if let Some(environment) = environments.first() {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Change requests are enabled for environment {environment} of project {project}: \
                 flag dependencies cannot be changed directly in this project"
            ),
        ));
    }
    Ok(())
}
