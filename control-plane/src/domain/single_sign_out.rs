//! Single sign-out: what signing out at the identity provider needs of a single sign-on, kept with the
//! session it opened (`user_sessions.sign_out`, server side only, never in a cookie) and taken when that
//! session ends (`users::sign_out`). A session ended any other way (expiry, a password change, the user
//! deleted or deprovisioned) takes it along: the ID token it holds is a credential of sorts and lives no
//! longer than the session.
//!
//! Which protocol signs out is the session's, never the instance's: a session started by a password or by
//! SAML never goes to the OpenID Connect provider, and the other way round.

use serde::{Deserialize, Serialize};

/// A sign-in's provider side, as kept with its session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "camelCase")]
pub enum ProviderSession {
    /// An OpenID Connect sign-in whose provider offers RP-initiated logout, made while single sign-out was on.
    #[serde(rename_all = "camelCase")]
    Oidc {
        /// The ID token of the sign-in (compact JWT): the `id_token_hint`.
        id_token: String,
        /// The provider's `end_session_endpoint`, from its discovery document at the sign-in.
        end_session_endpoint: String,
    },
    /// A SAML 2.0 sign-in: who the assertion named, for a LogoutRequest.
    #[serde(rename_all = "camelCase")]
    Saml(SamlSubject),
}

/// The subject of a SAML sign-in, as its LogoutRequest names it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamlSubject {
    pub name_id: String,
    pub name_id_format: Option<String>,
    /// The `SessionIndex` of the assertion's AuthnStatement, when it had one.
    pub session_index: Option<String>,
}

impl ProviderSession {
    /// As stored.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// From the stored text; `None` (signing out at Vexil only) when it cannot be read.
    pub fn from_text(text: &str) -> Option<ProviderSession> {
        match serde_json::from_str(text) {
            Ok(session) => Some(session),
            Err(error) => {
                tracing::warn!(%error, "a session's single sign-out data could not be read");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_as_json_and_read_back() {
        for session in [
            ProviderSession::Oidc {
                id_token: "a.b.c".to_owned(),
                end_session_endpoint: "https://idp.example.com/session/end".to_owned(),
            },
            ProviderSession::Saml(SamlSubject {
                name_id: "ann@example.com".to_owned(),
                name_id_format: None,
                session_index: Some("_1".to_owned()),
            }),
        ] {
            assert_eq!(
                ProviderSession::from_text(&session.to_text()),
                Some(session)
            );
        }
        assert_eq!(
            ProviderSession::from_text("{\"protocol\":\"ws-fed\"}"),
            None
        );
    }
}
