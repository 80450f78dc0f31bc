//! The JSON answers of requests no route takes: an unknown path (404) or a method the route lacks (405).

use axum::extract::OriginalUri;
use axum::http::Method;
use vexil_shared::{ApiError, ErrorKind};

/// 404 for a path no route matches, named with its method and full path (base path included).
pub async fn unknown_route(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::not_found(format!("No route for {method} {}", uri.path()))
}

/// 405 for a method the matched route lacks.
pub async fn wrong_method(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        format!("{method} is not allowed on {}", uri.path()),
    )
}
