//! The "SAML 2.0" part of the Single sign-on page (`single_sign_on`): what to register at the identity
//! provider (Vexil's entity ID, its assertion consumer service URL, its metadata), the provider's entity ID,
//! single sign-on URL and signing certificate, its single logout URL and the key that signs sign-out requests
//! (never shown), who is created with which role, group syncing. With the
//! `SAML_*` variables set the settings are shown read-only, saying why.

use super::controls::field;
use super::page::UiError;
use super::saml_sign_in::service_provider_urls;
use super::session::SignedIn;
use crate::domain::saml_settings::SamlSettings;
use crate::http::state::AppState;
use axum::http::HeaderMap;
use maud::{html, Markup};
use vexil_shared::ApiError;

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// The section: the stored (or environment's) settings, or the form as typed after a refusal.
pub(super) async fn section(
    state: &AppState,
    who: &SignedIn,
    headers: &HeaderMap,
    draft: Option<(&SamlSettings, &ApiError)>,
) -> Result<Markup, UiError> {
    let from_env = state.sign_in_config.saml_env.is_some();
    let current = state.saml_settings().await?.shown();
    let (settings, error) = match draft {
        Some((settings, error)) => (settings.clone(), Some(error)),
        None => (current.clone(), None),
    };
    let error_at = |name: &str| {
        error
            .filter(|error| error.field.as_deref() == Some(name))
            .map(|error| error.message.as_str())
    };
    let general_error = error
        .filter(|error| error.field.is_none())
        .map(|error| error.message.as_str());
    let urls = service_provider_urls(headers, &state.base_path);
    let role = settings.provisioning().default_role.name();
    Ok(html! {
        section.card aria-labelledby="saml-title" {
            h2 #saml-title { "SAML 2.0" }
            p { "To register at the identity provider:" }
            dl.meta.sso-facts {
                dt { "Entity ID (audience)" } dd { code #saml-entity-id { (urls.entity_id) } }
                dt { "Assertion consumer service URL" } dd { code #saml-acs-url { (urls.acs_url) } }
                dt { "Single logout service URL" } dd { code #saml-logout-url { (urls.logout_url) } }
                dt { "Metadata" } dd { a href=(who.link("/auth/saml/metadata")) { "Service provider metadata (XML)" } }
            }
            p.muted { "Send the e-mail address as the NameID (format: e-mail address); firstName, lastName and a groups attribute are read when present." }
            @if from_env {
                p.notice role="note" {
                    "These settings come from the SAML_* environment variables (SAML_ENABLED is set), which win over what is stored here: change them there and restart the control plane."
                }
                dl.meta {
                    dt { "Enabled" } dd { (if current.enabled { "Yes" } else { "No" }) }
                    dt { "Identity provider entity ID" } dd { code { (text(&current.entity_id)) } }
                    dt { "Single sign-on URL" } dd { code { (text(&current.sign_on_url)) } }
                    dt { "Signing certificate" } dd { (if current.certificate.is_some() { "Set" } else { "Not set" }) }
                    dt { "Single logout URL" } dd { code { (text(&current.sign_out_url)) } }
                    dt { "Sign-out signing key" } dd { (if current.sp_certificate_set { "Set" } else { "Not set" }) }
                    dt { "Create users at first sign-in" } dd { (if current.auto_create { "Yes" } else { "No" }) }
                    dt { "Default root role" } dd { (current.provisioning().default_role.name()) }
                    dt { "Group syncing" } dd { (if current.enable_group_syncing { "On" } else { "Off" }) }
                }
            } @else {
                @if let Some(message) = general_error {
                    p.error-box role="alert" { (message) }
                }
                form.form-narrow method="post" action=(who.link("/admin/auth/saml")) novalidate {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.field {
                        label.check { input #saml-enabled type="checkbox" name="enabled" value="true" checked[settings.enabled]; "Enable SAML 2.0 sign-in" }
                    }
                    (field("saml-idp-entity-id", "Identity provider entity ID", error_at("entityId"), Some("The issuer its responses name, from its metadata (entityID)"), html! {
                        input #saml-idp-entity-id type="text" name="entityId" value=(text(&settings.entity_id)) aria-describedby="saml-idp-entity-id-hint saml-idp-entity-id-error";
                    }))
                    (field("saml-sign-on-url", "Single sign-on URL", error_at("signOnUrl"), Some("Where Vexil sends people to sign in (HTTP-Redirect binding)"), html! {
                        input #saml-sign-on-url type="url" name="signOnUrl" value=(text(&settings.sign_on_url)) aria-describedby="saml-sign-on-url-hint saml-sign-on-url-error";
                    }))
                    (field("saml-certificate", "Signing certificate", error_at("certificate"), Some("The provider's X.509 certificate: PEM or its base64 body"), html! {
                        textarea #saml-certificate name="certificate" rows="6" spellcheck="false" aria-describedby="saml-certificate-hint saml-certificate-error" { (text(&settings.certificate)) }
                    }))
                    (field("saml-sign-out-url", "Single logout URL", error_at("signOutUrl"), Some("Optional: where signing out of Vexil signs out at the provider too (HTTP-Redirect binding); it answers at the single logout service URL above"), html! {
                        input #saml-sign-out-url type="url" name="signOutUrl" value=(text(&settings.sign_out_url)) aria-describedby="saml-sign-out-url-hint saml-sign-out-url-error";
                    }))
                    (field("saml-sp-key", "Sign-out signing key", error_at("spCertificate"), Some(if current.sp_certificate_set { "A key is stored (never shown). Leave empty to keep it." } else { "Optional: the RSA private key (PEM) that signs sign-out requests, for providers that want them signed." }), html! {
                        textarea #saml-sp-key name="spCertificate" rows="4" spellcheck="false" autocomplete="off" aria-describedby="saml-sp-key-hint saml-sp-key-error" {}
                    }))
                    div.field {
                        label.check { input #saml-auto-create type="checkbox" name="autoCreate" value="true" checked[settings.auto_create]; "Create users at their first sign-in" }
                    }
                    (field("saml-email-domains", "E-mail domains", error_at("emailDomains"), Some("Comma-separated; only users of these domains are created. Empty: any."), html! {
                        input #saml-email-domains type="text" name="emailDomains" value=(text(&settings.email_domains)) aria-describedby="saml-email-domains-hint saml-email-domains-error";
                    }))
                    (field("saml-default-root-role", "Root role of created users", error_at("defaultRootRole"), None, html! {
                        select #saml-default-root-role name="defaultRootRole" aria-describedby="saml-default-root-role-error" {
                            @for name in ["Viewer", "Editor", "Admin"] {
                                option value=(name) selected[name == role] { (name) }
                            }
                        }
                    }))
                    div.field {
                        label.check { input #saml-group-syncing type="checkbox" name="enableGroupSyncing" value="true" checked[settings.enable_group_syncing]; "Sync group membership from the assertion's groups attribute" }
                    }
                    (field("saml-group-attribute", "Groups attribute", error_at("groupJsonPath"), Some("The attribute that lists the groups. Default: groups"), html! {
                        input #saml-group-attribute type="text" name="groupJsonPath" value=(text(&settings.group_json_path)) aria-describedby="saml-group-attribute-hint saml-group-attribute-error";
                    }))
                    div.actions { button.primary type="submit" { "Save SAML settings" } }
                }
            }
        }
    })
}
