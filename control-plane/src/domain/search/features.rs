//! `GET /api/admin/search/features`: flags found by text and filters, sorted and paged, with the total.

use super::{parse_dated, parse_page, parse_set, parse_words, Operators};
use crate::domain::events::EventType;
use crate::domain::favorites;
use crate::domain::lifecycle::LifecycleStage;
use crate::domain::tags::Tag;
use crate::model::change_request::ChangeRequestState;
use crate::store::favorites::Favorite;
use crate::store::features::FeatureRow;
use crate::store::lifecycle::StageRow;
use crate::store::search::features::{
    self as search_store, EnvironmentState, FeatureOrder, FeatureSearch, TagFilter, TagRule,
};
use crate::store::search::Match;
use crate::store::segments as segment_store;
use crate::store::tags as tag_store;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeSet, HashMap};
use utoipa::{IntoParams, ToSchema};
use vexil_shared::ApiError;

/// The query of `GET /api/admin/search/features` (Unleash's parameters; others are ignored).
#[derive(Debug, Clone, Default, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeatureSearchQuery {
    /// Flags whose name or description contains this, ignoring case; terms separated by commas match any.
    #[param(example = "checkout")]
    pub query: Option<String>,
    /// Project ids with an operator: IS, IS_NOT, IS_ANY_OF or IS_NONE_OF.
    #[param(example = "IS:default")]
    pub project: Option<String>,
    /// Flag types with an operator: IS, IS_NOT, IS_ANY_OF or IS_NONE_OF.
    #[param(rename = "type", example = "IS:release")]
    pub feature_type: Option<String>,
    /// `active` or `stale` with an operator: IS, IS_NOT, IS_ANY_OF or IS_NONE_OF.
    #[param(example = "IS:active")]
    pub state: Option<String>,
    /// Current lifecycle stages (`initial`, `pre-live`, `live`, `completed`, `archived`) with an operator:
    /// IS, IS_NOT, IS_ANY_OF or IS_NONE_OF.
    #[param(example = "IS:live")]
    pub lifecycle: Option<String>,
    /// `<environment>:enabled` or `<environment>:disabled`; repeated, a flag in any of the states matches.
    #[param(example = json!(["production:enabled"]))]
    pub status: Option<Vec<String>>,
    /// Tags `type:value` with an operator: INCLUDE, INCLUDE_ANY_OF (any of them), INCLUDE_ALL_OF (all),
    /// DO_NOT_INCLUDE, EXCLUDE_IF_ANY_OF (none of them) or EXCLUDE_ALL (not all of them).
    #[param(example = "INCLUDE:simple:my_tag")]
    pub tag: Option<String>,
    /// `IS:true` for archived flags only; `IS:false` (the default) for live flags only.
    #[param(example = "IS:true")]
    pub archived: Option<String>,
    /// `IS_BEFORE:yyyy-MM-dd` or `IS_ON_OR_AFTER:yyyy-MM-dd` (UTC).
    #[param(rename = "createdAt", example = "IS_ON_OR_AFTER:2026-01-28")]
    pub created_at: Option<String>,
    /// `name`, `type`, `project`, `stale`, `createdAt` (the default), or Vexil's additions `archivedAt` (for
    /// archived flags) and `updatedAt` (the flag's latest event: its last change); ties are sorted by name.
    #[param(rename = "sortBy", example = "name")]
    pub sort_by: Option<String>,
    /// `asc` (the default) or `desc`.
    #[param(rename = "sortOrder", example = "desc")]
    pub sort_order: Option<String>,
    /// Flags to skip, default 0, at most 2147483647.
    #[param(example = "0")]
    pub offset: Option<String>,
    /// At most this many flags, default 50, at most 1000.
    #[param(example = "50")]
    pub limit: Option<String>,
    /// `true`: the caller's favourite flags first, each part in the order asked; `false` (the default): no
    /// such grouping.
    #[param(rename = "favoritesFirst", example = "true")]
    pub favorites_first: Option<String>,
}

