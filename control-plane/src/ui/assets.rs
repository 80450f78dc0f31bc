//! The UI's stylesheet and script module, compiled into the binary (`include_str!`): no build step, no
//! Node.js, nothing fetched from elsewhere.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;

const STYLESHEET: &str = include_str!("assets/vexil.css");
const SCRIPT: &str = include_str!("assets/vexil.js");

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
