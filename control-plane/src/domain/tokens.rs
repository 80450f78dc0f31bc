//! API tokens: secrets `<projects>:<environment>.<random>`, stored as SHA-256 hashes only and looked up by
//! hash (so no secret is ever compared byte by byte). Creating, listing and revoking tokens over the API comes
//! in a later version; here: the tokens given at start, the first admin token, and authentication.

use super::events::EventType;
use super::limits::{self, Limits};
use crate::store::tokens::{self as token_store, TokenRow};
use crate::store::{timestamp_now, Actor, NewEvent, Store, WriteTx};
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;
use std::fmt::Write as _;
use vexil_shared::{ApiError, ErrorKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Admin,
    Client,
    Frontend,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Admin => "admin",
            TokenKind::Client => "client",
            TokenKind::Frontend => "frontend",
        }
    }

    fn parse(text: &str) -> Option<TokenKind> {
        match text {
            "admin" => Some(TokenKind::Admin),
            "client" | "backend" => Some(TokenKind::Client),
            "frontend" => Some(TokenKind::Frontend),
            _ => None,
        }
    }
}

/// Who a valid token belongs to and what it may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    pub kind: TokenKind,
    pub projects: Vec<String>,
    pub environment: String,
}

impl Principal {
    /// The caller when authentication is off (`--auth-type none`).
    pub fn unauthenticated_admin() -> Principal {
        Principal {
            name: "admin".to_owned(),
            kind: TokenKind::Admin,
            projects: vec!["*".to_owned()],
            environment: "*".to_owned(),
        }
    }

    pub fn actor(&self) -> Actor {
        Actor::token(&self.name)
    }
}

/// Lowercase hex SHA-256 of a secret.
pub fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// The scope a secret's prefix declares: `(projects, environment)`.
fn parse_scope(secret: &str) -> Option<(Vec<String>, String)> {
    let (projects, rest) = secret.split_once(':')?;
    let (environment, random) = rest.split_once('.')?;
    if projects.is_empty() || environment.is_empty() || random.is_empty() || projects == "[]" {
        return None;
    }
    Some((vec![projects.to_owned()], environment.to_owned()))
}

/// Authenticates an `Authorization` header value (`<secret>` or `Bearer <secret>`).
pub async fn authenticate(
    conn: &mut AnyConnection,
    header: Option<&str>,
) -> Result<Principal, ApiError> {
    let unauthenticated = |message: &str| ApiError::new(ErrorKind::AuthenticationRequired, message);
    let header = header.map(str::trim).filter(|value| !value.is_empty());
    let Some(header) = header else {
        return Err(unauthenticated(
            "You must be authenticated: send an API token in the Authorization header",
        ));
    };
    let secret = match (header.get(..7), header.get(7..)) {
        (Some(prefix), Some(rest)) if prefix.eq_ignore_ascii_case("bearer ") => rest.trim(),
        _ => header,
    };
    let Some(row) = token_store::get_by_hash(conn, &hash_secret(secret)).await? else {
        return Err(unauthenticated("The API token is not valid"));
    };
    if let Some(expires_at) = &row.expires_at {
        if expires_at.as_str() <= timestamp_now().as_str() {
            return Err(unauthenticated("The API token has expired"));
        }
    }
    let kind =
        TokenKind::parse(&row.kind).ok_or_else(|| unauthenticated("The API token is not valid"))?;
    let projects: Vec<String> = serde_json::from_str(&row.projects).unwrap_or_default();
    Ok(Principal {
        name: row.name,
        kind,
        projects,
        environment: row.environment,
    })
}

/// 403 unless the principal is an admin.
pub fn require_admin(principal: &Principal) -> Result<(), ApiError> {
    if principal.kind != TokenKind::Admin {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "A {} token cannot use the admin API",
                principal.kind.as_str()
            ),
        ));
    }
    Ok(())
}

/// A fresh admin secret: `*:*.` and 56 random hex characters.
fn generate_admin_secret() -> Result<String, ApiError> {
    let mut bytes = [0u8; 28];
    getrandom::fill(&mut bytes).map_err(|error| {
        tracing::error!(%error, "no randomness for a new token");
        ApiError::internal()
    })?;
    let mut secret = String::from("*:*.");
    for byte in bytes {
        let _ = write!(secret, "{byte:02x}");
    }
    Ok(secret)
}

