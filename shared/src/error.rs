//! The API error: every error answer of Vexil's HTTP servers is exactly `{"id","name","message"}`
//! (`id` a fresh UUID v4), with the status that goes with its [`ErrorKind`] (API.md §1.1).

use serde::{Deserialize, Serialize};
use std::fmt;

/// What went wrong, which fixes the HTTP status and the `name` of the error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 400: bad body, parameter, JSON or name.
    Validation,
    /// 401: the Authorization header is missing, unknown or expired.
    AuthenticationRequired,
    /// 403: valid credentials of the wrong kind or without the permission.
    NoAccess,
    /// 404: unknown resource or route.
    NotFound,
    /// 405: the route exists but not with this method.
    MethodNotAllowed,
    /// 400: a configured resource limit would be exceeded.
    ExceedsLimit,
    /// 409: the name is taken.
    NameExists,
    /// 413: the request body is over the configured limit.
    PayloadTooLarge,
    /// 415: a write without a JSON content type.
    ContentType,
    /// 431: the request's head (line and headers) is over the server's limit.
    HeadTooLarge,
    /// 429: too many attempts (sign-in) or too many at once; the answer says when to retry (`Retry-After`).
    RateLimit,
    /// 500: an unexpected failure; the message never carries internals.
    Internal,
    /// 503: a dependency (the store) is unreachable.
    Unavailable,
}

impl ErrorKind {
    /// The HTTP status code.
    pub fn status(self) -> u16 {
        match self {
            ErrorKind::Validation => 400,
            ErrorKind::AuthenticationRequired => 401,
            ErrorKind::NoAccess => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::MethodNotAllowed => 405,
            ErrorKind::ExceedsLimit => 400,
            ErrorKind::NameExists => 409,
            ErrorKind::PayloadTooLarge => 413,
            ErrorKind::ContentType => 415,
            ErrorKind::HeadTooLarge => 431,
            ErrorKind::RateLimit => 429,
            ErrorKind::Internal => 500,
            ErrorKind::Unavailable => 503,
        }
    }

    /// The `name` field of the error body.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationError",
            ErrorKind::AuthenticationRequired => "AuthenticationRequired",
            ErrorKind::NoAccess => "NoAccessError",
            ErrorKind::NotFound => "NotFoundError",
            ErrorKind::MethodNotAllowed => "MethodNotAllowedError",
            ErrorKind::ExceedsLimit => "ExceedsLimitError",
            ErrorKind::NameExists => "NameExistsError",
            ErrorKind::PayloadTooLarge => "PayloadTooLargeError",
            ErrorKind::ContentType => "ContentTypeError",
            ErrorKind::HeadTooLarge => "RequestHeaderFieldsTooLargeError",
            // Unleash's name for its 429.
            ErrorKind::RateLimit => "RateLimitError",
            ErrorKind::Internal => "InternalError",
            ErrorKind::Unavailable => "ServiceUnavailableError",
        }
    }
}

/// An error answer: a kind and a message for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
    /// Whole seconds after which the request may succeed, answered as the `Retry-After` header.
    pub retry_after_secs: Option<u64>,
    /// The path of the body field the error is about (`tokenName`, `constraints[1].values`), for a form to
    /// show the message beside its control. Not part of the answer: the body stays `{"id","name","message"}`.
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ApiError {
            kind,
            message: message.into(),
            retry_after_secs: None,
            field: None,
        }
    }

    /// A 429 `RateLimitError` that tells the caller to retry after `retry_after` (rounded up to whole
    /// seconds, at least one).
    pub fn rate_limited(message: impl Into<String>, retry_after: std::time::Duration) -> Self {
        let whole = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
        ApiError {
            retry_after_secs: Some(whole.max(1)),
            ..Self::new(ErrorKind::RateLimit, message)
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Validation, message)
    }

    /// A 400 about the body field at `path` (its message usually starts with that path, as the API's have).
    pub fn invalid_field(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Validation, message).at_field(path)
    }

    /// This error, about the body field at `path`.
    pub fn at_field(self, path: impl Into<String>) -> Self {
        ApiError {
            field: Some(path.into()),
            ..self
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn name_exists(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NameExists, message)
    }

    /// A 500 whose message is generic: the cause is for the logs, not for the caller.
    pub fn internal() -> Self {
        Self::new(
            ErrorKind::Internal,
            "An unexpected error occurred; it has been logged.",
        )
    }

    /// The JSON body, with a fresh UUID v4 as `id`.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            id: uuid::Uuid::new_v4().to_string(),
            name: self.kind.name().to_owned(),
            message: self.message.clone(),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for ApiError {}

/// The wire shape of an error: exactly these three fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub id: String,
    pub name: String,
    pub message: String,
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponse for ApiError {
    fn into_response(self) -> axum::response::Response {
        let status = axum::http::StatusCode::from_u16(self.kind.status())
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after_secs {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_exactly_id_name_message_with_a_v4_id() {
        let body = ApiError::not_found("no such flag").body();
        let json = serde_json::to_value(&body).unwrap();
        let object = json.as_object().unwrap();
        assert_eq!(object.len(), 3);
        assert_eq!(json["name"], "NotFoundError");
        assert_eq!(json["message"], "no such flag");
        let id = uuid::Uuid::parse_str(json["id"].as_str().unwrap()).unwrap();
        assert_eq!(id.get_version_num(), 4);
    }

    #[test]
    fn the_field_path_is_not_in_the_body() {
        let error =
            ApiError::invalid_field("constraints[1].values", "constraints[1].values: too many");
        assert_eq!(error.field.as_deref(), Some("constraints[1].values"));
        assert_eq!(error.kind, ErrorKind::Validation);
        let json = serde_json::to_value(error.body()).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 3);
        assert_eq!(json["message"], "constraints[1].values: too many");
    }

    #[test]
    fn statuses_follow_the_api_table() {
        assert_eq!(ErrorKind::Validation.status(), 400);
        assert_eq!(ErrorKind::AuthenticationRequired.status(), 401);
        assert_eq!(ErrorKind::NoAccess.status(), 403);
        assert_eq!(ErrorKind::NameExists.status(), 409);
        assert_eq!(ErrorKind::ExceedsLimit.status(), 400);
        assert_eq!(ErrorKind::ExceedsLimit.name(), "ExceedsLimitError");
        assert_eq!(ErrorKind::PayloadTooLarge.status(), 413);
        assert_eq!(ErrorKind::ContentType.status(), 415);
        assert_eq!(ErrorKind::HeadTooLarge.status(), 431);
        assert_eq!(ErrorKind::RateLimit.status(), 429);
        assert_eq!(ErrorKind::RateLimit.name(), "RateLimitError");
        assert_eq!(ApiError::internal().kind.name(), "InternalError");
    }

    #[test]
    fn a_rate_limit_rounds_its_wait_up_to_whole_seconds() {
        use std::time::Duration;
        let error = ApiError::rate_limited("slow down", Duration::from_millis(1_200));
        assert_eq!(error.retry_after_secs, Some(2));
        assert_eq!(error.body().name, "RateLimitError");
        assert_eq!(
            ApiError::rate_limited("x", Duration::ZERO).retry_after_secs,
            Some(1)
        );
        assert_eq!(ApiError::not_found("x").retry_after_secs, None);
    }
}
