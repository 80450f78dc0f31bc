//! The applications SDKs registered: `/applications` (every application the client retention keeps, by name,
//! paged: description, instances, last seen) and `/applications/<app>` (its instances, SDK versions per
//! environment, registered strategies and the flags it reported), from `metrics::application_page`,
//! `metrics::application` (`GET /api/admin/metrics/applications/<app>`) and `application_overview::overview`.

use super::controls::{ago, when};
use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::{application_overview, metrics};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/applications", get(list))
        .route("/applications/{app}", get(page))
}

/// Applications per page.
pub const PAGE_SIZE: usize = 25;

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    page: Option<usize>,
}

/// `GET /applications`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let page = query.page.unwrap_or(1).max(1);
    let offset = (page - 1).saturating_mul(PAGE_SIZE);
    let found = metrics::application_page(&state.store, offset, PAGE_SIZE).await?;
    let now_ms = (state.clock)();
    let total = usize::try_from(found.total).unwrap_or(0);
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let first_shown = offset + 1;
    let last_shown = offset + found.applications.len();
    let page_link = |page: usize| who.link(&format!("/applications?page={page}"));
    let markup = shell.render(
        "Applications",
        html! {
            div.page-head {
                div {
                    h1 { "Applications" }
                    p.subtitle { "Applications whose SDKs registered or reported usage, with their running instances." }
                }
            }
            @if found.applications.is_empty() {
                div.empty {
                    @if total > 0 {
                        p { "No applications on this page." }
                        a href=(page_link(1)) { "First page" }
                    } @else {
                        p { "No application has registered yet." }
                        p { "An SDK registers its application when it starts, with a client token, at an edge or at the control plane." }
                    }
                }
            } @else {
                div.table-wrap {
                    table {
                        caption.skip { "Applications" }
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Instances" }
                            th scope="col" { "Last seen" }
                        } }
                        tbody {
                            @for application in &found.applications {
                                tr {
                                    td.flag-name {
                                        a href=(who.link(&format!("/applications/{}", metrics::path_segment(&application.app_name)))) { (application.app_name) }
                                        @if let Some(description) = application.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td { (application.instance_count) }
                                    td { (ago(application.last_seen_ms, now_ms)) }
                                }
                            }
                        }
                    }
                }
                div.pager {
                    span { "Showing " (first_shown) "–" (last_shown) " of " (total) }
                    nav aria-label="Pages" {
                        @if page > 1 {
                            a.button href=(page_link(page - 1)) { "Previous page" }
                        }
                        span.muted { "Page " (page) " of " (pages) }
                        @if page < pages {
                            a.button href=(page_link(page + 1)) { "Next page" }
                        }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `GET /applications/<app>`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(app_name): Path<String>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let (details, overview) = async {
        let details = metrics::application(&state.store, &app_name).await?;
        let overview = application_overview::overview(&state.store, &app_name).await?;
        Ok::<_, ApiError>((details, overview))
    }
    .await?;
    let missing: Vec<&String> = overview
        .environments
        .first()
        .map(|environment| environment.issues.missing_features.iter().collect())
        .unwrap_or_default();
    let markup = shell.render(
        &details.app_name,
        html! {
            p { a href=(who.link("/applications")) { "← Applications" } }
            div.page-head {
                div {
                    h1 { (details.app_name) }
                    p.subtitle {
                        "Application · first seen " (when(&details.created_at))
                        @if !overview.projects.is_empty() { " · uses flags of " (overview.projects.join(", ")) }
                    }
                    @if let Some(description) = details.description.as_deref().filter(|d| !d.is_empty()) {
                        p { (description) }
                    }
                    @if let Some(url) = details.url.as_deref().filter(|u| !u.is_empty()) {
                        p { "Link: " code { (url) } }
                    }
                }
            }
            section.card aria-labelledby="instances-title" {
                div.card-head { h2 #instances-title { "Instances" } }
                @if details.instances.is_empty() {
                    p.muted { "No instance is known: the SDKs of this application have not registered (or left the client retention)." }
                } @else {
                    // Focusable, so that a keyboard can scroll it where it is wider than a phone.
                    div.table-wrap tabindex="0" role="group" aria-label="Instances, scrolls sideways on narrow screens" {
                        table {
                            thead { tr {
                                th scope="col" { "Instance" }
                                th scope="col" { "SDK version" }
                                th scope="col" { "Environment" }
                                th scope="col" { "Last seen" }
                                th.hide-narrow scope="col" { "Address" }
                            } }
                            tbody {
                                @for instance in &details.instances {
                                    tr {
                                        td.flag-name { code { (instance.instance_id) } }
                                        td { (instance.sdk_version.as_deref().unwrap_or("unknown")) }
                                        td { (instance.environment.as_deref().unwrap_or("–")) }
                                        td { (when(&instance.last_seen)) }
                                        td.hide-narrow { (instance.client_ip.as_deref().unwrap_or("–")) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="sdks-title" {
                div.card-head { h2 #sdks-title { "SDK versions" } }
                @if overview.environments.is_empty() {
                    p.muted { "None reported." }
                } @else {
                    dl.meta {
                        @for environment in &overview.environments {
                            dt { (environment.name) }
                            dd {
                                @if environment.sdks.is_empty() { span.muted { "unknown" } }
                                @else { (environment.sdks.join(", ")) }
                                " · " (environment.instance_count) (if environment.instance_count == 1 { " instance" } else { " instances" })
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="flags-title" {
                div.card-head { h2 #flags-title { "Flags it uses" } }
                @if details.seen_toggles.is_empty() {
                    p.muted { "It has reported no flag yet." }
                } @else {
                    ul.app-flags {
                        @for flag in &details.seen_toggles {
                            li {
                                code { (flag) }
                                @if missing.contains(&flag) { " " span.badge.stale { "no such flag" } }
                            }
                        }
                    }
                }
                @if !overview.issues.missing_strategies.is_empty() {
                    p { "Registered strategies not defined here: " (overview.issues.missing_strategies.join(", ")) }
                }
                @for registration in &details.strategies {
                    p.muted { "Registered strategies: " (registration.strategies.join(", ")) }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}
