//! SAML 2.0 sign-in, the protocol side: the AuthnRequest (HTTP-Redirect binding to the identity provider's
//! single sign-on URL) and the checks of the response it posts back (HTTP-POST binding) by `samael`: the XML
//! signature verified by xmlsec1 against the configured certificate, keeping only what it signed (no
//! signature wrapping), SHA-1 signatures refused; the issuer (`entityId`), the audience (this instance's
//! entity ID), the destination and recipient (this instance's assertion consumer service URL), the
//! InResponseTo (a request this process issued, used once) and the validity times.
//!
//! The response arrives as a cross-site POST, which carries none of the browser's `SameSite=Lax` cookies.
//! So the callback only verifies and keeps the identity under the sign-in's state (its RelayState), then
//! sends the browser on with a GET, which carries them: the sign-in ends only in the browser whose state
//! cookie names that state (no login CSRF, as for OpenID Connect). Sign-ins in flight are kept in the
//! database (`domain::sso_flows`, so any control plane may receive the response), used once and forgotten
//! after ten minutes.
//!
//! Who the verified identity is in Vexil is `domain::sso_sign_in`'s business. The assertion's NameID and
//! SessionIndex are kept with the session it opens, for single logout (`saml_logout`).

use crate::domain::saml_settings::{certificate_body, SamlSettings};
use crate::domain::single_sign_out::SamlSubject;
use crate::domain::sso_flows::{self, Step};
use crate::domain::sso_sign_in::Identity;
use crate::store::Store;
use samael::crypto::AllowedSignatureAlgorithm;
use samael::key_info::{KeyInfo, X509Data};
use samael::metadata::{
    Endpoint, EntityDescriptor, IdpSsoDescriptor, IndexedEndpoint, KeyDescriptor, SpSsoDescriptor,
};
use samael::schema::Assertion;
use samael::service_provider::ServiceProvider;
use samael::traits::ToXml;
use serde::{Deserialize, Serialize};
use vexil_shared::{ApiError, ErrorKind};
const HTTP_REDIRECT: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const HTTP_POST: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
/// The signature algorithms an identity provider's signature may use (no SHA-1).
pub(crate) const ALLOWED_SIGNATURES: [AllowedSignatureAlgorithm; 6] = [
    AllowedSignatureAlgorithm::RsaSha256,
    AllowedSignatureAlgorithm::RsaSha384,
    AllowedSignatureAlgorithm::RsaSha512,
    AllowedSignatureAlgorithm::EcdsaSha256,
    AllowedSignatureAlgorithm::EcdsaSha384,
    AllowedSignatureAlgorithm::EcdsaSha512,
];
const EMAIL_FORMAT: &str = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
/// Attributes that carry the e-mail address when the NameID is not one (Okta, Entra ID, ADFS, Keycloak).
const EMAIL_ATTRIBUTES: [&str; 4] = [
    "email",
    "mail",
    "emailAddress",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
];
const GIVEN_NAME_ATTRIBUTES: [&str; 3] = [
    "firstName",
    "givenName",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
];
const SURNAME_ATTRIBUTES: [&str; 3] = [
    "lastName",
    "sn",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
];
const DISPLAY_NAME_ATTRIBUTES: [&str; 2] = [
    "displayName",
    "http://schemas.microsoft.com/identity/claims/displayname",
];

/// This instance as a SAML service provider: what to register at the identity provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceProviderUrls {
    /// Vexil's entity ID (the audience of the assertions): the instance's address.
    pub entity_id: String,
    /// The assertion consumer service URL: `<address>/auth/saml/callback`.
    pub acs_url: String,
    /// The single logout service URL, where the identity provider answers a LogoutRequest:
    /// `<address>/auth/saml/logout/done`.
    pub logout_url: String,
}

impl ServiceProviderUrls {
    /// The URLs of the instance at `origin` (scheme, host, port) and `base` ("" or "/x").
    pub fn at(origin: &str, base: &str) -> ServiceProviderUrls {
        ServiceProviderUrls {
            entity_id: format!("{origin}{base}"),
            acs_url: format!("{origin}{base}/auth/saml/callback"),
            logout_url: format!("{origin}{base}/auth/saml/logout/done"),
        }
    }
}

/// A sign-in sent to the identity provider, as kept until its response.
#[derive(Serialize, Deserialize)]
struct Pending {
    request_id: String,
    next: String,
}

/// A sign-in started: where to send the browser, and the state to set in its cookie.
pub struct Started {
    pub redirect_url: String,
    pub state: String,
}

/// A sign-in verified: who the provider vouched for, the page to go to, and the assertion's subject (kept
/// with the session for single logout).
#[derive(Serialize, Deserialize)]
pub struct Finished {
    pub identity: Identity,
    pub next: String,
    #[serde(default)]
    pub subject: Option<SamlSubject>,
}

fn refused(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::AuthenticationRequired, message)
}

fn not_configured() -> ApiError {
    ApiError::not_found("SAML 2.0 sign-in is not configured on this instance")
}

