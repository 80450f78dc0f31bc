//! A project at a glance, from its stored flags, events and usage: Unleash 8.2's `GET …/projects/:p/overview`,
//! `…/health-report`, `…/status`, `…/insights` and `…/dora` bodies, and what the UI's overview page shows.
//!
//! Health is Unleash's rating: the share of live flags neither stale nor potentially stale (100 without
//! flags); technical debt is its complement. A flag is potentially stale when it is not marked stale and is
//! older than its type's expected lifetime (`domain::feature_types`). Windows are the last 30 days and the 30
//! before. A project's members are the users with a role there, directly or through a group
//! (`project_access::members`, as Unleash counts them). The lifecycle summary counts the flags' current
//! stages as `domain::lifecycle` records them (usage moves a flag to pre-live and live,
//! `…/lifecycle/complete` to completed); no stage has an average duration.

use super::feature_types;
use super::features::{self, FeatureListItem};
use super::lifecycle;
use super::project_access::{self, Members};
use super::projects;
use crate::store::change_requests as change_request_store;
use crate::store::favorites::{self as favorite_store, Favorite};
use crate::store::project_overview::{self as store, TypeCounts, UnhealthyFlag, WindowCounts};
use crate::store::projects::ProjectRow;
use crate::store::segments as segment_store;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

const DAY_MS: i64 = 86_400_000;
/// The length of a statistics window, in days.
pub const WINDOW_DAYS: i64 = 30;

/// Statistics over the current window (the last 30 days) and the one before (60 to 30 days ago).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStats {
    /// Days from creation to the first switch-on in a production-type environment, on average, of the flags
    /// created in the current window that got there (0 when none did).
    pub avg_time_to_prod_current_window: f64,
    pub created_current_window: i64,
    pub created_past_window: i64,
    pub archived_current_window: i64,
    pub archived_past_window: i64,
    /// Events recorded in the project.
    pub project_activity_current_window: i64,
    pub project_activity_past_window: i64,
    pub project_members_added_current_window: i64,
}

/// An environment the project uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEnvironmentEntry {
    pub environment: String,
    pub change_requests_enabled: bool,
}

/// How many live flags of a type the project holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FeatureTypeCount {
    #[serde(rename = "type")]
    pub feature_type: String,
    pub count: i64,
}

/// How far the project is from its first flag seen by an SDK.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "status")]
pub enum OnboardingStatus {
    /// No flag yet.
    #[serde(rename = "onboarding-started")]
    OnboardingStarted,
    /// Flags, none reported by an SDK or edge yet: `feature` is the first.
    #[serde(rename = "first-flag-created")]
    FirstFlagCreated { feature: String },
    /// A flag of the project has been reported.
    #[serde(rename = "onboarded")]
    Onboarded,
}

/// `GET /api/admin/projects/:projectId/overview` (Unleash's `projectOverviewSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOverview {
    pub stats: ProjectStats,
    pub version: u32,
    pub name: String,
    pub description: Option<String>,
    pub default_stickiness: String,
    pub mode: String,
    /// No limit per project: always null.
    pub feature_limit: Option<i64>,
    pub members: i64,
    /// Deprecated by Unleash: `100 - technicalDebt`.
    pub health: i64,
    pub technical_debt: i64,
    pub environments: Vec<ProjectEnvironmentEntry>,
    pub feature_type_counts: Vec<FeatureTypeCount>,
    pub updated_at: Option<String>,
    pub archived_at: Option<String>,
    pub created_at: Option<String>,
    pub favorite: bool,
    pub onboarding_status: OnboardingStatus,
}

