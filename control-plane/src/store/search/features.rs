//! SQL of `GET /api/admin/search/features`: the page of matching flags and their count, then what the page
//! shows of each flag (its environments, strategies, creator, pending change requests, and for the admin
//! UI its latest change), each read in one query for the page's flags only.

use super::{name_list, Conditions, Match, Value};
use crate::store::encoding::{flag, json};
use crate::store::features::FeatureRow;
use crate::store::lifecycle::{current_stage_sql, StageRow};
use crate::store::strategies::StrategyRow;
use crate::store::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

/// What the flags are sorted by (then by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureOrder {
    Name,
    Type,
    Project,
    Stale,
    CreatedAt,
    ArchivedAt,
    /// The flag's latest event (its last change); a flag without events first.
    UpdatedAt,
}

impl FeatureOrder {
    fn column(self) -> &'static str {
        match self {
            FeatureOrder::Name => "f.name",
            FeatureOrder::Type => "f.type",
            FeatureOrder::Project => "f.project_id",
            FeatureOrder::Stale => "f.stale",
            FeatureOrder::CreatedAt => "f.created_at",
            FeatureOrder::ArchivedAt => "f.archived_at",
            // Event ids grow with time; the index (feature_name, id) answers each flag's MAX at once.
            FeatureOrder::UpdatedAt => {
                "COALESCE((SELECT MAX(e.id) FROM events e WHERE e.feature_name = f.name), 0)"
            }
        }
    }
}

/// A flag's switch in one environment that the filter asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentState {
    pub environment: String,
    pub enabled: bool,
}

/// How a flag's tags must relate to the listed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagRule {
    /// It has at least one of them.
    AnyOf,
    /// It has every one of them.
    AllOf,
    /// It has none of them.
    NoneOf,
    /// It lacks at least one of them.
    NotAllOf,
}

/// A filter on the flags' tags: `(type, value)` pairs and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFilter {
    pub tags: Vec<(String, String)>,
    pub rule: TagRule,
}

/// Which flags to find, in which order, and which page of them.
#[derive(Debug, Clone)]
pub struct FeatureSearch {
    /// Lower case; a flag matches when its name or description contains any of them.
    pub terms: Vec<String>,
    pub project: Option<Match<String>>,
    pub feature_type: Option<Match<String>>,
    pub stale: Option<Match<bool>>,
    /// Current lifecycle stages (`store::lifecycle::current_stage_sql`).
    pub lifecycle: Option<Match<String>>,
    /// Archived flags only, or live flags only.
    pub archived: bool,
    /// A flag matches when it is in any of these states (none: no filter).
    pub states: Vec<EnvironmentState>,
    pub tags: Option<TagFilter>,
    pub created_before: Option<Timestamp>,
    pub created_from: Option<Timestamp>,
    pub order: FeatureOrder,
    pub descending: bool,
    /// The user whose favourite flags come first (then the others), each part in `order`.
    pub favorites_first: Option<i64>,
    pub offset: i64,
    pub limit: i64,
}

