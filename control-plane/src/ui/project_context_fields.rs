//! `/projects/<p>/context`: a project's own context fields (list, create, edit with legal values, delete),
//! the pages of `ui::context_fields` at a project's [`Place`]. Writes need `UPDATE_PROJECT` in the project
//! (`ui::PERMISSIONS`), as the admin API's `/api/admin/projects/:p/context…`.

use super::context_fields::{self, Place};
use super::page::UiError;
use super::paging::PageQuery;
use super::session::{SignedIn, UiWrite};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/context", get(list))
        .route(
            "/projects/{project}/context/create",
            get(new_field).post(create),
        )
        .route(
            "/projects/{project}/context/edit/{name}",
            get(edit_field).post(update),
        )
        .route("/projects/{project}/context/{name}/delete", post(delete))
}

/// `GET /projects/<p>/context` (404 for an unknown project).
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
    Query(query): Query<PageQuery>,
) -> Result<Response, UiError> {
    context_fields::list_page(&state, &who, Place(Some(&project)), query).await
}

/// `GET /projects/<p>/context/create`.
pub async fn new_field(who: SignedIn, Path(project): Path<String>) -> Result<Response, UiError> {
    context_fields::new_field_page(&who, Place(Some(&project)))
}

/// `POST /projects/<p>/context/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    Path(project): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    context_fields::save(&state, &who, Place(Some(&project)), None, &form).await
}

/// `GET /projects/<p>/context/edit/<name>`.
pub async fn edit_field(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, name)): Path<(String, String)>,
) -> Result<Response, UiError> {
    context_fields::edit_field_page(&state, &who, Place(Some(&project)), &name).await
}

/// `POST /projects/<p>/context/edit/<name>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path((project, name)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    context_fields::save(&state, &who, Place(Some(&project)), Some(&name), &form).await
}

/// `POST /projects/<p>/context/<name>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path((project, name)): Path<(String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    context_fields::delete_field(&state, &who, Place(Some(&project)), &name).await
}
