//! Connections that open with a change-stream request (`GET …/api/client/streaming`,
//! `GET …/ofrep/v1/events`), served without hyper: hyper keeps two 8 KiB buffers per HTTP/1 connection for
//! as long as it lives, more than an idle stream needs in all (BENCHMARKS.md: 100,000 streams per edge).
//!
//! [`opens_a_stream`] looks at the first bytes of a new connection without consuming them; for such a
//! connection [`serve_stream`] reads the request head (httparse), answers it through the same router as
//! every other request (authentication, CORS, the request layer), and when the answer is a change stream
//! ([`take_open_stream`]) writes the head and leaves the stream to a task of its own ([`pump`]) holding only
//! the socket and the [`OpenStream`]: no buffer but while writing, no timer (keep-alives come from the
//! server's one clock), the socket's readiness telling when the client has gone. Any other answer is written
//! whole and the connection closed. A stream request on a connection hyper already serves (a kept-alive one)
//! is streamed by hyper, from the same [`OpenStream`].

use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderName, HeaderValue, Method, Request, Version};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tower::ServiceExt as _;
use vexil_shared::{ApiError, ErrorKind};

use crate::change_stream::OpenStream;
use crate::stream_response::take_open_stream;

/// The paths (as they end: the edge may serve under a base path) whose requests open change streams.
const STREAM_PATHS: [&[u8]; 2] = [b"/api/client/streaming", b"/ofrep/v1/events"];

/// How much of a request line [`opens_a_stream`] looks at: past it, the request is not a stream's.
const REQUEST_LINE_PEEK: usize = 512;

/// Largest request head read here (as hyper's default of 100 headers would allow, about).
const MAX_HEAD: usize = 64 * 1024;

/// Largest answer other than a stream written here (errors, `fetch-mode: polling`: a few hundred bytes).
const MAX_WHOLE_ANSWER: usize = 64 * 1024;

