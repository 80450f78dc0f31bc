//! A project's change requests (`/projects/<project>/change-requests`: open and closed, paged) and one
//! request's page (`…/change-requests/<id>`): each change as the difference between its flag's current state
//! and the proposed one, the approvals, the comments with a form to add one, and the state changes the state
//! machine allows to this caller (`change_requests::possible_states`: the same decision
//! `PUT …/change-requests/<id>/state` makes), with the "Schedule" section of `change_request_schedule` (its
//! post is here). A caller who may not change configuration sees no control.

use super::change_preview::{in_words, Words};
use super::change_request_schedule::{self as schedule_section, ScheduleSection};
use super::controls::{field, when};
use super::diff::diff_list;
use super::page::{see_other, Page, Shell, UiError};
use super::scope::Done;
use super::session::{SignedIn, UiWrite};
use super::vocabulary::StrategyNames;
use crate::domain::access::{Scope, Who};
use crate::domain::change_requests::{
    self, ChangePreview, ChangeRequest, ChangeRequestListing, CommentInput, ScheduleRecord,
    StateInput,
};
use crate::domain::{segments, strategy_definitions};
use crate::http::state::AppState;
use crate::model::change_request::ChangeRequestState;
use crate::time::Timestamp;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// Requests per page of the list.
const PAGE_SIZE: usize = 25;

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    /// `closed` for Applied, Cancelled and Rejected requests; anything else: the open ones.
    #[serde(default)]
    view: String,
    page: Option<usize>,
}

/// The button that asks for `state`: its text.
fn action_text(state: ChangeRequestState) -> &'static str {
    match state {
        ChangeRequestState::InReview => "Submit for review",
        ChangeRequestState::Approved => "Approve",
        ChangeRequestState::Applied => "Apply",
        ChangeRequestState::Scheduled => "Schedule",
        ChangeRequestState::Rejected => "Reject",
        ChangeRequestState::Cancelled => "Cancel",
        ChangeRequestState::Draft => "Back to draft",
    }
}

/// A change's action as people read it.
fn action_words(preview: &ChangePreview) -> &str {
    let enabled = preview
        .after
        .as_ref()
        .and_then(|after| after.get("enabled"));
    match preview.action.as_str() {
        "updateEnabled" if enabled == Some(&serde_json::Value::Bool(true)) => "Turn on",
        "updateEnabled" => "Turn off",
        "addStrategy" => "Add a strategy",
        "updateStrategy" => "Change a strategy",
        "deleteStrategy" => "Delete a strategy",
        "reorderStrategy" => "Reorder the strategies",
        "patchVariant" => "Set the variants",
        "archiveFeature" => "Archive the flag",
        "addDependency" => "Add a dependency",
        "deleteDependency" => "Remove a dependency",
        "updateSegment" => "Change the segment",
        "deleteSegment" => "Delete the segment",
        _ => &preview.action,
    }
}

fn state_badge(state: ChangeRequestState) -> Markup {
    let class = match state {
        ChangeRequestState::Applied
        | ChangeRequestState::Approved
        | ChangeRequestState::Scheduled => "badge state-good",
        ChangeRequestState::Rejected | ChangeRequestState::Cancelled => "badge state-ended",
        _ => "badge",
    };
    html! { span class=(class) { (state.as_str()) } }
}

fn list_link(who: &SignedIn, project: &str, closed: bool, page: usize) -> String {
    let view = if closed { "closed" } else { "open" };
    who.link(&format!(
        "/projects/{project}/change-requests?view={view}&page={page}"
    ))
}