/// `GET /api/admin/projects/:projectId/health-report` (Unleash's `healthReportSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    pub version: u32,
    pub name: String,
    pub description: Option<String>,
    pub default_stickiness: String,
    pub mode: String,
    pub feature_limit: Option<i64>,
    pub members: i64,
    pub health: i64,
    pub technical_debt: i64,
    pub environments: Vec<ProjectEnvironmentEntry>,
    /// The live flags, as `GET …/projects/:projectId/features` lists them.
    pub features: Vec<FeatureListItem>,
    pub updated_at: Option<String>,
    pub created_at: Option<String>,
    pub favorite: bool,
    pub stats: ProjectStats,
    pub potentially_stale_count: i64,
    /// Live flags not marked stale (potentially stale ones included, as Unleash counts).
    pub active_count: i64,
    pub stale_count: i64,
}

/// `{current}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Current {
    pub current: i64,
}

/// `{total}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Total {
    pub total: i64,
}

/// A day's events in the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActivityCount {
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectResources {
    /// API tokens made for this project alone.
    pub api_tokens: i64,
    pub members: i64,
    /// Segments that belong to the project.
    pub segments: i64,
}

/// The live flags in a lifecycle stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleSummaryStage {
    /// Always null: stage entries are not recorded.
    pub average_days: Option<f64>,
    pub current_flags: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedStage {
    pub current_flags: i64,
    /// Flags archived in the last 30 days.
    #[serde(rename = "last30Days")]
    pub last_30_days: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleSummary {
    pub initial: LifecycleSummaryStage,
    pub pre_live: LifecycleSummaryStage,
    pub live: LifecycleSummaryStage,
    pub completed: LifecycleSummaryStage,
    pub archived: ArchivedStage,
}

/// `GET /api/admin/projects/:projectId/status` (Unleash's `projectStatusSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    /// The project's events per day over the last year, days without events left out.
    pub activity_count_by_date: Vec<ActivityCount>,
    pub resources: ProjectResources,
    /// Deprecated by Unleash: `100 - technicalDebt`.
    pub health: Current,
    pub technical_debt: Current,
    pub lifecycle_summary: LifecycleSummary,
    /// Stale and potentially stale live flags.
    pub stale_flags: Total,
}

/// A rating with the counts it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthInsight {
    pub rating: i64,
    pub active_count: i64,
    pub potentially_stale_count: i64,
    pub stale_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MembersInsight {
    pub current_members: i64,
    /// Members added in the last 30 days.
    pub change: i64,
}

/// A flag's days from creation to its first switch-on in a production-type environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DoraFeature {
    pub name: String,
    /// Whole days.
    pub time_to_production: i64,
}

/// `GET /api/admin/projects/:projectId/dora` (Unleash's `projectDoraMetricsSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DoraMetrics {
    /// The features' average; absent when no flag reached production.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_average: Option<f64>,
    pub features: Vec<DoraFeature>,
}

/// `GET /api/admin/projects/:projectId/insights` (Unleash's `projectInsightsSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectInsights {
    pub stats: ProjectStats,
    /// Deprecated by Unleash: the rating is `100 - technicalDebt.rating`.
    pub health: HealthInsight,
    pub technical_debt: HealthInsight,
    pub lead_time: DoraMetrics,
    pub feature_type_counts: Vec<FeatureTypeCount>,
    pub members: MembersInsight,
}

/// The live flags' health.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    pub total: i64,
    pub stale: i64,
    pub potentially_stale: i64,
}

impl Health {
    fn of(types: &[TypeCounts]) -> Health {
        types.iter().fold(Health::default(), |sum, one| Health {
            total: sum.total + one.total,
            stale: sum.stale + one.stale,
            potentially_stale: sum.potentially_stale + one.potentially_stale,
        })
    }

    /// Flags neither stale nor potentially stale.
    pub fn healthy(self) -> i64 {
        self.total - self.stale - self.potentially_stale
    }

    /// The percentage of healthy flags, rounded; 100 without flags.
    pub fn rating(self) -> i64 {
        if self.total <= 0 {
            return 100;
        }
        (self.healthy() * 100 + self.total / 2) / self.total
    }

    pub fn technical_debt(self) -> i64 {
        100 - self.rating()
    }
}

