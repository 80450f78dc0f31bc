//! One extractor per concern, each rejecting with `ApiError`: the evaluation context from the query
//! ([`QueryContext`]), the caller's IP ([`ClientIp`]), the ETag a browser already has ([`IfNoneMatch`]), the
//! coding it accepts the answer in ([`AcceptEncoding`]),
//! and the token's scope ([`FrontendScope`], [`ClientScope`]) checked against the current snapshot.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::{ACCEPT_ENCODING, AUTHORIZATION, IF_NONE_MATCH};
use axum::http::request::Parts;
use axum::http::HeaderValue;
use vexil_shared::time::now_ms;
use vexil_shared::token::{self, SecretHash, TokenKind};
use vexil_shared::{ApiError, Context, ErrorKind, Projects};

use crate::answer_encoding::Encoding;
use crate::snapshot::{EnvironmentView, ServingSnapshot, TokenGrant};
use crate::state::ServingState;
use crate::usage::Poster;

/// The evaluation context of a `GET` (API.md §5): top-level fields by name, `properties[x]=y` and every
/// other `x=y` into properties (an explicit `properties[x]` wins), empty values absent, the last of a
/// repeated key wins.
pub struct QueryContext(pub Context);

impl<S: Send + Sync> FromRequestParts<S> for QueryContext {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        Ok(QueryContext(context_of_query(
            parts.uri.query().unwrap_or(""),
        )))
    }
}

fn context_of_query(query: &str) -> Context {
    let mut ctx = Context::default();
    let mut explicit = std::collections::BTreeMap::new();
    for (key, value) in query_pairs(query) {
        let value = (!value.is_empty()).then(|| value.into_owned());
        let slot = match &*key {
            "appName" => &mut ctx.app_name,
            "environment" => &mut ctx.environment,
            "userId" => &mut ctx.user_id,
            "sessionId" => &mut ctx.session_id,
            "remoteAddress" => &mut ctx.remote_address,
            "currentTime" => &mut ctx.current_time,
            other => {
                let (map, name) = match other
                    .strip_prefix("properties[")
                    .and_then(|r| r.strip_suffix(']'))
                {
                    Some(name) => (&mut explicit, name),
                    None => (&mut ctx.properties, other),
                };
                match value {
                    Some(value) => map.insert(name.to_owned(), value),
                    None => map.remove(name),
                };
                continue;
            }
        };
        *slot = value;
    }
    ctx.properties.extend(explicit);
    ctx
}

/// The query's `key=value` pairs decoded as `application/x-www-form-urlencoded` (`form_urlencoded`), in
/// order. A pair with nothing to decode (no `%`, no `+`) is borrowed from the query as it is: the query is
/// already text, and the crate's copy and UTF-8 check of every pair were 3 % of a frontend request's
/// instructions.
fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            if pair.bytes().any(|b| b == b'%' || b == b'+') {
                form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .unwrap_or_default()
            } else {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (Cow::Borrowed(key), Cow::Borrowed(value))
            }
        })
}

/// The context of a `POST /api/frontend` body `{context:{…}}`: known fields top-level, `properties`, and
/// any other scalar key into properties. No `context` → empty; a non-object → 400.
pub fn context_of_body(body: &serde_json::Value) -> Result<Context, ApiError> {
    let Some(object) = body.as_object() else {
        return Err(ApiError::validation("the body must be a JSON object"));
    };
    let context = match object.get("context") {
        None | Some(serde_json::Value::Null) => return Ok(Context::default()),
        Some(serde_json::Value::Object(context)) => context,
        Some(_) => return Err(ApiError::validation("context must be an object")),
    };
    const KNOWN: [&str; 7] = [
        "appName",
        "environment",
        "userId",
        "sessionId",
        "remoteAddress",
        "currentTime",
        "properties",
    ];
    let mut known = serde_json::Map::new();
    let mut extra = std::collections::BTreeMap::new();
    for (key, value) in context {
        if KNOWN.contains(&key.as_str()) {
            known.insert(key.clone(), value.clone());
        } else if let Some(text) = scalar_text(value) {
            extra.insert(key.clone(), text);
        }
    }
    let mut ctx: Context = serde_json::from_value(serde_json::Value::Object(known))
        .map_err(|error| ApiError::validation(format!("context: {error}")))?;
    for (key, value) in extra {
        ctx.properties.entry(key).or_insert(value);
    }
    Ok(ctx)
}

