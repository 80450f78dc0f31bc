//! Which tokens were used, and when last: a small in-memory set per process, keyed by the tokens' SHA-256
//! hashes (never a secret), that the request path adds to and that a reporter takes whole now and then (the
//! edge: into its usage batch; the control plane: into one database write). Nothing is written per request.
//!
//! Bounded: at most [`MAX_TOKEN_SIGHTINGS`] distinct hashes between two takes; a sighting of a new hash past
//! that is dropped and counted in `token_sightings_dropped_total` (a hash is never logged). Only tokens that
//! authenticated are recorded, so the set holds no more hashes than there are tokens. The cost on the
//! request path is one uncontended lock of one of [`SHARDS`] small maps and one lookup of a 32-byte key.

use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;
use vexil_shared::token::SecretHash;

/// Most distinct token hashes kept between two takes.
pub const MAX_TOKEN_SIGHTINGS: usize = 4_096;
/// The set is split by the hash's first byte, so that concurrent requests seldom wait on one lock.
const SHARDS: usize = 16;

/// Token hashes and the latest time (Unix milliseconds) each was seen.
#[derive(Debug, Default)]
pub struct TokenSightings {
    shards: [Mutex<FxHashMap<SecretHash, i64>>; SHARDS],
}

impl TokenSightings {
    /// Notes that the token of `hash` was used at `at_ms` (a later time than one noted before wins).
    pub fn record(&self, hash: &SecretHash, at_ms: i64) {
        let shard = &self.shards[usize::from(hash[0]) % SHARDS];
        let mut seen = shard.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(latest) = seen.get_mut(hash) {
            *latest = (*latest).max(at_ms);
        } else if seen.len() < MAX_TOKEN_SIGHTINGS / SHARDS {
            seen.insert(*hash, at_ms);
        } else {
            drop(seen);
            metrics::counter!("token_sightings_dropped_total").increment(1);
        }
    }

    /// Everything noted since the last take, emptying the set.
    pub fn take(&self) -> Vec<(SecretHash, i64)> {
        let mut taken = Vec::new();
        for shard in &self.shards {
            let seen = std::mem::take(&mut *shard.lock().unwrap_or_else(PoisonError::into_inner));
            taken.extend(seen);
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_sighting_wins_and_a_take_empties_the_set() {
        let sightings = TokenSightings::default();
        sightings.record(&[1; 32], 2_000);
        sightings.record(&[1; 32], 1_000);
        sightings.record(&[2; 32], 500);
        let mut taken = sightings.take();
        taken.sort();
        assert_eq!(taken, vec![([1; 32], 2_000), ([2; 32], 500)]);
        assert!(sightings.take().is_empty());
    }

    #[test]
    fn new_hashes_past_the_bound_are_dropped_known_ones_still_move() {
        let sightings = TokenSightings::default();
        let hash = |i: usize| {
            let mut hash = [0u8; 32];
            hash[..8].copy_from_slice(&(i as u64).to_le_bytes());
            hash
        };
        for i in 0..MAX_TOKEN_SIGHTINGS * 2 {
            sightings.record(&hash(i), 1);
        }
        sightings.record(&hash(0), 9);
        let taken = sightings.take();
        assert_eq!(taken.len(), MAX_TOKEN_SIGHTINGS);
        assert!(taken.contains(&(hash(0), 9)));
    }
}
