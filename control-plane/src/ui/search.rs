//! `/search`: one search from every page (the header's search field; `/` focuses it, `vexil.js`) over flags
//! of every project, segments and projects, by name or description, ignoring case. Flags through the flag
//! search the admin API serves (`domain::search::features`); segments and projects are few, filtered here.

use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::search::features::{search, FeatureSearchQuery};
use crate::domain::{projects, segments};
use crate::http::state::AppState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;

/// Flags listed at most; the flag list (with the same text as its search) has the rest.
const FLAGS_SHOWN: usize = 25;

/// This module's page.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/search", get(page))
}

#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

/// Whether `text` holds `words` (already lower case), ignoring case.
fn holds(text: Option<&str>, words: &str) -> bool {
    text.is_some_and(|text| text.to_lowercase().contains(words))
}

/// `GET /search?q=`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<SearchQuery>,
) -> Result<Response, UiError> {
    let text = query.q.trim().to_owned();
    let words = text.to_lowercase();
    let found = if text.is_empty() {
        None
    } else {
        let mut conn = state.store.read().await?;
        // A comma separates alternatives in the flag search's query: here it is part of the text.
        let flag_query = FeatureSearchQuery {
            query: Some(text.replace(',', " ")),
            sort_by: Some("name".to_owned()),
            limit: Some(FLAGS_SHOWN.to_string()),
            favorites_first: Some("true".to_owned()),
            ..FeatureSearchQuery::default()
        };
        let flags = search(&mut conn, &flag_query, who.actor.user_id).await?;
        let segments: Vec<_> = segments::list(&mut conn)
            .await?
            .segments
            .into_iter()
            .filter(|segment| {
                holds(Some(&segment.name), &words) || holds(segment.description.as_deref(), &words)
            })
            .collect();
        let projects: Vec<_> = projects::list_for(&mut conn, who.actor.user_id)
            .await?
            .projects
            .into_iter()
            .filter(|project| {
                holds(Some(&project.id), &words)
                    || holds(Some(&project.name), &words)
                    || holds(project.description.as_deref(), &words)
            })
            .collect();
        Some((flags, segments, projects))
    };
    let title = if text.is_empty() {
        "Search".to_owned()
    } else {
        format!("Search: {text}")
    };
    let results: Markup = match &found {
        None => {
            html! { p.muted { "Flags of every project, segments and projects, by name or description." } }
        }
        Some((flags, segments, projects)) => html! {
            @let total = flags.total as usize + segments.len() + projects.len();
            p #search-count role="status" {
                @if total == 0 { "Nothing matches “" (text) "”." }
                @else if total == 1 { "1 match." }
                @else { (total) " matches." }
            }
            @if !flags.features.is_empty() {
                section.card aria-labelledby="found-flags" {
                    h2 #found-flags { "Flags (" (flags.total) ")" }
                    ul.found {
                        @for flag in &flags.features {
                            li {
                                a href=(who.link(&format!("/projects/{}/features/{}", flag.project, flag.name))) { (flag.name) }
                                " " span.muted { "in " (flag.project) }
                                @if let Some(description) = flag.description.as_deref().filter(|d| !d.is_empty()) {
                                    p.desc { (description) }
                                }
                            }
                        }
                    }
                    @if flags.total as usize > flags.features.len() {
                        p.muted { "The first " (flags.features.len()) " by name; search a project's flag list for the rest." }
                    }
                }
            }
            @if !segments.is_empty() {
                section.card aria-labelledby="found-segments" {
                    h2 #found-segments { "Segments (" (segments.len()) ")" }
                    ul.found {
                        @for segment in segments {
                            li {
                                a href=(who.link(&format!("/segments/edit/{}", segment.id))) { (segment.name) }
                                @if let Some(description) = segment.description.as_deref().filter(|d| !d.is_empty()) {
                                    p.desc { (description) }
                                }
                            }
                        }
                    }
                }
            }
            @if !projects.is_empty() {
                section.card aria-labelledby="found-projects" {
                    h2 #found-projects { "Projects (" (projects.len()) ")" }
                    ul.found {
                        @for project in projects {
                            li {
                                a href=(who.link(&format!("/projects/{}/overview", project.id))) { (project.name) }
                                " " span.muted { (project.id) }
                                @if let Some(description) = project.description.as_deref().filter(|d| !d.is_empty()) {
                                    p.desc { (description) }
                                }
                            }
                        }
                    }
                }
            }
        },
    };
    let markup = who.shell().render(
        &title,
        html! {
            div.page-head { div { h1 { "Search" } } }
            form.filters method="get" action=(who.link("/search")) role="search" aria-label="Search everything" {
                div.field {
                    label for="search-page-q" { "Flags, segments and projects" }
                    input #search-page-q type="search" name="q" value=(text) autocomplete="off";
                }
                button type="submit" { "Search" }
            }
            (results)
        },
    );
    Ok(Page::ok(markup).into_response())
}
