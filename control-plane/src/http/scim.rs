//! SCIM 2.0 at `<base>/scim/v2` (`domain::scim`): Users, Groups, ServiceProviderConfig, ResourceTypes,
//! Schemas. Every answer, errors included, is `application/scim+json`; errors are SCIM Error objects (`status`
//! as a string, `scimType`), never the admin API's `{id,name,message}`. Every request carries the SCIM token
//! as `Authorization: Bearer …`, checked by [`ScimCaller`] through `domain::access` (`authenticate_scim`, then
//! `authorize` in `Area::Scim`). An unknown path below `/scim/v2` is a SCIM 404.

use super::admin::ui_config::request_origin;
use super::extract::parse_json;
use super::AppState;
use crate::domain::access::{self, Area, Credential};
use crate::domain::scim::{self, discovery, AttributesQuery, Endpoint, ListQuery, ScimError};
use crate::store::{Actor, StoreError};
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::ApiError;

/// The SCIM media type.
pub const SCIM_JSON: &str = "application/scim+json";

/// Where the SCIM routes are, below the base path.
pub const PATH: &str = "/scim/v2";

/// The SCIM routes, as stated in the handlers' `#[utoipa::path]`, and the SCIM 404 for any other path below.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(scim_service_provider_config))
        .routes(routes!(scim_resource_types))
        .routes(routes!(scim_resource_type))
        .routes(routes!(scim_schemas))
        .routes(routes!(scim_schema))
        .routes(routes!(scim_list_users, scim_create_user))
        .routes(routes!(
            scim_get_user,
            scim_replace_user,
            scim_patch_user,
            scim_delete_user
        ))
        .routes(routes!(scim_list_groups, scim_create_group))
        .routes(routes!(
            scim_get_group,
            scim_replace_group,
            scim_patch_group,
            scim_delete_group
        ))
        .routes(routes!(scim_search))
        .route("/scim/v2/{*rest}", axum::routing::any(unknown))
}

/// A SCIM answer: a status and a JSON body (none for 204), as `application/scim+json`.
pub struct ScimReply(pub StatusCode, pub Option<Value>);

impl IntoResponse for ScimReply {
    fn into_response(self) -> Response {
        let ScimReply(status, body) = self;
        let mut response = match body {
            Some(body) => (status, body.to_string()).into_response(),
            None => status.into_response(),
        };
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(SCIM_JSON));
        response
    }
}

/// A refused SCIM request: a SCIM Error body.
pub struct ScimFailure(pub ScimError);

impl IntoResponse for ScimFailure {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ScimReply(status, Some(self.0.body())).into_response()
    }
}

impl From<ScimError> for ScimFailure {
    fn from(error: ScimError) -> Self {
        ScimFailure(error)
    }
}

impl From<ApiError> for ScimFailure {
    fn from(error: ApiError) -> Self {
        ScimFailure(error.into())
    }
}

impl From<StoreError> for ScimFailure {
    fn from(error: StoreError) -> Self {
        ScimFailure(error.into())
    }
}

type Answer = Result<ScimReply, ScimFailure>;

fn ok(body: Value) -> Answer {
    Ok(ScimReply(StatusCode::OK, Some(body)))
}

/// The identity provider calling `/scim/v2` with the SCIM token (401/403 as SCIM errors otherwise).
pub struct ScimCaller(pub Actor);

impl FromRequestParts<Arc<AppState>> for ScimCaller {
    type Rejection = ScimFailure;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ScimFailure> {
        let authorization = match parts.headers.get(AUTHORIZATION) {
            Some(value) => Some(value.to_str().map_err(|_| {
                ScimError::new(401, None, "The Authorization header is not valid text")
            })?),
            None => None,
        };
        let caller = {
            let mut conn = state.store.read().await?;
            access::authenticate_scim(&mut conn, authorization).await?
        };
        let read = parts.method == Method::GET || parts.method == Method::HEAD;
        access::authorize(
            caller.credential,
            &caller.grants,
            &access::Need::area(read, Area::Scim),
        )?;
        debug_assert_eq!(caller.credential, Credential::Scim);
        Ok(ScimCaller(caller.actor))
    }
}

fn endpoint(state: &AppState, headers: &HeaderMap) -> Endpoint {
    Endpoint {
        base_url: format!("{}{}/scim/v2", request_origin(headers), state.base_path),
    }
}

fn body(bytes: &Bytes) -> Result<Value, ScimFailure> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ScimError::bad("invalidSyntax", "The request needs a JSON body").into());
    }
    parse_json::<Value>(bytes)
        .map_err(|error| ScimError::bad("invalidSyntax", error.message).into())
}

fn query<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ScimFailure> {
    query
        .map(|Query(query)| query)
        .map_err(|rejection| ScimError::bad("invalidValue", rejection.body_text()).into())
}

async fn write<F>(state: &AppState, actor: &Actor, status: StatusCode, change: F) -> Answer
where
    F: AsyncFnOnce(&mut crate::store::WriteTx) -> Result<Option<Value>, ScimError>,
{
    let mut tx = state.store.begin_write(actor).await?;
    let body = change(&mut tx).await?;
    state.commit(tx).await?;
    Ok(ScimReply(status, body))
}