fn scalar_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The request's `If-None-Match`: the one header the browser-facing answers read (taken alone rather than
/// with a copy of every header).
pub struct IfNoneMatch(pub Option<HeaderValue>);

impl IfNoneMatch {
    /// Whether the client already has the answer whose ETag is `etag`.
    pub fn matches(&self, etag: &str) -> bool {
        self.0
            .as_ref()
            .is_some_and(|sent| sent.as_bytes() == etag.as_bytes())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IfNoneMatch {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(IfNoneMatch(parts.headers.get(IF_NONE_MATCH).cloned()))
    }
}

/// The coding the client prefers for the answer, by its `Accept-Encoding` (`answer_encoding`); `None`: as it
/// is.
pub struct AcceptEncoding(pub Option<Encoding>);

impl<S: Send + Sync> FromRequestParts<S> for AcceptEncoding {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(AcceptEncoding(
            parts
                .headers
                .get(ACCEPT_ENCODING)
                .and_then(|value| Encoding::preferred(value.as_bytes())),
        ))
    }
}

/// The caller's IP: the first `X-Forwarded-For` hop with `--trust-proxy`, else the peer address.
pub struct ClientIp(pub Option<String>);

impl FromRequestParts<Arc<ServingState>> for ClientIp {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServingState>,
    ) -> Result<Self, ApiError> {
        if state.trust_proxy {
            let forwarded = parts
                .headers
                .get("x-forwarded-for")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .map(str::trim)
                .filter(|v| !v.is_empty());
            if let Some(ip) = forwarded {
                return Ok(ClientIp(Some(ip.to_owned())));
            }
        }
        Ok(ClientIp(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(peer)| ip_text(peer.ip())),
        ))
    }
}

/// An address as text, an IPv4 one without `fmt` (this runs on every evaluation request): the same text as
/// `Display`.
fn ip_text(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut text = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            text.push('.');
        }
        if octet >= 100 {
            text.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            text.push(char::from(b'0' + octet / 10 % 10));
        }
        text.push(char::from(b'0' + octet % 10));
    }
    text
}

/// A valid token of the right kind, with the snapshot it was checked against and the environment it reads.
pub struct Scope {
    pub snapshot: Arc<ServingSnapshot>,
    pub environment: Arc<EnvironmentView>,
    pub projects: Projects,
    /// The token is for every environment (`*`): `environment` came from the request.
    pub wildcard_environment: bool,
    /// The token's hash and its grant as checked (`None` under authentication `none`): a change stream
    /// ends when the snapshot no longer holds that grant.
    pub token: Option<(SecretHash, TokenGrant)>,
}

impl Scope {
    /// Who posts usage under this scope: the token's environment (none for a `*` token), `client_ip`, now.
    pub fn poster(&self, client_ip: Option<String>) -> Poster {
        Poster {
            environment: (!self.wildcard_environment).then(|| self.environment.name.clone()),
            client_ip,
            now_ms: now_ms(),
        }
    }
}

/// A frontend token's scope; 404 when the frontend API is off (before auth), 401 no/unknown/expired token,
/// 403 another kind.
pub struct FrontendScope(pub Scope);

/// A client (backend) token's scope; 401 no/unknown/expired token, 403 another kind. A `*`-environment
/// token reads `?environment=` (default `development`).
pub struct ClientScope(pub Scope);

impl FromRequestParts<Arc<ServingState>> for FrontendScope {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServingState>,
    ) -> Result<Self, ApiError> {
        if let Some(snapshot) = state.current.load().as_deref() {
            if !snapshot.settings.frontend_api_enabled {
                return Err(ApiError::not_found("The frontend API is disabled"));
            }
        }
        token_scope(parts, state, &[TokenKind::Frontend])
            .await
            .map(FrontendScope)
    }
}

