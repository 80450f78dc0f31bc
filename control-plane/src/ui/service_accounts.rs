//! `/admin/service-accounts`: the service accounts (paged: name, username, root role, tokens), a new account
//! (username, name, root role), an account's page (its tokens with their expiry and last use, a new token
//! whose secret is shown once with a Copy button, deleting a token) and deleting an account after a
//! confirmation. Admins only, as the admin API's `Access` area: anyone else gets its 403 page.

use super::access_forms::{role_name, role_options};
use super::controls::{field, last_used, secret_field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::Paged;
use super::profile::expiry_of;
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::service_accounts::{self, CreateServiceAccount, ServiceAccount};
use crate::domain::users::{CreatePat, Pat};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

use super::paging::PageQuery;

const LIST: &str = "/admin/service-accounts";

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(LIST, get(list).post(create))
        .route("/admin/service-accounts/create", get(new_account))
        .route("/admin/service-accounts/{id}", get(account))
        .route("/admin/service-accounts/{id}/tokens", post(create_token))
        .route(
            "/admin/service-accounts/{id}/tokens/{token}/delete",
            post(delete_token),
        )
        .route(
            "/admin/service-accounts/{id}/delete",
            get(confirm_delete).post(delete),
        )
}

fn account_path(id: i64) -> String {
    format!("{LIST}/{id}")
}

