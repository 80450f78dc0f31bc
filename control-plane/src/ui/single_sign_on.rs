//! `/admin/auth`, "Single sign-on" (Admins only, as `/api/admin/auth/*`): the OpenID Connect settings with
//! the redirect URI to give the provider, the SAML 2.0 settings (`single_sign_on_saml`) and the password
//! sign-in switch with the rule that keeps an instance reachable. With the `OIDC_*` (or `SAML_*`)
//! variables set those settings are shown read-only, saying why.

use super::controls::field;
use super::oidc_sign_in::callback_uri;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use super::single_sign_on_saml;
use crate::domain::access::Area;
use crate::domain::saml_settings::{self, SamlSettings};
use crate::domain::sso_settings::{self, OidcSettings, PasswordAuth, SIGNING_ALGORITHMS};
use crate::http::admin::ui_config::request_origin;
use crate::http::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's page and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/auth", get(page))
        .route("/admin/auth/oidc", post(save_oidc))
        .route("/admin/auth/saml", post(save_saml))
        .route("/admin/auth/password", post(save_password))
}

/// A form as typed, with the refusal, after a failed save.
enum Draft {
    None,
    Oidc(OidcSettings, ApiError),
    Saml(crate::domain::saml_settings::SamlSettings, ApiError),
}

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

