//! `/admin/settings`: the frontend API's CORS origins (`frontendApiOrigins`, one per line, checked by the
//! same rule as `/api/admin/ui-config`) and the facts an operator checks: version, database, authentication,
//! resource limits. Everyone who may read settings sees the page; only those the admin API lets change
//! settings (Admins) get the form.

use super::controls::{field, switch};
use super::page::{Page, UiError, MAINTENANCE_FORM};
use super::scope::{written, Done};
use super::session::{InSettings, SignedIn, UiWrite};
use crate::domain::access::{Area, Scope};
use crate::domain::maintenance::{self, Maintenance};
use crate::domain::ui_config::{self, Instance, UiConfig};
use crate::http::state::AppState;
use crate::store::Backend;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/settings", get(page))
        .route("/admin/settings/origins", post(save_origins))
        .route(MAINTENANCE_FORM, post(switch_maintenance))
}

/// What the origins form shows again after a refusal: the text as typed and the message.
struct OriginsDraft {
    text: String,
    error: String,
}

async fn configuration(state: &AppState) -> Result<UiConfig, ApiError> {
    let instance = Instance {
        // Only the service URL uses the origin, and this page does not show it.
        origin: String::new(),
        base_path: &state.base_path,
        auth_enabled: state.auth_enabled,
        password_auth: state.password_sign_in().await?,
        oidc_configured_through_env: state.sign_in_config.oidc_env.is_some(),
        saml_configured_through_env: state.sign_in_config.saml_env.is_some(),
        email_enabled: state.mailer.is_some(),
        limits: &state.limits,
    };
    let mut conn = state.store.read().await?;
    ui_config::get(&mut conn, &instance).await
}

async fn settings_page(
    state: &AppState,
    who: &SignedIn,
    draft: Option<&OriginsDraft>,
    status: StatusCode,
) -> Result<Response, UiError> {
    let shell = who.shell();
    who.authorize(true, Area::Settings)?;
    let config = configuration(state).await?;
    let may_change = who.authorize(false, Area::Settings).is_ok();
    let origins_text = draft.map_or_else(
        || config.frontend_api_origins.join("\n"),
        |draft| draft.text.clone(),
    );
    let error = draft.map(|draft| draft.error.as_str());
    let database = match state.store.backend() {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    let authentication = if !state.auth_enabled {
        "None (--auth-type none): every request is an admin"
    } else if !config.disable_password_auth {
        "Users with passwords, personal access tokens and API tokens"
    } else {
        "API and personal access tokens (password sign-in is off)"
    };
    let limits: Vec<(String, serde_json::Value)> =
        match serde_json::to_value(&config.resource_limits) {
            Ok(serde_json::Value::Object(fields)) => fields.into_iter().collect(),
            _ => Vec::new(),
        };
    let may_pause = who.may_submit(MAINTENANCE_FORM, &Scope::default());
    let markup = shell.render(
        "Settings",
        maud::html! {
            div.page-head { div {
                h1 { "Settings" }
                p.subtitle { "How this instance is set up." }
            } }
            section.card aria-labelledby="maintenance-title" {
                div.switch-line {
                    h2 #maintenance-title { "Maintenance mode" }
                    (switch(who, may_pause, "Maintenance mode", config.maintenance_mode,
                        &who.link(MAINTENANCE_FORM), &who.link("/admin/settings")))
                }
                p.muted { "While it is on, every change is refused — in this UI and through the admin API — except turning it off; SDKs and edges keep serving flags." }
            }
            section.card aria-labelledby="banners-title" {
                h2 #banners-title { "Banners" }
                p.muted { "Messages shown at the top of every page for everyone signed in, until turned off. "
                    a href=(who.link("/admin/settings/banners")) { "Manage banners" } }
            }
            section.card aria-labelledby="origins-title" {
                h2 #origins-title { "Frontend API CORS origins" }
                p.muted { "Browsers on these origins may call the frontend API (/api/frontend) of the edges and the control plane. * allows every origin. Edges get the change on their stream." }
                @if may_change {
                    form.form-narrow method="post" action=(who.link("/admin/settings/origins")) novalidate {
                        input type="hidden" name="csrf" value=(who.csrf);
                        (field("origins", "Allowed origins", error, Some("One per line: * or an origin such as https://app.example.com"), maud::html! {
                            textarea #origins name="origins" rows="4" aria-describedby="origins-hint"
                                aria-invalid=(if error.is_some() { "true" } else { "false" }) { (origins_text) }
                        }))
                        div.actions { button.primary type="submit" { "Save origins" } }
                    }
                } @else {
                    ul.origins {
                        @for origin in &config.frontend_api_origins { li { code { (origin) } } }
                    }
                }
            }
            section.card aria-labelledby="instance-title" {
                h2 #instance-title { "Instance" }
                dl.meta.instance-facts {
                    dt { "Version" } dd { (config.version) }
                    dt { "Revision" } dd { code { (config.version_info.current.oss) } }
                    dt { "Instance id" } dd { code { (config.version_info.instance_id) } }
                    dt { "Database" } dd { (database) }
                    dt { "Authentication" } dd { (authentication) }
                    dt { "Base path" } dd {
                        @if config.base_uri_path.is_empty() { span.muted { "none" } } @else { code { (config.base_uri_path) } }
                    }
                }
            }
            section.card aria-labelledby="limits-title" {
                h2 #limits-title { "Resource limits" }
                p.muted { "Set with --limit-… flags or VEXIL_LIMIT_… variables at start." }
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "Limit" } th scope="col" { "Value" } } }
                        tbody {
                            @for (name, value) in &limits {
                                tr { td { code { (name) } } td { (value) } }
                            }
                        }
                    }
                }
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// `GET /admin/settings`.
pub async fn page(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    settings_page(&state, &who, None, StatusCode::OK).await
}

/// `POST /admin/settings/maintenance` (`enabled`): maintenance mode on or off.
pub async fn switch_maintenance(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let enabled = form.get("enabled") == Some("true");
    let mut tx = state.store.begin_write(&who.actor).await?;
    maintenance::set(&mut tx, Maintenance { enabled }).await?;
    state.commit(tx).await?;
    let said = if enabled {
        "Maintenance mode is on: changes are paused."
    } else {
        "Maintenance mode is off."
    };
    Ok(Done::to(who.link("/admin/settings"), said).into_response())
}

/// `POST /admin/settings/origins`: the allowed origins, one per line (blank lines ignored).
pub async fn save_origins(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InSettings>,
) -> Result<Response, UiError> {
    let text = form.text("origins");
    let origins: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect();
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        ui_config::set_frontend_api_origins(&mut tx, origins).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/admin/settings"),
            "The allowed origins were saved.",
        ))
    }
    .await;
    written(done, async |error| {
        let draft = OriginsDraft {
            text: text.clone(),
            error: error.message.clone(),
        };
        settings_page(&state, &who, Some(&draft), StatusCode::BAD_REQUEST).await
    })
    .await
}
