//! Banners (Unleash Enterprise's `/api/admin/banners`): a message every signed-in user sees on every admin UI
//! page while it is enabled. Admins write them (create, change, switch on and off, delete: one write each,
//! with `banner-created`, `banner-updated` or `banner-deleted`); everyone signed in reads them.
//!
//! Vexil shows the message as plain text (Unleash renders markdown; here nothing in it becomes markup), and a
//! link only when it is safe: an `http(s)` address, or a path of this instance (`/…`, not `//…`). `dialog`
//! as the link shows `dialogTitle` and `dialog` (plain text too) in a disclosure instead.

use super::events::EventType;
use crate::store::banners::{self as banner_store, BannerRow};
use crate::store::{Counter, WriteTx};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

pub const MESSAGE_MAX: usize = 1_000;
pub const SHORT_MAX: usize = 100;
pub const LINK_MAX: usize = 2_000;
pub const DIALOG_MAX: usize = 10_000;
/// The variants, in the order the UI offers them.
pub const VARIANTS: [&str; 4] = ["info", "warning", "error", "success"];

/// Unleash's createBannerSchema: the body of a create or an update (an update replaces every field; one
/// left out takes its default).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BannerInput {
    /// Shown as plain text; 1 to 1,000 characters.
    #[schema(min_length = 1, max_length = 1000)]
    pub message: String,
    /// Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// `info` (the default), `warning`, `error` or `success`.
    #[serde(default)]
    #[schema(pattern = r"^(info|warning|error|success)$")]
    pub variant: Option<String>,
    /// Whether the banner stays in view when the page scrolls; default false.
    #[serde(default)]
    pub sticky: Option<bool>,
    /// An icon name, or `none`; at most 100 characters.
    #[serde(default)]
    #[schema(max_length = 100)]
    pub icon: Option<String>,
    /// An `http(s)` address, a path of this instance (`/admin/…`), or `dialog`; at most 2,000 characters.
    #[serde(default)]
    #[schema(pattern = r"^(https?://\S+|/(?:[^/]\S*)?|dialog)$", max_length = 2000)]
    pub link: Option<String>,
    /// At most 100 characters; the UI shows "More info" when absent.
    #[serde(default)]
    #[schema(max_length = 100)]
    pub link_text: Option<String>,
    /// At most 100 characters.
    #[serde(default)]
    #[schema(max_length = 100)]
    pub dialog_title: Option<String>,
    /// At most 10,000 characters.
    #[serde(default)]
    #[schema(max_length = 10000)]
    pub dialog: Option<String>,
}

/// Unleash's bannerSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Banner {
    #[schema(minimum = 1)]
    pub id: i64,
    pub message: String,
    pub enabled: bool,
    pub variant: String,
    pub sticky: bool,
    pub icon: Option<String>,
    pub link: Option<String>,
    pub link_text: Option<String>,
    pub dialog_title: Option<String>,
    pub dialog: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// Unleash's bannersSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BannerList {
    pub banners: Vec<Banner>,
}

impl Banner {
    pub fn of(row: BannerRow) -> Banner {
        Banner {
            id: row.id,
            message: row.message,
            enabled: row.enabled,
            variant: row.variant,
            sticky: row.sticky,
            icon: row.icon,
            link: row.link,
            link_text: row.link_text,
            dialog_title: row.dialog_title,
            dialog: row.dialog,
            created_at: row.created_at.to_string(),
        }
    }
}

/// Whether `link` may be shown as a link: an `http(s)` address with a host, or a path of this instance
/// (starting with one `/`, no scheme, no backslash, no control character).
pub fn is_safe_link(link: &str) -> bool {
    if link
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return false;
    }
    if let Some(rest) = link.strip_prefix('/') {
        return !rest.starts_with('/');
    }
    url::Url::parse(link)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
}

fn optional(value: Option<String>, field: &str, max: usize) -> Result<Option<String>, ApiError> {
    let value = value
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    if value
        .as_ref()
        .is_some_and(|text| text.chars().count() > max)
    {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be at most {max} characters"),
        ));
    }
    Ok(value)
}

