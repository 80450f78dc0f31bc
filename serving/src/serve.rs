//! How both binaries serve HTTP with bounded time per connection and per request ([`HttpTimeouts`], flags
//! of both): a client must send a request's line and headers within `--header-read-timeout` or the
//! connection is closed ([`serve`], hyper's HTTP/1 header read timeout: `axum::serve` has none, so a client
//! sending a byte a second could hold a connection for ever), and a request is answered within
//! `--request-timeout` or gets 503 `ServiceUnavailableError` ([`with_request_bounds`], which also gives each
//! request its tracing span and log line).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, MatchedPath, Request};
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tower::ServiceExt as _;
use vexil_shared::{ApiError, ErrorKind};

use crate::connection_timer::ConnectionTimer;
use crate::stream_connection;
use crate::telemetry;

/// Default of `--request-timeout`: far above any answer of this API (the slowest, the metrics views over
/// days of usage, take well under a second), so only a stuck request or a client trickling its body meets it.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Default of `--header-read-timeout`. It is also how long a kept-alive connection may stay idle (hyper
/// starts it when it waits for the next request): above the server SDKs' 15 s refresh, so their connections
/// are reused, and away from the frontend SDKs' 30 s, so a refresh does not race the close.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// The time bounds of HTTP requests: flags of both binaries (`#[command(flatten)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct HttpTimeouts {
    /// Longest a request may take, its body included, before it is answered 503 `ServiceUnavailableError`
    /// (`30s`, `500ms`, `2m`).
    #[arg(long, env = "VEXIL_REQUEST_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Longest a client may take to send a request's line and headers before the connection is closed; also
    /// how long a kept-alive connection may stay idle (`20s`, `500ms`, `1m`).
    #[arg(long, env = "VEXIL_HEADER_READ_TIMEOUT", default_value = "20s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,
}

impl Default for HttpTimeouts {
    fn default() -> Self {
        HttpTimeouts {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
        }
    }
}

/// A duration such as `30s`, `500ms` or `2m` (a bare number is seconds); zero is refused.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 30s, 500ms or 2m"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        _ => return Err(format!("{text:?}: the unit must be ms, s or m")),
    };
    if duration.is_zero() {
        return Err("the duration must be more than zero".to_owned());
    }
    Ok(duration)
}

/// `app` with what happens around every request, in one layer ([`RequestLayer`]): a DEBUG span
/// `http_request` (method, route template), the request answered within `limit` or dropped (a write's
/// transaction rolls back) and answered 503 `ServiceUnavailableError`, every answer counted and timed
/// (`http_requests_total`, `http_request_duration_seconds`: [`telemetry::record_answer`]), and a line when
/// it is answered (DEBUG, WARN for a 5xx). Apply it last, to the whole app
/// (after every route and the fallback), so that it sees the route matched and wraps every request.
pub fn with_request_bounds(app: Router, limit: Duration) -> Router {
    app.layer(RequestLayer { limit })
}

/// See [`with_request_bounds`]. One hand-written layer rather than `from_fn` middlewares for the timeout and
/// the metrics and tower-http's `TraceLayer` for the span: this is every request of the hot path
/// (`/api/frontend`), and it costs one timer and two clock reads, with nothing boxed (BENCHMARKS.md, issue
/// 17's load test: 6,000 instructions a request fewer than the three layers).
#[derive(Debug, Clone, Copy)]
pub struct RequestLayer {
    limit: Duration,
}

impl<S> tower::Layer<S> for RequestLayer {
    type Service = RequestService<S>;

