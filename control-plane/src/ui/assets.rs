//! The UI's stylesheet, script module and icon, compiled into the binary (`include_str!`): no build step, no
//! Node.js, nothing fetched from elsewhere.

use crate::http::state::AppState;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/ui-assets/vexil.css", get(stylesheet))
        .route("/ui-assets/vexil.js", get(script))
        .route("/ui-assets/favicon.svg", get(icon))
}

const STYLESHEET: &str = include_str!("assets/vexil.css");
const SCRIPT: &str = include_str!("assets/vexil.js");
const ICON: &str = include_str!("assets/favicon.svg");

/// `GET /ui-assets/vexil.css`.
pub async fn stylesheet() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        STYLESHEET,
    )
}

/// `GET /ui-assets/vexil.js`.
pub async fn script() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        SCRIPT,
    )
}

/// `GET /ui-assets/favicon.svg`.
pub async fn icon() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "image/svg+xml"),
            (CACHE_CONTROL, "public, max-age=86400"),
        ],
        ICON,
    )
}
