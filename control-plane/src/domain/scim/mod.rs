//! SCIM 2.0 provisioning (RFC 7643 resources, RFC 7644 protocol) at `<base>/scim/v2`: an identity provider
//! (Okta, Entra ID…) creates, updates, deactivates and deletes Vexil users and groups. A provisioned user or
//! group carries its SCIM id (`scimId`, a UUID) and cannot be edited through the admin API or UI, except for
//! the root role, which stays Vexil's to give (`users::update`, `groups::replace` refuse the rest).
//!
//! Users keep the SCIM attributes they were given (`userName`, `name`, `displayName`, `emails`, `externalId`,
//! `active`) as one JSON object, from which their Vexil fields follow: username = `userName`, name =
//! `displayName` (else `name.formatted`, else given and family name), e-mail = the primary e-mail (else the
//! first, else `userName` when it is an address). Groups are Vexil groups: `displayName` is the name, `members`
//! the membership (provisioned users only). Writes go through [`users`] and [`groups`] in a `WriteTx` and
//! record the same events as the admin API's user and group routes. Deprovisioning (`DELETE`, or
//! `active: false`) ends the user's sessions and personal access tokens in the same transaction.
//!
//! [`filter`] is the small filter language (`userName eq "…"`, `and`, `or`, `pr`…), [`patch`] the PATCH
//! operations on a resource's JSON, [`discovery`] the ServiceProviderConfig, ResourceTypes and Schemas.

pub mod discovery;
pub mod filter;
pub mod groups;
pub mod patch;
pub mod users;

use crate::store::StoreError;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use utoipa::IntoParams;
use vexil_shared::{ApiError, ErrorKind};

pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const LIST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
pub const PATCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/// The most resources one list answer holds (`count` larger is cut to it; ServiceProviderConfig says so).
pub const MAX_RESULTS: usize = 200;

/// A SCIM error (RFC 7644 §3.12): the HTTP status, the `scimType` where one applies, a detail for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimError {
    pub status: u16,
    pub scim_type: Option<&'static str>,
    pub detail: String,
}

impl ScimError {
    pub fn new(status: u16, scim_type: Option<&'static str>, detail: impl Into<String>) -> Self {
        ScimError {
            status,
            scim_type,
            detail: detail.into(),
        }
    }

    /// 400 with a `scimType` (`invalidValue`, `invalidFilter`, `invalidPath`, `noTarget`, `invalidSyntax`…).
    pub fn bad(scim_type: &'static str, detail: impl Into<String>) -> Self {
        ScimError::new(400, Some(scim_type), detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        ScimError::new(404, None, detail)
    }

    /// 409 `uniqueness`.
    pub fn taken(detail: impl Into<String>) -> Self {
        ScimError::new(409, Some("uniqueness"), detail)
    }

    /// The body (the Error schema; `status` is a string, as RFC 7644 has it).
    pub fn body(&self) -> Value {
        let mut body = json!({
            "schemas": [ERROR_SCHEMA],
            "status": self.status.to_string(),
            "detail": self.detail,
        });
        if let Some(scim_type) = self.scim_type {
            body["scimType"] = json!(scim_type);
        }
        body
    }
}

impl From<ApiError> for ScimError {
    fn from(error: ApiError) -> Self {
        let scim_type = match error.kind {
            ErrorKind::NameExists => Some("uniqueness"),
            ErrorKind::Validation | ErrorKind::ExceedsLimit => Some("invalidValue"),
            _ => None,
        };
        ScimError::new(error.kind.status(), scim_type, error.message)
    }
}

impl From<StoreError> for ScimError {
    fn from(error: StoreError) -> Self {
        ApiError::from(error).into()
    }
}

/// Where this service's SCIM resources are: `<origin><base path>/scim/v2`, for `meta.location` and `$ref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub base_url: String,
}

impl Endpoint {
    pub fn location(&self, resource_type: &str, id: &str) -> String {
        format!("{}/{resource_type}/{id}", self.base_url)
    }
}

/// A list's query parameters (RFC 7644 §3.4.2): filter, paging (`startIndex` from 1, `count`), and which
/// attributes to answer.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// For example `userName eq "ada@example.com"`.
    pub filter: Option<String>,
    /// 1-based; less than 1 counts as 1.
    pub start_index: Option<i64>,
    /// At most 200; negative counts as 0.
    pub count: Option<i64>,
    /// Comma-separated attribute names: only these (and `id`, `schemas`) are answered.
    pub attributes: Option<String>,
    /// Comma-separated attribute names left out of the answer.
    pub excluded_attributes: Option<String>,
}

/// Which attributes one resource's answer holds (`attributes`, `excludedAttributes`).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AttributesQuery {
    pub attributes: Option<String>,
    pub excluded_attributes: Option<String>,
}

