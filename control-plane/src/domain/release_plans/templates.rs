//! Release templates: `/api/admin/release-plan-templates…`. A template is written whole (create, update)
//! or a piece at a time (a milestone, a milestone's strategy); every write checks the whole template again
//! (a name not taken by another template in use, milestone names, transition conditions of at least a
//! minute, strategies of defined names with valid constraints, existing segments, parameters as strings)
//! and records `release-plan-template-created`/`-updated`/`-archived`/`-deleted` with the template.

use super::{
    milestone_view, template_view, Milestone, MilestoneInput, MilestoneStrategyInput,
    ReleasePlanTemplate, TemplateInput,
};
use crate::domain::context_fields;
use crate::domain::events::{payload, EventType};
use crate::domain::limits::{ensure_within, Limits};
use crate::domain::strategies::{self, parameter_strings};
use crate::domain::strategy_definitions;
use crate::model::release_plan::{Discriminator, MilestoneStrategy};
use crate::model::strategy_definition::check_values;
use crate::model::variant::normalize_variants;
use crate::store::release_plans::{self as store, DefinitionRow, MilestoneRow};
use crate::store::segments as segment_store;
use crate::store::WriteTx;
use sqlx::AnyConnection;
use uuid::Uuid;
use vexil_shared::ApiError;

/// The longest template or milestone name.
const MAX_NAME: usize = 255;

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Release template {id} does not exist"))
}

/// The template `id` (archived too) and its milestones; 404 when there is none.
pub(crate) async fn require(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<(DefinitionRow, Vec<MilestoneRow>), ApiError> {
    let row = store::get_definition(conn, id, Discriminator::Template)
        .await?
        .ok_or_else(|| not_found(id))?;
    let milestones = store::milestones(conn, id).await?;
    Ok((row, milestones))
}

/// `GET /api/admin/release-plan-templates`: the templates not archived, by name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ReleasePlanTemplate>, ApiError> {
    let mut templates = Vec::new();
    for row in store::templates(conn).await? {
        let milestones = store::milestones(conn, &row.id).await?;
        templates.push(template_view(&row, &milestones));
    }
    Ok(templates)
}

pub async fn get(conn: &mut AnyConnection, id: &str) -> Result<ReleasePlanTemplate, ApiError> {
    let (row, milestones) = require(conn, id).await?;
    Ok(template_view(&row, &milestones))
}

/// `field` under `prefix` (`milestones[1]`, or nothing: the body itself).
fn join(prefix: &str, field: &str) -> String {
    match (prefix.is_empty(), field.is_empty()) {
        (true, _) => field.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) => format!("{prefix}.{field}"),
    }
}

/// An error about the part of the body at `prefix`: its field path and message start with it.
fn inside(prefix: &str, error: ApiError) -> ApiError {
    let field = error.field.clone().unwrap_or_default();
    let message = error.message.clone();
    let (field, message) = match field.as_str() {
        // A strategy definition's check names the strategy `name`; here it is `strategyName`.
        "name" => (
            "strategyName".to_owned(),
            message.replacen("name:", "strategyName:", 1),
        ),
        _ => (field, message),
    };
    let message = if prefix.is_empty() {
        message
    } else {
        format!("{prefix}.{message}")
    };
    ApiError { message, ..error }.at_field(join(prefix, &field))
}

fn checked_name(field: &str, name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ApiError::invalid_field(
            field,
            format!("{field}: must not be empty"),
        ));
    }
    if name.chars().count() > MAX_NAME {
        return Err(ApiError::invalid_field(
            field,
            format!("{field}: must be at most {MAX_NAME} characters long"),
        ));
    }
    Ok(name.to_owned())
}

