//! Strategy definitions: the built-ins (not editable) and custom ones with their parameter lists, and their
//! deprecation. A flag's strategy must name a definition; deprecated ones stay usable.

use super::events::{payload, EventType};
use crate::model::name;
use crate::model::strategy_definition::StrategyParameter;
use crate::store::strategy_definitions::{self as definition_store, StrategyDefinitionRow};
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A strategy definition as `GET /api/admin/strategies` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyDefinition {
    pub name: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
    /// False for the built-ins.
    pub editable: bool,
    pub deprecated: bool,
    pub parameters: Vec<StrategyParameter>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StrategyDefinitionList {
    pub version: u32,
    pub strategies: Vec<StrategyDefinition>,
}

/// `POST /api/admin/strategies`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateStrategyDefinition {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<StrategyParameter>,
}

/// `PUT /api/admin/strategies/:name`: absent title/description keep their value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategyDefinition {
    /// If present, must be the definition's name.
    pub name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<StrategyParameter>,
}

fn view(row: &StrategyDefinitionRow) -> StrategyDefinition {
    StrategyDefinition {
        name: row.name.clone(),
        display_name: row.title.clone(),
        description: row.description.clone(),
        editable: !row.built_in,
        deprecated: row.deprecated,
        parameters: row.parameters.clone(),
    }
}

fn not_found(name: &str) -> ApiError {
    ApiError::not_found(format!("Strategy {name} does not exist"))
}

/// The definition or 404.
async fn require(conn: &mut AnyConnection, name: &str) -> Result<StrategyDefinitionRow, ApiError> {
    definition_store::get(conn, name)
        .await?
        .ok_or_else(|| not_found(name))
}

/// The parameters strategy `name` declares; 400 unless it is defined (for a flag's strategy).
pub async fn declared_parameters(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Vec<StrategyParameter>, ApiError> {
    match definition_store::get(conn, name).await? {
        Some(row) => Ok(row.parameters),
        None => Err(ApiError::invalid_field(
            "name",
            format!(
                "name: unknown strategy {name:?}; define it first (POST /api/admin/strategies)"
            ),
        )),
    }
}

pub async fn list(conn: &mut AnyConnection) -> Result<StrategyDefinitionList, ApiError> {
    let strategies = definition_store::list(conn)
        .await?
        .iter()
        .map(view)
        .collect();
    Ok(StrategyDefinitionList {
        version: 1,
        strategies,
    })
}

pub async fn get(conn: &mut AnyConnection, name: &str) -> Result<StrategyDefinition, ApiError> {
    Ok(view(&require(conn, name).await?))
}

fn validate_parameters(parameters: &[StrategyParameter]) -> Result<(), ApiError> {
    for (index, parameter) in parameters.iter().enumerate() {
        let length = parameter.name.trim().chars().count();
        if length == 0 || length > 100 {
            return Err(ApiError::invalid_field(
                format!("parameters[{index}].name"),
                format!("parameters[{index}].name must be 1 to 100 characters long"),
            ));
        }
        if parameters[..index]
            .iter()
            .any(|other| other.name == parameter.name)
        {
            return Err(ApiError::invalid_field(
                format!("parameters[{index}].name"),
                format!(
                    "parameters[{index}].name: {} is listed twice",
                    parameter.name
                ),
            ));
        }
    }
    Ok(())
}

pub async fn create(
    tx: &mut WriteTx,
    input: CreateStrategyDefinition,
) -> Result<StrategyDefinition, ApiError> {
    name::validate("name", &input.name)?;
    validate_parameters(&input.parameters)?;
    if definition_store::get(tx.conn(), &input.name)
        .await?
        .is_some()
    {
        return Err(ApiError::name_exists(format!(
            "Strategy {} already exists",
            input.name
        )));
    }
    let row = StrategyDefinitionRow {
        name: input.name,
        title: input.title,
        description: input.description,
        parameters: input.parameters,
        built_in: false,
        deprecated: false,
        created_at: tx.now(),
    };
    definition_store::insert(tx.conn(), &row).await?;
    let created = view(&row);
    tx.record(EventType::StrategyCreated.instance_wide(Some(payload(&created)), None))
        .await?;
    Ok(created)
}

fn ensure_editable(row: &StrategyDefinitionRow) -> Result<(), ApiError> {
    if row.built_in {
        return Err(ApiError::validation(format!(
            "Strategy {} is built in and cannot be changed or deleted",
            row.name
        )));
    }
    Ok(())
}

pub async fn update(
    tx: &mut WriteTx,
    name: &str,
    input: UpdateStrategyDefinition,
) -> Result<StrategyDefinition, ApiError> {
    let before_row = require(tx.conn(), name).await?;
    ensure_editable(&before_row)?;
    if let Some(new_name) = &input.name {
        if new_name != name {
            return Err(ApiError::invalid_field(
                "name",
                format!("name: a strategy cannot be renamed ({new_name} ≠ {name})"),
            ));
        }
    }
    validate_parameters(&input.parameters)?;
    let row = StrategyDefinitionRow {
        title: input.title.or(before_row.title.clone()),
        description: input.description.or(before_row.description.clone()),
        parameters: input.parameters,
        ..before_row.clone()
    };
    let (before, after) = (view(&before_row), view(&row));
    if before != after {
        definition_store::update(tx.conn(), &row).await?;
        tx.record(
            EventType::StrategyUpdated.instance_wide(Some(payload(&after)), Some(payload(&before))),
        )
        .await?;
    }
    Ok(after)
}

/// Deletes a custom definition that no flag strategy uses (400 otherwise, as for built-ins).
pub async fn delete(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    let row = require(tx.conn(), name).await?;
    ensure_editable(&row)?;
    let used = definition_store::usage_count(tx.conn(), name).await?;
    if used > 0 {
        return Err(ApiError::validation(format!(
            "Strategy {name} is used by {used} flag strateg{}; remove those first",
            if used == 1 { "y" } else { "ies" }
        )));
    }
    definition_store::delete(tx.conn(), name).await?;
    tx.record(EventType::StrategyDeleted.instance_wide(None, Some(payload(&view(&row)))))
        .await?;
    Ok(())
}

/// Deprecates (or reactivates) a definition; 404 for an unknown one; an event only on a change.
pub async fn set_deprecated(
    tx: &mut WriteTx,
    name: &str,
    deprecated: bool,
) -> Result<(), ApiError> {
    let before_row = require(tx.conn(), name).await?;
    if before_row.deprecated == deprecated {
        return Ok(());
    }
    let row = StrategyDefinitionRow {
        deprecated,
        ..before_row.clone()
    };
    definition_store::update(tx.conn(), &row).await?;
    let event_type = if deprecated {
        EventType::StrategyDeprecated
    } else {
        EventType::StrategyReactivated
    };
    tx.record(event_type.instance_wide(
        Some(payload(&view(&row))),
        Some(payload(&view(&before_row))),
    ))
    .await?;
    Ok(())
}
