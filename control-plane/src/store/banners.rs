//! SQL of banners (`banners`).

use super::encoding::flag;
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct BannerRow {
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
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for BannerRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(BannerRow {
            id: row.try_get("id")?,
            message: row.try_get("message")?,
            enabled: flag(row, "enabled")?,
            variant: row.try_get("variant")?,
            sticky: flag(row, "sticky")?,
            icon: row.try_get("icon")?,
            link: row.try_get("link")?,
            link_text: row.try_get("link_text")?,
            dialog_title: row.try_get("dialog_title")?,
            dialog: row.try_get("dialog")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str =
    "id, message, enabled, variant, sticky, icon, link, link_text, dialog_title, dialog, created_at";

/// Every banner, oldest first.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<BannerRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM banners ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The enabled banners, oldest first (what every UI page shows).
pub async fn enabled(conn: &mut AnyConnection) -> Result<Vec<BannerRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM banners WHERE enabled = 1 ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<BannerRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM banners WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &BannerRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO banners (id, message, enabled, variant, sticky, icon, link, link_text, dialog_title, \
         dialog, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(row.id)
    .bind(&row.message)
    .bind(i64::from(row.enabled))
    .bind(&row.variant)
    .bind(i64::from(row.sticky))
    .bind(&row.icon)
    .bind(&row.link)
    .bind(&row.link_text)
    .bind(&row.dialog_title)
    .bind(&row.dialog)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes everything but the id and the creation time.
pub async fn update(conn: &mut AnyConnection, row: &BannerRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE banners SET message = $2, enabled = $3, variant = $4, sticky = $5, icon = $6, link = $7, \
         link_text = $8, dialog_title = $9, dialog = $10 WHERE id = $1",
    )
    .bind(row.id)
    .bind(&row.message)
    .bind(i64::from(row.enabled))
    .bind(&row.variant)
    .bind(i64::from(row.sticky))
    .bind(&row.icon)
    .bind(&row.link)
    .bind(&row.link_text)
    .bind(&row.dialog_title)
    .bind(&row.dialog)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM banners WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
