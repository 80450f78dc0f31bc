//! Audit events: their types and the two read views (`GET /api/admin/events`, `GET /api/admin/events/:feature`).

use crate::store::events::{self as event_store, EventFilter, EventRow};
use crate::store::projects as project_store;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::{IntoParams, ToSchema};
use vexil_shared::ApiError;

/// The event types this control plane emits (a subset of the spec's Events list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    FeatureCreated,
    FeatureMetadataUpdated,
    FeatureTypeUpdated,
    FeatureStaleOn,
    FeatureStaleOff,
    FeatureArchived,
    FeatureRevived,
    FeatureDeleted,
    FeatureEnvironmentEnabled,
    FeatureEnvironmentDisabled,
    FeatureStrategyAdd,
    FeatureStrategyUpdate,
    FeatureStrategyRemove,
    StrategyOrderChanged,
    ProjectCreated,
    ProjectUpdated,
    ProjectDeleted,
    ProjectEnvironmentAdded,
    ProjectEnvironmentRemoved,
    EnvironmentCreated,
    EnvironmentUpdated,
    EnvironmentDeleted,
    ApiTokenCreated,
    SegmentCreated,
    SegmentUpdated,
    SegmentDeleted,
    StrategyCreated,
    StrategyUpdated,
    StrategyDeleted,
    StrategyDeprecated,
    StrategyReactivated,
    ContextFieldCreated,
    ContextFieldUpdated,
    ContextFieldDeleted,
    FeatureEnvironmentVariantsUpdated,
    ApiTokenUpdated,
    ApiTokenDeleted,
    UserCreated,
    UserUpdated,
    UserDeleted,
    PatCreated,
    PatDeleted,
    ServiceAccountCreated,
    ServiceAccountUpdated,
    ServiceAccountDeleted,
    PublicSignupTokenCreated,
    PublicSignupTokenUpdated,
    PublicSignupTokenUserAdded,
    GroupCreated,
    GroupUpdated,
    GroupDeleted,
    GroupUserAdded,
    GroupUserRemoved,
    ChangeRequestConfigurationUpdated,
    ChangeRequestCreated,
    ChangeRequestDiscarded,
    ChangeAdded,
    ChangeEdited,
    ChangeDiscarded,
    ChangeRequestSentToReview,
    ChangeRequestApprovalAdded,
    ChangeRequestApproved,
    ChangeRequestRejected,
    ChangeRequestCancelled,
    ChangeRequestApplied,
    ChangeRequestScheduled,
    ChangeRequestScheduledApplicationSuccess,
    ChangeRequestScheduledApplicationFailure,
    ChangeRequestScheduleSuspended,
    SettingCreated,
    SettingUpdated,
    AddonConfigCreated,
    AddonConfigUpdated,
    AddonConfigDeleted,
    TagTypeCreated,
    TagTypeUpdated,
    TagTypeDeleted,
    TagCreated,
    TagDeleted,
    FeatureTagged,
    FeatureUntagged,
    FeatureDependencyAdded,
    FeatureDependencyRemoved,
    FeatureDependenciesRemoved,
    FeatureFavorited,
    FeatureUnfavorited,
    ProjectFavorited,
    ProjectUnfavorited,
    FeaturesImported,
    FeaturesExported,
    ApplicationCreated,
    ProjectAccessAdded,
    ProjectAccessUpdated,
    ProjectAccessUserRolesUpdated,
    ProjectAccessGroupRolesUpdated,
    ProjectAccessUserRolesDeleted,
    ProjectAccessGroupRolesDeleted,
    RoleCreated,
    RoleUpdated,
    RoleDeleted,
    ReleasePlanTemplateCreated,
    ReleasePlanTemplateUpdated,
    ReleasePlanTemplateDeleted,
    ReleasePlanTemplateArchived,
    ReleasePlanAdded,
    ReleasePlanRemoved,
    ReleasePlanMilestoneStarted,
    ReleasePlanProgressionsPaused,
    ReleasePlanProgressionsResumed,
    MilestoneProgressionCreated,
    MilestoneProgressionUpdated,
    MilestoneProgressionDeleted,
    SignalEndpointCreated,
    SignalEndpointUpdated,
    SignalEndpointDeleted,
    SignalEndpointTokenCreated,
    SignalEndpointTokenUpdated,
    SignalEndpointTokenDeleted,
    ActionsCreated,
    ActionsUpdated,
    ActionsDeleted,
    FeatureCompleted,
    FeatureUncompleted,
    FeaturePotentiallyStaleOn,
    DefaultStrategyUpdated,
    ProjectArchived,
    ProjectRevived,
    FeatureProjectChange,
    BannerCreated,
    BannerUpdated,
    BannerDeleted,
}

