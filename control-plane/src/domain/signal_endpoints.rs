//! Signal endpoints (`/api/admin/signal-endpoints…`, Unleash's Enterprise schemas): named URLs
//! (`POST <base>/api/signal-endpoint/:name`) where another system (an alert manager, a CI job) posts any JSON
//! with one of the endpoint's tokens (`Authorization: Bearer <token>`); each post is kept as a signal, which
//! `crate::actions` then matches against the action sets listening to the endpoint. A token is shown once,
//! when it is created; only its SHA-256 is stored, and a presented one is hashed and compared with each of
//! the endpoint's in constant time. Limits: `signalEndpoints`, `signalTokensPerEndpoint`. Every change is an
//! event (`signal-endpoint-*`, `signal-endpoint-token-*`) that never carries a token or its hash.

use super::events::{payload, EventType};
use super::limits::{ensure_within, Limits};
use super::tokens::{random_hex, SECRET_RANDOM_BYTES};
use crate::model::action_set::SIGNAL_ENDPOINT_SOURCE;
use crate::model::name;
use crate::store::signals::{self as store, EndpointRow, SignalRow, TokenRow};
use crate::store::{Counter, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyConnection;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use vexil_shared::{token, ApiError, ErrorKind};

/// The largest body the receiver takes (413 past it).
pub const SIGNAL_BODY_LIMIT: usize = 64 * 1024;

/// How many signals `GET …/:id/signals` shows: the latest.
const LATEST_SIGNALS: i64 = 50;

/// The longest token name.
const MAX_TOKEN_NAME: usize = 100;

/// signalEndpointSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpoint {
    #[schema(minimum = 1)]
    pub id: i64,
    pub enabled: bool,
    pub name: String,
    pub description: Option<String>,
    pub created_at: String,
    pub created_by_user_id: i64,
    /// Where other systems post its signals: `<instance>/api/signal-endpoint/<name>` (in the API's answers,
    /// not in events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its tokens, without secrets.
    pub tokens: Vec<SignalEndpointToken>,
}

impl SignalEndpoint {
    /// The endpoint with its receiver's URL on the instance at `site` (origin and base path).
    pub fn at(self, site: &str) -> SignalEndpoint {
        SignalEndpoint {
            url: Some(receiver_url(site, &self.name)),
            ..self
        }
    }
}

/// Where other systems post the signals of endpoint `name`, on the instance at `site`.
pub fn receiver_url(site: &str, name: &str) -> String {
    format!("{site}/api/signal-endpoint/{name}")
}

/// signalEndpointsSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpoints {
    pub signal_endpoints: Vec<SignalEndpoint>,
}

/// createSignalEndpointSchema (`POST`), also the body of `PUT` (an absent `enabled` keeps the switch).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateSignalEndpoint {
    /// URL-safe, 1 to 100 characters, unique: the receiver's path.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Up to 1,000 characters; on `PUT`, absent keeps it and empty removes it.
    #[schema(max_length = 1000)]
    pub description: Option<String>,
    /// Default on creation: true.
    pub enabled: Option<bool>,
}

/// signalEndpointTokenSchema: `token` only in the answer that created it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpointToken {
    #[schema(minimum = 1)]
    pub id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    pub name: String,
    pub signal_endpoint_id: i64,
    pub created_at: String,
    pub created_by_user_id: i64,
}

/// signalEndpointTokensSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpointTokens {
    pub signal_endpoint_tokens: Vec<SignalEndpointToken>,
}

/// createSignalEndpointTokenSchema (`POST` and `PUT` of a token).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CreateSignalEndpointToken {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
}

/// signalEndpointSignalSchema: a received signal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpointSignal {
    pub id: i64,
    /// The JSON body as it was posted.
    #[schema(value_type = Object)]
    pub payload: Value,
    pub created_at: String,
    /// Always `signal-endpoint`.
    pub source: String,
    pub source_id: i64,
    /// The name of the token it came with.
    pub token_name: Option<String>,
}

/// signalEndpointSignalsSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalEndpointSignals {
    pub signal_endpoint_signals: Vec<SignalEndpointSignal>,
}

fn token_view(row: &TokenRow) -> SignalEndpointToken {
    SignalEndpointToken {
        id: row.id,
        token: None,
        name: row.name.clone(),
        signal_endpoint_id: row.signal_endpoint_id,
        created_at: row.created_at.to_string(),
        created_by_user_id: row.created_by_user_id,
    }
}

fn view(row: &EndpointRow, tokens: &[TokenRow]) -> SignalEndpoint {
    SignalEndpoint {
        id: row.id,
        enabled: row.enabled,
        name: row.name.clone(),
        description: row.description.clone(),
        created_at: row.created_at.to_string(),
        created_by_user_id: row.created_by_user_id,
        url: None,
        tokens: tokens.iter().map(token_view).collect(),
    }
}

/// A signal as the API shows it.
pub fn signal_view(row: &SignalRow) -> SignalEndpointSignal {
    SignalEndpointSignal {
        id: row.id,
        payload: row.payload.clone(),
        created_at: row.created_at.to_string(),
        source: row.source.clone(),
        source_id: row.source_id,
        token_name: row.token_name.clone(),
    }
}

/// The endpoint row or 404.
pub async fn require(conn: &mut AnyConnection, id: i64) -> Result<EndpointRow, ApiError> {
    store::endpoint(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Signal endpoint {id} does not exist")))
}

/// Every endpoint with its tokens.
pub async fn list(conn: &mut AnyConnection) -> Result<SignalEndpoints, ApiError> {
    let mut signal_endpoints = Vec::new();
    for row in store::endpoints(conn).await? {
        let tokens = store::tokens(conn, row.id).await?;
        signal_endpoints.push(view(&row, &tokens));
    }
    Ok(SignalEndpoints { signal_endpoints })
}

/// One endpoint with its tokens (404).
pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<SignalEndpoint, ApiError> {
    let row = require(conn, id).await?;
    let tokens = store::tokens(conn, id).await?;
    Ok(view(&row, &tokens))
}

async fn check_name(tx: &mut WriteTx, value: &str, id: i64) -> Result<String, ApiError> {
    let value = value.trim().to_owned();
    name::validate("name", &value)?;
    if store::endpoint_named(tx.conn(), &value)
        .await?
        .is_some_and(|other| other.id != id)
    {
        return Err(ApiError::name_exists(format!(
            "A signal endpoint named {value} already exists"
        ))
        .at_field("name"));
    }
    Ok(value)
}

/// A description as given (trimmed), 400 past 1,000 characters.
fn check_description(value: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(text) = value.map(str::trim) else {
        return Ok(None);
    };
    if text.chars().count() > 1000 {
        return Err(ApiError::invalid_field(
            "description",
            "description must be at most 1000 characters long",
        ));
    }
    Ok(Some(text.to_owned()))
}

fn endpoint_event(
    event_type: EventType,
    data: Option<&SignalEndpoint>,
    pre_data: Option<&SignalEndpoint>,
) -> crate::store::NewEvent {
    let shown = |endpoint: &SignalEndpoint| {
        payload(&SignalEndpoint {
            tokens: Vec::new(),
            ..endpoint.clone()
        })
    };
    event_type.instance_wide(data.map(shown), pre_data.map(shown))
}

/// Creates an endpoint: 400 for a bad name or past `signalEndpoints`, 409 for a name in use.
pub async fn create(
    tx: &mut WriteTx,
    input: CreateSignalEndpoint,
    limits: &Limits,
) -> Result<SignalEndpoint, ApiError> {
    let name = check_name(tx, &input.name, 0).await?;
    let count = store::count_endpoints(tx.conn()).await?;
    ensure_within(
        "signalEndpoints",
        "signal endpoints",
        usize::try_from(count).unwrap_or(usize::MAX) + 1,
        limits.signal_endpoints,
    )?;
    let row = EndpointRow {
        id: tx.next_id(Counter::SignalEndpoint).await?,
        name,
        description: check_description(input.description.as_deref())?
            .filter(|text| !text.is_empty()),
        enabled: input.enabled.unwrap_or(true),
        created_at: tx.now(),
        created_by_user_id: tx.actor().user_id,
    };
    store::insert_endpoint(tx.conn(), &row).await?;
    let endpoint = view(&row, &[]);
    tx.record(endpoint_event(
        EventType::SignalEndpointCreated,
        Some(&endpoint),
        None,
    ))
    .await?;
    Ok(endpoint)
}

/// Renames or switches an endpoint (404, 400, 409); no change, no event.
pub async fn update(
    tx: &mut WriteTx,
    id: i64,
    input: CreateSignalEndpoint,
) -> Result<SignalEndpoint, ApiError> {
    let before = require(tx.conn(), id).await?;
    let name = check_name(tx, &input.name, id).await?;
    let description = match check_description(input.description.as_deref())? {
        None => before.description.clone(),
        Some(text) => Some(text).filter(|text| !text.is_empty()),
    };
    let after = EndpointRow {
        name,
        description,
        enabled: input.enabled.unwrap_or(before.enabled),
        ..before.clone()
    };
    let tokens = store::tokens(tx.conn(), id).await?;
    let endpoint = view(&after, &tokens);
    if after != before {
        store::update_endpoint(tx.conn(), &after).await?;
        tx.record(endpoint_event(
            EventType::SignalEndpointUpdated,
            Some(&endpoint),
            Some(&view(&before, &[])),
        ))
        .await?;
    }
    Ok(endpoint)
}

/// Deletes an endpoint with its tokens and signals (404).
pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let before = view(&require(tx.conn(), id).await?, &[]);
    store::delete_endpoint(tx.conn(), id).await?;
    tx.record(endpoint_event(
        EventType::SignalEndpointDeleted,
        None,
        Some(&before),
    ))
    .await?;
    Ok(())
}