async fn draw(
    state: &AppState,
    who: &SignedIn,
    headers: &HeaderMap,
    draft: Draft,
    status: StatusCode,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let shell = who.shell();
    let from_env = state.sign_in_config.oidc_env.is_some();
    let current = state.oidc_settings().await?.shown();
    let password_on = state.password_sign_in().await?;
    let stored_password = {
        let mut conn = state.store.read().await?;
        sso_settings::password_setting(&mut conn).await?
    };
    let (settings, error) = match &draft {
        Draft::Oidc(settings, error) => (settings.clone(), Some(error)),
        _ => (current.clone(), None),
    };
    let saml_draft = match &draft {
        Draft::Saml(settings, error) => Some((settings, error)),
        _ => None,
    };
    let saml = single_sign_on_saml::section(state, who, headers, saml_draft).await?;
    let error_at = |name: &str| {
        error
            .filter(|error| error.field.as_deref() == Some(name))
            .map(|error| error.message.as_str())
    };
    let general_error = error
        .filter(|error| error.field.is_none())
        .map(|error| error.message.as_str());
    let redirect_uri = callback_uri(headers, &state.base_path);
    let sign_in_page = format!("{}{}/login", request_origin(headers), state.base_path);
    let role = settings.default_role().name();
    let algorithm = settings.signing_algorithm().to_owned();
    let markup = shell.render(
        "Single sign-on",
        html! {
            div.page-head { div {
                h1 { "Single sign-on" }
                p.subtitle { "Sign in through your company's identity provider (OpenID Connect or SAML 2.0), and whether passwords still work." }
            } }
            section.card aria-labelledby="oidc-title" {
                h2 #oidc-title { "OpenID Connect" }
                p { "Redirect URI to register at the provider: " code #redirect-uri { (redirect_uri) } }
                @if from_env {
                    p.notice role="note" {
                        "These settings come from the OIDC_* environment variables (OIDC_ENABLED is set), which win over what is stored here: change them there and restart the control plane."
                    }
                    dl.meta {
                        dt { "Enabled" } dd { (if current.enabled { "Yes" } else { "No" }) }
                        dt { "Discover URL" } dd { code { (text(&current.discover_url)) } }
                        dt { "Client ID" } dd { code { (text(&current.client_id)) } }
                        dt { "Client secret" } dd { (if current.secret_set { "Set" } else { "Not set" }) }
                        dt { "Create users at first sign-in" } dd { (if current.auto_create { "Yes" } else { "No" }) }
                        dt { "Default root role" } dd { (current.default_role().name()) }
                        dt { "Group syncing" } dd { (if current.enable_group_syncing { "On" } else { "Off" }) }
                        dt { "Single sign-out" } dd { (if current.enable_single_sign_out { "On" } else { "Off" }) }
                    }
                } @else {
                    @if let Some(message) = general_error {
                        p.error-box role="alert" { (message) }
                    }
                    form.form-narrow method="post" action=(who.link("/admin/auth/oidc")) novalidate {
                        input type="hidden" name="csrf" value=(who.csrf);
                        div.field {
                            label.check { input #oidc-enabled type="checkbox" name="enabled" value="true" checked[settings.enabled]; "Enable OpenID Connect sign-in" }
                        }
                        (field("discover-url", "Discover URL", error_at("discoverUrl"), Some("The provider's …/.well-known/openid-configuration URL, or its issuer URL"), html! {
                            input #discover-url type="url" name="discoverUrl" value=(text(&settings.discover_url)) aria-describedby="discover-url-hint discover-url-error";
                        }))
                        (field("client-id", "Client ID", error_at("clientId"), None, html! {
                            input #client-id type="text" name="clientId" value=(text(&settings.client_id)) aria-describedby="client-id-error";
                        }))
                        (field("client-secret", "Client secret", error_at("secret"), Some(if current.secret_set { "A secret is stored (never shown). Leave empty to keep it." } else { "No secret is stored yet." }), html! {
                            input #client-secret type="password" name="secret" autocomplete="off" aria-describedby="client-secret-hint client-secret-error";
                        }))
                        div.field {
                            label.check { input #auto-create type="checkbox" name="autoCreate" value="true" checked[settings.auto_create]; "Create users at their first sign-in" }
                        }
                        (field("email-domains", "E-mail domains", error_at("emailDomains"), Some("Comma-separated; only users of these domains are created. Empty: any."), html! {
                            input #email-domains type="text" name="emailDomains" value=(text(&settings.email_domains)) aria-describedby="email-domains-hint email-domains-error";
                        }))
                        (field("default-root-role", "Root role of created users", error_at("defaultRootRole"), None, html! {
                            select #default-root-role name="defaultRootRole" aria-describedby="default-root-role-error" {
                                @for name in ["Viewer", "Editor", "Admin"] {
                                    option value=(name) selected[name == role] { (name) }
                                }
                            }
                        }))
                        div.field {
                            label.check { input #group-syncing type="checkbox" name="enableGroupSyncing" value="true" checked[settings.enable_group_syncing]; "Sync group membership from the provider's groups claim" }
                        }
                        (field("group-json-path", "Groups claim", error_at("groupJsonPath"), Some("Where the groups are in the ID token: a claim name or a dotted path. Default: groups"), html! {
                            input #group-json-path type="text" name="groupJsonPath" value=(text(&settings.group_json_path)) aria-describedby="group-json-path-hint group-json-path-error";
                        }))
                        div.field {
                            label.check { input #groups-scope type="checkbox" name="addGroupsScope" value="true" checked[settings.add_groups_scope]; "Ask for the groups scope" }
                        }
                        div.field {
                            label.check { input #single-sign-out type="checkbox" name="enableSingleSignOut" value="true" checked[settings.enable_single_sign_out] aria-describedby="single-sign-out-hint"; "Sign out at the provider too (single sign-out)" }
                            span.hint #single-sign-out-hint { "When the provider offers it (end_session_endpoint): register " code { (sign_in_page) } " as a post-logout redirect URI there." }
                        }
                        (field("acr-values", "ACR values", error_at("acrValues"), Some("Optional, space-separated"), html! {
                            input #acr-values type="text" name="acrValues" value=(text(&settings.acr_values)) aria-describedby="acr-values-hint acr-values-error";
                        }))
                        (field("signing-algorithm", "ID token signing algorithm", error_at("idTokenSigningAlgorithm"), None, html! {
                            select #signing-algorithm name="idTokenSigningAlgorithm" aria-describedby="signing-algorithm-error" {
                                @for name in SIGNING_ALGORITHMS {
                                    option value=(name) selected[name == algorithm] { (name) }
                                }
                            }
                        }))
                        div.actions { button.primary type="submit" { "Save OpenID Connect settings" } }
                    }
                }
            }
            (saml)
            section.card aria-labelledby="password-title" {
                h2 #password-title { "Password sign-in" }
                p #password-state { "Password sign-in is " strong { (if password_on { "on" } else { "off" }) } "." }
                p.muted { "It can be switched off only while a single sign-on (OpenID Connect or SAML 2.0) is enabled: an instance without single sign-on keeps its passwords, so nobody is locked out. The operator's admin-token sign-in on the sign-in page stays either way." }
                form.form-narrow method="post" action=(who.link("/admin/auth/password")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.field {
                        label.check { input #password-disabled type="checkbox" name="disabled" value="true" checked[stored_password.disabled]; "Switch off password sign-in" }
                    }
                    div.actions { button.primary type="submit" { "Save password sign-in" } }
                }
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// `GET /admin/auth`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    who: SignedIn,
) -> Result<Response, UiError> {
    draw(&state, &who, &headers, Draft::None, StatusCode::OK).await
}

fn optional(form: &FormFields, name: &str) -> Option<String> {
    Some(form.text(name)).filter(|text| !text.trim().is_empty())
}

/// `POST /admin/auth/oidc`.
pub async fn save_oidc(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = OidcSettings {
        enabled: form.checked("enabled"),
        discover_url: optional(&form, "discoverUrl"),
        client_id: optional(&form, "clientId"),
        secret: optional(&form, "secret"),
        auto_create: form.checked("autoCreate"),
        email_domains: optional(&form, "emailDomains"),
        default_root_role: optional(&form, "defaultRootRole"),
        enable_group_syncing: form.checked("enableGroupSyncing"),
        group_json_path: optional(&form, "groupJsonPath"),
        add_groups_scope: form.checked("addGroupsScope"),
        enable_single_sign_out: form.checked("enableSingleSignOut"),
        acr_values: optional(&form, "acrValues"),
        id_token_signing_algorithm: optional(&form, "idTokenSigningAlgorithm"),
        enable_pkce: true,
        ..OidcSettings::default()
    };
    let typed = OidcSettings {
        secret: None,
        ..input.clone()
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        sso_settings::set_oidc(&mut tx, &state.sign_in_config, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/admin/auth"),
            "The OpenID Connect settings were saved.",
        ))
    }
    .await;
    written(done, async |error| {
        let draft = Draft::Oidc(typed.clone(), error.clone());
        draw(&state, &who, &headers, draft, StatusCode::BAD_REQUEST).await
    })
    .await
}

/// `POST /admin/auth/saml`.
pub async fn save_saml(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = SamlSettings {
        enabled: form.checked("enabled"),
        entity_id: optional(&form, "entityId"),
        sign_on_url: optional(&form, "signOnUrl"),
        certificate: optional(&form, "certificate"),
        sign_out_url: optional(&form, "signOutUrl"),
        sp_certificate: optional(&form, "spCertificate"),
        auto_create: form.checked("autoCreate"),
        email_domains: optional(&form, "emailDomains"),
        default_root_role: optional(&form, "defaultRootRole"),
        enable_group_syncing: form.checked("enableGroupSyncing"),
        group_json_path: optional(&form, "groupJsonPath"),
        ..SamlSettings::default()
    };
    // The key typed is never drawn again, even on a refusal.
    let typed = SamlSettings {
        sp_certificate: None,
        ..input.clone()
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        saml_settings::set_saml(&mut tx, state.sign_in_config.saml_env.as_ref(), input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/admin/auth"),
            "The SAML 2.0 settings were saved.",
        ))
    }
    .await;
    written(done, async |error| {
        let draft = Draft::Saml(typed.clone(), error.clone());
        draw(&state, &who, &headers, draft, StatusCode::BAD_REQUEST).await
    })
    .await
}

/// `POST /admin/auth/password`.
pub async fn save_password(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = PasswordAuth {
        disabled: form.checked("disabled"),
    };
    let mut tx = state.store.begin_write(&who.actor).await?;
    sso_settings::set_password(&mut tx, input).await?;
    state.commit(tx).await?;
    let on = state.password_sign_in().await?;
    let notice = match (input.disabled, on) {
        (true, true) => "Saved; password sign-in stays on until a single sign-on is enabled.",
        (true, false) => "Password sign-in is off.",
        _ => "Password sign-in is on.",
    };
    Ok(Done::to(who.link("/admin/auth"), notice).into_response())
}
