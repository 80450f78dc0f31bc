//! The baseline of the frontend-API load test: an axum server that answers every `GET /api/frontend` with
//! the same bytes (a file's content), so the difference to the edge is the evaluation and nothing else. It
//! answers `POST /ofrep/v1/evaluate/flags` (OFREP bulk, its body read whole) with the same bytes, the
//! baseline of an OFREP request.
//!
//! `fixed-body-server BODY_FILE [ADDR]` (ADDR defaults to 127.0.0.1:0); prints `listening on ADDR`.

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::routing::{get, post};
use axum::Router;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .ok_or("usage: fixed-body-server BODY_FILE [ADDR]")?;
    let address = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let body: &'static [u8] = Vec::leak(std::fs::read(file)?);
    let app = Router::new()
        .route(
            "/api/frontend",
            get(move || async move { ([(CONTENT_TYPE, "application/json")], body) }),
        )
        .route(
            "/ofrep/v1/evaluate/flags",
            post(move |_: Bytes| async move { ([(CONTENT_TYPE, "application/json")], body) }),
        );
    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