impl EventType {
    /// Every event type, for reading one back by name (`as_str`).
    pub const ALL: [EventType; 131] = [
        EventType::FeatureCreated,
        EventType::FeatureMetadataUpdated,
        EventType::FeatureTypeUpdated,
        EventType::FeatureStaleOn,
        EventType::FeatureStaleOff,
        EventType::FeatureArchived,
        EventType::FeatureRevived,
        EventType::FeatureDeleted,
        EventType::FeatureEnvironmentEnabled,
        EventType::FeatureEnvironmentDisabled,
        EventType::FeatureStrategyAdd,
        EventType::FeatureStrategyUpdate,
        EventType::FeatureStrategyRemove,
        EventType::StrategyOrderChanged,
        EventType::ProjectCreated,
        EventType::ProjectUpdated,
        EventType::ProjectDeleted,
        EventType::ProjectEnvironmentAdded,
        EventType::ProjectEnvironmentRemoved,
        EventType::EnvironmentCreated,
        EventType::EnvironmentUpdated,
        EventType::EnvironmentDeleted,
        EventType::ApiTokenCreated,
        EventType::SegmentCreated,
        EventType::SegmentUpdated,
        EventType::SegmentDeleted,
        EventType::StrategyCreated,
        EventType::StrategyUpdated,
        EventType::StrategyDeleted,
        EventType::StrategyDeprecated,
        EventType::StrategyReactivated,
        EventType::ContextFieldCreated,
        EventType::ContextFieldUpdated,
        EventType::ContextFieldDeleted,
        EventType::FeatureEnvironmentVariantsUpdated,
        EventType::ApiTokenUpdated,
        EventType::ApiTokenDeleted,
        EventType::UserCreated,
        EventType::UserUpdated,
        EventType::UserDeleted,
        EventType::PatCreated,
        EventType::PatDeleted,
        EventType::ServiceAccountCreated,
        EventType::ServiceAccountUpdated,
        EventType::ServiceAccountDeleted,
        EventType::PublicSignupTokenCreated,
        EventType::PublicSignupTokenUpdated,
        EventType::PublicSignupTokenUserAdded,
        EventType::GroupCreated,
        EventType::GroupUpdated,
        EventType::GroupDeleted,
        EventType::GroupUserAdded,
        EventType::GroupUserRemoved,
        EventType::ChangeRequestConfigurationUpdated,
        EventType::ChangeRequestCreated,
        EventType::ChangeRequestDiscarded,
        EventType::ChangeAdded,
        EventType::ChangeEdited,
        EventType::ChangeDiscarded,
        EventType::ChangeRequestSentToReview,
        EventType::ChangeRequestApprovalAdded,
        EventType::ChangeRequestApproved,
        EventType::ChangeRequestRejected,
        EventType::ChangeRequestCancelled,
        EventType::ChangeRequestApplied,
        EventType::ChangeRequestScheduled,
        EventType::ChangeRequestScheduledApplicationSuccess,
        EventType::ChangeRequestScheduledApplicationFailure,
        EventType::ChangeRequestScheduleSuspended,
        EventType::SettingCreated,
        EventType::SettingUpdated,
        EventType::AddonConfigCreated,
        EventType::AddonConfigUpdated,
        EventType::AddonConfigDeleted,
        EventType::TagTypeCreated,
        EventType::TagTypeUpdated,
        EventType::TagTypeDeleted,
        EventType::TagCreated,
        EventType::TagDeleted,
        EventType::FeatureTagged,
        EventType::FeatureUntagged,
        EventType::FeatureDependencyAdded,
        EventType::FeatureDependencyRemoved,
        EventType::FeatureDependenciesRemoved,
        EventType::FeatureFavorited,
        EventType::FeatureUnfavorited,
        EventType::ProjectFavorited,
        EventType::ProjectUnfavorited,
        EventType::FeaturesImported,
        EventType::FeaturesExported,
        EventType::ApplicationCreated,
        EventType::ProjectAccessAdded,
        EventType::ProjectAccessUpdated,
        EventType::ProjectAccessUserRolesUpdated,
        EventType::ProjectAccessGroupRolesUpdated,
        EventType::ProjectAccessUserRolesDeleted,
        EventType::ProjectAccessGroupRolesDeleted,
        EventType::RoleCreated,
        EventType::RoleUpdated,
        EventType::RoleDeleted,
        EventType::ReleasePlanTemplateCreated,
        EventType::ReleasePlanTemplateUpdated,
        EventType::ReleasePlanTemplateDeleted,
        EventType::ReleasePlanTemplateArchived,
        EventType::ReleasePlanAdded,
        EventType::ReleasePlanRemoved,
        EventType::ReleasePlanMilestoneStarted,
        EventType::ReleasePlanProgressionsPaused,
        EventType::ReleasePlanProgressionsResumed,
        EventType::MilestoneProgressionCreated,
        EventType::MilestoneProgressionUpdated,
        EventType::MilestoneProgressionDeleted,
        EventType::SignalEndpointCreated,
        EventType::SignalEndpointUpdated,
        EventType::SignalEndpointDeleted,
        EventType::SignalEndpointTokenCreated,
        EventType::SignalEndpointTokenUpdated,
        EventType::SignalEndpointTokenDeleted,
        EventType::ActionsCreated,
        EventType::ActionsUpdated,
        EventType::ActionsDeleted,
        EventType::FeatureCompleted,
        EventType::FeatureUncompleted,
        EventType::FeaturePotentiallyStaleOn,
        EventType::DefaultStrategyUpdated,
        EventType::ProjectArchived,
        EventType::ProjectRevived,
        EventType::FeatureProjectChange,
        EventType::BannerCreated,
        EventType::BannerUpdated,
        EventType::BannerDeleted,
    ];

