//! SQL of tag types, tags and flag tags. A flag tag is one `feature_tags` row (flag name, tag type, tag
//! value) referencing its tag; deleting a tag type deletes its tags, deleting a tag its flag tags.

use super::encoding::{placeholders, IN_LIST_CHUNK};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct TagTypeRow {
    pub name: String,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub color: Option<String>,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for TagTypeRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(TagTypeRow {
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            icon: row.try_get("icon")?,
            color: row.try_get("color")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

/// A tag, with its type's color.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRow {
    pub tag_type: String,
    pub value: String,
    pub color: Option<String>,
}

impl FromRow<'_, AnyRow> for TagRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(TagRow {
            tag_type: row.try_get("tag_type")?,
            value: row.try_get("tag_value")?,
            color: row.try_get("color")?,
        })
    }
}

/// A tag on a flag, with its type's color.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureTagRow {
    pub feature_name: String,
    pub tag: TagRow,
}

impl FromRow<'_, AnyRow> for FeatureTagRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(FeatureTagRow {
            feature_name: row.try_get("feature_name")?,
            tag: TagRow::from_row(row)?,
        })
    }
}

const TYPE_COLUMNS: &str = "name, description, icon, color, created_at";

/// Every tag type, by name.
pub async fn list_types(conn: &mut AnyConnection) -> Result<Vec<TagTypeRow>, StoreError> {
    let sql = format!("SELECT {TYPE_COLUMNS} FROM tag_types ORDER BY name");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get_type(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<TagTypeRow>, StoreError> {
    let sql = format!("SELECT {TYPE_COLUMNS} FROM tag_types WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn insert_type(conn: &mut AnyConnection, row: &TagTypeRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO tag_types (name, description, icon, color, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.icon)
    .bind(&row.color)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes description, icon and color.
pub async fn update_type(conn: &mut AnyConnection, row: &TagTypeRow) -> Result<(), StoreError> {
    sqlx::query("UPDATE tag_types SET description = $2, icon = $3, color = $4 WHERE name = $1")
        .bind(&row.name)
        .bind(&row.description)
        .bind(&row.icon)
        .bind(&row.color)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes a tag type with its tags and their flag tags.
pub async fn delete_type(conn: &mut AnyConnection, name: &str) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM feature_tags WHERE tag_type = $1",
        "DELETE FROM tags WHERE tag_type = $1",
        "DELETE FROM tag_types WHERE name = $1",
    ] {
        sqlx::query(sql).bind(name).execute(&mut *conn).await?;
    }
    Ok(())
}

const TAG_SELECT: &str =
    "SELECT t.tag_type, t.tag_value, tt.color FROM tags t JOIN tag_types tt ON tt.name = t.tag_type";

/// Every tag, by type and value.
pub async fn list_tags(conn: &mut AnyConnection) -> Result<Vec<TagRow>, StoreError> {
    let sql = format!("{TAG_SELECT} ORDER BY t.tag_type, t.tag_value");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The tags of one type, by value.
pub async fn list_tags_of_type(
    conn: &mut AnyConnection,
    tag_type: &str,
) -> Result<Vec<TagRow>, StoreError> {
    let sql = format!("{TAG_SELECT} WHERE t.tag_type = $1 ORDER BY t.tag_value");
    Ok(sqlx::query_as(&sql).bind(tag_type).fetch_all(conn).await?)
}

pub async fn get_tag(
    conn: &mut AnyConnection,
    tag_type: &str,
    value: &str,
) -> Result<Option<TagRow>, StoreError> {
    let sql = format!("{TAG_SELECT} WHERE t.tag_type = $1 AND t.tag_value = $2");
    Ok(sqlx::query_as(&sql)
        .bind(tag_type)
        .bind(value)
        .fetch_optional(conn)
        .await?)
}

/// Inserts a tag unless it exists; whether it was inserted.
pub async fn insert_tag(
    conn: &mut AnyConnection,
    tag_type: &str,
    value: &str,
    created_at: Timestamp,
) -> Result<bool, StoreError> {
    let result = sqlx::query(
        "INSERT INTO tags (tag_type, tag_value, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (tag_type, tag_value) DO NOTHING",
    )
    .bind(tag_type)
    .bind(value)
    .bind(created_at)
    .execute(conn)
    .await?;
    Ok(result.rows_affected() > 0)
}

/// Deletes a tag and takes it off every flag.
pub async fn delete_tag(
    conn: &mut AnyConnection,
    tag_type: &str,
    value: &str,
) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM feature_tags WHERE tag_type = $1 AND tag_value = $2",
        "DELETE FROM tags WHERE tag_type = $1 AND tag_value = $2",
    ] {
        sqlx::query(sql)
            .bind(tag_type)
            .bind(value)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

const FEATURE_TAG_SELECT: &str = "SELECT ft.feature_name, ft.tag_type, ft.tag_value, tt.color \
     FROM feature_tags ft JOIN tag_types tt ON tt.name = ft.tag_type";

/// The tags of one flag, by type and value.
pub async fn of_feature(
    conn: &mut AnyConnection,
    feature: &str,
) -> Result<Vec<TagRow>, StoreError> {
    let sql = format!(
        "{FEATURE_TAG_SELECT} WHERE ft.feature_name = $1 ORDER BY ft.tag_type, ft.tag_value"
    );
    let rows: Vec<FeatureTagRow> = sqlx::query_as(&sql).bind(feature).fetch_all(conn).await?;
    Ok(rows.into_iter().map(|row| row.tag).collect())
}

/// The tags of the named flags, by flag, type and value.
pub async fn of_features(
    conn: &mut AnyConnection,
    features: &[String],
) -> Result<Vec<FeatureTagRow>, StoreError> {
    let mut rows = Vec::new();
    for chunk in features.chunks(IN_LIST_CHUNK) {
        let sql = format!(
            "{FEATURE_TAG_SELECT} WHERE ft.feature_name IN ({}) \
             ORDER BY ft.feature_name, ft.tag_type, ft.tag_value",
            placeholders(1, chunk.len())
        );
        let mut query = sqlx::query_as(&sql);
        for name in chunk {
            query = query.bind(name);
        }
        let found: Vec<FeatureTagRow> = query.fetch_all(&mut *conn).await?;
        rows.extend(found);
    }
    rows.sort_by(|a, b| a.feature_name.cmp(&b.feature_name));
    Ok(rows)
}

/// The tags of every flag (archived ones too), by flag, type and value.
pub async fn of_all_features(conn: &mut AnyConnection) -> Result<Vec<FeatureTagRow>, StoreError> {
    let sql = format!("{FEATURE_TAG_SELECT} ORDER BY ft.feature_name, ft.tag_type, ft.tag_value");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The names of the flags (archived ones too) that carry a tag, by name.
pub async fn features_with_tag(
    conn: &mut AnyConnection,
    tag_type: &str,
    value: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT feature_name FROM feature_tags WHERE tag_type = $1 AND tag_value = $2 ORDER BY feature_name",
    )
    .bind(tag_type)
    .bind(value)
    .fetch_all(conn)
    .await?)
}

/// Puts a tag on a flag unless it is there; whether it was added. The tag must exist.
pub async fn add_to_feature(
    conn: &mut AnyConnection,
    feature: &str,
    tag_type: &str,
    value: &str,
    created_at: Timestamp,
) -> Result<bool, StoreError> {
    let result = sqlx::query(
        "INSERT INTO feature_tags (feature_name, tag_type, tag_value, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (feature_name, tag_type, tag_value) DO NOTHING",
    )
    .bind(feature)
    .bind(tag_type)
    .bind(value)
    .bind(created_at)
    .execute(conn)
    .await?;
    Ok(result.rows_affected() > 0)
}

/// Takes a tag off a flag; whether it was there.
pub async fn remove_from_feature(
    conn: &mut AnyConnection,
    feature: &str,
    tag_type: &str,
    value: &str,
) -> Result<bool, StoreError> {
    let result = sqlx::query(
        "DELETE FROM feature_tags WHERE feature_name = $1 AND tag_type = $2 AND tag_value = $3",
    )
    .bind(feature)
    .bind(tag_type)
    .bind(value)
    .execute(conn)
    .await?;
    Ok(result.rows_affected() > 0)
}
