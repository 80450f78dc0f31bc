//! SAML 2.0 sign-in settings (`/api/admin/auth/saml/settings`, Unleash's samlSettingsSchema), stored as an
//! instance-wide setting or given by Unleash's `SAML_*` environment variables, which win over the database
//! and make the settings read-only through the API.
//!
//! `entityId` is the identity provider's entity ID (the issuer its responses must name), `signOnUrl` its
//! single sign-on URL (HTTP-Redirect binding) and `certificate` the X.509 certificate its signatures must
//! verify with. Vexil's own entity ID and assertion consumer service URL come from the instance's address
//! (`crate::saml`). `signOutUrl` is the provider's single logout URL (signing out of Vexil signs out there
//! too: `crate::saml_logout`), `spCertificate` the private key (RSA, PEM) that signs those LogoutRequests:
//! taken, never answered.

use super::events::EventType;
use super::roles::{RoleReference, RootRole};
use super::sso_sign_in::Provisioning;
use crate::store::settings as settings_store;
use crate::store::WriteTx;
use base64::Engine;
use openssl::pkey::{PKey, Private};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// SAML 2.0 settings (samlSettingsSchema).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SamlSettings {
    pub enabled: bool,
    /// The identity provider's entity ID: the issuer its responses must name.
    pub entity_id: Option<String>,
    /// The identity provider's single sign-on URL (HTTP-Redirect binding).
    pub sign_on_url: Option<String>,
    /// The identity provider's signing certificate: PEM, or its base64 body as providers show it.
    pub certificate: Option<String>,
    /// The identity provider's single logout URL: signing out of Vexil goes there too.
    pub sign_out_url: Option<String>,
    /// Write only: the private key (PEM) that signs sign-out requests, for providers that want them signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sp_certificate: Option<String>,
    /// Create a user at their first sign-in (else only existing users, matched by e-mail, sign in).
    pub auto_create: bool,
    /// Comma-separated e-mail domains a user must have to be created (empty: any).
    pub email_domains: Option<String>,
    /// The root role of a created user: Viewer, Editor or Admin (default Editor).
    pub default_root_role: Option<String>,
    /// Takes precedence over `defaultRootRole`.
    pub default_root_role_id: Option<i64>,
    /// Set the user's membership of every group whose `mappingsSSO` names one of the assertion's groups.
    pub enable_group_syncing: bool,
    /// The assertion attribute that lists the groups (default `groups`).
    pub group_json_path: Option<String>,
    /// Read only: whether a sign-out signing key is stored.
    #[serde(skip_deserializing)]
    pub sp_certificate_set: bool,
}

impl SamlSettings {
    /// Enabled with what a sign-in needs.
    pub fn usable(&self) -> bool {
        self.enabled
            && self.entity_id.is_some()
            && self.sign_on_url.is_some()
            && self.certificate.is_some()
    }

    /// Who may be created, with which role, and whether groups are synced.
    pub fn provisioning(&self) -> Provisioning {
        Provisioning::new(
            self.auto_create,
            self.email_domains.as_deref(),
            self.default_root_role_id,
            self.default_root_role.as_deref(),
            self.enable_group_syncing,
        )
    }

    /// The attribute that lists the groups.
    pub fn group_attribute(&self) -> &str {
        self.group_json_path
            .as_deref()
            .filter(|path| !path.trim().is_empty())
            .unwrap_or("groups")
    }

    /// The settings as answered and recorded in events: no private key.
    pub fn shown(&self) -> SamlSettings {
        SamlSettings {
            sp_certificate: None,
            sp_certificate_set: self.sp_certificate.is_some(),
            ..self.clone()
        }
    }
}

/// The base64 body (DER) of a certificate given as PEM or as bare base64, whitespace removed; `None` when it
/// is neither.
pub fn certificate_body(text: &str) -> Option<String> {
    let body: String = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat()
        .split_whitespace()
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(&body)
        .ok()?;
    // An X.509 certificate is a DER SEQUENCE.
    (der.len() > 64 && der[0] == 0x30).then_some(body)
}