/// The row `input` describes (id and creation time from `id` and `created_at`), or the first field wrong.
pub fn checked(
    input: BannerInput,
    id: i64,
    created_at: crate::time::Timestamp,
) -> Result<BannerRow, ApiError> {
    let message = input.message.trim().to_owned();
    if message.is_empty() || message.chars().count() > MESSAGE_MAX {
        return Err(ApiError::invalid_field(
            "message",
            format!("message must be 1 to {MESSAGE_MAX} characters long"),
        ));
    }
    let variant = input
        .variant
        .map(|variant| variant.trim().to_ascii_lowercase())
        .filter(|variant| !variant.is_empty())
        .unwrap_or_else(|| "info".to_owned());
    if !VARIANTS.contains(&variant.as_str()) {
        return Err(ApiError::invalid_field(
            "variant",
            "variant must be one of info, warning, error or success",
        ));
    }
    let icon = optional(input.icon, "icon", SHORT_MAX)?;
    let link = optional(input.link, "link", LINK_MAX)?;
    if link
        .as_deref()
        .is_some_and(|link| link != "dialog" && !is_safe_link(link))
    {
        return Err(ApiError::invalid_field(
            "link",
            "link must be an http:// or https:// address, a path of this instance starting with / \
             (not //), or dialog",
        ));
    }
    Ok(BannerRow {
        id,
        message,
        enabled: input.enabled.unwrap_or(true),
        variant,
        sticky: input.sticky.unwrap_or(false),
        icon,
        link,
        link_text: optional(input.link_text, "linkText", SHORT_MAX)?,
        dialog_title: optional(input.dialog_title, "dialogTitle", SHORT_MAX)?,
        dialog: optional(input.dialog, "dialog", DIALOG_MAX)?,
        created_at,
    })
}

/// Every banner, oldest first.
pub async fn list(conn: &mut AnyConnection) -> Result<BannerList, ApiError> {
    Ok(BannerList {
        banners: banner_store::list(conn)
            .await?
            .into_iter()
            .map(Banner::of)
            .collect(),
    })
}

/// The enabled banners, oldest first: what every admin UI page shows.
pub async fn shown(conn: &mut AnyConnection) -> Result<Vec<Banner>, ApiError> {
    Ok(banner_store::enabled(conn)
        .await?
        .into_iter()
        .map(Banner::of)
        .collect())
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Banner, ApiError> {
    banner_store::get(conn, id)
        .await?
        .map(Banner::of)
        .ok_or_else(|| not_found(id))
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("There is no banner with id {id}"))
}

async fn record(
    tx: &mut WriteTx,
    event_type: EventType,
    data: Option<&Banner>,
    pre: Option<&Banner>,
) -> Result<(), ApiError> {
    tx.record(event_type.instance_wide(data.map(|b| json!(b)), pre.map(|b| json!(b))))
        .await?;
    Ok(())
}

pub async fn create(tx: &mut WriteTx, input: BannerInput) -> Result<Banner, ApiError> {
    // Checked before the id is taken, so bad input moves no counter.
    checked(input.clone(), 0, tx.now())?;
    let id = tx.next_id(Counter::Banner).await?;
    let row = checked(input, id, tx.now())?;
    banner_store::insert(tx.conn(), &row).await?;
    let banner = Banner::of(row);
    record(tx, EventType::BannerCreated, Some(&banner), None).await?;
    Ok(banner)
}

async fn require(tx: &mut WriteTx, id: i64) -> Result<BannerRow, ApiError> {
    banner_store::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Replaces banner `id`'s fields with `input`'s.
pub async fn update(tx: &mut WriteTx, id: i64, input: BannerInput) -> Result<Banner, ApiError> {
    let before = require(tx, id).await?;
    let after = checked(input, id, before.created_at)?;
    write(tx, before, after).await
}

/// Switches banner `id` on or off.
pub async fn set_enabled(tx: &mut WriteTx, id: i64, enabled: bool) -> Result<Banner, ApiError> {
    let before = require(tx, id).await?;
    let after = BannerRow {
        enabled,
        ..before.clone()
    };
    write(tx, before, after).await
}

async fn write(tx: &mut WriteTx, before: BannerRow, after: BannerRow) -> Result<Banner, ApiError> {
    if after == before {
        return Ok(Banner::of(after));
    }
    banner_store::update(tx.conn(), &after).await?;
    let (new, old) = (Banner::of(after), Banner::of(before));
    record(tx, EventType::BannerUpdated, Some(&new), Some(&old)).await?;
    Ok(new)
}

pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let before = require(tx, id).await?;
    banner_store::delete(tx.conn(), id).await?;
    record(
        tx,
        EventType::BannerDeleted,
        None,
        Some(&Banner::of(before)),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::is_safe_link;

    #[test]
    fn only_http_and_own_paths_are_links() {
        for good in ["https://example.com/x", "http://a.b", "/admin/banners", "/"] {
            assert!(is_safe_link(good), "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            "//evil.example",
            "/\\evil",
            "data:text/html,x",
            "mailto:a@b",
            "https://",
            "/a b",
            "ftp://x.y",
        ] {
            assert!(!is_safe_link(bad), "{bad}");
        }
    }
}
