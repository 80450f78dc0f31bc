//! Tags: `/api/admin/tag-types…`, `/api/admin/tags…` and a flag's tags, `/api/admin/features/:f/tags…`.

use super::features::FeatureNamePath;
use crate::domain::tags::{
    self, Tag, TagList, TagType, TagTypeList, TagTypeValidation, TagWithVersion, UpdateTagType,
    UpdateTags,
};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The tag routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list_types, create_type))
        .routes(routes!(validate_type))
        .routes(routes!(get_type, update_type, delete_type))
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(list_tags_of_type))
        .routes(routes!(get_tag, delete_tag))
        .routes(routes!(feature_tags, add_feature_tag, update_feature_tags))
        .routes(routes!(remove_feature_tag))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TagTypePath {
    /// The tag type's name.
    pub name: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TagsOfTypePath {
    /// The tag type's name.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub tag_type: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TagPath {
    /// The tag type's name.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub tag_type: String,
    pub value: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct FeatureTagPath {
    pub feature_name: String,
    /// The tag type's name.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub tag_type: String,
    pub value: String,
}

#[utoipa::path(
    get, path = "/api/admin/tag-types", tag = "Tags", security(("apiToken" = [])),
    responses((status = 200, body = TagTypeList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list_types(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<TagTypeList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tags::list_types(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/tag-types", tag = "Tags", security(("apiToken" = [])),
    request_body = TagType,
    responses(
        (status = 201, body = TagType), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create_type(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<TagType>,
) -> Result<(StatusCode, Json<TagType>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let created = tags::create_type(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(
    post, path = "/api/admin/tag-types/validate", tag = "Tags", security(("apiToken" = [])),
    request_body = TagType,
    responses(
        (status = 200, body = TagTypeValidation), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_type(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<TagType>,
) -> Result<Json<TagTypeValidation>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tags::validate_type(&mut conn, input).await?))
}

#[utoipa::path(
    get, path = "/api/admin/tag-types/{name}", tag = "Tags", security(("apiToken" = [])),
    params(TagTypePath),
    responses(
        (status = 200, body = TagType), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get_type(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TagTypePath>,
) -> Result<Json<TagType>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tags::get_type(&mut conn, &path.name).await?))
}

#[utoipa::path(
    put, path = "/api/admin/tag-types/{name}", tag = "Tags", security(("apiToken" = [])),
    params(TagTypePath), request_body = UpdateTagType,
    responses(
        (status = 200, description = "Updated"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update_type(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TagTypePath>,
    JsonBody(input): JsonBody<UpdateTagType>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tags::update_type(&mut tx, &path.name, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/tag-types/{name}", tag = "Tags", security(("apiToken" = [])),
    params(TagTypePath),
    responses(
        (status = 200, description = "Deleted, with its tags (which leave every flag)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_type(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TagTypePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tags::delete_type(&mut tx, &path.name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/tags", tag = "Tags", security(("apiToken" = [])),
    responses((status = 200, body = TagList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list_tags(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<TagList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tags::list_tags(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/tags", tag = "Tags", security(("apiToken" = [])),
    request_body = Tag,
    responses(
        (status = 201, body = TagWithVersion), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody, description = "Unknown tag type"),
        (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create_tag(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<Tag>,
) -> Result<(StatusCode, Json<TagWithVersion>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let created = tags::create_tag(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(
    get, path = "/api/admin/tags/{type}", tag = "Tags", security(("apiToken" = [])),
    params(TagsOfTypePath),
    responses((status = 200, body = TagList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list_tags_of_type(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TagsOfTypePath>,
) -> Result<Json<TagList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        tags::list_tags_of_type(&mut conn, &path.tag_type).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/tags/{type}/{value}", tag = "Tags", security(("apiToken" = [])),
    params(TagPath),
    responses(
        (status = 200, body = TagWithVersion), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get_tag(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TagPath>,
) -> Result<Json<TagWithVersion>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        tags::get_tag(&mut conn, &path.tag_type, &path.value).await?,
    ))
}

#[utoipa::path(
    delete, path = "/api/admin/tags/{type}/{value}", tag = "Tags", security(("apiToken" = [])),
    params(TagPath),
    responses(
        (status = 200, description = "Deleted, and taken off every flag"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_tag(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TagPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tags::delete_tag(&mut tx, &path.tag_type, &path.value).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/features/{featureName}/tags", tag = "Tags", security(("apiToken" = [])),
    params(FeatureNamePath),
    responses(
        (status = 200, body = TagList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn feature_tags(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
) -> Result<Json<TagList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        tags::feature_tags(&mut conn, &path.feature_name).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/features/{featureName}/tags", tag = "Tags", security(("apiToken" = [])),
    params(FeatureNamePath), request_body = Tag,
    responses(
        (status = 201, body = Tag, description = "The tag on the flag (created if new)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Unknown flag or tag type"), (status = 415, body = ErrorBody)
    )
)]
pub async fn add_feature_tag(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
    JsonBody(input): JsonBody<Tag>,
) -> Result<(StatusCode, Json<Tag>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let tag = tags::add_feature_tag(&mut tx, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(tag)))
}

#[utoipa::path(
    put, path = "/api/admin/features/{featureName}/tags", tag = "Tags", security(("apiToken" = [])),
    params(FeatureNamePath), request_body = UpdateTags,
    responses(
        (status = 200, body = TagList, description = "The flag's tags after the change"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Unknown flag or tag type"), (status = 415, body = ErrorBody)
    )
)]
pub async fn update_feature_tags(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
    JsonBody(input): JsonBody<UpdateTags>,
) -> Result<Json<TagList>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let after = tags::update_feature_tags(&mut tx, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok(Json(after))
}

#[utoipa::path(
    delete, path = "/api/admin/features/{featureName}/tags/{type}/{value}", tag = "Tags",
    security(("apiToken" = [])), params(FeatureTagPath),
    responses(
        (status = 200, description = "The flag no longer carries the tag"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn remove_feature_tag(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureTagPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tags::remove_feature_tag(&mut tx, &path.feature_name, &path.tag_type, &path.value).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
