//! Who may use the edges' gRPC channel: every call carries an edge token (`authorization: Bearer <secret>`
//! metadata), looked up by its SHA-256 among the published tokens (no secret is compared or logged). An
//! [`EdgeAuthenticator`] checks it before either service runs and hands the [`EdgeCaller`] on in the request's
//! extensions; `Subscribe` narrows the environments to the token's scope, a stream ends when its token goes
//! ([`EdgeCaller::admitted`]), and [`ScopedUsage`] counts a scoped edge's usage in its environment only.
//! Under `--auth-type none` the channel is open, like the admin API.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::{Request, Response, Status};
use vexil_proto::v1;
use vexil_proto::v1::usage_server::Usage;
use vexil_serving::token_sightings::TokenSightings;
use vexil_shared::token;

use crate::publisher::published::{Configuration, Published};

/// The caller of a gRPC call, as the authenticator admitted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeCaller {
    /// The SHA-256 of its edge token; `None` when the channel is open (`--auth-type none`).
    token: Option<Vec<u8>>,
    /// The one environment the token is for; `None`: every environment.
    environment: Option<String>,
}

impl EdgeCaller {
    /// The caller on an open channel: anyone, every environment.
    fn open() -> EdgeCaller {
        EdgeCaller {
            token: None,
            environment: None,
        }
    }

    /// The caller an edge token's hash stands for, if it is a live edge token of `configuration`.
    fn of_token(configuration: &Configuration, hash: &[u8], now_ms: i64) -> Option<EdgeCaller> {
        let grant = live_edge_grant(configuration, hash, now_ms)?;
        Some(EdgeCaller {
            token: Some(hash.to_vec()),
            environment: (grant.environment != "*").then(|| grant.environment.clone()),
        })
    }

    /// The environments a `Subscribe` that asked for `asked` receives: `asked` when the token allows them
    /// all, the token's one environment when nothing in particular was asked for, else PERMISSION_DENIED.
    pub fn environments(&self, asked: Vec<String>) -> Result<Vec<String>, Status> {
        let Some(allowed) = &self.environment else {
            return Ok(asked);
        };
        if asked.is_empty() {
            return Ok(vec![allowed.clone()]);
        }
        match asked.iter().find(|environment| *environment != allowed) {
            Some(outside) => Err(Status::permission_denied(format!(
                "this edge token is for environment {allowed} only, not {outside}"
            ))),
            None => Ok(asked),
        }
    }

    /// Whether the token is still a live edge token of `configuration` (always, on an open channel).
    pub fn admitted(&self, configuration: &Configuration, now_ms: i64) -> bool {
        match &self.token {
            None => true,
            Some(hash) => live_edge_grant(configuration, hash, now_ms).is_some(),
        }
    }

    /// How long until the token expires, if it does.
    pub fn expires_in(&self, configuration: &Configuration, now_ms: i64) -> Option<Duration> {
        let hash = self.token.as_ref()?;
        let expires_at_ms = configuration.tokens.get(hash)?.expires_at_ms?;
        let remaining = u64::try_from(expires_at_ms.saturating_sub(now_ms)).unwrap_or(0);
        Some(Duration::from_millis(remaining))
    }

    /// Whether this caller may report the token `hash` as used: an edge for every environment, any token;
    /// an edge scoped to one environment only the published SDK tokens it can let in (for its environment
    /// or for all), so that it cannot move another environment's tokens' "last used".
    pub fn may_report_seen(&self, configuration: &Configuration, hash: &[u8]) -> bool {
        let Some(environment) = &self.environment else {
            return true;
        };
        configuration.tokens.get(hash).is_some_and(|grant| {
            grant.kind != v1::TokenKind::Edge as i32
                && (grant.environment == "*" || &grant.environment == environment)
        })
    }

    /// The caller the authenticator put in `request`'s extensions.
    pub fn of_request<T>(request: &Request<T>) -> Result<EdgeCaller, Status> {
        request
            .extensions()
            .get::<EdgeCaller>()
            .cloned()
            .ok_or_else(|| Status::unauthenticated("an edge token is required"))
    }
}

