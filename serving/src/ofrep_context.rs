//! The evaluation context of an OFREP request body `{context:{…}}`: `targetingKey` → `userId` (an explicit
//! `userId` wins), the Unleash fields by name (`appName`, `environment`, `sessionId`, `remoteAddress`,
//! `currentTime`, `properties`), any other scalar into properties (an explicit property wins); an empty body
//! is an empty context.
//!
//! A well-formed body is read straight into the [`Context`] in one pass ([`read`]), without a JSON tree;
//! anything else (a syntax error, a field of the wrong type, a repeated `context` or `properties`) is read
//! again by [`reference`], which builds the tree and names the protocol's error: `PARSE_ERROR` for a body
//! that is not JSON, else `INVALID_CONTEXT`, whatever comes first in the body. Both read a context the same
//! way (the tests below compare them).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use vexil_shared::Context;

/// Why a request's context was refused.
pub enum ContextError {
    Parse(String),
    Invalid(String),
}

/// The context of an OFREP body, with `client_ip` as `remoteAddress` unless the body names one.
pub fn context_of(body: &[u8], client_ip: Option<String>) -> Result<Context, ContextError> {
    let mut ctx = if body.iter().all(u8::is_ascii_whitespace) {
        Context::default()
    } else {
        match read(body) {
            Some(ctx) => ctx,
            None => reference(body)?,
        }
    };
    if ctx.remote_address.is_none() {
        ctx.remote_address = client_ip;
    }
    Ok(ctx)
}

/// One pass over a well-formed body; `None` for anything [`reference`] should judge. The body is checked
/// to be UTF-8 once, as a whole: read from a slice, serde_json checks every string on its own (about 100
/// instructions each, a tenth of a bulk request's context).
fn read(body: &[u8]) -> Option<Context> {
    let body = std::str::from_utf8(body).ok()?;
    let mut deserializer = serde_json::Deserializer::from_str(body);
    let ctx = Request.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(ctx)
}

/// The body: `{context?, …}`, other keys skipped.
struct Request;

impl<'de> DeserializeSeed<'de> for Request {
    type Value = Context;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Context, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Request {
    type Value = Context;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an OFREP request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Context, A::Error> {
        let mut ctx = None;
        while let Some(key) = map.next_key::<Key>()? {
            if key.is("context") {
                if ctx.is_some() {
                    return Err(A::Error::custom("a repeated context"));
                }
                ctx = Some(map.next_value_seed(OptionalContext)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(ctx.flatten().unwrap_or_default())
    }
}

/// `context`: `null` or an object.
struct OptionalContext;

impl<'de> DeserializeSeed<'de> for OptionalContext {
    type Value = Option<Context>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Context>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalContext {
    type Value = Option<Context>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a context object or null")
    }

    fn visit_none<E>(self) -> Result<Option<Context>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<Context>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Context>, D::Error> {
        d.deserialize_map(ContextFields).map(Some)
    }
}

/// The context's fields, in the body's order; the last of a repeated field wins, as in a JSON object.
struct ContextFields;

impl<'de> Visitor<'de> for ContextFields {
    type Value = Context;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a context object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Context, A::Error> {
        let mut ctx = Context::default();
        let mut targeting_key = None;
        let mut properties_seen = false;
        // Other fields, into properties at the end (where an explicit property wins).
        let mut extra: BTreeMap<String, Option<String>> = BTreeMap::new();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key.text() {
                "properties" => {
                    if properties_seen {
                        return Err(A::Error::custom("repeated properties"));
                    }
                    properties_seen = true;
                    map.next_value_seed(Properties(&mut ctx.properties))?;
                    continue;
                }
                "targetingKey" => &mut targeting_key,
                "userId" => &mut ctx.user_id,
                "sessionId" => &mut ctx.session_id,
                "remoteAddress" => &mut ctx.remote_address,
                "environment" => &mut ctx.environment,
                "appName" => &mut ctx.app_name,
                "currentTime" => &mut ctx.current_time,
                _ => {
                    let value = map.next_value::<Option<Scalar>>()?.map(|s| s.0);
                    extra.insert(key.into_string(), value);
                    continue;
                }
            };
            *slot = map.next_value::<Option<Scalar>>()?.map(|s| s.0);
        }
        if ctx.user_id.is_none() {
            ctx.user_id = targeting_key;
        }
        for (name, text) in extra {
            if let Some(text) = text {
                ctx.properties.entry(name).or_insert(text);
            }
        }
        Ok(ctx)
    }
}

/// `properties`: an object of scalars; `null` values are absent.
struct Properties<'a>(&'a mut BTreeMap<String, String>);

impl<'de> DeserializeSeed<'de> for Properties<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Properties<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a properties object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match map.next_value::<Option<Scalar>>()? {
                Some(text) => self.0.insert(key.into_string(), text.0),
                None => self.0.remove(key.text()),
            };
        }
        Ok(())
    }
}

/// An object key, borrowed from the body when it has no escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn text(&self) -> &str {
        match self {
            Key::Borrowed(text) => text,
            Key::Owned(text) => text,
        }
    }

    fn is(&self, name: &str) -> bool {
        self.text() == name
    }

    fn into_string(self) -> String {
        match self {
            Key::Borrowed(text) => text.to_owned(),
            Key::Owned(text) => text,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A scalar as text, as [`scalar`] writes it; an object or an array is an error.
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar(v))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                // As a JSON tree's number prints it.
                serde_json::Number::from_f64(v)
                    .map(|n| Scalar(n.to_string()))
                    .ok_or_else(|| E::custom("not a finite number"))
            }
        }
        d.deserialize_any(Text)
    }
}

