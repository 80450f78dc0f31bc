//! The caller's dashboard (Unleash 8.2's `GET /api/admin/personal-dashboard` and
//! `…/personal-dashboard/:projectId`): the projects with their health, the flags the caller created or
//! marked as favourites, the instance's Admins; a project's health, onboarding and latest events.
//!
//! Vexil has root roles only, which hold in every project: every project is the caller's (favourites
//! first), no project has owners (Unleash's `[{ownerType: "system"}]`) and the caller has no project roles.
//! Project health is not kept over time, so the windows' averages are null. People's e-mail addresses are
//! shown only to those who may read the users (`access::personal_fields`).

use super::events::PersonalFields;
use super::project_overview::{self, Health, OnboardingStatus};
use super::projects;
use super::roles::RootRole;
use super::search::events::{search, EventSearchQuery};
use crate::store::favorites::{self as favorite_store, Favorite};
use crate::store::project_overview as store;
use crate::store::users as user_store;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A project as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardProject {
    pub id: String,
    pub name: String,
    /// Deprecated by Unleash: `100 - technicalDebt`.
    pub health: i64,
    pub technical_debt: i64,
    pub member_count: i64,
    /// Live flags.
    pub feature_count: i64,
}

/// A flag the caller created or marked as a favourite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DashboardFlag {
    pub name: String,
    pub project: String,
    #[serde(rename = "type")]
    pub feature_type: String,
}

/// An Admin of the instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DashboardAdmin {
    pub id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// A project owner; Vexil has none (no project roles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOwner {
    pub owner_type: String,
}

/// `GET /api/admin/personal-dashboard` (Unleash's `personalDashboardSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonalDashboard {
    pub projects: Vec<DashboardProject>,
    pub flags: Vec<DashboardFlag>,
    pub admins: Vec<DashboardAdmin>,
    /// Always empty: no project has owners.
    pub project_owners: Vec<ProjectOwner>,
}

/// A project's health as the dashboard gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardInsights {
    /// Always null: health is not kept over time.
    pub avg_health_current_window: Option<i64>,
    pub avg_health_past_window: Option<i64>,
    pub total_flags: i64,
    /// Neither stale nor potentially stale.
    pub active_flags: i64,
    pub stale_flags: i64,
    pub potentially_stale_flags: i64,
    pub health: i64,
    pub technical_debt: i64,
}

/// One of the project's latest events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LatestEvent {
    pub id: i64,
    /// The event's summary, as the event list gives it.
    pub summary: Option<String>,
    pub created_by: String,
    /// Always empty: no profile pictures.
    pub created_by_image_url: String,
    pub created_at: String,
}

/// A project role of the caller; Vexil has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProjectRole {
    pub name: String,
    pub id: i64,
    #[serde(rename = "type")]
    pub role_type: String,
}

/// `GET /api/admin/personal-dashboard/:projectId` (Unleash's `personalDashboardProjectDetailsSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonalProjectDetails {
    pub insights: DashboardInsights,
    pub onboarding_status: OnboardingStatus,
    /// The project's 10 latest events, newest first.
    pub latest_events: Vec<LatestEvent>,
    /// `[{ownerType: "system"}]`: no project has owners.
    pub owners: Vec<ProjectOwner>,
    /// Always empty: no project roles.
    pub roles: Vec<ProjectRole>,
}

/// The dashboard of `user_id` (a negative id, an API token: no own flags or favourites).
pub async fn dashboard(
    conn: &mut AnyConnection,
    user_id: i64,
    personal: PersonalFields,
    now_ms: i64,
) -> Result<PersonalDashboard, ApiError> {
    let cutoffs = super::feature_types::stale_cutoffs(conn, now_ms).await?;
    let rows = store::projects_with_health(conn, &project_overview::borrowed(&cutoffs)).await?;
    let people = user_store::list(conn).await?;
    let favorites = if user_id < 0 {
        Default::default()
    } else {
        favorite_store::of_user(conn, Favorite::Project, user_id).await?
    };
    let member_count = i64::try_from(people.len()).unwrap_or(i64::MAX);
    let mut projects: Vec<DashboardProject> = rows
        .into_iter()
        .map(|row| {
            let health = Health {
                total: row.total,
                stale: row.stale,
                potentially_stale: row.potentially_stale,
            };
            DashboardProject {
                health: health.rating(),
                technical_debt: health.technical_debt(),
                member_count,
                feature_count: row.total,
                id: row.id,
                name: row.name,
            }
        })
        .collect();
    projects.sort_by_key(|project| !favorites.contains(&project.id));
    let flags = if user_id < 0 {
        Vec::new()
    } else {
        store::flags_of_user(conn, user_id)
            .await?
            .into_iter()
            .map(|(name, project, feature_type)| DashboardFlag {
                name,
                project,
                feature_type,
            })
            .collect()
    };
    let admins = people
        .into_iter()
        .filter(|person| person.root_role == RootRole::Admin.id())
        .map(|person| DashboardAdmin {
            id: person.id,
            name: person.name,
            username: person.username,
            email: person.email.filter(|_| personal == PersonalFields::Shown),
        })
        .collect();
    Ok(PersonalDashboard {
        projects,
        flags,
        admins,
        project_owners: Vec::new(),
    })
}

/// A project's part of the dashboard.
pub async fn project_details(
    conn: &mut AnyConnection,
    project: &str,
    personal: PersonalFields,
    now_ms: i64,
) -> Result<PersonalProjectDetails, ApiError> {
    projects::require(conn, project).await?;
    let health = project_overview::page(conn, project, -1, now_ms, 0)
        .await?
        .health;
    let onboarding_status = project_overview::onboarding(conn, project).await?;
    let query = EventSearchQuery {
        project: Some(format!("IS:{project}")),
        limit: Some("10".to_owned()),
        ..EventSearchQuery::default()
    };
    let latest_events = search(conn, &query, personal)
        .await?
        .events
        .into_iter()
        .map(|event| LatestEvent {
            id: event.id,
            summary: event.summary,
            created_by: event.created_by,
            created_by_image_url: String::new(),
            created_at: event.created_at,
        })
        .collect();
    Ok(PersonalProjectDetails {
        insights: DashboardInsights {
            avg_health_current_window: None,
            avg_health_past_window: None,
            total_flags: health.total,
            active_flags: health.healthy(),
            stale_flags: health.stale,
            potentially_stale_flags: health.potentially_stale,
            health: health.rating(),
            technical_debt: health.technical_debt(),
        },
        onboarding_status,
        latest_events,
        owners: vec![ProjectOwner {
            owner_type: "system".to_owned(),
        }],
        roles: Vec::new(),
    })
}
