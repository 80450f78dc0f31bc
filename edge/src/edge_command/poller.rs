//! One poller per startup token, every `FEATURES_REFRESH_INTERVAL_SECONDS`: `GET /api/client/delta` with the
//! last `ETag` (the revision) in `If-None-Match`, its events applied to the token's document, where the
//! upstream has it (Vexil's control plane and edges); else `GET /api/client/features` with the last `ETag`
//! (open-source Unleash, whose delta route answers 404). A new document goes to the [`Mirror`]. On 5xx, 429 and 404 (and when
//! the upstream does not answer) the wait grows as Unleash Edge's does: interval × (1 + failures), at most
//! [`MAX_BACKOFF_FACTOR`] × interval; on 401 or 403 the token's flags are dropped and its poller stops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;

use vexil_shared::FeaturesDocument;

use super::mirror::Mirror;
use super::tokens::{redacted, TokenScope};
use super::upstream_delta;
use super::upstream_http::{CallError, DeltaFetched, Fetched, UnleashHttp};
use crate::http_server::UpstreamStatus;

/// The longest wait, in refresh intervals.
pub const MAX_BACKOFF_FACTOR: u32 = 10;

/// A startup token and what it reads.
#[derive(Debug, Clone)]
pub struct StartupToken {
    pub secret: String,
    pub scope: TokenScope,
}

impl StartupToken {
    /// Its key among its environment's documents: its projects (two tokens of the same projects read the
    /// same flags).
    pub fn key(&self) -> String {
        self.scope.projects.join(",")
    }
}

/// The startup tokens without those another one covers (Unleash Edge polls only the broadest).
pub fn broadest(tokens: &[StartupToken]) -> Vec<StartupToken> {
    let mut kept: Vec<StartupToken> = Vec::new();
    for token in tokens {
        if kept.iter().any(|k| k.scope.covers(&token.scope)) {
            continue;
        }
        kept.retain(|k| !token.scope.covers(&k.scope));
        kept.push(token.clone());
    }
    kept
}

/// The wait after `failures` failed polls in a row.
pub fn wait_after(interval: Duration, failures: u32) -> Duration {
    interval * (1 + failures.min(MAX_BACKOFF_FACTOR - 1))
}

/// How a poller reads its upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// `GET /api/client/delta` (Vexil's control plane and edges, Unleash servers that have it).
    Delta,
    /// `GET /api/client/features` (open-source Unleash).
    Features,
}

/// What one fetch did.
enum Outcome {
    /// The upstream answered (with news or without).
    Answered,
    /// The upstream refused the token.
    Refused,
    /// This upstream has no delta: read the features from now on.
    NoDelta(String),
    Failed(CallError),
}

/// Polls for `token` until the upstream refuses it; `hydrated` is set after its first document. Delta
/// first: an upstream that answers `/api/client/delta` 404 (open-source Unleash), 401, 403 or with a body
/// that is not a delta is read through `/api/client/features` from then on (where a refused token is
/// refused again, and dropped).
pub async fn poll(
    http: Arc<UnleashHttp>,
    mirror: Arc<Mirror>,
    status: Arc<UpstreamStatus>,
    token: StartupToken,
    interval: Duration,
    hydrated: Arc<AtomicBool>,
) {
    if let Err(error) = http.register(&token.secret, &token.scope).await {
        tracing::info!(%error, token = %redacted(&token.secret), "could not register with the upstream");
    }
    let mut reading = Reading::Delta;
    let mut document: Option<FeaturesDocument> = None;
    let mut etag: Option<String> = None;
    let mut failures = 0u32;
    loop {
        let outcome = match reading {
            Reading::Delta => delta_once(&http, &mirror, &token, &mut document, &mut etag).await,
            Reading::Features => features_once(&http, &mirror, &token, &mut etag).await,
        };
        match outcome {
            Outcome::Answered => {
                failures = 0;
                status.connected.store(true, Ordering::Relaxed);
                status.touch();
                hydrated.store(true, Ordering::Relaxed);
            }
            Outcome::Refused => {
                tracing::warn!(token = %redacted(&token.secret), "the upstream refused this token: its flags are no longer served");
                mirror.drop_document(&token.scope.environment, &token.key());
                return;
            }
            Outcome::NoDelta(why) => {
                tracing::info!(%why, "the upstream offers no delta: polling /api/client/features");
                reading = Reading::Features;
                etag = None;
                document = None;
                continue;
            }
            Outcome::Failed(error) => {
                failures += 1;
                status.connected.store(false, Ordering::Relaxed);
                tracing::info!(%error, failures, "cannot fetch the features; waiting longer");
            }
        }
        tokio::time::sleep(wait_after(interval, failures)).await;
    }
}

