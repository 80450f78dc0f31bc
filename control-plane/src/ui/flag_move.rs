//! "Move to project" from a flag's settings: `GET …/features/<flag>/move` (a project select: the active
//! projects other than the flag's) and its post, through `feature_move::change_project`, the admin API's
//! `POST …/features/<flag>/changeProject`; the caller needs MOVE_FEATURE_TOGGLE in both projects. A refusal
//! draws the form again with the choice kept and the message.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::feature_move::{self, ChangeProject};
use crate::domain::{features, projects};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// The form's route, as `ui::PERMISSIONS` lists it.
pub const FORM: &str = "/projects/{project}/features/{feature}/move";

/// This module's page and form post.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route(FORM, get(move_page).post(move_flag))
}

async fn move_form(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
    chosen: &str,
    error: Option<&ApiError>,
) -> Result<Page, UiError> {
    let targets: Vec<(String, String)> = {
        let mut conn = state.store.read().await?;
        features::get(&mut conn, project, feature).await?;
        projects::list(&mut conn)
            .await?
            .projects
            .into_iter()
            .filter(|one| one.id != project && one.archived_at.is_none())
            .map(|one| (one.id, one.name))
            .collect()
    };
    let shell = who.shell();
    let errors = FieldErrors::of(error, &[("newProjectId", "move-project")], "move-project");
    let base = who.link(&format!("/projects/{project}/features/{feature}"));
    let heading = format!("Move {feature} to another project");
    let markup = shell.render(
        &heading,
        html! {
            div.page-head {
                div {
                    h1 { (heading) }
                    p.subtitle { "Flag " a href=(base) { (feature) } " in project " (project) }
                }
            }
            (errors.general())
            @if targets.is_empty() {
                p.muted { "There is no other active project to move it to." }
                p { a href=(base) { "Back to the flag" } }
            } @else {
                form.form-narrow method="post" action=(format!("{base}/move")) novalidate {
                    input type="hidden" name="csrf" value=(who.csrf);
                    p {
                        "The flag keeps its strategies, switches, variants, tags and links, and follows the new "
                        "project's rules from then on. It cannot move while it has dependencies, while change "
                        "requests not yet applied change it, or while a strategy uses a segment of this project."
                    }
                    (field("move-project", "Project", errors.at("move-project"), None, html! {
                        select #move-project name="newProjectId" required autofocus
                            aria-invalid=(errors.invalid("move-project")) {
                            @for (id, name) in &targets {
                                option value=(id) selected[id == chosen] { (name) " (" (id) ")" }
                            }
                        }
                    }))
                    div.actions {
                        button.primary type="submit" { "Move flag" }
                        a href=(base) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page {
        status: StatusCode::OK,
        markup,
    })
}

/// `GET …/move`.
pub async fn move_page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
) -> Result<Response, UiError> {
    who.ensure_may_submit(FORM, &Scope::project(&project))?;
    let page = move_form(&state, &who, (&project, &feature), "", None).await?;
    Ok(page.into_response())
}

/// `POST …/move` (`newProjectId`): the flag's page in its new project.
pub async fn move_flag(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let chosen = form.text("newProjectId").trim().to_owned();
    let done = async {
        let input = ChangeProject {
            new_project_id: chosen.clone(),
        };
        let may_move_into = |target: &str| {
            if who.may_submit(FORM, &Scope::project(target)) {
                Ok(())
            } else {
                Err(ApiError::new(
                    ErrorKind::NoAccess,
                    format!("You may not move flags into project {target}"),
                ))
            }
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        feature_move::change_project(&mut tx, &project, &feature, input, may_move_into).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{chosen}/features/{feature}")),
            format!("{feature} was moved to project {chosen}."),
        ))
    }
    .await;
    written(done, async |error| {
        let page = move_form(&state, &who, (&project, &feature), &chosen, Some(error)).await?;
        Ok(page.into_response())
    })
    .await
}
