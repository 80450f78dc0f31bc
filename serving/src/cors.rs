//! CORS on every `/api/frontend*` and OFREP answer, errors included, from the snapshot's
//! `frontendApiOrigins`; preflights (`OPTIONS`) answered here, without a token. A layer of its own rather
//! than an axum `from_fn` middleware: this wraps the hot path (`/api/frontend`, OFREP bulk), and `from_fn`
//! clones the boxed route and boxes a future on every request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_CREDENTIALS, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    ACCESS_CONTROL_REQUEST_HEADERS, ORIGIN, VARY,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::state::ServingState;

/// The CORS layer of the frontend routes.
#[derive(Clone)]
pub struct CorsLayer {
    state: Arc<ServingState>,
}

impl CorsLayer {
    pub fn new(state: Arc<ServingState>) -> CorsLayer {
        CorsLayer { state }
    }
}

impl<S> tower::Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors {
            inner,
            state: self.state.clone(),
        }
    }
}

/// The service of [`CorsLayer`].
#[derive(Clone)]
pub struct Cors<S> {
    inner: S,
    state: Arc<ServingState>,
}

impl<S> tower::Service<Request> for Cors<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = CorsFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> CorsFuture<S::Future> {
        let allowed = allowed_origin(&self.state, request.headers());
        if request.method() == Method::OPTIONS {
            return CorsFuture::Preflight {
                response: Some(preflight(request.headers(), allowed)),
            };
        }
        CorsFuture::Answer {
            answer: self.inner.call(request),
            allowed,
        }
    }
}

/// The `Access-Control-Allow-Origin` of a request's `Origin`: `*` when the snapshot allows every origin
/// (or lists none), the origin itself when listed, else none.
fn allowed_origin(state: &ServingState, headers: &HeaderMap) -> Option<HeaderValue> {
    let origin = headers.get(ORIGIN)?;
    let snapshot = state.current.load();
    let origins = snapshot
        .as_deref()
        .map_or(&[][..], |s| &s.settings.frontend_api_origins[..]);
    if origins.is_empty() || origins.iter().any(|o| o == "*") {
        Some(HeaderValue::from_static("*"))
    } else {
        let text = origin.to_str().ok()?;
        origins.iter().any(|o| o == text).then(|| origin.clone())
    }
}

/// The answer to a preflight.
fn preflight(request: &HeaderMap, allowed: Option<HeaderValue>) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET,HEAD,PUT,PATCH,POST,DELETE"),
    );
    if let Some(requested) = request.get(ACCESS_CONTROL_REQUEST_HEADERS) {
        headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, requested.clone());
    }
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    headers.insert(
        VARY,
        HeaderValue::from_static("Origin, Access-Control-Request-Headers"),
    );
    allow(headers, allowed);
    response
}

/// What a preflight and an answer both carry: credentials allowed, and the allowed origin if any.
fn allow(headers: &mut HeaderMap, allowed: Option<HeaderValue>) {
    headers.insert(
        ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    );
    if let Some(allowed) = allowed {
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
    }
}

pin_project_lite::pin_project! {
    /// The answer of a request under [`CorsLayer`].
    #[project = CorsFutureProjection]
    pub enum CorsFuture<F> {
        Preflight { response: Option<Response> },
        Answer {
            #[pin]
            answer: F,
            allowed: Option<HeaderValue>,
        },
    }
}

impl<F> Future for CorsFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CorsFutureProjection::Preflight { response } => {
                // Polled again after it is ready only by a caller's mistake: answer the same way.
                let response = response
                    .take()
                    .unwrap_or_else(|| StatusCode::NO_CONTENT.into_response());
                Poll::Ready(Ok(response))
            }
            CorsFutureProjection::Answer { answer, allowed } => {
                let Ok(mut response) = std::task::ready!(answer.poll(cx));
                let headers = response.headers_mut();
                // Appended: the answer may already vary by `Accept-Encoding`.
                headers.append(VARY, HeaderValue::from_static("Origin"));
                headers.insert(
                    ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static("ETag"),
                );
                allow(headers, allowed.take());
                Poll::Ready(Ok(response))
            }
        }
    }
}