/// Whole days from `from` to `to` (never negative).
fn days_between(from: Timestamp, to: Timestamp) -> i64 {
    ((to.millis() - from.millis()) / DAY_MS).max(0)
}

fn ago(now_ms: i64, days: i64) -> Timestamp {
    Timestamp::from_millis(now_ms - days * DAY_MS).unwrap_or(Timestamp::EPOCH)
}

/// What the overview's answers share, read in a few statements.
struct Facts {
    project: ProjectRow,
    cutoffs: Vec<(String, Timestamp)>,
    environments: Vec<ProjectEnvironmentEntry>,
    types: Vec<TypeCounts>,
    windows: WindowCounts,
    members: Members,
    favorite: bool,
}

async fn facts(
    conn: &mut AnyConnection,
    project: &str,
    user_id: i64,
    now_ms: i64,
) -> Result<Facts, ApiError> {
    let row = projects::require(conn, project).await?;
    let environments = change_request_store::settings(conn, project)
        .await?
        .into_iter()
        .map(|setting| ProjectEnvironmentEntry {
            environment: setting.environment,
            change_requests_enabled: setting.enabled,
        })
        .collect();
    let cutoffs = feature_types::stale_cutoffs(conn, now_ms).await?;
    let types = store::type_counts(conn, project, &borrowed(&cutoffs)).await?;
    let since = ago(now_ms, WINDOW_DAYS);
    let windows = store::window_counts(conn, project, since, ago(now_ms, 2 * WINDOW_DAYS)).await?;
    let members = project_access::members(conn, Some(project), since)
        .await?
        .remove(project)
        .unwrap_or_default();
    let favorite = user_id >= 0
        && favorite_store::of_user(conn, Favorite::Project, user_id)
            .await?
            .contains(project);
    Ok(Facts {
        project: row,
        cutoffs,
        environments,
        types,
        windows,
        members,
        favorite,
    })
}

pub(crate) fn borrowed(cutoffs: &[(String, Timestamp)]) -> Vec<(&str, Timestamp)> {
    cutoffs
        .iter()
        .map(|(kind, at)| (kind.as_str(), *at))
        .collect()
}

impl Facts {
    fn cutoffs(&self) -> Vec<(&str, Timestamp)> {
        borrowed(&self.cutoffs)
    }

    fn health(&self) -> Health {
        Health::of(&self.types)
    }

    fn type_counts(&self) -> Vec<FeatureTypeCount> {
        self.types
            .iter()
            .map(|one| FeatureTypeCount {
                feature_type: one.feature_type.clone(),
                count: one.total,
            })
            .collect()
    }

    fn stats(&self, dora: &[(String, Timestamp, Timestamp)], now_ms: i64) -> ProjectStats {
        let since = ago(now_ms, WINDOW_DAYS);
        let recent: Vec<i64> = dora
            .iter()
            .filter(|(_, created, _)| *created >= since)
            .map(|(_, created, enabled)| days_between(*created, *enabled))
            .collect();
        let windows = &self.windows;
        ProjectStats {
            avg_time_to_prod_current_window: average(&recent).unwrap_or(0.0),
            created_current_window: windows.created_current,
            created_past_window: windows.created_past,
            archived_current_window: windows.archived_current,
            archived_past_window: windows.archived_past,
            project_activity_current_window: windows.events_current,
            project_activity_past_window: windows.events_past,
            project_members_added_current_window: self.members.added_since,
        }
    }
}

fn average(days: &[i64]) -> Option<f64> {
    if days.is_empty() {
        return None;
    }
    let sum: i64 = days.iter().sum();
    Some(sum as f64 / days.len() as f64)
}

