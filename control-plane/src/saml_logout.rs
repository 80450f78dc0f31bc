//! SAML 2.0 single logout, the protocol side (service-provider initiated only). Signing out of a session a
//! SAML sign-in opened, with the identity provider's single logout URL (`signOutUrl`) configured, sends the
//! browser there with a LogoutRequest (HTTP-Redirect binding) naming the assertion's NameID and SessionIndex
//! (kept with the session: `domain::single_sign_out`), signed with the service provider's key (`spCertificate`,
//! RSA-SHA256 over the binding's query string, by samael's `sign_url`) when one is configured. The request's
//! ID is kept (`domain::sso_flows`, ten minutes, any control plane) until the identity provider's
//! LogoutResponse comes back to `<base>/auth/saml/logout/done`:
//!
//! - HTTP-Redirect (GET): the signature of the query string, checked against the identity provider's
//!   certificate over the octets as they were sent (`SAMLResponse`, `RelayState`, `SigAlg`, as the binding
//!   says; samael's own URL verifier re-encodes the values, so a sender encoding otherwise would fail, and it
//!   panics on a missing `SigAlg`), with openssl; SHA-1 refused.
//! - HTTP-POST: the XML signature, verified by xmlsec1 through samael against that certificate, keeping only
//!   what it signed (no signature wrapping); never by hand-written canonicalisation.
//!
//! Either way: the root element is a LogoutResponse, its issuer the identity provider's entity ID, its
//! destination (when given) this instance's logout URL, its InResponseTo a request this instance made and
//! has not seen answered (taken once), its status Success. A logout request started by the identity
//! provider is not accepted (see `docs/internals.md`).

use crate::domain::saml_settings::{certificate_body, signing_key, SamlSettings};
use crate::domain::single_sign_out::SamlSubject;
use crate::domain::sso_flows::{self, Step};
use crate::saml::{random_id, ServiceProviderUrls, ALLOWED_SIGNATURES};
use crate::store::Store;
use base64::Engine;
use openssl::hash::MessageDigest;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use samael::crypto::{decode_x509_cert, CryptoProvider, ReduceMode};
use samael::schema::LogoutResponse;
use serde::{Deserialize, Serialize};
use std::io::Read;
use vexil_shared::{ApiError, ErrorKind};

const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
const ASSERTION: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
const SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";
/// The largest LogoutResponse read (inflated): a real one is a few kilobytes.
const MAX_MESSAGE: u64 = 256 * 1024;

/// A LogoutRequest sent, as kept until its LogoutResponse.
#[derive(Serialize, Deserialize)]
struct Pending {
    sent_to: String,
}

fn refused(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::AuthenticationRequired, message)
}

fn unmade(error: impl std::fmt::Display) -> ApiError {
    tracing::warn!(%error, "SAML: no LogoutRequest could be made");
    ApiError::new(
        ErrorKind::Unavailable,
        format!("No SAML sign-out request could be made: {error}"),
    )
}

/// The LogoutRequest XML: its ID and time, the identity provider's logout URL as destination, this instance
/// as issuer, the sign-in's NameID and SessionIndex. Written by quick-xml, which escapes every value.
fn logout_request_xml(
    id: &str,
    destination: &str,
    issuer: &str,
    subject: &SamlSubject,
) -> Result<String, ApiError> {
    let instant = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut writer = quick_xml::Writer::new(Vec::new());
    let root = BytesStart::new("samlp:LogoutRequest").with_attributes([
        ("xmlns:samlp", PROTOCOL),
        ("xmlns:saml", ASSERTION),
        ("ID", id),
        ("Version", "2.0"),
        ("IssueInstant", instant.as_str()),
        ("Destination", destination),
    ]);
    let mut name_id = BytesStart::new("saml:NameID");
    if let Some(format) = &subject.name_id_format {
        name_id.push_attribute(("Format", format.as_str()));
    }
    let mut elements = vec![
        (BytesStart::new("saml:Issuer"), issuer),
        (name_id, subject.name_id.as_str()),
    ];
    if let Some(index) = &subject.session_index {
        elements.push((BytesStart::new("samlp:SessionIndex"), index.as_str()));
    }
    writer.write_event(Event::Start(root)).map_err(unmade)?;
    for (start, text) in elements {
        let end = BytesEnd::new(String::from_utf8_lossy(start.name().as_ref()).into_owned());
        writer.write_event(Event::Start(start)).map_err(unmade)?;
        writer
            .write_event(Event::Text(BytesText::new(text)))
            .map_err(unmade)?;
        writer.write_event(Event::End(end)).map_err(unmade)?;
    }
    writer
        .write_event(Event::End(BytesEnd::new("samlp:LogoutRequest")))
        .map_err(unmade)?;
    String::from_utf8(writer.into_inner()).map_err(unmade)
}

