//! The evaluation context: who is asking, from where, when.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// An Unleash context. Every field is optional; `properties` holds any other named field.
///
/// SDKs sometimes send numbers or booleans where strings are expected (`"userId": 42`): those are read as
/// their JSON text, and `null` as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct Context {
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_id: Option<String>,
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_id: Option<String>,
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub remote_address: Option<String>,
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub environment: Option<String>,
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub app_name: Option<String>,
    /// RFC 3339 time at which to evaluate date constraints; now when absent.
    #[serde(
        default,
        deserialize_with = "scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub current_time: Option<String>,
    #[serde(
        default,
        deserialize_with = "scalar_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub properties: BTreeMap<String, String>,
}

impl Serialize for Context {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Context::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for Context {
    /// Only a JSON object is a context (serde would also take an array of the fields in order).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Context;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a context object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Context, A::Error> {
                Context::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Object)
    }
}

/// A JSON scalar read as text.
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar(v))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(Text)
    }
}

impl Scalar {
    fn into_text(self) -> String {
        self.0
    }
}

fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Scalar>::deserialize(d)?.map(Scalar::into_text))
}

fn scalar_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let raw = Option::<BTreeMap<String, Option<Scalar>>>::deserialize(d)?.unwrap_or_default();
    Ok(raw
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v.into_text())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scalars_as_text_and_null_as_absent() {
        let ctx: Context = serde_json::from_str(
            r#"{"userId":42,"sessionId":null,"properties":{"a":true,"b":"x","c":null,"d":1.5}}"#,
        )
        .unwrap();
        assert_eq!(ctx.user_id.as_deref(), Some("42"));
        assert_eq!(ctx.session_id, None);
        assert_eq!(ctx.properties.get("a").map(String::as_str), Some("true"));
        assert_eq!(ctx.properties.get("d").map(String::as_str), Some("1.5"));
        assert!(!ctx.properties.contains_key("c"));
    }

    #[test]
    fn rejects_objects_where_scalars_belong() {
        let err = serde_json::from_str::<Context>(r#"{"userId":{"x":1}}"#).unwrap_err();
        assert!(
            err.to_string().contains("a string, number or boolean"),
            "{err}"
        );
        let err = serde_json::from_str::<Context>(r#"["42"]"#).unwrap_err();
        assert!(err.to_string().contains("a context object"), "{err}");
    }
}