/// Stores a token named `name` unless its hash is already there; records `api-token-created` (without the
/// secret).
async fn insert_if_absent(
    tx: &mut WriteTx,
    kind: TokenKind,
    secret: &str,
    name: String,
    limits: &Limits,
) -> Result<(), ApiError> {
    let hash = hash_secret(secret);
    if token_store::get_by_hash(tx.conn(), &hash).await?.is_some() {
        return Ok(());
    }
    let count = token_store::count_all(tx.conn()).await?;
    limits::ensure_within(
        "apiTokens",
        "API tokens",
        usize::try_from(count)
            .unwrap_or(usize::MAX)
            .saturating_add(1),
        limits.api_tokens,
    )?;
    let (projects, environment) = match kind {
        TokenKind::Admin => (vec!["*".to_owned()], "*".to_owned()),
        TokenKind::Client | TokenKind::Frontend => parse_scope(secret).ok_or_else(|| {
            ApiError::validation(format!(
                "{name}: a {} token must look like <project or *>:<environment>.<random>",
                kind.as_str()
            ))
        })?,
    };
    let row = TokenRow {
        name,
        secret_hash: hash,
        kind: kind.as_str().to_owned(),
        projects: serde_json::json!(projects).to_string(),
        environment,
        expires_at: None,
        created_at: tx.now().to_owned(),
    };
    token_store::insert(tx.conn(), &row).await?;
    tx.record(NewEvent {
        event_type: EventType::ApiTokenCreated.as_str(),
        data: Some(serde_json::json!({
            "tokenName": row.name,
            "type": row.kind,
            "projects": projects,
            "environment": row.environment,
        })),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// The tokens to create at start.
#[derive(Debug, Clone, Default)]
pub struct InitialTokens {
    pub admin: Vec<String>,
    pub client: Vec<String>,
    pub frontend: Vec<String>,
}

/// Creates the configured tokens that are missing. With `create_first_admin` and no admin token at all,
/// creates one and returns its secret (to be shown once).
pub async fn seed(
    store: &Store,
    tokens: &InitialTokens,
    create_first_admin: bool,
    limits: &Limits,
) -> Result<Option<String>, ApiError> {
    let mut tx = store.begin_write(&Actor::system()).await?;
    for (kind, secrets) in [
        (TokenKind::Admin, &tokens.admin),
        (TokenKind::Client, &tokens.client),
        (TokenKind::Frontend, &tokens.frontend),
    ] {
        let secrets = secrets
            .iter()
            .map(|secret| secret.trim())
            .filter(|secret| !secret.is_empty());
        for (index, secret) in secrets.enumerate() {
            let name = format!("init-{}-token-{}", kind.as_str(), index + 1);
            insert_if_absent(&mut tx, kind, secret, name, limits).await?;
        }
    }
    let mut first_admin = None;
    if create_first_admin
        && token_store::count_of_kind(tx.conn(), TokenKind::Admin.as_str()).await? == 0
    {
        let secret = generate_admin_secret()?;
        insert_if_absent(
            &mut tx,
            TokenKind::Admin,
            &secret,
            "first-admin-token".to_owned(),
            limits,
        )
        .await?;
        first_admin = Some(secret);
    }
    tx.commit().await?;
    Ok(first_admin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_sha256_hex() {
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn scope_comes_from_the_prefix() {
        assert_eq!(
            parse_scope("default:development.abc"),
            Some((vec!["default".to_owned()], "development".to_owned()))
        );
        assert_eq!(
            parse_scope("*:production.x"),
            Some((vec!["*".to_owned()], "production".to_owned()))
        );
        assert_eq!(parse_scope("nonsense"), None);
        assert_eq!(parse_scope("a:b."), None);
    }

    #[test]
    fn generated_admin_secrets_have_the_admin_prefix() {
        let secret = generate_admin_secret().unwrap();
        assert!(secret.starts_with("*:*."));
        assert_eq!(secret.len(), 4 + 56);
    }
}
