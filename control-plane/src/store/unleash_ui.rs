//! SQL of what Unleash's own web UI records per user (`user_feedback`, `user_splash`).

use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// One user's answer to one feedback questionnaire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackRow {
    pub given: Option<Timestamp>,
    pub never_show: bool,
}

/// Writes the user's feedback row for `feedback_id` (inserted or replaced).
pub async fn put_feedback(
    conn: &mut AnyConnection,
    user_id: i64,
    feedback_id: &str,
    row: &FeedbackRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO user_feedback (user_id, feedback_id, given, never_show) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (user_id, feedback_id) DO UPDATE SET given = $3, never_show = $4",
    )
    .bind(user_id)
    .bind(feedback_id)
    .bind(row.given)
    .bind(i64::from(row.never_show))
    .execute(conn)
    .await?;
    Ok(())
}

/// The user's feedback row for `feedback_id`, if any.
pub async fn feedback(
    conn: &mut AnyConnection,
    user_id: i64,
    feedback_id: &str,
) -> Result<Option<FeedbackRow>, StoreError> {
    let row: Option<AnyRow> = sqlx::query(
        "SELECT given, never_show FROM user_feedback WHERE user_id = $1 AND feedback_id = $2",
    )
    .bind(user_id)
    .bind(feedback_id)
    .fetch_optional(conn)
    .await?;
    let row = row
        .map(|row| -> sqlx::Result<FeedbackRow> {
            Ok(FeedbackRow {
                given: row.try_get("given")?,
                never_show: row.try_get::<i64, _>("never_show")? != 0,
            })
        })
        .transpose()?;
    Ok(row)
}

/// Notes that the user saw splash screen `splash_id` (again: nothing changes).
pub async fn mark_splash_seen(
    conn: &mut AnyConnection,
    user_id: i64,
    splash_id: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO user_splash (user_id, splash_id) VALUES ($1, $2) \
         ON CONFLICT (user_id, splash_id) DO NOTHING",
    )
    .bind(user_id)
    .bind(splash_id)
    .execute(conn)
    .await?;
    Ok(())
}
