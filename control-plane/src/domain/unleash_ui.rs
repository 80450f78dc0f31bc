//! What Unleash's own web UI reports to its server, so that UI (and scripts written for it) work against
//! Vexil: a user's answers to feedback questionnaires (`POST /api/admin/feedback`, `PUT …/:id`), the splash
//! screens they saw (`POST /api/admin/splash/:id`), and errors the UI met (`POST /api/admin/record-ui-error`,
//! logged). Each belongs to a signed-in user; an API token has none (403). Bookkeeping, not configuration:
//! no revision, no event.

use super::access::own_user_id;
use crate::store::unleash_ui::{self as ui_store, FeedbackRow};
use crate::store::Actor;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The longest feedback or splash id taken (Unleash's are short names such as `pnps`).
const ID_MAX: usize = 100;

/// Unleash's feedbackCreateSchema.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackCreate {
    /// The questionnaire, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    pub feedback_id: String,
    #[serde(default)]
    pub never_show: bool,
}

/// Unleash's feedbackUpdateSchema (`userId` is the caller's whatever is sent).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackUpdate {
    #[serde(default)]
    pub user_id: Option<i64>,
    #[serde(default)]
    pub never_show: Option<bool>,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub given: Option<Timestamp>,
}

/// Unleash's feedbackResponseSchema.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackResponse {
    pub user_id: i64,
    pub feedback_id: String,
    pub never_show: bool,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub given: Option<Timestamp>,
}

/// Unleash's splashResponseSchema.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SplashResponse {
    pub user_id: i64,
    pub splash_id: String,
    pub seen: bool,
}

/// Unleash's recordUiErrorSchema.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiErrorReport {
    pub error_message: String,
    #[serde(default)]
    pub error_stack: Option<String>,
}

fn checked_id(field: &str, id: &str) -> Result<(), ApiError> {
    if id.trim().is_empty() || id.chars().count() > ID_MAX {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be 1 to {ID_MAX} characters"),
        ));
    }
    Ok(())
}

/// Records the caller's answer to questionnaire `feedbackId`, given now.
pub async fn create_feedback(
    conn: &mut AnyConnection,
    actor: &Actor,
    input: FeedbackCreate,
) -> Result<FeedbackResponse, ApiError> {
    let user_id = own_user_id(actor, "Feedback and splash screens")?;
    checked_id("feedbackId", &input.feedback_id)?;
    let row = FeedbackRow {
        given: Some(Timestamp::now()),
        never_show: input.never_show,
    };
    ui_store::put_feedback(conn, user_id, &input.feedback_id, &row).await?;
    Ok(response(user_id, input.feedback_id, row))
}

/// Changes the caller's answer to questionnaire `id` (what is not sent stays; a first answer is created).
pub async fn update_feedback(
    conn: &mut AnyConnection,
    actor: &Actor,
    id: &str,
    input: FeedbackUpdate,
) -> Result<FeedbackResponse, ApiError> {
    let user_id = own_user_id(actor, "Feedback and splash screens")?;
    checked_id("id", id)?;
    let before = ui_store::feedback(conn, user_id, id).await?;
    let row = FeedbackRow {
        given: input
            .given
            .or_else(|| before.as_ref().and_then(|row| row.given)),
        never_show: input
            .never_show
            .or_else(|| before.as_ref().map(|row| row.never_show))
            .unwrap_or(false),
    };
    ui_store::put_feedback(conn, user_id, id, &row).await?;
    Ok(response(user_id, id.to_owned(), row))
}

fn response(user_id: i64, feedback_id: String, row: FeedbackRow) -> FeedbackResponse {
    FeedbackResponse {
        user_id,
        feedback_id,
        never_show: row.never_show,
        given: row.given,
    }
}

/// Notes that the caller saw splash screen `id`.
pub async fn splash_seen(
    conn: &mut AnyConnection,
    actor: &Actor,
    id: &str,
) -> Result<SplashResponse, ApiError> {
    let user_id = own_user_id(actor, "Feedback and splash screens")?;
    checked_id("id", id)?;
    ui_store::mark_splash_seen(conn, user_id, id).await?;
    Ok(SplashResponse {
        user_id,
        splash_id: id.to_owned(),
        seen: true,
    })
}

/// Logs an error Unleash's UI met (a line, the message and stack cut to a few kilobytes).
pub fn record_ui_error(actor: &Actor, report: &UiErrorReport) {
    let cut = |text: &str, max: usize| -> String { text.chars().take(max).collect() };
    tracing::warn!(
        user = actor.name.as_str(),
        message = cut(&report.error_message, 2_000),
        stack = cut(report.error_stack.as_deref().unwrap_or(""), 4_000),
        "the web UI reported an error"
    );
}