impl FeatureSearch {
    fn conditions(&self) -> Conditions {
        let mut conditions = Conditions::default();
        conditions.push(if self.archived {
            "f.archived_at IS NOT NULL".to_owned()
        } else {
            "f.archived_at IS NULL".to_owned()
        });
        conditions.containing(&["f.name", "f.description"], &self.terms);
        if let Some(project) = &self.project {
            conditions.matching_text("f.project_id", project);
        }
        if let Some(feature_type) = &self.feature_type {
            conditions.matching_text("f.type", feature_type);
        }
        if let Some(stale) = &self.stale {
            let stored = super::map_match(stale, |stale| Value::Integer(i64::from(*stale)));
            conditions.matching("f.stale", &stored);
        }
        if let Some(lifecycle) = &self.lifecycle {
            conditions.matching_text(&format!("({})", current_stage_sql("f")), lifecycle);
        }
        if !self.states.is_empty() {
            let mut alternatives = Vec::new();
            for state in &self.states {
                let environment = conditions.bind(Value::Text(state.environment.clone()));
                alternatives.push(if state.enabled {
                    format!(
                        "EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = f.name \
                         AND fe.environment = {environment} AND fe.enabled = 1)"
                    )
                } else {
                    // Off: the environment is the project's and the flag is not on there (no row reads as off).
                    format!(
                        "(EXISTS (SELECT 1 FROM project_environments pe WHERE pe.project_id = f.project_id \
                         AND pe.environment = {environment}) AND NOT EXISTS (SELECT 1 FROM feature_environments fe \
                         WHERE fe.feature_name = f.name AND fe.environment = {environment} AND fe.enabled = 1))"
                    )
                });
            }
            conditions.push(format!("({})", alternatives.join(" OR ")));
        }
        if let Some(filter) = &self.tags {
            let mut listed = Vec::new();
            for (tag_type, value) in &filter.tags {
                let tag_type = conditions.bind(Value::Text(tag_type.clone()));
                let value = conditions.bind(Value::Text(value.clone()));
                listed.push(format!(
                    "(ft.tag_type = {tag_type} AND ft.tag_value = {value})"
                ));
            }
            let held = format!(
                "(SELECT COUNT(*) FROM feature_tags ft WHERE ft.feature_name = f.name AND ({}))",
                listed.join(" OR ")
            );
            let count = filter.tags.len();
            conditions.push(match filter.rule {
                TagRule::AnyOf => format!("{held} > 0"),
                TagRule::AllOf => format!("{held} = {count}"),
                TagRule::NoneOf => format!("{held} = 0"),
                TagRule::NotAllOf => format!("{held} < {count}"),
            });
        }
        if let Some(before) = self.created_before {
            let before = conditions.bind(Value::Time(before));
            conditions.push(format!("f.created_at < {before}"));
        }
        if let Some(from) = self.created_from {
            let from = conditions.bind(Value::Time(from));
            conditions.push(format!("f.created_at >= {from}"));
        }
        conditions
    }
}

/// The page of matching flags and how many match in all.
pub async fn search(
    conn: &mut AnyConnection,
    search: &FeatureSearch,
) -> Result<(Vec<FeatureRow>, i64), StoreError> {
    let conditions = search.conditions();
    let clause = conditions.clause();
    let direction = if search.descending { "DESC" } else { "ASC" };
    let order = search.order.column();
    // A user id is a number: written into the statement, it leaves the bound parameters as the count's.
    let favorites = search
        .favorites_first
        .map(|user_id| {
            format!(
                "CASE WHEN EXISTS (SELECT 1 FROM favorite_features ff WHERE ff.user_id = {user_id} \
                 AND ff.feature_name = f.name) THEN 0 ELSE 1 END, "
            )
        })
        .unwrap_or_default();
    let sql = format!(
        "SELECT f.name, f.project_id, f.type, f.description, f.stale, f.impression_data, f.created_at, \
         f.archived_at, f.potentially_stale FROM features f {clause} ORDER BY {favorites}{order} {direction}, f.name {direction} \
         LIMIT {} OFFSET {}",
        search.limit, search.offset
    );
    let rows = conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(&mut *conn)
        .await?;
    let sql = format!("SELECT COUNT(*) FROM features f {clause}");
    let total = conditions
        .bind_scalars(sqlx::query_scalar(&sql))
        .fetch_one(conn)
        .await?;
    Ok((rows, total))
}

/// A flag's switch in one environment of its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEnvironmentRow {
    pub feature_name: String,
    pub environment: String,
    pub environment_type: String,
    pub sort_order: i64,
    pub enabled: bool,
}

impl FromRow<'_, AnyRow> for SearchEnvironmentRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SearchEnvironmentRow {
            feature_name: row.try_get("feature_name")?,
            environment: row.try_get("environment")?,
            environment_type: row.try_get("type")?,
            sort_order: row.try_get("sort_order")?,
            enabled: flag(row, "enabled")?,
        })
    }
}

/// The switches of these flags in each environment of their projects, in environment order.
pub async fn environments(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<SearchEnvironmentRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let sql = format!(
        "SELECT f.name AS feature_name, e.name AS environment, e.type, e.sort_order, \
         COALESCE(fe.enabled, 0) AS enabled FROM features f \
         JOIN project_environments pe ON pe.project_id = f.project_id \
         JOIN environments e ON e.name = pe.environment \
         LEFT JOIN feature_environments fe ON fe.feature_name = f.name AND fe.environment = e.name \
         WHERE f.name IN ({list}) ORDER BY e.sort_order, e.name"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// A recorded lifecycle stage of one of these flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchStageRow {
    pub feature_name: String,
    pub stage: StageRow,
}

impl FromRow<'_, AnyRow> for SearchStageRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SearchStageRow {
            feature_name: row.try_get("feature_name")?,
            stage: StageRow::from_row(row)?,
        })
    }
}

