//! Where strategies use a segment or a context field (`GET /api/admin/segments/:id/strategies`,
//! `GET /api/admin/context/:contextField/strategies`): every flag's strategies, archived flags included (as
//! a segment in use by an archived flag cannot be deleted either); and a strategy's segments by the
//! strategy's id alone (`/api/admin/segments/strategies…`), read and replaced as a strategy `PUT` does.

use super::limits::Limits;
use super::segments::{self, SegmentList};
use super::strategies;
use crate::store::context_fields as context_field_store;
use crate::store::segments as segment_store;
use crate::store::strategies::{self as strategy_store, PlacedStrategy};
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;
use vexil_shared::ApiError;

/// One strategy that uses the segment or context field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyReference {
    pub id: String,
    pub feature_name: String,
    pub project_id: String,
    pub environment: String,
    pub strategy_name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StrategyReferences {
    pub strategies: Vec<StrategyReference>,
}

fn references(
    placed: Vec<PlacedStrategy>,
    uses: impl Fn(&PlacedStrategy) -> bool,
) -> StrategyReferences {
    let strategies = placed
        .iter()
        .filter(|strategy| uses(strategy))
        .map(reference)
        .collect();
    StrategyReferences { strategies }
}

fn reference(strategy: &PlacedStrategy) -> StrategyReference {
    StrategyReference {
        id: strategy.row.id.clone(),
        feature_name: strategy.row.feature_name.clone(),
        project_id: strategy.project_id.clone(),
        environment: strategy.row.environment.clone(),
        strategy_name: strategy.row.name.clone(),
    }
}

/// The strategies that use segment `id`; 404 for an unknown segment.
pub async fn of_segment(conn: &mut AnyConnection, id: i64) -> Result<StrategyReferences, ApiError> {
    if segment_store::get(conn, id).await?.is_none() {
        return Err(ApiError::not_found(format!("Segment {id} does not exist")));
    }
    let placed = strategy_store::list_all_placed(conn).await?;
    Ok(references(placed, |strategy| {
        strategy.row.segments.contains(&id)
    }))
}

/// The strategies that use each segment, by segment id (segments nobody uses are absent): one read of the
/// strategies that have segments, for a whole list of segments.
pub async fn of_every_segment(
    conn: &mut AnyConnection,
) -> Result<BTreeMap<i64, Vec<StrategyReference>>, ApiError> {
    let mut by_segment: BTreeMap<i64, Vec<StrategyReference>> = BTreeMap::new();
    for strategy in segment_store::references(conn).await? {
        for id in &strategy.segments {
            by_segment.entry(*id).or_default().push(StrategyReference {
                id: strategy.strategy_id.clone(),
                feature_name: strategy.feature_name.clone(),
                project_id: strategy.project_id.clone(),
                environment: strategy.environment.clone(),
                strategy_name: strategy.strategy_name.clone(),
            });
        }
    }
    Ok(by_segment)
}

/// The strategies with a constraint on context field `name`; 404 for an unknown field.
pub async fn of_context_field(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<StrategyReferences, ApiError> {
    if context_field_store::get(conn, name).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "Context field {name} does not exist"
        )));
    }
    let placed = strategy_store::list_all_placed(conn).await?;
    Ok(references(placed, |strategy| {
        strategy
            .row
            .constraints
            .iter()
            .any(|constraint| constraint.context_name == name)
    }))
}

/// `POST /api/admin/segments/strategies`: the segments of strategy `strategyId` of a flag of `projectId` in
/// `environmentId` (echoed back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategySegments {
    pub project_id: String,
    pub strategy_id: String,
    pub environment_id: String,
    pub segment_ids: Vec<i64>,
}

async fn require_placed(conn: &mut AnyConnection, id: &str) -> Result<PlacedStrategy, ApiError> {
    strategy_store::get_placed(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Strategy {id} does not exist")))
}

/// The segments strategy `id` uses, in its order; 404 for an unknown strategy.
pub async fn segments_of_strategy(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<SegmentList, ApiError> {
    let placed = require_placed(conn, id).await?;
    let mut list = Vec::new();
    for segment in placed.row.segments {
        list.push(segments::get(conn, segment).await?);
    }
    Ok(SegmentList { segments: list })
}

/// Replaces the segments of a strategy through `strategies::update` (its checks, its event, the
/// change-request gate); the strategy must be in the named project and environment (else 400).
pub async fn set_segments_of_strategy(
    tx: &mut WriteTx,
    input: StrategySegments,
    limits: &Limits,
) -> Result<StrategySegments, ApiError> {
    let placed = require_placed(tx.conn(), &input.strategy_id).await?;
    if placed.project_id != input.project_id || placed.row.environment != input.environment_id {
        return Err(ApiError::validation(format!(
            "Strategy {} is not in environment {} of project {}",
            input.strategy_id, input.environment_id, input.project_id
        )));
    }
    let id = Uuid::parse_str(&input.strategy_id)
        .map_err(|_| ApiError::invalid_field("strategyId", "strategyId must be a UUID"))?;
    let feature = placed.row.feature_name.clone();
    let mut body = strategies::input_of(placed.row);
    body.segments = Some(input.segment_ids.clone());
    strategies::update(
        tx,
        &input.project_id,
        &feature,
        &input.environment_id,
        id,
        body,
        limits,
    )
    .await?;
    Ok(input)
}