    fn layer(&self, inner: S) -> RequestService<S> {
        RequestService {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`RequestLayer`].
#[derive(Debug, Clone)]
pub struct RequestService<S> {
    inner: S,
    limit: Duration,
}

impl<S> tower::Service<Request> for RequestService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = RequestFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let started = Instant::now();
        let route = request.extensions().get::<MatchedPath>().cloned();
        let method = request.method().clone();
        let span = tracing::debug_span!(
            "http_request",
            method = %method,
            route = telemetry::route_label(route.as_ref()),
        );
        let answer = {
            let _entered = span.enter();
            tokio::time::timeout(self.limit, self.inner.call(request))
        };
        RequestFuture {
            answer,
            span,
            started,
            route,
            method,
            limit: self.limit,
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a request under [`RequestLayer`].
    pub struct RequestFuture<F> {
        #[pin]
        answer: tokio::time::Timeout<F>,
        span: tracing::Span,
        started: Instant,
        route: Option<MatchedPath>,
        method: Method,
        limit: Duration,
    }
}

impl<F> Future for RequestFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let response = match std::task::ready!(this.answer.poll(cx)) {
            Ok(Ok(response)) => response,
            Err(_elapsed) => {
                let error = ApiError::new(
                    ErrorKind::Unavailable,
                    format!(
                        "The request was not answered within {} ms",
                        this.limit.as_millis()
                    ),
                );
                error.into_response()
            }
        };
        let elapsed = this.started.elapsed();
        telemetry::record_answer(
            this.route.as_ref(),
            this.method,
            response.status().as_u16(),
            elapsed,
        );
        telemetry::log_answer(response.status(), elapsed);
        Poll::Ready(Ok(response))
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting, lets the requests in flight
/// finish and closes idle connections (change streams end once the serving state closes them). HTTP/1.1
/// (as `axum::serve` with this workspace's axum features), each request carrying the peer's
/// `ConnectInfo<SocketAddr>`; a client that has not sent a request's line and headers
/// `header_read_timeout` after the server started waiting for them is disconnected. A connection opening with
/// a change-stream request is served by `stream_connection` rather than hyper.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let graceful = GracefulShutdown::new();
    // Each change stream served without hyper holds a sender: shutdown waits until all have ended.
    let (open_streams, mut streams_ended) = mpsc::channel::<()>(1);
    // Set when the server stops: a connection that has not yet shown its first request is closed (as hyper's
    // graceful shutdown closes idle connections), so that nothing waits for it.
    let stopping = watch::Sender::new(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    wait_after_accept_error(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let watcher = graceful.watcher();
        let open_streams = open_streams.clone();
        let mut stopped = stopping.subscribe();
        tokio::spawn(async move {
            let opens_a_stream = tokio::select! {
                opens = stream_connection::opens_a_stream(&stream, header_read_timeout) => opens,
                _ = stopped.wait_for(|stopping| *stopping) => return,
            };
            if opens_a_stream {
                let handshake = stream_connection::serve_stream(
                    stream,
                    peer,
                    app,
                    header_read_timeout,
                    open_streams,
                );
                tokio::select! {
                    () = handshake => {}
                    _ = stopped.wait_for(|stopping| *stopping) => {}
                }
                return;
            }
            drop((open_streams, stopped));
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    request
                        .extensions_mut()
                        .insert(ConnectInfo::<SocketAddr>(peer));
                    app.clone().oneshot(request)
                });
            // A builder per connection, so that its sleeps share one timer (`ConnectionTimer`).
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(ConnectionTimer::default())
                .header_read_timeout(header_read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection).await {
                // A client that went away or sent too slowly or badly: nothing for the server to do.
                tracing::debug!(%error, %peer, "connection ended");
            }
        });
    }
    stopping.send_replace(true);
    drop(listener);
    graceful.shutdown().await;
    drop(open_streams);
    let _ = streams_ended.recv().await;
    Ok(())
}

/// Raises this process's soft limit of open files to its hard limit, as Go's runtime does for every server:
/// each connection and each change stream is a file, and the soft limit many systems start processes with
/// (1,024) would refuse connections far below what a server holds (100,000 streams, BENCHMARKS.md). Logs
/// the limit it leaves.
pub fn raise_open_files_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(limit, "open files"),
        Err(error) => tracing::warn!(%error, "cannot raise the limit of open files"),
    }
}

/// As `axum::serve` does: errors of one connection (reset before it was accepted) are skipped; anything
/// else (too many open files) is logged and waited out for a second rather than spun on.
async fn wait_after_accept_error(error: io::Error) {
    let of_one_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    );
    if of_one_connection {
        return;
    }
    tracing::error!(%error, "cannot accept a connection");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("s").is_err());
    }

    async fn started(app: Router, header_read_timeout: Duration) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(serve(
            listener,
            app,
            header_read_timeout,
            std::future::pending(),
        ));
        address
    }

    #[tokio::test]
    async fn a_slow_request_is_answered_503_in_json() {
        let app = Router::new().route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        );
        let app = with_request_bounds(app, Duration::from_millis(100));
        let address = started(app, Duration::from_secs(5)).await;
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            answer.contains(r#""name":"ServiceUnavailableError""#),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn shutdown_waits_for_no_connection_that_sent_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            Router::new(),
            Duration::from_secs(20),
            async {
                let _ = stopped.await;
            },
        ));
        let _idle = tokio::net::TcpStream::connect(address).await.unwrap();
        let mut half_a_stream = tokio::net::TcpStream::connect(address).await.unwrap();
        half_a_stream
            .write_all(b"GET /api/client/streaming HTTP/1.1\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(2), server)
            .await
            .expect("serve returns at once")
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn the_peer_address_reaches_the_handlers() {
        let app = Router::new().route(
            "/peer",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.ip().to_string() }),
        );
        let address = started(app, Duration::from_secs(5)).await;
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("127.0.0.1"), "{answer}");
    }
}
