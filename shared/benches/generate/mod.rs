//! Deterministic generators shared by the benchmarks: a features document with a realistic mix of strategies,
//! constraints, segments, variants and dependencies; a rotating set of evaluation contexts drawn from the same
//! vocabulary (so that a good share of flags match); the same document and contexts in yggdrasil's types; and
//! the check that Vexil and yggdrasil agree wherever the result does not depend on chance.
//!
//! Everything is seeded: the same seed gives the same document and contexts on every machine.
//!
//! The documents stay inside what both engines read the same way. yggdrasil 0.21.7 differs from Vexil (which
//! follows the Unleash client specification and the Node SDK there) on these, so the generator does not
//! produce them (each was checked on a one-flag document):
//! - a parent whose flexibleRollout has no groupId, evaluated through a child: yggdrasil hashes it with the
//!   child's name (so parents here always name their groupId);
//! - a dependency on given variants of a parent that has no variants: yggdrasil counts it as met (so variant
//!   conditions only name parents with flag-level variants);
//! - `disabled: true` strategies (yggdrasil evaluates them) and `sortOrder` out of list order (yggdrasil does
//!   not sort): strategies here are all enabled and listed in order;
//! - a strategy naming a missing segment (yggdrasil turns the whole flag off, Vexil only that strategy);
//! - gradualRolloutUserId/SessionId without groupId, and fractional percentages (yggdrasil: off);
//! - a remoteAddress entry that is not an IP (Vexil also matches it literally; yggdrasil never);
//! - applicationHostname on this host (yggdrasil, built without its `hostname` feature, never matches).

// Each bench binary includes this module and uses a different part of it.
#![allow(dead_code)]

mod contexts;
mod documents;
mod engines;
mod vocabulary;

use std::collections::BTreeSet;

// The generators as `generate::…`; a bench binary that uses only some of them leaves the others unused.
#[allow(unused_imports)]
pub use contexts::{contexts, to_yggdrasil_context};
#[allow(unused_imports)]
pub use documents::document;
#[allow(unused_imports)]
pub use engines::{assert_engines_agree, describe, vexil_snapshot, yggdrasil_engine, Agreement};

/// Seed of the contexts.
pub const CONTEXT_SEED: u64 = 0x5EED_C0DE;
/// Seed of a document (the flag count is mixed in, so each size is its own document).
pub const DOCUMENT_SEED: u64 = 0xF1A6_5EED;

/// The host name Vexil compiles `applicationHostname` against. No generated strategy names it, and yggdrasil
/// (built without its `hostname` feature) never matches a host name, so both engines see every
/// `applicationHostname` strategy as off.
pub const BENCH_HOSTNAME: &str = "vexil-bench-host";

/// splitmix64: tiny, fast and stable across versions of every dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with the given probability in percent.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index drawn with the given relative weights.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// Between `lo` and `hi` distinct words of the list.
    pub fn some(&mut self, items: &[&str], lo: u64, hi: u64) -> Vec<String> {
        let k = self.range(lo, hi) as usize;
        self.sample(items, k)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// `k` distinct items (fewer if there are not that many).
    pub fn sample<T: Clone + Ord>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut chosen = BTreeSet::new();
        let k = k.min(items.len());
        while chosen.len() < k {
            chosen.insert(self.pick(items).clone());
        }
        chosen.into_iter().collect()
    }
}
