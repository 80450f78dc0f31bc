//! Addons (Unleash's integrations), provider `webhook` only: their configuration (`/api/admin/addons`, each
//! write audited as `addon-config-*`) and their delivery log (`/api/admin/addons/:id/events`). The sending
//! itself is `crate::webhooks`'; the outbox rows are written with each event (`store::WriteTx::record`).
//! Sensitive parameters are kept in clear (they are sent) and never shown: every answer and event has
//! [`MASK`] in their place, and an update that sends the mask back keeps the stored value.

use super::events::{
    event_from_row, payload, Event, EventType, PersonalFields, MAX_LIMIT, MAX_OFFSET,
};
use super::webhook_targets::WebhookTargets;
use crate::store::addons::{self as addon_store, AddonRow, DeliveryLogRow};
use crate::store::WriteTx;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sqlx::AnyConnection;
use utoipa::{IntoParams, ToSchema};
use vexil_shared::ApiError;

/// What a sensitive parameter shows instead of its value (Unleash's).
pub const MASK: &str = "*****";

/// The one provider.
pub const WEBHOOK: &str = "webhook";

/// A parameter of a provider (addonParameterSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonParameter {
    pub name: String,
    pub display_name: String,
    #[serde(rename = "type")]
    pub parameter_type: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    pub required: bool,
    /// Never shown: answers carry `*****` instead.
    pub sensitive: bool,
}

/// A provider (addonTypeSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonProvider {
    pub name: String,
    pub display_name: String,
    pub documentation_url: String,
    pub description: String,
    pub parameters: Vec<AddonParameter>,
    /// The event types an addon of this provider can listen to.
    pub events: Vec<String>,
}

/// The webhook's parameters: (name, display name, type, description, placeholder, required, sensitive).
type ParameterSpec = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    bool,
);

const WEBHOOK_PARAMETERS: [ParameterSpec; 6] = [
    ("url", "Webhook URL", "url",
     "(Required) The http(s) URL every matching event is POSTed to, retried with backoff until it answers 2xx",
     None, true, true),
    ("contentType", "Content-Type", "text",
     "(Optional) The Content-Type header to use. Defaults to \"application/json\".",
     Some("application/json"), false, false),
    ("authorization", "Authorization", "text",
     "(Optional) The Authorization header to use. Not used if left blank.", Some(""), false, true),
    ("bodyTemplate", "Body template", "textfield",
     "(Optional) The body, with {{event.type}}, {{event.data.name}}… replaced by the event's fields. Empty: the event as JSON.",
     Some("{\n  \"event\": \"{{event.type}}\",\n  \"createdBy\": \"{{event.createdBy}}\",\n  \"featureToggle\": \"{{event.data.name}}\"\n}"),
     false, false),
    ("customHeaders", "Extra HTTP Headers", "textfield",
     "(Optional) Extra headers: a JSON object of header names to string values.",
     Some("{\n  \"ENVIRONMENT\": \"development\"\n}"), false, true),
    ("signingSecret", "Signing secret", "text",
     "(Optional) With it, each delivery carries X-Vexil-Signature: sha256=<hex HMAC-SHA256 of the body with this secret>.",
     None, false, true),
];

fn is_sensitive(name: &str) -> bool {
    WEBHOOK_PARAMETERS
        .iter()
        .any(|(parameter, .., sensitive)| *parameter == name && *sensitive)
}

/// The providers `GET /api/admin/addons` lists.
pub fn providers() -> Vec<AddonProvider> {
    let parameters = WEBHOOK_PARAMETERS
        .iter()
        .map(
            |(
                name,
                display_name,
                parameter_type,
                description,
                placeholder,
                required,
                sensitive,
            )| {
                AddonParameter {
                    name: (*name).to_owned(),
                    display_name: (*display_name).to_owned(),
                    parameter_type: (*parameter_type).to_owned(),
                    description: (*description).to_owned(),
                    placeholder: placeholder.map(str::to_owned),
                    required: *required,
                    sensitive: *sensitive,
                }
            },
        )
        .collect();
    vec![AddonProvider {
        name: WEBHOOK.to_owned(),
        display_name: "Webhook".to_owned(),
        documentation_url: "https://docs.getunleash.io/integrate/webhook".to_owned(),
        description:
            "A Webhook is a generic way to post messages from Vexil to third party services."
                .to_owned(),
        parameters,
        events: EventType::ALL
            .iter()
            .map(|t| t.as_str().to_owned())
            .collect(),
    }]
}

