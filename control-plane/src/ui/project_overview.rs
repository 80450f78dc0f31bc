//! A project's overview (`/projects/<project>/overview`), its landing page from the project list and the
//! search: health (the share of healthy flags, the stale and potentially stale ones listed with links), flags
//! by type, archived flags, the last 30 days, environments, members, and the latest events as the event
//! log's sentences; links to the flags and the settings. A project without flags shows the first steps
//! (create a flag, connect an SDK) instead of its health. From `domain::project_overview::page` (eight
//! statements whatever the number of flags) and one event search.

use super::event_log::{event_days, DayHeading};
use super::event_sentence::Context;
use super::favorites::star;
use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::access;
use crate::domain::access::Scope;
use crate::domain::feature_types::{self, FeatureTypes};
use crate::domain::permissions::Permission;
use crate::domain::project_overview::{self, OverviewPage, WINDOW_DAYS};
use crate::domain::search::events::{search, EventSearchQuery};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// This module's page.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/projects/{project}/overview", get(page))
}

/// Stale and potentially stale flags listed by name (the flag list, filtered, has them all).
const UNHEALTHY_SHOWN: i64 = 10;
/// Events under "Recent activity".
const RECENT_EVENTS: usize = 8;

/// "1 flag", "2 flags".
fn count(number: i64, one: &str, many: &str) -> String {
    format!("{number} {}", if number == 1 { one } else { many })
}

/// A flag type's name as people read it ("Kill switch"), with its lifetime in days, if it has one.
fn type_words(types: &FeatureTypes, feature_type: &str) -> (String, Option<u32>) {
    types
        .types
        .iter()
        .find(|info| info.id == feature_type)
        .map_or((feature_type.to_owned(), None), |info| {
            (info.name.clone(), info.lifetime_days)
        })
}

