//! The calls this edge makes to its upstream Unleash (Unleash Edge's routes): `GET /api/client/delta` (where
//! the upstream has it) or `GET /api/client/features`, with `If-None-Match` and asking for zstd or gzip;
//! `POST /api/client/register`, `POST /edge/validate`, `POST /api/client/metrics/bulk`.
//! Every call carries Unleash Edge's identifying headers (`UNLEASH-APPNAME`, `UNLEASH-INSTANCEID`,
//! `UNLEASH-CONNECTION-ID`, `Unleash-Client-Spec`), a `vexil-edge/<version>` user agent and the
//! `CUSTOM_CLIENT_HEADERS`; a token goes in `TOKEN_HEADER`.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use vexil_serving::answer_encoding::{Encoding, UPSTREAM_ACCEPT_ENCODING};
use vexil_shared::FeaturesDocument;

use super::args::EdgeArgs;
use super::tokens::TokenScope;
use super::upstream_delta::{DeltaBody, DeltaEvent};

/// The client specification version this edge's engine implements.
const CLIENT_SPEC: &str = "6.1.0";

/// The most bytes a compressed document may decode to: far above any features document (10,000 flags are
/// under 10 MB); past it the answer is refused rather than held in memory.
const LARGEST_DOCUMENT: u64 = 256 << 20;

/// This edge's identity towards the upstream.
#[derive(Debug, Clone)]
pub struct Identity {
    pub app_name: String,
    pub instance_id: String,
    pub connection_id: String,
}

pub struct UnleashHttp {
    client: reqwest::Client,
    base: String,
    token_header: HeaderName,
    pub identity: Identity,
    refresh_interval: Duration,
}

/// The answer to a features fetch.
#[derive(Debug)]
pub enum Fetched {
    NotModified,
    Updated {
        document: FeaturesDocument,
        etag: Option<String>,
    },
}

/// The answer to a delta fetch.
#[derive(Debug)]
pub enum DeltaFetched {
    NotModified,
    Updated {
        events: Vec<DeltaEvent>,
        etag: Option<String>,
    },
}

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    /// The upstream answered with this status.
    Status(StatusCode),
    /// No answer (connection, timeout) or an unreadable one.
    Transport(String),
    /// An answer whose body is not what the route answers.
    Unreadable(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Status(status) => write!(f, "the upstream answered {status}"),
            CallError::Transport(error) | CallError::Unreadable(error) => f.write_str(error),
        }
    }
}

/// One token of `/edge/validate`'s answer.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Validated {
    pub token: String,
    #[serde(flatten)]
    pub scope: TokenScope,
}