/// 128 random bits as hex, or an error (never a predictable value) when the system has no randomness.
pub(crate) fn random_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|_| ApiError::new(ErrorKind::Unavailable, "No randomness is available"))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// The identity provider as samael's metadata, from the settings.
fn identity_provider(settings: &SamlSettings) -> Result<EntityDescriptor, ApiError> {
    let (Some(entity_id), Some(sign_on_url), Some(certificate)) = (
        settings.entity_id.clone(),
        settings.sign_on_url.clone(),
        settings.certificate.as_deref().and_then(certificate_body),
    ) else {
        return Err(not_configured());
    };
    let descriptor = IdpSsoDescriptor {
        id: None,
        valid_until: None,
        cache_duration: None,
        protocol_support_enumeration: Some("urn:oasis:names:tc:SAML:2.0:protocol".to_owned()),
        error_url: None,
        signature: None,
        key_descriptors: vec![KeyDescriptor {
            key_use: Some("signing".to_owned()),
            key_info: KeyInfo {
                id: None,
                x509_data: Some(X509Data {
                    certificates: vec![certificate],
                }),
            },
            encryption_methods: None,
        }],
        organization: None,
        contact_people: Vec::new(),
        artifact_resolution_service: Vec::new(),
        single_logout_services: Vec::new(),
        manage_name_id_services: Vec::new(),
        name_id_formats: Vec::new(),
        want_authn_requests_signed: None,
        single_sign_on_services: vec![Endpoint {
            binding: HTTP_REDIRECT.to_owned(),
            location: sign_on_url,
            response_location: None,
        }],
        name_id_mapping_services: Vec::new(),
        assertion_id_request_services: Vec::new(),
        attribute_profiles: Vec::new(),
        attributes: Vec::new(),
    };
    Ok(EntityDescriptor {
        entity_id: Some(entity_id),
        idp_sso_descriptors: Some(vec![descriptor]),
        ..EntityDescriptor::default()
    })
}

/// Vexil as samael's service provider for `settings`' identity provider.
fn service_provider(
    settings: &SamlSettings,
    urls: &ServiceProviderUrls,
) -> Result<ServiceProvider, ApiError> {
    Ok(ServiceProvider {
        entity_id: Some(urls.entity_id.clone()),
        acs_url: Some(urls.acs_url.clone()),
        metadata_url: None,
        slo_url: None,
        idp_metadata: identity_provider(settings)?,
        authn_name_id_format: Some(EMAIL_FORMAT.to_owned()),
        allowed_signature_algorithms: Some(ALLOWED_SIGNATURES.to_vec()),
        ..ServiceProvider::default()
    })
}

/// The values of the attribute named (or friendly-named) `name`.
fn attribute<'a>(assertion: &'a Assertion, name: &str) -> Vec<&'a str> {
    assertion
        .attribute_statements
        .iter()
        .flatten()
        .flat_map(|statement| &statement.attributes)
        .filter(|attribute| {
            attribute.name.as_deref() == Some(name)
                || attribute.friendly_name.as_deref() == Some(name)
        })
        .flat_map(|attribute| &attribute.values)
        .filter_map(|value| value.value.as_deref())
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .collect()
}

fn first<'a>(assertion: &'a Assertion, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|name| attribute(assertion, name).into_iter().next())
}

