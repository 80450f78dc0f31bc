//! SCIM Users (`/scim/v2/Users`): Vexil users an identity provider provisions. Created as Viewers (their
//! groups, or an Admin, give more); their SCIM attributes are kept as given and their Vexil fields follow
//! from them (module `scim`). `active: false` keeps the user but ends their sessions and personal access
//! tokens and stops them signing in; `DELETE` deletes them as the admin API does. Neither may leave the
//! instance without an active Admin, of their own or through a group (`domain::last_admin`).

use super::patch::{self, Shape};
use super::{boolean, key_of, list_response, project, Endpoint, ListQuery, ScimError, USER_SCHEMA};
use crate::domain::events::{payload, EventType};
use crate::domain::last_admin;
use crate::domain::roles::RootRole;
use crate::domain::users::{self, validate_email};
use crate::store::users::{self as user_store, ScimUserRow, UserRow};
use crate::store::{Counter, NewEvent, WriteTx};
use serde_json::{json, Map, Value};
use sqlx::AnyConnection;
use vexil_shared::ApiError;

/// What PATCH knows of a User.
pub const SHAPE: Shape = Shape {
    schema: USER_SCHEMA,
    attributes: &[
        "externalId",
        "userName",
        "name",
        "displayName",
        "emails",
        "active",
    ],
    multi_valued: &["emails"],
    complex: &["name"],
};

const NAME_PARTS: [&str; 3] = ["formatted", "familyName", "givenName"];
const EMAIL_PARTS: [&str; 3] = ["value", "type", "primary"];

fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::bad("invalidValue", detail)
}

fn text(value: Value, attribute: &str) -> Result<Option<Value>, ScimError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) if text.trim().is_empty() => Ok(None),
        Value::String(text) => Ok(Some(Value::String(text))),
        other => Err(invalid(format!(
            "{attribute} must be a string, not {other}"
        ))),
    }
}

/// The sub-attributes of `value` (an object) named in `parts`, canonically spelt and checked.
fn complex(value: Value, attribute: &str, parts: &[&str]) -> Result<Option<Value>, ScimError> {
    let Value::Object(object) = value else {
        return match value {
            Value::Null => Ok(None),
            other => Err(invalid(format!(
                "{attribute} must be an object, not {other}"
            ))),
        };
    };
    let mut kept = Map::new();
    for (key, value) in object {
        let Some(part) = parts.iter().find(|part| part.eq_ignore_ascii_case(&key)) else {
            continue;
        };
        let checked = if *part == "primary" {
            match value {
                Value::Null => None,
                value => Some(Value::Bool(boolean(&value).ok_or_else(|| {
                    invalid(format!("{attribute}.primary must be a boolean"))
                })?)),
            }
        } else {
            text(value, &format!("{attribute}.{part}"))?
        };
        if let Some(checked) = checked {
            kept.insert((*part).to_owned(), checked);
        }
    }
    Ok((!kept.is_empty()).then_some(Value::Object(kept)))
}

/// The User attributes of a body or a patched resource, canonically spelt and checked; `userName` required.
pub fn normalize(input: &Map<String, Value>) -> Result<Map<String, Value>, ScimError> {
    let mut data = Map::new();
    for (key, value) in input {
        let key = super::strip_urn(key, USER_SCHEMA);
        let Some(attribute) = SHAPE
            .attributes
            .iter()
            .copied()
            .find(|known| known.eq_ignore_ascii_case(key))
        else {
            continue;
        };
        let value = value.clone();
        let checked = match attribute {
            "name" => complex(value, attribute, &NAME_PARTS)?,
            "emails" => {
                let elements = match value {
                    Value::Null => Vec::new(),
                    Value::Array(elements) => elements,
                    other => vec![other],
                };
                let mut emails = Vec::new();
                for element in elements {
                    let Some(email) = complex(element, "emails", &EMAIL_PARTS)? else {
                        continue;
                    };
                    let Some(Value::String(address)) = email.get("value") else {
                        return Err(invalid("Each of emails needs its value"));
                    };
                    validate_email(address.trim()).map_err(|_| {
                        invalid(format!("emails: {address:?} is not an e-mail address"))
                    })?;
                    emails.push(email);
                }
                (!emails.is_empty()).then_some(Value::Array(emails))
            }
            "active" => match value {
                Value::Null => None,
                value => Some(Value::Bool(
                    boolean(&value).ok_or_else(|| invalid("active must be a boolean"))?,
                )),
            },
            _ => text(value, attribute)?,
        };
        if let Some(checked) = checked {
            data.insert(attribute.to_owned(), checked);
        }
    }
    match data.get("userName") {
        Some(Value::String(user_name)) => {
            if user_name.chars().count() > 100 || user_name.contains(char::is_whitespace) {
                return Err(invalid(
                    "userName must be at most 100 characters, without spaces (it is the Vexil username)",
                ));
            }
        }
        _ => return Err(invalid("userName is required")),
    }
    Ok(data)
}