/// `GET /projects/<project>/change-requests`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let closed = query.view == "closed";
    let page = query.page.unwrap_or(1).max(1);
    let offset = i64::try_from((page - 1).saturating_mul(PAGE_SIZE)).unwrap_or(i64::MAX);
    let (requests, total) = async {
        let mut conn = state.store.read().await?;
        change_requests::list_page(&mut conn, &project, !closed, offset, PAGE_SIZE as i64).await
    }
    .await?;
    let total = usize::try_from(total).unwrap_or(0);
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let first_shown = (page - 1) * PAGE_SIZE + 1;
    let last_shown = ((page - 1) * PAGE_SIZE + requests.len()).max(first_shown - 1);
    let markup = shell.render(
        &format!("Change requests in {project}"),
        html! {
            div.page-head {
                div {
                    h1 { "Change requests" }
                    p.subtitle { "Project " strong { (project) } }
                }
            }
            nav.tabs aria-label="Open or closed" {
                @if closed {
                    a href=(list_link(&who, &project, false, 1)) { "Open" }
                    a href=(list_link(&who, &project, true, 1)) aria-current="page" { "Closed" }
                } @else {
                    a href=(list_link(&who, &project, false, 1)) aria-current="page" { "Open" }
                    a href=(list_link(&who, &project, true, 1)) { "Closed" }
                }
            }
            @if requests.is_empty() {
                div.empty {
                    @if closed {
                        p { "No closed change requests in this project yet." }
                    } @else {
                        p { "No open change requests in this project." }
                        p { "Where change requests are on for an environment, a change to a flag there becomes a draft here." }
                    }
                }
            } @else {
                (request_table(&who, &project, closed, &requests))
                div.pager {
                    span { "Showing " (first_shown) "–" (last_shown) " of " (total) }
                    nav aria-label="Pages" {
                        @if page > 1 {
                            a.button href=(list_link(&who, &project, closed, page - 1)) { "Previous page" }
                        }
                        span.muted { "Page " (page) " of " (pages) }
                        @if page < pages {
                            a.button href=(list_link(&who, &project, closed, page + 1)) { "Next page" }
                        }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn request_table(
    who: &SignedIn,
    project: &str,
    closed: bool,
    requests: &[ChangeRequestListing],
) -> Markup {
    html! {
        div.table-wrap {
            table {
                caption.skip { (if closed { "Closed" } else { "Open" }) " change requests of project " (project) }
                thead {
                    tr {
                        th scope="col" { "Title" }
                        th scope="col" { "State" }
                        th scope="col" { "Environment" }
                        th.hide-narrow scope="col" { "Author" }
                        th.hide-narrow scope="col" { "Created" }
                    }
                }
                tbody {
                    @for request in requests {
                        tr {
                            td.flag-name {
                                a href=(who.link(&format!("/projects/{project}/change-requests/{}", request.id))) { (request.title) }
                            }
                            td { (state_badge(request.state)) }
                            td { (request.environment) }
                            td.hide-narrow { (request.created_by.username) }
                            td.hide-narrow { (when(&request.created_at)) }
                        }
                    }
                }
            }
        }
    }
}

/// What the request page shows besides the request: its schedule, the caller's possible state changes, an
/// error of the last form, the comment being typed and the schedule form as typed (with its error).
struct RequestPage<'a> {
    request: &'a ChangeRequest,
    previews: &'a [ChangePreview],
    words: &'a Words,
    schedule: Option<&'a ScheduleRecord>,
    possible: &'a [ChangeRequestState],
    error: Option<&'a str>,
    comment: &'a str,
    comment_error: Option<&'a str>,
    schedule_form: (Option<&'a str>, Option<&'a str>),
}

/// The state buttons: every possible state but Scheduled (the schedule section's form) and, for a Scheduled
/// request, Cancelled (the section's "Cancel schedule").
fn state_buttons(
    request: &ChangeRequest,
    possible: &[ChangeRequestState],
) -> Vec<ChangeRequestState> {
    possible
        .iter()
        .copied()
        .filter(|state| *state != ChangeRequestState::Scheduled)
        .filter(|state| {
            request.state != ChangeRequestState::Scheduled
                || *state != ChangeRequestState::Cancelled
        })
        .collect()
}

fn request_page(who: &SignedIn, shell: &Shell, view: RequestPage<'_>) -> Markup {
    let request = view.request;
    let project = &request.project;
    let base = who.link(&format!(
        "/projects/{project}/change-requests/{}",
        request.id
    ));
    let open = !request.state.is_final();
    let in_project = Scope::project(project);
    let buttons = state_buttons(request, view.possible);
    let schedule = ScheduleSection {
        request,
        schedule: view.schedule,
        may_schedule: view.possible.contains(&ChangeRequestState::Scheduled),
        typed: view.schedule_form.0,
        error: view.schedule_form.1,
    };
    shell.render(
        &request.title,
        html! {
            p { a href=(who.link(&format!("/projects/{project}/change-requests"))) { "← Change requests of " (project) } }
            div.page-head {
                div {
                    h1 { (request.title) " " (state_badge(request.state)) }
                    p.subtitle {
                        "Environment " strong { (request.environment) } " · by " (request.created_by.username)
                        " · created " (when(&request.created_at))
                    }
                    @let authors: Vec<&str> = request.authors.iter().map(|author| author.username.as_str()).collect();
                    p.muted { "Authors: " (authors.join(", ")) " (an author cannot approve)" }
                }
            }
            @if let Some(error) = view.error { p.error-box role="alert" { (error) } }
            @if !buttons.is_empty() && who.may_submit("/projects/{project}/change-requests/{id}/state", &in_project) {
                form.actions.cr-actions method="post" action=(format!("{base}/state")) aria-label="Change the state" {
                    input type="hidden" name="csrf" value=(who.csrf);
                    @for state in &buttons {
                        @let class = match state {
                            ChangeRequestState::Rejected | ChangeRequestState::Cancelled => "danger",
                            _ => "primary",
                        };
                        button class=(class) type="submit" name="state" value=(state.as_str()) { (action_text(*state)) }
                    }
                }
            }
            (schedule_section::section(who, &base, schedule))
            section.card aria-labelledby="changes-title" {
                h2 #changes-title { "Changes" }
                @if view.previews.is_empty() {
                    p.muted { "No changes: this request holds nothing to apply." }
                }
                @for preview in view.previews {
                    @let (subject, link) = match preview.segment {
                        Some(segment) => (format!("Segment {}", preview.feature), format!("/segments/edit/{segment}")),
                        None => (preview.feature.clone(), format!("/projects/{project}/features/{}", preview.feature)),
                    };
                    article.cr-change aria-label=(format!("Change {} to {}", preview.change_id, subject)) {
                        div.strategy-head {
                            span.title {
                                a href=(who.link(&link)) { (subject) }
                                ": " (action_words(preview))
                            }
                            @if open && who.may_submit("/projects/{project}/change-requests/{id}/changes/{change}/discard", &in_project) {
                                form.inline method="post" action=(format!("{base}/changes/{}/discard", preview.change_id)) {
                                    input type="hidden" name="csrf" value=(who.csrf);
                                    button.danger type="submit" aria-label=(format!("Discard the change to {}", subject)) { "Discard" }
                                }
                            }
                        }
                        @if !open {
                            // A closed request is not compared with the flag as it is now.
                            p.muted { "What it proposed:" }
                            @match in_words(view.words, preview, None, preview.after.as_ref()) {
                                Some(words) => { (words) }
                                None => { (diff_list(None, preview.after.as_ref())) }
                            }
                        } @else if preview.before.is_none() && preview.after.is_some() && preview.action != "addStrategy" {
                            p.muted { @if preview.segment.is_some() { "The segment no longer exists." } @else { "The flag no longer exists here." } }
                        } @else if preview.before == preview.after {
                            p.muted { "Same as the current state." }
                        } @else {
                            @match in_words(view.words, preview, preview.before.as_ref(), preview.after.as_ref()) {
                                Some(words) => { (words) }
                                None => { (diff_list(preview.before.as_ref(), preview.after.as_ref())) }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="approvals-title" {
                h2 #approvals-title { "Approvals" }
                p { (request.approvals.len()) " of " (request.min_approvals) " required" }
                @if !request.approvals.is_empty() || !request.rejections.is_empty() {
                    ul {
                        @for review in &request.approvals {
                            li { "Approved by " strong { (review.created_by.username) } " · " (when(&review.created_at)) }
                        }
                        @for review in &request.rejections {
                            li { "Rejected by " strong { (review.created_by.username) } " · " (when(&review.created_at)) }
                        }
                    }
                }
            }
            section.card aria-labelledby="comments-title" {
                h2 #comments-title { "Comments" }
                @if request.comments.is_empty() {
                    p.muted { "No comments yet." }
                } @else {
                    ol.events {
                        @for comment in &request.comments {
                            li {
                                strong { (comment.created_by.username) } " · " (when(&comment.created_at))
                                p.comment-text { (comment.text) }
                            }
                        }
                    }
                }
                @if who.may_submit("/projects/{project}/change-requests/{id}/comments", &in_project) {
                    form.form-narrow method="post" action=(format!("{base}/comments")) {
                        input type="hidden" name="csrf" value=(who.csrf);
                        (field("comment", "Comment", view.comment_error, None, html! {
                            textarea #comment name="text" rows="3"
                                aria-describedby="comment-error" aria-invalid[view.comment_error.is_some()] { (view.comment) }
                        }))
                        div.actions { button type="submit" { "Add comment" } }
                    }
                }
            }
        },
    )
}

/// The request `id` (a number, else 404) of `project` as the page shows it, with what `who` may do to it.
async fn load(
    state: &AppState,
    who: &SignedIn,
    project: &str,
    id: &str,
) -> Result<Loaded, ApiError> {
    let id = request_id(project, id)?;
    let mut conn = state.store.read().await?;
    let request = change_requests::get(&mut conn, project, id).await?;
    let previews = change_requests::preview(&mut conn, &request).await?;
    let reviewer = Who {
        credential: who.credential,
        grants: &who.grants,
    };
    let possible =
        change_requests::possible_states(&mut conn, project, id, &who.actor, reviewer).await?;
    let schedule = change_requests::schedule_of(&mut conn, project, id).await?;
    let definitions = strategy_definitions::list(&mut conn).await?.strategies;
    let segments = segments::list(&mut conn).await?.segments;
    let words = Words {
        strategies: StrategyNames::of(&definitions),
        segments: segments.into_iter().map(|s| (s.id, s.name)).collect(),
    };
    Ok(Loaded {
        request,
        previews,
        schedule,
        possible,
        words,
    })
}

/// A request, its changes' previews, its schedule, the caller's possible state changes and the names the
/// previews use.
struct Loaded {
    request: ChangeRequest,
    previews: Vec<ChangePreview>,
    schedule: Option<ScheduleRecord>,
    possible: Vec<ChangeRequestState>,
    words: Words,
}

/// What a refused form gets back: the comment or the schedule as typed.
#[derive(Clone, Copy)]
enum Typed<'a> {
    Nothing,
    Comment(&'a str),
    Schedule(&'a str),
}

/// The request page again after a refused form: with the message (beside the field typed, if any), in the
/// refusal's status.
async fn refused(
    state: &AppState,
    who: &SignedIn,
    (project, id): (&str, &str),
    error: ApiError,
    typed: Typed<'_>,
) -> Response {
    let shell = who.shell();
    let status = StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let loaded = match load(state, who, project, id).await {
        Ok(loaded) => loaded,
        Err(_) => return UiError::from(error).into_response(),
    };
    let message = Some(error.message.as_str());
    let (comment, comment_error, schedule_form, error) = match typed {
        Typed::Nothing => ("", None, (None, None), message),
        Typed::Comment(text) => (text, message, (None, None), None),
        Typed::Schedule(text) => ("", None, (Some(text), message), None),
    };
    let markup = request_page(
        who,
        &shell,
        RequestPage {
            request: &loaded.request,
            previews: &loaded.previews,
            words: &loaded.words,
            schedule: loaded.schedule.as_ref(),
            possible: &loaded.possible,
            error,
            comment,
            comment_error,
            schedule_form,
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /projects/<project>/change-requests/<id>`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, id)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let loaded = load(&state, &who, &project, &id).await?;
    let markup = request_page(
        &who,
        &shell,
        RequestPage {
            request: &loaded.request,
            previews: &loaded.previews,
            words: &loaded.words,
            schedule: loaded.schedule.as_ref(),
            possible: &loaded.possible,
            error: None,
            comment: "",
            comment_error: None,
            schedule_form: (None, None),
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn request_id(project: &str, id: &str) -> Result<i64, ApiError> {
    id.parse().map_err(|_| {
        ApiError::not_found(format!(
            "Change request {id} does not exist in project {project}"
        ))
    })
}

/// `POST …/change-requests/<id>/state` (`state`): the API's state change; then the request again.
pub async fn change_state(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Response {
    let requested = form.text("state");
    let done = async {
        let number = request_id(&project, &id)?;
        let target = ChangeRequestState::parse(&requested).ok_or_else(|| {
            ApiError::validation(format!(
                "state: {requested:?} is not a change request state"
            ))
        })?;
        let input = StateInput {
            state: target,
            comment: None,
            scheduled_at: None,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        let reviewer = Who {
            credential: who.credential,
            grants: &who.grants,
        };
        change_requests::change_state(&mut tx, &project, number, input, &state.limits, reviewer)
            .await?;
        state.commit(tx).await?;
        let what = match target {
            ChangeRequestState::Draft => "is a draft again",
            ChangeRequestState::InReview => "was sent for review",
            ChangeRequestState::Approved => "was approved",
            ChangeRequestState::Applied => "was applied: its changes are live",
            ChangeRequestState::Scheduled => "was scheduled",
            ChangeRequestState::Cancelled => "was cancelled",
            ChangeRequestState::Rejected => "was rejected",
        };
        Ok::<_, ApiError>(Done::to(
            who.link(&format!("/projects/{project}/change-requests/{id}")),
            format!("Change request #{number} {what}."),
        ))
    }
    .await;
    match done {
        Ok(done) => done.into_response(),
        Err(error) => refused(&state, &who, (&project, &id), error, Typed::Nothing).await,
    }
}

/// `POST …/change-requests/<id>/schedule` (`scheduledAt`: a `datetime-local` value, in UTC): the API's
/// `Scheduled` state with that time (to schedule, or to reschedule); a refusal about the time is shown beside
/// the field.
pub async fn schedule(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Response {
    let typed = form.text("scheduledAt");
    let done = async {
        let number = request_id(&project, &id)?;
        let input = StateInput {
            state: ChangeRequestState::Scheduled,
            comment: None,
            scheduled_at: Some(schedule_section::scheduled_at(&typed)),
        };
        let reviewer = Who {
            credential: who.credential,
            grants: &who.grants,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        let request = change_requests::change_state(
            &mut tx,
            &project,
            number,
            input,
            &state.limits,
            reviewer,
        )
        .await?;
        state.commit(tx).await?;
        let at = request
            .schedule
            .and_then(|schedule| Timestamp::parse(&schedule.scheduled_at).ok())
            .map(schedule_section::utc)
            .unwrap_or_default();
        Ok::<_, ApiError>(Done::to(
            who.link(&format!("/projects/{project}/change-requests/{id}")),
            format!("Change request #{number} is scheduled: it will be applied at {at}."),
        ))
    }
    .await;
    match done {
        Ok(done) => done.into_response(),
        Err(error) if error.field.as_deref() == Some("scheduledAt") => {
            refused(
                &state,
                &who,
                (&project, &id),
                error,
                Typed::Schedule(&typed),
            )
            .await
        }
        Err(error) => refused(&state, &who, (&project, &id), error, Typed::Nothing).await,
    }
}

/// `POST …/change-requests/<id>/comments` (`text`): the API's comment (no revision, no event).
pub async fn comment(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Response {
    let text = form.text("text");
    let done = async {
        let number = request_id(&project, &id)?;
        let mut conn = state.store.bookkeeping().await?;
        let input = CommentInput { text: text.clone() };
        change_requests::comment(&mut conn, &project, number, input, &who.actor).await
    }
    .await;
    match done {
        Ok(()) => see_other(&who.link(&format!(
            "/projects/{project}/change-requests/{id}#comments-title"
        ))),
        Err(error) if error.kind.status() == 400 => {
            refused(&state, &who, (&project, &id), error, Typed::Comment(&text)).await
        }
        Err(error) => refused(&state, &who, (&project, &id), error, Typed::Nothing).await,
    }
}

/// `POST …/change-requests/<id>/changes/<change>/discard`: the API's discard of one change.
pub async fn discard_change(
    State(state): State<Arc<AppState>>,
    Path((project, id, change)): Path<(String, String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Response {
    let done = async {
        let number = request_id(&project, &id)?;
        let change: i64 = change
            .parse()
            .map_err(|_| ApiError::not_found(format!("Change {change} does not exist")))?;
        let mut tx = state.store.begin_write(&who.actor).await?;
        change_requests::discard_change(&mut tx, &project, number, change).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(Done::to(
            who.link(&format!("/projects/{project}/change-requests/{id}")),
            "The change was discarded from the request.",
        ))
    }
    .await;
    match done {
        Ok(done) => done.into_response(),
        Err(error) => refused(&state, &who, (&project, &id), error, Typed::Nothing).await,
    }
}

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/change-requests", get(list))
        .route("/projects/{project}/change-requests/{id}", get(page))
        .route(
            "/projects/{project}/change-requests/{id}/state",
            post(change_state),
        )
        .route(
            "/projects/{project}/change-requests/{id}/schedule",
            post(schedule),
        )
        .route(
            "/projects/{project}/change-requests/{id}/comments",
            post(comment),
        )
        .route(
            "/projects/{project}/change-requests/{id}/changes/{change}/discard",
            post(discard_change),
        )
}