/// The reading through a JSON tree, which names the protocol's errors.
fn reference(body: &[u8]) -> Result<Context, ContextError> {
    let mut ctx = Context::default();
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| ContextError::Parse(format!("the body is not JSON: {error}")))?;
    let Value::Object(mut request) = value else {
        return Err(ContextError::Invalid(
            "the body must be a JSON object".to_owned(),
        ));
    };
    match request.remove("context") {
        None | Some(Value::Null) => {}
        Some(Value::Object(context)) => fill_context(&mut ctx, context)?,
        Some(_) => {
            return Err(ContextError::Invalid(
                "context must be an object".to_owned(),
            ))
        }
    }
    Ok(ctx)
}

fn fill_context(ctx: &mut Context, context: Map<String, Value>) -> Result<(), ContextError> {
    let mut targeting_key = None;
    let mut extra = Vec::new();
    for (key, value) in context {
        if key == "properties" {
            let Value::Object(properties) = value else {
                return Err(ContextError::Invalid(
                    "properties must be an object".to_owned(),
                ));
            };
            for (name, value) in properties {
                let text = scalar(&name, &value)?;
                if let Some(text) = text {
                    ctx.properties.insert(name, text);
                }
            }
            continue;
        }
        let text = scalar(&key, &value)?;
        match key.as_str() {
            "targetingKey" => targeting_key = text,
            "userId" => ctx.user_id = text,
            "sessionId" => ctx.session_id = text,
            "remoteAddress" => ctx.remote_address = text,
            "environment" => ctx.environment = text,
            "appName" => ctx.app_name = text,
            "currentTime" => ctx.current_time = text,
            _ => extra.extend(text.map(|text| (key, text))),
        }
    }
    if ctx.user_id.is_none() {
        ctx.user_id = targeting_key;
    }
    for (key, text) in extra {
        ctx.properties.entry(key).or_insert(text);
    }
    Ok(())
}

/// A context value as text (`null`: absent); an object or an array is refused.
fn scalar(key: &str, value: &Value) -> Result<Option<String>, ContextError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        Value::Number(number) => Ok(Some(number.to_string())),
        Value::Bool(flag) => Ok(Some(flag.to_string())),
        _ => Err(ContextError::Invalid(format!(
            "context field {key} must be a string, number or boolean"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every body the one-pass reading takes, it reads as the tree does.
    #[test]
    fn the_one_pass_reading_agrees_with_the_tree() {
        for body in [
            r#"{}"#,
            r#"{"context":null}"#,
            r#"{"context":{}}"#,
            r#"{"flags":[1,{"a":[]}],"context":{"targetingKey":"u-1","sessionId":"s","plan":"pro"}}"#,
            r#"{"context":{"targetingKey":"t","userId":"u","appName":"a","environment":"e","remoteAddress":"10.0.0.1","currentTime":"2026-01-01T00:00:00Z"}}"#,
            r#"{"context":{"userId":null,"targetingKey":"t"}}"#,
            r#"{"context":{"userId":"u","userId":null}}"#,
            r#"{"context":{"plan":"x","plan":"y","age":42,"ratio":1.0,"big":1e300,"neg":-7,"yes":true,"gone":null}}"#,
            r#"{"context":{"plan":"x","plan":null}}"#,
            r#"{"context":{"plan":"extra","properties":{"plan":"explicit","a":"b","a":null,"n":2.5}}}"#,
            r#"{"context":{"properties":{},"k\u00e9y":"v\n"}}"#,
            r#"  {"context":{"targetingKey":7}}  "#,
        ] {
            let one_pass = read(body.as_bytes());
            let tree = reference(body.as_bytes()).ok();
            assert!(one_pass.is_some(), "{body}");
            assert_eq!(one_pass, tree, "{body}");
        }
    }

    /// What the one-pass reading leaves to the tree: every error, and the rare shapes it does not follow.
    #[test]
    fn the_tree_judges_everything_else() {
        for (body, parse_error) in [
            (r#"{"context":"#, true),
            (r#"{"context":{}} x"#, true),
            (r#"{"context":{"userId":{"a":1}}, oops}"#, true),
            (r#"[1]"#, false),
            (r#"{"context":5}"#, false),
            (r#"{"context":{"properties":null}}"#, false),
            (r#"{"context":{"properties":{"a":[1]}}}"#, false),
            (r#"{"context":{"userId":["u"]}}"#, false),
        ] {
            assert!(read(body.as_bytes()).is_none(), "{body}");
            match context_of(body.as_bytes(), None) {
                Err(ContextError::Parse(_)) => assert!(parse_error, "{body}"),
                Err(ContextError::Invalid(_)) => assert!(!parse_error, "{body}"),
                Ok(_) => panic!("{body} was read"),
            }
        }
        // A body that is not UTF-8, in a string or outside: not JSON.
        for body in [
            &b"{\"context\":{\"targetingKey\":\"u-\xff\"}}"[..],
            &b"{\"context\":{}}\xc3"[..],
        ] {
            assert!(read(body).is_none());
            assert!(matches!(
                context_of(body, None),
                Err(ContextError::Parse(_))
            ));
        }
        // Repeated `context` or `properties`: the last wins, as the tree has it.
        for body in [
            r#"{"context":{"userId":"a"},"context":{"userId":"b"}}"#,
            r#"{"context":{"properties":{"a":"1"},"properties":{"b":"2"}}}"#,
        ] {
            assert!(read(body.as_bytes()).is_none(), "{body}");
            let ctx = context_of(body.as_bytes(), None).ok().unwrap();
            assert!(
                ctx.user_id.as_deref() == Some("b") || ctx.properties.len() == 1,
                "{body}"
            );
        }
    }
}