impl FromRequestParts<Arc<ServingState>> for ClientScope {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServingState>,
    ) -> Result<Self, ApiError> {
        token_scope(parts, state, &[TokenKind::Client])
            .await
            .map(ClientScope)
    }
}

/// The scope of a checked token: its environment's view (`?environment=`, default `development`, for a
/// `*` token) and projects.
pub fn scope_of_grant(
    parts: &Parts,
    snapshot: Arc<ServingSnapshot>,
    hash: Option<SecretHash>,
    grant: &TokenGrant,
) -> Scope {
    let wildcard_environment = &*grant.environment == "*";
    let requested;
    let environment = if wildcard_environment {
        requested = form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
            .filter(|(key, value)| key == "environment" && !value.is_empty())
            .last()
            .map(|(_, value)| value);
        requested.as_deref().unwrap_or("development")
    } else {
        &grant.environment
    };
    let environment = snapshot
        .environments
        .get(environment)
        .cloned()
        .unwrap_or_else(|| Arc::new(EnvironmentView::empty(environment)));
    Scope {
        environment,
        projects: grant.projects.clone(),
        wildcard_environment,
        token: hash.map(|hash| (hash, grant.clone())),
        snapshot,
    }
}

/// The scope of a token of one of `kinds`, against the current snapshot (after the state's
/// [`crate::token_resolver::TokenResolver`], if any, was asked about a token the snapshot lacks).
pub async fn token_scope(
    parts: &Parts,
    state: &ServingState,
    kinds: &[TokenKind],
) -> Result<Scope, ApiError> {
    learn_token(parts, state).await?;
    let snapshot = state.loaded()?;
    let (hash, grant) = granted(parts, state, &snapshot, kinds)?;
    Ok(scope_of_grant(parts, Arc::clone(&snapshot), hash, grant))
}

/// Puts the request's token to the state's resolver when the snapshot does not hold it (or holds it
/// expired); nothing to do without a resolver, a token or a snapshot.
async fn learn_token(parts: &Parts, state: &ServingState) -> Result<(), ApiError> {
    if state.token_resolver.get().is_none() {
        return Ok(());
    }
    let Some(secret) = request_secret(parts) else {
        return Ok(());
    };
    learn_secret(state, secret).await
}

/// Puts `secret` to the state's resolver when the snapshot does not hold it (or holds it expired).
pub(crate) async fn learn_secret(state: &ServingState, secret: &str) -> Result<(), ApiError> {
    let Some(resolver) = state.token_resolver.get() else {
        return Ok(());
    };
    let known = state.current.load().as_deref().is_some_and(|snapshot| {
        snapshot
            .tokens
            .get(&token::sha256(secret))
            .is_some_and(|grant| !grant_expired(grant, now_ms()))
    });
    if known {
        return Ok(());
    }
    resolver.resolve(secret).await
}

/// The non-empty secret of the request's `Authorization` (or `X-API-Key`) header.
fn request_secret(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(AUTHORIZATION)
        .or_else(|| parts.headers.get("x-api-key"))?
        .to_str()
        .ok()
        .map(token::secret_of_authorization)
        .filter(|secret| !secret.is_empty())
}

/// What a call without a token may read under authentication `none`: every project, `development`.
pub(crate) static ANONYMOUS: std::sync::LazyLock<TokenGrant> = std::sync::LazyLock::new(|| {
    TokenGrant::new(
        None,
        TokenKind::Frontend,
        Projects::All,
        "development".to_owned(),
        None,
    )
});

