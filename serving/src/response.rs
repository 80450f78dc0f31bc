//! How the evaluation answers are written: JSON bodies serialized beforehand, and the revision header.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;

/// The header every evaluation answer carries: the revision it was computed at.
pub const REVISION_HEADER: &str = "x-vexil-revision";

/// [`REVISION_HEADER`] as a header name, made once (a name given as text is allocated on every insert).
const REVISION: HeaderName = HeaderName::from_static(REVISION_HEADER);

/// A 200 (or other) JSON answer from an already serialized body, with `X-Vexil-Revision`.
pub fn json_response(status: StatusCode, body: Vec<u8>, revision: u64) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    // Room for the headers an evaluation answer ends with (CORS, ETag, cache, length): one allocation.
    response.headers_mut().reserve(12);
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    revision_header(&mut response, revision);
    response
}

/// Sets `X-Vexil-Revision` on `response`.
pub fn revision_header(response: &mut Response, revision: u64) {
    response
        .headers_mut()
        .insert(REVISION, HeaderValue::from(revision));
}