    /// An event about something that belongs to no project, environment or flag (a strategy definition,
    /// a context field).
    pub fn instance_wide(
        self,
        data: Option<serde_json::Value>,
        pre_data: Option<serde_json::Value>,
    ) -> crate::store::NewEvent {
        crate::store::NewEvent {
            event_type: self.as_str(),
            data,
            pre_data,
            ..crate::store::NewEvent::default()
        }
    }
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::FeatureCreated => "feature-created",
            EventType::FeatureMetadataUpdated => "feature-metadata-updated",
            EventType::FeatureTypeUpdated => "feature-type-updated",
            EventType::FeatureStaleOn => "feature-stale-on",
            EventType::FeatureStaleOff => "feature-stale-off",
            EventType::FeatureArchived => "feature-archived",
            EventType::FeatureRevived => "feature-revived",
            EventType::FeatureDeleted => "feature-deleted",
            EventType::FeatureEnvironmentEnabled => "feature-environment-enabled",
            EventType::FeatureEnvironmentDisabled => "feature-environment-disabled",
            EventType::FeatureStrategyAdd => "feature-strategy-add",
            EventType::FeatureStrategyUpdate => "feature-strategy-update",
            EventType::FeatureStrategyRemove => "feature-strategy-remove",
            EventType::StrategyOrderChanged => "strategy-order-changed",
            EventType::ProjectCreated => "project-created",
            EventType::ProjectUpdated => "project-updated",
            EventType::ProjectDeleted => "project-deleted",
            EventType::ProjectEnvironmentAdded => "project-environment-added",
            EventType::ProjectEnvironmentRemoved => "project-environment-removed",
            EventType::EnvironmentCreated => "environment-created",
            EventType::EnvironmentUpdated => "environment-updated",
            EventType::EnvironmentDeleted => "environment-deleted",
            EventType::ApiTokenCreated => "api-token-created",
            EventType::SegmentCreated => "segment-created",
            EventType::SegmentUpdated => "segment-updated",
            EventType::SegmentDeleted => "segment-deleted",
            EventType::StrategyCreated => "strategy-created",
            EventType::StrategyUpdated => "strategy-updated",
            EventType::StrategyDeleted => "strategy-deleted",
            EventType::StrategyDeprecated => "strategy-deprecated",
            EventType::StrategyReactivated => "strategy-reactivated",
            EventType::ContextFieldCreated => "context-field-created",
            EventType::ContextFieldUpdated => "context-field-updated",
            EventType::ContextFieldDeleted => "context-field-deleted",
            EventType::FeatureEnvironmentVariantsUpdated => "feature-environment-variants-updated",
            EventType::ApiTokenUpdated => "api-token-updated",
            EventType::ApiTokenDeleted => "api-token-deleted",
            EventType::UserCreated => "user-created",
            EventType::UserUpdated => "user-updated",
            EventType::UserDeleted => "user-deleted",
            EventType::PatCreated => "pat-created",
            EventType::PatDeleted => "pat-deleted",
            EventType::ServiceAccountCreated => "service-account-created",
            EventType::ServiceAccountUpdated => "service-account-updated",
            EventType::ServiceAccountDeleted => "service-account-deleted",
            EventType::PublicSignupTokenCreated => "public-signup-token-created",
            EventType::PublicSignupTokenUpdated => "public-signup-token-updated",
            EventType::PublicSignupTokenUserAdded => "public-signup-token-user-added",
            EventType::ProjectAccessAdded => "project-access-added",
            EventType::ProjectAccessUpdated => "project-access-updated",
            EventType::ProjectAccessUserRolesUpdated => "project-access-user-roles-updated",
            EventType::ProjectAccessGroupRolesUpdated => "project-access-group-roles-updated",
            EventType::ProjectAccessUserRolesDeleted => "project-access-user-roles-deleted",
            EventType::ProjectAccessGroupRolesDeleted => "project-access-group-roles-deleted",
            EventType::RoleCreated => "role-created",
            EventType::RoleUpdated => "role-updated",
            EventType::RoleDeleted => "role-deleted",
            EventType::ReleasePlanTemplateCreated => "release-plan-template-created",
            EventType::ReleasePlanTemplateUpdated => "release-plan-template-updated",
            EventType::ReleasePlanTemplateDeleted => "release-plan-template-deleted",
            EventType::ReleasePlanTemplateArchived => "release-plan-template-archived",
            EventType::ReleasePlanAdded => "release-plan-added",
            EventType::ReleasePlanRemoved => "release-plan-removed",
            EventType::ReleasePlanMilestoneStarted => "release-plan-milestone-started",
            EventType::ReleasePlanProgressionsPaused => "release-plan-progressions-paused",
            EventType::ReleasePlanProgressionsResumed => "release-plan-progressions-resumed",
            EventType::MilestoneProgressionCreated => "milestone-progression-created",
            EventType::MilestoneProgressionUpdated => "milestone-progression-updated",
            EventType::MilestoneProgressionDeleted => "milestone-progression-deleted",
            EventType::SignalEndpointCreated => "signal-endpoint-created",
            EventType::SignalEndpointUpdated => "signal-endpoint-updated",
            EventType::SignalEndpointDeleted => "signal-endpoint-deleted",
            EventType::SignalEndpointTokenCreated => "signal-endpoint-token-created",
            EventType::SignalEndpointTokenUpdated => "signal-endpoint-token-updated",
            EventType::SignalEndpointTokenDeleted => "signal-endpoint-token-deleted",
            EventType::ActionsCreated => "actions-created",
            EventType::ActionsUpdated => "actions-updated",
            EventType::ActionsDeleted => "actions-deleted",
            EventType::GroupCreated => "group-created",
            EventType::GroupUpdated => "group-updated",
            EventType::GroupDeleted => "group-deleted",
            EventType::GroupUserAdded => "group-user-added",
            EventType::GroupUserRemoved => "group-user-removed",
            EventType::ChangeRequestConfigurationUpdated => "change-request-configuration-updated",
            EventType::ChangeRequestCreated => "change-request-created",
            EventType::ChangeRequestDiscarded => "change-request-discarded",
            EventType::ChangeAdded => "change-added",
            EventType::ChangeEdited => "change-edited",
            EventType::ChangeDiscarded => "change-discarded",
            EventType::ChangeRequestSentToReview => "change-request-sent-to-review",
            EventType::ChangeRequestApprovalAdded => "change-request-approval-added",
            EventType::ChangeRequestApproved => "change-request-approved",
            EventType::ChangeRequestRejected => "change-request-rejected",
            EventType::ChangeRequestCancelled => "change-request-cancelled",
            EventType::ChangeRequestApplied => "change-request-applied",
            EventType::ChangeRequestScheduled => "change-request-scheduled",
            EventType::ChangeRequestScheduledApplicationSuccess => {
                "change-request-scheduled-application-success"
            }
            EventType::ChangeRequestScheduledApplicationFailure => {
                "change-request-scheduled-application-failure"
            }
            EventType::ChangeRequestScheduleSuspended => "change-request-schedule-suspended",
            EventType::SettingCreated => "setting-created",
            EventType::SettingUpdated => "setting-updated",
            EventType::AddonConfigCreated => "addon-config-created",
            EventType::AddonConfigUpdated => "addon-config-updated",
            EventType::AddonConfigDeleted => "addon-config-deleted",
            EventType::TagTypeCreated => "tag-type-created",
            EventType::TagTypeUpdated => "tag-type-updated",
            EventType::TagTypeDeleted => "tag-type-deleted",
            EventType::TagCreated => "tag-created",
            EventType::TagDeleted => "tag-deleted",
            EventType::FeatureTagged => "feature-tagged",
            EventType::FeatureUntagged => "feature-untagged",
            EventType::FeatureDependencyAdded => "feature-dependency-added",
            EventType::FeatureDependencyRemoved => "feature-dependency-removed",
            EventType::FeatureDependenciesRemoved => "feature-dependencies-removed",
            EventType::FeatureFavorited => "feature-favorited",
            EventType::FeatureUnfavorited => "feature-unfavorited",
            EventType::FeatureCompleted => "feature-completed",
            EventType::FeatureUncompleted => "feature-uncompleted",
            EventType::FeaturePotentiallyStaleOn => "feature-potentially-stale-on",
            EventType::DefaultStrategyUpdated => "default-strategy-updated",
            EventType::ProjectArchived => "project-archived",
            EventType::ProjectRevived => "project-revived",
            EventType::FeatureProjectChange => "feature-project-change",
            EventType::BannerCreated => "banner-created",
            EventType::BannerUpdated => "banner-updated",
            EventType::BannerDeleted => "banner-deleted",
            EventType::ProjectFavorited => "project-favorited",
            EventType::ProjectUnfavorited => "project-unfavorited",
            EventType::FeaturesImported => "features-imported",
            EventType::FeaturesExported => "features-exported",
            EventType::ApplicationCreated => "application-created",
        }
    }
}

