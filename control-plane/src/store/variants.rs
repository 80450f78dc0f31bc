//! SQL of flag-level variants per environment (a JSON array per flag and environment).

use super::StoreError;
use sqlx::AnyConnection;

pub async fn get(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT variants FROM feature_environment_variants WHERE feature_name = $1 AND environment = $2",
    )
    .bind(feature)
    .bind(environment)
    .fetch_optional(conn)
    .await?)
}

pub async fn set(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
    variants: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_environment_variants (feature_name, environment, variants) VALUES ($1, $2, $3) \
         ON CONFLICT (feature_name, environment) DO UPDATE SET variants = $3",
    )
    .bind(feature)
    .bind(environment)
    .bind(variants)
    .execute(conn)
    .await?;
    Ok(())
}

/// `(flag, variants JSON)` of every flag with variants in an environment.
pub async fn list_in_environment(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT feature_name, variants FROM feature_environment_variants WHERE environment = $1",
    )
    .bind(environment)
    .fetch_all(conn)
    .await?)
}
