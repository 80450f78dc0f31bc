//! The addon sender: delivers the outbox rows (`store::addons`) that each audit event's write left for the
//! enabled webhook addons it matches. It wakes after this process's commits that wrote deliveries and when
//! the next pending one falls due (at least every second, which also picks up other replicas' rows), claims
//! due rows with a lease so replicas do not send the same row at once, and POSTs each with a timeout. A
//! failed attempt is retried with exponential backoff (capped) until `--webhook-max-attempts`, then the
//! row is `failed`; both ends are in the delivery log. At least once: a receiver may see an event again
//! (a crash after its answer, a lease run out) and drops repeats by `X-Vexil-Event-Id`. The receiver's
//! address is checked on every attempt ([`WebhookTargets`]): a literal one before sending, a name's on the
//! addresses it resolves to, by the client's own resolver (so what is checked is what is connected to); a
//! refused one fails the delivery at once, the refusal in the delivery log.

pub mod body;

use crate::domain::addons::custom_headers;
use crate::domain::events::{event_from_row, payload, PersonalFields};
use crate::domain::webhook_targets::{Refusal, WebhookTargets};
use crate::store::addons::{self as addon_store, Claimed, Outcome};
use crate::store::events as event_store;
use crate::store::{Store, StoreError};
use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use vexil_serving::serve::parse_duration;
use vexil_shared::time::now_ms;

/// The header carrying the audit event's id: the same on every attempt, so receivers can drop repeats.
pub const EVENT_ID_HEADER: &str = "x-vexil-event-id";
/// `sha256=<hex>`: HMAC-SHA256 of the body with the addon's `signingSecret` (only when it has one).
pub const SIGNATURE_HEADER: &str = "x-vexil-signature";

/// Rows claimed at once.
const BATCH: i64 = 16;
/// The longest wait between two looks at the outbox.
const POLL: Duration = Duration::from_secs(1);
/// How often finished rows past the retention are removed.
const CLEAN_EVERY: Duration = Duration::from_secs(600);

/// How deliveries are made: flags of the control plane (`#[command(flatten)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct DeliverySettings {
    /// Longest a webhook receiver may take to answer one attempt (`10s`, `500ms`).
    #[arg(long, env = "VEXIL_WEBHOOK_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub webhook_timeout: Duration,
    /// Attempts of one delivery before it is marked failed.
    #[arg(long, env = "VEXIL_WEBHOOK_MAX_ATTEMPTS", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub webhook_max_attempts: u32,
    /// Wait after the first failed attempt, doubled after each further one (`1s`, `200ms`).
    #[arg(long, env = "VEXIL_WEBHOOK_RETRY_BASE", default_value = "1s", value_parser = parse_duration)]
    pub webhook_retry_base: Duration,
    /// The longest wait between two attempts.
    #[arg(long, env = "VEXIL_WEBHOOK_RETRY_MAX", default_value = "5m", value_parser = parse_duration)]
    pub webhook_retry_max: Duration,
    /// Days finished deliveries stay in the delivery log.
    #[arg(long, env = "VEXIL_WEBHOOK_RETENTION_DAYS", default_value_t = 7)]
    pub webhook_retention_days: u32,
    /// Let webhooks target loopback and private addresses (127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12,
    /// 192.168.0.0/16, ::1, fc00::/7…); link-local and cloud metadata addresses stay refused.
    #[arg(long, env = "VEXIL_ALLOW_PRIVATE_WEBHOOK_TARGETS")]
    pub allow_private_webhook_targets: bool,
}

impl DeliverySettings {
    /// Which addresses webhooks may target.
    pub fn targets(&self) -> WebhookTargets {
        WebhookTargets {
            allow_private: self.allow_private_webhook_targets,
        }
    }

