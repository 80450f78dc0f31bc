//! Copies from a flag's page, as Unleash's UI offers them: a strategy (or all of an environment's) copied to
//! another environment, and the flag cloned.
//!
//! - `POST …/features/<flag>/strategies/copy` (`environment`, `to`, and `strategyId` for one strategy, none
//!   for all): each copy is added through `change_requests::make_or_propose` (`strategies::add`, or the
//!   caller's change request draft where change requests are on in `to`), all in one write; back to the flag
//!   page at `to`. Unleash has no route of its own for this: its UI adds a strategy per copied one too.
//! - `GET …/features/<flag>/clone`: the form (the new name, whether the group id becomes it); the post goes
//!   through `feature_clone::clone`, the admin API's `POST …/features/<flag>/clone`.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::change_requests::{self, Outcome};
use crate::domain::feature_clone::{self, CloneFeature};
use crate::domain::{features, strategies};
use crate::http::state::AppState;
use crate::model::change_request::Change;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use uuid::Uuid;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/projects/{project}/features/{feature}/strategies/copy",
            post(copy),
        )
        .route(
            "/projects/{project}/features/{feature}/clone",
            get(clone_page).post(clone),
        )
}

/// The flag page's "Copy to…" disclosure: a button per other environment (`targets`) that copies strategy
/// `strategy` (its id and place, 0-based) of environment `from`, or with no strategy all of them. Nothing
/// where the caller may copy to no other environment. `base` is the flag page's path.
pub fn copy_menu(
    who: &SignedIn,
    base: &str,
    (from, strategy): (&str, Option<(&str, usize)>),
    targets: &[&str],
) -> Markup {
    let (summary, what) = match strategy {
        Some((_, index)) => ("Copy to…", format!(" strategy {} of {from}", index + 1)),
        None => ("Copy all to…", format!(" the strategies of {from}")),
    };
    html! {
        @if !targets.is_empty() {
            details.copy-menu {
                summary { (summary) span.sr-only { (what) } }
                form.copy-targets method="post" action=(format!("{base}/strategies/copy")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    input type="hidden" name="environment" value=(from);
                    @if let Some((id, _)) = strategy {
                        input type="hidden" name="strategyId" value=(id);
                    }
                    @for target in targets {
                        button type="submit" name="to" value=(target) { "Copy to " (target) }
                    }
                }
            }
        }
    }
}

/// `POST …/strategies/copy`.
pub async fn copy(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let from = form.text("environment");
    let to = form.text("to");
    let only = match form.get("strategyId") {
        Some(id) => Some(
            Uuid::parse_str(id)
                .map_err(|_| {
                    ApiError::invalid_field("strategyId", "strategyId: not a strategy id")
                })?
                .to_string(),
        ),
        None => None,
    };
    let listed = {
        let mut conn = state.store.read().await?;
        strategies::list(&mut conn, &project, &feature, &from).await?
    };
    let copies: Vec<_> = listed
        .iter()
        .filter(|strategy| only.as_ref().is_none_or(|id| *id == strategy.id))
        .map(strategies::copy_of)
        .collect();
    if copies.is_empty() {
        return Err(ApiError::not_found(format!("No strategy to copy in {from}")).into());
    }
    let copied = match (&only, copies.len()) {
        (Some(_), _) | (None, 1) => "The strategy was".to_owned(),
        (None, count) => format!("{count} strategies were"),
    };
    let mut tx = state.store.begin_write(&who.actor).await?;
    let mut outcome = Outcome::Made;
    for input in copies {
        let place = (project.as_str(), to.as_str(), feature.as_str());
        let change = Change::AddStrategy(input);
        outcome = change_requests::make_or_propose(&mut tx, place, change, &state.limits).await?;
    }
    state.commit(tx).await?;
    let flag_page = who.link(&format!("/projects/{project}/features/{feature}#env-{to}"));
    let made = format!("{copied} copied from {from} to {to}.");
    Ok(Done::after_change(flag_page, outcome, made).into_response())
}

/// The clone form as typed.
struct CloneDraft {
    name: String,
    replace_group_id: bool,
}

fn clone_form(
    who: &SignedIn,
    (project, feature): (&str, &str),
    draft: &CloneDraft,
    error: Option<&ApiError>,
) -> Page {
    let shell = who.shell();
    let errors = FieldErrors::of(error, &[("name", "clone-name")], "clone-name");
    let base = who.link(&format!("/projects/{project}/features/{feature}"));
    let heading = format!("Clone {feature}");
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
            form.form-narrow method="post" action=(format!("{base}/clone")) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                p {
                    "A new flag of this project with " (feature) "'s type, description and impression data, and in every "
                    "environment its strategies, variants and switch. Tags are not copied."
                }
                (field("clone-name", "Name of the new flag", errors.at("clone-name"), Some("URL-safe characters"), html! {
                    input #clone-name type="text" name="name" value=(draft.name) required autocomplete="off" autofocus
                        aria-describedby="clone-name-hint clone-name-error" aria-invalid=(errors.invalid("clone-name"));
                }))
                label.check {
                    input type="checkbox" name="replaceGroupId" value="true" checked[draft.replace_group_id]
                        aria-describedby="replace-group-hint";
                    "Use the new name as the group id"
                }
                p.hint.muted #replace-group-hint {
                    "Gradual rollouts of the clone then choose their users apart from " (feature) "'s. Untick to give the same users both."
                }
                div.actions {
                    button.primary type="submit" { "Clone flag" }
                    a href=(base) { "Cancel" }
                }
            }
        },
    );
    let status = StatusCode::OK;
    Page { status, markup }
}

/// `GET …/clone`.
pub async fn clone_page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
) -> Result<Response, UiError> {
    who.ensure_may_submit(
        "/projects/{project}/features/{feature}/clone",
        &Scope::project(&project),
    )?;
    {
        let mut conn = state.store.read().await?;
        features::get(&mut conn, &project, &feature).await?;
    }
    let draft = CloneDraft {
        name: format!("{feature}-copy"),
        replace_group_id: true,
    };
    Ok(clone_form(&who, (&project, &feature), &draft, None).into_response())
}

/// `POST …/clone` (`name`, `replaceGroupId`): the clone, then its page.
pub async fn clone(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = CloneDraft {
        name: form.text("name").trim().to_owned(),
        replace_group_id: form.checked("replaceGroupId"),
    };
    let done = async {
        let input = CloneFeature {
            name: draft.name.clone(),
            replace_group_id: Some(draft.replace_group_id),
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created =
            feature_clone::clone(&mut tx, &project, &feature, input, &state.limits).await?;
        state.commit(tx).await?;
        let name = created.summary.name;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/features/{name}")),
            format!("{name} was cloned from {feature}."),
        ))
    }
    .await;
    written(done, async |error| {
        let page = clone_form(&who, (&project, &feature), &draft, Some(error));
        Ok(page.into_response())
    })
    .await
}
