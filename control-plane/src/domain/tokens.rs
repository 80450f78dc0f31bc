//! API tokens: secrets `<projects>:<environment>.<random>` (224 random bits from the OS CSPRNG), stored as
//! SHA-256 hashes only and looked up by hash, so no secret is ever compared byte by byte. The secret is shown
//! once, in the answer that creates it; lists and events never hold it. Also: the tokens given at start and
//! the first admin token.

use super::events::{payload, EventType};
use super::limits::{self, Limits};
use crate::store::environments as environment_store;
use crate::store::projects as project_store;
use crate::store::tokens::{self as token_store, TokenRow};
use crate::store::{Actor, NewEvent, Store, StoreError, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_serving::token_sightings::TokenSightings;
use vexil_shared::token::{lowercase_hex, sha256_hex, SecretHash, TokenKind};
use vexil_shared::ApiError;

/// `bytes` random bytes from the operating system's CSPRNG, as lowercase hex.
pub fn random_hex(bytes: usize) -> Result<String, ApiError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|error| {
        tracing::error!(%error, "no randomness for a new secret");
        ApiError::internal()
    })?;
    Ok(lowercase_hex(&buffer))
}

/// The prefix of personal access token secrets.
pub const PAT_PREFIX: &str = "user:";

/// Random bytes of a token secret: 28 bytes (224 bits), 56 hex characters.
pub const SECRET_RANDOM_BYTES: usize = 28;

/// The scope a secret's prefix declares: `(projects, environment)`.
fn parse_scope(secret: &str) -> Option<(Vec<String>, String)> {
    let (projects, rest) = secret.split_once(':')?;
    let (environment, random) = rest.split_once('.')?;
    if projects.is_empty() || environment.is_empty() || random.is_empty() || projects == "[]" {
        return None;
    }
    Some((vec![projects.to_owned()], environment.to_owned()))
}

/// An API token as the API shows it (apiTokenSchema). `secret` is only set in the answer that creates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiToken {
    pub secret: Option<String>,
    pub token_name: String,
    #[serde(rename = "type")]
    pub token_type: String,
    /// `*` for admin tokens.
    pub environment: String,
    /// The secret's prefix: one project id, `*` for all, `[]` for several.
    pub project: String,
    pub projects: Vec<String>,
    pub expires_at: Option<String>,
    pub created_at: String,
    /// The latest use noted (on the control plane: within `--token-seen-interval` of it; on an edge: with its
    /// next usage batch); null when never used.
    pub seen_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ApiTokenList {
    pub tokens: Vec<ApiToken>,
}

/// `POST /api/admin/api-tokens`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateApiToken {
    /// Also accepted as `username` (older clients).
    #[serde(alias = "username")]
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub token_name: String,
    /// `client` (also `backend`), `frontend`, `admin` or `edge` (an edge's token for the control plane's
    /// gRPC channel: `vexil-edge serve --token`).
    #[serde(rename = "type")]
    #[schema(pattern = r"^(client|backend|frontend|admin|edge)$")]
    pub token_type: String,
    /// Client and frontend tokens: an environment, default `development`. Edge tokens: the one environment the
    /// edge may receive, or `*` (the default) for all. Admin tokens: always `*`.
    pub environment: Option<String>,
    /// One project (older clients); `projects` wins.
    pub project: Option<String>,
    /// Default `["*"]`; edge tokens are for every project (`["*"]` or absent).
    pub projects: Option<Vec<String>>,
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
}

/// `PUT /api/admin/api-tokens/:token`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateApiToken {
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// An RFC 3339 timestamp of the body (kept to the millisecond, so stored timestamps compare as text); the
/// message names `field`.
pub fn parse_timestamp(field: &str, text: &str) -> Result<Timestamp, ApiError> {
    Timestamp::parse(text).map_err(|error| {
        ApiError::invalid_field(
            field,
            format!("{field} must be an RFC 3339 date-time: {error}"),
        )
    })
}

fn view(row: TokenRow, secret: Option<String>) -> ApiToken {
    ApiToken {
        secret,
        project: scope_prefix(&row.projects),
        projects: row.projects,
        token_name: row.name,
        token_type: row.kind.as_str().to_owned(),
        environment: row.environment,
        expires_at: row.expires_at.map(|at| at.to_string()),
        created_at: row.created_at.to_string(),
        seen_at: row.seen_at.map(|at| at.to_string()),
    }
}