/// The tokens of an endpoint (404), without secrets.
pub async fn tokens(conn: &mut AnyConnection, id: i64) -> Result<SignalEndpointTokens, ApiError> {
    require(conn, id).await?;
    Ok(SignalEndpointTokens {
        signal_endpoint_tokens: store::tokens(conn, id)
            .await?
            .iter()
            .map(token_view)
            .collect(),
    })
}

fn check_token_name(value: &str) -> Result<String, ApiError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > MAX_TOKEN_NAME {
        return Err(ApiError::invalid_field(
            "name",
            format!("name must be 1 to {MAX_TOKEN_NAME} characters long"),
        ));
    }
    Ok(value.to_owned())
}

fn token_event(
    event_type: EventType,
    data: Option<&SignalEndpointToken>,
    pre_data: Option<&SignalEndpointToken>,
) -> crate::store::NewEvent {
    event_type.instance_wide(data.map(payload), pre_data.map(payload))
}

/// A new token of endpoint `id` (404, 400 past `signalTokensPerEndpoint`): the answer holds its secret, the
/// only time it is shown.
pub async fn create_token(
    tx: &mut WriteTx,
    id: i64,
    input: CreateSignalEndpointToken,
    limits: &Limits,
) -> Result<SignalEndpointToken, ApiError> {
    require(tx.conn(), id).await?;
    let name = check_token_name(&input.name)?;
    let existing = store::tokens(tx.conn(), id).await?;
    ensure_within(
        "signalTokensPerEndpoint",
        "this endpoint's tokens",
        existing.len() + 1,
        limits.signal_tokens_per_endpoint,
    )?;
    let secret = random_hex(SECRET_RANDOM_BYTES)?;
    let row = TokenRow {
        id: tx.next_id(Counter::SignalEndpointToken).await?,
        signal_endpoint_id: id,
        name,
        token_hash: token::sha256_hex(&secret),
        created_at: tx.now(),
        created_by_user_id: tx.actor().user_id,
    };
    store::insert_token(tx.conn(), &row).await?;
    let shown = token_view(&row);
    tx.record(token_event(
        EventType::SignalEndpointTokenCreated,
        Some(&shown),
        None,
    ))
    .await?;
    Ok(SignalEndpointToken {
        token: Some(secret),
        ..shown
    })
}