/// `GET /admin/service-accounts`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<PageQuery>,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let all = {
        let mut conn = state.store.read().await?;
        service_accounts::list(&mut conn).await?.service_accounts
    };
    let paged = Paged::new(query.page, all.len());
    let markup = who.shell().render(
        "Service accounts",
        html! {
            div.page-head {
                div {
                    h1 { "Service accounts" }
                    p.subtitle { "Accounts for automation (CI, Terraform, scripts) that belong to no person: their tokens act on the admin API with the account's root role." }
                }
                a.button.primary href=(who.link("/admin/service-accounts/create")) { "New service account" }
            }
            @if all.is_empty() {
                div.empty {
                    p { "No service accounts yet." }
                    p { "Create one with the root role your automation needs (Viewer to read, Editor to change flags), then give it a token." }
                }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Username" }
                            th scope="col" { "Root role" }
                            th.hide-narrow scope="col" { "Tokens" }
                            th.hide-narrow scope="col" { "Created" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for account in paged.slice(&all) {
                                tr {
                                    td.flag-name { strong { (account.name) } }
                                    td.hide-narrow { (account.username) }
                                    td { (role_name(account.root_role)) }
                                    td.hide-narrow { (account.tokens.len()) }
                                    td.hide-narrow { (when(&account.created_at)) }
                                    td {
                                        a.button href=(who.link(&account_path(account.id)))
                                            aria-label=(format!("Manage {}", account.name)) { "Manage" }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| who.link(&format!("{LIST}?page={page}"))))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn new_account_page(who: &SignedIn, form: &FormFields, error: Option<&ApiError>) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("username", "account-username"),
            ("name", "account-name"),
            ("rootRole", "account-role"),
        ],
        "account-username",
    );
    let role = form
        .get("rootRole")
        .and_then(|id| id.parse().ok())
        .or(Some(3));
    who.shell().render(
        "New service account",
        html! {
            div.page-head { div {
                h1 { "New service account" }
                p.subtitle { a href=(who.link(LIST)) { "← Service accounts" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link(LIST)) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("account-username", "Username", errors.at("account-username"),
                    Some("Unique among users and service accounts; no spaces"), html! {
                    input #account-username type="text" name="username" value=(form.text("username"))
                        required maxlength="100" aria-invalid=(errors.invalid("account-username"))
                        aria-describedby="account-username-hint account-username-error";
                }))
                (field("account-name", "Name", errors.at("account-name"), None, html! {
                    input #account-name type="text" name="name" value=(form.text("name")) required maxlength="100"
                        aria-invalid=(errors.invalid("account-name")) aria-describedby="account-name-error";
                }))
                (field("account-role", "Root role", errors.at("account-role"), None, html! {
                    select #account-role name="rootRole" aria-describedby="account-role-error" { (role_options(role)) }
                }))
                div.actions {
                    button.primary type="submit" { "Create service account" }
                    a href=(who.link(LIST)) { "Cancel" }
                }
            }
        },
    )
}

/// `GET /admin/service-accounts/create`.
pub async fn new_account(who: SignedIn) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let markup = new_account_page(&who, &FormFields::default(), None);
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/service-accounts`: to the new account's page, where its tokens are made.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreateServiceAccount {
        username: form.text("username"),
        name: form.text("name"),
        root_role: form.text("rootRole").parse().unwrap_or(0),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created = service_accounts::create(&mut tx, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&account_path(created.id)),
            format!(
                "Service account {} created: give it a token",
                created.username
            ),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(Page::ok(new_account_page(&who, &form, Some(error))).into_response())
    })
    .await
}

/// What an account's page draws besides the account: a new token's secret, or the token form sent back with
/// its refusal.
#[derive(Default)]
struct AccountView<'a> {
    created: Option<&'a Pat>,
    token_form: Option<(&'a FormFields, &'a ApiError)>,
}

async fn account_page(
    state: &AppState,
    who: &SignedIn,
    id: i64,
    view: AccountView<'_>,
    status: StatusCode,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let account = {
        let mut conn = state.store.read().await?;
        service_accounts::get(&mut conn, id).await?
    };
    let markup = who
        .shell()
        .render(&account.name, account_markup(who, &account, &view));
    Ok(Page { status, markup }.into_response())
}

fn account_markup(who: &SignedIn, account: &ServiceAccount, view: &AccountView<'_>) -> Markup {
    let empty = FormFields::default();
    let (fields, error) = match view.token_form {
        Some((form, error)) => (form, Some(error)),
        None => (&empty, None),
    };
    let errors = FieldErrors::of(
        error,
        &[
            ("description", "token-description"),
            ("expiresAt", "token-expiry"),
        ],
        "token-description",
    );
    let path = account_path(account.id);
    html! {
        div.page-head {
            div {
                h1 { (account.name) }
                p.subtitle { a href=(who.link(LIST)) { "← Service accounts" } }
            }
            a.button.danger href=(who.link(&format!("{path}/delete"))) { "Delete service account" }
        }
        section.card.access aria-labelledby="account-title" {
            h2 #account-title { "Account" }
            dl.meta {
                dt { "Username" } dd { (account.username) }
                dt { "Root role" } dd { (role_name(account.root_role)) }
                dt { "Created" } dd { (when(&account.created_at)) }
            }
        }
        section.card.access aria-labelledby="tokens-title" {
            h2 #tokens-title { "Tokens" }
            p.muted { "A token acts as this account on the admin API, with its root role, until it expires or is deleted." }
            @if let Some(created) = view.created {
                div.card.token-created {
                    p { strong { "Token “" (created.description) "” created." } " Copy the secret now: it is not shown again." }
                    (secret_field(created.secret.as_deref().unwrap_or_default()))
                }
            }
            @if account.tokens.is_empty() {
                div.empty { p { "No tokens yet: create one below for the automation that uses this account." } }
            } @else {
                (token_table(who, account))
            }
            h3 { "New token" }
            (errors.general())
            form.form-narrow method="post" action=(who.link(&format!("{path}/tokens"))) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("token-description", "Description", errors.at("token-description"), None, html! {
                    input #token-description type="text" name="description" value=(fields.text("description"))
                        required maxlength="100" aria-invalid=(errors.invalid("token-description"))
                        aria-describedby="token-description-error";
                }))
                (field("token-expiry", "Expires on", errors.at("token-expiry"),
                    Some("The token stops working at the start of this day (UTC)"), html! {
                    input #token-expiry type="date" name="expires" value=(fields.text("expires")) required
                        aria-invalid=(errors.invalid("token-expiry"))
                        aria-describedby="token-expiry-hint token-expiry-error";
                }))
                div.actions { button.primary type="submit" { "Create token" } }
            }
        }
    }
}

fn token_table(who: &SignedIn, account: &ServiceAccount) -> Markup {
    html! {
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { "Description" }
                    th.hide-narrow scope="col" { "Created" }
                    th scope="col" { "Expires" }
                    th.hide-narrow scope="col" { "Last used" }
                    th scope="col" { "Actions" }
                } }
                tbody {
                    @for token in &account.tokens {
                        tr {
                            td.flag-name { strong { (token.description) } }
                            td.hide-narrow { (when(&token.created_at)) }
                            td { (when(&token.expires_at)) }
                            td.hide-narrow { (last_used(token.seen_at.as_deref())) }
                            td {
                                form.inline method="post"
                                    action=(who.link(&format!("{}/tokens/{}/delete", account_path(account.id), token.id))) {
                                    input type="hidden" name="csrf" value=(who.csrf);
                                    button.danger type="submit" aria-label=(format!("Delete token {}", token.description)) { "Delete" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /admin/service-accounts/<id>`.
pub async fn account(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    account_page(&state, &who, id, AccountView::default(), StatusCode::OK).await
}

/// `POST /admin/service-accounts/<id>/tokens`: the page answers with the new secret (never in a URL, so no
/// redirect); a refusal draws the form again with it.
pub async fn create_token(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreatePat {
        description: form.text("description"),
        expires_at: expiry_of(&form.text("expires")),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let pat = service_accounts::create_token(&mut tx, id, input).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(pat)
    }
    .await;
    let pat = match done {
        Ok(pat) => pat,
        Err(error) => {
            return written(Err(error), async |error| {
                let view = AccountView {
                    token_form: Some((&form, error)),
                    ..AccountView::default()
                };
                account_page(&state, &who, id, view, StatusCode::BAD_REQUEST).await
            })
            .await
        }
    };
    let view = AccountView {
        created: Some(&pat),
        ..AccountView::default()
    };
    account_page(&state, &who, id, view, StatusCode::CREATED).await
}

/// `POST /admin/service-accounts/<id>/tokens/<token>/delete`: the token stops working at once.
pub async fn delete_token(
    State(state): State<Arc<AppState>>,
    Path((id, token)): Path<(i64, i64)>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    service_accounts::delete_token(&mut tx, id, token).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&account_path(id)),
        "The token was deleted: it no longer works.",
    )
    .into_response())
}

/// `GET /admin/service-accounts/<id>/delete`: a confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let account = {
        let mut conn = state.store.read().await?;
        service_accounts::get(&mut conn, id).await?
    };
    let back = who.link(&account_path(id));
    let markup = who.shell().render(
        "Delete service account",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete " (account.name) "?" }
                p { "Its " (account.tokens.len()) " token(s) stop working at once. This cannot be undone." }
                form method="post" action=(format!("{back}/delete")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Confirm delete" }
                        a href=(back) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/service-accounts/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    service_accounts::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(LIST),
        "The service account was deleted, with its tokens.",
    )
    .into_response())
}
