//! The flag list of a project (`/projects/<project>`: search, filters, sort, pages, a switch per
//! environment with what it serves and a pending change request, last seen, last changed), the new-flag form (`/projects/<project>/create-flag`) and the switch
//! (`POST …/features/<flag>/environments/<environment>/switch`), which the flag page uses too.

use super::controls::{ago, field, local_path, notice, switch, switch_id, when};
use super::favorites::{star, star_id};
use super::field_errors::FieldErrors;
use super::flag_summary::{last_changed, Served};
use super::page::{see_other, Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use super::vocabulary::{stage_badge, stage_words, StrategyNames};
use crate::domain::access::Scope;
use crate::domain::change_requests;
use crate::domain::features::{
    self, CreateFeature, FeatureType, ValidateFeatureName, FEATURE_TYPES,
};
use crate::domain::lifecycle::{self, LifecycleStage};
use crate::domain::permissions::Permission;
use crate::domain::search::features::{search, FeatureSearchQuery};
use crate::domain::{flag_summaries, metrics, projects, strategy_definitions};
use crate::http::state::AppState;
use crate::model::change_request::Change;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(home))
        .route("/projects/{project}", get(list))
        .route(
            "/projects/{project}/create-flag",
            get(new_flag).post(create_flag),
        )
        .route(
            "/projects/{project}/create-flag/validate",
            get(validate_name),
        )
        .route(
            "/projects/{project}/features/{feature}/environments/{environment}/switch",
            post(set_switch),
        )
}

/// Flags per page.
pub const PAGE_SIZE: usize = 25;

/// The list's query string: what the filter form sends.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    pub query: String,
    #[serde(default, rename = "type")]
    pub feature_type: String,
    #[serde(default)]
    pub tag: String,
    #[serde(default)]
    pub state: String,
    /// A lifecycle stage (`LifecycleStage::as_str`), or empty for any.
    #[serde(default)]
    pub stage: String,
    #[serde(default)]
    pub sort: String,
    #[serde(default)]
    pub page: Option<usize>,
    pub notice: Option<String>,
}

impl ListQuery {
    /// The search domain's query for this page of `project`.
    fn to_search(&self, project: &str) -> FeatureSearchQuery {
        let non_empty = |text: &str| Some(text.trim().to_owned()).filter(|text| !text.is_empty());
        let (sort_by, sort_order) = match self.sort.as_str() {
            "name-desc" => ("name", "desc"),
            "type" => ("type", "asc"),
            "stale" => ("stale", "desc"),
            "created" => ("createdAt", "desc"),
            "created-asc" => ("createdAt", "asc"),
            "changed" => ("updatedAt", "desc"),
            _ => ("name", "asc"),
        };
        FeatureSearchQuery {
            query: non_empty(&self.query),
            project: Some(format!("IS:{project}")),
            feature_type: non_empty(&self.feature_type).map(|value| format!("IS:{value}")),
            state: match self.state.as_str() {
                "stale" => Some("IS:stale".to_owned()),
                "active" => Some("IS:active".to_owned()),
                _ => None,
            },
            lifecycle: non_empty(&self.stage).map(|value| format!("IS:{value}")),
            tag: non_empty(&self.tag).map(|value| format!("INCLUDE:{value}")),
            sort_by: Some(sort_by.to_owned()),
            sort_order: Some(sort_order.to_owned()),
            offset: Some((self.page.unwrap_or(1).saturating_sub(1) * PAGE_SIZE).to_string()),
            limit: Some(PAGE_SIZE.to_string()),
            favorites_first: Some("true".to_owned()),
            ..FeatureSearchQuery::default()
        }
    }

    /// This list's URL with another page.
    fn page_link(&self, base: &str, project: &str, page: usize) -> String {
        let pairs = [
            ("query", self.query.as_str()),
            ("type", self.feature_type.as_str()),
            ("tag", self.tag.as_str()),
            ("state", self.state.as_str()),
            ("stage", self.stage.as_str()),
            ("sort", self.sort.as_str()),
        ];
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in pairs {
            if !value.is_empty() {
                query.append_pair(name, value);
            }
        }
        query.append_pair("page", &page.to_string());
        format!("{base}/projects/{project}?{}", query.finish())
    }