/// Longest a stream's write may wait on a client that does not read before the stream is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the first request on `socket` is `GET` of a change stream's path, from the bytes received so far
/// (waiting, within `timeout`, for as many as it takes to see the path).
pub(crate) async fn opens_a_stream(socket: &TcpStream, timeout: Duration) -> bool {
    let look = async {
        let mut line = [0u8; REQUEST_LINE_PEEK];
        loop {
            let received = socket.peek(&mut line).await.ok()?;
            if received == 0 {
                return None;
            }
            match stream_path_verdict(&line[..received]) {
                Some(verdict) => return Some(verdict),
                // Only part of the line has arrived: look again shortly.
                None => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    };
    tokio::time::timeout(timeout, look)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// `Some(true)` when `start` (the first bytes of a connection) is a `GET` of a stream path, `Some(false)`
/// when it is not, `None` when it is too short to tell.
fn stream_path_verdict(start: &[u8]) -> Option<bool> {
    const GET: &[u8] = b"GET ";
    if start.len() < GET.len() {
        return if GET.starts_with(start) {
            None
        } else {
            Some(false)
        };
    }
    if !start.starts_with(GET) {
        return Some(false);
    }
    let target = &start[GET.len()..];
    match target.iter().position(|&b| b == b' ' || b == b'?') {
        Some(end) => Some(
            STREAM_PATHS
                .iter()
                .any(|path| target[..end].ends_with(path)),
        ),
        None if start.len() >= REQUEST_LINE_PEEK => Some(false),
        None => None,
    }
}

/// Serves the one request of a connection [`opens_a_stream`] chose: a change stream is handed to its own
/// task (which holds `open_streams` until it ends, so that graceful shutdown waits for it); anything else is
/// answered and the connection closed.
pub(crate) async fn serve_stream(
    mut socket: TcpStream,
    peer: SocketAddr,
    app: Router,
    header_read_timeout: Duration,
    open_streams: mpsc::Sender<()>,
) {
    let head = match tokio::time::timeout(header_read_timeout, read_head(&mut socket)).await {
        Ok(Ok(Head::Whole(head))) => head,
        Ok(Ok(Head::TooLarge)) => {
            let error = ApiError::new(
                ErrorKind::HeadTooLarge,
                format!("The request's line and headers are over {MAX_HEAD} bytes"),
            );
            let _ = write_whole(&mut socket, error.into_response()).await;
            return;
        }
        Ok(Ok(Head::Closed) | Err(_)) | Err(_) => return,
    };
    let request = match request_of(&head, peer) {
        Ok(request) => request,
        Err(error) => {
            let _ = write_whole(&mut socket, error.into_response()).await;
            return;
        }
    };
    drop(head);
    let chunked = request.version() != Version::HTTP_10;
    let Ok(mut response) = app.oneshot(request).await;
    let Some(open) = take_open_stream(&mut response) else {
        let _ = write_whole(&mut socket, response).await;
        return;
    };
    let mut head = status_and_headers(&response);
    drop(response);
    if chunked {
        head.extend_from_slice(b"transfer-encoding: chunked\r\n");
    } else {
        head.extend_from_slice(b"connection: close\r\n");
    }
    head.extend_from_slice(b"\r\n");
    if socket.write_all(&head).await.is_err() {
        return;
    }
    drop(head);
    // A task of its own, so that the stream's lifetime holds no more than `pump`'s state (this task's
    // future is sized for the router's).
    tokio::spawn(pump(socket, open, chunked, open_streams));
}

/// Writes `open`'s bytes to `socket` until the stream ends (then the last chunk), the client goes away, or
/// a write waits longer than [`WRITE_TIMEOUT`].
async fn pump(
    mut socket: TcpStream,
    mut open: OpenStream,
    chunked: bool,
    _open_streams: mpsc::Sender<()>,
) {
    loop {
        let bytes = tokio::select! {
            next = open.next() => match next {
                Some(bytes) => bytes,
                None => break,
            },
            readable = socket.readable() => {
                if readable.is_err() || client_gone(&socket) {
                    return;
                }
                continue;
            }
        };
        if write_chunk(&mut socket, &bytes, chunked).await.is_err() {
            return;
        }
    }
    if chunked {
        // The last chunk: size 0.
        let _ = write_chunk(&mut socket, b"", true).await;
    }
    let _ = socket.shutdown().await;
}

/// After `socket` was readable: whether the client closed it (or it failed). Anything it sent is dropped.
fn client_gone(socket: &TcpStream) -> bool {
    let mut sent = [0u8; 64];
    match socket.try_read(&mut sent) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => error.kind() != io::ErrorKind::WouldBlock,
    }
}

/// One write of `data` (as an HTTP/1.1 chunk when `chunked`): a single `writev` that the socket takes whole
/// in the common case (no timer then); what it did not take is written within [`WRITE_TIMEOUT`].
async fn write_chunk(socket: &mut TcpStream, data: &[u8], chunked: bool) -> io::Result<()> {
    let size = if chunked {
        format!("{:x}\r\n", data.len())
    } else {
        String::new()
    };
    let end: &[u8] = if chunked { b"\r\n" } else { b"" };
    let parts: [&[u8]; 3] = [size.as_bytes(), data, end];
    let mut written = match socket.try_write_vectored(&parts.map(IoSlice::new)) {
        Ok(written) => written,
        Err(error) if error.kind() == io::ErrorKind::WouldBlock => 0,
        Err(error) => return Err(error),
    };
    if written == parts.iter().map(|part| part.len()).sum::<usize>() {
        return Ok(());
    }
    let rest = async {
        for part in parts {
            if written >= part.len() {
                written -= part.len();
                continue;
            }
            socket.write_all(&part[written..]).await?;
            written = 0;
        }
        Ok(())
    };
    tokio::time::timeout(WRITE_TIMEOUT, rest)
        .await
        .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
}

/// What [`read_head`] read.
enum Head {
    /// The request's head, up to and with its blank line.
    Whole(Vec<u8>),
    /// Over [`MAX_HEAD`] bytes without its end.
    TooLarge,
    /// The client closed the connection first.
    Closed,
}

async fn read_head(socket: &mut TcpStream) -> io::Result<Head> {
    let mut head = Vec::with_capacity(1024);
    loop {
        let searched_from = head.len().saturating_sub(3);
        if socket.read_buf(&mut head).await? == 0 {
            return Ok(Head::Closed);
        }
        if let Some(end) = head[searched_from..]
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
        {
            head.truncate(searched_from + end + 4);
            return Ok(Head::Whole(head));
        }
        if head.len() > MAX_HEAD {
            return Ok(Head::TooLarge);
        }
        head.reserve(1024);
    }
}

/// The request `head` states, from `peer`, without a body; a 400 answer for a head that cannot be read or
/// announces a body.
fn request_of(head: &[u8], peer: SocketAddr) -> Result<Request<Body>, ApiError> {
    let bad = |message: &str| ApiError::new(ErrorKind::Validation, message.to_owned());
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(bad("The request's line or headers could not be read")),
    }
    let version = match parsed.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(parsed.path.unwrap_or("/"))
        .version(version)
        .body(Body::empty())
        .map_err(|_| bad("The request's target is not a valid path"))?;
    for header in parsed.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| bad("A header's name is not valid"))?;
        let value = HeaderValue::from_bytes(header.value)
            .map_err(|_| bad("A header's value is not valid"))?;
        let announces_body =
            (name == "content-length" && value != "0") || name == "transfer-encoding";
        if announces_body {
            return Err(bad("A change stream's request has no body"));
        }
        request.headers_mut().append(name, value);
    }
    request.extensions_mut().insert(ConnectInfo(peer));
    Ok(request)
}

