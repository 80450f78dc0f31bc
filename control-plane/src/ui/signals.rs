//! `/admin/signals`: the signal endpoints (name, the URL to post to, on or off, tokens), a new endpoint, an
//! endpoint's page (switch it, its tokens with a new one whose secret is shown once, deleting a token, the
//! latest signals it received with their JSON) and deleting an endpoint after a confirmation. Admins only,
//! as the admin API's `Access` area (`domain::signal_endpoints`).

use super::controls::{field, secret_field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::signal_endpoints::{
    self, CreateSignalEndpoint, CreateSignalEndpointToken, SignalEndpoint, SignalEndpointToken,
};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

const LIST: &str = "/admin/signals";

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(LIST, get(list).post(create))
        .route("/admin/signals/create", get(new_endpoint))
        .route("/admin/signals/{id}", get(endpoint))
        .route("/admin/signals/{id}/enabled", post(switch))
        .route("/admin/signals/{id}/tokens", post(create_token))
        .route(
            "/admin/signals/{id}/tokens/{token}/delete",
            post(delete_token),
        )
        .route(
            "/admin/signals/{id}/delete",
            get(confirm_delete).post(delete),
        )
}

fn endpoint_path(id: i64) -> String {
    format!("{LIST}/{id}")
}

/// Where other systems post: the receiver's absolute URL.
fn receiver_url(state: &AppState, headers: &HeaderMap, name: &str) -> String {
    signal_endpoints::receiver_url(&state.site(headers), name)
}

