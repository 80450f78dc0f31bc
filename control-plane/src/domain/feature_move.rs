//! Moving a flag to another project (`POST /api/admin/projects/:p/features/:f/changeProject`, Unleash
//! Enterprise's route). The flag keeps everything that is its own — its strategies and switches in every
//! environment, variants, tags, links, favourites, lifecycle, release plans, metrics — and takes the target
//! project's rules from then on (its change requests, its environments: settings in an environment the
//! target does not use are kept for when it does, as when a project drops an environment). Refused, with
//! nothing changed:
//! - 404: the flag is not in the project; 400: it is archived, or the target is the same project;
//! - 400 `newProjectId`: the target project does not exist or is archived;
//! - 403: the caller may not move flags in the target project (the route's permission covers the source);
//! - 400: a change request not yet applied, cancelled or rejected holds a change of the flag;
//! - 400: the flag has dependencies (parents and children live in one project: remove them first);
//! - 400: a strategy of the flag uses a segment of the source project (project segments serve their own
//!   project only; make the segment global or take it off first), or a constraint on a context field of
//!   another project than the target (`context_fields::check_constraints`, as any strategy write).

use super::context_fields;
use super::events::EventType;
use super::feature_lookup::{ensure_not_archived, require_in_project};
use super::projects;
use crate::store::change_requests as change_request_store;
use crate::store::dependencies as dependency_store;
use crate::store::environments as environment_store;
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::segments as segment_store;
use crate::store::strategies as strategy_store;
use crate::store::{NewEvent, WriteTx};
use serde::Deserialize;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// `POST …/features/:f/changeProject` (changeProjectSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeProject {
    /// The project to move the flag to: an existing, active project other than the flag's.
    #[schema(min_length = 1)]
    pub new_project_id: String,
}

/// Moves the flag `feature` of `project` to `input.newProjectId`; `may_move_into` answers whether the caller
/// may move flags in that project (403 otherwise). Records `feature-project-change` (in the target project,
/// `{oldProject, newProject}`).
pub async fn change_project(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    input: ChangeProject,
    may_move_into: impl FnOnce(&str) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let row = require_in_project(tx.conn(), project, feature).await?;
    ensure_not_archived(&row)?;
    let target = input.new_project_id.trim().to_owned();
    if target.is_empty() {
        return Err(ApiError::invalid_field(
            "newProjectId",
            "newProjectId must name a project",
        ));
    }
    if target == project {
        return Err(ApiError::invalid_field(
            "newProjectId",
            format!("newProjectId: flag {feature} is already in project {project}"),
        ));
    }
    let Some(target_row) = project_store::get(tx.conn(), &target).await? else {
        return Err(ApiError::invalid_field(
            "newProjectId",
            format!("newProjectId: project {target} does not exist"),
        ));
    };
    projects::ensure_active(&target_row).map_err(|error| error.at_field("newProjectId"))?;
    may_move_into(&target)?;
    let pending = change_request_store::pending_with_feature(tx.conn(), feature).await?;
    if !pending.is_empty() {
        let ids: Vec<String> = pending.iter().map(|id| format!("#{id}")).collect();
        return Err(ApiError::validation(format!(
            "Flag {feature} has changes in change request(s) {} that are not applied, cancelled or \
             rejected; finish them first",
            ids.join(", ")
        )));
    }
    let parents = dependency_store::of_child(tx.conn(), feature).await?;
    let children = dependency_store::children_of(tx.conn(), feature).await?;
    if !parents.is_empty() || !children.is_empty() {
        let mut names: Vec<String> = parents.into_iter().map(|row| row.parent).collect();
        names.extend(children);
        return Err(ApiError::validation(format!(
            "Flag {feature} has dependencies ({}), which stay within one project; remove them first",
            names.join(", ")
        )));
    }
    for reference in segment_store::references(tx.conn()).await? {
        if reference.feature_name != feature {
            continue;
        }
        for id in reference.segments {
            let owner = segment_store::get(tx.conn(), id)
                .await?
                .and_then(|segment| segment.project_id);
            if let Some(owner) = owner.filter(|owner| *owner != target) {
                return Err(ApiError::validation(format!(
                    "A strategy of flag {feature} in {} uses segment {id} of project {owner}; make the \
                     segment global or take it off the strategy first",
                    reference.environment
                )));
            }
        }
    }
    for environment in environment_store::list(tx.conn()).await? {
        for strategy in strategy_store::list(tx.conn(), feature, &environment.name).await? {
            context_fields::check_constraints(tx.conn(), Some(&target), &strategy.constraints)
                .await
                .map_err(|error| {
                    ApiError::validation(format!(
                        "A strategy of flag {feature} in {}: {}",
                        environment.name, error.message
                    ))
                })?;
        }
    }
    feature_store::set_project(tx.conn(), feature, &target).await?;
    tx.record(NewEvent {
        event_type: EventType::FeatureProjectChange.as_str(),
        project: Some(target.clone()),
        feature_name: Some(row.name.clone()),
        data: Some(serde_json::json!({ "oldProject": project, "newProject": target })),
        pre_data: Some(serde_json::json!({ "project": project })),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