/// The recorded lifecycle stages (pre-live, live, completed) of these flags.
pub async fn stages(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<SearchStageRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let sql = format!(
        "SELECT feature_name, stage, status, status_value, entered_at FROM feature_lifecycles          WHERE feature_name IN ({list})"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// What the search shows of one strategy: where it is, whether it is on, its segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchStrategyRow {
    pub feature_name: String,
    pub environment: String,
    pub disabled: bool,
    pub segments: Vec<i64>,
}

impl FromRow<'_, AnyRow> for SearchStrategyRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SearchStrategyRow {
            feature_name: row.try_get("feature_name")?,
            environment: row.try_get("environment")?,
            disabled: flag(row, "disabled")?,
            segments: json(row, "segments")?,
        })
    }
}

/// The strategies of these flags, every environment.
pub async fn strategies(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<SearchStrategyRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let sql = format!(
        "SELECT feature_name, environment, disabled, segments FROM feature_strategies \
         WHERE feature_name IN ({list})"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// The strategies of these flags, every environment, by flag, environment and sortOrder (what an
/// environment serves, in brief, on the admin UI's flag list).
pub async fn rules(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<StrategyRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let sql = format!(
        "SELECT id, feature_name, environment, name, title, disabled, sort_order, constraints, parameters, \
         variants, segments, created_at FROM feature_strategies WHERE feature_name IN ({list}) \
         ORDER BY feature_name, environment, sort_order, created_at, id"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// A flag's latest event: who recorded it and when.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LatestEventRow {
    pub feature_name: String,
    pub created_by: String,
    pub created_at: Timestamp,
}

/// The latest event of each of these flags that has one.
pub async fn latest_events(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<LatestEventRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let sql = format!(
        "SELECT feature_name, created_by, created_at FROM events WHERE id IN \
         (SELECT MAX(id) FROM events WHERE feature_name IN ({list}) GROUP BY feature_name)"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// A change request in `states` with a change to a flag: the flag, the request's environment and id.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PendingChangeRow {
    pub feature_name: String,
    pub environment: String,
    pub change_request_id: i64,
}

/// The change requests in `states` (not yet applied, cancelled or rejected) that change these flags, by id.
pub async fn pending_changes(
    conn: &mut AnyConnection,
    names: &[String],
    states: &[&str],
) -> Result<Vec<PendingChangeRow>, StoreError> {
    if names.is_empty() || states.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let states: Vec<String> = states
        .iter()
        .map(|state| conditions.bind(Value::Text((*state).to_owned())))
        .collect();
    let sql = format!(
        "SELECT DISTINCT c.feature AS feature_name, r.environment, r.id AS change_request_id \
         FROM change_requests r JOIN change_request_changes c ON c.change_request_id = r.id \
         WHERE r.state IN ({}) AND c.feature IN ({list}) ORDER BY r.id",
        states.join(", ")
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// Who created a flag, as its `feature-created` event records.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CreatorRow {
    pub feature_name: String,
    pub created_by: String,
    pub created_by_user_id: i64,
}

/// The events of type `created` (the flag's creation) of these flags, oldest first (a flag deleted and
/// created again has two).
pub async fn creators(
    conn: &mut AnyConnection,
    names: &[String],
    created: &str,
) -> Result<Vec<CreatorRow>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    let list = name_list(&mut conditions, names);
    let created = conditions.bind(Value::Text(created.to_owned()));
    let sql = format!(
        "SELECT feature_name, created_by, created_by_user_id FROM events \
         WHERE feature_name IN ({list}) AND type = {created} ORDER BY id"
    );
    Ok(conditions
        .bind_rows(sqlx::query_as(&sql))
        .fetch_all(conn)
        .await?)
}

/// Which of these flags are a parent of another flag, and which a child: `(parents, children)`.
pub async fn dependency_roles(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<(Vec<String>, Vec<String>), StoreError> {
    if names.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut roles = Vec::new();
    for column in ["parent", "child"] {
        let mut conditions = Conditions::default();
        let list = name_list(&mut conditions, names);
        let sql = format!(
            "SELECT DISTINCT {column} FROM feature_dependencies WHERE {column} IN ({list})"
        );
        let found: Vec<String> = conditions
            .bind_scalars(sqlx::query_scalar(&sql))
            .fetch_all(&mut *conn)
            .await?;
        roles.push(found);
    }
    let children = roles.pop().unwrap_or_default();
    let parents = roles.pop().unwrap_or_default();
    Ok((parents, children))
}