/// An audit event as the API shows it (the spec's Event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Increasing, from 1.
    pub id: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub created_at: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub environment: Option<String>,
    pub project: Option<String>,
    pub feature_name: Option<String>,
    /// The resource after the change.
    pub data: Option<serde_json::Value>,
    /// The resource before the change.
    pub pre_data: Option<serde_json::Value>,
    pub tags: Vec<serde_json::Value>,
    pub label: Option<String>,
    pub summary: Option<String>,
}

/// `GET /api/admin/events`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventList {
    pub version: u32,
    pub events: Vec<Event>,
    pub total_events: i64,
}

/// `GET /api/admin/events/:featureName` (featureEventsSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEventList {
    pub version: u32,
    pub toggle_name: String,
    pub events: Vec<Event>,
    pub total_events: i64,
}

/// Filters and paging of `GET /api/admin/events`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    pub project: Option<String>,
    pub feature: Option<String>,
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub event_type: Option<String>,
    /// Events to skip, default 0, at most 2147483647.
    #[param(maximum = 2147483647)]
    pub offset: Option<u32>,
    /// At most this many events, default 100, at most 1000.
    #[param(maximum = 1000)]
    pub limit: Option<u32>,
}

/// `limit` when absent.
pub const DEFAULT_LIMIT: u32 = 100;
/// The largest `limit` (as documented, `#[param(maximum)]` above).
pub const MAX_LIMIT: u32 = 1000;
/// The largest `offset`: the int32 range the document gives it (`#[param(maximum)]` above).
pub const MAX_OFFSET: u32 = i32::MAX as u32;

