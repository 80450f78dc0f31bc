//! What `/scim/v2` says of itself (RFC 7644 §4): ServiceProviderConfig (PATCH and filters yes; bulk, sort,
//! ETags and password changes no; a bearer token), the two ResourceTypes, and the Schemas of exactly the
//! attributes Vexil keeps (a client that reads them knows what comes back).

use super::{
    list_response, Endpoint, ListQuery, ScimError, GROUP_SCHEMA, MAX_RESULTS, USER_SCHEMA,
};
use serde_json::{json, Value};

const SPC_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RESOURCE_TYPE_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";

/// `GET /ServiceProviderConfig`.
pub fn service_provider_config(endpoint: &Endpoint) -> Value {
    json!({
        "schemas": [SPC_SCHEMA],
        "patch": {"supported": true},
        "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": true, "maxResults": MAX_RESULTS},
        "changePassword": {"supported": false},
        "sort": {"supported": false},
        "etag": {"supported": false},
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "Bearer token",
            "description": "The SCIM token an Admin generates at Admin → SCIM provisioning, sent as Authorization: Bearer <token>",
            "primary": true,
        }],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": format!("{}/ServiceProviderConfig", endpoint.base_url),
        },
    })
}

fn resource_type(
    endpoint: &Endpoint,
    name: &str,
    path: &str,
    schema: &str,
    description: &str,
) -> Value {
    json!({
        "schemas": [RESOURCE_TYPE_SCHEMA],
        "id": name,
        "name": name,
        "endpoint": path,
        "description": description,
        "schema": schema,
        "meta": {"resourceType": "ResourceType", "location": endpoint.location("ResourceTypes", name)},
    })
}

fn resource_types(endpoint: &Endpoint) -> Vec<Value> {
    vec![
        resource_type(endpoint, "User", "/Users", USER_SCHEMA, "Vexil users"),
        resource_type(endpoint, "Group", "/Groups", GROUP_SCHEMA, "Vexil groups"),
    ]
}

/// `GET /ResourceTypes`.
pub fn list_resource_types(endpoint: &Endpoint) -> Result<Value, ScimError> {
    list_response(
        resource_types(endpoint),
        &ListQuery::default(),
        RESOURCE_TYPE_SCHEMA,
    )
}

/// `GET /ResourceTypes/:id`.
pub fn get_resource_type(endpoint: &Endpoint, id: &str) -> Result<Value, ScimError> {
    resource_types(endpoint)
        .into_iter()
        .find(|resource| resource["id"] == json!(id))
        .ok_or_else(|| {
            ScimError::not_found(format!("No resource type {id}: User and Group are served"))
        })
}

fn attribute(name: &str, kind: &str, description: &str) -> Value {
    json!({
        "name": name,
        "type": kind,
        "multiValued": false,
        "description": description,
        "required": false,
        "caseExact": false,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
    })
}

fn with(mut attribute: Value, changes: Value) -> Value {
    if let (Some(object), Value::Object(changes)) = (attribute.as_object_mut(), changes) {
        object.extend(changes);
    }
    attribute
}

fn schemas(endpoint: &Endpoint) -> Vec<Value> {
    let user = json!({
        "schemas": [SCHEMA_SCHEMA],
        "id": USER_SCHEMA,
        "name": "User",
        "description": "A Vexil user: userName is the username, displayName (or the name) the name, the primary e-mail the e-mail",
        "attributes": [
            with(attribute("userName", "string", "The Vexil username: unique, at most 100 characters, no spaces"),
                json!({"required": true, "uniqueness": "server"})),
            with(attribute("name", "complex", "The user's name"), json!({"subAttributes": [
                attribute("formatted", "string", "The full name"),
                attribute("familyName", "string", "The family name"),
                attribute("givenName", "string", "The given name"),
            ]})),
            attribute("displayName", "string", "The name shown in Vexil"),
            with(attribute("emails", "complex", "E-mail addresses; the primary one is the Vexil e-mail"),
                json!({"multiValued": true, "subAttributes": [
                    attribute("value", "string", "The address"),
                    with(attribute("type", "string", "work, home or other"), json!({"canonicalValues": ["work", "home", "other"]})),
                    attribute("primary", "boolean", "Whether it is the user's e-mail in Vexil"),
                ]})),
            attribute("active", "boolean", "False: the user cannot sign in, and their sessions and tokens are ended"),
        ],
        "meta": {"resourceType": "Schema", "location": endpoint.location("Schemas", USER_SCHEMA)},
    });
    let immutable = json!({"mutability": "immutable"});
    let group = json!({
        "schemas": [SCHEMA_SCHEMA],
        "id": GROUP_SCHEMA,
        "name": "Group",
        "description": "A Vexil group: displayName is its name, members its provisioned users",
        "attributes": [
            with(attribute("displayName", "string", "The group's name: unique, at most 100 characters"),
                json!({"required": true, "uniqueness": "server"})),
            with(attribute("members", "complex", "The group's members: provisioned users"), json!({
                "multiValued": true,
                "subAttributes": [
                    with(attribute("value", "string", "The member's id"), immutable.clone()),
                    with(attribute("$ref", "reference", "The member's URI"),
                        json!({"mutability": "immutable", "referenceTypes": ["User"]})),
                    with(attribute("type", "string", "User"),
                        json!({"mutability": "immutable", "canonicalValues": ["User"]})),
                ],
            })),
        ],
        "meta": {"resourceType": "Schema", "location": endpoint.location("Schemas", GROUP_SCHEMA)},
    });
    vec![user, group]
}

/// `GET /Schemas`.
pub fn list_schemas(endpoint: &Endpoint) -> Result<Value, ScimError> {
    list_response(schemas(endpoint), &ListQuery::default(), SCHEMA_SCHEMA)
}

/// `GET /Schemas/:id` (the schema's URN).
pub fn get_schema(endpoint: &Endpoint, id: &str) -> Result<Value, ScimError> {
    schemas(endpoint)
        .into_iter()
        .find(|schema| {
            schema["id"]
                .as_str()
                .is_some_and(|urn| urn.eq_ignore_ascii_case(id))
        })
        .ok_or_else(|| {
            ScimError::not_found(format!(
                "No schema {id}: {USER_SCHEMA} and {GROUP_SCHEMA} are served"
            ))
        })
}
