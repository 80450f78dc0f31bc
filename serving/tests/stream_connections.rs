//! Change streams over raw TCP, as browsers' and SDKs' EventSources open them: on a connection they open
//! (served without hyper, `stream_connection`) and on a kept-alive connection that served other requests
//! first (hyper). Both send the same events, end the same way, and give their slot back when the client
//! goes away; anything else asked on a connection that opened with a stream's path is answered whole.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use vexil_serving::ServingState;
use vexil_shared::token::sha256;

const SECOND: Duration = Duration::from_secs(1);

/// A raw HTTP/1.1 client on one connection.
struct Connection {
    socket: TcpStream,
    received: Vec<u8>,
}

impl Connection {
    async fn open(server: &Server) -> Connection {
        Connection {
            socket: TcpStream::connect(server.address).await.unwrap(),
            received: Vec::new(),
        }
    }

    async fn send(&mut self, request: &str) {
        self.socket.write_all(request.as_bytes()).await.unwrap();
    }

    /// Reads until `received` holds `marker`; everything up to and with it is returned and taken out.
    async fn until(&mut self, marker: &str) -> String {
        let read = async {
            loop {
                if let Some(at) = find(&self.received, marker.as_bytes()) {
                    let taken: Vec<u8> = self.received.drain(..at + marker.len()).collect();
                    return String::from_utf8(taken).unwrap();
                }
                let mut chunk = [0u8; 4096];
                let n = self.socket.read(&mut chunk).await.unwrap();
                assert!(n > 0, "closed before {marker:?}: {:?}", self.text());
                self.received.extend_from_slice(&chunk[..n]);
            }
        };
        tokio::time::timeout(SECOND, read)
            .await
            .unwrap_or_else(|_| panic!("no {marker:?} in time: {:?}", self.text()))
    }

    /// Reads to the end of the connection (the server closed it).
    async fn rest_until_closed(&mut self) -> String {
        let read = async {
            loop {
                let mut chunk = [0u8; 4096];
                let n = self.socket.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    return;
                }
                self.received.extend_from_slice(&chunk[..n]);
            }
        };
        tokio::time::timeout(SECOND, read)
            .await
            .expect("the server closes the connection");
        String::from_utf8(std::mem::take(&mut self.received)).unwrap()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.received).into_owned()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn stream_request(token: &str) -> String {
    format!(
        "GET /api/client/streaming HTTP/1.1\r\nHost: edge\r\nAuthorization: {token}\r\nAccept: text/event-stream\r\n\r\n"
    )
}

/// The stream's answer head, then its `unleash-connected` event and the first change's event; the
/// revoked token ends it with HTTP/1.1's last chunk.
async fn stream_through_a_change(server: &Server, connection: &mut Connection) {
    let head = connection.until("\r\n\r\n").await.to_lowercase();
    assert!(head.starts_with("http/1.1 200 ok\r\n"), "{head}");
    assert!(
        head.contains("content-type: text/event-stream\r\n"),
        "{head}"
    );
    assert!(head.contains("cache-control: no-cache\r\n"), "{head}");
    assert!(head.contains("transfer-encoding: chunked\r\n"), "{head}");
    assert!(head.contains("\r\ndate: "), "{head}");
    let connected = connection.until("\n\n\r\n").await;
    assert!(
        connected.contains(
            "event: unleash-connected\nid: 3\ndata: {\"events\":[{\"type\":\"hydration\""
        ),
        "{connected}"
    );

    let revision = server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "off", "project": "default", "enabled": true}),
            )],
            &[],
        )
    });
    let updated = connection.until("\n\n\r\n").await;
    assert!(
        updated.contains(&format!("event: unleash-updated\nid: {revision}\ndata: {{\"events\":[{{\"type\":\"feature-updated\"")),
        "{updated}"
    );
    assert!(updated.contains("\"name\":\"off\""), "{updated}");

    server.advance(|d| d.removed_tokens = vec![sha256(CLIENT).to_vec()]);
    let end = connection.until("0\r\n\r\n").await;
    assert_eq!(end, "0\r\n\r\n", "the last chunk, right after the change");
}

