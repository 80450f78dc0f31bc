//! Context fields: the built-ins (appName, currentTime, environment, sessionId, userId, remoteAddress) and
//! custom ones, each with a `stickiness` flag and optional legal values. Built-ins can be edited, not deleted;
//! a field in use by a strategy or segment cannot be deleted (409). A field may belong to one project
//! (`project`, Unleash's project context fields): only that project's flags and segments may test it, and
//! the project's routes (`/api/admin/projects/:p/context…`) see only its fields. Names are unique across the
//! instance's fields and every project's, as in Unleash (one table keyed by name).

use super::events::{payload, EventType};
use crate::model::constraint::{
    validate_constraint as check_constraint, validate_constraints, Constraint,
};
use crate::model::context_field::LegalValue;
use crate::model::name;
use crate::store::context_fields::{self as field_store, ContextFieldRow};
use crate::store::projects as project_store;
use crate::store::segments as segment_store;
use crate::store::strategies as strategy_store;
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A context field as `GET /api/admin/context` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextField {
    pub name: String,
    pub description: Option<String>,
    /// Whether it can be chosen as stickiness.
    pub stickiness: bool,
    pub sort_order: i64,
    pub legal_values: Vec<LegalValue>,
    pub created_at: String,
    /// The project that owns the field (absent: the instance's, usable by every project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// `POST /api/admin/context` and `PUT /api/admin/context/:name` (absent fields keep their value on PUT).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextFieldInput {
    /// Required on POST; on PUT, if present, must be the field's name.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: Option<String>,
    pub description: Option<String>,
    pub stickiness: Option<bool>,
    pub sort_order: Option<i64>,
    pub legal_values: Option<Vec<LegalValue>>,
    /// The project that owns the field. On POST to `/api/admin/context`, makes it a project's field; on a
    /// project's routes, if present, must be that project; on PUT, if present, must be the field's own (a
    /// field does not move).
    pub project: Option<String>,
}

fn view(row: &ContextFieldRow) -> ContextField {
    ContextField {
        name: row.name.clone(),
        description: row.description.clone(),
        stickiness: row.stickiness,
        sort_order: row.sort_order,
        legal_values: row.legal_values.clone(),
        created_at: row.created_at.to_string(),
        project: row.project.clone(),
    }
}

/// The event of a write to `field`, in its project if it has one.
fn event(
    event_type: EventType,
    project: Option<&str>,
    data: Option<&ContextField>,
    pre_data: Option<&ContextField>,
) -> NewEvent {
    NewEvent {
        project: project.map(str::to_owned),
        ..event_type.instance_wide(data.map(payload), pre_data.map(payload))
    }
}

/// 404 unless project `project` exists.
pub async fn require_project(conn: &mut AnyConnection, project: &str) -> Result<(), ApiError> {
    match project_store::get(conn, project).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(format!(
            "Project {project} does not exist"
        ))),
    }
}

/// Field `name`; with `project` (a project's routes), the project must exist and own the field (404).
async fn require(
    conn: &mut AnyConnection,
    project: Option<&str>,
    name: &str,
) -> Result<ContextFieldRow, ApiError> {
    if let Some(project) = project {
        require_project(conn, project).await?;
    }
    let row = field_store::get(conn, name).await?;
    match (row, project) {
        (Some(row), None) => Ok(row),
        (Some(row), Some(project)) if row.project.as_deref() == Some(project) => Ok(row),
        (_, None) => Err(ApiError::not_found(format!(
            "Context field {name} does not exist"
        ))),
        (_, Some(project)) => Err(ApiError::not_found(format!(
            "Context field {name} does not exist in project {project}"
        ))),
    }
}

/// `GET /api/admin/context`: the instance's fields (those of no project), as Unleash lists them.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ContextField>, ApiError> {
    Ok(field_store::list(conn)
        .await?
        .iter()
        .filter(|row| row.project.is_none())
        .map(view)
        .collect())
}

/// `GET /api/admin/context?include=project`: every field, the projects' included.
pub async fn list_including_projects(
    conn: &mut AnyConnection,
) -> Result<Vec<ContextField>, ApiError> {
    Ok(field_store::list(conn).await?.iter().map(view).collect())
}

