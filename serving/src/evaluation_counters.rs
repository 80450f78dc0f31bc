//! [`EvaluationCounters`]: the evaluations a server answered per flag and environment, counted without locks
//! or allocation on the request path and harvested into the edge's usage batches.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use vexil_shared::{Projects, Snapshot};

/// How many threads get a shard of their own: about one per core (the runtime's workers).
fn exclusive_shards() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(4, |n| n.get())
            .clamp(1, 16)
    })
}

/// This thread's number, assigned in order on first use and never reused.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    NUMBER.with(|cell| {
        if cell.get() == usize::MAX {
            cell.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        cell.get()
    })
}

/// One environment's evaluations per flag, without locks or allocation. Per shard: `enabled[flag]`,
/// `single[flag]` (one-flag evaluations), `requests[project]` (all-flag evaluations of project-scoped tokens)
/// and `requests_all` (of `*` tokens); a flag was evaluated `requests_all + requests[its project] +
/// single[flag]` times, `enabled[flag]` of them enabled.
///
/// The first threads (one per core) each own a shard and add with a plain relaxed load and store (no atomic
/// read-modify-write: only the owner writes it); any further thread adds to a shared last shard with
/// `fetch_add`. Counters only grow; a harvest takes the difference from the previous harvest.
#[derive(Debug)]
pub struct EvaluationCounters {
    flags: usize,
    projects: usize,
    shards: Box<[Box<[AtomicU64]>]>,
    harvested: Box<[AtomicU64]>,
}

/// Counter cells a shard is padded with, so that two shards never share a cache line.
const PAD: usize = 16;

/// The shard an evaluation adds to.
#[derive(Clone, Copy)]
pub struct Shard<'c> {
    cells: &'c [AtomicU64],
    owned: bool,
}

impl Shard<'_> {
    #[inline]
    fn bump(self, cell: usize) {
        let counter = &self.cells[cell];
        if self.owned {
            counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl EvaluationCounters {
    /// Zeroed counters for the flags and projects of `engine`.
    pub fn new(engine: &Snapshot) -> EvaluationCounters {
        let flags = engine.len();
        let projects = engine.project_names().len();
        let cells = 2 * flags + projects + 1;
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        let shards = (0..=exclusive_shards())
            .map(|_| zeros(cells + PAD))
            .collect();
        EvaluationCounters {
            flags,
            projects,
            shards,
            harvested: zeros(cells),
        }
    }

    fn shard(&self) -> Shard<'_> {
        let owned = self.shards.len() - 1;
        let number = thread_number();
        let index = number.min(owned);
        Shard {
            cells: &self.shards[index],
            owned: number < owned,
        }
    }

    /// An all-flags evaluation for `projects` began; call [`Self::enabled`] for each flag it found enabled.
    pub fn all_flags(&self, engine: &Snapshot, projects: &Projects) -> Shard<'_> {
        let shard = self.shard();
        match projects {
            Projects::All => shard.bump(2 * self.flags + self.projects),
            Projects::Only(list) => {
                for (index, name) in engine.project_names().iter().enumerate() {
                    if list.iter().any(|p| **p == **name) {
                        shard.bump(2 * self.flags + index);
                    }
                }
            }
        }
        shard
    }

    /// Flag `index` was enabled in the evaluation whose shard `all_flags` returned.
    #[inline]
    pub fn enabled(shard: Shard<'_>, index: usize) {
        shard.bump(index);
    }

    /// One flag evaluated on its own.
    pub fn one_flag(&self, index: usize, enabled: bool) {
        let shard = self.shard();
        shard.bump(self.flags + index);
        if enabled {
            shard.bump(index);
        }
    }

    /// The counts since the previous harvest: `(flag, enabled, not enabled)` for each flag evaluated. An
    /// evaluation running meanwhile lands in this harvest or the next, off by at most itself.
    pub fn harvest(&self, engine: &Snapshot, mut each: impl FnMut(&str, u64, u64)) {
        let take = |cell: usize| -> u64 {
            let total = self
                .shards
                .iter()
                .map(|shard| shard[cell].load(Ordering::Relaxed))
                .fold(0u64, u64::wrapping_add);
            total.wrapping_sub(self.harvested[cell].swap(total, Ordering::Relaxed))
        };
        let all = take(2 * self.flags + self.projects);
        let requests: Vec<u64> = (0..self.projects)
            .map(|p| take(2 * self.flags + p))
            .collect();
        for index in 0..self.flags.min(engine.len()) {
            let evaluated = all + requests[engine.flag_project(index)] + take(self.flags + index);
            let enabled = take(index);
            if evaluated > 0 || enabled > 0 {
                each(
                    engine.flag_name(index),
                    enabled,
                    evaluated.saturating_sub(enabled),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_counters_add_up_per_flag() {
        let doc: vexil_shared::FeaturesDocument = serde_json::from_value(serde_json::json!({
            "version": 2,
            "features": [
                {"name": "a", "enabled": true, "project": "p1", "strategies": [{"name": "default"}]},
                {"name": "b", "enabled": false, "project": "p2", "strategies": []}
            ]
        }))
        .unwrap();
        let engine = Snapshot::compile(&doc);
        let counters = EvaluationCounters::new(&engine);
        let ctx = vexil_shared::Context::default();
        for projects in [Projects::All, Projects::Only(["p1".to_owned()].into())] {
            let shard = counters.all_flags(&engine, &projects);
            let mut out = Vec::new();
            engine.write_toggles_json_counted(&ctx, &projects, &mut out, |i| {
                EvaluationCounters::enabled(shard, i)
            });
        }
        counters.one_flag(engine.flag_index("b").unwrap(), false);
        let mut seen = Vec::new();
        counters.harvest(&engine, |name, yes, no| {
            seen.push((name.to_owned(), yes, no))
        });
        assert_eq!(
            seen,
            [("a".to_owned(), 2, 0), ("b".to_owned(), 0, 2)],
            "b: once in the `*` evaluation, once on its own"
        );
        let mut again = 0;
        counters.harvest(&engine, |_, _, _| again += 1);
        assert_eq!(again, 0, "a harvest zeroes the counts");
    }
}