#[tokio::test]
async fn a_connection_opened_by_a_stream_sends_its_events_and_ends_with_its_token() {
    let server = Server::start(ServingState::new(false)).await;
    let mut connection = Connection::open(&server).await;
    connection.send(&stream_request(CLIENT)).await;
    stream_through_a_change(&server, &mut connection).await;
    assert_eq!(
        connection.rest_until_closed().await,
        "",
        "then the connection closes"
    );
    assert_eq!(server.state.streams.open(), 0);
}

#[tokio::test]
async fn a_kept_alive_connection_streams_the_same_events() {
    let server = Server::start(ServingState::new(false)).await;
    let mut connection = Connection::open(&server).await;
    connection
        .send(&format!(
            "GET /api/client/features HTTP/1.1\r\nHost: edge\r\nAuthorization: {CLIENT}\r\n\r\n"
        ))
        .await;
    let head = connection.until("\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .expect("a length")
        .parse()
        .unwrap();
    while connection.received.len() < length {
        let mut chunk = [0u8; 4096];
        let n = connection.socket.read(&mut chunk).await.unwrap();
        connection.received.extend_from_slice(&chunk[..n]);
    }
    connection.received.drain(..length);

    connection.send(&stream_request(CLIENT)).await;
    stream_through_a_change(&server, &mut connection).await;
    assert_eq!(server.state.streams.open(), 0);
}

#[tokio::test]
async fn a_client_that_goes_away_gives_its_slot_back() {
    let server = Server::start(ServingState::new(false).with_max_streams(1)).await;
    for _ in 0..3 {
        let mut connection = Connection::open(&server).await;
        connection.send(&stream_request(CLIENT)).await;
        let connected = connection.until("\n\n\r\n").await;
        assert!(
            connected.contains("event: unleash-connected"),
            "{connected}"
        );
        assert_eq!(server.state.streams.open(), 1);
        drop(connection);
        let dropped = Instant::now();
        while server.state.streams.open() != 0 {
            assert!(dropped.elapsed() < SECOND, "the slot is still held");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[tokio::test]
async fn other_answers_on_a_streams_connection_are_whole_and_close_it() {
    let server = Server::start(ServingState::new(false).with_max_streams(1)).await;
    // A refused token: its JSON error, framed by its length.
    let mut refused = Connection::open(&server).await;
    refused.send(&stream_request("nope")).await;
    let answer = refused.rest_until_closed().await;
    assert!(
        answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
        "{answer}"
    );
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(
        head.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    assert!(head.contains("connection: close"), "{head}");
    let error: serde_json::Value = serde_json::from_str(body).unwrap();
    assert!(
        error["id"].is_string() && error["name"].is_string(),
        "{error}"
    );

    // A request with a body: 400, nothing opened.
    let mut with_body = Connection::open(&server).await;
    with_body
        .send(
            "GET /ofrep/v1/events?channel=x HTTP/1.1\r\nHost: edge\r\nContent-Length: 2\r\n\r\n{}",
        )
        .await;
    let answer = with_body.rest_until_closed().await;
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(
        answer.contains("\"message\":\"A change stream's request has no body\""),
        "{answer}"
    );

    // A head over the limit: 431 in JSON, nothing opened.
    let mut oversized = Connection::open(&server).await;
    let padding = "a".repeat(70 * 1024);
    let head = format!("GET /api/client/streaming HTTP/1.1\r\nHost: edge\r\nX-Padding: {padding}");
    let _ = oversized.socket.write_all(head.as_bytes()).await;
    let answer = oversized.rest_until_closed().await;
    assert!(
        answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{answer}"
    );
    assert!(
        answer.contains("\"name\":\"RequestHeaderFieldsTooLargeError\""),
        "{answer}"
    );

    // Past --max-streams: told to poll, in one whole answer.
    let mut first = Connection::open(&server).await;
    first.send(&stream_request(CLIENT)).await;
    first.until("event: unleash-connected").await;
    let mut second = Connection::open(&server).await;
    second.send(&stream_request(CLIENT)).await;
    let answer = second.rest_until_closed().await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.ends_with("event: fetch-mode\ndata: polling\n\n"),
        "{answer}"
    );
    assert_eq!(server.state.streams.open(), 1);

    // The server stopping ends the open stream with the last chunk.
    server.state.close_streams();
    let rest = first.rest_until_closed().await;
    assert!(rest.ends_with("0\r\n\r\n"), "{rest}");
}