impl FeatureSearchQuery {
    /// The query from its parameters in order: `status` may repeat, any other known one may not.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Result<FeatureSearchQuery, ApiError> {
        let mut query = FeatureSearchQuery::default();
        for (name, value) in pairs {
            let slot = match name.as_str() {
                "status" => {
                    query.status.get_or_insert_with(Vec::new).push(value);
                    continue;
                }
                "query" => &mut query.query,
                "project" => &mut query.project,
                "type" => &mut query.feature_type,
                "state" => &mut query.state,
                "lifecycle" => &mut query.lifecycle,
                "tag" => &mut query.tag,
                "archived" => &mut query.archived,
                "createdAt" => &mut query.created_at,
                "sortBy" => &mut query.sort_by,
                "sortOrder" => &mut query.sort_order,
                "offset" => &mut query.offset,
                "limit" => &mut query.limit,
                "favoritesFirst" => &mut query.favorites_first,
                _ => continue,
            };
            if slot.replace(value).is_some() {
                return Err(ApiError::validation(format!(
                    "{name} is given more than once"
                )));
            }
        }
        Ok(query)
    }

    /// The search of the user `user_id` (whose favourites may come first; an API token, with a negative id,
    /// has none).
    fn to_search(&self, user_id: i64) -> Result<FeatureSearch, ApiError> {
        let terms = self
            .query
            .as_deref()
            .map(|query| {
                query
                    .split(',')
                    .map(|term| term.trim().to_lowercase())
                    .filter(|term| !term.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let project = self
            .project
            .as_deref()
            .map(|value| parse_set("project", value, Operators::All))
            .transpose()?;
        let feature_type = self
            .feature_type
            .as_deref()
            .map(|value| parse_set("type", value, Operators::All))
            .transpose()?;
        let stale = self
            .state
            .as_deref()
            .map(|value| {
                let set = parse_words("state", value, Operators::All, &["active", "stale"])?;
                let stale = |words: Vec<String>| -> Vec<bool> {
                    words.iter().map(|word| word == "stale").collect()
                };
                Ok::<_, ApiError>(match set {
                    Match::AnyOf(words) => Match::AnyOf(stale(words)),
                    Match::NoneOf(words) => Match::NoneOf(stale(words)),
                })
            })
            .transpose()?;
        let lifecycle = self
            .lifecycle
            .as_deref()
            .map(|value| {
                let stages: Vec<&str> = LifecycleStage::ALL
                    .iter()
                    .map(|stage| stage.as_str())
                    .collect();
                parse_words("lifecycle", value, Operators::All, &stages)
            })
            .transpose()?;
        let archived = match self.archived.as_deref() {
            None | Some("IS:false") => false,
            Some("IS:true") => true,
            Some(other) => {
                return Err(ApiError::validation(format!(
                    "archived must be IS:true or IS:false; got \"{other}\""
                )))
            }
        };
        let states = self
            .status
            .iter()
            .flatten()
            .map(|status| environment_state(status))
            .collect::<Result<Vec<_>, _>>()?;
        let tags = self.tag.as_deref().map(tag_filter).transpose()?;
        let (mut created_before, mut created_from) = (None, None);
        if let Some(value) = self.created_at.as_deref() {
            match parse_dated("createdAt", value, &["IS_BEFORE", "IS_ON_OR_AFTER"])? {
                ("IS_BEFORE", day) => created_before = Some(day),
                (_, day) => created_from = Some(day),
            }
        }
        let order = match self.sort_by.as_deref() {
            None | Some("createdAt") => FeatureOrder::CreatedAt,
            Some("name") => FeatureOrder::Name,
            Some("type") => FeatureOrder::Type,
            Some("project") => FeatureOrder::Project,
            Some("stale") => FeatureOrder::Stale,
            Some("archivedAt") => FeatureOrder::ArchivedAt,
            Some("updatedAt") => FeatureOrder::UpdatedAt,
            Some(other) => {
                return Err(ApiError::validation(format!(
                    "sortBy must be one of name, type, project, stale, createdAt, archivedAt, updatedAt; got \"{other}\""
                )))
            }
        };
        let descending = match self.sort_order.as_deref() {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => {
                return Err(ApiError::validation(format!(
                    "sortOrder must be asc or desc; got \"{other}\""
                )))
            }
        };
        let favorites_first = match self.favorites_first.as_deref() {
            None | Some("false") => None,
            Some("true") => (user_id >= 0).then_some(user_id),
            Some(other) => {
                return Err(ApiError::invalid_field(
                    "favoritesFirst",
                    format!("favoritesFirst must be true or false; got \"{other}\""),
                ))
            }
        };
        let (offset, limit) = parse_page(self.offset.as_deref(), self.limit.as_deref())?;
        Ok(FeatureSearch {
            terms,
            project,
            feature_type,
            stale,
            lifecycle,
            archived,
            states,
            tags,
            created_before,
            created_from,
            order,
            descending,
            favorites_first,
            offset,
            limit,
        })
    }
}

/// `INCLUDE_ANY_OF:simple:a,team:b` → the rule and the `(type, value)` pairs.
fn tag_filter(value: &str) -> Result<TagFilter, ApiError> {
    let bad = |why: &str| {
        ApiError::validation(format!(
            "tag must be an operator (INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, \
             EXCLUDE_IF_ANY_OF or EXCLUDE_ALL) and type:value tags, as in INCLUDE:simple:beta; {why} in \"{value}\""
        ))
    };
    let (operator, list) = value.split_once(':').ok_or_else(|| bad("no operator"))?;
    let rule = match operator {
        "INCLUDE" | "INCLUDE_ANY_OF" => TagRule::AnyOf,
        "INCLUDE_ALL_OF" => TagRule::AllOf,
        "DO_NOT_INCLUDE" | "EXCLUDE_IF_ANY_OF" => TagRule::NoneOf,
        "EXCLUDE_ALL" => TagRule::NotAllOf,
        _ => return Err(bad("an unknown operator")),
    };
    let mut tags: Vec<(String, String)> = Vec::new();
    for tag in list.split(',') {
        let (tag_type, tag_value) = tag
            .trim()
            .split_once(':')
            .filter(|(tag_type, tag_value)| !tag_type.is_empty() && !tag_value.is_empty())
            .ok_or_else(|| bad("a tag without type:value"))?;
        let pair = (tag_type.to_owned(), tag_value.to_owned());
        if !tags.contains(&pair) {
            tags.push(pair);
        }
    }
    Ok(TagFilter { tags, rule })
}

/// `production:enabled` → on in production.
fn environment_state(status: &str) -> Result<EnvironmentState, ApiError> {
    let bad = || {
        ApiError::validation(format!(
            "status must be <environment>:enabled or <environment>:disabled; got \"{status}\""
        ))
    };
    let (environment, state) = status.rsplit_once(':').ok_or_else(bad)?;
    let enabled = match state {
        "enabled" => true,
        "disabled" => false,
        _ => return Err(bad()),
    };
    if environment.is_empty() {
        return Err(bad());
    }
    Ok(EnvironmentState {
        environment: environment.to_owned(),
        enabled,
    })
}

/// `GET /api/admin/search/features` (searchFeaturesSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FeatureSearchResult {
    /// The page of matching flags.
    pub features: Vec<FeatureSearchItem>,
    /// How many flags match, on every page.
    pub total: i64,
}

/// A flag as the search lists it (featureSearchResponseSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSearchItem {
    pub name: String,
    pub description: Option<String>,
    /// `parent`, `child` or null.
    pub dependency_type: Option<String>,
    #[serde(rename = "type")]
    pub feature_type: String,
    pub project: String,
    pub stale: bool,
    /// Whether the caller marked it a favourite (always false for an API token: it has no user).
    pub favorite: bool,
    pub impression_data: bool,
    pub created_at: Option<String>,
    pub created_by: FeatureCreator,
    pub environments: Vec<FeatureSearchEnvironment>,
    /// The names of the segments the flag's strategies use, by name.
    pub segments: Vec<String>,
    pub archived_at: Option<String>,
    /// The flag's tags, by type and value.
    pub tags: Vec<Tag>,
    /// The flag's current lifecycle stage.
    pub lifecycle: CurrentStage,
}

