//! API token secrets, as both binaries know them: the secret in an `Authorization` header, its SHA-256 (the
//! key a token is stored and looked up by: raw bytes on the edges, lowercase hex in the control plane's
//! store) and the kind of SDK or caller a token is for.

use sha2::{Digest, Sha256};

/// What a token is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// The admin API.
    Admin,
    /// Server-side SDKs: the client API (stored as `client`; `backend` is accepted as its older name).
    Client,
    /// Browser and mobile SDKs: the frontend API.
    Frontend,
    /// Edges: the control plane's gRPC channel (snapshots, usage reports), nothing else. Never sent to edges.
    Edge,
}

impl TokenKind {
    /// The stored name: `admin`, `client`, `frontend` or `edge`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Admin => "admin",
            TokenKind::Client => "client",
            TokenKind::Frontend => "frontend",
            TokenKind::Edge => "edge",
        }
    }

    /// The kind with its indefinite article, for messages: `an admin token`, `a client token`.
    pub fn with_article(self) -> &'static str {
        match self {
            TokenKind::Admin => "an admin token",
            TokenKind::Client => "a client token",
            TokenKind::Frontend => "a frontend token",
            TokenKind::Edge => "an edge token",
        }
    }

    /// The kind a stored or requested name stands for (`backend` is a client token); exact, lowercase.
    pub fn parse(text: &str) -> Option<TokenKind> {
        match text {
            "admin" => Some(TokenKind::Admin),
            "client" | "backend" => Some(TokenKind::Client),
            "frontend" => Some(TokenKind::Frontend),
            "edge" => Some(TokenKind::Edge),
            _ => None,
        }
    }
}

/// The SHA-256 of a token secret.
pub type SecretHash = [u8; 32];

/// The secret an `Authorization` header value carries: the value trimmed, without a `Bearer ` prefix (in
/// any case). Empty when the value is blank.
pub fn secret_of_authorization(value: &str) -> &str {
    let value = value.trim();
    match value.get(..7) {
        Some(prefix) if prefix.eq_ignore_ascii_case("bearer ") => value[7..].trim_start(),
        _ => value,
    }
}

/// The SHA-256 of `secret`.
pub fn sha256(secret: &str) -> SecretHash {
    Sha256::digest(secret.as_bytes()).into()
}

/// The SHA-256 of `secret` as lowercase hex (64 characters), as the control plane stores it.
pub fn sha256_hex(secret: &str) -> String {
    lowercase_hex(&sha256(secret))
}

/// `bytes` as lowercase hex, two characters a byte.
pub fn lowercase_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_is_stripped_in_any_case() {
        assert_eq!(secret_of_authorization("Bearer abc"), "abc");
        assert_eq!(secret_of_authorization("bEaReR  abc"), "abc");
        assert_eq!(secret_of_authorization("  abc "), "abc");
        assert_eq!(secret_of_authorization("Bearer "), "Bearer");
        assert_eq!(secret_of_authorization("   "), "");
    }

    #[test]
    fn hashes_are_sha256() {
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex("abc"), hex);
        assert_eq!(lowercase_hex(&sha256("abc")), hex);
        assert_eq!(lowercase_hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    #[test]
    fn kinds_round_trip_and_backend_is_client() {
        for kind in [
            TokenKind::Admin,
            TokenKind::Client,
            TokenKind::Frontend,
            TokenKind::Edge,
        ] {
            assert_eq!(TokenKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(TokenKind::parse("backend"), Some(TokenKind::Client));
        assert_eq!(TokenKind::parse("Client"), None);
    }
}
