//! The metrics views: `/api/admin/metrics/*` (spec #1–#5), `/api/admin/client-metrics/features/:name` and
//! `/api/admin/metrics/edges`. The time comes from `AppState::clock`.

use crate::domain::application_admin::{
    self, EnvironmentInstances, ProjectApplications, ProjectApplicationsQuery, UnknownFlags,
};
use crate::domain::application_overview::{self, ApplicationOverview};
use crate::domain::metrics::{
    self, ApplicationDetails, ApplicationMetadataInput, ApplicationRecord, Applications, Edges,
    FeatureMetrics, FeatureToggle, FeatureToggles, SeenToggles,
};
use crate::http::admin::projects::ProjectPath;
use crate::http::extract::{AdminActor, JsonBody, PathParams, QueryParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The metrics-view routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(seen_toggles))
        .routes(routes!(feature_toggles))
        .routes(routes!(feature_toggle))
        .routes(routes!(applications))
        .routes(routes!(application, set_metadata, delete_application))
        .routes(routes!(seen_apps))
        .routes(routes!(edges))
        .routes(routes!(feature_usage))
        .routes(routes!(application_overview))
        .routes(routes!(application_instances))
        .routes(routes!(unknown_flags))
        .routes(routes!(feature_usage_raw))
        .routes(routes!(project_applications))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct AppEnvironmentPath {
    pub app_name: String,
    pub environment: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct AppNamePath {
    pub app_name: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct NamePath {
    /// Flag name.
    pub name: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationsQuery {
    /// Only applications whose latest registration lists this strategy.
    pub strategy_name: Option<String>,
}

#[utoipa::path(
    get, path = "/api/admin/metrics/seen-toggles", tag = "Metrics", security(("apiToken" = [])),
    responses((status = 200, body = Vec<SeenToggles>, description = "Applications with usage in the last hour (deprecated)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn seen_toggles(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<Vec<SeenToggles>>, ApiError> {
    Ok(Json(
        metrics::seen_toggles(&state.store, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/feature-toggles", tag = "Metrics", security(("apiToken" = [])),
    responses((status = 200, body = FeatureToggles, description = "Yes/no per flag used in the last hour"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn feature_toggles(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<FeatureToggles>, ApiError> {
    Ok(Json(
        metrics::feature_toggles(&state.store, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/feature-toggles/{name}", tag = "Metrics", security(("apiToken" = [])),
    params(NamePath),
    responses((status = 200, body = FeatureToggle, description = "One flag's pairs (zeros when unused)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn feature_toggle(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<NamePath>,
) -> Result<Json<FeatureToggle>, ApiError> {
    Ok(Json(
        metrics::feature_toggle(&state.store, &path.name, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/applications", tag = "Metrics", security(("apiToken" = [])),
    params(ApplicationsQuery),
    responses((status = 200, body = Applications, description = "Applications seen in the last day"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn applications(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    QueryParams(query): QueryParams<ApplicationsQuery>,
) -> Result<Json<Applications>, ApiError> {
    Ok(Json(
        metrics::applications(
            &state.store,
            query.strategy_name.as_deref().filter(|s| !s.is_empty()),
            &state.base_path,
            (state.clock)(),
        )
        .await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/applications/{appName}", tag = "Metrics", security(("apiToken" = [])),
    params(AppNamePath),
    responses((status = 200, body = ApplicationDetails), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn application(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AppNamePath>,
) -> Result<Json<ApplicationDetails>, ApiError> {
    Ok(Json(
        metrics::application(&state.store, &path.app_name).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/metrics/applications/{appName}", tag = "Metrics", security(("apiToken" = [])),
    params(AppNamePath), request_body = ApplicationMetadataInput,
    responses((status = 202, description = "Stored (the application is created if unknown)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody))
)]
pub async fn set_metadata(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AppNamePath>,
    JsonBody(input): JsonBody<ApplicationMetadataInput>,
) -> Result<StatusCode, ApiError> {
    metrics::set_metadata(&state.store, &path.app_name, input, (state.clock)()).await?;
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(
    get, path = "/api/admin/metrics/seen-apps", tag = "Metrics", security(("apiToken" = [])),
    responses((status = 200, body = BTreeMap<String, Vec<ApplicationRecord>>,
        description = "Flag → the applications that reported it in the last hour (deprecated)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn seen_apps(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<BTreeMap<String, Vec<ApplicationRecord>>>, ApiError> {
    Ok(Json(
        metrics::seen_apps(&state.store, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/client-metrics/features/{name}", tag = "Metrics", security(("apiToken" = [])),
    params(NamePath),
    responses((status = 200, body = FeatureMetrics, description = "Usage per hour, application and environment over the last 48 h"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn feature_usage(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<NamePath>,
) -> Result<Json<FeatureMetrics>, ApiError> {
    Ok(Json(
        metrics::feature_usage(&state.store, &path.name, (state.clock)()).await?,
    ))
}

/// The same rows as `feature_usage`: Vexil's are already raw (per hour, application and environment, never
/// summed over applications).
#[utoipa::path(
    get, path = "/api/admin/client-metrics/features/{name}/raw", tag = "Metrics", security(("apiToken" = [])),
    params(NamePath),
    responses((status = 200, body = FeatureMetrics, description = "Usage per hour, application and environment over the last 48 h"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn feature_usage_raw(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<NamePath>,
) -> Result<Json<FeatureMetrics>, ApiError> {
    Ok(Json(
        metrics::feature_usage(&state.store, &path.name, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/edges", tag = "Metrics", security(("apiToken" = [])),
    responses((status = 200, body = Edges, description = "Every edge that reported: version, revision, last report, evaluations in the last hour"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn edges(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<Edges>, ApiError> {
    Ok(Json(metrics::edges(&state.store, (state.clock)()).await?))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/applications/{appName}/overview", tag = "Metrics", security(("apiToken" = [])),
    params(AppNamePath),
    responses((status = 200, body = ApplicationOverview), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn application_overview(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AppNamePath>,
) -> Result<Json<ApplicationOverview>, ApiError> {
    Ok(Json(
        application_overview::overview(&state.store, &path.app_name).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/instances/{appName}/environment/{environment}", tag = "Metrics",
    security(("apiToken" = [])), params(AppEnvironmentPath),
    responses((status = 200, body = EnvironmentInstances), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn application_instances(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AppEnvironmentPath>,
) -> Result<Json<EnvironmentInstances>, ApiError> {
    Ok(Json(
        application_admin::instances(&state.store, &path.app_name, &path.environment).await?,
    ))
}

#[utoipa::path(
    delete, path = "/api/admin/metrics/applications/{appName}", tag = "Metrics", security(("apiToken" = [])),
    params(AppNamePath),
    responses((status = 200, description = "Forgotten (unknown: nothing to do)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody))
)]
pub async fn delete_application(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AppNamePath>,
) -> Result<StatusCode, ApiError> {
    application_admin::delete(&state.store, &path.app_name).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/metrics/unknown-flags", tag = "Metrics", security(("apiToken" = [])),
    responses((status = 200, body = UnknownFlags), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn unknown_flags(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<UnknownFlags>, ApiError> {
    Ok(Json(application_admin::unknown_flags(&state.store).await?))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/applications", tag = "Metrics", security(("apiToken" = [])),
    params(ProjectPath, ProjectApplicationsQuery),
    responses((status = 200, body = ProjectApplications), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn project_applications(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    QueryParams(query): QueryParams<ProjectApplicationsQuery>,
) -> Result<Json<ProjectApplications>, ApiError> {
    Ok(Json(
        application_admin::of_project(&state.store, &path.project_id, query).await?,
    ))
}