/// One `GET /api/client/delta`: its events applied to `document`, which goes to the mirror.
async fn delta_once(
    http: &UnleashHttp,
    mirror: &Mirror,
    token: &StartupToken,
    document: &mut Option<FeaturesDocument>,
    etag: &mut Option<String>,
) -> Outcome {
    match http.delta(&token.secret, etag.as_deref()).await {
        Ok(DeltaFetched::NotModified) => Outcome::Answered,
        Ok(DeltaFetched::Updated { events, etag: tag }) => {
            match upstream_delta::apply(document.as_ref(), events) {
                Ok(updated) => {
                    tracing::debug!(environment = %token.scope.environment, flags = updated.features.len(), "delta applied");
                    mirror.set_document(&token.scope.environment, &token.key(), updated.clone());
                    *document = Some(updated);
                    *etag = tag;
                    Outcome::Answered
                }
                Err(why) => {
                    // Start again from a hydration.
                    *etag = None;
                    Outcome::Failed(CallError::Unreadable(why.to_owned()))
                }
            }
        }
        Err(CallError::Status(
            status @ (StatusCode::NOT_FOUND | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN),
        )) => Outcome::NoDelta(format!("/api/client/delta answered {status}")),
        Err(CallError::Unreadable(why)) => Outcome::NoDelta(why),
        Err(error) => Outcome::Failed(error),
    }
}

/// One `GET /api/client/features`: a new document goes to the mirror.
async fn features_once(
    http: &UnleashHttp,
    mirror: &Mirror,
    token: &StartupToken,
    etag: &mut Option<String>,
) -> Outcome {
    match http.features(&token.secret, etag.as_deref()).await {
        Ok(Fetched::NotModified) => Outcome::Answered,
        Ok(Fetched::Updated {
            document,
            etag: tag,
        }) => {
            tracing::debug!(environment = %token.scope.environment, flags = document.features.len(), "features updated");
            mirror.set_document(&token.scope.environment, &token.key(), document);
            *etag = tag;
            Outcome::Answered
        }
        Err(CallError::Status(StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)) => {
            Outcome::Refused
        }
        Err(error) => Outcome::Failed(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(environment: &str, projects: &[&str]) -> StartupToken {
        StartupToken {
            secret: format!("{}:{environment}.s", projects.join(",")),
            scope: TokenScope {
                kind: None,
                environment: environment.to_owned(),
                projects: projects.iter().map(|p| (*p).to_owned()).collect(),
            },
        }
    }

    #[test]
    fn only_the_broadest_tokens_are_polled() {
        let kept = broadest(&[
            token("development", &["a"]),
            token("development", &["*"]),
            token("production", &["a"]),
            token("development", &["b"]),
        ]);
        let keys: Vec<(String, String)> = kept
            .iter()
            .map(|t| (t.scope.environment.clone(), t.key()))
            .collect();
        assert_eq!(
            keys,
            [
                ("development".to_owned(), "*".to_owned()),
                ("production".to_owned(), "a".to_owned())
            ]
        );
    }

    #[test]
    fn the_wait_grows_with_failures_up_to_a_cap() {
        let second = Duration::from_secs(1);
        assert_eq!(wait_after(second * 15, 0), second * 15);
        assert_eq!(wait_after(second * 15, 2), second * 45);
        assert_eq!(wait_after(second * 15, 99), second * 150);
    }
}