/// The grant of an edge token that has not expired.
fn live_edge_grant<'c>(
    configuration: &'c Configuration,
    hash: &[u8],
    now_ms: i64,
) -> Option<&'c v1::TokenGrant> {
    configuration
        .tokens
        .get(hash)
        .map(|grant| &**grant)
        .filter(|grant| grant.kind == v1::TokenKind::Edge as i32)
        .filter(|grant| grant.expires_at_ms.is_none_or(|at| at > now_ms))
}

/// The interceptor in front of both gRPC services: UNAUTHENTICATED without a live edge token, else the
/// [`EdgeCaller`] in the request's extensions.
#[derive(Clone)]
pub struct EdgeAuthenticator {
    published: watch::Receiver<Arc<Published>>,
    open: bool,
    /// Where an admitted edge token is noted as used.
    sightings: Arc<TokenSightings>,
}

impl EdgeAuthenticator {
    /// Checks tokens against the published ones, noting each admitted one in `sightings`; `open`
    /// (`--auth-type none`) admits every call.
    pub fn new(
        published: watch::Receiver<Arc<Published>>,
        open: bool,
        sightings: Arc<TokenSightings>,
    ) -> EdgeAuthenticator {
        EdgeAuthenticator {
            published,
            open,
            sightings,
        }
    }
}

impl tonic::service::Interceptor for EdgeAuthenticator {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let caller = if self.open {
            EdgeCaller::open()
        } else {
            let secret = request
                .metadata()
                .get("authorization")
                .and_then(|value| value.to_str().ok())
                .map(token::secret_of_authorization)
                .filter(|secret| !secret.is_empty())
                .ok_or_else(|| {
                    Status::unauthenticated(
                        "an edge token is required: `authorization: Bearer <edge token>` metadata",
                    )
                })?;
            let hash = token::sha256(secret);
            let now_ms = vexil_shared::time::now_ms();
            let caller =
                EdgeCaller::of_token(&self.published.borrow().configuration, &hash, now_ms)
                    .ok_or_else(|| {
                        Status::unauthenticated(
                        "the token is not a valid edge token (unknown, expired or another kind)",
                    )
                    })?;
            self.sightings.record(&hash, now_ms);
            caller
        };
        request.extensions_mut().insert(caller);
        Ok(request)
    }
}

/// `Usage/Report` for an authenticated edge: a token scoped to one environment has only that environment's
/// counts, evaluations and Unleash Edge reports counted, and only the tokens it can let in noted as used
/// ([`EdgeCaller::may_report_seen`]); the rest of the batch is dropped with a warning, and the batch is
/// acknowledged, so that the edge does not retry it forever.
pub struct ScopedUsage<U> {
    pub usage: U,
    pub published: watch::Receiver<Arc<Published>>,
}