/// Whether a reader sees the personal fields of the events about people: the users' names, e-mail
/// addresses, usernames, roles and last sign-ins in `user-*` events, and in the members of `group-*`
/// events. Those who may read the users themselves (`/api/admin/user-admin`: Admins and admin tokens) see
/// them; everyone else sees the events without them (who the event is about stays, as its `id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersonalFields {
    Shown,
    Hidden,
}

/// A user's fields that [`PersonalFields::Hidden`] leaves out.
const PERSONAL_FIELDS: [&str; 6] = [
    "name", "email", "username", "imageUrl", "rootRole", "seenAt",
];

/// Events whose `data` and `preData` are a user.
const ABOUT_USERS: [EventType; 3] = [
    EventType::UserCreated,
    EventType::UserUpdated,
    EventType::UserDeleted,
];

/// Events whose `data` and `preData` are a group, its members users (`users[].user`).
const ABOUT_GROUPS: [EventType; 3] = [
    EventType::GroupCreated,
    EventType::GroupUpdated,
    EventType::GroupDeleted,
];

impl PersonalFields {
    /// The event types whose payloads this reader does not see whole (none when shown): a text search
    /// leaves them out, so it cannot find what it would not show.
    pub fn partly_hidden_types(self) -> Vec<String> {
        match self {
            PersonalFields::Shown => Vec::new(),
            PersonalFields::Hidden => ABOUT_USERS
                .iter()
                .chain(&ABOUT_GROUPS)
                .map(|event_type| event_type.as_str().to_owned())
                .collect(),
        }
    }

