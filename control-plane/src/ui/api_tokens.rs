//! `/admin/api`: the API tokens (name, type, environment, projects, created, expiry, last used; never a
//! secret), the create form (the new secret shown once, in a read-only field with a Copy button), and revoking a token
//! after a confirmation page. Admins only, as the admin API's `Access` area: anyone else gets its 403 page.

use super::controls::{field, last_used, secret_field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::Paged;
use super::scope::{written, Done};
use super::session::{InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::tokens::{self, ApiToken, CreateApiToken, ListedToken};
use crate::domain::{environments, projects};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/api", get(list).post(create))
        .route("/admin/api/create", get(new_token))
        .route("/admin/api/{hash}/revoke", get(confirm_revoke).post(revoke))
}

/// The token types the form offers, with what each is for.
const TOKEN_TYPES: [(&str, &str); 4] = [
    ("client", "Client (server-side SDKs)"),
    ("frontend", "Frontend (browser and mobile SDKs)"),
    ("admin", "Admin (the admin API)"),
    ("edge", "Edge (an edge's channel to the control plane)"),
];

/// The list's query: a page.
#[derive(Debug, Default, Deserialize)]
pub struct TokensQuery {
    pub page: Option<usize>,
}

/// What the create form holds.
#[derive(Debug)]
struct TokenDraft {
    name: String,
    token_type: String,
    environment: String,
    projects: Vec<String>,
}

impl Default for TokenDraft {
    fn default() -> Self {
        TokenDraft {
            name: String::new(),
            token_type: "client".to_owned(),
            environment: "development".to_owned(),
            projects: vec!["*".to_owned()],
        }
    }
}

fn projects_text(projects: &[String]) -> String {
    if projects.iter().any(|project| project == "*") {
        "All projects".to_owned()
    } else {
        projects.join(", ")
    }
}

/// The tokens, page `page`, under the card of a token just created (its secret, once).
async fn tokens_page(
    state: &AppState,
    who: &SignedIn,
    page: Option<usize>,
    created: Option<&ApiToken>,
    status: StatusCode,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let list = {
        let mut conn = state.store.read().await?;
        tokens::list_with_hashes(&mut conn).await?
    };
    let paged = Paged::new(page, list.len());
    let may_create = who.authorize(false, Area::Access).is_ok();
    let markup = who.shell().render(
        "API tokens",
        html! {
            div.page-head {
                div {
                    h1 { "API tokens" }
                    p.subtitle { "Secrets SDKs, edges and scripts use. A secret is shown once, when its token is created." }
                }
                @if may_create {
                    a.button.primary href=(who.link("/admin/api/create")) { "New token" }
                }
            }
            @if let Some(created) = created {
                (created_card(created))
            }
            @if list.is_empty() {
                div.empty { p { "No API tokens yet." } }
            } @else {
                (token_table(who, paged.slice(&list)))
                (paged.pager(|page| who.link(&format!("/admin/api?page={page}"))))
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// The form for a new token (`draft`, refused with `error`).
async fn create_page(
    state: &AppState,
    who: &SignedIn,
    draft: &TokenDraft,
    error: Option<&ApiError>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let (environments, all_projects) = {
        let mut conn = state.store.read().await?;
        let environments = environments::list(&mut conn).await?.environments;
        let projects = projects::list(&mut conn).await?.projects;
        (environments, projects)
    };
    let errors = FieldErrors::of(
        error,
        &[
            ("tokenName", "token-name"),
            ("type", "token-type"),
            ("environment", "token-environment"),
            ("projects", "token-projects"),
        ],
        "token-name",
    );
    let markup = who.shell().render(
        "New API token",
        html! {
            div.page-head { div {
                h1 { "New API token" }
                p.subtitle { a href=(who.link("/admin/api")) { "← API tokens" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link("/admin/api")) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("token-name", "Token name", errors.at("token-name"), None, html! {
                    input #token-name type="text" name="name" value=(draft.name) required maxlength="100"
                        aria-describedby="token-name-error";
                }))
                (field("token-type", "Token type", errors.at("token-type"), None, html! {
                    select #token-type name="type" aria-describedby="token-type-error" {
                        @for (value, text) in TOKEN_TYPES {
                            option value=(value) selected[draft.token_type == value] { (text) }
                        }
                    }
                }))
                (field("token-environment", "Environment", errors.at("token-environment"),
                    Some("Admin tokens are for all environments; an edge token may be for one or all"), html! {
                    select #token-environment name="environment" aria-describedby="token-environment-hint token-environment-error" {
                        option value="*" selected[draft.environment == "*"] { "All environments" }
                        @for environment in &environments {
                            option value=(environment.name) selected[draft.environment == environment.name] { (environment.name) }
                        }
                    }
                }))
                (field("token-projects", "Projects", errors.at("token-projects"),
                    Some("Client and frontend tokens; pick several with Ctrl or Shift"), html! {
                    select #token-projects name="projects" multiple size=(all_projects.len().clamp(1, 5) + 1)
                        aria-describedby="token-projects-hint token-projects-error" {
                        option value="*" selected[draft.projects.iter().any(|p| p == "*")] { "All projects" }
                        @for project in &all_projects {
                            option value=(project.id) selected[draft.projects.contains(&project.id)] { (project.name) }
                        }
                    }
                }))
                div.actions {
                    button.primary type="submit" { "Create token" }
                    a href=(who.link("/admin/api")) { "Cancel" }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// The new token's secret, once: a read-only field and a Copy button (`vexil.js` copies it).
fn created_card(created: &ApiToken) -> Markup {
    html! {
        section.card.access.token-created aria-labelledby="created-title" {
            h2 #created-title { "Token " (created.token_name) " created" }
            p { "Copy the secret now: it is not shown again." }
            (secret_field(created.secret.as_deref().unwrap_or_default()))
        }
    }
}

fn token_table(who: &SignedIn, rows: &[ListedToken]) -> Markup {
    html! {
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { "Name and type" }
                    th scope="col" { "Environment" }
                    th.hide-narrow scope="col" { "Projects" }
                    th.hide-narrow scope="col" { "Created" }
                    th.hide-narrow scope="col" { "Expires" }
                    th.hide-narrow scope="col" { "Last used" }
                    th scope="col" { "Actions" }
                } }
                tbody {
                    @for row in rows {
                        @let token = &row.token;
                        tr {
                            td.flag-name {
                                strong { (token.token_name) }
                                span.cell-badge { span.badge { (token.token_type) } }
                            }
                            td { @if token.environment == "*" { "All" } @else { (token.environment) } }
                            td.hide-narrow { (projects_text(&token.projects)) }
                            td.hide-narrow { (when(&token.created_at)) }
                            td.hide-narrow {
                                @match &token.expires_at {
                                    Some(at) => { (when(at)) }
                                    None => { span.muted { "never" } }
                                }
                            }
                            td.hide-narrow { (last_used(token.seen_at.as_deref())) }
                            td {
                                form.inline method="get" action=(who.link(&format!("/admin/api/{}/revoke", row.secret_hash))) {
                                    button.danger type="submit" aria-label=(format!("Revoke {}", token.token_name)) { "Revoke" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /admin/api`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<TokensQuery>,
) -> Result<Response, UiError> {
    tokens_page(&state, &who, query.page, None, StatusCode::OK).await
}

/// What a link may fill the new-token form with (the "Connect an SDK" page's links).
#[derive(Debug, Default, Deserialize)]
pub struct TokenPrefill {
    name: Option<String>,
    #[serde(rename = "type")]
    token_type: Option<String>,
    environment: Option<String>,
    projects: Option<String>,
}

/// `GET /admin/api/create`: the form for a new token, filled in as the query says.
pub async fn new_token(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(prefill): Query<TokenPrefill>,
) -> Result<Response, UiError> {
    let mut draft = TokenDraft::default();
    if let Some(name) = prefill.name {
        draft.name = name;
    }
    if let Some(kind) = prefill
        .token_type
        .filter(|kind| TOKEN_TYPES.iter().any(|(k, _)| k == kind))
    {
        draft.token_type = kind;
    }
    if let Some(environment) = prefill.environment {
        draft.environment = environment;
    }
    if let Some(projects) = prefill.projects {
        draft.projects = vec![projects];
    }
    create_page(&state, &who, &draft, None).await
}

/// `POST /admin/api`: the token is created and the page answers with its secret (never in a URL).
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let draft = TokenDraft {
        name: form.text("name").trim().to_owned(),
        token_type: form.text("type"),
        environment: form.text("environment"),
        projects: form
            .all("projects")
            .into_iter()
            .map(str::to_owned)
            .collect(),
    };
    let input = CreateApiToken {
        token_name: draft.name.clone(),
        token_type: draft.token_type.clone(),
        environment: Some(draft.environment.clone()).filter(|env| !env.is_empty()),
        project: None,
        projects: Some(draft.projects.clone()),
        expires_at: None,
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let token = tokens::create(&mut tx, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(token)
    }
    .await;
    // The secret is shown once, on the page this post answers (never in a URL, so no redirect).
    let token = match done {
        Ok(token) => token,
        Err(error) => {
            return written(Err(error), async |error| {
                create_page(&state, &who, &draft, Some(error)).await
            })
            .await
        }
    };
    tokens_page(&state, &who, None, Some(&token), StatusCode::CREATED).await
}

/// `GET /admin/api/<hash>/revoke`: what the token is, and a button that revokes it.
pub async fn confirm_revoke(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(hash): Path<String>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    who.authorize(false, Area::Access)?;
    let token = {
        let mut conn = state.store.read().await?;
        tokens::by_hash(&mut conn, &hash).await?
    };
    let back = who.link("/admin/api");
    let markup = shell.render(
        "Revoke token",
        html! {
            section.card.form-narrow aria-labelledby="revoke-title" {
                h1 #revoke-title { "Revoke " (token.token_name) "?" }
                dl.meta {
                    dt { "Type" } dd { (token.token_type) }
                    dt { "Environment" } dd { @if token.environment == "*" { "All" } @else { (token.environment) } }
                    dt { "Projects" } dd { (projects_text(&token.projects)) }
                    dt { "Created" } dd { (when(&token.created_at)) }
                }
                p { "Every SDK, edge or script using this token is refused from then on. This cannot be undone." }
                form method="post" action=(who.link(&format!("/admin/api/{hash}/revoke"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Revoke token" }
                        a href=(back) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/api/<hash>/revoke`.
pub async fn revoke(
    State(state): State<Arc<AppState>>,
    Path(hash): Path<String>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    tokens::delete_by_hash(&mut tx, &hash).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/admin/api"),
        "The token was revoked: it stops working on every edge within seconds.",
    )
    .into_response())
}
