//! `GET /api/admin/search/events`: events found by text and filters, newest first, paged, with the total.

use super::{parse_dated, parse_ids, parse_page, parse_set, Operators};
use crate::domain::events::{event_from_row, Event, PersonalFields};
use crate::store::search::events::{self as search_store, EventSearch};
use crate::store::search::Match;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::{IntoParams, ToSchema};
use vexil_shared::ApiError;

/// One day in milliseconds: `to` takes its whole day.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The query of `GET /api/admin/search/events` (Unleash's parameters; others are ignored).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct EventSearchQuery {
    /// Events whose data or preData contains this text, ignoring case.
    #[param(example = "admin@example.com")]
    pub query: Option<String>,
    /// Event ids with IS or IS_ANY_OF.
    #[param(example = "IS:123")]
    pub id: Option<String>,
    /// Flag names with IS or IS_ANY_OF.
    #[param(example = "IS:my-flag")]
    pub feature: Option<String>,
    /// Project ids with IS or IS_ANY_OF.
    #[param(example = "IS:default")]
    pub project: Option<String>,
    /// Event types with IS or IS_ANY_OF.
    #[serde(rename = "type")]
    #[param(rename = "type", example = "IS:feature-created")]
    pub event_type: Option<String>,
    /// The ids of the users who caused the events (-1337: API tokens), with IS or IS_ANY_OF.
    #[param(example = "IS:2")]
    pub created_by: Option<String>,
    /// Environment names with IS or IS_ANY_OF.
    #[param(example = "IS:production")]
    pub environment: Option<String>,
    /// `IS:yyyy-MM-dd`: events created on or after that day (UTC).
    #[param(example = "IS:2026-01-01")]
    pub from: Option<String>,
    /// `IS:yyyy-MM-dd`: events created on or before that day (UTC), the whole day included.
    #[param(example = "IS:2026-01-31")]
    pub to: Option<String>,
    /// Events to skip, default 0, at most 2147483647.
    #[param(example = "0")]
    pub offset: Option<String>,
    /// At most this many events, default 50, at most 1000.
    #[param(example = "50")]
    pub limit: Option<String>,
}

impl EventSearchQuery {
    fn to_search(&self) -> Result<EventSearch, ApiError> {
        let set = |param: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|value| parse_set(param, value, Operators::Positive))
                .transpose()
        };
        let ids = |param: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|value| parse_ids(param, value))
                .transpose()
        };
        let day = |param: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|value| parse_dated(param, value, &["IS"]).map(|(_, day)| day))
                .transpose()
        };
        let before = day("to", &self.to)?
            .map(|day| {
                Timestamp::from_millis(day.millis() + DAY_MS).ok_or_else(|| {
                    ApiError::validation("to is past the last day this server can represent")
                })
            })
            .transpose()?;
        let (offset, limit) = parse_page(self.offset.as_deref(), self.limit.as_deref())?;
        Ok(EventSearch {
            text: self
                .query
                .as_deref()
                .map(str::to_lowercase)
                .filter(|text| !text.is_empty()),
            ids: ids("id", &self.id)?,
            feature: set("feature", &self.feature)?,
            project: set("project", &self.project)?,
            event_type: set("type", &self.event_type)?,
            environment: set("environment", &self.environment)?,
            created_by_user_id: ids("createdBy", &self.created_by)?,
            from: day("from", &self.from)?,
            before,
            offset,
            limit,
        })
    }
}

/// `GET /api/admin/search/events` (eventSearchResponseSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EventSearchResult {
    /// The page of matching events, newest first.
    pub events: Vec<Event>,
    /// How many events match, on every page.
    pub total: i64,
}

/// The events matching the query, newest first, with the number of matches, as a reader who sees
/// `personal` fields sees them: a text search of theirs does not look into the events they would see only
/// in part.
pub async fn search(
    conn: &mut AnyConnection,
    query: &EventSearchQuery,
    personal: PersonalFields,
) -> Result<EventSearchResult, ApiError> {
    let mut search = query.to_search()?;
    let hidden = personal.partly_hidden_types();
    if search.text.is_some() && !hidden.is_empty() {
        search.event_type = Some(match search.event_type.take() {
            None => Match::NoneOf(hidden),
            Some(Match::AnyOf(types)) => Match::AnyOf(
                types
                    .into_iter()
                    .filter(|event_type| !hidden.contains(event_type))
                    .collect(),
            ),
            Some(Match::NoneOf(mut types)) => {
                types.extend(hidden);
                Match::NoneOf(types)
            }
        });
    }
    let (rows, total) = search_store::search(conn, &search).await?;
    Ok(EventSearchResult {
        events: rows
            .into_iter()
            .map(|row| event_from_row(row, personal))
            .collect(),
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_takes_its_whole_day() {
        let query = EventSearchQuery {
            from: Some("IS:2026-11-01".to_owned()),
            to: Some("IS:2026-11-21".to_owned()),
            ..EventSearchQuery::default()
        };
        let search = query.to_search().unwrap();
        assert_eq!(search.from.unwrap().to_string(), "2026-11-01T00:00:00.000Z");
        assert_eq!(
            search.before.unwrap().to_string(),
            "2026-11-22T00:00:00.000Z"
        );
        let bad = EventSearchQuery {
            to: Some("2026-11-21".to_owned()),
            ..EventSearchQuery::default()
        };
        assert!(bad.to_search().is_err());
    }
}
