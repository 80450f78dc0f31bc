//! The extractors: one per cross-cutting concern, each rejecting with an [`ApiError`].
//!
//! - [`AdminActor`]: the caller of an admin route (API token, personal access token or session cookie, 401)
//!   with the permission for this method in the route's [`Area`] ([`access::authorize`], 403); the area is
//!   the one the route is mounted in ([`area`]). A change asked with the session cookie (or with no
//!   credential, `--auth-type none`) must come from this instance's own pages ([`from_own_pages`], 403):
//!   a page elsewhere can make the browser send the cookie, not an `Authorization` header. [`AdminCaller`]
//!   is the same check, keeping the caller's credential for answers that depend on who reads (events).
//! - [`JsonBody`]: a JSON body (415 without a JSON content type, 413 over the limit, 400 naming the bad field).
//! - [`PathParams`] and [`QueryParams`]: typed path and query parameters (400 naming the bad one).
//! - [`ClientAddress`]: the caller's IP address (the peer, or `X-Forwarded-For` with `--trust-proxy`).

use super::route_permissions::{self, PermissionTable};
use super::AppState;
use crate::domain::access::{self, Area, Caller, Credential, Grants, Need};
use crate::domain::maintenance;
use crate::store::Actor;
use axum::body::Bytes;
use axum::extract::{
    ConnectInfo, FromRequest, FromRequestParts, MatchedPath, Path, Query, RawPathParams, Request,
};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::Extension;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use vexil_shared::{ApiError, ErrorKind};

/// The name of the session cookie `POST /auth/simple/login` sets.
pub const SESSION_COOKIE: &str = "vexil-session";

/// Mounts `routes` in the permission `area`: a route layer puts the [`Area`] into each matched request's
/// extensions, where [`AdminActor`] reads it. An admin route mounted without one answers 500, never allows.
pub fn area(area: Area, routes: OpenApiRouter<Arc<AppState>>) -> OpenApiRouter<Arc<AppState>> {
    routes.route_layer(Extension(area))
}

/// The caller of an admin route, authenticated and allowed this method in the [`Area`] the route is mounted
/// in ([`area`]). Every admin handler takes it (or [`AdminCaller`]), so this is the one place the permission
/// rule is applied. For callers in [`Area::OwnAccount`] it is always a user (`Actor::user_id` is theirs): the
/// rule gives admin tokens no own account.
pub struct AdminActor(pub Actor);

impl FromRequestParts<Arc<AppState>> for AdminActor {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let AdminCaller { actor, .. } = AdminCaller::from_request_parts(parts, state).await?;
        Ok(AdminActor(actor))
    }
}

/// [`AdminActor`] with the credential it authenticated with: for the handlers whose answer depends on who
/// reads it (events about people, `domain::events::PersonalFields`).
pub struct AdminCaller {
    pub actor: Actor,
    pub credential: Credential,
    /// What the caller holds, for the domain's checks that depend on a body (a change request's
    /// environment when it is approved or applied).
    pub grants: Grants,
}

impl FromRequestParts<Arc<AppState>> for AdminCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let Some(area) = parts.extensions.get::<Area>().copied() else {
            tracing::error!(
                method = %parts.method,
                path = parts.uri.path(),
                "an admin route is mounted without a permission area"
            );
            return Err(ApiError::internal());
        };
        let caller = if state.auth_enabled {
            let authorization = match parts.headers.get(AUTHORIZATION) {
                Some(value) => Some(value.to_str().map_err(|_| {
                    ApiError::new(
                        ErrorKind::AuthenticationRequired,
                        "The Authorization header is not valid text",
                    )
                })?),
                None => None,
            };
            let session = session_cookie(&parts.headers);
            let mut conn = state.store.read().await?;
            access::authenticate(&mut conn, authorization, session.as_deref()).await?
        } else {
            Caller::unauthenticated_admin()
        };
        let read = parts.method == Method::GET || parts.method == Method::HEAD;
        // Only an `Authorization` header is a credential no other page can make the browser send.
        let ambient = !state.auth_enabled || !parts.headers.contains_key(AUTHORIZATION);
        if ambient && !read && !from_own_pages(parts, state.trust_proxy) {
            return Err(ApiError::new(
                ErrorKind::NoAccess,
                "A change made with the session cookie must come from this site's own pages (the \
                 browser says it came from another origin); API clients send a token in the \
                 Authorization header",
            ));
        }
        let need = need_of(parts, state, read, area).await?;
        access::authorize(caller.credential, &caller.grants, &need)?;
        if !read && paused_by_maintenance(parts, state, area).await? {
            return Err(maintenance::refusal());
        }
        // A token let in is noted as used (written as its `seenAt` within an interval).
        if let Some(hash) = &caller.token {
            state.token_sightings.record(hash, (state.clock)());
        }
        Ok(AdminCaller {
            actor: caller.actor,
            credential: caller.credential,
            grants: caller.grants,
        })
    }
}