fn scope_prefix(projects: &[String]) -> String {
    match projects {
        [one] => one.clone(),
        _ => "[]".to_owned(),
    }
}

pub async fn list(conn: &mut AnyConnection) -> Result<ApiTokenList, ApiError> {
    let tokens = token_store::list(conn)
        .await?
        .into_iter()
        .map(|row| view(row, None))
        .collect();
    Ok(ApiTokenList { tokens })
}

/// The tokens named `name` (`GET /api/admin/api-tokens/:name`), without secrets.
pub async fn by_name(conn: &mut AnyConnection, name: &str) -> Result<ApiTokenList, ApiError> {
    let mut all = list(conn).await?;
    all.tokens.retain(|token| token.token_name == name);
    Ok(all)
}

/// Creates a token and returns it with its secret (the only time the secret is shown). Within the apiTokens
/// resource limit (every API token counts; personal access tokens are elsewhere).
pub async fn create(
    tx: &mut WriteTx,
    input: CreateApiToken,
    limits: &Limits,
) -> Result<ApiToken, ApiError> {
    let name = input.token_name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "tokenName",
            "tokenName must be 1 to 100 characters long",
        ));
    }
    let kind = TokenKind::parse(&input.token_type.to_ascii_lowercase()).ok_or_else(|| {
        ApiError::invalid_field(
            "type",
            "type must be one of client, backend, frontend, admin or edge",
        )
    })?;
    let (projects, environment) = match kind {
        TokenKind::Admin => {
            if input.environment.as_deref().is_some_and(|env| env != "*") {
                return Err(ApiError::invalid_field(
                    "environment",
                    "environment of an admin token must be * (or absent)",
                ));
            }
            (vec!["*".to_owned()], "*".to_owned())
        }
        TokenKind::Edge => {
            let projects = input
                .projects
                .or(input.project.map(|project| vec![project]));
            if projects.is_some_and(|projects| projects != ["*"]) {
                return Err(ApiError::invalid_field("projects", 
                    "projects of an edge token must be [\"*\"] (or absent): an edge serves every project",
                ));
            }
            let environment = input.environment.unwrap_or_else(|| "*".to_owned());
            if environment != "*"
                && environment_store::get(tx.conn(), &environment)
                    .await?
                    .is_none()
            {
                return Err(ApiError::invalid_field(
                    "environment",
                    format!("environment: {environment} does not exist"),
                ));
            }
            (vec!["*".to_owned()], environment)
        }
        TokenKind::Client | TokenKind::Frontend => {
            let environment = input
                .environment
                .unwrap_or_else(|| "development".to_owned());
            if environment_store::get(tx.conn(), &environment)
                .await?
                .is_none()
            {
                return Err(ApiError::invalid_field(
                    "environment",
                    format!("environment: {environment} does not exist"),
                ));
            }
            let mut projects = input
                .projects
                .or(input.project.map(|project| vec![project]))
                .unwrap_or_else(|| vec!["*".to_owned()]);
            projects.sort();
            projects.dedup();
            if projects.is_empty() {
                return Err(ApiError::invalid_field(
                    "projects",
                    "projects must not be empty",
                ));
            }
            if projects.len() > 1 && projects.iter().any(|project| project == "*") {
                return Err(ApiError::invalid_field(
                    "projects",
                    "projects: * (all projects) cannot be combined with other projects",
                ));
            }
            for project in projects.iter().filter(|project| *project != "*") {
                if project_store::get(tx.conn(), project).await?.is_none() {
                    return Err(ApiError::invalid_field(
                        "projects",
                        format!("projects: {project} does not exist"),
                    ));
                }
            }
            (projects, environment)
        }
    };
    let expires_at = input
        .expires_at
        .map(|text| parse_timestamp("expiresAt", &text))
        .transpose()?;
    ensure_token_room(tx, limits).await?;
    let secret = format!(
        "{}:{environment}.{}",
        scope_prefix(&projects),
        random_hex(SECRET_RANDOM_BYTES)?
    );
    let row = TokenRow {
        secret_hash: sha256_hex(&secret),
        name,
        kind,
        projects,
        environment,
        expires_at,
        created_at: tx.now(),
        seen_at: None,
    };
    token_store::insert(tx.conn(), &row).await?;
    let token = view(row, None);
    tx.record(NewEvent {
        event_type: EventType::ApiTokenCreated.as_str(),
        environment: Some(token.environment.clone()),
        data: Some(payload(&token)),
        ..NewEvent::default()
    })
    .await?;
    Ok(ApiToken {
        secret: Some(secret),
        ..token
    })
}