/// `GET /api/admin/projects/:p/context`: the fields project `project` owns (404 for an unknown project).
pub async fn list_of_project(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<ContextField>, ApiError> {
    require_project(conn, project).await?;
    Ok(field_store::list_of_project(conn, project)
        .await?
        .iter()
        .map(view)
        .collect())
}

/// What a flag or segment of `project` may test (`…/context?include=root`, the constraint editor): the
/// instance's fields and, with a project, that project's.
pub async fn usable_in(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<Vec<ContextField>, ApiError> {
    Ok(field_store::list(conn)
        .await?
        .iter()
        .filter(|row| row.project.is_none() || row.project.as_deref() == project)
        .map(view)
        .collect())
}

/// The names of the built-in fields (they can be edited, not deleted).
pub async fn built_in_names(
    conn: &mut AnyConnection,
) -> Result<std::collections::BTreeSet<String>, ApiError> {
    Ok(field_store::list(conn)
        .await?
        .into_iter()
        .filter(|row| row.built_in)
        .map(|row| row.name)
        .collect())
}

/// Field `name` (with `project`: only if that project owns it).
pub async fn get(
    conn: &mut AnyConnection,
    project: Option<&str>,
    name: &str,
) -> Result<ContextField, ApiError> {
    Ok(view(&require(conn, project, name).await?))
}

fn validate_legal_values(values: &[LegalValue]) -> Result<(), ApiError> {
    for (index, legal) in values.iter().enumerate() {
        let length = legal.value.chars().count();
        if length == 0 || length > 100 {
            return Err(ApiError::invalid_field(
                format!("legalValues[{index}].value"),
                format!("legalValues[{index}].value must be 1 to 100 characters long"),
            ));
        }
        if values[..index]
            .iter()
            .any(|other| other.value == legal.value)
        {
            return Err(ApiError::invalid_field(
                format!("legalValues[{index}].value"),
                format!(
                    "legalValues[{index}].value: {} is listed twice",
                    legal.value
                ),
            ));
        }
    }
    Ok(())
}

/// `POST /api/admin/projects/:p/context`: [`create`] with the project of the path (404 if unknown; a
/// body's other `project` is 400).
pub async fn create_in_project(
    tx: &mut WriteTx,
    project: &str,
    mut input: ContextFieldInput,
) -> Result<ContextField, ApiError> {
    require_project(tx.conn(), project).await?;
    check_same_project(input.project.as_deref(), Some(project))?;
    input.project = Some(project.to_owned());
    create(tx, input).await
}

/// A body's `project`, when present, must be `owner` (the path's project, or the field's own).
fn check_same_project(given: Option<&str>, owner: Option<&str>) -> Result<(), ApiError> {
    match given {
        Some(given) if Some(given) != owner => Err(ApiError::invalid_field(
            "project",
            match owner {
                Some(owner) => format!(
                    "project: the context field belongs to project {owner}, not {given}; a field cannot move between projects"
                ),
                None => format!(
                    "project: the context field belongs to no project and cannot move into project {given}"
                ),
            },
        )),
        _ => Ok(()),
    }
}

/// The name's rule (400), free among every field, the instance's and each project's (409).
async fn check_free_name(conn: &mut AnyConnection, name: &str) -> Result<(), ApiError> {
    name::validate("name", name)?;
    match field_store::get(conn, name).await? {
        Some(ContextFieldRow {
            project: Some(owner),
            ..
        }) => Err(ApiError::name_exists(format!(
            "Context field {name} already exists (in project {owner}); names are unique across projects"
        ))),
        Some(_) => Err(ApiError::name_exists(format!(
            "Context field {name} already exists"
        ))),
        None => Ok(()),
    }
}

pub async fn create(tx: &mut WriteTx, input: ContextFieldInput) -> Result<ContextField, ApiError> {
    let name = input
        .name
        .ok_or_else(|| ApiError::invalid_field("name", "name is required"))?;
    name::validate("name", &name)?;
    let legal_values = input.legal_values.unwrap_or_default();
    validate_legal_values(&legal_values)?;
    if let Some(project) = &input.project {
        if project_store::get(tx.conn(), project).await?.is_none() {
            return Err(ApiError::invalid_field(
                "project",
                format!("project: project {project} does not exist"),
            ));
        }
    }
    check_free_name(tx.conn(), &name).await?;
    let sort_order = match input.sort_order {
        Some(sort_order) => sort_order,
        None => field_store::max_sort_order(tx.conn()).await? + 1,
    };
    let row = ContextFieldRow {
        name,
        description: input.description,
        stickiness: input.stickiness.unwrap_or(false),
        sort_order,
        legal_values,
        built_in: false,
        created_at: tx.now(),
        project: input.project,
    };
    field_store::insert(tx.conn(), &row).await?;
    let created = view(&row);
    tx.record(event(
        EventType::ContextFieldCreated,
        row.project.as_deref(),
        Some(&created),
        None,
    ))
    .await?;
    Ok(created)
}

/// Updates field `name` (with `project`: of that project only); absent fields keep their value.
pub async fn update(
    tx: &mut WriteTx,
    project: Option<&str>,
    name: &str,
    input: ContextFieldInput,
) -> Result<ContextField, ApiError> {
    let before_row = require(tx.conn(), project, name).await?;
    check_same_project(input.project.as_deref(), before_row.project.as_deref())?;
    if let Some(new_name) = &input.name {
        if new_name != name {
            return Err(ApiError::invalid_field(
                "name",
                format!("name: a context field cannot be renamed ({new_name} ≠ {name})"),
            ));
        }
    }
    if let Some(values) = &input.legal_values {
        validate_legal_values(values)?;
    }
    let row = ContextFieldRow {
        description: input.description.or(before_row.description.clone()),
        stickiness: input.stickiness.unwrap_or(before_row.stickiness),
        sort_order: input.sort_order.unwrap_or(before_row.sort_order),
        legal_values: input
            .legal_values
            .unwrap_or(before_row.legal_values.clone()),
        ..before_row.clone()
    };
    let (before, after) = (view(&before_row), view(&row));
    if before != after {
        field_store::update(tx.conn(), &row).await?;
        tx.record(event(
            EventType::ContextFieldUpdated,
            row.project.as_deref(),
            Some(&after),
            Some(&before),
        ))
        .await?;
    }
    Ok(after)
}

/// `POST /api/admin/context/validate`: `{name}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ContextFieldName {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
}

/// The name follows the names rule (400) and no field has it, the instance's or any project's (409); with
/// `project` (a project's route), the project must exist (404).
pub async fn validate_name(
    conn: &mut AnyConnection,
    project: Option<&str>,
    input: ContextFieldName,
) -> Result<(), ApiError> {
    if let Some(project) = project {
        require_project(conn, project).await?;
    }
    check_free_name(conn, &input.name).await
}

/// Adds a legal value, or replaces the description of the one with the same value.
pub async fn put_legal_value(
    tx: &mut WriteTx,
    project: Option<&str>,
    name: &str,
    legal: LegalValue,
) -> Result<ContextField, ApiError> {
    let mut values = require(tx.conn(), project, name).await?.legal_values;
    match values.iter_mut().find(|known| known.value == legal.value) {
        Some(known) => known.description = legal.description,
        None => values.push(legal),
    }
    set_legal_values(tx, project, name, values).await
}

/// Removes a legal value (absent: nothing to do).
pub async fn delete_legal_value(
    tx: &mut WriteTx,
    project: Option<&str>,
    name: &str,
    value: &str,
) -> Result<ContextField, ApiError> {
    let mut values = require(tx.conn(), project, name).await?.legal_values;
    values.retain(|known| known.value != value);
    set_legal_values(tx, project, name, values).await
}

async fn set_legal_values(
    tx: &mut WriteTx,
    project: Option<&str>,
    name: &str,
    legal_values: Vec<LegalValue>,
) -> Result<ContextField, ApiError> {
    let input = ContextFieldInput {
        name: None,
        description: None,
        stickiness: None,
        sort_order: None,
        legal_values: Some(legal_values),
        project: None,
    };
    update(tx, project, name, input).await
}

/// Deletes a custom field (with `project`: of that project only); built-ins → 400; in use by a strategy
/// (archived flags' included) or a segment → 409 naming them, as Unleash refuses a field in use.
pub async fn delete(tx: &mut WriteTx, project: Option<&str>, name: &str) -> Result<(), ApiError> {
    let row = require(tx.conn(), project, name).await?;
    if row.built_in {
        return Err(ApiError::validation(format!(
            "Context field {name} is built in and cannot be deleted"
        )));
    }
    let mut users: Vec<String> = Vec::new();
    for strategy in strategy_store::list_all_placed(tx.conn()).await? {
        let uses = strategy
            .row
            .constraints
            .iter()
            .any(|c| c.context_name == name);
        let flag = format!("flag {}", strategy.row.feature_name);
        if uses && !users.contains(&flag) {
            users.push(flag);
        }
    }
    for segment in segment_store::list(tx.conn()).await? {
        if segment.constraints.iter().any(|c| c.context_name == name) {
            users.push(format!("segment {}", segment.name));
        }
    }
    if !users.is_empty() {
        return Err(ApiError::name_exists(format!(
            "Context field {name} is in use ({}); remove those constraints first",
            users.join(", ")
        )));
    }
    field_store::delete(tx.conn(), name).await?;
    let before = view(&row);
    tx.record(event(
        EventType::ContextFieldDeleted,
        row.project.as_deref(),
        None,
        Some(&before),
    ))
    .await?;
    Ok(())
}

/// `POST /api/admin/constraints/validate`: the constraint's context name and operator, its value as the
/// engine reads it (a number, date, semver, regex or networks where the operator needs one), and, when the
/// context field has legal values, every value among them. Messages start with the field (`value: …`).
pub async fn validate_constraint(
    conn: &mut AnyConnection,
    constraint: Constraint,
) -> Result<(), ApiError> {
    check_constraint("", &constraint)?;
    check_legal_values(conn, "", &constraint).await
}

/// The constraints of a strategy or segment write, as [`validate_constraint`] checks one, owned by `project`
/// (the flag's; a segment's, `None` for a segment of no project or a release template): a field of a project
/// may be tested only there (400 naming the field and its project). Messages name `constraints[i].<field>`.
pub async fn check_constraints(
    conn: &mut AnyConnection,
    project: Option<&str>,
    constraints: &[Constraint],
) -> Result<(), ApiError> {
    validate_constraints(constraints)?;
    for (index, constraint) in constraints.iter().enumerate() {
        let path = format!("constraints[{index}].");
        check_project(conn, &path, project, constraint).await?;
        check_legal_values(conn, &path, constraint).await?;
    }
    Ok(())
}

/// A constraint on a project's field is refused outside that project.
async fn check_project(
    conn: &mut AnyConnection,
    path: &str,
    project: Option<&str>,
    constraint: &Constraint,
) -> Result<(), ApiError> {
    let Some(field) = field_store::get(conn, &constraint.context_name).await? else {
        return Ok(());
    };
    let Some(owner) = field.project else {
        return Ok(());
    };
    if Some(owner.as_str()) == project {
        return Ok(());
    }
    let place = match project {
        Some(project) => format!("in project {project}"),
        None => "outside it (only that project's flags and segments may test it)".to_owned(),
    };
    Err(ApiError::invalid_field(
        format!("{path}contextName"),
        format!(
            "{path}contextName: context field {} belongs to project {owner} and cannot be used {place}",
            field.name
        ),
    ))
}

/// When the constraint's context field has legal values, every value given is one of them.
async fn check_legal_values(
    conn: &mut AnyConnection,
    path: &str,
    constraint: &Constraint,
) -> Result<(), ApiError> {
    let Some(field) = field_store::get(conn, &constraint.context_name).await? else {
        return Ok(());
    };
    if field.legal_values.is_empty() {
        return Ok(());
    }
    let key = if constraint.values.is_empty() {
        "value"
    } else {
        "values"
    };
    for value in constraint.values.iter().chain(constraint.value.iter()) {
        if !field.legal_values.iter().any(|legal| &legal.value == value) {
            return Err(ApiError::invalid_field(
                format!("{path}{key}"),
                format!(
                    "{path}{key}: {value:?} is not a legal value of context field {}",
                    field.name
                ),
            ));
        }
    }
    Ok(())
}
