//! What a segment is written as: the body of `POST`/`PUT /api/admin/segments…` and the payload of a change
//! request's `updateSegment`.

use super::constraint::Constraint;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /api/admin/segments` and `PUT /api/admin/segments/:id` (a full replace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentInput {
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
    pub description: Option<String>,
    /// A project id, or absent/null for a global segment.
    pub project: Option<String>,
    pub constraints: Vec<Constraint>,
}
