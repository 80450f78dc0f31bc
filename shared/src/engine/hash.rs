//! Unleash's bucketing: murmur3 x86_32 of `"<group>:<value>"`, reduced to `1..=modulus`.
//!
//! The hash is written out here rather than taken from the `murmur3` crate because it is resumable: the
//! `"<group>:"` prefix is hashed once at compile time and each evaluation only hashes the context value,
//! straight from its bytes, with no copy. Tests check it against the crate.

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
    /// The prefix's last `len % 4` bytes, still to be joined with the value's first bytes.
    carry: [u8; 4],
    carry_len: usize,
    prefix_len: usize,
}

impl HashGroup {
    pub(crate) fn new(group: &str, seed: u32) -> Self {
        let mut prefix = Vec::with_capacity(group.len() + 1);
        prefix.extend_from_slice(group.as_bytes());
        prefix.push(b':');
        let blocks = prefix.chunks_exact(4);
        let rest = blocks.remainder();
        let mut carry = [0u8; 4];
        carry[..rest.len()].copy_from_slice(rest);
        let state = blocks.fold(seed, |h, b| {
            mix(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        });
        HashGroup {
            state,
            carry,
            carry_len: rest.len(),
            prefix_len: prefix.len(),
        }
    }

    /// `murmur3("<group>:<value>", seed) % modulus + 1`; `modulus` must not be zero.
    pub(crate) fn bucket(&self, value: &str, modulus: u32) -> u32 {
        self.hash(value.as_bytes()) % modulus + 1
    }

    fn hash(&self, value: &[u8]) -> u32 {
        // Byte loops rather than slice copies: at most three bytes move, and a memcpy call costs more.
        let mut h = self.state;
        let mut rest = value;
        let mut block = self.carry; // zero past `carry_len`
        let mut filled = self.carry_len;
        if filled > 0 {
            while filled < 4 {
                let Some((&b, r)) = rest.split_first() else {
                    break;
                };
                block[filled] = b;
                filled += 1;
                rest = r;
            }
            if filled == 4 {
                h = mix(h, u32::from_le_bytes(block));
                filled = 0;
            }
        }
        if filled == 0 {
            let blocks = rest.chunks_exact(4);
            let tail = blocks.remainder();
            for b in blocks {
                h = mix(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            }
            block = [0; 4];
            for (slot, &b) in block.iter_mut().zip(tail) {
                *slot = b;
            }
            filled = tail.len();
        }
        if filled > 0 {
            h ^= scramble(u32::from_le_bytes(block));
        }
        finish(h, self.prefix_len + value.len())
    }
}

/// A uniformly random bucket in `1..=modulus`, for `random` stickiness.
pub(crate) fn random_bucket(modulus: u32) -> u32 {
    fastrand::u32(1..=modulus.max(1))
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
                    let g = HashGroup::new(&group, seed);
                    let expected = reference(format!("{group}:{value}").as_bytes(), seed);
                    assert_eq!(
                        g.hash(value.as_bytes()),
                        expected,
                        "{group:?} {value:?} {seed}"
                    );
                    assert_eq!(g.bucket(&value, 100), expected % 100 + 1);
                }
            }
        }
    }

    #[test]
    fn matches_the_reference_buckets() {
        // Values from the Unleash client specification (flexible rollout, custom stickiness).
        let g = HashGroup::new(
            "Feature.flexible.rollout.custom.stickiness_50",
            ROLLOUT_SEED,
        );
        assert!(g.bucket("388", 100) <= 50);
        assert!(g.bucket("402", 100) > 50);
    }
}
