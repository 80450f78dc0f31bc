//! `/edges`: every edge that reported (`metrics::edges`, as `GET /api/admin/metrics/edges`), with how many
//! revisions its applied one is behind the revision this control plane publishes: Vexil's own edges (their
//! gRPC usage reports) and the Unleash Edge instances in front of this control plane (their
//! `POST /api/client/metrics/edge` reports).

use super::controls::{ago, when};
use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::metrics;
use crate::domain::unleash_edges::UnleashEdge;
use crate::http::state::AppState;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/edges", get(list))
}

/// How far `applied` is from `current`, in words.
fn lag(applied: i64, current: i64) -> Markup {
    let behind = current.saturating_sub(applied);
    html! {
        @match behind {
            0 => { span.badge.current { "current" } }
            1 => { span.badge.behind { "1 revision behind" } }
            behind if behind > 1 => { span.badge.behind { (behind) " revisions behind" } }
            // A replica that has not yet published what an edge received from another.
            _ => { span.badge { (applied - current) " ahead of this replica" } }
        }
    }
}

/// `GET /edges`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    let shell = who.shell();
    let now_ms = (state.clock)();
    let all = metrics::edges(&state.store, now_ms).await?;
    let edges = all.edges;
    let current = i64::try_from(state.published.borrow().revision()).unwrap_or(i64::MAX);
    let markup = shell.render(
        "Edges",
        html! {
            div.page-head {
                div {
                    h1 { "Edges" }
                    p.subtitle { "The edges serving SDKs, as their last reports describe them. This control plane publishes revision " strong { (current) } "." }
                }
            }
            h2 #vexil-edges { "Vexil edges" }
            @if edges.is_empty() {
                div.empty {
                    p { "No edge has reported yet." }
                    p { "An edge reports within its metrics interval of starting, with an edge token." }
                }
            } @else {
                // Focusable, so that a keyboard can scroll it where it is wider than a phone.
                div.table-wrap tabindex="0" role="group" aria-label="Edges, scrolls sideways on narrow screens" {
                    table aria-labelledby="vexil-edges" {
                        thead { tr {
                            th scope="col" { "Edge" }
                            th scope="col" { "Version" }
                            th scope="col" { "Revision" }
                            th scope="col" { "Last report" }
                            th scope="col" { "Evaluations, last hour" }
                        } }
                        tbody {
                            @for edge in &edges {
                                tr {
                                    td.flag-name { code { (edge.edge_id) } }
                                    td { (edge.version) }
                                    td { (edge.applied_revision) " " (lag(edge.applied_revision, current)) }
                                    td {
                                        @match crate::time::Timestamp::parse(&edge.last_report) {
                                            Ok(at) => { time datetime=(edge.last_report) title=(when(&edge.last_report)) { (ago(at.millis(), now_ms)) } }
                                            Err(_) => { (edge.last_report) }
                                        }
                                    }
                                    td {
                                        (edge.evaluations_last_hour.enabled) " enabled · "
                                        (edge.evaluations_last_hour.not_enabled) " not enabled"
                                    }
                                }
                            }
                        }
                    }
                }
            }
            (unleash_edges(&all.unleash_edges, current, now_ms))
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// The Unleash Edge instances, as their latest reports describe them.
fn unleash_edges(instances: &[UnleashEdge], current: i64, now_ms: i64) -> Markup {
    html! {
        h2 #unleash-edges { "Unleash Edge" }
        @if instances.is_empty() {
            div.empty {
                p { "No Unleash Edge has reported." }
                p { "An Unleash Edge whose UPSTREAM_URL is this control plane reports every minute, with the first of its tokens." }
            }
        } @else {
            div.table-wrap tabindex="0" role="group" aria-label="Unleash Edge instances, scrolls sideways on narrow screens" {
                table aria-labelledby="unleash-edges" {
                    thead { tr {
                        th scope="col" { "Instance" }
                        th scope="col" { "Version" }
                        th scope="col" { "Revision" }
                        th scope="col" { "Last report" }
                        th scope="col" { "Requests since its previous report" }
                        th scope="col" { "Streaming clients" }
                        th scope="col" { "Reports" }
                    } }
                    tbody {
                        @for edge in instances {
                            tr {
                                td.flag-name { (edge.app_name) br; code { (edge.identifier) } }
                                td { (edge.edge_version) }
                                td {
                                    @match edge.revision() {
                                        Some(revision) => {
                                            @let revision = i64::try_from(revision).unwrap_or(i64::MAX);
                                            (revision) " " (lag(revision, current))
                                        }
                                        None => { span.muted { "not reported" } }
                                    }
                                }
                                td {
                                    @match crate::time::Timestamp::parse(&edge.last_report) {
                                        Ok(at) => { time datetime=(edge.last_report) title=(when(&edge.last_report)) { (ago(at.millis(), now_ms)) } }
                                        Err(_) => { (edge.last_report) }
                                    }
                                }
                                td {
                                    (edge.requests_since_last_report())
                                    @for (route, stats) in &edge.details.requests_since_last_report {
                                        br; span.muted { code { (route) } " " (stats.requests_200) " · " (stats.requests_304) " not modified" }
                                    }
                                }
                                td { (edge.connected_streaming_clients) }
                                td {
                                    @match &edge.via {
                                        Some(via) => { "through " code { (via) } }
                                        None => { "itself" }
                                    }
                                    ", " (edge.environment)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