/// Who a verified assertion names: the e-mail address (the NameID, else an e-mail attribute), the name
/// (display name, else given name and surname) and, with group syncing, the groups attribute.
pub fn identity_of(assertion: &Assertion, settings: &SamlSettings) -> Result<Identity, ApiError> {
    let name_id = assertion
        .subject
        .as_ref()
        .and_then(|subject| subject.name_id.as_ref())
        .map(|name_id| name_id.value.trim())
        .filter(|value| value.contains('@'));
    let email = name_id
        .or_else(|| first(assertion, &EMAIL_ATTRIBUTES))
        .filter(|email| email.contains('@'))
        .ok_or_else(|| {
            refused(
                "The SAML assertion carries no e-mail address: set the NameID format to e-mail address at \
                 the identity provider (or send an email attribute)",
            )
        })?;
    let name = first(assertion, &DISPLAY_NAME_ATTRIBUTES)
        .map(str::to_owned)
        .or_else(|| {
            let parts: Vec<&str> = [
                first(assertion, &GIVEN_NAME_ATTRIBUTES),
                first(assertion, &SURNAME_ATTRIBUTES),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        });
    let groups = settings.enable_group_syncing.then(|| {
        attribute(assertion, settings.group_attribute())
            .into_iter()
            .map(str::to_owned)
            .collect()
    });
    Ok(Identity {
        email: email.to_owned(),
        name,
        groups,
    })
}

/// The subject a LogoutRequest names for the session `assertion` opens: its NameID (value and format) and
/// the SessionIndex of its AuthnStatement.
pub fn subject_of(assertion: &Assertion) -> Option<SamlSubject> {
    let name_id = assertion.subject.as_ref()?.name_id.as_ref()?;
    let session_index = assertion
        .authn_statements
        .iter()
        .flatten()
        .find_map(|statement| statement.session_index.clone());
    Some(SamlSubject {
        name_id: name_id.value.trim().to_owned(),
        name_id_format: name_id.format.clone(),
        session_index,
    })
}

/// Starts a sign-in: an AuthnRequest with a new id, to the provider's single sign-on URL with the new
/// state as RelayState. `next` is a local path (checked by the caller).
pub async fn start(
    store: &Store,
    settings: &SamlSettings,
    urls: &ServiceProviderUrls,
    next: String,
) -> Result<Started, ApiError> {
    if !settings.usable() {
        return Err(not_configured());
    }
    let provider = service_provider(settings, urls)?;
    let sign_on_url = settings.sign_on_url.as_deref().unwrap_or_default();
    let mut request = provider
        .make_authentication_request(sign_on_url)
        .map_err(|error| ApiError::validation(format!("No SAML request could be made: {error}")))?;
    // An XML ID must not start with a digit.
    request.id = format!("_{}", random_id()?);
    let state = random_id()?;
    let url = request
        .redirect(&state)
        .map_err(|error| ApiError::validation(format!("No SAML request could be made: {error}")))?
        .ok_or_else(not_configured)?;
    let pending = Pending {
        request_id: request.id,
        next,
    };
    sso_flows::keep(store, Step::SamlStarted, &state, &pending).await?;
    Ok(Started {
        redirect_url: url.to_string(),
        state,
    })
}

/// Verifies the response posted to the callback for the sign-in `state` (its RelayState), which is used
/// up either way, and keeps the identity for [`finish`].
pub async fn verify(
    store: &Store,
    settings: &SamlSettings,
    urls: &ServiceProviderUrls,
    state: &str,
    response: &str,
) -> Result<(), ApiError> {
    let flow: Option<Pending> = sso_flows::take(store, Step::SamlStarted, state).await?;
    let Some(flow) = flow else {
        return Err(refused(
                "This sign-in is unknown, was already used or has expired: start again from the sign-in page",
            ));
    };
    if !settings.usable() {
        return Err(not_configured());
    }
    let provider = service_provider(settings, urls)?;
    // Line breaks are allowed in the base64 of an HTML form field.
    let response: String = response.split_whitespace().collect();
    let assertion = provider
        .parse_base64_response(&response, Some(&[flow.request_id.as_str()]))
        .map_err(|error| {
            tracing::warn!(%error, "SAML: a response failed verification");
            refused(format!(
                "The SAML response did not pass verification: {error}"
            ))
        })?;
    let finished = Finished {
        identity: identity_of(&assertion, settings)?,
        next: flow.next,
        subject: subject_of(&assertion),
    };
    sso_flows::keep(store, Step::SamlVerified, state, &finished).await
}

/// The verified sign-in `state`, taken once, in the browser whose state cookie is `browser_state`.
pub async fn finish(
    store: &Store,
    state: &str,
    browser_state: Option<&str>,
) -> Result<Finished, ApiError> {
    let verified: Option<Finished> = sso_flows::take(store, Step::SamlVerified, state).await?;
    let Some(finished) = verified else {
        return Err(refused(
                "This sign-in is unknown, was already used or has expired: start again from the sign-in page",
            ));
    };
    if browser_state != Some(state) {
        return Err(refused(
            "This sign-in was not started in this browser: start again from the sign-in page",
        ));
    }
    Ok(finished)
}

/// This instance's service provider metadata (entity ID, assertion consumer service, single logout service,
/// signed assertions wanted, the e-mail NameID format), for identity providers that import it.
pub fn metadata(urls: &ServiceProviderUrls) -> Result<String, ApiError> {
    let descriptor = EntityDescriptor {
        entity_id: Some(urls.entity_id.clone()),
        sp_sso_descriptors: Some(vec![SpSsoDescriptor {
            protocol_support_enumeration: Some("urn:oasis:names:tc:SAML:2.0:protocol".to_owned()),
            authn_requests_signed: Some(false),
            want_assertions_signed: Some(true),
            name_id_formats: Some(vec![EMAIL_FORMAT.to_owned()]),
            single_logout_services: Some(
                [HTTP_REDIRECT, HTTP_POST]
                    .into_iter()
                    .map(|binding| Endpoint {
                        binding: binding.to_owned(),
                        location: urls.logout_url.clone(),
                        response_location: None,
                    })
                    .collect(),
            ),
            assertion_consumer_services: vec![IndexedEndpoint {
                binding: HTTP_POST.to_owned(),
                location: urls.acs_url.clone(),
                index: 0,
                is_default: Some(true),
                ..IndexedEndpoint::default()
            }],
            ..SpSsoDescriptor::default()
        }]),
        ..EntityDescriptor::default()
    };
    descriptor.to_string().map_err(|error| {
        ApiError::new(
            ErrorKind::Unavailable,
            format!("No SAML metadata could be made: {error}"),
        )
    })
}
