//! The caller's dashboard (Unleash 8.2): `GET /api/admin/personal-dashboard` and
//! `GET /api/admin/personal-dashboard/:projectId`. Reads, so Viewers too.

use crate::domain::access;
use crate::domain::personal_dashboard::{self, PersonalDashboard, PersonalProjectDetails};
use crate::http::extract::{AdminCaller, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The dashboard routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(dashboard))
        .routes(routes!(project_details))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct DashboardProjectPath {
    pub project_id: String,
}

#[utoipa::path(
    get, path = "/api/admin/personal-dashboard", tag = "Projects", security(("apiToken" = [])),
    responses(
        (status = 200, body = PersonalDashboard), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn dashboard(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
) -> Result<Json<PersonalDashboard>, ApiError> {
    let mut conn = state.store.read().await?;
    let personal = access::personal_fields(caller.credential);
    let now_ms = (state.clock)();
    Ok(Json(
        personal_dashboard::dashboard(&mut conn, caller.actor.user_id, personal, now_ms).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/personal-dashboard/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(DashboardProjectPath),
    responses(
        (status = 200, body = PersonalProjectDetails), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn project_details(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
    PathParams(path): PathParams<DashboardProjectPath>,
) -> Result<Json<PersonalProjectDetails>, ApiError> {
    let mut conn = state.store.read().await?;
    let personal = access::personal_fields(caller.credential);
    let now_ms = (state.clock)();
    Ok(Json(
        personal_dashboard::project_details(
            &mut conn,
            (&path.project_id, caller.actor.user_id),
            personal,
            now_ms,
        )
        .await?,
    ))
}
