//! Environments. `development` and `production` exist from the first start.

use super::events::{payload, EventType};
use super::limits::{self, Limits};
use super::projects::to_count;
use crate::model::name;
use crate::store::environments::{self as environment_store, EnvironmentRow};
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    pub name: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub enabled: bool,
    pub protected: bool,
    pub sort_order: i64,
    /// How many projects use it.
    pub project_count: i64,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EnvironmentList {
    pub version: u32,
    pub environments: Vec<Environment>,
}

/// `POST /api/admin/environments`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateEnvironment {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    #[serde(rename = "type")]
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub environment_type: String,
    /// Default true.
    pub enabled: Option<bool>,
    /// Default: after the last environment.
    pub sort_order: Option<i64>,
}

/// `PUT /api/admin/environments/update/:name`: absent `sortOrder` keeps its value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEnvironment {
    #[serde(rename = "type")]
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub environment_type: String,
    pub sort_order: Option<i64>,
}

fn validate_type(environment_type: &str) -> Result<(), ApiError> {
    name::validate("type", environment_type)
}

async fn view(conn: &mut AnyConnection, row: EnvironmentRow) -> Result<Environment, ApiError> {
    let project_count = environment_store::project_count(conn, &row.name).await?;
    Ok(Environment {
        name: row.name,
        environment_type: row.environment_type,
        enabled: row.enabled,
        protected: row.protected,
        sort_order: row.sort_order,
        project_count,
        created_at: row.created_at.to_string(),
    })
}

/// The environment row or 404.
pub async fn require(conn: &mut AnyConnection, name: &str) -> Result<EnvironmentRow, ApiError> {
    environment_store::get(conn, name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Environment {name} does not exist")))
}

pub async fn list(conn: &mut AnyConnection) -> Result<EnvironmentList, ApiError> {
    let mut environments = Vec::new();
    for row in environment_store::list(conn).await? {
        environments.push(view(conn, row).await?);
    }
    Ok(EnvironmentList {
        version: 1,
        environments,
    })
}

pub async fn get(conn: &mut AnyConnection, name: &str) -> Result<Environment, ApiError> {
    let row = require(conn, name).await?;
    view(conn, row).await
}

pub async fn create(
    tx: &mut WriteTx,
    input: CreateEnvironment,
    limits: &Limits,
) -> Result<Environment, ApiError> {
    name::validate("name", &input.name)?;
    validate_type(&input.environment_type)?;
    let count = environment_store::count_all(tx.conn()).await?;
    limits::ensure_within(
        "environments",
        "environments",
        to_count(count) + 1,
        limits.environments,
    )?;
    if environment_store::get(tx.conn(), &input.name)
        .await?
        .is_some()
    {
        return Err(ApiError::name_exists(format!(
            "Environment {} already exists",
            input.name
        )));
    }
    let sort_order = match input.sort_order {
        Some(sort_order) => sort_order,
        None => environment_store::max_sort_order(tx.conn()).await? + 1,
    };
    let row = EnvironmentRow {
        name: input.name,
        environment_type: input.environment_type,
        enabled: input.enabled.unwrap_or(true),
        protected: false,
        sort_order,
        created_at: tx.now(),
    };
    environment_store::insert(tx.conn(), &row).await?;
    let environment = view(tx.conn(), row).await?;
    tx.record(NewEvent {
        event_type: EventType::EnvironmentCreated.as_str(),
        environment: Some(environment.name.clone()),
        data: Some(payload(&environment)),
        ..NewEvent::default()
    })
    .await?;
    Ok(environment)
}

pub async fn update(
    tx: &mut WriteTx,
    name: &str,
    input: UpdateEnvironment,
) -> Result<Environment, ApiError> {
    validate_type(&input.environment_type)?;
    let before_row = require(tx.conn(), name).await?;
    let before = view(tx.conn(), before_row.clone()).await?;
    let row = EnvironmentRow {
        environment_type: input.environment_type,
        sort_order: input.sort_order.unwrap_or(before_row.sort_order),
        ..before_row
    };
    environment_store::update(tx.conn(), &row).await?;
    let environment = view(tx.conn(), row).await?;
    if environment != before {
        record_update(tx, &environment, &before).await?;
    }
    Ok(environment)
}

/// Sets the sortOrder of every named environment (404 for an unknown one, nothing changed);
/// `environment-updated` for each that moved.
pub async fn set_sort_orders(
    tx: &mut WriteTx,
    orders: BTreeMap<String, i64>,
) -> Result<(), ApiError> {
    for (name, sort_order) in orders {
        let before_row = require(tx.conn(), &name).await?;
        if before_row.sort_order == sort_order {
            continue;
        }
        let before = view(tx.conn(), before_row.clone()).await?;
        let row = EnvironmentRow {
            sort_order,
            ..before_row
        };
        environment_store::update(tx.conn(), &row).await?;
        let environment = view(tx.conn(), row).await?;
        record_update(tx, &environment, &before).await?;
    }
    Ok(())
}

/// Turns an environment on or off globally; an event only on a real change.
pub async fn set_enabled(tx: &mut WriteTx, name: &str, enabled: bool) -> Result<(), ApiError> {
    let before_row = require(tx.conn(), name).await?;
    if before_row.enabled == enabled {
        return Ok(());
    }
    let before = view(tx.conn(), before_row.clone()).await?;
    let row = EnvironmentRow {
        enabled,
        ..before_row
    };
    environment_store::update(tx.conn(), &row).await?;
    let environment = view(tx.conn(), row).await?;
    record_update(tx, &environment, &before).await
}

async fn record_update(
    tx: &mut WriteTx,
    environment: &Environment,
    before: &Environment,
) -> Result<(), ApiError> {
    tx.record(NewEvent {
        event_type: EventType::EnvironmentUpdated.as_str(),
        environment: Some(environment.name.clone()),
        data: Some(payload(environment)),
        pre_data: Some(payload(before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// Deletes an environment with every flag's settings in it; protected environments stay.
pub async fn delete(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    let row = require(tx.conn(), name).await?;
    if row.protected {
        return Err(ApiError::validation(format!(
            "Environment {name} is protected and cannot be deleted"
        )));
    }
    let before = view(tx.conn(), row).await?;
    crate::store::change_requests::delete_of_environment(tx.conn(), name).await?;
    environment_store::delete(tx.conn(), name).await?;
    tx.record(NewEvent {
        event_type: EventType::EnvironmentDeleted.as_str(),
        environment: Some(name.to_owned()),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