impl UnleashHttp {
    pub fn new(args: &EdgeArgs, identity: Identity) -> Result<UnleashHttp, String> {
        let mut headers = HeaderMap::new();
        let mut put = |name: &str, value: &str| -> Result<(), String> {
            let name = HeaderName::try_from(name).map_err(|e| format!("header {name}: {e}"))?;
            let value = HeaderValue::try_from(value).map_err(|e| format!("header {name}: {e}"))?;
            headers.insert(name, value);
            Ok(())
        };
        put("unleash-appname", &identity.app_name)?;
        put("unleash-instanceid", &identity.instance_id)?;
        put("unleash-connection-id", &identity.connection_id)?;
        put("unleash-client-spec", CLIENT_SPEC)?;
        for (name, value) in &args.custom_client_headers {
            put(name, value)?;
        }
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("vexil-edge/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .timeout(Duration::from_secs(args.upstream_request_timeout.max(1)))
            .connect_timeout(Duration::from_secs(args.upstream_request_timeout.max(1)))
            .danger_accept_invalid_certs(args.skip_ssl_verification);
        if let Some(path) = &args.upstream_certificate_file {
            let pem =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            for certificate in reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("{}: {e}", path.display()))?
            {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let client = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let token_header = HeaderName::try_from(args.http.token_header.as_str())
            .map_err(|e| format!("TOKEN_HEADER: {e}"))?;
        Ok(UnleashHttp {
            client,
            base: args.upstream_url.trim_end_matches('/').to_owned(),
            token_header,
            identity,
            refresh_interval: Duration::from_secs(args.features_refresh_interval_seconds),
        })
    }

    /// `FEATURES_REFRESH_INTERVAL_SECONDS` in milliseconds: the `interval` of this edge's registration and
    /// of the SDK registrations it forwards (an SDK's own interval is not kept).
    pub fn interval_ms(&self) -> u64 {
        self.refresh_interval.as_millis() as u64
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, CallError> {
        request
            .send()
            .await
            .map_err(|e| CallError::Transport(without_url(e).to_string()))
    }

    /// A conditional `GET` of `path` with `token`, as the SDK polls do: `None` when `etag` still holds, else the
    /// answer's body and `ETag`.
    async fn poll(
        &self,
        path: &str,
        token: &str,
        etag: Option<&str>,
    ) -> Result<Option<(String, Option<String>)>, CallError> {
        let mut request = self
            .client
            .get(self.url(path))
            .header(&self.token_header, token)
            .header(
                "unleash-interval",
                self.refresh_interval.as_millis().to_string(),
            )
            // The document compressed: Unleash's whole document is ~6x smaller in gzip, a Vexil upstream's
            // many times more in zstd (BENCHMARKS.md).
            .header("accept-encoding", UPSTREAM_ACCEPT_ENCODING);
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        let response = self.send(request).await?;
        match response.status() {
            StatusCode::NOT_MODIFIED => Ok(None),
            status if status.is_success() => {
                let header = |name: &str| {
                    response
                        .headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let etag = header("etag");
                let coding = Encoding::of_content_encoding(
                    header("content-encoding").as_deref().unwrap_or(""),
                )
                .map_err(CallError::Unreadable)?;
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|e| CallError::Transport(without_url(e).to_string()))?;
                let bytes = match coding {
                    Some(coding) => coding
                        .decode(&bytes, LARGEST_DOCUMENT)
                        .map_err(CallError::Unreadable)?,
                    None => bytes.into(),
                };
                let text = String::from_utf8(bytes)
                    .map_err(|_| CallError::Unreadable("an answer that is not UTF-8".to_owned()))?;
                Ok(Some((text, etag)))
            }
            status => Err(CallError::Status(status)),
        }
    }

    /// `GET /api/client/features` with `token`; `NotModified` when `etag` still holds.
    pub async fn features(&self, token: &str, etag: Option<&str>) -> Result<Fetched, CallError> {
        let Some((text, etag)) = self.poll("/api/client/features", token, etag).await? else {
            return Ok(Fetched::NotModified);
        };
        let document = FeaturesDocument::from_json(&text)
            .map_err(|e| CallError::Transport(format!("the features document: {e}")))?;
        Ok(Fetched::Updated { document, etag })
    }

    /// `GET /api/client/delta` with `token`: the changes since the answer whose `ETag` was `etag` (none: a
    /// hydration); `NotModified` when there are none. An unreadable answer is [`CallError::Unreadable`].
    pub async fn delta(&self, token: &str, etag: Option<&str>) -> Result<DeltaFetched, CallError> {
        let Some((text, etag)) = self.poll("/api/client/delta", token, etag).await? else {
            return Ok(DeltaFetched::NotModified);
        };
        let body: DeltaBody = vexil_shared::model::from_json_path(&text)
            .map_err(|e| CallError::Unreadable(format!("the delta: {e}")))?;
        Ok(DeltaFetched::Updated {
            events: body.events,
            etag,
        })
    }

    /// `POST /api/client/register`: this edge, as an application of `scope`'s environment.
    pub async fn register(&self, token: &str, scope: &TokenScope) -> Result<(), CallError> {
        let body = serde_json::json!({
            "appName": self.identity.app_name,
            "instanceId": self.identity.instance_id,
            "connectionId": self.identity.connection_id,
            "environment": scope.environment,
            "projects": scope.projects,
            "interval": self.interval_ms(),
            "started": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "strategies": [],
            "sdkVersion": concat!("vexil-edge:", env!("CARGO_PKG_VERSION")),
            "platformName": "vexil-edge",
        });
        let request = self
            .client
            .post(self.url("/api/client/register"))
            .header(&self.token_header, token)
            .json(&body);
        let response = self.send(request).await?;
        match response.status() {
            status if status.is_success() => Ok(()),
            status => Err(CallError::Status(status)),
        }
    }

    /// `POST /edge/validate`: the scopes of those of `secrets` the upstream knows.
    pub async fn validate(&self, secrets: &[&str]) -> Result<Vec<Validated>, CallError> {
        #[derive(serde::Deserialize)]
        struct Answer {
            tokens: Vec<Validated>,
        }
        let request = self
            .client
            .post(self.url("/edge/validate"))
            .json(&serde_json::json!({ "tokens": secrets }));
        let response = self.send(request).await?;
        if !response.status().is_success() {
            return Err(CallError::Status(response.status()));
        }
        let answer: Answer = response.json().await.map_err(|e| {
            CallError::Transport(format!("/edge/validate's answer: {}", without_url(e)))
        })?;
        Ok(answer.tokens)
    }

    /// `POST /api/client/metrics/bulk` of `body` (JSON) with `token`.
    pub async fn bulk_metrics(&self, token: &str, body: Vec<u8>) -> Result<(), CallError> {
        self.post_json("/api/client/metrics/bulk", token, body)
            .await
    }

    /// `POST /api/client/metrics/edge` of `body` (an Unleash Edge's report on itself, JSON) with `token`.
    pub async fn edge_instance_data(&self, token: &str, body: Vec<u8>) -> Result<(), CallError> {
        self.post_json("/api/client/metrics/edge", token, body)
            .await
    }

    async fn post_json(&self, path: &str, token: &str, body: Vec<u8>) -> Result<(), CallError> {
        let request = self
            .client
            .post(self.url(path))
            .header(&self.token_header, token)
            .header("content-type", "application/json")
            .body(body);
        let response = self.send(request).await?;
        match response.status() {
            status if status.is_success() => Ok(()),
            status => Err(CallError::Status(status)),
        }
    }
}

/// A reqwest error without its URL (the URL may carry credentials in its user part).
fn without_url(error: reqwest::Error) -> reqwest::Error {
    error.without_url()
}
