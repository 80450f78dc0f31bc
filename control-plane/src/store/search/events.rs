//! SQL of `GET /api/admin/search/events`: the page of matching events, newest first, and their count.

use super::{map_match, Conditions, Match, Value};
use crate::store::events::{EventRow, COLUMNS};
use crate::store::{Backend, StoreError};
use crate::time::Timestamp;
use sqlx::AnyConnection;

/// Which events to find and which page of them.
#[derive(Debug, Clone, Default)]
pub struct EventSearch {
    /// Lower case; an event matches when its data or preData (as JSON text) contains it.
    pub text: Option<String>,
    pub ids: Option<Match<i64>>,
    pub feature: Option<Match<String>>,
    pub project: Option<Match<String>>,
    pub event_type: Option<Match<String>>,
    pub environment: Option<Match<String>>,
    pub created_by_user_id: Option<Match<i64>>,
    /// Created at or after this.
    pub from: Option<Timestamp>,
    /// Created before this.
    pub before: Option<Timestamp>,
    pub offset: i64,
    pub limit: i64,
}

impl EventSearch {
    /// On SQLite, a text of three characters or more is looked up in the `events_text` trigram index
    /// (migrations-sqlite); on Postgres, `LIKE` uses the trigram indexes of migrations-postgres.
    fn conditions(&self, sqlite: bool) -> Conditions {
        let mut conditions = Conditions::default();
        if let Some(text) = &self.text {
            if sqlite && text.chars().count() >= 3 {
                // An FTS5 string (a phrase: the text as one substring), its quotes doubled.
                let phrase = format!("\"{}\"", text.replace('"', "\"\""));
                let phrase = conditions.bind(Value::Text(phrase));
                conditions.push(format!(
                    "id IN (SELECT rowid FROM events_text WHERE events_text MATCH {phrase})"
                ));
            } else {
                conditions.containing(&["data", "pre_data"], std::slice::from_ref(text));
            }
        }
        if let Some(ids) = &self.ids {
            conditions.matching("id", &map_match(ids, |id| Value::Integer(*id)));
        }
        for (column, filter) in [
            ("feature_name", &self.feature),
            ("project", &self.project),
            ("type", &self.event_type),
            ("environment", &self.environment),
        ] {
            if let Some(filter) = filter {
                conditions.matching_text(column, filter);
            }
        }
        if let Some(users) = &self.created_by_user_id {
            conditions.matching(
                "created_by_user_id",
                &map_match(users, |id| Value::Integer(*id)),
            );
        }
        if let Some(from) = self.from {
            let from = conditions.bind(Value::Time(from));
            conditions.push(format!("created_at >= {from}"));
        }
        if let Some(before) = self.before {
            let before = conditions.bind(Value::Time(before));
            conditions.push(format!("created_at < {before}"));
        }
        conditions
    }
}

/// The page of matching events, newest first, and how many match in all.
pub async fn search(
    conn: &mut AnyConnection,
    search: &EventSearch,
) -> Result<(Vec<EventRow>, i64), StoreError> {
    let conditions = search.conditions(Backend::of(conn) == Backend::Sqlite);
    let clause = conditions.clause();
    let sql = format!(
        "SELECT {COLUMNS} FROM events {clause} ORDER BY id DESC LIMIT {} OFFSET {}",
        search.limit, search.offset
    );
    let rows = conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(&mut *conn)
        .await?;
    let sql = format!("SELECT COUNT(*) FROM events {clause}");
    let total = conditions
        .bind_scalars(sqlx::query_scalar(&sql))
        .fetch_one(conn)
        .await?;
    Ok((rows, total))
}