/// An attribute name or path without the resource's schema URN (`urn:…:User:userName` → `userName`).
pub fn strip_urn<'a>(name: &'a str, schema: &str) -> &'a str {
    let name = name.trim();
    if name.len() > schema.len() && name[..schema.len()].eq_ignore_ascii_case(schema) {
        return name[schema.len()..].trim_start_matches(':');
    }
    name
}

fn names(list: Option<&str>, schema: &str) -> Vec<String> {
    list.unwrap_or_default()
        .split(',')
        .map(|name| strip_urn(name, schema).to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect()
}

/// `resource` with only the `attributes` asked (plus `id` and `schemas`, always returned), or without the
/// `excluded` ones. Top-level names decide (`name.givenName` keeps or drops `name`).
pub fn project(
    resource: Value,
    attributes: Option<&str>,
    excluded: Option<&str>,
    schema: &str,
) -> Value {
    let Value::Object(object) = resource else {
        return resource;
    };
    let top = |name: &str| name.split('.').next().unwrap_or_default().to_owned();
    let wanted: Vec<String> = names(attributes, schema)
        .iter()
        .map(|name| top(name))
        .collect();
    let unwanted: Vec<String> = names(excluded, schema)
        .iter()
        .filter(|name| !name.contains('.'))
        .cloned()
        .collect();
    let always = ["id", "schemas"];
    let kept: Map<String, Value> = object
        .into_iter()
        .filter(|(key, _)| {
            let key = key.to_ascii_lowercase();
            if always.contains(&key.as_str()) {
                return true;
            }
            if !wanted.is_empty() {
                return wanted.contains(&key);
            }
            !unwanted.contains(&key)
        })
        .collect();
    Value::Object(kept)
}

/// A ListResponse of `resources` (all that match), paged by `query`, each projected as asked.
pub fn list_response(
    resources: Vec<Value>,
    query: &ListQuery,
    schema: &str,
) -> Result<Value, ScimError> {
    let matching = match query
        .filter
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
    {
        Some(text) => {
            let filter = filter::parse(text, schema)?;
            resources
                .into_iter()
                .filter(|resource| filter.matches(resource))
                .collect()
        }
        None => resources,
    };
    let start = query.start_index.unwrap_or(1).max(1);
    let count = query.count.map_or(MAX_RESULTS, |count| {
        usize::try_from(count.max(0)).unwrap_or(0).min(MAX_RESULTS)
    });
    let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
    let page: Vec<Value> = matching
        .iter()
        .skip(skip)
        .take(count)
        .map(|resource| {
            project(
                resource.clone(),
                query.attributes.as_deref(),
                query.excluded_attributes.as_deref(),
                schema,
            )
        })
        .collect();
    Ok(json!({
        "schemas": [LIST_SCHEMA],
        "totalResults": matching.len(),
        "startIndex": start,
        "itemsPerPage": page.len(),
        "Resources": page,
    }))
}

/// The key of `object` named `name` in any case.
pub fn key_of(object: &Map<String, Value>, name: &str) -> Option<String> {
    object
        .keys()
        .find(|key| key.eq_ignore_ascii_case(name))
        .cloned()
}

/// A boolean as providers send it: `true`/`false`, or Entra's `"True"`/`"False"`.
pub fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::String(text) if text.eq_ignore_ascii_case("true") => Some(true),
        Value::String(text) if text.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_keeps_id_and_schemas() {
        let resource = json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a", "name": {"givenName": "A"}, "active": true});
        let only = project(resource.clone(), Some("userName"), None, USER_SCHEMA);
        assert_eq!(
            only,
            json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a"})
        );
        let urn = format!("{USER_SCHEMA}:name.givenName");
        let only = project(resource.clone(), Some(&urn), None, USER_SCHEMA);
        assert_eq!(
            only,
            json!({"schemas": [USER_SCHEMA], "id": "1", "name": {"givenName": "A"}})
        );
        let without = project(resource, None, Some("name,active"), USER_SCHEMA);
        assert_eq!(
            without,
            json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a"})
        );
    }

    #[test]
    fn paging() {
        let resources: Vec<Value> = (1..=5).map(|n| json!({"id": n.to_string()})).collect();
        let query = ListQuery {
            start_index: Some(2),
            count: Some(2),
            ..ListQuery::default()
        };
        let page = list_response(resources, &query, USER_SCHEMA).unwrap();
        assert_eq!(page["totalResults"], 5);
        assert_eq!(page["itemsPerPage"], 2);
        assert_eq!(page["startIndex"], 2);
        assert_eq!(page["Resources"], json!([{"id": "2"}, {"id": "3"}]));
    }
}