/// A flag's current lifecycle stage, with when it entered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentStage {
    pub stage: LifecycleStage,
    /// The completed stage's status: kept or discarded.
    pub status: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub entered_stage_at: Timestamp,
}

/// A flag's current stage: archived, else the latest of its recorded stages, else initial.
fn current_stage(row: &FeatureRow, recorded: &[StageRow]) -> CurrentStage {
    if let Some(archived_at) = row.archived_at {
        return CurrentStage {
            stage: LifecycleStage::Archived,
            status: None,
            entered_stage_at: archived_at,
        };
    }
    recorded
        .iter()
        .filter_map(|entry| Some((LifecycleStage::named(&entry.stage)?, entry)))
        .max_by_key(|(stage, _)| *stage)
        .map_or(
            CurrentStage {
                stage: LifecycleStage::Initial,
                status: None,
                entered_stage_at: row.created_at,
            },
            |(stage, entry)| CurrentStage {
                stage,
                status: entry.status.clone(),
                entered_stage_at: entry.entered_at,
            },
        )
}

/// Who created the flag (the actor of its `feature-created` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureCreator {
    /// The user's id; -1337 for an API token (as in events); 0 when unknown.
    pub id: i64,
    pub name: String,
    /// Always empty: Vexil keeps no pictures.
    pub image_url: String,
}

