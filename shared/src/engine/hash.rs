//! Unleash's bucketing: murmur3 x86_32 of `"<group>:<value>"`, reduced to `1..=modulus`.
//!
//! The hash is written out here rather than taken from the `murmur3` crate because it is resumable: the
//! `"<group>:"` prefix is hashed once at compile time and each evaluation only hashes the context value,
//! straight from its bytes, with no copy. Tests check it against the crate. The reduction by the modulus is
//! a multiplication by a precomputed inverse (Lemire, Kaser and Kurz, "Faster remainder by direct
//! computation", 2019) rather than a division, which costs several times more.
//!
//! [`text_hash`] is another hash: FxHash of a serialized piece or of a set's value.

/// Seed of the rollout hash.
pub(crate) const ROLLOUT_SEED: u32 = 0;
/// Seed of the variant hash.
pub(crate) const VARIANT_SEED: u32 = 86_028_157;

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

fn scramble(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix(h: u32, block: u32) -> u32 {
    (h ^ scramble(block))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

fn finish(mut h: u32, len: usize) -> u32 {
    h ^= len as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// A `"<group>:"` prefix with its whole 4-byte blocks already hashed.
#[derive(Debug, Clone)]
pub(crate) struct HashGroup {
    /// State after the prefix's whole blocks.
    state: u32,
    /// The prefix's last `len % 4` bytes (little-endian), still to be joined with the value's first bytes.
    carry: u32,
    carry_len: u8,
    prefix_len: u32,
    modulus: u32,
    /// `⌈2⁶⁴ / modulus⌉`, so that `n % modulus` is two multiplications (0 for a modulus of 1).
    inverse: u64,
}

impl HashGroup {
    /// The bucketing of `"<group>:<value>"` hashed with `seed` into `1..=modulus`; a modulus of 0 counts as 1.
    pub(crate) fn new(group: &str, seed: u32, modulus: u32) -> Self {
        let modulus = modulus.max(1);
        let mut prefix = Vec::with_capacity(group.len() + 1);
        prefix.extend_from_slice(group.as_bytes());
        prefix.push(b':');
        let blocks = prefix.chunks_exact(4);
        let rest = blocks.remainder();
        let state = blocks.fold(seed, |h, b| {
            mix(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        });
        HashGroup {
            state,
            carry: little_endian(rest),
            carry_len: rest.len() as u8,
            prefix_len: prefix.len() as u32,
            modulus,
            inverse: (u64::MAX / u64::from(modulus)).wrapping_add(1),
        }
    }

    /// `murmur3("<group>:<value>", seed) % modulus + 1`.
    pub(crate) fn bucket(&self, value: &str) -> u32 {
        let low = self
            .inverse
            .wrapping_mul(u64::from(self.hash(value.as_bytes())));
        ((u128::from(low) * u128::from(self.modulus)) >> 64) as u32 + 1
    }

    fn hash(&self, value: &[u8]) -> u32 {
        let [a, b, c, d, ..] = *value else {
            return self.hash_short(value);
        };
        // The prefix's carried bytes and the value's first bytes make one block (the value's first four
        // bytes shifted past the carry: those that do not fit fall off the top); the rest of the value is
        // read in whole blocks, then a tail, read as the value's last four bytes shifted down.
        let filled = u32::from(self.carry_len);
        let mut h = self.state;
        let mut rest = value;
        if filled > 0 {
            h = mix(
                h,
                self.carry | (u32::from_le_bytes([a, b, c, d]) << (8 * filled)),
            );
            rest = &value[(4 - filled) as usize..];
        }
        let blocks = rest.chunks_exact(4);
        let tail = blocks.remainder().len() as u32;
        for b in blocks {
            h = mix(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        if tail > 0 {
            let last = &value[value.len() - 4..];
            h ^= scramble(
                u32::from_le_bytes([last[0], last[1], last[2], last[3]]) >> (8 * (4 - tail)),
            );
        }
        finish(h, self.prefix_len as usize + value.len())
    }

    /// [`HashGroup::hash`] of a value of fewer than four bytes, joined byte by byte.
    #[cold]
    fn hash_short(&self, value: &[u8]) -> u32 {
        // The prefix's carried bytes and the value's first bytes make one block; the rest of the value is
        // read in whole blocks, then a tail. Bytes are joined by shifts: at most three move each way.
        let mut h = self.state;
        let mut block = self.carry;
        let mut filled = usize::from(self.carry_len);
        let mut rest = value;
        if filled > 0 {
            let (head, tail) = rest.split_at((4 - filled).min(rest.len()));
            block |= little_endian(head) << (8 * filled);
            filled += head.len();
            rest = tail;
            if filled < 4 {
                return finish(h ^ scramble(block), self.prefix_len as usize + value.len());
            }
            h = mix(h, block);
        }
        let blocks = rest.chunks_exact(4);
        let tail = blocks.remainder();
        for b in blocks {
            h = mix(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        if !tail.is_empty() {
            h ^= scramble(little_endian(tail));
        }
        finish(h, self.prefix_len as usize + value.len())
    }
}

/// Up to four bytes as a little-endian number.
#[inline]
fn little_endian(bytes: &[u8]) -> u32 {
    bytes.iter().rev().fold(0, |n, &b| (n << 8) | u32::from(b))
}

/// A uniformly random bucket in `1..=modulus`, for `random` stickiness.
pub(crate) fn random_bucket(modulus: u32) -> u32 {
    fastrand::u32(1..=modulus.max(1))
}

/// The hash of a serialized piece, for fingerprints (FxHash: fast, the same in every process).
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::Hasher;
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(text.as_bytes());
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(bytes: &[u8], seed: u32) -> u32 {
        murmur3::murmur3_32(&mut &bytes[..], seed).unwrap()
    }

    #[test]
    fn agrees_with_the_murmur3_crate_for_every_split() {
        let mut rng = fastrand::Rng::with_seed(7);
        for group_len in 0..12 {
            for value_len in 0..12 {
                for seed in [ROLLOUT_SEED, VARIANT_SEED, 42] {
                    let group: String = (0..group_len).map(|_| rng.alphanumeric()).collect();
                    let value: String = (0..value_len).map(|_| rng.char('a'..='ÿ')).collect();
                    let g = HashGroup::new(&group, seed, 100);
                    let expected = reference(format!("{group}:{value}").as_bytes(), seed);
                    assert_eq!(
                        g.hash(value.as_bytes()),
                        expected,
                        "{group:?} {value:?} {seed}"
                    );
                    assert_eq!(g.bucket(&value), expected % 100 + 1);
                }
            }
        }
    }

    #[test]
    fn reduces_like_the_remainder_for_every_modulus() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut moduli = vec![
            1,
            2,
            3,
            7,
            100,
            1_000,
            65_535,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ];
        moduli.extend((0..200).map(|_| rng.u32(1..)));
        for modulus in moduli {
            let g = HashGroup::new("group", ROLLOUT_SEED, modulus);
            for value in (0..50).map(|_| rng.u64(..).to_string()) {
                let hash = reference(format!("group:{value}").as_bytes(), ROLLOUT_SEED);
                assert_eq!(g.bucket(&value), hash % modulus + 1, "{value} {modulus}");
            }
        }
        assert_eq!(HashGroup::new("g", ROLLOUT_SEED, 0).bucket("x"), 1);
    }

    #[test]
    fn matches_the_reference_buckets() {
        // Values from the Unleash client specification (flexible rollout, custom stickiness).
        let g = HashGroup::new(
            "Feature.flexible.rollout.custom.stickiness_50",
            ROLLOUT_SEED,
            100,
        );
        assert!(g.bucket("388") <= 50);
        assert!(g.bucket("402") > 50);
    }
}