/// Any other path below `/scim/v2`.
pub async fn unknown() -> ScimFailure {
    ScimFailure(ScimError::not_found("No such SCIM endpoint: /Users, /Groups, /ServiceProviderConfig, /ResourceTypes and /Schemas are served"))
}

#[utoipa::path(
    get, path = "/scim/v2/ServiceProviderConfig", tag = "SCIM", security(("scimToken" = [])),
    responses((status = 200, description = "What this SCIM service supports", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_service_provider_config(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
) -> Answer {
    ok(discovery::service_provider_config(&endpoint(
        &state, &headers,
    )))
}

#[utoipa::path(
    get, path = "/scim/v2/ResourceTypes", tag = "SCIM", security(("scimToken" = [])),
    responses((status = 200, description = "User and Group", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_resource_types(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
) -> Answer {
    ok(discovery::list_resource_types(&endpoint(&state, &headers))?)
}

#[utoipa::path(
    get, path = "/scim/v2/ResourceTypes/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    responses((status = 200, description = "The resource type", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "Not User or Group", content_type = "application/scim+json"))
)]
pub async fn scim_resource_type(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Answer {
    ok(discovery::get_resource_type(
        &endpoint(&state, &headers),
        &id,
    )?)
}

#[utoipa::path(
    get, path = "/scim/v2/Schemas", tag = "SCIM", security(("scimToken" = [])),
    responses((status = 200, description = "The User and Group schemas: the attributes Vexil keeps", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_schemas(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
) -> Answer {
    ok(discovery::list_schemas(&endpoint(&state, &headers))?)
}

#[utoipa::path(
    get, path = "/scim/v2/Schemas/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path, description = "The schema's URN")),
    responses((status = 200, description = "The schema", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No such schema", content_type = "application/scim+json"))
)]
pub async fn scim_schema(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Answer {
    ok(discovery::get_schema(&endpoint(&state, &headers), &id)?)
}

#[utoipa::path(
    post, path = "/scim/v2/.search", tag = "SCIM", security(("scimToken" = [])),
    responses((status = 501, description = "Searching several resource types at once is not supported", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_search(_: ScimCaller) -> ScimFailure {
    ScimFailure(ScimError::new(
        501,
        None,
        "Searching several resource types at once is not supported: GET /Users or /Groups with a filter",
    ))
}

#[utoipa::path(
    get, path = "/scim/v2/Users", tag = "SCIM", security(("scimToken" = [])), params(ListQuery),
    responses((status = 200, description = "A ListResponse of provisioned users", content_type = "application/scim+json"),
        (status = 400, description = "A bad filter or parameter", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_list_users(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    params: Result<Query<ListQuery>, QueryRejection>,
) -> Answer {
    let params = query(params)?;
    let mut conn = state.store.read().await?;
    ok(scim::users::list(&mut conn, &endpoint(&state, &headers), &params).await?)
}

#[utoipa::path(
    post, path = "/scim/v2/Users", tag = "SCIM", security(("scimToken" = [])),
    request_body(content = Object, content_type = "application/scim+json", description = "A User"),
    responses((status = 201, description = "The user, created as a Viewer", content_type = "application/scim+json"),
        (status = 400, description = "A bad attribute", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 409, description = "The userName or e-mail is taken", content_type = "application/scim+json"))
)]
pub async fn scim_create_user(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::CREATED, async |tx| {
        Ok(Some(scim::users::create(tx, &endpoint, &input).await?))
    })
    .await
}

#[utoipa::path(
    get, path = "/scim/v2/Users/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path), AttributesQuery),
    responses((status = 200, description = "The user", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned user has this id", content_type = "application/scim+json"))
)]
pub async fn scim_get_user(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Result<Query<AttributesQuery>, QueryRejection>,
) -> Answer {
    let params = query(params)?;
    let mut conn = state.store.read().await?;
    let endpoint = endpoint(&state, &headers);
    let attributes = params.attributes.as_deref();
    let excluded = params.excluded_attributes.as_deref();
    ok(scim::users::get(&mut conn, &endpoint, &id, attributes, excluded).await?)
}

#[utoipa::path(
    put, path = "/scim/v2/Users/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    request_body(content = Object, content_type = "application/scim+json", description = "The whole User"),
    responses((status = 200, description = "The user as replaced", content_type = "application/scim+json"),
        (status = 400, description = "A bad attribute", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned user has this id", content_type = "application/scim+json"),
        (status = 409, description = "The userName or e-mail is taken", content_type = "application/scim+json"))
)]
pub async fn scim_replace_user(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::OK, async |tx| {
        Ok(Some(
            scim::users::replace(tx, &endpoint, &id, &input).await?,
        ))
    })
    .await
}

#[utoipa::path(
    patch, path = "/scim/v2/Users/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    request_body(content = Object, content_type = "application/scim+json", description = "A PatchOp"),
    responses((status = 200, description = "The user as patched; active false ends their sessions and tokens", content_type = "application/scim+json"),
        (status = 400, description = "A bad operation or attribute", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned user has this id", content_type = "application/scim+json"),
        (status = 409, description = "The userName or e-mail is taken", content_type = "application/scim+json"))
)]
pub async fn scim_patch_user(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::OK, async |tx| {
        Ok(Some(scim::users::modify(tx, &endpoint, &id, &input).await?))
    })
    .await
}

#[utoipa::path(
    delete, path = "/scim/v2/Users/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    responses((status = 204, description = "Deleted with their sessions, tokens and memberships"),
        (status = 400, description = "The last active Admin user", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned user has this id", content_type = "application/scim+json"))
)]
pub async fn scim_delete_user(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    Path(id): Path<String>,
) -> Answer {
    write(&state, &actor, StatusCode::NO_CONTENT, async |tx| {
        scim::users::delete(tx, &id).await?;
        Ok(None)
    })
    .await
}

#[utoipa::path(
    get, path = "/scim/v2/Groups", tag = "SCIM", security(("scimToken" = [])), params(ListQuery),
    responses((status = 200, description = "A ListResponse of provisioned groups", content_type = "application/scim+json"),
        (status = 400, description = "A bad filter or parameter", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"))
)]
pub async fn scim_list_groups(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    params: Result<Query<ListQuery>, QueryRejection>,
) -> Answer {
    let params = query(params)?;
    let mut conn = state.store.read().await?;
    ok(scim::groups::list(&mut conn, &endpoint(&state, &headers), &params).await?)
}

#[utoipa::path(
    post, path = "/scim/v2/Groups", tag = "SCIM", security(("scimToken" = [])),
    request_body(content = Object, content_type = "application/scim+json", description = "A Group"),
    responses((status = 201, description = "The group", content_type = "application/scim+json"),
        (status = 400, description = "A bad attribute or member", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 409, description = "The name is taken", content_type = "application/scim+json"))
)]
pub async fn scim_create_group(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::CREATED, async |tx| {
        Ok(Some(scim::groups::create(tx, &endpoint, &input).await?))
    })
    .await
}

