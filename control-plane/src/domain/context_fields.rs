//! Context fields: the built-ins (appName, currentTime, environment, sessionId, userId, remoteAddress) and
//! custom ones, each with a `stickiness` flag and optional legal values. Built-ins can be edited, not deleted.

use super::events::{payload, EventType};
use crate::model::constraint::{
    validate_constraint as check_constraint, validate_constraints, Constraint,
};
use crate::model::context_field::LegalValue;
use crate::model::name;
use crate::store::context_fields::{self as field_store, ContextFieldRow};
use crate::store::WriteTx;
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
}

fn view(row: &ContextFieldRow) -> ContextField {
    ContextField {
        name: row.name.clone(),
        description: row.description.clone(),
        stickiness: row.stickiness,
        sort_order: row.sort_order,
        legal_values: row.legal_values.clone(),
        created_at: row.created_at.to_string(),
    }
}

async fn require(conn: &mut AnyConnection, name: &str) -> Result<ContextFieldRow, ApiError> {
    field_store::get(conn, name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Context field {name} does not exist")))
}

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ContextField>, ApiError> {
    Ok(field_store::list(conn).await?.iter().map(view).collect())
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

pub async fn get(conn: &mut AnyConnection, name: &str) -> Result<ContextField, ApiError> {
    Ok(view(&require(conn, name).await?))
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

pub async fn create(tx: &mut WriteTx, input: ContextFieldInput) -> Result<ContextField, ApiError> {
    let name = input
        .name
        .ok_or_else(|| ApiError::invalid_field("name", "name is required"))?;
    name::validate("name", &name)?;
    let legal_values = input.legal_values.unwrap_or_default();
    validate_legal_values(&legal_values)?;
    if field_store::get(tx.conn(), &name).await?.is_some() {
        return Err(ApiError::name_exists(format!(
            "Context field {name} already exists"
        )));
    }
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
    };
    field_store::insert(tx.conn(), &row).await?;
    let created = view(&row);
    tx.record(EventType::ContextFieldCreated.instance_wide(Some(payload(&created)), None))
        .await?;
    Ok(created)
}

pub async fn update(
    tx: &mut WriteTx,
    name: &str,
    input: ContextFieldInput,
) -> Result<ContextField, ApiError> {
    let before_row = require(tx.conn(), name).await?;
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
        tx.record(
            EventType::ContextFieldUpdated
                .instance_wide(Some(payload(&after)), Some(payload(&before))),
        )
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

/// The name follows the names rule (400) and no field has it (409).
pub async fn validate_name(
    conn: &mut AnyConnection,
    input: ContextFieldName,
) -> Result<(), ApiError> {
    name::validate("name", &input.name)?;
    if field_store::get(conn, &input.name).await?.is_some() {
        return Err(ApiError::name_exists(format!(
            "Context field {} already exists",
            input.name
        )));
    }
    Ok(())
}

/// Adds a legal value, or replaces the description of the one with the same value.
pub async fn put_legal_value(
    tx: &mut WriteTx,
    name: &str,
    legal: LegalValue,
) -> Result<ContextField, ApiError> {
    let mut values = require(tx.conn(), name).await?.legal_values;
    match values.iter_mut().find(|known| known.value == legal.value) {
        Some(known) => known.description = legal.description,
        None => values.push(legal),
    }
    set_legal_values(tx, name, values).await
}

/// Removes a legal value (absent: nothing to do).
pub async fn delete_legal_value(
    tx: &mut WriteTx,
    name: &str,
    value: &str,
) -> Result<ContextField, ApiError> {
    let mut values = require(tx.conn(), name).await?.legal_values;
    values.retain(|known| known.value != value);
    set_legal_values(tx, name, values).await
}

async fn set_legal_values(
    tx: &mut WriteTx,
    name: &str,
    legal_values: Vec<LegalValue>,
) -> Result<ContextField, ApiError> {
    let input = ContextFieldInput {
        name: None,
        description: None,
        stickiness: None,
        sort_order: None,
        legal_values: Some(legal_values),
    };
    update(tx, name, input).await
}

/// Deletes a custom field; built-ins → 400.
pub async fn delete(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    let row = require(tx.conn(), name).await?;
    if row.built_in {
        return Err(ApiError::validation(format!(
            "Context field {name} is built in and cannot be deleted"
        )));
    }
    field_store::delete(tx.conn(), name).await?;
    tx.record(EventType::ContextFieldDeleted.instance_wide(None, Some(payload(&view(&row)))))
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

/// The constraints of a strategy or segment write, as [`validate_constraint`] checks one; messages name
/// `constraints[i].<field>`.
pub async fn check_constraints(
    conn: &mut AnyConnection,
    constraints: &[Constraint],
) -> Result<(), ApiError> {
    validate_constraints(constraints)?;
    for (index, constraint) in constraints.iter().enumerate() {
        check_legal_values(conn, &format!("constraints[{index}]."), constraint).await?;
    }
    Ok(())
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