/// `GET /projects/<project>/overview`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
) -> Result<Response, UiError> {
    let now_ms = (state.clock)();
    let mut conn = state.store.read().await?;
    let facts = project_overview::page(
        &mut conn,
        &project,
        who.actor.user_id,
        now_ms,
        UNHEALTHY_SHOWN,
    )
    .await?;
    let query = EventSearchQuery {
        project: Some(format!("IS:{project}")),
        limit: Some(RECENT_EVENTS.to_string()),
        ..EventSearchQuery::default()
    };
    let recent = search(&mut conn, &query, access::personal_fields(who.credential))
        .await?
        .events;
    let types = feature_types::list(&mut conn).await?;
    drop(conn);
    let context = Context {
        base: &who.base,
        on_flag_page: false,
        on_project_page: true,
    };
    let markup = who.shell().render(
        &format!("Overview of {}", facts.name),
        html! {
            (head(&who, &project, &facts))
            @if facts.health.total == 0 {
                (first_steps(&who, &project, facts.windows.archived_total))
            } @else {
                div.overview-grid {
                    (health_card(&who, &project, &facts, &types))
                    (types_card(&who, &project, &facts, &types))
                }
            }
            div.overview-grid {
                (environments_card(&who, &project, &facts))
                (members_card(&who, &project, &facts))
            }
            section.card aria-labelledby="activity-title" {
                div.card-head {
                    h2 #activity-title { "Recent activity" }
                    a href=(who.link(&format!("/history?project={}", encoded(&project)))) { "All events of this project" }
                }
                @if recent.is_empty() {
                    p.muted { "Nothing has happened here yet." }
                } @else {
                    (event_days(&recent, &context, DayHeading::H3))
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn head(who: &SignedIn, project: &str, facts: &OverviewPage) -> Markup {
    let here = who.link(&format!("/projects/{project}/overview"));
    html! {
        div.page-head {
            div.page-title {
                div.title-row {
                    (star(who, &facts.name, facts.favorite, &who.link(&format!("/projects/{project}/favorite")),
                        &format!("{here}#favorite-project")))
                    h1 { (facts.name) }
                }
                p.subtitle {
                    "Project overview · " (count(facts.health.total, "flag", "flags"))
                    @if facts.name != project { " · id " code { (project) } }
                }
                @if let Some(description) = facts.description.as_deref().filter(|d| !d.is_empty()) {
                    p { (description) }
                }
            }
            div.actions {
                a.button href=(who.link(&format!("/projects/{project}"))) { "Flags" }
                a.button href=(who.link(&format!("/projects/{project}/settings"))) { "Settings" }
                a.button href=(who.link(&format!("/projects/{project}/context"))) { "Context fields" }
                @if who.may(Permission::ProjectUserAccessRead, &Scope::project(project)) {
                    a.button href=(who.link(&format!("/projects/{project}/access"))) { "Access" }
                }
                @if who.may_submit("/projects/{project}/create-flag", &Scope::project(project)) {
                    a.button.primary href=(who.link(&format!("/projects/{project}/create-flag"))) { "New flag" }
                }
            }
        }
    }
}

/// A project without flags: what to do first.
fn first_steps(who: &SignedIn, project: &str, archived: i64) -> Markup {
    html! {
        div.empty.overview-empty {
            p { "No flags in this project yet." }
            div.row-actions {
                @if who.may_submit("/projects/{project}/create-flag", &Scope::project(project)) {
                    a.button.primary href=(who.link(&format!("/projects/{project}/create-flag"))) { "Create the first flag" }
                }
                a.button href=(who.link(&format!("/projects/{project}/connect"))) { "Connect an SDK" }
            }
            p.muted { "Create a flag, then connect your app: the SDK asks for the project's flags with a token." }
            @if archived > 0 {
                p.muted { (count(archived, "archived flag is", "archived flags are")) " in the "
                    a href=(who.link("/archive")) { "archive" } "." }
            }
        }
    }
}

fn health_card(
    who: &SignedIn,
    project: &str,
    facts: &OverviewPage,
    types: &FeatureTypes,
) -> Markup {
    let health = facts.health;
    let stale: Vec<_> = facts.unhealthy.iter().filter(|flag| flag.stale).collect();
    let potentially: Vec<_> = facts.unhealthy.iter().filter(|flag| !flag.stale).collect();
    let flag_link = |name: &str| who.link(&format!("/projects/{project}/features/{name}"));
    let windows = &facts.windows;
    html! {
        section.card aria-labelledby="health-title" {
            h2 #health-title { "Health" }
            p.health-figure {
                span.big-number { (health.rating()) "%" } " " span { "healthy" }
            }
            p { (health.healthy()) " of " (count(health.total, "flag is", "flags are")) " neither stale nor potentially stale." }
            @if health.stale == 0 && health.potentially_stale == 0 {
                p.muted { "No flag is stale or past its expected lifetime." }
            }
            @if health.stale > 0 {
                h3 #stale-title { "Stale " span.muted { "(" (health.stale) ")" } }
                ul.flag-links aria-labelledby="stale-title" {
                    @for flag in &stale {
                        li { a href=(flag_link(&flag.name)) { (flag.name) } " " span.badge.stale { "stale" } }
                    }
                }
                @if health.stale > i64::try_from(stale.len()).unwrap_or(0) {
                    p { a href=(who.link(&format!("/projects/{project}?state=stale"))) { "All " (health.stale) " stale flags" } }
                }
            }
            @if health.potentially_stale > 0 {
                h3 #potentially-stale-title { "Potentially stale " span.muted { "(" (health.potentially_stale) ")" } }
                p.muted { "Older than their type's expected lifetime: archive them, or mark them stale while they are removed from the code." }
                ul.flag-links aria-labelledby="potentially-stale-title" {
                    @for flag in &potentially {
                        @let (type_name, lifetime) = type_words(types, &flag.feature_type);
                        li {
                            a href=(flag_link(&flag.name)) { (flag.name) }
                            " " span.muted { (type_name)
                                @if let Some(days) = lifetime { " · over " (days) " days old" } }
                        }
                    }
                }
                @if health.potentially_stale > i64::try_from(potentially.len()).unwrap_or(0) {
                    p.muted { "And " (health.potentially_stale - i64::try_from(potentially.len()).unwrap_or(0)) " more." }
                }
            }
            h3 #window-title { "Last " (WINDOW_DAYS) " days" }
            ul.plain aria-labelledby="window-title" {
                li { (count(windows.created_current, "flag created", "flags created"))
                    span.muted { " (" (windows.created_past) " in the 30 days before)" } }
                li { (count(windows.archived_current, "flag archived", "flags archived"))
                    span.muted { " (" (windows.archived_past) " before)" } }
                li { (count(windows.events_current, "change", "changes"))
                    span.muted { " (" (windows.events_past) " before)" } }
            }
        }
    }
}

fn types_card(who: &SignedIn, project: &str, facts: &OverviewPage, types: &FeatureTypes) -> Markup {
    html! {
        section.card aria-labelledby="types-title" {
            h2 #types-title { "Flags by type" }
            dl.meta {
                @for one in &facts.feature_type_counts {
                    @let (type_name, _) = type_words(types, &one.feature_type);
                    dt { a href=(who.link(&format!("/projects/{project}?type={}", encoded(&one.feature_type)))) { (type_name) } }
                    dd { (one.count) }
                }
            }
            h3 #archived-title { "Archive" }
            dl.meta aria-labelledby="archived-title" {
                dt { a href=(who.link("/archive")) { "Archived flags" } } dd { (facts.windows.archived_total) }
            }
        }
    }
}

fn environments_card(who: &SignedIn, project: &str, facts: &OverviewPage) -> Markup {
    let environments = &facts.environments;
    html! {
        section.card aria-labelledby="environments-title" {
            div.card-head {
                h2 #environments-title { "Environments" }
                a href=(who.link(&format!("/projects/{project}/settings"))) { "Choose environments" }
            }
            @if environments.is_empty() {
                p.muted { "This project uses no environment: its flags are served nowhere." }
            } @else {
                ul.plain aria-labelledby="environments-title" {
                    @for environment in environments {
                        li {
                            strong.place { (environment.environment) }
                            @if environment.change_requests_enabled {
                                " " span.badge.pending { "change requests" }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn members_card(who: &SignedIn, project: &str, facts: &OverviewPage) -> Markup {
    let members = facts.members;
    let may_see_access = who.may(Permission::ProjectUserAccessRead, &Scope::project(project));
    html! {
        section.card aria-labelledby="members-title" {
            div.card-head {
                h2 #members-title { "Members" }
                @if may_see_access { a href=(who.link(&format!("/projects/{project}/access"))) { "Who has access" } }
            }
            p { (count(members.count, "member", "members")) }
            p.muted { "People and service accounts with a role in this project, their own or a group's. Root roles (Admin, Editor, Viewer) hold in every project besides." }
            @if members.added_since > 0 {
                p.muted { (count(members.added_since, "member", "members")) " joined in the last " (WINDOW_DAYS) " days." }
            }
        }
    }
}