async fn require_token(tx: &mut WriteTx, id: i64, token_id: i64) -> Result<TokenRow, ApiError> {
    require(tx.conn(), id).await?;
    store::tokens(tx.conn(), id)
        .await?
        .into_iter()
        .find(|row| row.id == token_id)
        .ok_or_else(|| ApiError::not_found(format!("Signal endpoint {id} has no token {token_id}")))
}

/// Renames a token (404, 400); no change, no event.
pub async fn rename_token(
    tx: &mut WriteTx,
    id: i64,
    token_id: i64,
    input: CreateSignalEndpointToken,
) -> Result<SignalEndpointToken, ApiError> {
    let before = require_token(tx, id, token_id).await?;
    let name = check_token_name(&input.name)?;
    let after = TokenRow {
        name,
        ..before.clone()
    };
    if after != before {
        store::rename_token(tx.conn(), token_id, &after.name).await?;
        tx.record(token_event(
            EventType::SignalEndpointTokenUpdated,
            Some(&token_view(&after)),
            Some(&token_view(&before)),
        ))
        .await?;
    }
    Ok(token_view(&after))
}

/// Deletes a token (404): it stops working at once.
pub async fn delete_token(tx: &mut WriteTx, id: i64, token_id: i64) -> Result<(), ApiError> {
    let before = require_token(tx, id, token_id).await?;
    store::delete_token(tx.conn(), token_id).await?;
    tx.record(token_event(
        EventType::SignalEndpointTokenDeleted,
        None,
        Some(&token_view(&before)),
    ))
    .await?;
    Ok(())
}

/// The latest signals of endpoint `id` (404), the newest first.
pub async fn signals(conn: &mut AnyConnection, id: i64) -> Result<SignalEndpointSignals, ApiError> {
    require(conn, id).await?;
    Ok(SignalEndpointSignals {
        signal_endpoint_signals: store::latest(conn, id, LATEST_SIGNALS)
            .await?
            .iter()
            .map(signal_view)
            .collect(),
    })
}

/// The receiver: keeps `body` as a signal of the endpoint named `name` when `authorization` carries one of
/// its tokens. 404 for no such endpoint, 401 without a token or with another one, 403 while it is disabled.
/// Returns the signal's id. `conn` is a plain connection: a signal is no configuration write.
pub async fn receive(
    conn: &mut AnyConnection,
    name: &str,
    authorization: Option<&str>,
    body: &Value,
) -> Result<i64, ApiError> {
    let endpoint = store::endpoint_named(conn, name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No signal endpoint is named {name}")))?;
    let unauthenticated = |message: &str| ApiError::new(ErrorKind::AuthenticationRequired, message);
    let secret = authorization
        .map(token::secret_of_authorization)
        .filter(|secret| !secret.is_empty())
        .ok_or_else(|| {
            unauthenticated("Send one of the endpoint's tokens as Authorization: Bearer <token>")
        })?;
    let presented = token::sha256_hex(secret);
    let mut matched = None;
    for row in store::tokens(conn, endpoint.id).await? {
        if bool::from(presented.as_bytes().ct_eq(row.token_hash.as_bytes())) {
            matched = Some(row);
        }
    }
    let token =
        matched.ok_or_else(|| unauthenticated("The token is not one of this endpoint's"))?;
    if !endpoint.enabled {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!("The signal endpoint {name} is disabled"),
        ));
    }
    let source = (SIGNAL_ENDPOINT_SOURCE, endpoint.id);
    Ok(store::insert_signal(conn, source, &token, body, Timestamp::now()).await?)
}
