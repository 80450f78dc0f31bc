//! The change-request gate: in an environment of a project where change requests are on, a flag's
//! configuration changes only through an approved change request. Every domain write of a flag's switch,
//! strategies or variants in an environment, and every archive, asks the gate first, so no route can forget
//! it; a [`WriteTx`] that applies an approved change request ([`WriteMode::ApplyingChangeRequest`]) passes.
//! A segment used by a strategy where change requests are on is protected the same way, and belongs to one
//! such place ([`segment_place`]).

use crate::store::change_requests as change_request_store;
use crate::store::segments as segment_store;
use crate::store::{StoreError, WriteMode, WriteTx};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
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

/// Where changes to segment `id` are reviewed: of the environments of projects with change requests on in
/// which a strategy of a flag (archived ones too) uses it, the one that requires the most approvals, then the
/// first by project and environment name; `None` while it is used in none (then it is written directly).
/// The most approvals, so that no place the change reaches is reviewed by fewer approvers than it requires.
pub async fn segment_place(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<(String, String)>, StoreError> {
    let places: BTreeSet<(String, String)> = segment_store::references(conn)
        .await?
        .into_iter()
        .filter(|reference| reference.segments.contains(&id))
        .map(|reference| (reference.project_id, reference.environment))
        .collect();
    let mut protected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut strictest: Option<(i64, (String, String))> = None;
    for (project, environment) in places {
        if !protected.contains_key(&project) {
            let enabled = change_request_store::enabled_environments(conn, &project).await?;
            protected.insert(project.clone(), enabled);
        }
        if !protected[&project].contains(&environment) {
            continue;
        }
        let required = change_request_store::setting(conn, &project, &environment)
            .await?
            .map_or(1, |setting| setting.required_approvals);
        if strictest.as_ref().is_none_or(|(most, _)| required > *most) {
            strictest = Some((required, (project, environment)));
        }
    }
    Ok(strictest.map(|(_, place)| place))
}

/// 403 for a direct write of segment `id` while it is used where change requests are on, naming the change
/// requests that take it.
pub async fn ensure_segment_writable(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    if tx.mode() != WriteMode::Direct {
        return Ok(());
    }
    if let Some((project, environment)) = segment_place(tx.conn(), id).await? {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Segment {id} is used where change requests are on: propose this change as an \
                 updateSegment or deleteSegment change in a change request of environment {environment} \
                 of project {project} (POST /api/admin/projects/{project}/environments/{environment}/change-requests)"
            ),
        ));
    }
    Ok(())
}

/// 400 unless a change to segment `id` may be proposed in, or applied from, a change request of `environment`
/// of `project`: the segment's [`segment_place`], or anywhere while it has none.
pub async fn ensure_segment_place(
    conn: &mut AnyConnection,
    id: i64,
    (project, environment): (&str, &str),
) -> Result<(), ApiError> {
    match segment_place(conn, id).await? {
        Some(place) if place.0 != project || place.1 != environment => {
            Err(ApiError::validation(format!(
                "segment {id}: its changes belong to the change requests of environment {} of project {} \
                 (of the places where change requests are on and it is used, the one that requires the most \
                 approvals)",
                place.1, place.0
            )))
        }
        _ => Ok(()),
    }
}