/// What an admin request needs: in [`Area::Configuration`] the permission its route declares (in the
/// [`PermissionTable`] its router was mounted with: `http::admin::PERMISSIONS`) where its path says;
/// elsewhere the area's rule.
/// Whether maintenance mode stops this change: every admin write but switching maintenance mode, the
/// caller's own account and the reads asked with a body.
async fn paused_by_maintenance(
    parts: &Parts,
    state: &Arc<AppState>,
    area: Area,
) -> Result<bool, ApiError> {
    if matches!(area, Area::OwnAccount | Area::ConfigurationQuery) {
        return Ok(false);
    }
    let switching = parts
        .extensions
        .get::<MatchedPath>()
        .and_then(|matched| matched.as_str().strip_prefix(state.base_path.as_str()))
        == Some(maintenance::SWITCH_PATH);
    if switching {
        return Ok(false);
    }
    let mut conn = state.store.read().await?;
    maintenance::is_on(&mut conn).await
}

async fn need_of(
    parts: &mut Parts,
    state: &Arc<AppState>,
    read: bool,
    area: Area,
) -> Result<Need, ApiError> {
    if area != Area::Configuration {
        return Ok(Need::area(read, area));
    }
    let declared = parts
        .extensions
        .get::<PermissionTable>()
        .copied()
        .and_then(|PermissionTable(table)| {
            route_permissions::declared_for(parts, table, &state.base_path)
        })
        .map(|entry| entry.permission);
    let Some(permission) = declared else {
        return Ok(Need::area(read, area));
    };
    let params = path_params(parts, state).await;
    let mut conn = state.store.read().await?;
    let scope = route_permissions::scope_of(&mut conn, &params, None).await?;
    Ok(Need {
        read,
        area,
        permission: Some(permission),
        scope,
    })
}

/// The request's path parameters by name (none when the route has none).
pub async fn path_params<S: Send + Sync>(parts: &mut Parts, state: &S) -> Vec<(String, String)> {
    match RawPathParams::from_request_parts(parts, state).await {
        Ok(params) => params
            .iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Whether a request comes from this instance's own pages, as far as the browser tells: by `Sec-Fetch-Site`
/// when it sends it (`same-origin`, or `none` for a request the user made themselves), else by `Origin`,
/// else by `Referer`, compared with this instance's origin: the `Host` (over http or https), or behind
/// `--trust-proxy` the `X-Forwarded-Host` and `X-Forwarded-Proto` the proxy sets (a page cannot add those
/// headers to a cross-origin request without a CORS preflight, which the admin API does not answer). A
/// request with none of the three is no browser's (every browser sends `Origin` with a cross-origin POST):
/// a script holding the cookie, which no page elsewhere can have made.
pub fn from_own_pages(parts: &Parts, trust_proxy: bool) -> bool {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(site) = header("sec-fetch-site") {
        return site.eq_ignore_ascii_case("same-origin") || site.eq_ignore_ascii_case("none");
    }
    let Some(claimed) = header("origin").or_else(|| header("referer")) else {
        return true;
    };
    let Ok(claimed) = url::Url::parse(claimed) else {
        // `Origin: null` (a sandboxed or privacy-sensitive context) included.
        return false;
    };
    let forwarded = |name: &str| {
        trust_proxy
            .then(|| header(name))
            .flatten()
            .and_then(|value| value.split(',').next())
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    let Some(host) = forwarded("x-forwarded-host")
        .or_else(|| header("host"))
        .or_else(|| parts.uri.authority().map(|authority| authority.as_str()))
    else {
        return false;
    };
    let schemes: &[&str] = match forwarded("x-forwarded-proto") {
        Some(proto) if proto.eq_ignore_ascii_case("https") => &["https"],
        Some(proto) if proto.eq_ignore_ascii_case("http") => &["http"],
        // A proxy that ends TLS without saying so, or none.
        _ => &["http", "https"],
    };
    schemes.iter().any(|scheme| {
        url::Url::parse(&format!("{scheme}://{host}"))
            .is_ok_and(|own| own.origin() == claimed.origin())
    })
}

/// The value of the session cookie, if the request carries one.
fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == SESSION_COOKIE)
        .map(|cookie| cookie.value().to_owned())
}

/// Whether the request reached us over https, as the proxy in front says (`X-Forwarded-Proto: https`): the
/// cookies set on it are `Secure` (the API's sign-in and the UI's alike). A client that sends it itself
/// only makes its own cookie stricter.
pub fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(',').next())
        .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
}