    fn filtered(&self) -> bool {
        !(self.query.is_empty()
            && self.feature_type.is_empty()
            && self.tag.is_empty()
            && self.state.is_empty()
            && self.stage.is_empty())
    }
}

/// `GET /`, where signing in lands: a user's dashboard (`/personal`: their flags and projects); someone signed
/// in with a token, who has no flags of their own, gets the flag list of the first project.
pub async fn home(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    if who.actor.user_id >= 0 {
        return Ok(see_other(&who.link("/personal")));
    }
    let mut conn = state.store.read().await?;
    // The first favourite project, else the default one, else the first.
    let list = projects::list_for(&mut conn, who.actor.user_id).await?;
    let first = list
        .projects
        .iter()
        .find(|project| project.favorite)
        .or(list.projects.iter().find(|project| project.id == "default"))
        .or(list.projects.first())
        .map(|project| project.id.clone())
        .unwrap_or_else(|| "default".to_owned());
    Ok(see_other(&who.link(&format!("/projects/{first}"))))
}

fn select_option(value: &str, text: &str, current: &str) -> Markup {
    html! { option value=(value) selected[value == current] { (text) } }
}

/// `GET /projects/<project>`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let mut conn = state.store.read().await?;
    let current = projects::get(&mut conn, &project).await?;
    let all_projects = projects::list_for(&mut conn, who.actor.user_id)
        .await?
        .projects;
    let (result, search_error) =
        match search(&mut conn, &query.to_search(&project), who.actor.user_id).await {
            Ok(result) => (result, None),
            Err(error) if error.kind == ErrorKind::Validation => (
                crate::domain::search::features::FeatureSearchResult {
                    features: Vec::new(),
                    total: 0,
                },
                Some(error.message),
            ),
            Err(error) => return Err(error.into()),
        };
    let names: Vec<String> = result
        .features
        .iter()
        .map(|flag| flag.name.clone())
        .collect();
    let last_seen = metrics::last_seen(&mut conn, &names).await?;
    let summaries = flag_summaries::of_flags(&mut conn, &names).await?;
    let stages = lifecycle::current_stages_of(&mut conn, &names).await?;
    let strategy_names =
        StrategyNames::of(&strategy_definitions::list(&mut conn).await?.strategies);
    drop(conn);
    let now_ms = (state.clock)();
    let page = query.page.unwrap_or(1).max(1);
    let total = usize::try_from(result.total).unwrap_or(0);
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let here = query.page_link(&who.base, &project, page);
    let first_shown = (page - 1) * PAGE_SIZE + 1;
    let last_shown = ((page - 1) * PAGE_SIZE + result.features.len()).max(first_shown - 1);
    let markup = shell.render(
        &format!("Flags in {}", current.name),
        html! {
            div.page-head {
                div {
                    h1 { "Flags" }
                    p.subtitle { "Project " strong { (current.name) } " · " (total) (if total == 1 { " flag" } else { " flags" })
                        " · " a href=(who.link(&format!("/projects/{project}/overview"))) { "Project overview" } }
                }
                div.actions {
                    @if all_projects.len() > 1 {
                        form method="get" action=(who.link("/projects")) {
                            label for="project-picker" { "Project " }
                            span.sr-only #project-picker-hint {}
                            select #project-picker name="project" data-navigate aria-describedby="project-picker-hint" {
                                @for candidate in &all_projects {
                                    (select_option(&candidate.id, &candidate.name, &project))
                                }
                            }
                            " "
                            button type="submit" data-no-script { "Open" }
                        }
                    }
                    @if who.may_submit("/projects/{project}/create-flag", &Scope::project(&project)) {
                        a.button.primary href=(who.link(&format!("/projects/{project}/create-flag"))) { "New flag" }
                    }
                }
            }
            (notice(query.notice.as_deref(), &who.link(&format!("/projects/{project}/change-requests"))))
            // With JavaScript the list follows the filters as they change (the script replaces what follows
            // this form with the list drawn for them, and says how many match in #flag-count).
            form.filters method="get" action=(who.link(&format!("/projects/{project}"))) role="search"
                data-live-search data-total=(total) {
                div.field {
                    label for="search" { "Search flags" }
                    input #search type="search" name="query" value=(query.query)
                        placeholder="Name or description";
                }
                div.field {
                    label for="filter-type" { "Type" }
                    select #filter-type name="type" {
                        (select_option("", "Any type", &query.feature_type))
                        @for feature_type in FEATURE_TYPES {
                            (select_option(feature_type.as_str(), feature_type.as_str(), &query.feature_type))
                        }
                    }
                }
                div.field {
                    label for="filter-tag" { "Tag" }
                    input #filter-tag type="text" name="tag" value=(query.tag) placeholder="type:value";
                }
                div.field {
                    label for="filter-state" { "State" }
                    select #filter-state name="state" {
                        (select_option("", "Any state", &query.state))
                        (select_option("active", "Active", &query.state))
                        (select_option("stale", "Stale", &query.state))
                    }
                }
                div.field {
                    label for="filter-stage" { "Stage" }
                    select #filter-stage name="stage" {
                        (select_option("", "Any stage", &query.stage))
                        @for stage in LifecycleStage::ALL.into_iter().filter(|stage| *stage != LifecycleStage::Archived) {
                            (select_option(stage.as_str(), stage_words(stage), &query.stage))
                        }
                    }
                }
                div.field {
                    label for="sort" { "Sort by" }
                    select #sort name="sort" {
                        (select_option("name", "Name (A–Z)", &query.sort))
                        (select_option("name-desc", "Name (Z–A)", &query.sort))
                        (select_option("created", "Newest first", &query.sort))
                        (select_option("created-asc", "Oldest first", &query.sort))
                        (select_option("changed", "Last changed", &query.sort))
                        (select_option("type", "Type", &query.sort))
                        (select_option("stale", "Stale first", &query.sort))
                    }
                }
                button type="submit" data-no-script { "Apply" }
                p.sr-only #flag-count role="status" aria-live="polite" {}
            }
            @if let Some(message) = &search_error {
                p.error-box role="alert" { (message) }
            }
            @if result.features.is_empty() {
                div.empty {
                    @if query.filtered() {
                        p { "No flags match these filters." }
                        a href=(who.link(&format!("/projects/{project}"))) { "Clear the filters" }
                    } @else {
                        p { "No flags in this project yet." }
                        div.row-actions {
                            @if who.may_submit("/projects/{project}/create-flag", &Scope::project(&project)) {
                                a.button.primary href=(who.link(&format!("/projects/{project}/create-flag"))) { "Create the first flag" }
                            }
                            a.button href=(who.link(&format!("/projects/{project}/connect"))) { "Connect an SDK" }
                        }
                        p.muted { "Create a flag, then connect your app: the SDK asks for the project's flags with a token." }
                    }
                }
            } @else {
                div.table-wrap {
                    table.flag-table {
                        caption.skip { "Flags of project " (current.name) }
                        thead {
                            tr {
                                th scope="col" { "Name" }
                                th scope="col" { "Type and stage" }
                                th.hide-narrow scope="col" { "Created" }
                                th scope="col" { "Last seen" }
                                th.hide-narrow scope="col" { "Last changed" }
                                @for environment in &current.environments {
                                    th scope="col" { (environment) }
                                }
                            }
                        }
                        tbody {
                            @for flag in &result.features {
                                tr {
                                    td.flag-name {
                                        (star(&who, &flag.name, flag.favorite,
                                            &who.link(&format!("/projects/{project}/features/{}/favorite", flag.name)),
                                            &format!("{here}#{}", star_id(&flag.name))))
                                        a href=(who.link(&format!("/projects/{project}/features/{}", flag.name))) { (flag.name) }
                                        @if flag.stale { " " span.badge.stale { "stale" } }
                                        @if let Some(description) = flag.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                        @for tag in &flag.tags {
                                            span.tag { (tag.tag_type) ":" (tag.value) }
                                        }
                                    }
                                    td.stage data-label="Type and stage" {
                                        span.flag-type { (flag.feature_type) }
                                        @if let Some(stage) = stages.get(&flag.name) { " " (stage_badge(*stage)) }
                                    }
                                    td.hide-narrow {
                                        @if let Some(created) = flag.created_at.as_deref() {
                                            time datetime=(created) title=(when(created)) { (created.get(..10).unwrap_or(created)) }
                                        }
                                    }
                                    td.last-seen data-label="Last seen" {
                                        @match last_seen.get(&flag.name) {
                                            Some(at) => { (ago(*at, now_ms)) }
                                            None => { span.muted { "never" } }
                                        }
                                    }
                                    td.last-changed data-label="Last changed" {
                                        (last_changed(summaries.last_change(&flag.name), now_ms))
                                    }
                                    @for environment in &current.environments {
                                        td.env data-label=(environment) {
                                            @match flag.environments.iter().find(|e| &e.name == environment) {
                                                Some(state) => {
                                                    div.env-state {
                                                        (switch(&who, who.may(Permission::UpdateFeatureEnvironment, &Scope::environment(&project, environment)), &format!("{} in {}", flag.name, environment), state.enabled,
                                                            &who.link(&format!("/projects/{project}/features/{}/environments/{environment}/switch", flag.name)),
                                                            &format!("{here}#{}", switch_id(&flag.name, environment))))
                                                        (Served { project: &project, flag: &flag.name, environment,
                                                            enabled: state.enabled, strategies: summaries.strategies(&flag.name, environment),
                                                            pending: &state.change_request_ids }.markup(&who, &strategy_names))
                                                    }
                                                }
                                                None => { span.muted { "–" } }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                div.pager {
                    span { "Showing " (first_shown) "–" (last_shown) " of " (total) }
                    nav aria-label="Pages" {
                        @if page > 1 {
                            a.button href=(query.page_link(&who.base, &project, page - 1)) { "Previous page" }
                        }
                        span.muted { "Page " (page) " of " (pages) }
                        @if page < pages {
                            a.button href=(query.page_link(&who.base, &project, page + 1)) { "Next page" }
                        }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// What the new-flag form holds (kept when it is shown again with a message).
#[derive(Debug, Default)]
struct NewFlag {
    name: String,
    feature_type: String,
    description: String,
    impression_data: bool,
}

fn new_flag_page(
    who: &SignedIn,
    project: &str,
    form: &NewFlag,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Page {
    let shell = who.shell();
    // The message goes next to the field it is about: the name's rule or a taken name; others above.
    let errors = FieldErrors::of(error, &[("name", "name")], "name");
    let name_error = errors.at("name");
    let described = if name_error.is_some() {
        "name-hint name-error"
    } else {
        "name-hint"
    };
    let markup = shell.render(
        "New flag",
        html! {
            div.page-head { div { h1 { "New flag" } p.subtitle { "In project " (project) } } }
            (errors.general())
            form.form-narrow method="post" action=(who.link(&format!("/projects/{project}/create-flag"))) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("name", "Name", name_error, Some("1 to 100 URL-safe characters: letters, digits and -_.!~*'()"),
                    html! {
                        input #name type="text" name="name" value=(form.name) required autocomplete="off"
                            aria-describedby=(described) aria-invalid=(if name_error.is_some() { "true" } else { "false" })
                            data-validate-url=(who.link(&format!("/projects/{project}/create-flag/validate")));
                    }))
                (field("type", "Type", None, None, html! {
                    select #type name="type" {
                        @for feature_type in FEATURE_TYPES {
                            (select_option(feature_type.as_str(), feature_type.as_str(), if form.feature_type.is_empty() { "release" } else { &form.feature_type }))
                        }
                    }
                }))
                (field("description", "Description", None, None, html! {
                    textarea #description name="description" rows="3" { (form.description) }
                }))
                label.check {
                    input type="checkbox" name="impressionData" value="true" checked[form.impression_data];
                    "Impression data"
                }
                div.actions {
                    button.primary type="submit" { "Create flag" }
                    a href=(who.link(&format!("/projects/{project}"))) { "Cancel" }
                }
            }
        },
    );
    Page { status, markup }
}

/// `GET /projects/<project>/create-flag`.
pub async fn new_flag(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/projects/{project}/create-flag", &Scope::project(&project))?;
    let mut conn = state.store.read().await?;
    projects::require(&mut conn, &project).await?;
    let page = new_flag_page(&who, &project, &NewFlag::default(), None, StatusCode::OK);
    Ok(page.into_response())
}

/// `POST /projects/<project>/create-flag`: the flag through the API's own create; a refusal shows the form
/// again with what was typed and the message next to its field.
pub async fn create_flag(
    State(state): State<Arc<AppState>>,
    Path(project): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let typed = NewFlag {
        name: form.text("name").trim().to_owned(),
        feature_type: form.text("type"),
        description: form.text("description"),
        impression_data: form.checked("impressionData"),
    };
    let input = CreateFeature {
        name: typed.name.clone(),
        feature_type: Some(
            FeatureType::from_stored(&typed.feature_type).unwrap_or(FeatureType::Release),
        ),
        description: Some(typed.description.clone()).filter(|text| !text.is_empty()),
        impression_data: Some(typed.impression_data),
        tags: None,
    };
    let created = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created = features::create(&mut tx, &project, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/features/{}", created.name)),
            format!(
                "Flag {} created, off in every environment. Add a strategy to an environment to \
                 say who gets it.",
                created.name
            ),
        ))
    }
    .await;
    written(created, async |error| {
        Ok(new_flag_page(&who, &project, &typed, Some(error), StatusCode::OK).into_response())
    })
    .await
}

#[derive(Debug, Deserialize)]
pub struct NameQuery {
    #[serde(default)]
    name: String,
}

/// `GET /projects/<project>/create-flag/validate?name=`: `{"message": ""}` when the name can be taken, else
/// the API's message (the form's check as typed).
pub async fn validate_name(
    State(state): State<Arc<AppState>>,
    _: SignedIn,
    Path(project): Path<String>,
    Query(query): Query<NameQuery>,
) -> Response {
    let checked = async {
        let mut conn = state.store.read().await?;
        features::validate_name(
            &mut conn,
            ValidateFeatureName {
                name: query.name,
                project_id: Some(project),
            },
        )
        .await
    }
    .await;
    let message = match checked {
        Ok(()) => String::new(),
        Err(error) => error.message,
    };
    Json(serde_json::json!({ "message": message })).into_response()
}

/// `POST /projects/<project>/features/<flag>/environments/<environment>/switch` (`enabled`, `back`): the
/// switch, or a change request draft where change requests are on; then back with a notice.
pub async fn set_switch(
    State(state): State<Arc<AppState>>,
    Path((project, feature, environment)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let enabled = form.get("enabled") == Some("true");
    let back = local_path(&who.base, form.get("back"));
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let outcome = change_requests::make_or_propose(
            &mut tx,
            (&project, &environment, &feature),
            Change::UpdateEnabled { enabled },
            &state.limits,
        )
        .await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(outcome)
    }
    .await?;
    let now = if enabled { "on" } else { "off" };
    let made = format!("{feature} switched {now} in {environment}.");
    Ok(Done::after_change(back, done, made).into_response())
}
