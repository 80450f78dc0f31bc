//! The routes `vexil-edge edge` adds to the SDK routes, as Unleash Edge serves them:
//! `/internal-backstage/{health,ready,metrics,features,tokens}` in its shapes and the `/api/proxy…` aliases of the frontend routes; and its request filters:
//! `ALLOW_LIST` / `DENY_LIST`, and a `TOKEN_HEADER` other than `Authorization`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use ipnet::IpNet;
use metrics_exporter_prometheus::PrometheusHandle;
use tower::ServiceExt as _;
use vexil_serving::ServingState;

use super::mirror::Mirror;
use super::poller::StartupToken;
use super::tokens::redacted;
use crate::http_server::{self, UpstreamStatus};

pub struct Backstage {
    pub serving: Arc<ServingState>,
    pub status: Arc<UpstreamStatus>,
    pub prometheus: PrometheusHandle,
    pub mirror: Arc<Mirror>,
    pub startup: Vec<StartupToken>,
    pub disable_metrics: bool,
    pub disable_features: bool,
    pub disable_tokens: bool,
}

/// The backstage routes (`POST /edge/validate` is a serving route: edges chain through it).
pub fn router(backstage: Arc<Backstage>) -> Router {
    let mut routes = Router::new()
        .route("/internal-backstage/health", get(health))
        .route("/internal-backstage/ready", get(ready));
    if !backstage.disable_metrics {
        routes = routes.route("/internal-backstage/metrics", get(prometheus));
    }
    if !backstage.disable_features {
        routes = routes.route("/internal-backstage/features", get(features));
    }
    if !backstage.disable_tokens {
        routes = routes.route("/internal-backstage/tokens", get(tokens));
    }
    routes.with_state(backstage)
}

/// `/api/proxy` and everything under it, answered as `/api/frontend…` by `app`.
pub fn proxy_aliases(app: Router) -> Router {
    let service = tower::service_fn(move |mut request: Request| {
        let app = app.clone();
        async move {
            let rest = request.uri().path().to_owned();
            let query = request
                .uri()
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            let path = format!("/api/frontend{}{query}", rest.trim_end_matches('/'));
            if let Ok(uri) = path.parse() {
                *request.uri_mut() = uri;
            }
            app.oneshot(request).await
        }
    });
    Router::new().nest_service("/api/proxy", service)
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "OK"}))
}

async fn ready(State(backstage): State<Arc<Backstage>>) -> Response {
    if backstage.serving.current.load().is_some() {
        Json(serde_json::json!({"status": "READY"})).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "NOT_READY"})),
        )
            .into_response()
    }
}

async fn prometheus(State(backstage): State<Arc<Backstage>>) -> Response {
    http_server::prometheus_answer(&backstage.serving, &backstage.status, &backstage.prometheus)
}

/// Environment → its client-API document, as Unleash Edge's `/internal-backstage/features`.
async fn features(State(backstage): State<Arc<Backstage>>) -> Json<serde_json::Value> {
    let backup = backstage.mirror.backup();
    let mut out = serde_json::Map::new();
    for (environment, documents) in backup.documents {
        let mut features = serde_json::Map::new();
        let mut segments = serde_json::Map::new();
        for document in documents.values() {
            for feature in &document.features {
                features.insert(
                    feature.name.clone(),
                    serde_json::to_value(feature).unwrap_or_default(),
                );
            }
            for segment in &document.segments {
                segments.insert(
                    segment.id.to_string(),
                    serde_json::to_value(segment).unwrap_or_default(),
                );
            }
        }
        out.insert(
            environment,
            serde_json::json!({"version": 2, "features": features.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
                "segments": segments.into_iter().map(|(_, v)| v).collect::<Vec<_>>()}),
        );
    }
    Json(serde_json::Value::Object(out))
}

/// The startup tokens polled and the tokens served (secrets redacted), as Unleash Edge's
/// `/internal-backstage/tokens`.
async fn tokens(State(backstage): State<Arc<Backstage>>) -> Json<serde_json::Value> {
    let refreshes: Vec<serde_json::Value> = backstage
        .startup
        .iter()
        .map(|token| {
            serde_json::json!({"token": {"token": redacted(&token.secret), "type": "client",
                "environment": token.scope.environment, "projects": token.scope.projects}})
        })
        .collect();
    let served: Vec<serde_json::Value> = backstage
        .mirror
        .backup()
        .tokens
        .into_iter()
        .map(|token| {
            serde_json::json!({"token": format!("{}…", &token.sha256[..8]), "type": token.kind,
                "environment": token.environment, "projects": token.projects, "status": "Validated"})
        })
        .collect();
    Json(serde_json::json!({
        "tokenRefreshes": refreshes,
        "tokenValidationStatus": served,
        "invalidTokenCount": 0,
    }))
}

/// Copies the token of `header` (`TOKEN_HEADER`) into `Authorization`, where the SDK routes read it.
pub async fn token_header(header: Arc<HeaderName>, mut request: Request, next: Next) -> Response {
    if let Some(value) = request.headers().get(&*header).cloned() {
        request
            .headers_mut()
            .insert(axum::http::header::AUTHORIZATION, value);
    }
    next.run(request).await
}

/// The callers `ALLOW_LIST` and `DENY_LIST` let through.
pub struct Networks {
    pub allow: Vec<IpNet>,
    pub deny: Vec<IpNet>,
}

impl Networks {
    pub fn admits(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        (self.allow.is_empty() || self.allow.iter().any(|net| net.contains(&ip)))
            && !self.deny.iter().any(|net| net.contains(&ip))
    }
}

pub async fn filter_callers(networks: Arc<Networks>, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    match peer {
        Some(ip) if !networks.admits(ip) => Response::builder()
            .status(StatusCode::FORBIDDEN)
            .body(Body::empty())
            .unwrap_or_default(),
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_and_deny_lists() {
        let networks = Networks {
            allow: vec!["10.0.0.0/8".parse().unwrap()],
            deny: vec!["10.1.0.0/16".parse().unwrap()],
        };
        assert!(networks.admits("10.2.3.4".parse().unwrap()));
        assert!(networks.admits("::ffff:10.2.3.4".parse().unwrap()));
        assert!(!networks.admits("10.1.3.4".parse().unwrap()));
        assert!(!networks.admits("192.168.0.1".parse().unwrap()));
        let open = Networks {
            allow: vec![],
            deny: vec![],
        };
        assert!(open.admits("192.168.0.1".parse().unwrap()));
    }
}
