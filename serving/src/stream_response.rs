//! The answer of a change stream ([`stream_response`]): `200 text/event-stream` whose body is the
//! [`OpenStream`]'s bytes, with the stream also handed over in the response's extensions
//! ([`take_open_stream`]). Whoever takes the stream first writes it: hyper, by polling the body, when the
//! request came on a connection hyper serves; `stream_connection`, which then drops the body and writes the
//! stream itself, without hyper's per-connection buffers, when the connection opened with this request.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::stream;

use crate::change_stream::OpenStream;

/// The stream of a change stream's answer, for the first to take it (the body or `stream_connection`).
#[derive(Clone)]
struct Handoff(Arc<Mutex<Option<OpenStream>>>);

impl Handoff {
    fn take(&self) -> Option<OpenStream> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// `200 text/event-stream` sending `open`'s bytes.
pub fn stream_response(open: OpenStream) -> Response {
    let handoff = Handoff(Arc::new(Mutex::new(Some(open))));
    let body = stream::unfold(
        (handoff.clone(), None::<OpenStream>),
        |(handoff, open)| async move {
            let mut open = match open {
                Some(open) => open,
                None => handoff.take()?,
            };
            let bytes = open.next().await?;
            Some((Ok::<_, Infallible>(bytes), (handoff, Some(open))))
        },
    );
    let mut response = event_stream_answer(Body::from_stream(body));
    response.extensions_mut().insert(handoff);
    response
}

/// `200 text/event-stream` of `event` alone (the stream then ends).
pub fn event_response(event: Bytes) -> Response {
    event_stream_answer(Body::from(event))
}

fn event_stream_answer(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The open stream of a [`stream_response`] (its body then sends nothing); `None` for any other answer.
pub(crate) fn take_open_stream(response: &mut Response) -> Option<OpenStream> {
    response.extensions_mut().remove::<Handoff>()?.take()
}
