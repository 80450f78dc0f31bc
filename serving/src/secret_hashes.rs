//! The SHA-256 of a request's token, remembered by each worker thread for the last tokens it served: a
//! snapshot knows its tokens by that hash, and working it out was 3,500 instructions of every SDK request
//! (5 % of an `/api/frontend` request at 200 flags, BENCHMARKS.md). A remembered hash is found by a keyed
//! 128-bit SipHash of the token (a MAC: without the process's random key, no other text finds it), a
//! twentieth of the cost. Only tokens the snapshot knows are remembered, so that unknown ones (an attacker's
//! guesses) cannot push them out; nothing else about a token is kept, so a revoked token is refused as
//! before, by the snapshot.

use std::cell::RefCell;
use std::hash::Hasher;
use std::sync::LazyLock;

use siphasher::sip128::{Hasher128, SipHasher13};
use vexil_shared::token::{self, SecretHash};

/// How many tokens a thread remembers, each in the slot its MAC picks (a newer one in the same slot
/// replaces it).
const SLOTS: usize = 64;

/// The process's SipHash key; `None` when the system gave no randomness, and then nothing is remembered.
static KEY: LazyLock<Option<[u8; 16]>> = LazyLock::new(|| {
    let mut key = [0; 16];
    getrandom::fill(&mut key).ok().map(|()| key)
});

thread_local! {
    static REMEMBERED: RefCell<[Option<(u128, SecretHash)>; SLOTS]> = const { RefCell::new([None; SLOTS]) };
}

/// `token::sha256(secret)`. When it is not remembered, it is worked out and remembered if `keep` says so
/// (the hash of a token the snapshot knows).
pub fn sha256(secret: &str, keep: impl FnOnce(&SecretHash) -> bool) -> SecretHash {
    let Some(key) = KEY.as_ref() else {
        return token::sha256(secret);
    };
    let mut mac = SipHasher13::new_with_key(key);
    mac.write(secret.as_bytes());
    let tag = mac.finish128().as_u128();
    let slot = tag as usize % SLOTS;
    let remembered = REMEMBERED.with_borrow(|slots| match slots[slot] {
        Some((known, hash)) if known == tag => Some(hash),
        _ => None,
    });
    if let Some(hash) = remembered {
        return hash;
    }
    let hash = token::sha256(secret);
    if keep(&hash) {
        REMEMBERED.with_borrow_mut(|slots| slots[slot] = Some((tag, hash)));
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_hash_is_remembered_and_an_unkept_one_is_not() {
        let asked = std::cell::Cell::new(0);
        let keep = |answer: bool| {
            let asked = &asked;
            move |_: &SecretHash| {
                asked.set(asked.get() + 1);
                answer
            }
        };
        let known = "default:development.known-secret";
        assert_eq!(sha256(known, keep(true)), token::sha256(known));
        assert_eq!(asked.get(), 1);
        // Remembered: not worked out again, so not asked about.
        assert_eq!(sha256(known, keep(true)), token::sha256(known));
        assert_eq!(asked.get(), 1);
        let unknown = "default:development.unknown-secret";
        for expected_asks in [2, 3] {
            assert_eq!(sha256(unknown, keep(false)), token::sha256(unknown));
            assert_eq!(asked.get(), expected_asks);
        }
        // Many tokens on one thread: each hash right, whichever slot it shares.
        for i in 0..500 {
            let secret = format!("p{i}:development.s{i}");
            assert_eq!(sha256(&secret, |_| true), token::sha256(&secret));
            assert_eq!(sha256(&secret, |_| true), token::sha256(&secret));
        }
    }
}
