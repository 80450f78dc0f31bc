//! [`SharedEvents`]: the change streams' events of the current revision, serialized once per scope
//! (held by `ServingState`, used by `change_stream`).

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

/// The events of the current revision, serialized once for all the streams that need the same one: the
/// streams of one scope wake together at a revision and would each serialize an identical event. Keyed by
/// the revision the stream had and its exact scope (environment, projects, filter; no hash, so two scopes
/// never share an entry); emptied when the revision moves on. Only streams lock it, each for one lookup (the
/// first of a key serializes while holding it, so the others wait for that one result rather than redo it).
#[derive(Debug, Default)]
pub struct SharedEvents {
    current: Mutex<(u64, EventsByScope)>,
}

/// Serialized event data by (revision the stream had, exact scope); `None`: nothing to send.
type EventsByScope = FxHashMap<(u64, String), Option<Arc<str>>>;

impl SharedEvents {
    /// The event data for a stream at `since` with scope `key` at `revision`: `make`'s, made once; `None`
    /// when there is nothing to send.
    pub fn get_or_make(
        &self,
        revision: u64,
        since: u64,
        key: &str,
        make: impl FnOnce() -> Option<String>,
    ) -> Option<Arc<str>> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.0 != revision {
            *current = (revision, FxHashMap::default());
        }
        current
            .1
            .entry((since, key.to_owned()))
            .or_insert_with(|| make().map(Arc::from))
            .clone()
    }
}
