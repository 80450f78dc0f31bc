//! Segments: named, reusable constraint lists that strategies reference by id. A segment with a `project` is
//! usable only by that project's flags; one in use cannot be deleted (409); one used where change requests
//! are on changes only through a change request (the change-request gate's `segment_place`).

use super::change_request_gate;
use super::context_fields;
use super::events::{payload, EventType};
use super::limits::{self, Limits};
use super::projects::to_count;
use crate::model::constraint::Constraint;
pub use crate::model::segment::SegmentInput;
use crate::store::projects as project_store;
use crate::store::segments::{self as segment_store, SegmentRow};
use crate::store::{Counter, NewEvent, StoreError, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A segment (the spec's segmentsSchema entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub constraints: Vec<Constraint>,
    /// Flags whose strategies reference it (archived ones included).
    pub used_in_features: i64,
    /// Projects of those flags.
    pub used_in_projects: i64,
    /// Null: usable by every project.
    pub project: Option<String>,
    pub created_by: String,
    pub created_at: String,
}

/// `GET /api/admin/segments` (spec endpoint 14).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SegmentList {
    pub segments: Vec<Segment>,
}

/// Which flags and projects reference each segment.
#[derive(Debug, Default)]
struct Usage {
    features: BTreeSet<String>,
    projects: BTreeSet<String>,
}

async fn usage(conn: &mut AnyConnection) -> Result<BTreeMap<i64, Usage>, StoreError> {
    let mut usage: BTreeMap<i64, Usage> = BTreeMap::new();
    for reference in segment_store::references(conn).await? {
        for id in reference.segments {
            let entry = usage.entry(id).or_default();
            entry.features.insert(reference.feature_name.clone());
            entry.projects.insert(reference.project_id.clone());
        }
    }
    Ok(usage)
}

fn view(row: SegmentRow, usage: Option<&Usage>) -> Segment {
    let count = |set: Option<&BTreeSet<String>>| {
        set.map_or(0, |set| i64::try_from(set.len()).unwrap_or(i64::MAX))
    };
    Segment {
        constraints: row.constraints,
        used_in_features: count(usage.map(|u| &u.features)),
        used_in_projects: count(usage.map(|u| &u.projects)),
        id: row.id,
        name: row.name,
        description: row.description,
        project: row.project_id,
        created_by: row.created_by,
        created_at: row.created_at.to_string(),
    }
}

impl Segment {
    /// Whether the segment's name or description contains `text`, ignoring case (as the flag search
    /// matches); empty text matches every segment.
    pub fn matches(&self, text: &str) -> bool {
        let text = text.trim().to_lowercase();
        text.is_empty()
            || self.name.to_lowercase().contains(&text)
            || self
                .description
                .as_deref()
                .is_some_and(|description| description.to_lowercase().contains(&text))
    }
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Segment {id} does not exist"))
}

pub async fn list(conn: &mut AnyConnection) -> Result<SegmentList, ApiError> {
    let usage = usage(conn).await?;
    let segments = segment_store::list(conn)
        .await?
        .into_iter()
        .map(|row| {
            let used = usage.get(&row.id);
            view(row, used)
        })
        .collect();
    Ok(SegmentList { segments })
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Segment, ApiError> {
    let row = segment_store::get(conn, id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let usage = usage(conn).await?;
    Ok(view(row, usage.get(&id)))
}

/// `POST /api/admin/segments/validate`: `{name}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct SegmentName {
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
}

/// The name is 1 to 100 characters (400) and no segment has it (409).
pub async fn validate_name(conn: &mut AnyConnection, input: SegmentName) -> Result<(), ApiError> {
    let length = input.name.trim().chars().count();
    if length == 0 || length > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "name must be 1 to 100 characters long",
        ));
    }
    if segment_store::get_by_name(conn, &input.name)
        .await?
        .is_some()
    {
        return Err(ApiError::name_exists(format!(
            "A segment named {} already exists",
            input.name
        )));
    }
    Ok(())
}

/// Checks an input: name, project, constraints and the `segmentValues` limit.
async fn validate(tx: &mut WriteTx, input: &SegmentInput, limits: &Limits) -> Result<(), ApiError> {
    let length = input.name.trim().chars().count();
    if length == 0 || length > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "name must be 1 to 100 characters long",
        ));
    }
    if let Some(project) = &input.project {
        if project_store::get(tx.conn(), project).await?.is_none() {
            return Err(ApiError::invalid_field(
                "project",
                format!("project: project {project} does not exist"),
            ));
        }
    }
    context_fields::check_constraints(tx.conn(), input.project.as_deref(), &input.constraints)
        .await?;
    let values: usize = input
        .constraints
        .iter()
        .map(|constraint| constraint.values.len())
        .sum();
    limits::ensure_within(
        "segmentValues",
        "the values of this segment",
        values,
        limits.segment_values,
    )
    .map_err(|error| error.at_field("constraints"))
}

