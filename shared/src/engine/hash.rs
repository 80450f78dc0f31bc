//! Unleash's bucketing: murmur3 x86_32 of `"<group>:<value>"`, reduced to `1..=modulus`.

/// Seed of the rollout hash.
pub(crate) const ROLLOUT_SEED: u32 = 0;
/// Seed of the variant hash.
pub(crate) const VARIANT_SEED: u32 = 86_028_157;

/// A `"<group>:"` prefix, kept as bytes so that hashing only appends the context value.
#[derive(Debug, Clone)]
pub(crate) struct HashGroup(Box<[u8]>);

impl HashGroup {
    pub(crate) fn new(group: &str) -> Self {
        let mut prefix = Vec::with_capacity(group.len() + 1);
        prefix.extend_from_slice(group.as_bytes());
        prefix.push(b':');
        HashGroup(prefix.into_boxed_slice())
    }

    /// `murmur3("<group>:<value>", seed) % modulus + 1`; `modulus` must not be zero.
    pub(crate) fn bucket(&self, value: &str, seed: u32, modulus: u32) -> u32 {
        const STACK: usize = 256;
        let total = self.0.len() + value.len();
        let hash = if total <= STACK {
            let mut buf = [0u8; STACK];
            buf[..self.0.len()].copy_from_slice(&self.0);
            buf[self.0.len()..total].copy_from_slice(value.as_bytes());
            murmur(&buf[..total], seed)
        } else {
            murmur(&[&self.0[..], value.as_bytes()].concat(), seed)
        };
        hash % modulus + 1
    }
}

fn murmur(bytes: &[u8], seed: u32) -> u32 {
    // Reading from an in-memory slice cannot fail.
    murmur3::murmur3_32(&mut &bytes[..], seed).unwrap_or_default()
}

/// A uniformly random bucket in `1..=modulus`, for `random` stickiness.
pub(crate) fn random_bucket(modulus: u32) -> u32 {
    fastrand::u32(1..=modulus.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_buckets() {
        // Values from the Unleash client specification (flexible rollout, userId stickiness).
        let g = HashGroup::new("Feature.flexible.rollout.custom.stickiness_50");
        assert!(g.bucket("388", ROLLOUT_SEED, 100) <= 50);
        assert!(g.bucket("402", ROLLOUT_SEED, 100) > 50);
    }

    #[test]
    fn long_values_hash_like_short_ones() {
        let g = HashGroup::new("g");
        let long = "x".repeat(1000);
        let expected = murmur(format!("g:{long}").as_bytes(), 7) % 10 + 1;
        assert_eq!(g.bucket(&long, 7, 10), expected);
    }
}