/// Starts a single logout of the session whose sign-in named `subject`: the URL to send the browser to (the
/// identity provider's logout URL with the deflated, maybe signed, LogoutRequest), or `None` when SAML or its
/// logout URL is not configured (sign out of Vexil only).
pub async fn start(
    store: &Store,
    settings: &SamlSettings,
    urls: &ServiceProviderUrls,
    subject: &SamlSubject,
) -> Result<Option<String>, ApiError> {
    let Some(destination) = settings
        .sign_out_url
        .as_deref()
        .filter(|_| settings.usable())
    else {
        return Ok(None);
    };
    let mut url = url::Url::parse(destination).map_err(unmade)?;
    let id = format!("_{}", random_id()?);
    let xml = logout_request_xml(&id, destination, &urls.entity_id, subject)?;
    let mut deflated = Vec::new();
    {
        use std::io::Write;
        let mut encoder =
            flate2::write::DeflateEncoder::new(&mut deflated, flate2::Compression::default());
        encoder.write_all(xml.as_bytes()).map_err(unmade)?;
        encoder.finish().map_err(unmade)?;
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(&deflated);
    // The binding's parameters alone (the logout URL may carry its own query): signed as they are sent.
    let mut message = url::Url::parse("http://saml.invalid/").map_err(unmade)?;
    message
        .query_pairs_mut()
        .append_pair("SAMLRequest", &encoded);
    if let Some(pem) = &settings.sp_certificate {
        let key = signing_key(pem)?;
        message = samael::crypto::sign_url(message, &key).map_err(unmade)?;
    }
    let parameters = message.query().unwrap_or_default().to_owned();
    let query = match url.query().filter(|query| !query.is_empty()) {
        Some(own) => format!("{own}&{parameters}"),
        None => parameters,
    };
    url.set_query(Some(&query));
    let pending = Pending {
        sent_to: destination.to_owned(),
    };
    sso_flows::keep(store, Step::SamlLogoutSent, &id, &pending).await?;
    Ok(Some(url.to_string()))
}

/// How a LogoutResponse arrived.
pub enum Answer<'a> {
    /// HTTP-Redirect: the raw (still percent-encoded) query string of the GET.
    Redirect { query: &'a str },
    /// HTTP-POST: the form's `SAMLResponse` (base64).
    Post { response: &'a str },
}

/// Checks the identity provider's LogoutResponse (see the module's documentation). `Ok` means the identity
/// provider confirmed the sign-out of a request this instance made, answered here once.
pub async fn finish(
    store: &Store,
    settings: &SamlSettings,
    urls: &ServiceProviderUrls,
    answer: Answer<'_>,
) -> Result<(), ApiError> {
    if !settings.usable() {
        return Err(ApiError::not_found(
            "SAML 2.0 sign-in is not configured on this instance",
        ));
    }
    let certificate = settings
        .certificate
        .as_deref()
        .and_then(certificate_body)
        .ok_or_else(|| refused("The identity provider's certificate is not configured"))?;
    let xml = match answer {
        Answer::Redirect { query } => {
            let message = parameter(query, "SAMLResponse").ok_or_else(|| {
                ApiError::validation("The sign-out answer carries no SAMLResponse")
            })?;
            verify_query_signature(query, &certificate)?;
            inflate(&message)?
        }
        Answer::Post { response } => {
            let xml = String::from_utf8(decode_base64(response)?)
                .map_err(|_| refused("The SAML LogoutResponse is not UTF-8 text"))?;
            let der = decode_x509_cert(&certificate)
                .map_err(|_| refused("The identity provider's certificate cannot be read"))?;
            samael::crypto::Crypto::reduce_xml_to_signed_with_allowed_algorithms(
                &xml,
                &[der],
                ReduceMode::ValidateAndMarkNoAncestors,
                Some(&ALLOWED_SIGNATURES),
            )
            .map_err(|error| {
                tracing::warn!(%error, "SAML: a LogoutResponse failed verification");
                refused(
                    "The SAML LogoutResponse is not signed by the identity provider's certificate",
                )
            })?
        }
    };
    if root_name(&xml).as_deref() != Some("LogoutResponse") {
        return Err(refused("The SAML answer is not a LogoutResponse"));
    }
    let response: LogoutResponse = xml
        .parse()
        .map_err(|error| refused(format!("The SAML LogoutResponse cannot be read: {error}")))?;
    let issuer = response
        .issuer
        .as_ref()
        .and_then(|issuer| issuer.value.as_deref());
    if issuer.is_some() && issuer != settings.entity_id.as_deref() {
        return Err(refused(
            "The SAML LogoutResponse comes from another identity provider",
        ));
    }
    if let Some(destination) = &response.destination {
        if destination != &urls.logout_url {
            return Err(refused(
                "The SAML LogoutResponse was sent to another address",
            ));
        }
    }
    let request_id = response.in_response_to.as_deref().unwrap_or_default();
    let sent: Option<Pending> = if request_id.is_empty() {
        None
    } else {
        sso_flows::take(store, Step::SamlLogoutSent, request_id).await?
    };
    if sent.is_none() {
        return Err(refused(
            "This sign-out is unknown, was already answered or has expired",
        ));
    }
    let status = response
        .status
        .as_ref()
        .and_then(|status| status.status_code.value.as_deref());
    if status != Some(SUCCESS) {
        return Err(refused(format!(
            "The identity provider did not confirm the sign-out (status {})",
            status.unwrap_or("missing")
        )));
    }
    Ok(())
}

/// The decoded value of `name` in the raw query string `query`.
fn parameter(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// The raw (still percent-encoded) `name=value` of `query`, as it was sent.
fn raw_pair<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .find(|pair| pair.split_once('=').is_some_and(|(key, _)| key == name))
}

fn decode_base64(text: &str) -> Result<Vec<u8>, ApiError> {
    let text: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| refused("The SAML message is not base64"))
}

/// The HTTP-Redirect binding's message: base64 of raw DEFLATE, at most [`MAX_MESSAGE`] inflated.
fn inflate(encoded: &str) -> Result<String, ApiError> {
    let deflated = decode_base64(encoded)?;
    let mut xml = String::new();
    flate2::read::DeflateDecoder::new(deflated.as_slice())
        .take(MAX_MESSAGE + 1)
        .read_to_string(&mut xml)
        .map_err(|_| refused("The SAML message cannot be inflated"))?;
    if xml.len() as u64 > MAX_MESSAGE {
        return Err(refused("The SAML message is too large"));
    }
    Ok(xml)
}

/// The digest of an XML-DSig signature algorithm URI the redirect binding names (`SigAlg`), RSA or ECDSA
/// with SHA-2; SHA-1 and anything else are refused.
fn digest_of(algorithm: &str) -> Option<(MessageDigest, bool)> {
    let ecdsa = algorithm.contains("#ecdsa-");
    let digest = match algorithm {
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
        | "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256" => MessageDigest::sha256(),
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384"
        | "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384" => MessageDigest::sha384(),
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"
        | "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512" => MessageDigest::sha512(),
        _ => return None,
    };
    Some((digest, ecdsa))
}

/// The HTTP-Redirect binding's signature (SAML bindings 3.4.4.1): over `SAMLResponse=…[&RelayState=…]&SigAlg=…`
/// exactly as sent, by the identity provider's certificate. An ECDSA signature is r‖s (XML-DSig), turned into
/// DER for openssl.
fn verify_query_signature(query: &str, certificate: &str) -> Result<(), ApiError> {
    let unsigned =
        || refused("The SAML LogoutResponse is not signed: the identity provider must sign it");
    let (Some(algorithm), Some(signature)) =
        (parameter(query, "SigAlg"), parameter(query, "Signature"))
    else {
        return Err(unsigned());
    };
    let Some((digest, ecdsa)) = digest_of(&algorithm) else {
        return Err(refused(format!(
            "The SAML LogoutResponse is signed with an algorithm Vexil does not accept ({algorithm}; SHA-1 is \
             refused)"
        )));
    };
    let octets: Vec<&str> = ["SAMLResponse", "RelayState", "SigAlg"]
        .into_iter()
        .filter_map(|name| raw_pair(query, name))
        .collect();
    let mut signature = decode_base64(&signature)?;
    let bad = || {
        refused("The SAML LogoutResponse's signature does not verify with the identity provider's certificate")
    };
    let der = base64::engine::general_purpose::STANDARD
        .decode(certificate)
        .map_err(|_| bad())?;
    let key = openssl::x509::X509::from_der(&der)
        .and_then(|certificate| certificate.public_key())
        .map_err(|_| bad())?;
    if ecdsa {
        let half = signature.len() / 2;
        let (r, s) = signature.split_at(half);
        signature = openssl::bn::BigNum::from_slice(r)
            .and_then(|r| Ok((r, openssl::bn::BigNum::from_slice(s)?)))
            .and_then(|(r, s)| openssl::ecdsa::EcdsaSig::from_private_components(r, s))
            .and_then(|signature| signature.to_der())
            .map_err(|_| bad())?;
    }
    let verified = openssl::sign::Verifier::new(digest, &key)
        .and_then(|mut verifier| {
            verifier.update(octets.join("&").as_bytes())?;
            verifier.verify(&signature)
        })
        .unwrap_or(false);
    if verified {
        Ok(())
    } else {
        Err(bad())
    }
}

/// The local name of the document's root element.
fn root_name(xml: &str) -> Option<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    loop {
        match reader.read_event().ok()? {
            Event::Start(start) | Event::Empty(start) => {
                return Some(String::from_utf8_lossy(start.local_name().as_ref()).into_owned())
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_escapes_and_orders_its_elements() {
        let subject = SamlSubject {
            name_id: "a&b<c>@example.com".to_owned(),
            name_id_format: Some(
                "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress".to_owned(),
            ),
            session_index: Some("_s\"1".to_owned()),
        };
        let xml = logout_request_xml(
            "_1",
            "https://idp.example.com/slo?x=1&y=2",
            "https://vexil",
            &subject,
        )
        .unwrap();
        assert!(
            xml.contains("Destination=\"https://idp.example.com/slo?x=1&amp;y=2\""),
            "{xml}"
        );
        assert!(
            xml.contains(">a&amp;b&lt;c&gt;@example.com</saml:NameID>"),
            "{xml}"
        );
        let name_id = xml.find("<saml:NameID").unwrap();
        let index = xml.find("<samlp:SessionIndex>").unwrap();
        assert!(
            xml.find("<saml:Issuer>").unwrap() < name_id && name_id < index,
            "{xml}"
        );
        assert_eq!(root_name(&xml).as_deref(), Some("LogoutRequest"));
    }

    #[test]
    fn raw_pairs_are_taken_as_sent() {
        let query = "SAMLResponse=ab%2Bc&RelayState=x&SigAlg=http%3A%2F%2Fw&Signature=s%3D";
        assert_eq!(raw_pair(query, "SAMLResponse"), Some("SAMLResponse=ab%2Bc"));
        assert_eq!(raw_pair(query, "Relay"), None);
        assert_eq!(parameter(query, "Signature").as_deref(), Some("s="));
        assert!(digest_of("http://www.w3.org/2000/09/xmldsig#rsa-sha1").is_none());
    }
    /// An identity provider's P-256 key and certificate (openssl req -x509, a test pair).
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQghf9+DZNQiQp/a++k
quyALm72gWxb2MY+hP8tSz7d7DGhRANCAATofPW3Nj/t+9z6cVHONlv0f6j53LZq
p06B4Dul3EvG2MwgZLnMwEfDg6ZXyLpFgHl2lP8ZlfsCbOBoFyiMRXYT
-----END PRIVATE KEY-----
";
    const EC_CERTIFICATE: &str = "MIIBhzCCAS2gAwIBAgIUQNeZs0Dcs/cftybdbrmYW7kU/CswCgYIKoZIzj0EAwIwGTEXMBUGA1UEAwwOdmV4aWwtc2xvLXRlc3QwHhcNMjYxMTI2MTA1MDIxWhcNMzYxMTIzMTA1MDIxWjAZMRcwFQYDVQQDDA52ZXhpbC1zbG8tdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOh89bc2P+373PpxUc42W/R/qPnctmqnToHgO6XcS8bYzCBkuczAR8ODplfIukWAeXaU/xmV+wJs4GgXKIxFdhOjUzBRMB0GA1UdDgQWBBQH0X6bbESzw4oQqEwRyl7peBfGSDAfBgNVHSMEGDAWgBQH0X6bbESzw4oQqEwRyl7peBfGSDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDQ9ijVdF+Q0Nc3nO4eHk+Mx14TWdFURldkTwFcUQYbhAIgSgKq/jcDPONL+b3SLe9kGDxf2/hfVts8zNV4NlQ2Wv4=";

    /// `query` signed as an identity provider signs a redirect-binding message: XML-DSig's ECDSA r‖s.
    fn signed_by_idp(query: &str) -> String {
        let key = openssl::pkey::PKey::private_key_from_pem(EC_KEY.as_bytes()).unwrap();
        let mut signer = openssl::sign::Signer::new(MessageDigest::sha256(), &key).unwrap();
        signer.update(query.as_bytes()).unwrap();
        let der = signer.sign_to_vec().unwrap();
        let signature = openssl::ecdsa::EcdsaSig::from_der(&der).unwrap();
        let mut raw = signature.r().to_vec_padded(32).unwrap();
        raw.extend(signature.s().to_vec_padded(32).unwrap());
        let encoded = base64::engine::general_purpose::STANDARD.encode(raw);
        let encoded: String = url::form_urlencoded::byte_serialize(encoded.as_bytes()).collect();
        format!("{query}&Signature={encoded}")
    }

    #[test]
    fn a_redirect_signature_is_checked_over_the_octets_as_sent() {
        let algorithm: String = url::form_urlencoded::byte_serialize(
            b"http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        )
        .collect();
        // Lower-case escapes, as some senders write them: verified as sent, not as re-encoded.
        let query = format!("SAMLResponse=ab%2bc%3d&RelayState=r&SigAlg={algorithm}");
        let signed = signed_by_idp(&query);
        assert!(verify_query_signature(&signed, EC_CERTIFICATE).is_ok());
        // Another message under the same signature, no signature, and SHA-1 are refused.
        let altered = signed.replace("RelayState=r", "RelayState=s");
        assert!(verify_query_signature(&altered, EC_CERTIFICATE).is_err());
        assert!(verify_query_signature(&query, EC_CERTIFICATE).is_err());
        let sha1: String =
            url::form_urlencoded::byte_serialize(b"http://www.w3.org/2000/09/xmldsig#rsa-sha1")
                .collect();
        let weak = signed_by_idp(&format!("SAMLResponse=abc&SigAlg={sha1}"));
        let error = verify_query_signature(&weak, EC_CERTIFICATE).unwrap_err();
        assert!(error.message.contains("SHA-1"), "{}", error.message);
    }
}
