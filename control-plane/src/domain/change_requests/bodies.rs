//! The bodies of the change-request routes: what they take and what they answer.

use crate::model::change_request::{Change, ChangeRequestState, ScheduleStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

/// Who did something, as the record shows it (API tokens: id -1337 and the token's name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Principal {
    pub id: i64,
    pub username: String,
}

/// `PUT …/environments/:environment/change-requests/config` (spec endpoint 6).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestConfigInput {
    pub change_requests_enabled: bool,
    /// An integer, clamped into 1..10; absent: unchanged (default 1).
    #[schema(value_type = Option<i64>)]
    pub required_approvals: Option<serde_json::Number>,
}

/// One environment's entry of `GET …/change-requests/config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentChangeRequestConfig {
    pub environment: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub change_request_enabled: bool,
    pub required_approvals: i64,
}

/// A change to a flag of the request's project, in the request's environment: `{feature, action, payload}`;
/// or to a segment: `{action, payload}` (`updateSegment`, `deleteSegment`, no `feature`). A missing payload
/// reads as `{}`; a payload that does not fit its action is refused naming the field.
#[derive(Debug, Clone, PartialEq, ToSchema)]
pub struct ChangeInput {
    /// The flag; required by every action but the segments'.
    pub feature: Option<String>,
    #[serde(flatten)]
    pub change: Change,
}

impl<'de> Deserialize<'de> for ChangeInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Given {
            feature: Option<String>,
            action: Value,
            payload: Option<Value>,
        }
        let given = Given::deserialize(deserializer)?;
        let payload = given
            .payload
            .unwrap_or_else(|| Value::Object(Default::default()));
        let tagged = serde_json::json!({"action": given.action, "payload": payload});
        let change = serde_path_to_error::deserialize(tagged).map_err(|error| {
            serde::de::Error::custom(format!("{}: {}", error.path(), error.inner()))
        })?;
        Ok(ChangeInput {
            feature: given.feature,
            change,
        })
    }
}

/// The body of `POST …/change-requests`: one change or an array of them.
#[derive(Debug, Clone)]
pub enum ChangeInputs {
    One(ChangeInput),
    Many(Vec<ChangeInput>),
}

impl ChangeInputs {
    pub fn into_vec(self) -> Vec<ChangeInput> {
        match self {
            ChangeInputs::One(change) => vec![change],
            ChangeInputs::Many(changes) => changes,
        }
    }
}

impl<'de> Deserialize<'de> for ChangeInputs {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let named = |error: serde_path_to_error::Error<serde_json::Error>| {
            serde::de::Error::custom(format!("at {}: {}", error.path(), error.inner()))
        };
        if value.is_array() {
            serde_path_to_error::deserialize(value)
                .map(ChangeInputs::Many)
                .map_err(named)
        } else {
            serde_path_to_error::deserialize(value)
                .map(ChangeInputs::One)
                .map_err(named)
        }
    }
}

/// `PUT …/change-requests/:id/state` (spec endpoint 19; Unleash's `changeRequestStateSchema`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateInput {
    pub state: ChangeRequestState,
    /// Kept as a comment of the request.
    pub comment: Option<String>,
    /// With `Scheduled` (required then): when the control plane applies the request, an RFC 3339 date-time
    /// in the future. Scheduling a Scheduled request again moves it (and makes the caller its scheduler).
    #[schema(format = DateTime)]
    pub scheduled_at: Option<String>,
}

/// A Scheduled request's schedule (Unleash's `changeRequestScheduleSchema`): pending until its time, or
/// failed / suspended with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub scheduled_at: String,
    pub status: ScheduleStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One entry of `GET …/change-requests/scheduled` (Unleash's `scheduledChangeRequestViewModelSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScheduledChangeRequest {
    pub id: i64,
    pub environment: String,
    pub title: String,
}

/// What `GET …/change-requests/scheduled` matches (Unleash's `changeRequestScheduledQueryParamsSchema`): a
/// request matches when any of its changes is to one of `features`, to one of `strategy_ids`, or sets the
/// variants of one of `variants_for_flags`. All empty: every pending scheduled request of the project.
/// Each parameter may be repeated or hold several values separated by commas.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScheduledQuery {
    /// Requests changing one of these flags.
    #[serde(rename = "feature", default)]
    pub features: Vec<String>,
    /// Requests changing or deleting one of these strategies.
    #[serde(rename = "strategyId", default)]
    pub strategy_ids: Vec<String>,
    /// Requests setting the variants of one of these flags.
    #[serde(rename = "variantForFlag", default)]
    pub variants_for_flags: Vec<String>,
}

impl ScheduledQuery {
    /// The query from its `(name, value)` pairs; other names are ignored.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> ScheduledQuery {
        let mut query = ScheduledQuery::default();
        for (name, value) in pairs {
            let list = match name.as_str() {
                "feature" => &mut query.features,
                "strategyId" => &mut query.strategy_ids,
                "variantForFlag" => &mut query.variants_for_flags,
                _ => continue,
            };
            list.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(str::to_owned),
            );
        }
        query
    }
}

/// `POST …/change-requests/:id/comments`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CommentInput {
    pub text: String,
}

/// A change as a request shows it: `{id, action, payload, createdBy, createdAt}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeView {
    pub id: i64,
    #[serde(flatten)]
    pub change: Change,
    pub created_by: Principal,
    pub created_at: String,
}

/// A change to a segment as a request shows it: `{id, action, payload, name, createdBy, createdAt}`, `name`
/// being the segment's current name (the proposed one once it is gone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentChangeView {
    pub id: i64,
    #[serde(flatten)]
    pub change: Change,
    pub name: String,
    pub created_by: Principal,
    pub created_at: String,
}

/// The changes of one flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FeatureChanges {
    pub name: String,
    pub changes: Vec<ChangeView>,
}

/// An approval or a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    pub created_by: Principal,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: i64,
    pub text: String,
    pub created_by: Principal,
    pub created_at: String,
}

/// A change request as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequest {
    pub id: i64,
    pub title: String,
    pub project: String,
    pub environment: String,
    pub state: ChangeRequestState,
    /// `requiredApprovals` of the environment when the request was created.
    pub min_approvals: i64,
    pub created_by: Principal,
    pub created_at: String,
    /// Its creator and whoever added, edited or discarded one of its changes, the first first: none of them
    /// may approve it (a Vexil extension).
    pub authors: Vec<Principal>,
    /// When the request entered each state it has been in.
    pub state_timestamps: BTreeMap<String, String>,
    pub features: Vec<FeatureChanges>,
    pub segments: Vec<SegmentChangeView>,
    pub approvals: Vec<Review>,
    pub rejections: Vec<Review>,
    pub comments: Vec<Comment>,
    /// Only while the request is Scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
}
