//! [`ServingState`]: what the SDK-facing handlers read, shared by every request.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use vexil_shared::{ApiError, ErrorKind};

use crate::snapshot::ServingSnapshot;
use crate::usage::{Usage, UsageSink};

/// What the SDK-facing handlers read: the current snapshot (none until one is loaded), whether to trust
/// `X-Forwarded-For`, where the SDKs' usage goes (none: accepted and dropped) and whether the frontend
/// API counts the evaluations it answers.
#[derive(Default)]
pub struct ServingState {
    pub current: ArcSwapOption<ServingSnapshot>,
    pub trust_proxy: bool,
    pub usage: Option<Arc<dyn UsageSink>>,
    pub count_evaluations: bool,
    /// Authentication `none` (API.md §2): a call without an `Authorization` header acts as a token for
    /// every project in `development`.
    pub anonymous: bool,
}

impl ServingState {
    /// No snapshot yet, no usage sink, evaluations not counted.
    pub fn new(trust_proxy: bool) -> ServingState {
        ServingState {
            current: ArcSwapOption::empty(),
            trust_proxy,
            usage: None,
            count_evaluations: false,
            anonymous: false,
        }
    }

    /// The SDKs' register and metrics posts go to `sink`.
    pub fn with_usage(mut self, sink: Arc<dyn UsageSink>) -> ServingState {
        self.usage = Some(sink);
        self
    }

    /// The frontend API counts its evaluations per flag ([`crate::evaluation_counters::EvaluationCounters`]).
    pub fn counting_evaluations(mut self, on: bool) -> ServingState {
        self.count_evaluations = on;
        self
    }

    /// The current snapshot; 503 while none is loaded.
    pub fn loaded(&self) -> Result<Arc<ServingSnapshot>, ApiError> {
        self.current.load_full().ok_or_else(|| {
            ApiError::new(
                ErrorKind::Unavailable,
                "No configuration snapshot is loaded yet",
            )
        })
    }

    /// Hands an SDK post's usage to the sink; without one it is accepted and dropped.
    pub async fn deliver_usage(&self, usage: Usage) -> Result<(), ApiError> {
        match &self.usage {
            Some(sink) => sink.record(usage).await,
            None => Ok(()),
        }
    }
}