/// `GET /admin/signals`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let endpoints = {
        let mut conn = state.store.read().await?;
        signal_endpoints::list(&mut conn).await?.signal_endpoints
    };
    let markup = who.shell().render(
        "Signals",
        html! {
            div.page-head {
                div {
                    h1 { "Signals" }
                    p.subtitle { "Endpoints where other systems (an alert manager, a CI job) post JSON with a token; a project's actions then change flags when a signal matches their filters." }
                }
                a.button.primary href=(who.link("/admin/signals/create")) { "New signal endpoint" }
            }
            @if endpoints.is_empty() {
                div.empty {
                    p { "No signal endpoints yet." }
                    p { "Create one, give it a token, and point your alerting's webhook at its URL." }
                }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "URL" }
                            th scope="col" { "Status" }
                            th.hide-narrow scope="col" { "Tokens" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for endpoint in &endpoints {
                                tr {
                                    td.flag-name {
                                        strong { (endpoint.name) }
                                        @if let Some(description) = &endpoint.description {
                                            br; span.muted { (description) }
                                        }
                                    }
                                    td.hide-narrow { code { (receiver_url(&state, &headers, &endpoint.name)) } }
                                    td { (if endpoint.enabled { "On" } else { "Off" }) }
                                    td.hide-narrow { (endpoint.tokens.len()) }
                                    td {
                                        a.button href=(who.link(&endpoint_path(endpoint.id)))
                                            aria-label=(format!("Manage {}", endpoint.name)) { "Manage" }
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

fn new_endpoint_page(who: &SignedIn, form: &FormFields, error: Option<&ApiError>) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("name", "endpoint-name"),
            ("description", "endpoint-description"),
        ],
        "endpoint-name",
    );
    who.shell().render(
        "New signal endpoint",
        html! {
            div.page-head { div {
                h1 { "New signal endpoint" }
                p.subtitle { a href=(who.link(LIST)) { "← Signals" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link(LIST)) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("endpoint-name", "Name", errors.at("endpoint-name"),
                    Some("Part of the URL: letters, digits and -_.!~*'()"), html! {
                    input #endpoint-name type="text" name="name" value=(form.text("name"))
                        required maxlength="100" aria-invalid=(errors.invalid("endpoint-name"))
                        aria-describedby="endpoint-name-hint endpoint-name-error";
                }))
                (field("endpoint-description", "Description", errors.at("endpoint-description"),
                    Some("Optional: what posts here, for whoever reads this later"), html! {
                    input #endpoint-description type="text" name="description"
                        value=(form.text("description")) maxlength="1000"
                        aria-invalid=(errors.invalid("endpoint-description"))
                        aria-describedby="endpoint-description-hint endpoint-description-error";
                }))
                div.actions {
                    button.primary type="submit" { "Create signal endpoint" }
                    a href=(who.link(LIST)) { "Cancel" }
                }
            }
        },
    )
}

/// `GET /admin/signals/create`.
pub async fn new_endpoint(who: SignedIn) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let markup = new_endpoint_page(&who, &FormFields::default(), None);
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/signals`: to the new endpoint's page, where its tokens are made.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreateSignalEndpoint {
        name: form.text("name"),
        description: Some(form.text("description")),
        enabled: Some(true),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created = signal_endpoints::create(&mut tx, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&endpoint_path(created.id)),
            format!("Signal endpoint {} created: give it a token", created.name),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(Page::ok(new_endpoint_page(&who, &form, Some(error))).into_response())
    })
    .await
}

/// What an endpoint's page draws besides the endpoint: a new token's secret, or the token form sent back
/// with its refusal.
#[derive(Default)]
struct EndpointView<'a> {
    created: Option<&'a SignalEndpointToken>,
    token_form: Option<(&'a FormFields, &'a ApiError)>,
}

async fn endpoint_page(
    state: &AppState,
    who: &SignedIn,
    headers: &HeaderMap,
    id: i64,
    view: EndpointView<'_>,
    status: StatusCode,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let (endpoint, signals) = {
        let mut conn = state.store.read().await?;
        let endpoint = signal_endpoints::get(&mut conn, id).await?;
        let signals = signal_endpoints::signals(&mut conn, id).await?;
        (endpoint, signals.signal_endpoint_signals)
    };
    let url = receiver_url(state, headers, &endpoint.name);
    let markup = html! {
        (endpoint_markup(who, &endpoint, &url, &view))
        section.card.access aria-labelledby="signals-title" {
            h2 #signals-title { "Latest signals" }
            @if signals.is_empty() {
                div.empty { p { "None received yet." } }
            } @else {
                @for signal in &signals {
                    details {
                        summary {
                            (when(&signal.created_at)) " · #" (signal.id)
                            @if let Some(token) = &signal.token_name { " · token " (token) }
                        }
                        pre { code { (serde_json::to_string_pretty(&signal.payload).unwrap_or_default()) } }
                    }
                }
            }
        }
    };
    let markup = who.shell().render(&endpoint.name, markup);
    Ok(Page { status, markup }.into_response())
}

fn endpoint_markup(
    who: &SignedIn,
    endpoint: &SignalEndpoint,
    url: &str,
    view: &EndpointView<'_>,
) -> Markup {
    let empty = FormFields::default();
    let (fields, error) = match view.token_form {
        Some((form, error)) => (form, Some(error)),
        None => (&empty, None),
    };
    let errors = FieldErrors::of(error, &[("name", "token-name")], "token-name");
    let path = endpoint_path(endpoint.id);
    html! {
        div.page-head {
            div {
                h1 { (endpoint.name) }
                p.subtitle { a href=(who.link(LIST)) { "← Signals" } }
            }
            a.button.danger href=(who.link(&format!("{path}/delete"))) { "Delete signal endpoint" }
        }
        section.card.access aria-labelledby="endpoint-title" {
            h2 #endpoint-title { "Endpoint" }
            dl.meta {
                dt { "URL" } dd { code { (url) } }
                @if let Some(description) = &endpoint.description {
                    dt { "Description" } dd { (description) }
                }
                dt { "Status" } dd { (if endpoint.enabled { "On: signals are kept" } else { "Off: posts are refused" }) }
                dt { "Created" } dd { (when(&endpoint.created_at)) }
            }
            p.muted { "POST any JSON (at most 64 KiB) with Authorization: Bearer <token>." }
            form.inline method="post" action=(who.link(&format!("{path}/enabled"))) {
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="enabled" value=(if endpoint.enabled { "false" } else { "true" });
                button type="submit" { (if endpoint.enabled { "Turn off" } else { "Turn on" }) }
            }
        }
        section.card.access aria-labelledby="tokens-title" {
            h2 #tokens-title { "Tokens" }
            @if let Some(created) = view.created {
                div.card.token-created {
                    p { strong { "Token “" (created.name) "” created." } " Copy the secret now: it is not shown again." }
                    (secret_field(created.token.as_deref().unwrap_or_default()))
                }
            }
            @if endpoint.tokens.is_empty() {
                div.empty { p { "No tokens yet: without one, nothing can post here." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Created" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for token in &endpoint.tokens {
                                tr {
                                    td.flag-name { strong { (token.name) } }
                                    td.hide-narrow { (when(&token.created_at)) }
                                    td {
                                        form.inline method="post"
                                            action=(who.link(&format!("{path}/tokens/{}/delete", token.id))) {
                                            input type="hidden" name="csrf" value=(who.csrf);
                                            button.danger type="submit" aria-label=(format!("Delete token {}", token.name)) { "Delete" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            h3 { "New token" }
            (errors.general())
            form.form-narrow method="post" action=(who.link(&format!("{path}/tokens"))) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("token-name", "Name", errors.at("token-name"), None, html! {
                    input #token-name type="text" name="name" value=(fields.text("name"))
                        required maxlength="100" aria-invalid=(errors.invalid("token-name"))
                        aria-describedby="token-name-error";
                }))
                div.actions { button.primary type="submit" { "Create token" } }
            }
        }
    }
}

/// `GET /admin/signals/<id>`.
pub async fn endpoint(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    let view = EndpointView::default();
    endpoint_page(&state, &who, &headers, id, view, StatusCode::OK).await
}

/// `POST /admin/signals/<id>/enabled` (`enabled`: `true` or `false`).
pub async fn switch(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let enabled = form.text("enabled") == "true";
    let mut tx = state.store.begin_write(&who.actor).await?;
    let name = signal_endpoints::require(tx.conn(), id).await?.name;
    let input = CreateSignalEndpoint {
        name,
        description: None,
        enabled: Some(enabled),
    };
    signal_endpoints::update(&mut tx, id, input).await?;
    state.commit(tx).await?;
    let notice = if enabled {
        "The endpoint is on: it keeps what is posted with its tokens."
    } else {
        "The endpoint is off: it refuses every post."
    };
    Ok(Done::to(who.link(&endpoint_path(id)), notice).into_response())
}

/// `POST /admin/signals/<id>/tokens`: the page answers with the new secret (never in a URL, so no redirect);
/// a refusal draws the form again with it.
pub async fn create_token(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreateSignalEndpointToken {
        name: form.text("name"),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let token = signal_endpoints::create_token(&mut tx, id, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(token)
    }
    .await;
    let token = match done {
        Ok(token) => token,
        Err(error) => {
            return written(Err(error), async |error| {
                let view = EndpointView {
                    token_form: Some((&form, error)),
                    ..EndpointView::default()
                };
                endpoint_page(&state, &who, &headers, id, view, StatusCode::BAD_REQUEST).await
            })
            .await
        }
    };
    let view = EndpointView {
        created: Some(&token),
        ..EndpointView::default()
    };
    endpoint_page(&state, &who, &headers, id, view, StatusCode::CREATED).await
}

/// `POST /admin/signals/<id>/tokens/<token>/delete`: the token stops working at once.
pub async fn delete_token(
    State(state): State<Arc<AppState>>,
    Path((id, token)): Path<(i64, i64)>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    signal_endpoints::delete_token(&mut tx, id, token).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&endpoint_path(id)),
        "The token was deleted: it no longer works.",
    )
    .into_response())
}

/// `GET /admin/signals/<id>/delete`: a confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let endpoint = {
        let mut conn = state.store.read().await?;
        signal_endpoints::get(&mut conn, id).await?
    };
    let back = who.link(&endpoint_path(id));
    let markup = who.shell().render(
        "Delete signal endpoint",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete " (endpoint.name) "?" }
                p { "Its tokens stop working and its signals are deleted. Action sets listening to it receive nothing more. This cannot be undone." }
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

/// `POST /admin/signals/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    signal_endpoints::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(LIST),
        "The signal endpoint was deleted, with its tokens and signals.",
    )
    .into_response())
}
