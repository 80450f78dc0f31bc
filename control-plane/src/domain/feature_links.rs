//! A flag's links (Unleash's feature links): `POST /api/admin/projects/:p/features/:f/link`,
//! `PUT/DELETE …/link/:id`, listed as the flag's `links`. An `http(s)` URL and an optional title; each change
//! is one write with a `feature-metadata-updated` event (the specification names no event of its own for
//! links), so the event log shows who linked what.

use super::events::EventType;
use super::feature_lookup;
use crate::store::feature_links::{self as link_store, LinkRow};
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

const URL_MAX: usize = 10_000;
const TITLE_MAX: usize = 100;

/// Unleash's linkSchema: the body of a create or an update.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct LinkInput {
    /// An `http://` or `https://` URL, at most 10,000 characters.
    #[schema(pattern = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://\S+\s*$", max_length = 10000)]
    pub url: String,
    /// At most 100 characters.
    #[serde(default)]
    #[schema(max_length = 100)]
    pub title: Option<String>,
}

/// A link as a flag lists it (Unleash's featureSchema `links`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FeatureLink {
    pub id: String,
    pub url: String,
    pub title: Option<String>,
    pub feature: String,
}

impl FeatureLink {
    fn of(row: LinkRow) -> FeatureLink {
        FeatureLink {
            id: row.id,
            url: row.url,
            title: row.title,
            feature: row.feature_name,
        }
    }
}

/// The flag's links, oldest first.
pub async fn of_feature(
    conn: &mut AnyConnection,
    feature: &str,
) -> Result<Vec<FeatureLink>, ApiError> {
    Ok(link_store::of_feature(conn, feature)
        .await?
        .into_iter()
        .map(FeatureLink::of)
        .collect())
}

/// The links of flag `feature` of `project`, oldest first (404 for an unknown project or flag).
pub async fn of_feature_in(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
) -> Result<Vec<FeatureLink>, ApiError> {
    feature_lookup::require_in_project(conn, project, feature).await?;
    of_feature(conn, feature).await
}

fn checked(input: LinkInput) -> Result<(String, Option<String>), ApiError> {
    let url = input.url.trim().to_owned();
    let scheme_ok = url::Url::parse(&url)
        .is_ok_and(|parsed| matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some());
    if !scheme_ok || url.chars().count() > URL_MAX {
        return Err(ApiError::invalid_field(
            "url",
            format!("url must be an http:// or https:// address of at most {URL_MAX} characters"),
        ));
    }
    let title = input
        .title
        .map(|title| title.trim().to_owned())
        .filter(|title| !title.is_empty());
    if title
        .as_ref()
        .is_some_and(|title| title.chars().count() > TITLE_MAX)
    {
        return Err(ApiError::invalid_field(
            "title",
            format!("title must be at most {TITLE_MAX} characters"),
        ));
    }
    Ok((url, title))
}

async fn record(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    data: serde_json::Value,
    pre: Option<serde_json::Value>,
) -> Result<(), ApiError> {
    tx.record(NewEvent {
        event_type: EventType::FeatureMetadataUpdated.as_str(),
        project: Some(project.to_owned()),
        feature_name: Some(feature.to_owned()),
        data: Some(data),
        pre_data: pre,
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// Adds a link to flag `feature` of `project`.
pub async fn create(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    input: LinkInput,
) -> Result<FeatureLink, ApiError> {
    feature_lookup::require_in_project(tx.conn(), project, feature).await?;
    let (url, title) = checked(input)?;
    let row = LinkRow {
        id: uuid::Uuid::new_v4().simple().to_string(),
        feature_name: feature.to_owned(),
        url,
        title,
    };
    let now = tx.now();
    link_store::insert(tx.conn(), &row, now).await?;
    let link = FeatureLink::of(row);
    record(tx, project, feature, json!({"link": link}), None).await?;
    Ok(link)
}

async fn require(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    id: &str,
) -> Result<LinkRow, ApiError> {
    feature_lookup::require_in_project(tx.conn(), project, feature).await?;
    link_store::get(tx.conn(), feature, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Flag {feature} has no link {id}")))
}

/// Changes link `id` of the flag (its URL and title as sent).
pub async fn update(
    tx: &mut WriteTx,
    (project, feature, id): (&str, &str, &str),
    input: LinkInput,
) -> Result<(), ApiError> {
    let before = require(tx, project, feature, id).await?;
    let (url, title) = checked(input)?;
    let after = LinkRow {
        url,
        title,
        ..before.clone()
    };
    if after == before {
        return Ok(());
    }
    link_store::update(tx.conn(), &after).await?;
    let (new, old) = (FeatureLink::of(after), FeatureLink::of(before));
    record(
        tx,
        project,
        feature,
        json!({"link": new}),
        Some(json!({"link": old})),
    )
    .await
}

/// Removes link `id` of the flag.
pub async fn delete(
    tx: &mut WriteTx,
    (project, feature, id): (&str, &str, &str),
) -> Result<(), ApiError> {
    let before = require(tx, project, feature, id).await?;
    link_store::delete(tx.conn(), feature, id).await?;
    let old = FeatureLink::of(before);
    record(
        tx,
        project,
        feature,
        json!({"link": null}),
        Some(json!({"link": old})),
    )
    .await
}
