//! SCIM Groups (`/scim/v2/Groups`): Vexil groups an identity provider provisions. `displayName` is the
//! group's name, `members` its membership (provisioned users, by their SCIM id); the root role a group gives
//! stays Vexil's (an Admin sets it). Writes record what the admin API's group routes record: `group-created`,
//! `group-updated`, `group-deleted`, and one `group-user-added` / `group-user-removed` per member. A member's
//! leaving or the group's deletion never leaves the instance without an active Admin (`domain::last_admin`).

use super::patch::{self, Shape};
use super::{list_response, project, Endpoint, ListQuery, ScimError, GROUP_SCHEMA};
use crate::domain::events::{payload, EventType};
use crate::domain::groups;
use crate::domain::last_admin;
use crate::store::groups::{self as group_store, GroupRow};
use crate::store::users as user_store;
use crate::store::{Counter, NewEvent, WriteTx};
use serde_json::{json, Map, Value};
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use vexil_shared::ApiError;

/// What PATCH knows of a Group.
pub const SHAPE: Shape = Shape {
    schema: GROUP_SCHEMA,
    attributes: &["externalId", "displayName", "members"],
    multi_valued: &["members"],
    complex: &[],
};

fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::bad("invalidValue", detail)
}

/// The checked Group attributes: display name (1 to 100 characters), external id, member SCIM ids.
struct Attributes {
    display_name: String,
    external_id: Option<String>,
    members: BTreeSet<String>,
}

fn attributes(input: &Map<String, Value>) -> Result<Attributes, ScimError> {
    let mut display_name = None;
    let mut external_id = None;
    let mut members = BTreeSet::new();
    for (key, value) in input {
        let key = super::strip_urn(key, GROUP_SCHEMA);
        if key.eq_ignore_ascii_case("displayName") {
            match value {
                Value::String(name) => display_name = Some(name.trim().to_owned()),
                Value::Null => {}
                other => {
                    return Err(invalid(format!(
                        "displayName must be a string, not {other}"
                    )))
                }
            }
        } else if key.eq_ignore_ascii_case("externalId") {
            match value {
                Value::String(id) if !id.trim().is_empty() => external_id = Some(id.clone()),
                Value::String(_) | Value::Null => {}
                other => return Err(invalid(format!("externalId must be a string, not {other}"))),
            }
        } else if key.eq_ignore_ascii_case("members") {
            let elements = match value {
                Value::Array(elements) => elements.clone(),
                Value::Null => Vec::new(),
                other => vec![other.clone()],
            };
            for element in elements {
                let value = element.as_object().and_then(|object| {
                    super::key_of(object, "value").and_then(|key| object.get(&key).cloned())
                });
                match value {
                    Some(Value::String(id)) => {
                        members.insert(id);
                    }
                    _ => {
                        return Err(invalid(
                            "Each of members needs its value: a provisioned user's id",
                        ))
                    }
                }
            }
        }
    }
    let display_name = display_name
        .filter(|name| !name.is_empty())
        .ok_or_else(|| invalid("displayName is required"))?;
    if display_name.chars().count() > 100 {
        return Err(invalid("displayName must be at most 100 characters long"));
    }
    Ok(Attributes {
        display_name,
        external_id,
        members,
    })
}

/// The SCIM ids of a group's members who were provisioned (in joining order).
async fn member_ids(conn: &mut AnyConnection, group_id: i64) -> Result<Vec<String>, ScimError> {
    let mut ids = Vec::new();
    for member in group_store::members(conn, group_id).await? {
        if let Some(scim_id) = user_store::get(conn, member.user_id)
            .await?
            .and_then(|user| user.scim_id)
        {
            ids.push(scim_id);
        }
    }
    Ok(ids)
}

fn render(row: &GroupRow, members: &[String], endpoint: &Endpoint) -> Value {
    let id = row.scim_id.clone().unwrap_or_default();
    let mut resource = json!({
        "schemas": [GROUP_SCHEMA],
        "id": id,
        "displayName": row.name,
        "meta": {
            "resourceType": "Group",
            "created": row.created_at.to_string(),
            "lastModified": row.created_at.to_string(),
            "location": endpoint.location("Groups", &id),
        },
    });
    if let Some(external_id) = &row.scim_external_id {
        resource["externalId"] = json!(external_id);
    }
    if !members.is_empty() {
        let members: Vec<Value> = members
            .iter()
            .map(|member| json!({"value": member, "$ref": endpoint.location("Users", member), "type": "User"}))
            .collect();
        resource["members"] = Value::Array(members);
    }
    resource
}

async fn require(conn: &mut AnyConnection, id: &str) -> Result<GroupRow, ScimError> {
    group_store::get_by_scim_id(conn, id)
        .await?
        .ok_or_else(|| ScimError::not_found(format!("No provisioned group has the id {id}")))
}

/// Every provisioned group matching `query`, paged.
pub async fn list(
    conn: &mut AnyConnection,
    endpoint: &Endpoint,
    query: &ListQuery,
) -> Result<Value, ScimError> {
    let mut resources = Vec::new();
    for row in group_store::list_scim(conn).await? {
        let members = member_ids(conn, row.id).await?;
        resources.push(render(&row, &members, endpoint));
    }
    list_response(resources, query, GROUP_SCHEMA)
}

/// One provisioned group, with the attributes asked.
pub async fn get(
    conn: &mut AnyConnection,
    endpoint: &Endpoint,
    id: &str,
    attributes: Option<&str>,
    excluded: Option<&str>,
) -> Result<Value, ScimError> {
    let row = require(conn, id).await?;
    let members = member_ids(conn, row.id).await?;
    Ok(project(
        render(&row, &members, endpoint),
        attributes,
        excluded,
        GROUP_SCHEMA,
    ))
}