fn string<'a>(data: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    data.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

/// The Vexil fields of SCIM attributes: (username, name, e-mail, active).
fn vexil_fields(data: &Map<String, Value>) -> (String, Option<String>, Option<String>, bool) {
    let user_name = string(data, "userName").unwrap_or_default().to_owned();
    let name_part = |part: &str| {
        data.get("name")
            .and_then(|name| name.get(part))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    };
    let given_family = [name_part("givenName"), name_part("familyName")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let name = string(data, "displayName")
        .or(name_part("formatted"))
        .map(str::to_owned)
        .or((!given_family.is_empty()).then_some(given_family));
    let emails = data.get("emails").and_then(Value::as_array);
    let address = |email: &Value| {
        email
            .get("value")
            .and_then(Value::as_str)
            .map(str::trim)
            .map(str::to_owned)
    };
    let email = emails
        .and_then(|emails| {
            emails
                .iter()
                .find(|email| email.get("primary") == Some(&Value::Bool(true)))
                .or(emails.first())
        })
        .and_then(address)
        .or_else(|| {
            validate_email(&user_name)
                .is_ok()
                .then(|| user_name.clone())
        });
    let active = data.get("active") != Some(&Value::Bool(false));
    (user_name, name, email, active)
}

/// The User resource of a provisioned user.
pub fn render(row: &ScimUserRow, endpoint: &Endpoint) -> Value {
    let id = row.user.scim_id.clone().unwrap_or_default();
    let mut resource = match &row.data {
        Value::Object(data) => data.clone(),
        _ => Map::new(),
    };
    resource.insert("schemas".to_owned(), json!([USER_SCHEMA]));
    resource.insert("id".to_owned(), json!(id));
    let created = row.user.created_at.to_string();
    resource.insert(
        "meta".to_owned(),
        json!({
            "resourceType": "User",
            "created": created,
            "lastModified": created,
            "location": endpoint.location("Users", &id),
        }),
    );
    Value::Object(resource)
}

fn not_found(id: &str) -> ScimError {
    ScimError::not_found(format!("No provisioned user has the id {id}"))
}

async fn require(conn: &mut AnyConnection, id: &str) -> Result<ScimUserRow, ScimError> {
    user_store::get_by_scim_id(conn, id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Every provisioned user matching `query`, paged.
pub async fn list(
    conn: &mut AnyConnection,
    endpoint: &Endpoint,
    query: &ListQuery,
) -> Result<Value, ScimError> {
    let resources = user_store::list_scim(conn)
        .await?
        .iter()
        .map(|row| render(row, endpoint))
        .collect();
    list_response(resources, query, USER_SCHEMA)
}

/// One provisioned user, with the attributes asked.
pub async fn get(
    conn: &mut AnyConnection,
    endpoint: &Endpoint,
    id: &str,
    attributes: Option<&str>,
    excluded: Option<&str>,
) -> Result<Value, ScimError> {
    let row = require(conn, id).await?;
    Ok(project(
        render(&row, endpoint),
        attributes,
        excluded,
        USER_SCHEMA,
    ))
}

fn body_object(body: &Value) -> Result<&Map<String, Value>, ScimError> {
    body.as_object()
        .ok_or_else(|| ScimError::bad("invalidSyntax", "The body must be a User object"))
}

async fn check_unique(tx: &mut WriteTx, row: &UserRow) -> Result<(), ScimError> {
    if user_store::login_taken(
        tx.conn(),
        row.username.as_deref(),
        row.email.as_deref(),
        row.id,
    )
    .await?
    {
        return Err(ScimError::taken(
            "Another Vexil user has this userName or e-mail address",
        ));
    }
    Ok(())
}

/// `POST /Users`: a new Viewer user with a new SCIM id; `user-created`.
pub async fn create(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    body: &Value,
) -> Result<Value, ScimError> {
    let data = normalize(body_object(body)?)?;
    let (username, name, email, active) = vexil_fields(&data);
    let row = UserRow {
        id: tx.next_id(Counter::User).await?,
        name,
        email,
        username: Some(username),
        password_hash: None,
        root_role: RootRole::Viewer.id(),
        created_at: tx.now(),
        seen_at: None,
        scim_id: Some(uuid::Uuid::new_v4().to_string()),
        active,
    };
    check_unique(tx, &row).await?;
    user_store::insert(tx.conn(), &row).await?;
    let data = Value::Object(data);
    user_store::set_scim(tx.conn(), &row, &data).await?;
    tx.record(NewEvent {
        event_type: EventType::UserCreated.as_str(),
        data: Some(payload(&users::view(row.clone()))),
        ..NewEvent::default()
    })
    .await?;
    Ok(render(&ScimUserRow { user: row, data }, endpoint))
}

/// Stores `data` as user `before`'s new attributes: `user-updated` when the Vexil user changed, sessions and
/// tokens ended when they were deactivated. No change: nothing is written.
async fn store(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    before: ScimUserRow,
    data: Map<String, Value>,
) -> Result<Value, ScimError> {
    let (username, name, email, active) = vexil_fields(&data);
    let row = UserRow {
        name,
        email,
        username: Some(username),
        active,
        ..before.user.clone()
    };
    let data = Value::Object(data);
    if data == before.data && row.active == before.user.active {
        return Ok(render(&before, endpoint));
    }
    check_unique(tx, &row).await?;
    let admins = last_admin::before(tx.conn()).await?;
    user_store::set_scim(tx.conn(), &row, &data).await?;
    if before.user.active && !row.active {
        let refusal = "The last active Admin user cannot be deactivated";
        last_admin::keep_an_admin(tx.conn(), admins, refusal).await?;
        user_store::end_sessions_and_tokens(tx.conn(), row.id).await?;
    }
    let user = users::view(row.clone());
    let previous = users::view(before.user);
    // The SCIM attributes are the provider's; an event says what changed of the Vexil user (or that the
    // provider's attributes changed, with the same user on both sides).
    tx.record(NewEvent {
        event_type: EventType::UserUpdated.as_str(),
        data: Some(payload(&user)),
        pre_data: Some(payload(&previous)),
        ..NewEvent::default()
    })
    .await?;
    Ok(render(&ScimUserRow { user: row, data }, endpoint))
}

/// `PUT /Users/:id`: the attributes replaced (the id and creation stay).
pub async fn replace(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let before = require(tx.conn(), id).await?;
    let data = normalize(body_object(body)?)?;
    store(tx, endpoint, before, data).await
}

/// `PATCH /Users/:id`.
pub async fn modify(
    tx: &mut WriteTx,
    endpoint: &Endpoint,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let before = require(tx.conn(), id).await?;
    let mut data = match &before.data {
        Value::Object(data) => data.clone(),
        _ => Map::new(),
    };
    patch::apply(&mut data, body, &SHAPE)?;
    let data = normalize(&data)?;
    store(tx, endpoint, before, data).await
}

/// `DELETE /Users/:id`: the user goes with their sessions, tokens and memberships; `user-deleted`.
pub async fn delete(tx: &mut WriteTx, id: &str) -> Result<(), ScimError> {
    let row = require(tx.conn(), id).await?;
    users::delete_provisioned(tx, row.user).await?;
    Ok(())
}

/// `DELETE /api/admin/user-admin/scim-users`: every provisioned user (the last active Admin refused).
pub async fn delete_all(tx: &mut WriteTx) -> Result<usize, ApiError> {
    let rows = user_store::list_scim(tx.conn()).await?;
    let count = rows.len();
    for row in rows {
        users::delete_provisioned(tx, row.user).await?;
    }
    Ok(count)
}

/// Whether `body` names an attribute by its key in any case (for the tests of the normalisation).
pub fn has(body: &Map<String, Value>, name: &str) -> bool {
    key_of(body, name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vexil_fields_follow_the_attributes() {
        let data = normalize(
            json!({
                "schemas": [USER_SCHEMA], "USERNAME": "ada", "name": {"givenName": "Ada", "familyName": "Lovelace", "middleName": "x"},
                "emails": [{"value": "a@x.io", "primary": "False"}, {"value": "ada@x.io", "primary": true, "display": "d"}],
                "active": "False", "title": "engineer"
            })
            .as_object()
            .unwrap(),
        )
        .unwrap();
        assert!(has(&data, "userName") && !has(&data, "title") && !has(&data, "schemas"));
        assert_eq!(
            data["name"],
            json!({"givenName": "Ada", "familyName": "Lovelace"})
        );
        let (username, name, email, active) = vexil_fields(&data);
        assert_eq!(username, "ada");
        assert_eq!(name.as_deref(), Some("Ada Lovelace"));
        assert_eq!(email.as_deref(), Some("ada@x.io"));
        assert!(!active);
        let only = normalize(json!({"userName": "bob@x.io"}).as_object().unwrap()).unwrap();
        assert_eq!(vexil_fields(&only).2.as_deref(), Some("bob@x.io"));
        for bad in [
            json!({}),
            json!({"userName": "a b"}),
            json!({"userName": 3}),
            json!({"userName": "a", "active": 1}),
            json!({"userName": "a", "emails": [{"value": "nope"}]}),
        ] {
            assert_eq!(
                normalize(bad.as_object().unwrap()).unwrap_err().status,
                400,
                "{bad}"
            );
        }
    }
}
