//! `/edges`: every edge that reported (`metrics::edges`, as `GET /api/admin/metrics/edges`), with how many
//! revisions its applied one is behind the revision this control plane publishes.

use super::controls::{ago, when};
use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::metrics;
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
    let edges = metrics::edges(&state.store, now_ms).await?.edges;
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
            @if edges.is_empty() {
                div.empty {
                    p { "No edge has reported yet." }
                    p { "An edge reports within its metrics interval of starting, with an edge token." }
                }
            } @else {
                // Focusable, so that a keyboard can scroll it where it is wider than a phone.
                div.table-wrap tabindex="0" role="group" aria-label="Edges, scrolls sideways on narrow screens" {
                    table {
                        caption.skip { "Edges" }
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
        },
    );
    Ok(Page::ok(markup).into_response())
}
