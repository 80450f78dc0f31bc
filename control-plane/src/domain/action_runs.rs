//! Running action sets on signals (`crate::actions` drives it): which enabled sets a signal matches, and one
//! set's execution for one signal in a write begun as the set's service account.
//!
//! Filters: each `match.payload` entry is a constraint of the engine (`vexil_shared::engine`, the SDKs'
//! operators) over the value at its dotted path in the signal's JSON (`alerts.0.labels.severity`: numbers
//! index arrays; a string as it is, a number or boolean as its JSON text, anything else absent). The
//! constraints are evaluated by compiling them into a one-flag document: exactly what the engine does for
//! a context holding those values as properties.
//!
//! Once: [`execute`] runs inside a `WriteTx`, which holds the writers' lock (the revision row on Postgres,
//! the one writer connection on SQLite); it first looks for the execution of this signal and set and does
//! nothing when it is there, and records it in the same transaction as the actions' changes. A run that
//! changed nothing (its write rolls back, having no event) is recorded by [`record_unchanged`], at most once
//! per signal and set (a unique key). Each action runs as the service account: `access::authorize` decides
//! with the account's grants, its name is on the events; the first failure stops the set (the actions after
//! it are `not started`), and a failed action's partial writes are undone (a savepoint). An action on a flag
//! in an environment with change requests on is refused (the domain's change-request gate) and logged: an
//! action set never bypasses change requests. Pausing a release plan changes nothing served (it only stops
//! the automatic progression), so `PAUSE_RELEASE_PLAN` runs in such an environment too.

use super::access::{self, Caller, Scope, Who};
use super::action_sets::view;
use super::features;
use super::limits::Limits;
use super::permissions::Permission;
use super::release_plans::progressions;
use super::signal_endpoints::signal_view;
use super::strategies;
use crate::model::action_set::{Action, ActionKind, Filter};
use crate::store::action_sets::{self as store, ActionSetRow, ExecutionRow};
use crate::store::signals::{self as signal_store, SignalRow};
use crate::store::users::{self as user_store, Account};
use crate::store::{Actor, WriteTx};
use serde_json::{json, Value};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use uuid::Uuid;
use vexil_shared::model::Constraint;
use vexil_shared::{ApiError, Context, ErrorKind, FeaturesDocument, Snapshot};

/// Signals read at once by the processor.
const PENDING_BATCH: i64 = 32;

/// The processed signals kept per endpoint, and the executions kept per set: the latest.
const KEPT: i64 = 1000;

/// The signals not processed yet, in arrival order (a batch).
pub async fn pending(conn: &mut AnyConnection) -> Result<Vec<SignalRow>, ApiError> {
    Ok(signal_store::unprocessed(conn, PENDING_BATCH).await?)
}

/// Marks a signal processed once every set it matched has run, and forgets the endpoint's processed
/// signals and the sets' executions beyond the latest [`KEPT`].
pub async fn finish(
    conn: &mut AnyConnection,
    signal: &SignalRow,
    sets: &[ActionSetRow],
) -> Result<(), ApiError> {
    signal_store::mark_processed(conn, signal.id).await?;
    signal_store::prune(conn, signal.source_id, KEPT).await?;
    for set in sets {
        store::prune_executions(conn, set.id, KEPT).await?;
    }
    Ok(())
}