/// Sets the expiry of the token with this secret (404 if there is none).
pub async fn update(tx: &mut WriteTx, secret: &str, input: UpdateApiToken) -> Result<(), ApiError> {
    let expires_at = parse_timestamp("expiresAt", &input.expires_at)?;
    let hash = sha256_hex(secret);
    let row = token_store::get_by_hash(tx.conn(), &hash)
        .await?
        .ok_or_else(|| ApiError::not_found("There is no API token with this secret"))?;
    if row.expires_at == Some(expires_at) {
        return Ok(());
    }
    token_store::set_expiry(tx.conn(), &hash, Some(expires_at)).await?;
    let before = view(row.clone(), None);
    let after = ApiToken {
        expires_at: Some(expires_at.to_string()),
        ..before.clone()
    };
    tx.record(NewEvent {
        event_type: EventType::ApiTokenUpdated.as_str(),
        environment: Some(after.environment.clone()),
        data: Some(payload(&after)),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// A token as the admin UI lists it: the API's view (no secret) and the SHA-256 of its secret, which names
/// the token in the UI's revoke form (a hash is no credential: every API token is looked up by it).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedToken {
    pub secret_hash: String,
    pub token: ApiToken,
}

/// Every token with the hash of its secret, newest first.
pub async fn list_with_hashes(conn: &mut AnyConnection) -> Result<Vec<ListedToken>, ApiError> {
    Ok(token_store::list(conn)
        .await?
        .into_iter()
        .rev()
        .map(|row| ListedToken {
            secret_hash: row.secret_hash.clone(),
            token: view(row, None),
        })
        .collect())
}

/// Writes token sightings (the SHA-256 of a secret, Unix milliseconds) in `conn`'s transaction: the API token
/// or personal access token of each hash has its "last used" (`seenAt`) moved forwards to that time, never
/// past `now_ms` (a reporter whose clock runs ahead cannot date a use in the future). Not a configuration
/// write: no revision, no event. In hash order, so that concurrent writers lock rows in one order.
pub async fn note_seen(
    conn: &mut AnyConnection,
    mut sightings: Vec<(SecretHash, i64)>,
    now_ms: i64,
) -> Result<(), StoreError> {
    sightings.sort_unstable();
    for (hash, at_ms) in sightings {
        if let Some(at) = Timestamp::from_millis(at_ms.min(now_ms)) {
            token_store::note_seen(conn, &lowercase_hex(&hash), at).await?;
        }
    }
    Ok(())
}

/// Takes this process's token sightings and writes them in one transaction ([`note_seen`]); when the write
/// fails they are put back, for the next try. Returns how many were written.
pub async fn write_sightings(
    store: &Store,
    sightings: &TokenSightings,
    now_ms: i64,
) -> Result<usize, ApiError> {
    let taken = sightings.take();
    if taken.is_empty() {
        return Ok(0);
    }
    let count = taken.len();
    let written = async {
        let mut conn = store.bookkeeping().await?;
        let mut tx = sqlx::Connection::begin(&mut *conn).await?;
        note_seen(&mut tx, taken.clone(), now_ms).await?;
        tx.commit().await?;
        Ok::<(), StoreError>(())
    }
    .await;
    if let Err(error) = written {
        for (hash, at_ms) in &taken {
            sightings.record(hash, *at_ms);
        }
        return Err(error.into());
    }
    Ok(count)
}

/// The token whose secret has this SHA-256 (hex), without its secret; 404 if there is none.
pub async fn by_hash(conn: &mut AnyConnection, secret_hash: &str) -> Result<ApiToken, ApiError> {
    token_store::get_by_hash(conn, secret_hash)
        .await?
        .map(|row| view(row, None))
        .ok_or_else(|| ApiError::not_found("There is no such API token (was it revoked?)"))
}

/// Deletes the token with this secret; an unknown secret changes nothing (spec endpoint 13).
pub async fn delete(tx: &mut WriteTx, secret: &str) -> Result<(), ApiError> {
    delete_by_hash(tx, &sha256_hex(secret)).await
}

/// Deletes the token whose secret has this SHA-256 (the UI's revoke); an unknown hash changes nothing.
pub async fn delete_by_hash(tx: &mut WriteTx, hash: &str) -> Result<(), ApiError> {
    let Some(row) = token_store::get_by_hash(tx.conn(), hash).await? else {
        return Ok(());
    };
    token_store::delete(tx.conn(), hash).await?;
    let before = view(row, None);
    tx.record(NewEvent {
        event_type: EventType::ApiTokenDeleted.as_str(),
        environment: Some(before.environment.clone()),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// What the edges know of a token: its hash and scope, never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    pub sha256: SecretHash,
    pub kind: TokenKind,
    pub projects: Vec<String>,
    pub environment: String,
    pub expires_at: Option<Timestamp>,
}

/// Every API token's grant (a row whose hash is not 64 hex digits, only possible if edited by hand, is left
/// out).
pub async fn grants(conn: &mut AnyConnection) -> Result<Vec<TokenGrant>, ApiError> {
    Ok(token_store::list(conn)
        .await?
        .into_iter()
        .filter_map(|row| {
            Some(TokenGrant {
                sha256: decode_hex(&row.secret_hash)?,
                kind: row.kind,
                projects: row.projects,
                environment: row.environment,
                expires_at: row.expires_at,
            })
        })
        .collect())
}

fn decode_hex(text: &str) -> Option<SecretHash> {
    let mut hash = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (index, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(hash)
}

/// A fresh admin secret: `*:*.` and 56 random hex characters.
fn generate_admin_secret() -> Result<String, ApiError> {
    Ok(format!("*:*.{}", random_hex(SECRET_RANDOM_BYTES)?))
}

/// 400 `ExceedsLimitError` when one more API token would pass the apiTokens limit.
async fn ensure_token_room(tx: &mut WriteTx, limits: &Limits) -> Result<(), ApiError> {
    let count = token_store::count(tx.conn()).await?;
    limits::ensure_within(
        "apiTokens",
        "API tokens",
        usize::try_from(count)
            .unwrap_or(usize::MAX)
            .saturating_add(1),
        limits.api_tokens,
    )
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
    let hash = sha256_hex(secret);
    if token_store::get_by_hash(tx.conn(), &hash).await?.is_some() {
        return Ok(());
    }
    ensure_token_room(tx, limits).await?;
    let (projects, environment) = match kind {
        TokenKind::Admin => (vec!["*".to_owned()], "*".to_owned()),
        TokenKind::Client | TokenKind::Frontend => parse_scope(secret).ok_or_else(|| {
            ApiError::validation(format!(
                "{name}: a {} token must look like <project or *>:<environment>.<random>",
                kind.as_str()
            ))
        })?,
        TokenKind::Edge => parse_scope(secret)
            .filter(|(projects, _)| projects == &["*"])
            .ok_or_else(|| {
                ApiError::validation(format!(
                    "{name}: an edge token must look like *:<environment or *>.<random>"
                ))
            })?,
    };
    let row = TokenRow {
        name,
        secret_hash: hash,
        kind,
        projects,
        environment,
        expires_at: None,
        created_at: tx.now(),
        seen_at: None,
    };
    token_store::insert(tx.conn(), &row).await?;
    let token = view(row, None);
    tx.record(NewEvent {
        event_type: EventType::ApiTokenCreated.as_str(),
        environment: Some(token.environment.clone()),
        data: Some(payload(&token)),
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
    pub edge: Vec<String>,
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
        (TokenKind::Edge, &tokens.edge),
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
    if create_first_admin && token_store::count_of_kind(tx.conn(), TokenKind::Admin).await? == 0 {
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