fn body_object(body: &Value) -> Result<&Map<String, Value>, ScimError> {
    body.as_object()
        .ok_or_else(|| ScimError::bad("invalidSyntax", "The body must be a Group object"))
}

/// The Vexil user ids of `members` (SCIM ids of provisioned users), or 400.
async fn member_user_ids(
    tx: &mut WriteTx,
    members: &BTreeSet<String>,
) -> Result<BTreeSet<i64>, ScimError> {
    let mut ids = BTreeSet::new();
    for member in members {
        let user = user_store::get_by_scim_id(tx.conn(), member)
            .await?
            .ok_or_else(|| invalid(format!("members: no provisioned user has the id {member}")))?;
        ids.insert(user.user.id);
    }
    Ok(ids)
}

async fn check_name(tx: &mut WriteTx, name: &str, except: Option<i64>) -> Result<(), ScimError> {
    if let Some(owner) = group_store::id_of_name(tx.conn(), name).await? {
        if Some(owner) != except {
            return Err(ScimError::taken(format!(
                "A group named {name} already exists"
            )));
        }
    }
    Ok(())
}

/// `POST /Groups`: a new group (no root role) with its members; `group-created` and a member event each.
pub async fn create(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    body: &Value,
) -> Result<Value, ScimError> {
    let attributes = attributes(body_object(body)?)?;
    check_name(tx, &attributes.display_name, None).await?;
    let members = member_user_ids(tx, &attributes.members).await?;
    let row = GroupRow {
        id: tx.next_id(Counter::Group).await?,
        name: attributes.display_name,
        description: None,
        mappings_sso: Vec::new(),
        root_role: None,
        created_by: Some(tx.actor().name.clone()),
        created_at: tx.now(),
        scim_id: Some(uuid::Uuid::new_v4().to_string()),
        scim_external_id: attributes.external_id,
    };
    group_store::insert(tx.conn(), &row).await?;
    let created = groups::view(tx.conn(), row.clone()).await?;
    tx.record(NewEvent {
        event_type: EventType::GroupCreated.as_str(),
        data: Some(payload(&created)),
        ..NewEvent::default()
    })
    .await?;
    groups::set_members(tx, row.id, &members).await?;
    let members = member_ids(tx.conn(), row.id).await?;
    Ok(render(&row, &members, endpoint))
}

/// Stores new attributes of group `before`: name and external id, members; `group-updated` (no change:
/// nothing is written).
async fn store(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    before: GroupRow,
    attributes: Attributes,
) -> Result<Value, ScimError> {
    check_name(tx, &attributes.display_name, Some(before.id)).await?;
    let members = member_user_ids(tx, &attributes.members).await?;
    let previous = groups::view(tx.conn(), before.clone()).await?;
    let row = GroupRow {
        name: attributes.display_name,
        scim_external_id: attributes.external_id,
        ..before.clone()
    };
    let current: BTreeSet<i64> = previous.users.iter().map(|member| member.user.id).collect();
    if row == before && current == members {
        let members = member_ids(tx.conn(), row.id).await?;
        return Ok(render(&row, &members, endpoint));
    }
    let admins = last_admin::before(tx.conn()).await?;
    group_store::update(tx.conn(), &row).await?;
    groups::set_members(tx, row.id, &members).await?;
    let refusal = groups::leaving(&before.name, "members");
    last_admin::keep_an_admin(tx.conn(), admins, &refusal).await?;
    let after = groups::view(tx.conn(), row.clone()).await?;
    tx.record(NewEvent {
        event_type: EventType::GroupUpdated.as_str(),
        data: Some(payload(&after)),
        pre_data: Some(payload(&previous)),
        ..NewEvent::default()
    })
    .await?;
    let members = member_ids(tx.conn(), row.id).await?;
    Ok(render(&row, &members, endpoint))
}

/// `PUT /Groups/:id`.
pub async fn replace(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let before = require(tx.conn(), id).await?;
    let attributes = attributes(body_object(body)?)?;
    store(tx, endpoint, before, attributes).await
}

/// `PATCH /Groups/:id` (members added and removed one by one, as Okta and Entra send them).
pub async fn modify(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let before = require(tx.conn(), id).await?;
    let members = member_ids(tx.conn(), before.id).await?;
    let mut current = Map::new();
    current.insert("displayName".to_owned(), json!(before.name));
    if let Some(external_id) = &before.scim_external_id {
        current.insert("externalId".to_owned(), json!(external_id));
    }
    if !members.is_empty() {
        let members: Vec<Value> = members
            .iter()
            .map(|member| json!({"value": member}))
            .collect();
        current.insert("members".to_owned(), Value::Array(members));
    }
    patch::apply(&mut current, body, &SHAPE)?;
    let attributes = attributes(&current)?;
    store(tx, endpoint, before, attributes).await
}

/// `DELETE /Groups/:id`.
pub async fn delete(tx: &mut WriteTx, id: &str) -> Result<(), ScimError> {
    let row = require(tx.conn(), id).await?;
    groups::delete_provisioned(tx, row).await?;
    Ok(())
}

/// `DELETE /api/admin/groups/scim-groups`: every provisioned group.
pub async fn delete_all(tx: &mut WriteTx) -> Result<usize, ApiError> {
    let rows = group_store::list_scim(tx.conn()).await?;
    let count = rows.len();
    for row in rows {
        groups::delete_provisioned(tx, row).await?;
    }
    Ok(count)
}