/// The value at `path` in `payload` as a constraint reads it.
fn value_at(payload: &Value, path: &str) -> Option<String> {
    let mut value = payload;
    for segment in path.split('.') {
        value = match value {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// Whether every filter holds for `payload`, as the engine evaluates constraints.
pub fn filters_hold(filters: &BTreeMap<String, Filter>, payload: &Value) -> bool {
    let mut context = Context::default();
    let mut constraints = Vec::with_capacity(filters.len());
    for (index, (path, filter)) in filters.iter().enumerate() {
        let field = format!("signal{index}");
        if let Some(value) = value_at(payload, path) {
            context.properties.insert(field.clone(), value);
        }
        constraints.push(Constraint {
            context_name: field,
            operator: filter.operator.clone(),
            case_insensitive: filter.case_insensitive,
            inverted: filter.inverted,
            values: filter.values.clone(),
            value: filter
                .value
                .clone()
                .or_else(|| filter.values.first().cloned()),
        });
    }
    let document = json!({
        "version": 2,
        "features": [{
            "name": "signal",
            "enabled": true,
            "strategies": [{"name": "default", "parameters": {}, "constraints": constraints}],
        }],
    });
    serde_json::from_value::<FeaturesDocument>(document)
        .is_ok_and(|document| Snapshot::compile(&document).is_enabled("signal", &context))
}

/// The enabled sets listening to the signal's endpoint whose filters hold, by id.
pub async fn matching_sets(
    conn: &mut AnyConnection,
    signal: &SignalRow,
) -> Result<Vec<ActionSetRow>, ApiError> {
    let sets = store::enabled_of_source(conn, &signal.source, signal.source_id).await?;
    Ok(sets
        .into_iter()
        .filter(|set| filters_hold(&set.payload, &signal.payload))
        .collect())
}

/// The set's service account as a caller (its name and grants now), or none when it was deleted.
pub async fn runner(
    conn: &mut AnyConnection,
    set: &ActionSetRow,
) -> Result<Option<Caller>, ApiError> {
    match user_store::get_of(conn, set.actor_id, Account::Service).await? {
        Some(row) => Ok(Some(access::service_account_caller(conn, row).await?)),
        None => Ok(None),
    }
}

/// The actor of a set's write: its service account, or the system when the account is gone (the run then
/// fails without writing).
pub fn actor_of(runner: Option<&Caller>) -> Actor {
    runner.map_or_else(Actor::system, |caller| caller.actor.clone())
}

/// What [`execute`] came to.
#[derive(Debug)]
pub enum Execution {
    /// Recorded before (another replica, or before a restart): drop the write.
    AlreadyDone,
    /// Ran and recorded in the write: commit it; if it committed nothing (no change), record the run with
    /// [`record_unchanged`].
    Ran(Box<ExecutionRow>),
}

/// Runs `set` for `signal` in `tx` (begun as [`actor_of`] the runner), unless its execution is recorded.
/// A store failure is an error: nothing is recorded and the signal is tried again.
pub async fn execute(
    tx: &mut WriteTx,
    signal: &SignalRow,
    set: &ActionSetRow,
    runner: Option<&Caller>,
    limits: &Limits,
) -> Result<Execution, ApiError> {
    if store::executed(tx.conn(), signal.id, set.id).await? {
        return Ok(Execution::AlreadyDone);
    }
    let mut outcomes = Vec::with_capacity(set.actions.len());
    let mut failure: Option<String> = None;
    for action in &set.actions {
        if failure.is_some() {
            outcomes.push(("not started", None));
            continue;
        }
        let result = match runner {
            None => Err(ApiError::new(
                ErrorKind::NoAccess,
                format!("Service account {} no longer exists", set.actor_id),
            )),
            Some(caller) => {
                let mark = tx.mark().await?;
                match run(tx, caller, action, limits).await {
                    Ok(()) => tx.keep(mark).await.map_err(ApiError::from),
                    Err(error) => {
                        tx.back_to(mark).await?;
                        Err(error)
                    }
                }
            }
        };
        match result {
            Ok(()) => outcomes.push(("success", None)),
            Err(error) if matches!(error.kind, ErrorKind::Internal | ErrorKind::Unavailable) => {
                return Err(error)
            }
            Err(error) => {
                failure = Some(format!("{}: {}", action.action, error.message));
                outcomes.push(("failed", Some(error.message)));
            }
        }
    }
    let mut shown = serde_json::to_value(view(set)).unwrap_or(Value::Null);
    if let Some(actions) = shown.get_mut("actions").and_then(Value::as_array_mut) {
        for (action, (state, details)) in actions.iter_mut().zip(outcomes) {
            action["state"] = state.into();
            action["details"] = details.map_or(Value::Null, Value::from);
        }
    }
    let row = ExecutionRow {
        id: 0,
        action_set_id: set.id,
        signal_id: signal.id,
        state: (if failure.is_some() {
            "failed"
        } else {
            "success"
        })
        .to_owned(),
        details: failure,
        signal: serde_json::to_value(signal_view(signal)).unwrap_or(Value::Null),
        action_set: shown,
        created_at: tx.now(),
    };
    store::record_execution(tx.conn(), &row).await?;
    Ok(Execution::Ran(Box::new(row)))
}

/// Records a run whose write changed nothing (so it rolled back), unless one is recorded already.
pub async fn record_unchanged(
    conn: &mut AnyConnection,
    row: &ExecutionRow,
) -> Result<(), ApiError> {
    store::record_execution(conn, row).await?;
    Ok(())
}

/// One action as `caller`: the permission the same admin route needs, where it acts, then the same domain
/// function (with its change-request gate).
async fn run(
    tx: &mut WriteTx,
    caller: &Caller,
    action: &Action,
    limits: &Limits,
) -> Result<(), ApiError> {
    let kind = action
        .kind()
        .ok_or_else(|| ApiError::validation(format!("{} is not an action", action.action)))?;
    let (project, feature, environment) = (
        action.param("project"),
        action.param("featureName"),
        action.param("environment"),
    );
    let who = Who {
        credential: caller.credential,
        grants: &caller.grants,
    };
    let scope = Scope::environment(project, environment);
    match kind {
        ActionKind::ToggleFeatureOn | ActionKind::ToggleFeatureOff => {
            who.require(Permission::UpdateFeatureEnvironment, scope)?;
            let on = kind == ActionKind::ToggleFeatureOn;
            features::set_enabled(tx, project, feature, environment, on, false).await
        }
        ActionKind::DisableFeatureStrategy | ActionKind::EnableFeatureStrategy => {
            who.require(Permission::UpdateFeatureStrategy, scope)?;
            let id = Uuid::parse_str(action.param("strategyId")).map_err(|_| {
                ApiError::validation(format!(
                    "strategyId {:?} is not a strategy id",
                    action.param("strategyId")
                ))
            })?;
            let disabled = kind == ActionKind::DisableFeatureStrategy;
            let operations: json_patch::Patch = serde_json::from_value(json!([
                {"op": "replace", "path": "/disabled", "value": disabled}
            ]))
            .map_err(|error| ApiError::validation(error.to_string()))?;
            strategies::patch(tx, project, feature, environment, id, operations, limits)
                .await
                .map(|_| ())
        }
        ActionKind::PauseReleasePlan => {
            who.require(Permission::UpdateFeatureStrategy, scope)?;
            progressions::pause_in(tx, project, feature, environment, "paused by an action")
                .await
                .map(|_| ())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(entries: Value) -> BTreeMap<String, Filter> {
        serde_json::from_value(entries).unwrap()
    }

    #[test]
    fn filters_read_dotted_paths_with_the_engines_operators() {
        let payload = json!({
            "status": "firing",
            "alerts": [{"labels": {"severity": "Critical"}, "value": 97.5, "page": true}],
            "version": "1.4.2",
        });
        let holds = |entries: Value| filters_hold(&filters(entries), &payload);
        assert!(holds(
            json!({"status": {"operator": "IN", "values": ["firing"]}})
        ));
        assert!(!holds(
            json!({"status": {"operator": "IN", "values": ["resolved"]}})
        ));
        assert!(holds(
            json!({"status": {"operator": "IN", "values": ["resolved"], "inverted": true}})
        ));
        assert!(holds(json!({"alerts.0.labels.severity":
            {"operator": "STR_CONTAINS", "values": ["crit"], "caseInsensitive": true}})));
        assert!(!holds(
            json!({"alerts.0.labels.severity": {"operator": "STR_CONTAINS", "values": ["crit"]}})
        ));
        assert!(holds(
            json!({"alerts.0.value": {"operator": "NUM_GT", "value": "90"}})
        ));
        assert!(holds(
            json!({"alerts.0.value": {"operator": "NUM_GT", "values": ["90"]}})
        ));
        assert!(holds(
            json!({"alerts.0.page": {"operator": "IN", "values": ["true"]}})
        ));
        assert!(holds(
            json!({"version": {"operator": "SEMVER_GT", "value": "1.4.0"}})
        ));
        // Absent (or not a scalar): only NOT_IN holds.
        assert!(!holds(
            json!({"alerts.1.status": {"operator": "IN", "values": ["firing"]}})
        ));
        assert!(holds(
            json!({"alerts.x": {"operator": "NOT_IN", "values": ["firing"]}})
        ));
        assert!(!holds(
            json!({"alerts": {"operator": "IN", "values": ["[]"]}})
        ));
        // All must hold; none is no filter at all.
        assert!(!holds(json!({
            "status": {"operator": "IN", "values": ["firing"]},
            "version": {"operator": "SEMVER_LT", "value": "1.0.0"},
        })));
        assert!(holds(json!({})));
    }
}
