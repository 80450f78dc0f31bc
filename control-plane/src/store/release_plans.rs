//! SQL of release templates and plans: `release_plan_definitions` (both, told apart by their
//! [`Discriminator`]) and their `release_plan_milestones`, each milestone's strategies a JSON column.

use super::encoding::{json, json_text};
use super::{Backend, StoreError};
use crate::model::release_plan::{Discriminator, MilestoneStrategy};
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

/// A template or a plan; the plan's fields are `None` for a template.
#[derive(Debug, Clone, PartialEq)]
pub struct DefinitionRow {
    pub id: String,
    pub discriminator: Discriminator,
    pub name: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
    pub archived_at: Option<Timestamp>,
    pub feature_name: Option<String>,
    pub environment: Option<String>,
    pub template_id: Option<String>,
    pub active_milestone_id: Option<String>,
    /// When the active milestone's transition condition starts the next one.
    pub progression_due_at: Option<Timestamp>,
}

impl FromRow<'_, AnyRow> for DefinitionRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        let discriminator: String = row.try_get("discriminator")?;
        Ok(DefinitionRow {
            id: row.try_get("id")?,
            discriminator: match discriminator.as_str() {
                "template" => Discriminator::Template,
                "plan" => Discriminator::Plan,
                other => {
                    return Err(sqlx::Error::ColumnDecode {
                        index: "discriminator".to_owned(),
                        source: format!("unknown discriminator {other:?}").into(),
                    })
                }
            },
            name: row.try_get("name")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
            created_at: row.try_get("created_at")?,
            archived_at: row.try_get("archived_at")?,
            feature_name: row.try_get("feature_name")?,
            environment: row.try_get("environment")?,
            template_id: row.try_get("template_id")?,
            active_milestone_id: row.try_get("active_milestone_id")?,
            progression_due_at: row.try_get("progression_due_at")?,
        })
    }
}

const DEFINITION_COLUMNS: &str =
    "id, discriminator, name, created_by_user_id, created_at, archived_at, \
                                  feature_name, environment, template_id, active_milestone_id, \
                                  progression_due_at";

#[derive(Debug, Clone, PartialEq)]
pub struct MilestoneRow {
    pub id: String,
    pub definition_id: String,
    pub name: String,
    pub sort_order: i64,
    /// The transition condition to the next milestone.
    pub interval_minutes: Option<i64>,
    pub started_at: Option<Timestamp>,
    pub progression_executed_at: Option<Timestamp>,
    pub paused_at: Option<Timestamp>,
    pub strategies: Vec<MilestoneStrategy>,
}

impl FromRow<'_, AnyRow> for MilestoneRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(MilestoneRow {
            id: row.try_get("id")?,
            definition_id: row.try_get("definition_id")?,
            name: row.try_get("name")?,
            sort_order: row.try_get("sort_order")?,
            interval_minutes: row.try_get("interval_minutes")?,
            started_at: row.try_get("started_at")?,
            progression_executed_at: row.try_get("progression_executed_at")?,
            paused_at: row.try_get("paused_at")?,
            strategies: json(row, "strategies")?,
        })
    }
}

const MILESTONE_COLUMNS: &str =
    "id, definition_id, name, sort_order, interval_minutes, started_at, \
                                 progression_executed_at, paused_at, strategies";

pub async fn insert_definition(
    conn: &mut AnyConnection,
    row: &DefinitionRow,
) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO release_plan_definitions ({DEFINITION_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    ))
    .bind(&row.id)
    .bind(row.discriminator.as_str())
    .bind(&row.name)
    .bind(row.created_by_user_id)
    .bind(row.created_at)
    .bind(row.archived_at)
    .bind(&row.feature_name)
    .bind(&row.environment)
    .bind(&row.template_id)
    .bind(&row.active_milestone_id)
    .bind(row.progression_due_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes what changes of a definition: its name, archival, active milestone and due progression.
pub async fn update_definition(
    conn: &mut AnyConnection,
    row: &DefinitionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE release_plan_definitions SET name = $2, archived_at = $3, active_milestone_id = $4, \
         progression_due_at = $5 WHERE id = $1",
    )
    .bind(&row.id)
    .bind(&row.name)
    .bind(row.archived_at)
    .bind(&row.active_milestone_id)
    .bind(row.progression_due_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get_definition(
    conn: &mut AnyConnection,
    id: &str,
    discriminator: Discriminator,
) -> Result<Option<DefinitionRow>, StoreError> {
    let sql = format!(
        "SELECT {DEFINITION_COLUMNS} FROM release_plan_definitions WHERE id = $1 AND discriminator = $2"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id)
        .bind(discriminator.as_str())
        .fetch_optional(conn)
        .await?)
}

/// The templates not archived, by name.
pub async fn templates(conn: &mut AnyConnection) -> Result<Vec<DefinitionRow>, StoreError> {
    let sql = format!(
        "SELECT {DEFINITION_COLUMNS} FROM release_plan_definitions \
         WHERE discriminator = $1 AND archived_at IS NULL ORDER BY name, id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(Discriminator::Template.as_str())
        .fetch_all(conn)
        .await?)
}

/// The id of the template not archived named `name`, if any.
pub async fn template_named(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM release_plan_definitions \
         WHERE discriminator = $1 AND archived_at IS NULL AND name = $2",
    )
    .bind(Discriminator::Template.as_str())
    .bind(name)
    .fetch_optional(conn)
    .await?)
}