/// A path parameter that must be an integer (a role's or user's id), or 400 naming it.
pub fn integer_param(name: &str, text: &str) -> Result<i64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::validation(format!("{name} must be an integer, not {text}")))
}

/// A JSON request body deserialized into `T`.
pub struct JsonBody<T>(pub T);

fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Parses a JSON body; errors name the JSON path of the bad field. A body holding a NUL character (the
/// escape `\u0000`: a raw one is not JSON) is refused, as no database stores NUL in text.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if holds_escaped_nul(bytes) {
        return Err(ApiError::validation(
            "The body holds a NUL character (\\u0000), which no value may contain",
        ));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::validation(format!("The body is not valid JSON: {inner}"))
        } else if path == "." {
            ApiError::validation(format!("Invalid body: {inner}"))
        } else {
            ApiError::validation(format!("Invalid body at {path}: {inner}"))
        }
    })?;
    deserializer
        .end()
        .map_err(|error| ApiError::validation(format!("The body is not valid JSON: {error}")))?;
    Ok(value)
}

/// Whether JSON text holds the escape `\u0000` (and not an escaped backslash followed by `u0000`).
fn holds_escaped_nul(bytes: &[u8]) -> bool {
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'\\' {
            if bytes.get(index + 1..index + 6) == Some(b"u0000") {
                return true;
            }
            index += 2;
        } else {
            index += 1;
        }
    }
    false
}

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json_content_type(request.headers()) {
            return Err(ApiError::new(
                ErrorKind::ContentType,
                "The body must be JSON, sent with Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        ErrorKind::PayloadTooLarge,
                        "The body is larger than the configured limit",
                    )
                } else {
                    ApiError::validation(format!(
                        "The body could not be read: {}",
                        rejection.body_text()
                    ))
                }
            })?;
        Ok(JsonBody(parse_json(&bytes)?))
    }
}

/// Path parameters deserialized into `T`.
pub struct PathParams<T>(pub T);

impl<S, T> FromRequestParts<S> for PathParams<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(params) = Path::<T>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::validation(rejection.body_text()))?;
        Ok(PathParams(params))
    }
}

/// Query parameters deserialized into `T`.
pub struct QueryParams<T>(pub T);

impl<S, T> FromRequestParts<S> for QueryParams<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Query(params) = Query::<T>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::validation(rejection.body_text()))?;
        Ok(QueryParams(params))
    }
}

/// The caller's IP address: the connection's peer, or with `--trust-proxy` the first `X-Forwarded-For` hop
/// when it is an address (as the serving routes take it). `None` only without connection information.
pub struct ClientAddress(pub Option<IpAddr>);

