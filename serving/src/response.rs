//! How the evaluation answers are written: JSON bodies serialized beforehand (compressed as the client
//! accepts, `answer_encoding`), the revision header, and the ETags and 304s of a client that already has the
//! answer.

use axum::body::{Body, Bytes};
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, VARY,
};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::answer_encoding::Encoding;

/// The header every evaluation answer carries: the revision it was computed at.
pub const REVISION_HEADER: &str = "x-vexil-revision";

/// [`REVISION_HEADER`] as a header name, made once (a name given as text is allocated on every insert).
const REVISION: HeaderName = HeaderName::from_static(REVISION_HEADER);

/// A 200 (or other) JSON answer from an already serialized body, with `X-Vexil-Revision`, in `encoding`
/// (the client's `AcceptEncoding`) when it is one and the body is not too short to gain from it.
pub fn json_response(
    status: StatusCode,
    body: Vec<u8>,
    revision: u64,
    encoding: Option<Encoding>,
) -> Response {
    let encoded = encoding.and_then(|encoding| Some((encoding, encoding.encode_answer(&body)?)));
    match encoded {
        Some((encoding, encoded)) => {
            encoded_json_response(status, encoded.into(), Some(encoding), revision)
        }
        None => encoded_json_response(status, body.into(), None, revision),
    }
}

/// As [`json_response`], with a body already in `content_encoding` (none: plain JSON).
pub fn encoded_json_response(
    status: StatusCode,
    body: Bytes,
    content_encoding: Option<Encoding>,
    revision: u64,
) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    // Room for the headers an evaluation answer ends with (CORS, ETag, cache, length): one allocation.
    headers.reserve(14);
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    // What a cache keeps depends on the request's `Accept-Encoding`, compressed or not.
    headers.insert(VARY, HeaderValue::from_static(ACCEPT_ENCODING.as_str()));
    if let Some(content_encoding) = content_encoding {
        headers.insert(CONTENT_ENCODING, content_encoding.header_value());
    }
    revision_header(&mut response, revision);
    response
}

/// Sets `X-Vexil-Revision` on `response`.
pub fn revision_header(response: &mut Response, revision: u64) {
    response
        .headers_mut()
        .insert(REVISION, HeaderValue::from(revision));
}

/// `304 Not Modified` with `X-Vexil-Revision`: the client's `If-None-Match` is the answer's ETag.
pub fn not_modified(revision: u64) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    revision_header(&mut response, revision);
    response
}

/// Sets `ETag` (the text handed to the header without a copy).
pub fn insert_etag(response: &mut Response, etag: String) {
    if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from(etag)) {
        response.headers_mut().insert(ETAG, value);
    }
}

/// `W/"<length>-<fingerprint>"`: a browser answer's length in hexadecimal and the engine's fingerprint of it
/// in 16 hexadecimal digits. Written digit by digit: `format!` was 2 % of a frontend request's instructions.
pub fn weak_etag(length: usize, fingerprint: u64) -> String {
    let mut etag = String::with_capacity(3 + 16 + 1 + 16 + 1);
    etag.push_str("W/\"");
    let length_digits = (usize::BITS - (length | 1).leading_zeros()).div_ceil(4);
    push_hex(&mut etag, length as u64, length_digits);
    etag.push('-');
    push_hex(&mut etag, fingerprint, 16);
    etag.push('"');
    etag
}

/// Appends the lowest `digits` hexadecimal digits of `value`, in lower case.
fn push_hex(text: &mut String, value: u64, digits: u32) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..digits).rev() {
        text.push(char::from(DIGITS[(value >> (4 * shift)) as usize & 15]));
    }
}

/// A browser answer (or its 304) with `Cache-Control: no-cache` (ask again each time) and its ETag.
pub fn revalidated(mut response: Response, etag: String) -> Response {
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    insert_etag(&mut response, etag);
    response
}

#[cfg(test)]
mod tests {
    use super::weak_etag;

    #[test]
    fn weak_etag_is_the_length_and_the_fingerprint_in_hexadecimal() {
        for (length, fingerprint) in [
            (0, 0),
            (1, 1),
            (15, 0xf),
            (16, 0x10),
            (16_105, 0x0123_4567_89ab_cdef),
            (usize::MAX, u64::MAX),
        ] {
            assert_eq!(
                weak_etag(length, fingerprint),
                format!("W/\"{length:x}-{fingerprint:016x}\""),
            );
        }
    }
}