/// A milestone's strategy, checked (its messages say where it is in the body: `prefix`).
async fn checked_strategy(
    conn: &mut AnyConnection,
    prefix: &str,
    milestone_id: &str,
    id: String,
    input: MilestoneStrategyInput,
) -> Result<MilestoneStrategy, ApiError> {
    let name = input.strategy_name.trim().to_owned();
    let declared = strategy_definitions::declared_parameters(conn, &name)
        .await
        .map_err(|error| inside(prefix, error))?;
    strategies::check_title(input.title.as_deref()).map_err(|error| inside(prefix, error))?;
    let constraints = input.constraints.unwrap_or_default();
    context_fields::check_constraints(conn, None, &constraints)
        .await
        .map_err(|error| inside(prefix, error))?;
    let segments = input.segments.unwrap_or_default();
    for (index, segment) in segments.iter().enumerate() {
        if segment_store::get(conn, *segment).await?.is_none() {
            let field = format!("segments[{index}]");
            return Err(inside(
                prefix,
                ApiError::invalid_field(
                    &field,
                    format!("{field}: segment {segment} does not exist"),
                ),
            ));
        }
    }
    let variants = normalize_variants(input.variants.unwrap_or_default())
        .map_err(|error| inside(prefix, error))?;
    let parameters = parameter_strings(input.parameters.unwrap_or_default())
        .map_err(|error| inside(prefix, error))?;
    check_values(&declared, &parameters).map_err(|error| inside(prefix, error))?;
    Ok(MilestoneStrategy {
        id,
        milestone_id: milestone_id.to_owned(),
        sort_order: input.sort_order,
        title: input.title,
        strategy_name: name,
        parameters,
        constraints,
        variants,
        segments,
    })
}

/// A milestone of template `definition_id`, checked, with new strategy ids.
async fn checked_milestone(
    conn: &mut AnyConnection,
    prefix: &str,
    definition_id: &str,
    id: String,
    input: MilestoneInput,
) -> Result<MilestoneRow, ApiError> {
    let name = checked_name(&join(prefix, "name"), &input.name)?;
    if let Some(condition) = input.transition_condition {
        if condition.interval_minutes < 1 {
            let field = join(prefix, "transitionCondition.intervalMinutes");
            return Err(ApiError::invalid_field(
                &field,
                format!("{field}: must be at least 1"),
            ));
        }
    }
    let mut strategies = Vec::new();
    for (index, strategy) in input.strategies.unwrap_or_default().into_iter().enumerate() {
        let prefix = join(prefix, &format!("strategies[{index}]"));
        let strategy_id = Uuid::new_v4().to_string();
        strategies.push(checked_strategy(conn, &prefix, &id, strategy_id, strategy).await?);
    }
    Ok(MilestoneRow {
        id,
        definition_id: definition_id.to_owned(),
        name,
        sort_order: input.sort_order,
        interval_minutes: input
            .transition_condition
            .map(|condition| condition.interval_minutes),
        started_at: None,
        progression_executed_at: None,
        paused_at: None,
        strategies,
    })
}

async fn checked_milestones(
    conn: &mut AnyConnection,
    definition_id: &str,
    inputs: Vec<MilestoneInput>,
) -> Result<Vec<MilestoneRow>, ApiError> {
    let mut milestones = Vec::new();
    for (index, input) in inputs.into_iter().enumerate() {
        let id = Uuid::new_v4().to_string();
        let prefix = format!("milestones[{index}]");
        milestones.push(checked_milestone(conn, &prefix, definition_id, id, input).await?);
    }
    Ok(milestones)
}

/// 409 when another template in use has this name.
async fn ensure_name_free(tx: &mut WriteTx, name: &str, id: &str) -> Result<(), ApiError> {
    match store::template_named(tx.conn(), name).await? {
        Some(other) if other != id => Err(ApiError::name_exists(format!(
            "A release template named {name:?} already exists"
        ))
        .at_field("name")),
        _ => Ok(()),
    }
}

/// Milestones of one template at most: a release in more steps than this is a misuse, and a template is
/// copied whole into every plan applied from it.
pub const MAX_MILESTONES: usize = 20;

/// Strategies of one milestone at most: what starting it puts into one flag's environment, so as many
/// as the `featureEnvironmentStrategies` limit's default.
pub const MAX_MILESTONE_STRATEGIES: usize = 30;