/// The token a request carries: `Authorization` (`Bearer ` optional) or, as OpenFeature providers send it,
/// `X-API-Key`; checked by hash against the snapshot's tokens, unexpired, of one of `kinds`, and noted in
/// [`ServingState::token_sightings`]. Its hash is `None` for the anonymous grant of authentication `none`.
fn granted<'s>(
    parts: &Parts,
    state: &ServingState,
    snapshot: &'s ServingSnapshot,
    kinds: &[TokenKind],
) -> Result<(Option<SecretHash>, &'s TokenGrant), ApiError> {
    let unauthenticated = |message: &str| ApiError::new(ErrorKind::AuthenticationRequired, message);
    let Some(header) = parts
        .headers
        .get(AUTHORIZATION)
        .or_else(|| parts.headers.get("x-api-key"))
    else {
        if state.anonymous {
            return Ok((None, &ANONYMOUS));
        }
        return Err(unauthenticated(
            "An API token is required in the Authorization header",
        ));
    };
    let secret = header
        .to_str()
        .ok()
        .map(token::secret_of_authorization)
        .filter(|secret| !secret.is_empty())
        .ok_or_else(|| unauthenticated("An API token is required in the Authorization header"))?;
    let hash = crate::secret_hashes::sha256(secret, |hash| snapshot.tokens.contains_key(hash));
    let grant = snapshot
        .tokens
        .get(&hash)
        .ok_or_else(|| unauthenticated("The API token is not valid"))?;
    let now_ms = now_ms();
    if grant_expired(grant, now_ms) {
        return Err(unauthenticated("The API token has expired"));
    }
    if !kinds.contains(&grant.kind) {
        let needed: Vec<&str> = kinds.iter().map(|kind| kind.with_article()).collect();
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!("This API needs {}", needed.join(" or ")),
        ));
    }
    state.token_sightings.record(&hash, now_ms);
    Ok((Some(hash), grant))
}

/// Whether `grant` has expired at `now_ms`.
pub fn grant_expired(grant: &TokenGrant, now_ms: i64) -> bool {
    grant.expires_at_ms.is_some_and(|at| at <= now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_context_follows_the_api_table() {
        let ctx = context_of_query(
            "userId=u1&userId=u2&sessionId=&appName=web&plan=free&properties%5Bplan%5D=pro&country=se&currentTime=2026-01-01T00:00:00Z",
        );
        assert_eq!(
            ctx.user_id.as_deref(),
            Some("u2"),
            "the last of a repeated key wins"
        );
        assert_eq!(ctx.session_id, None, "an empty value is absent");
        assert_eq!(ctx.app_name.as_deref(), Some("web"));
        assert_eq!(ctx.current_time.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(
            ctx.properties["plan"], "pro",
            "an explicit properties[x] wins"
        );
        assert_eq!(ctx.properties["country"], "se");
    }

    #[test]
    fn query_pairs_decode_as_form_urlencoded_does() {
        for query in [
            "",
            "&",
            "a=1&&b=2&",
            "userId=u1&sessionId=s-9&plan=pro",
            "key&=value&a==b&c=d=e",
            "name=J%C3%B6rg+M&x%5B1%5D=%ZZ&%E2%82%AC=%FF",
            "a+b=c+d&plain=caf\u{e9}",
        ] {
            assert_eq!(
                query_pairs(query).collect::<Vec<_>>(),
                form_urlencoded::parse(query.as_bytes()).collect::<Vec<_>>(),
                "{query}"
            );
        }
    }

    #[test]
    fn ip_text_is_display_text() {
        for octets in [
            [0, 0, 0, 0],
            [255, 255, 255, 255],
            [10, 0, 100, 9],
            [127, 0, 0, 1],
            [1, 20, 199, 250],
        ] {
            let ip = IpAddr::from(octets);
            assert_eq!(ip_text(ip), ip.to_string());
        }
        let ip: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(ip_text(ip), ip.to_string());
    }

    #[test]
    fn body_context_moves_other_keys_into_properties() {
        let ctx = context_of_body(&serde_json::json!({
            "context": {"userId": 7, "tier": "gold", "properties": {"tier": "silver"}}
        }))
        .unwrap();
        assert_eq!(ctx.user_id.as_deref(), Some("7"));
        assert_eq!(ctx.properties["tier"], "silver");
        assert_eq!(
            context_of_body(&serde_json::json!({})).unwrap(),
            Context::default()
        );
        assert_eq!(
            context_of_body(&serde_json::json!({"context": 3}))
                .unwrap_err()
                .kind,
            ErrorKind::Validation
        );
    }
}