#[utoipa::path(
    get, path = "/scim/v2/Groups/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path), AttributesQuery),
    responses((status = 200, description = "The group", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned group has this id", content_type = "application/scim+json"))
)]
pub async fn scim_get_group(
    State(state): State<Arc<AppState>>,
    _: ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Result<Query<AttributesQuery>, QueryRejection>,
) -> Answer {
    let params = query(params)?;
    let mut conn = state.store.read().await?;
    let endpoint = endpoint(&state, &headers);
    let attributes = params.attributes.as_deref();
    let excluded = params.excluded_attributes.as_deref();
    ok(scim::groups::get(&mut conn, &endpoint, &id, attributes, excluded).await?)
}

#[utoipa::path(
    put, path = "/scim/v2/Groups/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    request_body(content = Object, content_type = "application/scim+json", description = "The whole Group"),
    responses((status = 200, description = "The group as replaced", content_type = "application/scim+json"),
        (status = 400, description = "A bad attribute or member", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned group has this id", content_type = "application/scim+json"),
        (status = 409, description = "The name is taken", content_type = "application/scim+json"))
)]
pub async fn scim_replace_group(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::OK, async |tx| {
        Ok(Some(
            scim::groups::replace(tx, &endpoint, &id, &input).await?,
        ))
    })
    .await
}

#[utoipa::path(
    patch, path = "/scim/v2/Groups/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    request_body(content = Object, content_type = "application/scim+json", description = "A PatchOp"),
    responses((status = 200, description = "The group as patched", content_type = "application/scim+json"),
        (status = 400, description = "A bad operation, attribute or member", content_type = "application/scim+json"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned group has this id", content_type = "application/scim+json"),
        (status = 409, description = "The name is taken", content_type = "application/scim+json"))
)]
pub async fn scim_patch_group(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Answer {
    let input = body(&bytes)?;
    let endpoint = endpoint(&state, &headers);
    write(&state, &actor, StatusCode::OK, async |tx| {
        Ok(Some(
            scim::groups::modify(tx, &endpoint, &id, &input).await?,
        ))
    })
    .await
}

#[utoipa::path(
    delete, path = "/scim/v2/Groups/{id}", tag = "SCIM", security(("scimToken" = [])), params(("id" = String, Path)),
    responses((status = 204, description = "Deleted"),
        (status = 401, description = "No or a wrong SCIM token"), (status = 403, description = "SCIM provisioning is off"),
        (status = 404, description = "No provisioned group has this id", content_type = "application/scim+json"))
)]
pub async fn scim_delete_group(
    State(state): State<Arc<AppState>>,
    ScimCaller(actor): ScimCaller,
    Path(id): Path<String>,
) -> Answer {
    write(&state, &actor, StatusCode::NO_CONTENT, async |tx| {
        scim::groups::delete(tx, &id).await?;
        Ok(None)
    })
    .await
}
