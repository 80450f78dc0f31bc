//! What the admin UI sums up of flags beyond the search: the strategies each flag has in each environment
//! (an environment's rule in brief: "50% · 2 constraints"), who changed each flag last and when (its latest
//! event), and the change requests that wait to change it. Each is one query for all the flags of a page.

use super::search::features::pending_states;
use super::strategies::{self, Strategy};
use crate::store::search::features as search_store;
use crate::time::Timestamp;
use sqlx::AnyConnection;
use std::collections::HashMap;
use vexil_shared::ApiError;

/// A flag's latest change: who made it and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastChange {
    pub by: String,
    pub at: Timestamp,
}

/// The strategies and latest change of the flags of a page.
#[derive(Debug, Default)]
pub struct Summaries {
    /// flag → environment → its strategies in order.
    rules: HashMap<String, HashMap<String, Vec<Strategy>>>,
    last_changes: HashMap<String, LastChange>,
}

impl Summaries {
    /// The flag's strategies in `environment`, in order (none when it has none there).
    pub fn strategies(&self, flag: &str, environment: &str) -> &[Strategy] {
        self.rules
            .get(flag)
            .and_then(|environments| environments.get(environment))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The flag's latest change, when it has an event.
    pub fn last_change(&self, flag: &str) -> Option<&LastChange> {
        self.last_changes.get(flag)
    }
}

/// The strategies and latest change of these flags (two queries).
pub async fn of_flags(conn: &mut AnyConnection, names: &[String]) -> Result<Summaries, ApiError> {
    let mut rules: HashMap<String, HashMap<String, Vec<Strategy>>> = HashMap::new();
    for row in search_store::rules(conn, names).await? {
        rules
            .entry(row.feature_name.clone())
            .or_default()
            .entry(row.environment.clone())
            .or_default()
            .push(strategies::view(&row));
    }
    let last_changes = search_store::latest_events(conn, names)
        .await?
        .into_iter()
        .map(|row| {
            let change = LastChange {
                by: row.created_by,
                at: row.created_at,
            };
            (row.feature_name, change)
        })
        .collect();
    Ok(Summaries {
        rules,
        last_changes,
    })
}

/// The change requests waiting to change `flag` (Draft, In review or Approved), by environment, oldest first.
pub async fn pending_change_requests(
    conn: &mut AnyConnection,
    flag: &str,
) -> Result<HashMap<String, Vec<i64>>, ApiError> {
    let mut pending: HashMap<String, Vec<i64>> = HashMap::new();
    let names = [flag.to_owned()];
    for row in search_store::pending_changes(conn, &names, &pending_states()).await? {
        pending
            .entry(row.environment)
            .or_default()
            .push(row.change_request_id);
    }
    Ok(pending)
}
