//! The secrets of links that let someone in without a password (invite links, password reset links): split
//! tokens `<selector>.<verifier>`, 64 random bits of selector and 192 of verifier from the OS. The selector
//! finds the row (a lookup's timing tells nothing about the verifier); only the SHA-256 of the verifier is
//! stored, and it is compared in constant time (`subtle`). A link is usable while it is unexpired and unused
//! (and, for an invite link, enabled): the callers check that, and mark it used in the write that uses it.

use super::tokens::random_hex;
use subtle::ConstantTimeEq;
use vexil_shared::{token, ApiError};

const SELECTOR_BYTES: usize = 8;
const VERIFIER_BYTES: usize = 24;

/// A new link secret: the whole secret (shown once, put in the link) and what is stored of it.
pub struct NewSecret {
    pub secret: String,
    pub selector: String,
    pub verifier_hash: String,
}

pub fn new_secret() -> Result<NewSecret, ApiError> {
    let selector = random_hex(SELECTOR_BYTES)?;
    let verifier = random_hex(VERIFIER_BYTES)?;
    Ok(NewSecret {
        secret: format!("{selector}.{verifier}"),
        verifier_hash: token::sha256_hex(&verifier),
        selector,
    })
}

/// A presented secret split into its selector and verifier; `None` for anything not of that form (such a
/// secret matches no link).
pub fn split(secret: &str) -> Option<(&str, &str)> {
    let (selector, verifier) = secret.trim().split_once('.')?;
    let hex = |text: &str, bytes: usize| {
        text.len() == bytes * 2 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
    };
    (hex(selector, SELECTOR_BYTES) && hex(verifier, VERIFIER_BYTES)).then_some((selector, verifier))
}

/// Whether `verifier` is the one whose SHA-256 is `stored_hash`, compared in constant time.
pub fn verifies(verifier: &str, stored_hash: &str) -> bool {
    let presented = token::sha256_hex(verifier);
    presented.len() == stored_hash.len()
        && bool::from(presented.as_bytes().ct_eq(stored_hash.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_secret_splits_and_verifies_and_others_do_not() {
        let new = new_secret().unwrap();
        let (selector, verifier) = split(&new.secret).unwrap();
        assert_eq!(selector, new.selector);
        assert!(verifies(verifier, &new.verifier_hash));
        let other = new_secret().unwrap();
        let (_, other_verifier) = split(&other.secret).unwrap();
        assert!(!verifies(other_verifier, &new.verifier_hash));
        assert!(split("nodot").is_none());
        assert!(split(&format!("{selector}.short")).is_none());
        assert!(split(&format!("zz{}.{verifier}", &selector[2..])).is_none());
    }
}