/// An addon as the API shows it (addonSchema), sensitive parameters masked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addon {
    pub id: i64,
    pub provider: String,
    pub description: Option<String>,
    pub enabled: bool,
    #[schema(value_type = Object)]
    pub parameters: Map<String, Value>,
    pub events: Vec<String>,
    pub projects: Vec<String>,
    pub environments: Vec<String>,
}

/// `GET /api/admin/addons` (addonsSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AddonList {
    pub addons: Vec<Addon>,
    pub providers: Vec<AddonProvider>,
}

/// `POST /api/admin/addons`, `PUT /api/admin/addons/:id` (addonCreateUpdateSchema). On PUT, absent
/// `description`, `projects` and `environments` keep their value, and a sensitive parameter sent as
/// `*****` keeps its stored value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonInput {
    /// `webhook`.
    #[schema(pattern = r"^webhook$")]
    pub provider: String,
    pub description: Option<String>,
    pub enabled: bool,
    /// `url` (required, http or https), `contentType`, `authorization`, `bodyTemplate`, `customHeaders`
    /// (a JSON object of strings, as text), `signingSecret`: all strings.
    #[schema(value_type = Object)]
    pub parameters: Map<String, Value>,
    /// Event types (`GET /api/admin/addons` lists them under the provider).
    pub events: Vec<String>,
    /// Empty or absent: every project.
    pub projects: Option<Vec<String>>,
    /// Empty or absent: every environment.
    pub environments: Option<Vec<String>>,
}

/// The addon with its sensitive parameters masked.
fn view(row: &AddonRow) -> Addon {
    Addon {
        id: row.id,
        provider: row.provider.clone(),
        description: row.description.clone(),
        enabled: row.enabled,
        parameters: masked(&row.parameters),
        events: row.events.clone(),
        projects: row.projects.clone(),
        environments: row.environments.clone(),
    }
}

fn masked(parameters: &Map<String, Value>) -> Map<String, Value> {
    parameters
        .iter()
        .map(|(name, value)| {
            let shown = if is_sensitive(name) {
                Value::String(MASK.to_owned())
            } else {
                value.clone()
            };
            (name.clone(), shown)
        })
        .collect()
}

async fn require(conn: &mut AnyConnection, id: &str) -> Result<AddonRow, ApiError> {
    let missing = || ApiError::not_found(format!("Addon {id} does not exist"));
    let id: i64 = id.parse().map_err(|_| missing())?;
    addon_store::get(conn, id).await?.ok_or_else(missing)
}

pub async fn list(conn: &mut AnyConnection) -> Result<AddonList, ApiError> {
    let addons = addon_store::list(conn).await?.iter().map(view).collect();
    Ok(AddonList {
        addons,
        providers: providers(),
    })
}

pub async fn get(conn: &mut AnyConnection, id: &str) -> Result<Addon, ApiError> {
    Ok(view(&require(conn, id).await?))
}

/// Checks the parameters and returns them as they will be stored: a mask sent back takes `stored`'s
/// value, empty optional ones are dropped.
fn checked_parameters(
    given: Map<String, Value>,
    stored: Option<&Map<String, Value>>,
) -> Result<Map<String, Value>, ApiError> {
    let mut parameters = Map::new();
    for (name, value) in given {
        if !WEBHOOK_PARAMETERS.iter().any(|(known, ..)| *known == name) {
            return Err(ApiError::invalid_field(
                format!("parameters.{name}"),
                format!("parameters.{name} is not a parameter of the webhook provider"),
            ));
        }
        let text = match value {
            Value::Null => continue,
            Value::String(text) => text,
            _ => {
                return Err(ApiError::invalid_field(
                    format!("parameters.{name}"),
                    format!("parameters.{name} must be a string"),
                ))
            }
        };
        let text = match stored.and_then(|stored| stored.get(&name)) {
            Some(Value::String(kept)) if text == MASK && is_sensitive(&name) => kept.clone(),
            _ => text,
        };
        if text.is_empty() {
            continue;
        }
        parameters.insert(name, Value::String(text));
    }
    match parameters.get("url").and_then(Value::as_str) {
        None => {
            return Err(ApiError::invalid_field(
                "parameters.url",
                "parameters.url is required",
            ))
        }
        Some(text) => check_url(text)?,
    }
    if let Some(Value::String(headers)) = parameters.get("customHeaders") {
        custom_headers(headers)?;
    }
    for name in ["contentType", "authorization"] {
        if let Some(Value::String(value)) = parameters.get(name) {
            if !is_header_value(value) {
                return Err(ApiError::invalid_field(
                    format!("parameters.{name}"),
                    format!("parameters.{name} is not a valid header value"),
                ));
            }
        }
    }
    Ok(parameters)
}