/// The private key that signs LogoutRequests (`spCertificate`): an RSA key as PEM (PKCS#8 or PKCS#1).
pub fn signing_key(pem: &str) -> Result<PKey<Private>, ApiError> {
    let refused = || {
        ApiError::invalid_field(
            "spCertificate",
            "spCertificate must be the private key that signs sign-out requests: an RSA key as PEM \
             (-----BEGIN PRIVATE KEY-----…)",
        )
    };
    let key = PKey::private_key_from_pem(pem.trim().as_bytes()).map_err(|_| refused())?;
    if key.rsa().is_err() {
        return Err(refused());
    }
    Ok(key)
}

fn clean(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

fn http_url(field: &str, value: &Option<String>, example: &str) -> Result<(), ApiError> {
    let Some(url) = value else { return Ok(()) };
    let parsed = url::Url::parse(url).ok().filter(|parsed| {
        matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some()
    });
    match parsed {
        Some(_) => Ok(()),
        None => Err(ApiError::invalid_field(
            field,
            format!("{field} must be an http(s) URL such as {example}"),
        )),
    }
}

/// Checks and normalises SAML settings from the API; a missing `spCertificate` keeps `stored`'s.
pub fn validate_saml(input: SamlSettings, stored: &SamlSettings) -> Result<SamlSettings, ApiError> {
    let entity_id = clean(input.entity_id);
    let sign_on_url = clean(input.sign_on_url);
    http_url(
        "signOnUrl",
        &sign_on_url,
        "https://login.example.com/app/vexil/sso/saml",
    )?;
    let sign_out_url = clean(input.sign_out_url);
    http_url(
        "signOutUrl",
        &sign_out_url,
        "https://login.example.com/app/vexil/slo/saml",
    )?;
    let certificate = clean(input.certificate);
    if let Some(text) = &certificate {
        if certificate_body(text).is_none() {
            return Err(ApiError::invalid_field(
                "certificate",
                "certificate must be the identity provider's X.509 signing certificate, as PEM \
                 (-----BEGIN CERTIFICATE-----…) or its base64 body",
            ));
        }
    }
    let given_key = clean(input.sp_certificate);
    if let Some(pem) = &given_key {
        signing_key(pem)?;
    }
    let sp_certificate = given_key.or_else(|| stored.sp_certificate.clone());
    if input.enabled {
        for (field, value, what) in [
            ("entityId", &entity_id, "the identity provider's entity ID"),
            (
                "signOnUrl",
                &sign_on_url,
                "the identity provider's single sign-on URL",
            ),
            (
                "certificate",
                &certificate,
                "the identity provider's signing certificate",
            ),
        ] {
            if value.is_none() {
                return Err(ApiError::invalid_field(
                    field,
                    format!("{field} ({what}) is required to enable SAML 2.0"),
                ));
            }
        }
    }
    let default_root_role = clean(input.default_root_role);
    if let Some(name) = &default_root_role {
        RootRole::from_reference("defaultRootRole", &RoleReference::Name(name.clone()))?;
    }
    if let Some(id) = input.default_root_role_id {
        RootRole::from_reference("defaultRootRoleId", &RoleReference::Id(id))?;
    }
    Ok(SamlSettings {
        enabled: input.enabled,
        entity_id,
        sign_on_url,
        certificate,
        sign_out_url,
        sp_certificate,
        default_root_role,
        email_domains: clean(input.email_domains),
        group_json_path: clean(input.group_json_path),
        sp_certificate_set: false,
        ..input
    })
}

/// The SAML settings in force: the environment's (`from_env`, the `SAML_*` variables), else the stored ones
/// (private key included).
pub async fn saml(
    conn: &mut AnyConnection,
    from_env: Option<&SamlSettings>,
) -> Result<SamlSettings, ApiError> {
    if let Some(settings) = from_env {
        return Ok(settings.clone());
    }
    Ok(settings_store::saml_settings(conn)
        .await?
        .unwrap_or_default())
}

/// Replaces the stored SAML settings; `setting-updated` (without the private key) on a change. Refused
/// while the environment configures SAML (`from_env`).
pub async fn set_saml(
    tx: &mut WriteTx,
    from_env: Option<&SamlSettings>,
    input: SamlSettings,
) -> Result<SamlSettings, ApiError> {
    if from_env.is_some() {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            "The SAML settings come from the SAML_* environment variables (SAML_ENABLED is set), which win \
             over the database: change them there and restart the control plane",
        ));
    }
    let stored = settings_store::saml_settings(tx.conn())
        .await?
        .unwrap_or_default();
    let settings = validate_saml(input, &stored)?;
    if settings == stored {
        return Ok(settings.shown());
    }
    settings_store::set_saml_settings(tx.conn(), &settings).await?;
    let event = |settings: &SamlSettings| serde_json::json!({ "saml": settings.shown() });
    tx.record(
        EventType::SettingUpdated.instance_wide(Some(event(&settings)), Some(event(&stored))),
    )
    .await?;
    Ok(settings.shown())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate (openssl req -x509, P-256), body only.
    const CERTIFICATE: &str = concat!(
        "MIIBfzCCASWgAwIBAgIUaFRhz3BRacjz4yJwy1igWiJAT4YwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKdmV4aWwtdGVzdDAe",
        "Fw0yNjExMjYwNjUzMDFaFw0zNjExMjMwNjUzMDFaMBUxEzARBgNVBAMMCnZleGlsLXRlc3QwWTATBgcqhkjOPQIBBggqhkjO",
        "PQMBBwNCAAR0w7KU4dVdu7+byZ370KbxtyIlsyV7AjPy2n8sP90I4Fe7KXwl0xeGxX0E8sV2a+Hb4oqRkOlKqfqTcG3QyxA4",
        "o1MwUTAdBgNVHQ4EFgQUXS8aVdKomyuzY2IeJo2NpZ4jilwwHwYDVR0jBBgwFoAUXS8aVdKomyuzY2IeJo2NpZ4jilwwDwYD",
        "VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEA35HeIG2VcT4fZqPmfsjSNrXBx6wo+lGkh14zVp9HxVwCIAi4XRUl",
        "DzDMtQ6uh91AGbOEwAtMnNAak+06ct2gSF3z",
    );

    #[test]
    fn certificates_as_pem_or_bare_base64() {
        let pem =
            format!("-----BEGIN CERTIFICATE-----\n{CERTIFICATE}\n-----END CERTIFICATE-----\n");
        assert_eq!(certificate_body(&pem).as_deref(), Some(CERTIFICATE));
        assert_eq!(certificate_body(CERTIFICATE).as_deref(), Some(CERTIFICATE));
        assert_eq!(certificate_body("not a certificate"), None);
        assert_eq!(certificate_body("aGVsbG8="), None);
    }

    #[test]
    fn enabling_needs_the_provider() {
        let input = SamlSettings {
            enabled: true,
            entity_id: Some(" https://idp.example.com/metadata ".to_owned()),
            sign_on_url: Some("https://idp.example.com/sso".to_owned()),
            ..SamlSettings::default()
        };
        let error = validate_saml(input.clone(), &SamlSettings::default()).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("certificate"));
        let valid = validate_saml(
            SamlSettings {
                certificate: Some(CERTIFICATE.to_owned()),
                ..input
            },
            &SamlSettings {
                sp_certificate: Some("key".to_owned()),
                ..SamlSettings::default()
            },
        )
        .unwrap();
        assert_eq!(
            valid.entity_id.as_deref(),
            Some("https://idp.example.com/metadata")
        );
        assert!(valid.usable());
        assert_eq!(valid.sp_certificate.as_deref(), Some("key"));
        assert_eq!(valid.shown().sp_certificate, None);
        assert!(valid.shown().sp_certificate_set);
        let bad = SamlSettings {
            sign_on_url: Some("javascript:alert(1)".to_owned()),
            ..SamlSettings::default()
        };
        let error = validate_saml(bad, &SamlSettings::default()).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("signOnUrl"));
    }
}