impl FromRequestParts<Arc<AppState>> for ClientAddress {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let forwarded = state
            .trust_proxy
            .then(|| parts.headers.get("x-forwarded-for"))
            .flatten()
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(',').next())
            .map(str::trim)
            .and_then(|hop| {
                hop.parse::<IpAddr>()
                    .ok()
                    .or_else(|| hop.parse::<SocketAddr>().ok().map(|at| at.ip()))
            });
        let peer = || {
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(peer)| peer.ip())
        };
        Ok(ClientAddress(forwarded.or_else(peer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// An admin route mounted without an area answers 500 before anything else, and is served with one.
    #[tokio::test]
    async fn an_admin_actor_without_an_area_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
        let state = Arc::new(AppState {
            store: crate::store::Store::connect(&url).await.unwrap(),
            auth_enabled: false,
            sign_in_config: crate::domain::sso_settings::SignInConfig {
                password_flag: true,
                oidc_env: None,
                saml_env: None,
            },
            oidc: Default::default(),
            base_path: String::new(),
            prometheus: metrics_exporter_prometheus::PrometheusBuilder::new()
                .build_recorder()
                .handle(),
            openapi: serde_json::Value::Null,
            limits: Default::default(),
            clock: Arc::new(|| 0),
            published: tokio::sync::watch::channel(Arc::new(
                crate::publisher::published::Published::first(Default::default()),
            ))
            .1,
            trust_proxy: false,
            sdk_url: None,
            token_sightings: Default::default(),
            playground: Default::default(),
            sign_in: Default::default(),
            password_work: Default::default(),
            webhook_targets: Default::default(),
            serving: Default::default(),
            mailer: None,
            public_url: None,
            reset_requests: Default::default(),
            signal_received: Default::default(),
        });
        let request = axum::http::Request::post("/api/admin/projects").body(());
        let (mut parts, ()) = request.unwrap().into_parts();
        let Err(error) = AdminActor::from_request_parts(&mut parts, &state).await else {
            panic!("allowed without an area");
        };
        assert_eq!(error.kind, ErrorKind::Internal);
        parts.extensions.insert(Area::Configuration);
        let Ok(AdminActor(actor)) = AdminActor::from_request_parts(&mut parts, &state).await else {
            panic!("refused in its area");
        };
        assert_eq!(actor, Actor::token("admin"));
        parts.extensions.insert(Area::OwnAccount);
        let Err(error) = AdminActor::from_request_parts(&mut parts, &state).await else {
            panic!("an admin token has no own account");
        };
        assert_eq!(error.kind, ErrorKind::NoAccess);
    }

    #[derive(Debug, Deserialize)]
    struct Body {
        name: String,
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    struct Item {
        weight: u32,
    }

    #[test]
    fn parses_a_good_body() {
        let body = parse_json::<Body>(br#"{"name":"x","items":[{"weight":3}],"extra":1}"#).unwrap();
        assert_eq!(body.name, "x");
        assert_eq!(body.items[0].weight, 3);
    }

    #[test]
    fn errors_name_the_bad_field() {
        let error =
            parse_json::<Body>(br#"{"name":"x","items":[{"weight":"heavy"}]}"#).unwrap_err();
        assert!(
            error.message.contains("items[0].weight"),
            "{}",
            error.message
        );
        let error = parse_json::<Body>(br#"{"items":[]}"#).unwrap_err();
        assert!(
            error.message.contains("missing field `name`"),
            "{}",
            error.message
        );
        let error = parse_json::<Body>(br#"{"name":"#).unwrap_err();
        assert!(
            error.message.starts_with("The body is not valid JSON"),
            "{}",
            error.message
        );
        let error = parse_json::<Body>(br#"{"name":"x","items":[]} trailing"#).unwrap_err();
        assert!(
            error.message.starts_with("The body is not valid JSON"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_nul_escape_is_refused_and_an_escaped_backslash_is_not_one() {
        assert!(holds_escaped_nul(br#"{"a":"x\u0000"}"#));
        assert!(holds_escaped_nul(br#"{"a\u0000":1}"#));
        assert!(holds_escaped_nul(br#"["\\\u0000"]"#));
        assert!(!holds_escaped_nul(br#"["\\u0000"]"#));
        assert!(!holds_escaped_nul(br#"{"a":"u0000 \u0001"}"#));
        let error = parse_json::<serde_json::Value>(br#"{"a":"\u0000"}"#).unwrap_err();
        assert!(error.message.contains("NUL"), "{}", error.message);
    }
}