    /// `payload` (an event's `data` or `preData`) of an event of `event_type` as this reader sees it.
    fn apply(self, event_type: &str, payload: &mut serde_json::Value) {
        if self == PersonalFields::Shown {
            return;
        }
        let is = |types: &[EventType]| types.iter().any(|known| known.as_str() == event_type);
        if is(&ABOUT_USERS) {
            hide_personal_fields(payload);
        } else if is(&ABOUT_GROUPS) {
            let members = payload
                .get_mut("users")
                .and_then(serde_json::Value::as_array_mut);
            for member in members.into_iter().flatten() {
                if let Some(user) = member.get_mut("user") {
                    hide_personal_fields(user);
                }
            }
        }
    }
}

fn hide_personal_fields(user: &mut serde_json::Value) {
    if let Some(user) = user.as_object_mut() {
        for field in PERSONAL_FIELDS {
            user.remove(field);
        }
    }
}

/// An event as the API shows it to a reader who sees `personal` fields, from its row: every view of events
/// (lists, search, the delivery log, the UI) makes them here.
pub fn event_from_row(row: EventRow, personal: PersonalFields) -> Event {
    let mut event = Event {
        id: row.id,
        event_type: row.event_type,
        created_at: row.created_at.to_string(),
        created_by: row.created_by,
        created_by_user_id: row.created_by_user_id,
        environment: row.environment,
        project: row.project,
        feature_name: row.feature_name,
        data: row.data,
        pre_data: row.pre_data,
        tags: Vec::new(),
        label: None,
        summary: None,
    };
    for payload in [&mut event.data, &mut event.pre_data].into_iter().flatten() {
        personal.apply(&event.event_type, payload);
    }
    event
}

/// Events matching the query, newest first, with the number of matches.
pub async fn list(
    conn: &mut AnyConnection,
    query: EventQuery,
    personal: PersonalFields,
) -> Result<EventList, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
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
    let filter = EventFilter {
        project: query.project,
        feature: query.feature,
        event_type: query.event_type,
    };
    let rows = event_store::list(conn, &filter, i64::from(offset), i64::from(limit)).await?;
    let total_events = event_store::count(conn, &filter).await?;
    let events = rows
        .into_iter()
        .map(|row| event_from_row(row, personal))
        .collect();
    Ok(EventList {
        version: 1,
        events,
        total_events,
    })
}

/// Every event of one flag, newest first; an unknown flag has none.
pub async fn of_feature(
    conn: &mut AnyConnection,
    feature: &str,
    personal: PersonalFields,
) -> Result<FeatureEventList, ApiError> {
    let filter = EventFilter {
        feature: Some(feature.to_owned()),
        ..EventFilter::default()
    };
    let total_events = event_store::count(conn, &filter).await?;
    let rows = event_store::list(conn, &filter, 0, total_events).await?;
    let events = rows
        .into_iter()
        .map(|row| event_from_row(row, personal))
        .collect();
    Ok(FeatureEventList {
        version: 1,
        toggle_name: feature.to_owned(),
        events,
        total_events,
    })
}

/// A resource as an event's `data` / `preData`.
pub fn payload<T: Serialize>(resource: &T) -> serde_json::Value {
    // Serializing our own body types cannot fail (string keys, no non-finite floats).
    serde_json::to_value(resource).unwrap_or(serde_json::Value::Null)
}

/// Someone who recorded events (`GET /api/admin/event-creators`) or created flags of a project
/// (`GET /api/admin/projects/:projectId/flag-creators`): the user id (0 for API tokens and the system) and
/// the name events carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Creator {
    pub id: i64,
    pub name: String,
}

/// Everyone who recorded an event, or (`created_flags_in`) who created a flag of that project (404 for an
/// unknown project).
pub async fn creators(
    conn: &mut AnyConnection,
    created_flags_in: Option<&str>,
) -> Result<Vec<Creator>, ApiError> {
    if let Some(project) = created_flags_in {
        if project_store::get(conn, project).await?.is_none() {
            return Err(ApiError::not_found(format!(
                "Project {project} does not exist"
            )));
        }
    }
    Ok(event_store::creators(conn, created_flags_in)
        .await?
        .into_iter()
        .map(|(id, name)| Creator { id, name })
        .collect())
}
