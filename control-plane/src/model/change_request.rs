//! What a change request is made of: its [`ChangeRequestState`], the [`Change`]s it proposes (one
//! serde-tagged enum: the action names and their payloads are stated once, here) and its reviews.

use super::dependency::{CreateDependency, RemoveDependency};
use super::segment::SegmentInput;
use super::strategy::{StrategyInput, StrategySortOrder};
use super::variant::FlagVariant;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use utoipa::openapi::{ObjectBuilder, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

/// The states of a change request.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
pub enum ChangeRequestState {
    Draft,
    #[serde(rename = "In review")]
    InReview,
    Approved,
    /// Approved and waiting for its time (`scheduledAt`): the control plane applies it then.
    Scheduled,
    Applied,
    Cancelled,
    Rejected,
}

impl ChangeRequestState {
    pub const ALL: [ChangeRequestState; 7] = [
        ChangeRequestState::Draft,
        ChangeRequestState::InReview,
        ChangeRequestState::Approved,
        ChangeRequestState::Scheduled,
        ChangeRequestState::Applied,
        ChangeRequestState::Cancelled,
        ChangeRequestState::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ChangeRequestState::Draft => "Draft",
            ChangeRequestState::InReview => "In review",
            ChangeRequestState::Approved => "Approved",
            ChangeRequestState::Scheduled => "Scheduled",
            ChangeRequestState::Applied => "Applied",
            ChangeRequestState::Cancelled => "Cancelled",
            ChangeRequestState::Rejected => "Rejected",
        }
    }

    pub fn parse(text: &str) -> Option<ChangeRequestState> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Applied, Cancelled and Rejected requests never change again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ChangeRequestState::Applied
                | ChangeRequestState::Cancelled
                | ChangeRequestState::Rejected
        )
    }
}

/// Where a scheduled request's schedule stands: `pending` until its time; `failed` (a change could not be
/// applied) or `suspended` (the one who scheduled it may no longer apply it) with a reason, the request
/// staying Scheduled until it is rescheduled, applied, rejected or cancelled; `applied` once the control plane
/// applied it (kept for the request's page; the API shows a schedule only while the request is Scheduled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleStatus {
    Pending,
    Failed,
    Suspended,
    Applied,
}

impl ScheduleStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Pending => "pending",
            ScheduleStatus::Failed => "failed",
            ScheduleStatus::Suspended => "suspended",
            ScheduleStatus::Applied => "applied",
        }
    }

    pub fn parse(text: &str) -> Option<ScheduleStatus> {
        [
            ScheduleStatus::Pending,
            ScheduleStatus::Failed,
            ScheduleStatus::Suspended,
            ScheduleStatus::Applied,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// A review of a request under review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKind {
    Approval,
    Rejection,
}

impl ReviewKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewKind::Approval => "approval",
            ReviewKind::Rejection => "rejection",
        }
    }

    pub fn parse(text: &str) -> Option<ReviewKind> {
        [ReviewKind::Approval, ReviewKind::Rejection]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// A change to one flag in the request's environment, or to a segment: `{"action": …, "payload": …}` on the wire and in the
/// store. Each action's payload is what the flag's own route takes, and applying runs that route's domain
/// function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "action", content = "payload", rename_all = "camelCase")]
pub enum Change {
    /// Turn the flag on or off in the environment.
    UpdateEnabled { enabled: bool },
    /// Add a strategy, as `POST …/strategies` does.
    AddStrategy(StrategyInput),
    /// Replace a strategy, as `PUT …/strategies/:id` does.
    UpdateStrategy(StrategyUpdate),
    /// Remove a strategy.
    DeleteStrategy { id: Uuid },
    /// Set the sortOrder of strategies, as `…/strategies/set-sort-order` does.
    ReorderStrategy(Vec<StrategySortOrder>),
    /// Replace the flag's variants in the environment.
    PatchVariant { variants: Vec<FlagVariant> },
    /// Archive the flag.
    ArchiveFeature(NoPayload),
    /// Make the flag depend on a parent flag, as `POST …/dependencies` does. Dependencies hold in every
    /// environment: the request's environment is where it is reviewed.
    AddDependency(CreateDependency),
    /// Remove the flag's dependency on `feature`, or all of them when none is named.
    DeleteDependency(RemoveDependency),
    /// Replace a segment, as `PUT /api/admin/segments/:id` does (a change without `feature`).
    UpdateSegment(SegmentUpdate),
    /// Delete a segment, as `DELETE /api/admin/segments/:id` does (a change without `feature`).
    DeleteSegment { id: i64 },
}

impl Change {
    /// The segment a segment change (`updateSegment`, `deleteSegment`) is about; `None` for a flag's change.
    pub fn segment(&self) -> Option<i64> {
        match self {
            Change::UpdateSegment(update) => Some(update.id),
            Change::DeleteSegment { id } => Some(*id),
            _ => None,
        }
    }

    /// The action's name as the API spells it (the serde tag).
    pub fn action(&self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut fields)) => match fields.remove("action") {
                Some(serde_json::Value::String(action)) => action,
                _ => String::new(),
            },
            _ => String::new(),
        }
    }
}

/// The payload of `updateSegment`: the segment's id and its new content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SegmentUpdate {
    pub id: i64,
    #[serde(flatten)]
    pub segment: SegmentInput,
}

/// The payload of `updateStrategy`: the strategy's id and its new content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyUpdate {
    pub id: Uuid,
    #[serde(flatten)]
    pub strategy: StrategyInput,
}

/// The payload of an action that needs none: any value is accepted, `{}` is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoPayload;

impl Serialize for NoPayload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        serializer.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoPayload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| NoPayload)
    }
}

impl PartialSchema for NoPayload {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().into()
    }
}

impl ToSchema for NoPayload {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("NoPayload")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_have_their_wire_names() {
        for state in ChangeRequestState::ALL {
            assert_eq!(ChangeRequestState::parse(state.as_str()), Some(state));
            assert_eq!(serde_json::to_value(state).unwrap(), json!(state.as_str()));
        }
    }

    #[test]
    fn a_change_is_its_action_and_payload() {
        let change: Change = serde_json::from_value(
            json!({"action": "updateEnabled", "payload": {"enabled": true}}),
        )
        .unwrap();
        assert_eq!(change, Change::UpdateEnabled { enabled: true });
        assert_eq!(change.action(), "updateEnabled");
        let archive: Change =
            serde_json::from_value(json!({"action": "archiveFeature", "payload": [1, "x"]}))
                .unwrap();
        assert_eq!(archive.action(), "archiveFeature");
        assert_eq!(
            serde_json::to_value(&archive).unwrap(),
            json!({"action": "archiveFeature", "payload": {}})
        );
        let add: Change = serde_json::from_value(
            json!({"action": "addStrategy", "payload": {"name": "default"}}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&add).unwrap(),
            json!({"action": "addStrategy", "payload": {"name": "default"}})
        );
        let id = Uuid::new_v4();
        let update: Change = serde_json::from_value(
            json!({"action": "updateStrategy", "payload": {"id": id, "name": "default", "title": "t"}}),
        )
        .unwrap();
        let Change::UpdateStrategy(body) = &update else {
            panic!("{update:?}")
        };
        assert_eq!((body.id, body.strategy.title.as_deref()), (id, Some("t")));
        assert!(
            serde_json::from_value::<Change>(json!({"action": "explode", "payload": {}}))
                .unwrap_err()
                .to_string()
                .contains("explode")
        );
    }
}