async fn ensure_name_free(
    tx: &mut WriteTx,
    name: &str,
    except: Option<i64>,
) -> Result<(), ApiError> {
    match segment_store::get_by_name(tx.conn(), name).await? {
        Some(existing) if Some(existing.id) != except => Err(ApiError::name_exists(format!(
            "A segment named {name} already exists"
        ))),
        _ => Ok(()),
    }
}

fn segment_event(
    event_type: EventType,
    segment: &Segment,
    data: Option<serde_json::Value>,
    pre_data: Option<serde_json::Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: segment.project.clone(),
        data,
        pre_data,
        ..NewEvent::default()
    }
}

pub async fn create(
    tx: &mut WriteTx,
    input: SegmentInput,
    limits: &Limits,
) -> Result<Segment, ApiError> {
    validate(tx, &input, limits).await?;
    ensure_name_free(tx, &input.name, None).await?;
    let count = segment_store::count(tx.conn()).await?;
    limits::ensure_within("segments", "segments", to_count(count) + 1, limits.segments)?;
    let row = SegmentRow {
        id: tx.next_id(Counter::Segment).await?,
        name: input.name,
        description: input.description,
        project_id: input.project,
        constraints: input.constraints,
        created_by: tx.actor().name.clone(),
        created_at: tx.now(),
    };
    segment_store::insert(tx.conn(), &row).await?;
    let segment = view(row, None);
    tx.record(segment_event(
        EventType::SegmentCreated,
        &segment,
        Some(payload(&segment)),
        None,
    ))
    .await?;
    Ok(segment)
}

/// Replaces a segment. Moving it into a project is refused while flags of other projects use it.
pub async fn update(
    tx: &mut WriteTx,
    id: i64,
    input: SegmentInput,
    limits: &Limits,
) -> Result<(), ApiError> {
    let before_row = segment_store::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    change_request_gate::ensure_segment_writable(tx, id).await?;
    validate(tx, &input, limits).await?;
    ensure_name_free(tx, &input.name, Some(id)).await?;
    let usage = usage(tx.conn()).await?;
    let used = usage.get(&id);
    if let (Some(project), Some(used)) = (&input.project, used) {
        if let Some(other) = used.projects.iter().find(|p| *p != project) {
            return Err(ApiError::invalid_field("project", format!(
                "project: segment {id} is used by flags of project {other}, so it cannot belong to project {project} only"
            )));
        }
    }
    let before = view(before_row.clone(), used);
    let row = SegmentRow {
        name: input.name,
        description: input.description,
        project_id: input.project,
        constraints: input.constraints,
        ..before_row
    };
    let after = view(row.clone(), used);
    if after == before {
        return Ok(());
    }
    segment_store::update(tx.conn(), &row).await?;
    tx.record(segment_event(
        EventType::SegmentUpdated,
        &after,
        Some(payload(&after)),
        Some(payload(&before)),
    ))
    .await?;
    Ok(())
}

/// Deletes an unused segment; in use → 409 naming the flags.
pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let row = segment_store::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let usage = usage(tx.conn()).await?;
    if let Some(used) = usage.get(&id) {
        let flags: Vec<&str> = used.features.iter().map(String::as_str).collect();
        return Err(ApiError::name_exists(format!(
            "Segment {id} is in use by the strategies of {} flag(s) ({}); remove it from them first",
            flags.len(),
            flags.join(", ")
        )));
    }
    // Unused by now, so the gate lets it through; asked all the same, as by every segment write, so that no
    // later rule on use can skip it.
    change_request_gate::ensure_segment_writable(tx, id).await?;
    let before = view(row, None);
    segment_store::delete(tx.conn(), id).await?;
    tx.record(segment_event(
        EventType::SegmentDeleted,
        &before,
        None,
        Some(payload(&before)),
    ))
    .await?;
    Ok(())
}

/// Checks a strategy's segment ids: each exists, and a project segment belongs to the flag's project.
pub async fn check_strategy_segments(
    conn: &mut AnyConnection,
    segments: &[i64],
    project: &str,
) -> Result<(), ApiError> {
    for (index, id) in segments.iter().enumerate() {
        let Some(row) = segment_store::get(conn, *id).await? else {
            return Err(ApiError::invalid_field(
                format!("segments[{index}]"),
                format!("segments[{index}]: segment {id} does not exist"),
            ));
        };
        if let Some(owner) = &row.project_id {
            if owner != project {
                return Err(ApiError::invalid_field(format!("segments[{index}]"), format!(
                    "segments[{index}]: segment {id} belongs to project {owner} and cannot be used in project {project}"
                )));
            }
        }
    }
    Ok(())
}
