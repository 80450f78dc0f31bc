//! The JSON answers of requests no route takes: an unknown path (404) or a method the route lacks (405); below
//! `/scim/v2` the latter is a SCIM error, as every SCIM answer is.

use super::scim::ScimFailure;
use crate::domain::scim::ScimError;
use axum::extract::{OriginalUri, Request};
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use vexil_shared::{ApiError, ErrorKind};

/// 404 for a path no route matches, named with its method and full path (base path included).
pub async fn unknown_route(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::not_found(format!("No route for {method} {}", uri.path()))
}

/// 405 for a method the matched route lacks (a SCIM error for a SCIM route: the path within the base path
/// starts with `/scim/v2/`).
pub async fn wrong_method(
    method: Method,
    OriginalUri(uri): OriginalUri,
    request: Request,
) -> Response {
    let message = format!("{method} is not allowed on {}", uri.path());
    if request.uri().path().starts_with("/scim/v2/") {
        return ScimFailure(ScimError::new(405, None, message)).into_response();
    }
    ApiError::new(ErrorKind::MethodNotAllowed, message).into_response()
}
