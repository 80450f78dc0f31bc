//! The change feed: which flags and segments each revision touched, kept for the last [`KEPT_REVISIONS`]
//! advances, so that a streaming or delta-polling SDK that last saw revision `r` receives only what changed
//! since `r` (its current state, from the snapshot), and a hydration when `r` is no longer kept.
//!
//! A [`ChangeLog`] is immutable and carried by the [`ServingSnapshot`](crate::ServingSnapshot) it describes,
//! so a reader always sees a log and a snapshot of the same revision without locking; `ServingState::advance`
//! builds the next one ([`ChangeLog::followed_by`]) from the delta it applies, or from the difference of the
//! two snapshots when it loads a whole one (`snapshot::difference`). It knows nothing of snapshots.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// How many advances a log keeps. A client further behind receives a hydration.
pub const KEPT_REVISIONS: usize = 256;

/// What one advance (from `from` to `to`) touched, per environment.
#[derive(Debug, Default)]
pub struct RevisionChange {
    pub from: u64,
    pub to: u64,
    pub environments: FxHashMap<String, EnvironmentChange>,
}

/// The flags (with the project each was in before) and segments one advance touched in one environment.
#[derive(Debug, Default)]
pub struct EnvironmentChange {
    pub features: Vec<(Arc<str>, Option<String>)>,
    pub segments: Vec<i64>,
}

/// What changed in one environment since a revision: flag names with every project they were in before
/// (a removal is sent to a client that could see the flag), and segment ids.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Touched {
    pub features: BTreeMap<Arc<str>, BTreeSet<String>>,
    pub segments: BTreeSet<i64>,
}

impl Touched {
    pub fn is_empty(&self) -> bool {
        self.features.is_empty() && self.segments.is_empty()
    }
}

/// The changes of the last advances, oldest first, contiguous: the first starts at `since`.
#[derive(Debug, Default)]
pub struct ChangeLog {
    since: u64,
    entries: VecDeque<Arc<RevisionChange>>,
}

impl ChangeLog {
    /// An empty log of a snapshot at `revision`: only that revision is known.
    pub fn starting_at(revision: u64) -> ChangeLog {
        ChangeLog {
            since: revision,
            entries: VecDeque::new(),
        }
    }

    /// The revision the log reaches (the snapshot's).
    pub fn end(&self) -> u64 {
        self.entries.back().map_or(self.since, |last| last.to)
    }

    /// The oldest revision a client may have seen and still receive only the changes.
    pub fn since(&self) -> u64 {
        self.since
    }

    /// This log with `change` appended (the oldest entry dropped past [`KEPT_REVISIONS`]); a change that
    /// does not start where this log ends starts a new log.
    pub fn followed_by(&self, change: RevisionChange) -> ChangeLog {
        if change.from != self.end() || change.to < change.from {
            return ChangeLog {
                since: change.from,
                entries: VecDeque::from([Arc::new(change)]),
            };
        }
        let mut entries = self.entries.clone();
        entries.push_back(Arc::new(change));
        let mut since = self.since;
        while entries.len() > KEPT_REVISIONS {
            if let Some(dropped) = entries.pop_front() {
                since = dropped.to;
            }
        }
        ChangeLog { since, entries }
    }

    /// What changed in `environment` since `revision`; `None` when the log cannot tell (a revision older
    /// than it keeps, or newer than it reaches): the client needs a hydration. A revision inside one
    /// advance's span counts that whole advance (sending a flag's current state again is harmless).
    pub fn touched_since(&self, revision: u64, environment: &str) -> Option<Touched> {
        if revision < self.since || revision > self.end() {
            return None;
        }
        let mut touched = Touched::default();
        for entry in self.entries.iter().filter(|entry| entry.to > revision) {
            let Some(change) = entry.environments.get(environment) else {
                continue;
            };
            for (name, project) in &change.features {
                let projects = touched.features.entry(name.clone()).or_default();
                projects.extend(project.iter().cloned());
            }
            touched.segments.extend(change.segments.iter().copied());
        }
        Some(touched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(from: u64, to: u64, environment: &str, flag: &str) -> RevisionChange {
        let mut environments = FxHashMap::default();
        environments.insert(
            environment.to_owned(),
            EnvironmentChange {
                features: vec![(flag.into(), Some("default".to_owned()))],
                segments: vec![],
            },
        );
        RevisionChange {
            from,
            to,
            environments,
        }
    }

    fn names(touched: &Touched) -> Vec<&str> {
        touched.features.keys().map(|name| &**name).collect()
    }

    #[test]
    fn a_log_answers_what_changed_since_a_kept_revision() {
        let log = ChangeLog::starting_at(3)
            .followed_by(change(3, 4, "development", "a"))
            .followed_by(change(4, 7, "development", "b"))
            .followed_by(change(7, 8, "production", "c"));
        assert_eq!(log.end(), 8);
        assert_eq!(
            names(&log.touched_since(3, "development").unwrap()),
            ["a", "b"]
        );
        assert_eq!(names(&log.touched_since(4, "development").unwrap()), ["b"]);
        assert_eq!(
            names(&log.touched_since(5, "development").unwrap()),
            ["b"],
            "inside an advance: the whole advance"
        );
        assert!(log.touched_since(8, "development").unwrap().is_empty());
        assert!(
            log.touched_since(2, "development").is_none(),
            "older than kept"
        );
        assert!(
            log.touched_since(9, "development").is_none(),
            "newer than known"
        );
    }

    #[test]
    fn a_log_keeps_a_bounded_number_of_advances_and_restarts_on_a_gap() {
        let mut log = ChangeLog::starting_at(0);
        for revision in 0..(KEPT_REVISIONS as u64 + 10) {
            log = log.followed_by(change(revision, revision + 1, "development", "a"));
        }
        assert_eq!(log.since(), 10);
        assert!(log.touched_since(9, "development").is_none());
        assert!(log.touched_since(10, "development").is_some());
        let restarted = log.followed_by(change(500, 501, "development", "b"));
        assert_eq!(restarted.since(), 500);
        assert!(restarted.touched_since(300, "development").is_none());
    }
}
