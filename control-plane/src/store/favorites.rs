//! Each user's favourite flags and projects (`favorite_features`, `favorite_projects`).

use super::StoreError;
use crate::time::Timestamp;
use sqlx::AnyConnection;
use std::collections::BTreeSet;

/// What a favourite is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Favorite {
    Feature,
    Project,
}

impl Favorite {
    fn table_and_column(self) -> (&'static str, &'static str) {
        match self {
            Favorite::Feature => ("favorite_features", "feature_name"),
            Favorite::Project => ("favorite_projects", "project_id"),
        }
    }
}

/// Marks `name` a favourite of the user; whether it was not one before.
pub async fn add(
    conn: &mut AnyConnection,
    kind: Favorite,
    user_id: i64,
    name: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let (table, column) = kind.table_and_column();
    let sql = format!(
        "INSERT INTO {table} (user_id, {column}, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, {column}) DO NOTHING"
    );
    let done = sqlx::query(&sql)
        .bind(user_id)
        .bind(name)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Takes `name` off the user's favourites; whether it was one.
pub async fn remove(
    conn: &mut AnyConnection,
    kind: Favorite,
    user_id: i64,
    name: &str,
) -> Result<bool, StoreError> {
    let (table, column) = kind.table_and_column();
    let sql = format!("DELETE FROM {table} WHERE user_id = $1 AND {column} = $2");
    let done = sqlx::query(&sql)
        .bind(user_id)
        .bind(name)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Every flag or project the user marked a favourite.
pub async fn of_user(
    conn: &mut AnyConnection,
    kind: Favorite,
    user_id: i64,
) -> Result<BTreeSet<String>, StoreError> {
    let (table, column) = kind.table_and_column();
    let sql = format!("SELECT {column} FROM {table} WHERE user_id = $1");
    let names: Vec<String> = sqlx::query_scalar(&sql)
        .bind(user_id)
        .fetch_all(conn)
        .await?;
    Ok(names.into_iter().collect())
}