fn check_url(text: &str) -> Result<(), ApiError> {
    let parsed = url::Url::parse(text).map_err(|error| {
        ApiError::invalid_field(
            "parameters.url",
            format!("parameters.url is not a URL: {error}"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(ApiError::invalid_field(
            "parameters.url",
            "parameters.url must be an http or https URL with a host",
        ));
    }
    Ok(())
}

/// The `customHeaders` parameter (a JSON object of header names to strings, as text), read and checked.
pub fn custom_headers(text: &str) -> Result<Vec<(String, String)>, ApiError> {
    let invalid = |why: &str| {
        ApiError::invalid_field(
            "parameters.customHeaders",
            format!("parameters.customHeaders {why}"),
        )
    };
    let object: Map<String, Value> = serde_json::from_str(text)
        .map_err(|_| invalid("must be a JSON object of header names to strings"))?;
    object
        .into_iter()
        .map(|(name, value)| {
            let Value::String(value) = value else {
                return Err(invalid(&format!("[\"{name}\"] must be a string")));
            };
            if !is_header_name(&name) || !is_header_value(&value) {
                return Err(invalid(&format!("[\"{name}\"] is not a valid header")));
            }
            Ok((name, value))
        })
        .collect()
}

/// RFC 9110's token characters.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Visible ASCII, spaces and tabs (no line breaks, no other control characters).
fn is_header_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

fn check_list(field: &str, values: &[String]) -> Result<(), ApiError> {
    if values.iter().any(|value| value.trim().is_empty()) {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must not hold an empty name"),
        ));
    }
    Ok(())
}

fn checked_row(
    id: i64,
    input: AddonInput,
    stored: Option<&AddonRow>,
    created_at: Timestamp,
) -> Result<AddonRow, ApiError> {
    if input.provider != WEBHOOK {
        return Err(ApiError::validation(format!(
            "Unknown addon provider {}: the only provider is {WEBHOOK}",
            input.provider
        )));
    }
    for event in &input.events {
        if !EventType::ALL.iter().any(|t| t.as_str() == event) {
            return Err(ApiError::invalid_field(
                "events",
                format!("events: {event} is not a known event type"),
            ));
        }
    }
    let projects = input
        .projects
        .or_else(|| stored.map(|row| row.projects.clone()))
        .unwrap_or_default();
    let environments = input
        .environments
        .or_else(|| stored.map(|row| row.environments.clone()))
        .unwrap_or_default();
    check_list("projects", &projects)?;
    check_list("environments", &environments)?;
    let parameters = checked_parameters(input.parameters, stored.map(|row| &row.parameters))?;
    Ok(AddonRow {
        id,
        provider: input.provider,
        description: input
            .description
            .or_else(|| stored.and_then(|row| row.description.clone())),
        enabled: input.enabled,
        parameters,
        events: input.events,
        projects,
        environments,
        created_at,
    })
}

/// The check of the target an addon row will send to ([`WebhookTargets::check_url`]).
async fn check_target(row: &AddonRow, targets: WebhookTargets) -> Result<(), ApiError> {
    let url = row
        .parameters
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match url::Url::parse(url) {
        Ok(url) => targets.check_url(&url).await,
        Err(_) => Ok(()),
    }
}

pub async fn create(
    tx: &mut WriteTx,
    input: AddonInput,
    targets: WebhookTargets,
) -> Result<Addon, ApiError> {
    let mut row = checked_row(0, input, None, tx.now())?;
    check_target(&row, targets).await?;
    row.id = addon_store::next_id(tx.conn()).await?;
    addon_store::insert(tx.conn(), &row).await?;
    let addon = view(&row);
    tx.record(EventType::AddonConfigCreated.instance_wide(Some(payload(&addon)), None))
        .await?;
    Ok(addon)
}

pub async fn update(
    tx: &mut WriteTx,
    id: &str,
    input: AddonInput,
    targets: WebhookTargets,
) -> Result<Addon, ApiError> {
    let stored = require(tx.conn(), id).await?;
    let row = checked_row(stored.id, input, Some(&stored), stored.created_at)?;
    check_target(&row, targets).await?;
    addon_store::update(tx.conn(), &row).await?;
    let addon = view(&row);
    tx.record(
        EventType::AddonConfigUpdated
            .instance_wide(Some(payload(&addon)), Some(payload(&view(&stored)))),
    )
    .await?;
    Ok(addon)
}

pub async fn delete(tx: &mut WriteTx, id: &str) -> Result<(), ApiError> {
    let stored = require(tx.conn(), id).await?;
    addon_store::delete(tx.conn(), stored.id).await?;
    tx.record(EventType::AddonConfigDeleted.instance_wide(None, Some(payload(&view(&stored)))))
        .await?;
    Ok(())
}

/// One finished delivery (integrationEventSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationEvent {
    /// Increasing, as a string.
    pub id: String,
    pub integration_id: i64,
    /// When the delivery succeeded or failed for good.
    pub created_at: String,
    /// `success` or `failed`.
    pub state: String,
    pub state_details: String,
    pub event: Event,
    /// `attempts`, and the last `statusCode` when the receiver answered.
    #[schema(value_type = Object)]
    pub details: Value,
}