    /// The wait after failed attempt number `attempt` (from 1).
    fn backoff(&self, attempt: i64) -> Duration {
        let doublings = u32::try_from(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .min(30);
        self.webhook_retry_base
            .saturating_mul(1 << doublings)
            .min(self.webhook_retry_max)
    }

    /// How long a claim holds: twice an attempt's timeout and a margin, so it outlasts the attempt; a row
    /// claimed by a process that died is tried again after it.
    fn lease(&self) -> Duration {
        self.webhook_timeout.saturating_mul(2) + Duration::from_secs(5)
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Delivers the outbox forever.
pub async fn deliver_forever(store: Store, settings: DeliverySettings) {
    let client = match reqwest::Client::builder()
        .timeout(settings.webhook_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(CheckedResolver(settings.targets())))
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot build the webhook client: no webhook is delivered");
            return;
        }
    };
    let wake = store.outbox_written();
    let mut cleaned = tokio::time::Instant::now();
    loop {
        if let Err(error) = deliver_due(&store, &client, settings).await {
            tracing::warn!(%error, "cannot deliver webhooks");
        }
        let wait = match next_due(&store).await {
            Ok(Some(due)) => {
                Duration::from_millis(u64::try_from(due - now_ms()).unwrap_or(0)).min(POLL)
            }
            Ok(None) => POLL,
            Err(error) => {
                tracing::warn!(%error, "cannot read the webhook outbox");
                POLL
            }
        };
        if !wait.is_zero() {
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
        if cleaned.elapsed() >= CLEAN_EVERY {
            cleaned = tokio::time::Instant::now();
            let kept = i64::from(settings.webhook_retention_days) * 24 * 3600 * 1000;
            if let Err(error) = forget_finished(&store, now_ms() - kept).await {
                tracing::warn!(%error, "cannot clean the webhook delivery log");
            }
        }
    }
}

async fn next_due(store: &Store) -> Result<Option<i64>, StoreError> {
    let mut conn = store.read().await?;
    addon_store::next_due_ms(&mut conn).await
}

async fn forget_finished(store: &Store, before_ms: i64) -> Result<(), StoreError> {
    let mut conn = store.bookkeeping().await?;
    let forgotten = addon_store::forget_finished(&mut conn, before_ms).await?;
    if forgotten > 0 {
        tracing::info!(forgotten, "old webhook deliveries forgotten");
    }
    Ok(())
}

/// Claims and sends due rows, batch after batch, until none is due.
async fn deliver_due(
    store: &Store,
    client: &reqwest::Client,
    settings: DeliverySettings,
) -> Result<(), StoreError> {
    loop {
        let now = now_ms();
        let claimed = {
            let mut conn = store.bookkeeping().await?;
            addon_store::claim(&mut conn, now, now + millis(settings.lease()), BATCH).await?
        };
        if claimed.is_empty() {
            return Ok(());
        }
        let mut sending = JoinSet::new();
        for row in claimed {
            let (store, client) = (store.clone(), client.clone());
            sending.spawn(async move {
                if let Err(error) = deliver(&store, &client, settings, row).await {
                    tracing::warn!(%error, event_id = row.event_id, addon_id = row.addon_id,
                        "cannot record a webhook delivery");
                }
            });
        }
        while sending.join_next().await.is_some() {}
    }
}

/// What one attempt came to.
enum Attempt {
    Delivered(u16),
    Refused(u16),
    Unreachable(String),
    /// The addon cannot deliver (disabled since, its event is gone, or its receiver's address is refused):
    /// failed at once.
    Impossible(&'static str),
}

async fn deliver(
    store: &Store,
    client: &reqwest::Client,
    settings: DeliverySettings,
    row: Claimed,
) -> Result<(), StoreError> {
    let attempt = {
        let mut conn = store.read().await?;
        let addon = addon_store::get(&mut conn, row.addon_id).await?;
        let event = event_store::get(&mut conn, row.event_id).await?;
        drop(conn);
        match (addon, event) {
            // Deleted meanwhile: its rows went with it.
            (None, _) => return Ok(()),
            (Some(addon), _) if !addon.enabled => {
                Attempt::Impossible("The addon was disabled before the event was delivered")
            }
            (Some(_), None) => Attempt::Impossible("The event no longer exists"),
            (Some(addon), Some(event)) => {
                send(
                    client,
                    settings.targets(),
                    &addon.parameters,
                    // The addon's receiver is an Admin's choice: it gets the whole event.
                    &payload(&event_from_row(event, PersonalFields::Shown)),
                    row,
                )
                .await
            }
        }
    };
    let mut conn = store.bookkeeping().await?;
    let attempts = row.attempts;
    let (outcome, state_details, details) = match attempt {
        Attempt::Delivered(status) => (
            Outcome::Success,
            format!("Delivered: status code {status} (attempt {attempts})"),
            json!({ "attempts": attempts, "statusCode": status }),
        ),
        Attempt::Impossible(why) => (
            Outcome::Failed,
            why.to_owned(),
            json!({ "attempts": attempts }),
        ),
        failed => {
            let (why, details) = match failed {
                Attempt::Refused(status) => (
                    format!("Status code: {status}"),
                    json!({ "attempts": attempts, "statusCode": status }),
                ),
                Attempt::Unreachable(error) => (error, json!({ "attempts": attempts })),
                _ => (String::new(), json!({ "attempts": attempts })),
            };
            if attempts < i64::from(settings.webhook_max_attempts) {
                let next = now_ms() + millis(settings.backoff(attempts));
                let details = format!("{why} (attempt {attempts}, retrying)");
                return addon_store::retry_later(&mut conn, row, next, &details).await;
            }
            (
                Outcome::Failed,
                format!("{why} (attempt {attempts}, giving up)"),
                details,
            )
        }
    };
    if outcome == Outcome::Failed {
        tracing::warn!(event_id = row.event_id, addon_id = row.addon_id, %state_details,
            "webhook delivery failed");
    }
    addon_store::finish(&mut conn, row, outcome, &state_details, &details, now_ms()).await
}

fn parameter<'a>(parameters: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a str> {
    parameters
        .get(name)
        .and_then(Value::as_str)
        .filter(|value| !value.is_empty())
}

/// The client's resolver: a name's addresses, refused (all of them) when any is not a webhook target.
struct CheckedResolver(WebhookTargets);

/// A name that resolved to an address webhooks may not target.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.delivery_message())]
struct RefusedTarget(Refusal);

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let targets = self.0;
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if let Some(refusal) = addresses
                .iter()
                .find_map(|address| targets.refusal(address.ip()))
            {
                return Err(
                    Box::new(RefusedTarget(refusal)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The refusal behind a failed request, if its receiver's name resolved to a refused address.
fn refusal_of(error: &reqwest::Error) -> Option<Refusal> {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(RefusedTarget(refusal)) = cause.downcast_ref::<RefusedTarget>() {
            return Some(*refusal);
        }
        source = cause.source();
    }
    None
}

/// One POST.
async fn send(
    client: &reqwest::Client,
    targets: WebhookTargets,
    parameters: &serde_json::Map<String, Value>,
    event: &Value,
    row: Claimed,
) -> Attempt {
    let Some(url) = parameter(parameters, "url") else {
        return Attempt::Impossible("The addon has no url");
    };
    // A literal address is connected to without the resolver: checked here.
    let literal = match url::Url::parse(url)
        .ok()
        .and_then(|url| url.host().map(|host| host.to_owned()))
    {
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        _ => None,
    };
    if let Some(refusal) = literal.and_then(|address| targets.refusal(address)) {
        return Attempt::Impossible(refusal.delivery_message());
    }
    let content_type = parameter(parameters, "contentType").unwrap_or("application/json");
    let body = body::render(
        parameter(parameters, "bodyTemplate"),
        event,
        content_type.contains("json"),
    );
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .header(EVENT_ID_HEADER, row.event_id.to_string());
    if let Some(authorization) = parameter(parameters, "authorization") {
        request = request.header(reqwest::header::AUTHORIZATION, authorization);
    }
    if let Some(secret) = parameter(parameters, "signingSecret") {
        request = request.header(SIGNATURE_HEADER, body::signature(secret, body.as_bytes()));
    }
    if let Some(headers) = parameter(parameters, "customHeaders") {
        // Checked when the addon was written.
        for (name, value) in custom_headers(headers).unwrap_or_default() {
            request = request.header(name, value);
        }
    }
    match request.body(body).send().await {
        Ok(response) if response.status().is_success() => {
            Attempt::Delivered(response.status().as_u16())
        }
        Ok(response) => Attempt::Refused(response.status().as_u16()),
        Err(error) => match refusal_of(&error) {
            Some(refusal) => Attempt::Impossible(refusal.delivery_message()),
            None if error.is_timeout() => {
                Attempt::Unreachable("The receiver did not answer in time".to_owned())
            }
            None => Attempt::Unreachable(format!(
                "Cannot reach the receiver: {}",
                without_url(&error)
            )),
        },
    }
}

/// A reqwest error's text without the URL (which is sensitive).
fn without_url(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut text = String::from(if error.is_connect() {
        "connection failed"
    } else {
        "request failed"
    });
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let settings = DeliverySettings {
            webhook_timeout: Duration::from_secs(1),
            webhook_max_attempts: 8,
            webhook_retry_base: Duration::from_millis(100),
            webhook_retry_max: Duration::from_millis(500),
            webhook_retention_days: 7,
            allow_private_webhook_targets: false,
        };
        let waits: Vec<u128> = (1..=6).map(|a| settings.backoff(a).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500, 500]);
        assert_eq!(settings.backoff(i64::MAX), Duration::from_millis(500));
    }
}
