//! The event log (`/history`, Unleash's URL): every audit event, newest first, 25 a page, filtered by type,
//! project, flag and author through `domain::search::events` (the search of `GET /api/admin/search/events`),
//! each with what it changed. The filters are a GET form, so a filtered page can be linked.

use super::event_log::{event_days, DayHeading};
use super::event_sentence::Context;
use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::access;
use crate::domain::events::{self, EventType};
use crate::domain::projects;
use crate::domain::search::events::{search, EventSearchQuery, EventSearchResult};
use crate::http::state::AppState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/history", get(log))
}

/// Events per page.
pub const PAGE_SIZE: usize = 25;

/// What the filter form sends.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct LogQuery {
    #[serde(default, rename = "type")]
    pub event_type: String,
    #[serde(default)]
    pub project: String,
    #[serde(default)]
    pub flag: String,
    /// The id of the user who caused the events (the API's `createdBy`).
    #[serde(default)]
    pub author: String,
    pub page: Option<usize>,
}

impl LogQuery {
    fn page(&self) -> usize {
        self.page.unwrap_or(1).max(1)
    }

    /// The search domain's query for this page.
    fn to_search(&self) -> EventSearchQuery {
        let is = |text: &str| {
            Some(text.trim())
                .filter(|text| !text.is_empty())
                .map(|text| format!("IS:{text}"))
        };
        EventSearchQuery {
            event_type: is(&self.event_type),
            project: is(&self.project),
            feature: is(&self.flag),
            created_by: is(&self.author),
            offset: Some((self.page() - 1).saturating_mul(PAGE_SIZE).to_string()),
            limit: Some(PAGE_SIZE.to_string()),
            ..EventSearchQuery::default()
        }
    }

    /// This log's URL with another page.
    fn page_link(&self, base: &str, page: usize) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("type", &self.event_type),
            ("project", &self.project),
            ("flag", &self.flag),
            ("author", &self.author),
        ] {
            if !value.trim().is_empty() {
                query.append_pair(name, value.trim());
            }
        }
        query.append_pair("page", &page.to_string());
        format!("{base}/history?{}", query.finish())
    }

    fn filtered(&self) -> bool {
        [&self.event_type, &self.project, &self.flag, &self.author]
            .iter()
            .any(|value| !value.trim().is_empty())
    }
}

/// An event type as the filter lists it: `feature-environment-enabled` → "Flag environment enabled".
fn type_in_words(event_type: &str) -> String {
    let words: Vec<&str> = event_type
        .split('-')
        .map(|word| match word {
            "feature" => "flag",
            "api" => "API",
            "pat" => "personal access token",
            other => other,
        })
        .collect();
    let joined = words.join(" ");
    let mut chars = joined.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => joined,
    }
}

/// An author of the filter: one name, or the names that share one author id (API tokens and the system
/// record the same id, as Unleash's events do), said as such.
fn author_in_words(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        several => format!("{} (one author id)", several.join(" or ")),
    }
}

fn select_option(value: &str, text: &str, current: &str) -> Markup {
    html! { option value=(value) selected[value == current.trim()] { (text) } }
}

/// `GET /history`.
pub async fn log(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<LogQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let fail = |error: ApiError| UiError::from(error);
    let mut conn = state.store.read().await.map_err(|e| fail(e.into()))?;
    let all_projects = projects::list(&mut conn).await.map_err(fail)?.projects;
    // One option per author id: API tokens and the system share an id, under their names.
    let mut authors: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for creator in events::creators(&mut conn, None).await.map_err(fail)? {
        authors.entry(creator.id).or_default().push(creator.name);
    }
    let personal = access::personal_fields(who.credential);
    let (found, search_error) = match search(&mut conn, &query.to_search(), personal).await {
        Ok(found) => (found, None),
        Err(error) if error.kind == ErrorKind::Validation => (
            EventSearchResult {
                events: Vec::new(),
                total: 0,
            },
            Some(error.message),
        ),
        Err(error) => return Err(fail(error)),
    };
    drop(conn);
    let page = query.page();
    let total = usize::try_from(found.total).unwrap_or(0);
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let first_shown = (page - 1) * PAGE_SIZE + 1;
    let last_shown = (page - 1) * PAGE_SIZE + found.events.len();
    let markup = shell.render(
        "Event log",
        html! {
            div.page-head {
                div {
                    h1 { "Event log" }
                    p.subtitle { "Every change made, newest first, with what it changed." }
                }
            }
            form.filters.event-filters method="get" action=(who.link("/history")) role="search" aria-label="Filter events" {
                div.field {
                    label for="filter-event-type" { "Event type" }
                    select #filter-event-type name="type" {
                        (select_option("", "Any type", &query.event_type))
                        @for event_type in EventType::ALL {
                            (select_option(event_type.as_str(), &type_in_words(event_type.as_str()), &query.event_type))
                        }
                    }
                }
                div.field {
                    label for="filter-project" { "Project" }
                    select #filter-project name="project" {
                        (select_option("", "Any project", &query.project))
                        @for project in &all_projects {
                            (select_option(&project.id, &project.name, &query.project))
                        }
                    }
                }
                div.field {
                    label for="filter-flag" { "Flag" }
                    input #filter-flag type="search" name="flag" value=(query.flag) placeholder="Flag name";
                }
                div.field {
                    label for="filter-author" { "Author" }
                    select #filter-author name="author" {
                        (select_option("", "Anyone", &query.author))
                        @for (id, names) in &authors {
                            (select_option(&id.to_string(), &author_in_words(names), &query.author))
                        }
                    }
                }
                button type="submit" { "Filter" }
            }
            @if let Some(message) = &search_error {
                p.error-box role="alert" { (message) }
            }
            @if found.events.is_empty() {
                div.empty {
                    @if query.filtered() || query.page() > 1 {
                        p { "No events match these filters." }
                        a href=(who.link("/history")) { "Clear the filters" }
                    } @else {
                        p { "No events yet." }
                    }
                }
            } @else {
                (event_days(&found.events, &Context { base: &who.base, on_flag_page: false, on_project_page: false }, DayHeading::H2))
                div.pager {
                    span { "Showing " (first_shown) "–" (last_shown) " of " (total) }
                    nav aria-label="Pages" {
                        @if page > 1 {
                            a.button href=(query.page_link(&who.base, page - 1)) { "Previous page" }
                        }
                        span.muted { "Page " (page) " of " (pages) }
                        @if page < pages {
                            a.button href=(query.page_link(&who.base, page + 1)) { "Next page" }
                        }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

#[cfg(test)]
mod tests {
    #[test]
    fn filter_options_read_as_words() {
        assert_eq!(
            super::type_in_words("feature-environment-enabled"),
            "Flag environment enabled"
        );
        assert_eq!(
            super::type_in_words("api-token-created"),
            "API token created"
        );
        assert_eq!(
            super::author_in_words(&["init-admin-token-1".to_owned(), "system".to_owned()]),
            "init-admin-token-1 or system (one author id)"
        );
    }
}