/// `GET /api/admin/addons/:id/events` (integrationEventsSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationEvents {
    pub integration_events: Vec<IntegrationEvent>,
}

/// Paging of the delivery log.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// At most this many, default 50, at most 1000.
    #[param(maximum = 1000)]
    pub limit: Option<u32>,
    /// How many to skip, default 0.
    #[param(maximum = 2147483647)]
    pub offset: Option<u32>,
}

fn log_entry(row: DeliveryLogRow, personal: PersonalFields) -> IntegrationEvent {
    IntegrationEvent {
        id: row.log_id.to_string(),
        integration_id: row.addon_id,
        created_at: Timestamp::from_millis(row.finished_ms)
            .unwrap_or(Timestamp::EPOCH)
            .to_string(),
        state: row.state,
        state_details: row.state_details,
        event: event_from_row(row.event, personal),
        details: row.details,
    }
}

/// The addon's finished deliveries, newest first (pending ones are not in it yet).
pub async fn delivery_log(
    conn: &mut AnyConnection,
    id: &str,
    query: LogQuery,
    personal: PersonalFields,
) -> Result<IntegrationEvents, ApiError> {
    let limit = query.limit.unwrap_or(50);
    if limit > MAX_LIMIT {
        return Err(ApiError::invalid_field(
            "limit",
            format!("limit must be at most {MAX_LIMIT}"),
        ));
    }
    let offset = query.offset.unwrap_or(0);
    if offset > MAX_OFFSET {
        return Err(ApiError::invalid_field(
            "offset",
            format!("offset must be at most {MAX_OFFSET}"),
        ));
    }
    let addon = require(conn, id).await?;
    let rows = addon_store::log(conn, addon.id, i64::from(offset), i64::from(limit)).await?;
    Ok(IntegrationEvents {
        integration_events: rows
            .into_iter()
            .map(|row| log_entry(row, personal))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parameters(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_mask_sent_back_keeps_the_secret_and_answers_mask_it() {
        let stored =
            parameters(json!({"url": "http://a.example/x", "authorization": "Bearer s3cret"}));
        let given =
            parameters(json!({"url": MASK, "authorization": MASK, "contentType": "text/plain"}));
        let kept = checked_parameters(given, Some(&stored)).unwrap();
        assert_eq!(kept["authorization"], "Bearer s3cret");
        assert_eq!(kept["url"], "http://a.example/x");
        let shown = masked(&kept);
        assert_eq!(shown["authorization"], MASK);
        assert_eq!(shown["url"], MASK);
        assert_eq!(shown["contentType"], "text/plain");
    }

    #[test]
    fn parameters_are_checked() {
        for (given, message) in [
            (json!({}), "parameters.url is required"),
            (json!({"url": "ftp://a.example"}), "http or https"),
            (json!({"url": "not a url"}), "not a URL"),
            (json!({"url": "http://a", "nope": "x"}), "not a parameter"),
            (
                json!({"url": "http://a", "contentType": 3}),
                "must be a string",
            ),
            (
                json!({"url": "http://a", "customHeaders": "[1]"}),
                "JSON object",
            ),
            (
                json!({"url": "http://a", "customHeaders": "{\"a\": 1}"}),
                "must be a string",
            ),
            (json!({"url": MASK}), "not a URL"),
        ] {
            let error = checked_parameters(parameters(given.clone()), None).unwrap_err();
            assert!(
                error.message.contains(message),
                "{given}: {}",
                error.message
            );
        }
    }
}