/// A flag in one environment of its project (featureSearchEnvironmentSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSearchEnvironment {
    pub name: String,
    /// The same as `name`.
    pub environment: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub enabled: bool,
    pub sort_order: i64,
    pub has_strategies: bool,
    pub has_enabled_strategies: bool,
    /// The change requests waiting to change the flag here (Draft, In review or Approved), oldest first.
    pub change_request_ids: Vec<i64>,
}

/// The states of a change request that still waits: not applied, cancelled or rejected.
pub fn pending_states() -> Vec<&'static str> {
    ChangeRequestState::ALL
        .into_iter()
        .filter(|state| !state.is_final())
        .map(ChangeRequestState::as_str)
        .collect()
}

/// The flags matching the query, in its order, with the number of matches, as the user `user_id` sees them
/// (their favourites marked; a negative id: an API token, no favourites).
pub async fn search(
    conn: &mut AnyConnection,
    query: &FeatureSearchQuery,
    user_id: i64,
) -> Result<FeatureSearchResult, ApiError> {
    let search = query.to_search(user_id)?;
    let (rows, total) = search_store::search(conn, &search).await?;
    let names: Vec<String> = rows.iter().map(|row| row.name.clone()).collect();
    let mut environments: HashMap<String, Vec<FeatureSearchEnvironment>> = HashMap::new();
    for row in search_store::environments(conn, &names).await? {
        environments
            .entry(row.feature_name)
            .or_default()
            .push(FeatureSearchEnvironment {
                name: row.environment.clone(),
                environment: row.environment,
                environment_type: row.environment_type,
                enabled: row.enabled,
                sort_order: row.sort_order,
                has_strategies: false,
                has_enabled_strategies: false,
                change_request_ids: Vec::new(),
            });
    }
    for pending in search_store::pending_changes(conn, &names, &pending_states()).await? {
        if let Some(environment) = environments
            .get_mut(&pending.feature_name)
            .and_then(|list| list.iter_mut().find(|env| env.name == pending.environment))
        {
            environment
                .change_request_ids
                .push(pending.change_request_id);
        }
    }
    let mut segment_ids: HashMap<String, BTreeSet<i64>> = HashMap::new();
    for strategy in search_store::strategies(conn, &names).await? {
        if let Some(environment) = environments
            .get_mut(&strategy.feature_name)
            .and_then(|list| list.iter_mut().find(|env| env.name == strategy.environment))
        {
            environment.has_strategies = true;
            environment.has_enabled_strategies |= !strategy.disabled;
        }
        segment_ids
            .entry(strategy.feature_name)
            .or_default()
            .extend(strategy.segments);
    }
    let segment_names: HashMap<i64, String> = if segment_ids.values().any(|ids| !ids.is_empty()) {
        segment_store::list(conn)
            .await?
            .into_iter()
            .map(|segment| (segment.id, segment.name))
            .collect()
    } else {
        HashMap::new()
    };
    let mut creators = HashMap::new();
    for creator in search_store::creators(conn, &names, EventType::FeatureCreated.as_str()).await? {
        creators.insert(
            creator.feature_name,
            FeatureCreator {
                id: creator.created_by_user_id,
                name: creator.created_by,
                image_url: String::new(),
            },
        );
    }
    let (parents, children) = search_store::dependency_roles(conn, &names).await?;
    let favorites = favorites::of_user(conn, Favorite::Feature, user_id).await?;
    let mut tags: HashMap<String, Vec<Tag>> = HashMap::new();
    for row in tag_store::of_features(conn, &names).await? {
        tags.entry(row.feature_name).or_default().push(Tag {
            value: row.tag.value,
            tag_type: row.tag.tag_type,
            color: row.tag.color,
        });
    }
    let mut stages: HashMap<String, Vec<StageRow>> = HashMap::new();
    for entry in search_store::stages(conn, &names).await? {
        stages
            .entry(entry.feature_name)
            .or_default()
            .push(entry.stage);
    }
    let features = rows
        .into_iter()
        .map(|row| {
            let mut segments: Vec<String> = segment_ids
                .get(&row.name)
                .into_iter()
                .flatten()
                .filter_map(|id| segment_names.get(id).cloned())
                .collect();
            segments.sort();
            FeatureSearchItem {
                lifecycle: current_stage(
                    &row,
                    stages.get(&row.name).map(Vec::as_slice).unwrap_or_default(),
                ),
                environments: environments.remove(&row.name).unwrap_or_default(),
                created_by: creators
                    .remove(&row.name)
                    .unwrap_or_else(|| FeatureCreator {
                        id: 0,
                        name: "unknown".to_owned(),
                        image_url: String::new(),
                    }),
                segments,
                tags: tags.remove(&row.name).unwrap_or_default(),
                dependency_type: if children.contains(&row.name) {
                    Some("child".to_owned())
                } else if parents.contains(&row.name) {
                    Some("parent".to_owned())
                } else {
                    None
                },
                favorite: favorites.contains(&row.name),
                created_at: Some(row.created_at.to_string()),
                archived_at: row.archived_at.map(|at| at.to_string()),
                name: row.name,
                description: row.description,
                feature_type: row.feature_type,
                project: row.project_id,
                stale: row.stale,
                impression_data: row.impression_data,
            }
        })
        .collect();
    Ok(FeatureSearchResult { features, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn status_repeats_and_other_parameters_do_not() {
        let query = FeatureSearchQuery::from_pairs(pairs(&[
            ("status", "production:enabled"),
            ("status", "development:disabled"),
            ("unknown", "x"),
        ]))
        .unwrap();
        let search = query.to_search(1).unwrap();
        assert_eq!(
            search.states,
            vec![
                EnvironmentState {
                    environment: "production".to_owned(),
                    enabled: true
                },
                EnvironmentState {
                    environment: "development".to_owned(),
                    enabled: false
                },
            ]
        );
        assert!(!search.archived);
        assert_eq!(
            (search.order, search.descending),
            (FeatureOrder::CreatedAt, false)
        );
        assert!(FeatureSearchQuery::from_pairs(pairs(&[("limit", "1"), ("limit", "2")])).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        for (name, value) in [
            ("status", "production:on"),
            ("status", "production"),
            ("archived", "true"),
            ("state", "IS:potentially-stale"),
            ("createdAt", "IS:2026-01-01"),
            ("sortBy", "lastSeenAt"),
            ("sortOrder", "up"),
            ("tag", "simple:beta"),
            ("tag", "INCLUDE:beta"),
            ("tag", "INCLUDES:simple:beta"),
            ("project", "default"),
        ] {
            let query = FeatureSearchQuery::from_pairs(pairs(&[(name, value)])).unwrap();
            assert!(query.to_search(1).is_err(), "{name}={value}");
        }
    }
}
