//! The caller's dashboard (Unleash 8.2's `GET /api/admin/personal-dashboard` and
//! `…/personal-dashboard/:projectId`): the projects with their health, the flags the caller created or
//! marked as favourites, the instance's Admins; a project's health, onboarding and latest events.
//!
//! Root roles hold in every project, so every project is the caller's (favourites first); a project's owners
//! are the people and groups with its Owner role (`domain::project_access`; Unleash's
//! `[{ownerType: "system"}]` when it has none), and the caller's roles there are their own and their groups'.
//! Project health is not kept over time, so the windows' averages are null. People's e-mail addresses are
//! shown only to those who may read the users (`access::personal_fields`).

use super::events::PersonalFields;
use super::project_access;
use super::project_overview::{self, Health, OnboardingStatus};
use super::projects;
use super::roles::{ProjectRole as PredefinedRole, RootRole};
use super::search::events::{search, EventSearchQuery};
use crate::store::favorites::{self as favorite_store, Favorite};
use crate::store::groups as group_store;
use crate::store::project_overview as store;
use crate::store::roles::{self as role_store, Subject};
use crate::store::users as user_store;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The id of the predefined Owner role.
const OWNER: i64 = PredefinedRole::Owner as i64;

/// A project as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardProject {
    pub id: String,
    pub name: String,
    /// Deprecated by Unleash: `100 - technicalDebt`.
    pub health: i64,
    pub technical_debt: i64,
    /// The users with a role in the project, directly or through a group (`project_access::members`).
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

/// A project owner: a person or group with the project's Owner role (`user`, `group`), or `system` when it
/// has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOwner {
    pub owner_type: String,
    /// The person's name, else username, else e-mail address; the group's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A person's e-mail address (for who may read the users).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl ProjectOwner {
    fn person(
        (name, username, email): (Option<String>, Option<String>, Option<String>),
        personal: PersonalFields,
    ) -> ProjectOwner {
        let email = email.filter(|_| personal == PersonalFields::Shown);
        ProjectOwner {
            owner_type: "user".to_owned(),
            name: name.or(username).or_else(|| email.clone()),
            email,
        }
    }
}

/// `GET /api/admin/personal-dashboard` (Unleash's `personalDashboardSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonalDashboard {
    pub projects: Vec<DashboardProject>,
    pub flags: Vec<DashboardFlag>,
    pub admins: Vec<DashboardAdmin>,
    /// The people with the Owner role in some project, each once.
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

/// A project role of the caller (`type`: `project` for Owner and Member, `custom`).
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
    /// The people and groups with the project's Owner role; `[{ownerType: "system"}]` when none.
    pub owners: Vec<ProjectOwner>,
    /// The caller's roles in the project, their own and their groups'.
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
    let members = project_access::members(conn, None, Timestamp::EPOCH).await?;
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
                member_count: members.get(&row.id).map_or(0, |members| members.count),
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
    let mut project_owners: Vec<ProjectOwner> = Vec::new();
    let owner_grants = role_store::grants_of_role(conn, Subject::User, OWNER).await?;
    for person in &people {
        if owner_grants
            .iter()
            .any(|grant| grant.subject_id == person.id)
        {
            let names = (
                person.name.clone(),
                person.username.clone(),
                person.email.clone(),
            );
            project_owners.push(ProjectOwner::person(names, personal));
        }
    }
    // Admins of their own or through a group, as the last-Admin rule counts them.
    let admin_ids = user_store::ids_with_root_role(conn, RootRole::Admin.id()).await?;
    let admins = people
        .into_iter()
        .filter(|person| admin_ids.contains(&person.id))
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
        project_owners,
    })
}

/// A project's part of the dashboard, for `user_id` (a negative id, an API token: no roles of its own).
pub async fn project_details(
    conn: &mut AnyConnection,
    (project, user_id): (&str, i64),
    personal: PersonalFields,
    now_ms: i64,
) -> Result<PersonalProjectDetails, ApiError> {
    projects::require(conn, project).await?;
    let (owners, roles) = owners_and_roles(conn, (project, user_id), personal).await?;
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
        owners,
        roles,
    })
}

/// The project's owners (people, then groups; `system` when none) and the roles `user_id` has there.
async fn owners_and_roles(
    conn: &mut AnyConnection,
    (project, user_id): (&str, i64),
    personal: PersonalFields,
) -> Result<(Vec<ProjectOwner>, Vec<ProjectRole>), ApiError> {
    let access = project_access::get(conn, project).await?;
    let mut owners: Vec<ProjectOwner> = (access.users.iter())
        .filter(|user| user.roles.contains(&OWNER) && user.account_type == "User")
        .map(|user| {
            let names = (user.name.clone(), user.username.clone(), user.email.clone());
            ProjectOwner::person(names, personal)
        })
        .collect();
    owners.extend(
        (access.groups.iter())
            .filter(|group| group.roles.contains(&OWNER))
            .map(|group| ProjectOwner {
                owner_type: "group".to_owned(),
                name: Some(group.name.clone()),
                email: None,
            }),
    );
    if owners.is_empty() {
        owners.push(ProjectOwner {
            owner_type: "system".to_owned(),
            name: None,
            email: None,
        });
    }
    let mut role_ids: Vec<i64> = (access.users.iter())
        .filter(|user| user.id == user_id)
        .flat_map(|user| user.roles.clone())
        .collect();
    if user_id >= 0 {
        let mine = group_store::groups_of(conn, user_id).await?;
        for group in &access.groups {
            if mine.iter().any(|row| row.id == group.id) {
                role_ids.extend(&group.roles);
            }
        }
    }
    role_ids.sort_unstable();
    role_ids.dedup();
    let mut roles = Vec::new();
    for id in role_ids {
        if let Some(row) = role_store::get(conn, id).await? {
            let role_type = if row.role_type == "custom" {
                "custom"
            } else {
                "project"
            };
            roles.push(ProjectRole {
                name: row.name,
                id,
                role_type: role_type.to_owned(),
            });
        }
    }
    Ok((owners, roles))
}