/// 400 past [`MAX_MILESTONES`] or a milestone past [`MAX_MILESTONE_STRATEGIES`].
fn ensure_bounded(milestones: &[MilestoneRow]) -> Result<(), ApiError> {
    if milestones.len() > MAX_MILESTONES {
        return Err(ApiError::invalid_field(
            "milestones",
            format!(
                "milestones: a release template has at most {MAX_MILESTONES} milestones ({} given)",
                milestones.len()
            ),
        ));
    }
    for (index, milestone) in milestones.iter().enumerate() {
        if milestone.strategies.len() > MAX_MILESTONE_STRATEGIES {
            let field = format!("milestones[{index}].strategies");
            return Err(ApiError::invalid_field(
                &field,
                format!(
                    "{field}: a milestone has at most {MAX_MILESTONE_STRATEGIES} strategies ({} given)",
                    milestone.strategies.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Writes the template and its milestones, and records `event_type` with it (and what it was).
async fn save(
    tx: &mut WriteTx,
    row: &DefinitionRow,
    milestones: &mut [MilestoneRow],
    before: Option<ReleasePlanTemplate>,
    event_type: EventType,
) -> Result<ReleasePlanTemplate, ApiError> {
    ensure_bounded(milestones)?;
    milestones.sort_by_key(|milestone| milestone.sort_order);
    store::update_definition(tx.conn(), row).await?;
    store::replace_milestones(tx.conn(), &row.id, milestones).await?;
    let after = template_view(row, milestones);
    tx.record(event_type.instance_wide(Some(payload(&after)), before.as_ref().map(payload)))
        .await?;
    Ok(after)
}

/// Creates a template: 400 for bad input or past the `releaseTemplates` limit (templates not archived), 409
/// for a name in use.
pub async fn create(
    tx: &mut WriteTx,
    input: TemplateInput,
    limits: &Limits,
) -> Result<ReleasePlanTemplate, ApiError> {
    let name = checked_name("name", &input.name)?;
    let id = Uuid::new_v4().to_string();
    ensure_name_free(tx, &name, &id).await?;
    let count = store::templates(tx.conn()).await?.len();
    ensure_within(
        "releaseTemplates",
        "release templates",
        count + 1,
        limits.release_templates,
    )?;
    let mut milestones =
        checked_milestones(tx.conn(), &id, input.milestones.unwrap_or_default()).await?;
    let row = DefinitionRow {
        id,
        discriminator: Discriminator::Template,
        name,
        created_by_user_id: tx.actor().user_id,
        created_at: tx.now(),
        archived_at: None,
        feature_name: None,
        environment: None,
        template_id: None,
        active_milestone_id: None,
        progression_due_at: None,
    };
    store::insert_definition(tx.conn(), &row).await?;
    save(
        tx,
        &row,
        &mut milestones,
        None,
        EventType::ReleasePlanTemplateCreated,
    )
    .await
}

/// `PUT …/:templateId`: a new name and, when given, new milestones (replacing every one).
pub async fn update(
    tx: &mut WriteTx,
    id: &str,
    input: TemplateInput,
) -> Result<ReleasePlanTemplate, ApiError> {
    if input.id.as_deref().is_some_and(|body_id| body_id != id) {
        return Err(ApiError::invalid_field(
            "id",
            format!("id: the body's id must be the path's ({id})"),
        ));
    }
    let (row, current) = require(tx.conn(), id).await?;
    let before = template_view(&row, &current);
    let name = checked_name("name", &input.name)?;
    ensure_name_free(tx, &name, id).await?;
    let mut milestones = match input.milestones {
        Some(inputs) => checked_milestones(tx.conn(), id, inputs).await?,
        None => current,
    };
    let row = DefinitionRow { name, ..row };
    save(
        tx,
        &row,
        &mut milestones,
        Some(before),
        EventType::ReleasePlanTemplateUpdated,
    )
    .await
}

pub async fn delete(tx: &mut WriteTx, id: &str) -> Result<(), ApiError> {
    let (row, milestones) = require(tx.conn(), id).await?;
    store::delete_definition(tx.conn(), id).await?;
    let before = template_view(&row, &milestones);
    tx.record(EventType::ReleasePlanTemplateDeleted.instance_wide(None, Some(payload(&before))))
        .await?;
    Ok(())
}

/// `POST …/archive/:templateId`: no longer listed nor applicable; its plans stay.
pub async fn archive(tx: &mut WriteTx, id: &str) -> Result<(), ApiError> {
    let (row, mut milestones) = require(tx.conn(), id).await?;
    if row.archived_at.is_some() {
        return Ok(());
    }
    let before = template_view(&row, &milestones);
    let row = DefinitionRow {
        archived_at: Some(tx.now()),
        ..row
    };
    save(
        tx,
        &row,
        &mut milestones,
        Some(before),
        EventType::ReleasePlanTemplateArchived,
    )
    .await?;
    Ok(())
}

/// Changes the milestones of template `id` with `change` (given them and the index of milestone
/// `milestone_id`, or their count to add one), then saves the template.
async fn edit(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: Option<&str>,
    change: impl FnOnce(&mut Vec<MilestoneRow>, usize) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let (row, mut milestones) = require(tx.conn(), id).await?;
    let before = template_view(&row, &milestones);
    let index = match milestone_id {
        Some(milestone_id) => milestones
            .iter()
            .position(|milestone| milestone.id == milestone_id)
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "Milestone {milestone_id} does not exist in release template {id}"
                ))
            })?,
        None => milestones.len(),
    };
    change(&mut milestones, index)?;
    save(
        tx,
        &row,
        &mut milestones,
        Some(before),
        EventType::ReleasePlanTemplateUpdated,
    )
    .await?;
    Ok(())
}

/// `POST …/:templateId/milestones`.
pub async fn add_milestone(
    tx: &mut WriteTx,
    id: &str,
    input: MilestoneInput,
) -> Result<Milestone, ApiError> {
    require(tx.conn(), id).await?;
    let milestone_id = Uuid::new_v4().to_string();
    let milestone = checked_milestone(tx.conn(), "", id, milestone_id, input).await?;
    let view = milestone_view(&milestone);
    edit(tx, id, None, |milestones, _| {
        milestones.push(milestone);
        Ok(())
    })
    .await?;
    Ok(view)
}

/// `PUT …/milestones/:milestoneId`: its name, order, transition condition and (when given) strategies.
pub async fn update_milestone(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: &str,
    input: MilestoneInput,
) -> Result<Milestone, ApiError> {
    let keep_strategies = input.strategies.is_none();
    let mut milestone =
        checked_milestone(tx.conn(), "", id, milestone_id.to_owned(), input).await?;
    let mut view = milestone_view(&milestone);
    edit(tx, id, Some(milestone_id), |milestones, index| {
        if keep_strategies {
            milestone.strategies = milestones[index].strategies.clone();
            view.strategies = milestone.strategies.clone();
        }
        milestones[index] = milestone;
        Ok(())
    })
    .await?;
    Ok(view)
}

/// `DELETE …/milestones/:milestoneId`, with its strategies.
pub async fn delete_milestone(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: &str,
) -> Result<(), ApiError> {
    edit(tx, id, Some(milestone_id), |milestones, index| {
        milestones.remove(index);
        Ok(())
    })
    .await
}

fn strategy_not_found(milestone_id: &str, strategy_id: &str) -> ApiError {
    ApiError::not_found(format!(
        "Strategy {strategy_id} does not exist in milestone {milestone_id}"
    ))
}

/// `POST …/milestones/:milestoneId/strategies`: answers the milestone.
pub async fn add_strategy(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: &str,
    input: MilestoneStrategyInput,
) -> Result<Milestone, ApiError> {
    let strategy_id = Uuid::new_v4().to_string();
    let strategy = checked_strategy(tx.conn(), "", milestone_id, strategy_id, input).await?;
    let mut view = None;
    edit(tx, id, Some(milestone_id), |milestones, index| {
        milestones[index].strategies.push(strategy);
        milestones[index]
            .strategies
            .sort_by_key(|strategy| strategy.sort_order);
        view = Some(milestone_view(&milestones[index]));
        Ok(())
    })
    .await?;
    view.ok_or_else(ApiError::internal)
}

/// `PUT …/strategies/:strategyId`: replaces the strategy, keeping its id.
pub async fn update_strategy(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: &str,
    strategy_id: &str,
    input: MilestoneStrategyInput,
) -> Result<MilestoneStrategy, ApiError> {
    let strategy =
        checked_strategy(tx.conn(), "", milestone_id, strategy_id.to_owned(), input).await?;
    let view = strategy.clone();
    edit(tx, id, Some(milestone_id), |milestones, index| {
        let strategies = &mut milestones[index].strategies;
        let place = strategies
            .iter()
            .position(|existing| existing.id == strategy_id)
            .ok_or_else(|| strategy_not_found(milestone_id, strategy_id))?;
        strategies[place] = strategy;
        strategies.sort_by_key(|strategy| strategy.sort_order);
        Ok(())
    })
    .await?;
    Ok(view)
}

/// `DELETE …/strategies/:strategyId`.
pub async fn delete_strategy(
    tx: &mut WriteTx,
    id: &str,
    milestone_id: &str,
    strategy_id: &str,
) -> Result<(), ApiError> {
    edit(tx, id, Some(milestone_id), |milestones, index| {
        let strategies = &mut milestones[index].strategies;
        let place = strategies
            .iter()
            .position(|existing| existing.id == strategy_id)
            .ok_or_else(|| strategy_not_found(milestone_id, strategy_id))?;
        strategies.remove(place);
        Ok(())
    })
    .await
}
