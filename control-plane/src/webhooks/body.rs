//! What a webhook delivery sends: the body (the addon's `bodyTemplate` with `{{path.to.field}}` replaced by
//! the event's fields, or the event as JSON) and its HMAC-SHA256 signature.

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use std::fmt::Write as _;

/// The body of a delivery. In the template, `{{event.type}}`, `{{event.data.name}}`… (also `{{{…}}}`,
/// spaces allowed inside the braces) take the value at that path of `{"event": …}`: strings as they are
/// (JSON-escaped when `json` is true, so a template of a JSON document stays one), other scalars as JSON,
/// objects and arrays as JSON text, a missing path as nothing. No template: the event as JSON.
pub fn render(template: Option<&str>, event: &Value, json: bool) -> String {
    let Some(template) = template.filter(|template| !template.is_empty()) else {
        return event.to_string();
    };
    let root = serde_json::json!({ "event": event });
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let (triple, inner) = match after.strip_prefix('{') {
            Some(inner) => (true, inner),
            None => (false, after),
        };
        let close = if triple { "}}}" } else { "}}" };
        let Some(end) = inner.find(close) else {
            out.push_str(&rest[start..]);
            return out;
        };
        let path = inner[..end].trim();
        let value = path.split('.').try_fold(&root, |value, key| value.get(key));
        match value {
            Some(Value::String(text)) if json => {
                let quoted = Value::String(text.clone()).to_string();
                out.push_str(&quoted[1..quoted.len() - 1]);
            }
            Some(Value::String(text)) => out.push_str(text),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &inner[end + close.len()..];
    }
    out.push_str(rest);
    out
}

/// `sha256=<hex of HMAC-SHA256(secret, body)>`, the `X-Vexil-Signature` header.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(body);
    let mut header = String::from("sha256=");
    for byte in mac.finalize().into_bytes() {
        let _ = write!(header, "{byte:02x}");
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_take_the_event_fields() {
        let event = json!({"id": 7, "type": "feature-created", "data": {"name": "a\"b"}});
        assert_eq!(
            render(
                Some("{\"t\": \"{{event.type}}\", \"n\": \"{{ event.data.name }}\"}"),
                &event,
                true
            ),
            "{\"t\": \"feature-created\", \"n\": \"a\\\"b\"}"
        );
        assert_eq!(
            render(
                Some("{{{event.data.name}}}-{{event.id}}-{{event.nope.x}}-{{event.data}}"),
                &event,
                false
            ),
            "a\"b-7--{\"name\":\"a\\\"b\"}"
        );
        assert_eq!(
            render(Some("open {{event.type"), &event, false),
            "open {{event.type"
        );
        assert_eq!(render(None, &event, true), event.to_string());
        assert_eq!(render(Some(""), &event, true), event.to_string());
    }

    #[test]
    fn the_signature_is_rfc_4231_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