/// The plans of a flag in `environment`, or in every environment (`None`), oldest first.
pub async fn plans_of(
    conn: &mut AnyConnection,
    feature: &str,
    environment: Option<&str>,
) -> Result<Vec<DefinitionRow>, StoreError> {
    let in_environment = if environment.is_some() {
        " AND environment = $3"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {DEFINITION_COLUMNS} FROM release_plan_definitions \
         WHERE discriminator = $1 AND feature_name = $2{in_environment} ORDER BY created_at, id"
    );
    let mut query = sqlx::query_as(&sql)
        .bind(Discriminator::Plan.as_str())
        .bind(feature);
    if let Some(environment) = environment {
        query = query.bind(environment);
    }
    Ok(query.fetch_all(conn).await?)
}

/// Deletes a definition and (cascading) its milestones.
pub async fn delete_definition(conn: &mut AnyConnection, id: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM release_plan_definitions WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A definition's milestones in their order.
pub async fn milestones(
    conn: &mut AnyConnection,
    definition_id: &str,
) -> Result<Vec<MilestoneRow>, StoreError> {
    let sql = format!(
        "SELECT {MILESTONE_COLUMNS} FROM release_plan_milestones WHERE definition_id = $1 \
         ORDER BY sort_order, id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(definition_id)
        .fetch_all(conn)
        .await?)
}

/// Replaces every milestone of a definition with `rows`.
pub async fn replace_milestones(
    conn: &mut AnyConnection,
    definition_id: &str,
    rows: &[MilestoneRow],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM release_plan_milestones WHERE definition_id = $1")
        .bind(definition_id)
        .execute(&mut *conn)
        .await?;
    for row in rows {
        sqlx::query(&format!(
            "INSERT INTO release_plan_milestones ({MILESTONE_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&row.id)
        .bind(definition_id)
        .bind(&row.name)
        .bind(row.sort_order)
        .bind(row.interval_minutes)
        .bind(row.started_at)
        .bind(row.progression_executed_at)
        .bind(row.paused_at)
        .bind(json_text(&row.strategies)?)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Writes a milestone's progress: its transition condition, start, progression and pause.
pub async fn update_milestone(
    conn: &mut AnyConnection,
    row: &MilestoneRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE release_plan_milestones SET interval_minutes = $2, started_at = $3, \
         progression_executed_at = $4, paused_at = $5 WHERE id = $1",
    )
    .bind(&row.id)
    .bind(row.interval_minutes)
    .bind(row.started_at)
    .bind(row.progression_executed_at)
    .bind(row.paused_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The earliest time a plan's progression falls due.
pub async fn next_due(conn: &mut AnyConnection) -> Result<Option<Timestamp>, StoreError> {
    let first: Option<String> = sqlx::query_scalar(
        "SELECT MIN(progression_due_at) FROM release_plan_definitions WHERE discriminator = $1",
    )
    .bind(Discriminator::Plan.as_str())
    .fetch_one(conn)
    .await?;
    first
        .map(|text| Timestamp::parse(&text))
        .transpose()
        .map_err(|error| {
            StoreError(sqlx::Error::ColumnDecode {
                index: "progression_due_at".to_owned(),
                source: Box::new(error),
            })
        })
}

/// The ids of the plans whose progression is due at `now`, the earliest first, at most `limit`.
pub async fn due(
    conn: &mut AnyConnection,
    now: Timestamp,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM release_plan_definitions WHERE discriminator = $1 \
         AND progression_due_at <= $2 ORDER BY progression_due_at, id LIMIT $3",
    )
    .bind(Discriminator::Plan.as_str())
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// Within a configuration write: plan `id` if its progression is still due at `now`, locked for this
/// transaction (Postgres: `FOR UPDATE SKIP LOCKED`; SQLite has one writer). With the progression written in
/// the same transaction, this is what makes it happen once: a replica that comes second reads it moved on.
pub async fn claim_due(
    conn: &mut AnyConnection,
    id: &str,
    now: Timestamp,
) -> Result<Option<DefinitionRow>, StoreError> {
    let lock = match Backend::of(conn) {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {DEFINITION_COLUMNS} FROM release_plan_definitions WHERE id = $1 AND discriminator = $2 \
         AND progression_due_at <= $3{lock}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id)
        .bind(Discriminator::Plan.as_str())
        .bind(now)
        .fetch_optional(conn)
        .await?)
}