#[tonic::async_trait]
impl<U: Usage> Usage for ScopedUsage<U> {
    async fn report(
        &self,
        mut request: Request<v1::UsageBatch>,
    ) -> Result<Response<v1::ReportAck>, Status> {
        let caller = EdgeCaller::of_request(&request)?;
        if let Some(environment) = &caller.environment {
            let batch = request.get_mut();
            let before = batch.counts.len()
                + batch.evaluations.len()
                + batch.tokens_seen.len()
                + batch.unleash_edges.len();
            batch
                .counts
                .retain(|count| &count.environment == environment);
            batch
                .unleash_edges
                .retain(|report| &report.environment == environment);
            batch
                .evaluations
                .retain(|evaluation| &evaluation.environment == environment);
            let published = self.published.borrow().clone();
            batch
                .tokens_seen
                .retain(|seen| caller.may_report_seen(&published.configuration, &seen.sha256));
            let dropped = before
                - batch.counts.len()
                - batch.evaluations.len()
                - batch.tokens_seen.len()
                - batch.unleash_edges.len();
            if dropped > 0 {
                tracing::warn!(
                    edge = %batch.edge_id,
                    %environment,
                    dropped,
                    "usage of other environments than the edge token's is not counted"
                );
            }
        }
        self.usage.report(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configuration(environment: &str, expires_at_ms: Option<i64>) -> Configuration {
        let mut configuration = Configuration::default();
        for (byte, kind) in [(1, v1::TokenKind::Edge), (2, v1::TokenKind::Admin)] {
            configuration.tokens.insert(
                vec![byte; 32],
                Arc::new(v1::TokenGrant {
                    sha256: vec![byte; 32],
                    kind: kind as i32,
                    projects: vec!["*".to_owned()],
                    environment: environment.to_owned(),
                    expires_at_ms,
                }),
            );
        }
        configuration
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn only_live_edge_tokens_are_admitted() {
        let live = configuration("*", Some(2_000));
        let caller = EdgeCaller::of_token(&live, &[1; 32], 1_000).expect("an edge token");
        assert!(caller.admitted(&live, 1_999));
        assert!(!caller.admitted(&live, 2_000), "expired");
        assert!(
            !caller.admitted(&Configuration::default(), 1_000),
            "revoked"
        );
        assert_eq!(
            caller.expires_in(&live, 1_500),
            Some(Duration::from_millis(500))
        );
        assert!(
            EdgeCaller::of_token(&live, &[2; 32], 1_000).is_none(),
            "admin"
        );
        assert!(
            EdgeCaller::of_token(&live, &[3; 32], 1_000).is_none(),
            "unknown"
        );
        assert!(
            EdgeCaller::of_token(&live, &[1; 32], 2_000).is_none(),
            "expired"
        );
        assert!(EdgeCaller::open().admitted(&Configuration::default(), 0));
    }

    #[test]
    fn a_scoped_token_receives_its_environment_only() {
        let scoped = configuration("production", None);
        let caller = EdgeCaller::of_token(&scoped, &[1; 32], 0).expect("an edge token");
        assert_eq!(caller.environments(vec![]).unwrap(), names(&["production"]));
        assert_eq!(
            caller.environments(names(&["production"])).unwrap(),
            names(&["production"])
        );
        let denied = caller
            .environments(names(&["production", "development"]))
            .unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
        let all = EdgeCaller::of_token(&configuration("*", None), &[1; 32], 0).unwrap();
        assert!(all.environments(vec![]).unwrap().is_empty());
        assert_eq!(
            all.environments(names(&["development"])).unwrap(),
            names(&["development"])
        );
    }

    #[test]
    fn a_scoped_edge_reports_only_the_tokens_it_can_let_in() {
        let mut published = configuration("production", None);
        for (byte, environment) in [(4, "production"), (5, "development"), (6, "*")] {
            published.tokens.insert(
                vec![byte; 32],
                Arc::new(v1::TokenGrant {
                    sha256: vec![byte; 32],
                    kind: v1::TokenKind::Frontend as i32,
                    projects: vec!["*".to_owned()],
                    environment: environment.to_owned(),
                    expires_at_ms: None,
                }),
            );
        }
        let scoped = EdgeCaller::of_token(&published, &[1; 32], 0).unwrap();
        assert!(
            scoped.may_report_seen(&published, &[4; 32]),
            "its environment"
        );
        assert!(
            scoped.may_report_seen(&published, &[6; 32]),
            "every environment"
        );
        assert!(
            !scoped.may_report_seen(&published, &[5; 32]),
            "another environment"
        );
        assert!(
            !scoped.may_report_seen(&published, &[1; 32]),
            "an edge token"
        );
        assert!(!scoped.may_report_seen(&published, &[9; 32]), "unknown");
        let all = EdgeCaller::of_token(&configuration("*", None), &[1; 32], 0).unwrap();
        assert!(all.may_report_seen(&published, &[5; 32]));
    }
}