/// How far the project is from its first flag reported by an SDK or an edge.
pub async fn onboarding(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<OnboardingStatus, ApiError> {
    let Some(feature) = store::first_flag(conn, project).await? else {
        return Ok(OnboardingStatus::OnboardingStarted);
    };
    if store::any_seen(conn, project).await? {
        return Ok(OnboardingStatus::Onboarded);
    }
    Ok(OnboardingStatus::FirstFlagCreated { feature })
}

pub async fn overview(
    conn: &mut AnyConnection,
    project: &str,
    user_id: i64,
    now_ms: i64,
) -> Result<ProjectOverview, ApiError> {
    let facts = facts(conn, project, user_id, now_ms).await?;
    let dora = store::production_dates(conn, project, ago(now_ms, WINDOW_DAYS)).await?;
    let onboarding_status = onboarding(conn, project).await?;
    let health = facts.health();
    Ok(ProjectOverview {
        stats: facts.stats(&dora, now_ms),
        version: 1,
        feature_type_counts: facts.type_counts(),
        members: facts.members.count,
        health: health.rating(),
        technical_debt: health.technical_debt(),
        favorite: facts.favorite,
        onboarding_status,
        name: facts.project.name,
        description: facts.project.description,
        default_stickiness: facts.project.default_stickiness,
        mode: facts.project.mode,
        feature_limit: None,
        environments: facts.environments,
        updated_at: facts.project.updated_at.map(|at| at.to_string()),
        archived_at: None,
        created_at: Some(facts.project.created_at.to_string()),
    })
}

pub async fn health_report(
    conn: &mut AnyConnection,
    project: &str,
    user_id: i64,
    now_ms: i64,
) -> Result<HealthReport, ApiError> {
    let facts = facts(conn, project, user_id, now_ms).await?;
    let dora = store::production_dates(conn, project, ago(now_ms, WINDOW_DAYS)).await?;
    let features = features::list(conn, project).await?.features;
    let health = facts.health();
    Ok(HealthReport {
        version: 1,
        stats: facts.stats(&dora, now_ms),
        members: facts.members.count,
        health: health.rating(),
        technical_debt: health.technical_debt(),
        features,
        favorite: facts.favorite,
        potentially_stale_count: health.potentially_stale,
        active_count: health.total - health.stale,
        stale_count: health.stale,
        name: facts.project.name,
        description: facts.project.description,
        default_stickiness: facts.project.default_stickiness,
        mode: facts.project.mode,
        feature_limit: None,
        environments: facts.environments,
        updated_at: facts.project.updated_at.map(|at| at.to_string()),
        created_at: Some(facts.project.created_at.to_string()),
    })
}

/// How many of the project's live flags are in each lifecycle stage (`counts`: the flags' current stages, as
/// `domain::lifecycle` records them; a live flag without one is initial).
fn lifecycle_summary(
    counts: &lifecycle::FeatureLifecycleCount,
    health: Health,
    windows: &WindowCounts,
) -> LifecycleSummary {
    let stage = |current_flags: i64| LifecycleSummaryStage {
        average_days: None,
        current_flags: current_flags.max(0),
    };
    LifecycleSummary {
        initial: stage(health.total - counts.pre_live - counts.live - counts.completed),
        pre_live: stage(counts.pre_live),
        live: stage(counts.live),
        completed: stage(counts.completed),
        archived: ArchivedStage {
            current_flags: windows.archived_total,
            last_30_days: windows.archived_current,
        },
    }
}

pub async fn status(
    conn: &mut AnyConnection,
    project: &str,
    now_ms: i64,
) -> Result<ProjectStatus, ApiError> {
    let facts = facts(conn, project, -1, now_ms).await?;
    let health = facts.health();
    let activity = store::activity_by_day(conn, project, ago(now_ms, 365))
        .await?
        .into_iter()
        .map(|(date, count)| ActivityCount { date, count })
        .collect();
    let resources = ProjectResources {
        api_tokens: store::token_count(conn, project).await?,
        members: facts.members.count,
        segments: segment_store::count_in_project(conn, project).await?,
    };
    let stage_counts = lifecycle::count(conn, Some(project)).await?;
    let lifecycle_summary = lifecycle_summary(&stage_counts, health, &facts.windows);
    Ok(ProjectStatus {
        activity_count_by_date: activity,
        resources,
        health: Current {
            current: health.rating(),
        },
        technical_debt: Current {
            current: health.technical_debt(),
        },
        lifecycle_summary,
        stale_flags: Total {
            total: health.stale + health.potentially_stale,
        },
    })
}

fn dora_of(dates: &[(String, Timestamp, Timestamp)]) -> DoraMetrics {
    let features: Vec<DoraFeature> = dates
        .iter()
        .map(|(name, created, enabled)| DoraFeature {
            name: name.clone(),
            time_to_production: days_between(*created, *enabled),
        })
        .collect();
    let days: Vec<i64> = features.iter().map(|one| one.time_to_production).collect();
    DoraMetrics {
        project_average: average(&days),
        features,
    }
}

pub async fn dora(conn: &mut AnyConnection, project: &str) -> Result<DoraMetrics, ApiError> {
    projects::require(conn, project).await?;
    Ok(dora_of(
        &store::production_dates(conn, project, Timestamp::EPOCH).await?,
    ))
}

pub async fn insights(
    conn: &mut AnyConnection,
    project: &str,
    now_ms: i64,
) -> Result<ProjectInsights, ApiError> {
    let facts = facts(conn, project, -1, now_ms).await?;
    let dates = store::production_dates(conn, project, Timestamp::EPOCH).await?;
    let health = facts.health();
    let rating = |rating: i64| HealthInsight {
        rating,
        active_count: health.total - health.stale,
        potentially_stale_count: health.potentially_stale,
        stale_count: health.stale,
    };
    Ok(ProjectInsights {
        stats: facts.stats(&dates, now_ms),
        health: rating(health.rating()),
        technical_debt: rating(health.technical_debt()),
        lead_time: dora_of(&dates),
        feature_type_counts: facts.type_counts(),
        members: MembersInsight {
            current_members: facts.members.count,
            change: facts.members.added_since,
        },
    })
}

/// What the UI's overview page shows (besides the recent events).
#[derive(Debug, Clone)]
pub struct OverviewPage {
    pub name: String,
    pub description: Option<String>,
    pub favorite: bool,
    pub environments: Vec<ProjectEnvironmentEntry>,
    pub feature_type_counts: Vec<FeatureTypeCount>,
    /// The windows' counts and the archived flags.
    pub windows: WindowCounts,
    pub members: Members,
    pub health: Health,
    /// Stale flags first, then potentially stale ones, at most `limit`.
    pub unhealthy: Vec<UnhealthyFlag>,
}

/// The overview page's facts: eight statements, whatever the number of flags and events.
pub async fn page(
    conn: &mut AnyConnection,
    project: &str,
    user_id: i64,
    now_ms: i64,
    limit: i64,
) -> Result<OverviewPage, ApiError> {
    let facts = facts(conn, project, user_id, now_ms).await?;
    let unhealthy = store::unhealthy_flags(conn, project, &facts.cutoffs(), limit).await?;
    Ok(OverviewPage {
        health: facts.health(),
        feature_type_counts: facts.type_counts(),
        unhealthy,
        name: facts.project.name,
        description: facts.project.description,
        favorite: facts.favorite,
        environments: facts.environments,
        windows: facts.windows,
        members: facts.members,
    })
}

#[cfg(test)]
mod tests {
    use super::Health;

    #[test]
    fn the_rating_is_the_rounded_share_of_healthy_flags() {
        let health = |total, stale, potentially_stale| Health {
            total,
            stale,
            potentially_stale,
        };
        assert_eq!(health(0, 0, 0).rating(), 100);
        assert_eq!(health(3, 1, 0).rating(), 67);
        assert_eq!(health(3, 1, 1).rating(), 33);
        assert_eq!(health(4, 0, 4).technical_debt(), 100);
        assert_eq!(health(8, 1, 0).rating(), 88);
    }
}