/// `HTTP/1.1 <status>`, `date` and `response`'s headers (without those of the body's framing), each line
/// ended.
fn status_and_headers(response: &Response) -> Vec<u8> {
    let status = response.status();
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"HTTP/1.1 ");
    head.extend_from_slice(status.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    head.extend_from_slice(b"\r\ndate: ");
    head.extend_from_slice(httpdate::fmt_http_date(SystemTime::now()).as_bytes());
    head.extend_from_slice(b"\r\n");
    for (name, value) in response.headers() {
        let framing =
            name == "content-length" || name == "transfer-encoding" || name == "connection";
        if framing || name == "date" {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head
}

/// Writes `response` whole (its body read to the end) and closes the connection.
async fn write_whole(socket: &mut TcpStream, response: Response) -> io::Result<()> {
    let mut head = status_and_headers(&response);
    let body = axum::body::to_bytes(response.into_body(), MAX_WHOLE_ANSWER)
        .await
        .unwrap_or_default();
    head.extend_from_slice(
        format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    head.extend_from_slice(&body);
    socket.write_all(&head).await?;
    socket.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_requests_are_told_from_their_first_bytes() {
        assert_eq!(
            stream_path_verdict(b"GET /api/client/streaming HTTP/1.1\r\n"),
            Some(true)
        );
        assert_eq!(
            stream_path_verdict(b"GET /edge/api/client/streaming?x=1 HTTP/1.1"),
            Some(true)
        );
        assert_eq!(
            stream_path_verdict(b"GET /ofrep/v1/events?channel=a HTTP/1.1"),
            Some(true)
        );
        assert_eq!(
            stream_path_verdict(b"GET /api/client/features HTTP/1.1"),
            Some(false)
        );
        assert_eq!(
            stream_path_verdict(b"GET /api/client/streaming/x HTTP/1.1"),
            Some(false)
        );
        assert_eq!(
            stream_path_verdict(b"POST /api/client/streaming HTTP/1.1"),
            Some(false)
        );
        assert_eq!(stream_path_verdict(b"GE"), None);
        assert_eq!(stream_path_verdict(b"GET /api/cli"), None);
        assert_eq!(stream_path_verdict(b"PU"), Some(false));
    }
}
