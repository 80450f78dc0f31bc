//! SQL of flag-level variants per environment (a JSON array per flag and environment).

use super::encoding::{json, json_text};
use super::StoreError;
use crate::model::variant::FlagVariant;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

/// The variants of one flag in one environment.
#[derive(Debug, Clone)]
pub struct FlagVariantsRow {
    pub feature_name: String,
    pub variants: Vec<FlagVariant>,
}

impl FromRow<'_, AnyRow> for FlagVariantsRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(FlagVariantsRow {
            feature_name: row.try_get("feature_name")?,
            variants: json(row, "variants")?,
        })
    }
}

/// The variants of a flag in an environment; `None` when they were never set.
pub async fn get(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Option<Vec<FlagVariant>>, StoreError> {
    let row: Option<FlagVariantsRow> = sqlx::query_as(
        "SELECT feature_name, variants FROM feature_environment_variants \
         WHERE feature_name = $1 AND environment = $2",
    )
    .bind(feature)
    .bind(environment)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|row| row.variants))
}

pub async fn set(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
    variants: &[FlagVariant],
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_environment_variants (feature_name, environment, variants) VALUES ($1, $2, $3) \
         ON CONFLICT (feature_name, environment) DO UPDATE SET variants = $3",
    )
    .bind(feature)
    .bind(environment)
    .bind(json_text(variants)?)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every flag with variants set in an environment.
pub async fn list_in_environment(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<Vec<FlagVariantsRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT feature_name, variants FROM feature_environment_variants WHERE environment = $1",
    )
    .bind(environment)
    .fetch_all(conn)
    .await?)
}
