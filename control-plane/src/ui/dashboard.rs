//! `/personal`, the dashboard (Unleash's UI has its personal dashboard at the same path; first in the
//! navigation): the flags the caller created or marked as favourites, and the projects (favourites first) with
//! their flags and health — `domain::personal_dashboard`, as `GET /api/admin/personal-dashboard` answers it.

use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::access::{self, Area};
use crate::domain::personal_dashboard;
use crate::http::state::AppState;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use std::sync::Arc;

/// This module's pages.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/personal", get(page))
}

/// `GET /personal`.
pub async fn page(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    who.authorize(true, Area::Configuration)?;
    let dashboard = {
        let mut conn = state.store.read().await?;
        let personal = access::personal_fields(who.credential);
        let now_ms = (state.clock)();
        personal_dashboard::dashboard(&mut conn, who.actor.user_id, personal, now_ms).await?
    };
    let own_account = who.actor.user_id >= 0;
    let project_name = |id: &str| {
        (dashboard.projects.iter())
            .find(|project| project.id == id)
            .map_or_else(|| id.to_owned(), |project| project.name.clone())
    };
    let markup = who.shell().render(
        "Dashboard",
        html! {
            div.page-head {
                div {
                    h1 { "Dashboard" }
                    p.subtitle { "Your flags and the projects, favourites first." }
                }
            }
            section.card aria-labelledby="my-flags-title" {
                h2 #my-flags-title { "Your flags" }
                @if dashboard.flags.is_empty() {
                    div.empty {
                        @if own_account {
                            p { "Flags you create or mark with a star appear here." }
                        } @else {
                            p { "You are signed in with a token, not as a user: no flags of your own." }
                        }
                    }
                } @else {
                    div.table-wrap {
                        table {
                            thead { tr {
                                th scope="col" { "Flag" }
                                th scope="col" { "Project" }
                                th.hide-narrow scope="col" { "Type" }
                            } }
                            tbody {
                                @for flag in &dashboard.flags {
                                    tr {
                                        td.flag-name {
                                            a href=(who.link(&format!("/projects/{}/features/{}", flag.project, flag.name))) { (flag.name) }
                                        }
                                        td { a href=(who.link(&format!("/projects/{}", flag.project))) { (project_name(&flag.project)) } }
                                        td.hide-narrow { (flag.feature_type) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="projects-title" {
                h2 #projects-title { "Projects" }
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Project" }
                            th scope="col" { "Flags" }
                            th scope="col" { "Health" }
                            th.hide-narrow scope="col" { "Overview" }
                        } }
                        tbody {
                            @for project in &dashboard.projects {
                                tr {
                                    td.flag-name {
                                        a href=(who.link(&format!("/projects/{}", project.id))) { (project.name) }
                                    }
                                    td { (project.feature_count) }
                                    td { (project.health) "%" }
                                    td.hide-narrow {
                                        a href=(who.link(&format!("/projects/{}/overview", project.id)))
                                            aria-label=(format!("Overview of {}", project.name)) { "Overview" }
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
