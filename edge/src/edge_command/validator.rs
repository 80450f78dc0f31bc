//! SDK tokens this edge learns from its upstream: a token the snapshot does not hold is validated with
//! `POST /edge/validate` (one validation at a time; a refusal is remembered for [`REFUSAL_MEMORY`]), and
//! served when one of the startup tokens covers its environment and projects (Unleash Edge's rule;
//! otherwise the request gets 403 saying so). Every `TOKEN_REVALIDATION_INTERVAL_SECONDS` the tokens learnt
//! are validated again and those the upstream no longer knows stop being served. `PRETRUSTED_TOKENS` are
//! served without validation. Secrets are kept in memory only (never logged, never backed up).

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use vexil_serving::token_resolver::TokenResolver;
use vexil_serving::TokenGrant;
use vexil_shared::token::{sha256, SecretHash, TokenKind};
use vexil_shared::{ApiError, ErrorKind, Projects};

use super::mirror::Mirror;
use super::poller::StartupToken;
use super::tokens::{redacted, TokenScope};
use super::upstream_http::{UnleashHttp, Validated};

/// How long a token the upstream did not know is refused without asking again.
pub const REFUSAL_MEMORY: Duration = Duration::from_secs(2);
/// Most refusals remembered.
const MAX_REFUSALS: usize = 10_000;
/// Most secrets sent in one `/edge/validate` call when revalidating.
const VALIDATE_BATCH: usize = 100;

pub struct Validator {
    http: Arc<UnleashHttp>,
    mirror: Arc<Mirror>,
    startup: Vec<StartupToken>,
    /// Learnt tokens: hash → secret and scope.
    known: Mutex<BTreeMap<SecretHash, (String, TokenScope)>>,
    refused: Mutex<BTreeMap<SecretHash, (Instant, Option<ApiError>)>>,
    /// One validation at a time.
    asking: tokio::sync::Mutex<()>,
}

impl Validator {
    pub fn new(
        http: Arc<UnleashHttp>,
        mirror: Arc<Mirror>,
        startup: Vec<StartupToken>,
    ) -> Validator {
        Validator {
            http,
            mirror,
            startup,
            known: Mutex::default(),
            refused: Mutex::default(),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    /// Serves the pretrusted tokens.
    pub fn trust(&self, pretrusted: &[(String, TokenScope)]) {
        self.mirror.upsert_tokens(
            pretrusted
                .iter()
                .map(|(secret, scope)| {
                    let hash = sha256(secret);
                    (hash, grant(&hash, scope, TokenKind::Frontend))
                })
                .collect(),
        );
    }

    /// Whether a startup token covers `scope` (Unleash Edge's rule for what an edge serves).
    pub fn covered(&self, scope: &TokenScope) -> bool {
        self.startup.iter().any(|token| token.scope.covers(scope))
    }

    async fn resolve_secret(&self, secret: &str, hash: SecretHash) -> Result<(), ApiError> {
        if let Some(refusal) = self.remembered_refusal(&hash) {
            return refusal;
        }
        let _asking = self.asking.lock().await;
        if lock(&self.known).contains_key(&hash) {
            return Ok(());
        }
        if let Some(refusal) = self.remembered_refusal(&hash) {
            return refusal;
        }
        let answer = match self.http.validate(&[secret]).await {
            Ok(answer) => answer,
            Err(error) => {
                tracing::warn!(%error, token = %redacted(secret), "cannot validate a token with the upstream");
                return Err(ApiError::new(
                    ErrorKind::AuthenticationRequired,
                    "The API token could not be validated: the upstream does not answer",
                ));
            }
        };
        match answer.into_iter().find(|v| v.token == secret) {
            Some(Validated { scope, .. }) => self.learn(secret, hash, scope),
            None => {
                self.remember_refusal(hash, None);
                Ok(())
            }
        }
    }

    fn learn(&self, secret: &str, hash: SecretHash, scope: TokenScope) -> Result<(), ApiError> {
        let kind = scope.kind.unwrap_or(TokenKind::Client);
        if matches!(kind, TokenKind::Client | TokenKind::Frontend) && !self.covered(&scope) {
            let refusal = ApiError::new(
                ErrorKind::NoAccess,
                format!(
                    "This edge serves no token of environment {} and projects {}: none of its startup tokens covers them",
                    scope.environment,
                    scope.projects.join(", ")
                ),
            );
            self.remember_refusal(hash, Some(refusal.clone()));
            return Err(refusal);
        }
        // An admin token is learnt too, so that it is refused with 403 rather than 401.
        self.mirror
            .upsert_tokens(vec![(hash, grant(&hash, &scope, kind))]);
        lock(&self.known).insert(hash, (secret.to_owned(), scope));
        Ok(())
    }

    fn remembered_refusal(&self, hash: &SecretHash) -> Option<Result<(), ApiError>> {
        let refused = lock(&self.refused);
        let (at, answer) = refused.get(hash)?;
        (at.elapsed() < REFUSAL_MEMORY).then(|| answer.clone().map_or(Ok(()), Err))
    }

    fn remember_refusal(&self, hash: SecretHash, answer: Option<ApiError>) {
        let mut refused = lock(&self.refused);
        refused.retain(|_, (at, _)| at.elapsed() < REFUSAL_MEMORY);
        if refused.len() < MAX_REFUSALS {
            refused.insert(hash, (Instant::now(), answer));
        }
    }

    /// Validates every learnt token again; those the upstream no longer knows (or whose scope it now
    /// answers differently) are dropped or updated. An upstream that does not answer changes nothing.
    pub async fn revalidate(&self) {
        let known: Vec<(SecretHash, String)> = lock(&self.known)
            .iter()
            .map(|(hash, (secret, _))| (*hash, secret.clone()))
            .collect();
        for chunk in known.chunks(VALIDATE_BATCH) {
            let secrets: Vec<&str> = chunk.iter().map(|(_, secret)| secret.as_str()).collect();
            let answer = match self.http.validate(&secrets).await {
                Ok(answer) => answer,
                Err(error) => {
                    tracing::warn!(%error, "cannot revalidate the tokens; keeping them");
                    return;
                }
            };
            let mut gone = Vec::new();
            for (hash, secret) in chunk {
                match answer.iter().find(|v| &v.token == secret) {
                    Some(validated) => {
                        let before = lock(&self.known).remove(hash).map(|(_, scope)| scope);
                        if before.as_ref() == Some(&validated.scope) {
                            lock(&self.known)
                                .insert(*hash, (secret.clone(), validated.scope.clone()));
                            continue;
                        }
                        if self.learn(secret, *hash, validated.scope.clone()).is_err() {
                            gone.push(*hash);
                        }
                    }
                    None => {
                        tracing::info!(token = %redacted(secret), "a token is no longer valid upstream");
                        lock(&self.known).remove(hash);
                        gone.push(*hash);
                    }
                }
            }
            self.mirror.remove_tokens(&gone);
        }
    }

    /// Revalidates every `interval`, forever.
    pub async fn revalidate_every(self: Arc<Self>, interval: Duration) {
        loop {
            tokio::time::sleep(interval).await;
            self.revalidate().await;
        }
    }
}

impl TokenResolver for Validator {
    fn resolve<'a>(
        &'a self,
        secret: &'a str,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + 'a>> {
        Box::pin(self.resolve_secret(secret, sha256(secret)))
    }
}

fn grant(hash: &SecretHash, scope: &TokenScope, kind: TokenKind) -> TokenGrant {
    TokenGrant::new(
        Some(hash),
        kind,
        Projects::from_list(&scope.projects),
        scope.environment.clone(),
        None,
    )
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
