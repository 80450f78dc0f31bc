//! Tags (Unleash's): tag types (`simple` is built in, a row of the migration), tags (a type and a value) and
//! the tags on flags. Putting a tag on a flag creates the tag if it is new (`tag-created`, then
//! `feature-tagged`); deleting a tag takes it off every flag, deleting a tag type deletes its tags. No
//! resource limit applies (Unleash has none for tags). The functions over a [`WriteTx`] can be called by
//! other domain modules (import) in their own transaction.

use super::events::{payload, EventType};
use crate::store::features as feature_store;
use crate::store::tags::{self as tag_store, TagRow, TagTypeRow};
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A tag type (tagTypeSchema); also the body of `POST /api/admin/tag-types` and of its validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TagType {
    /// 2 to 50 URL-safe characters.
    #[schema(
        min_length = 2,
        max_length = 50,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// `#` and six hexadecimal digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = r"^#[0-9A-Fa-f]{6}$")]
    pub color: Option<String>,
}

/// `GET /api/admin/tag-types` (tagTypesSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagTypeList {
    pub version: u32,
    pub tag_types: Vec<TagType>,
}

/// `PUT /api/admin/tag-types/:name` (updateTagTypeSchema): absent fields keep their value.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct UpdateTagType {
    pub description: Option<String>,
    pub icon: Option<String>,
    #[schema(pattern = r"^#[0-9A-Fa-f]{6}$")]
    pub color: Option<String>,
}

/// `POST /api/admin/tag-types/validate` (validateTagTypeSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagTypeValidation {
    pub valid: bool,
    pub tag_type: TagType,
}

/// A tag (tagSchema); also the body that creates one or puts one on a flag (createTagSchema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Tag {
    /// 2 to 50 characters once trimmed.
    #[schema(pattern = r"^\s*\S[\s\S]{0,48}\S\s*$")]
    pub value: String,
    /// The tag type's name.
    #[serde(rename = "type")]
    #[schema(
        min_length = 2,
        max_length = 50,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub tag_type: String,
    /// The tag type's color, on reads; ignored on writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// `GET /api/admin/tags`, `…/tags/:type`, `GET|PUT /api/admin/features/:f/tags` (tagsSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TagList {
    pub version: u32,
    pub tags: Vec<Tag>,
}

/// `POST /api/admin/tags` and `GET /api/admin/tags/:type/:value` (tagWithVersionSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TagWithVersion {
    pub version: u32,
    pub tag: Tag,
}

/// `PUT /api/admin/features/:f/tags` (updateTagsSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTags {
    pub added_tags: Vec<Tag>,
    pub removed_tags: Vec<Tag>,
}

/// A tag of a flag, as export reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureTag {
    pub feature_name: String,
    pub tag: Tag,
}

fn type_view(row: TagTypeRow) -> TagType {
    TagType {
        name: row.name,
        description: row.description,
        icon: row.icon,
        color: row.color,
    }
}

fn tag_view(row: TagRow) -> Tag {
    Tag {
        value: row.value,
        tag_type: row.tag_type,
        color: row.color,
    }
}

/// The tag as events carry it: type and value.
fn tag_payload(tag: &Tag) -> serde_json::Value {
    serde_json::json!({"type": tag.tag_type, "value": tag.value})
}

fn type_not_found(name: &str) -> ApiError {
    ApiError::not_found(format!("Tag type {name} does not exist"))
}

fn check_length(field: &str, value: &str) -> Result<(), ApiError> {
    let length = value.chars().count();
    if !(2..=50).contains(&length) {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be 2 to 50 characters long"),
        ));
    }
    Ok(())
}

fn check_color(field: &str, color: Option<&str>) -> Result<(), ApiError> {
    let Some(color) = color else { return Ok(()) };
    let digits = color.strip_prefix('#').unwrap_or("");
    if digits.len() != 6 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be # and six hexadecimal digits, not {color:?}"),
        ));
    }
    Ok(())
}

/// A tag type's name: 2 to 50 URL-safe characters.
fn check_type_name(field: &str, name: &str) -> Result<(), ApiError> {
    check_length(field, name)?;
    crate::model::name::validate(field, name)
}

fn check_tag_type(input: &TagType) -> Result<(), ApiError> {
    check_type_name("name", &input.name)?;
    check_color("color", input.color.as_deref())
}

/// The tag with its value trimmed, checked (2 to 50 characters, a type name's rule for `type`).
fn checked_tag(tag: &Tag, field: &str) -> Result<Tag, ApiError> {
    let value = tag.value.trim();
    check_length(&format!("{field}value"), value)?;
    check_type_name(&format!("{field}type"), &tag.tag_type)?;
    Ok(Tag {
        value: value.to_owned(),
        tag_type: tag.tag_type.clone(),
        color: None,
    })
}

pub async fn list_types(conn: &mut AnyConnection) -> Result<TagTypeList, ApiError> {
    let tag_types = tag_store::list_types(conn)
        .await?
        .into_iter()
        .map(type_view)
        .collect();
    Ok(TagTypeList {
        version: 1,
        tag_types,
    })
}

pub async fn get_type(conn: &mut AnyConnection, name: &str) -> Result<TagType, ApiError> {
    tag_store::get_type(conn, name)
        .await?
        .map(type_view)
        .ok_or_else(|| type_not_found(name))
}

/// 400 for a bad tag type, 409 for a name in use; else `{valid: true, tagType}`.
pub async fn validate_type(
    conn: &mut AnyConnection,
    input: TagType,
) -> Result<TagTypeValidation, ApiError> {
    check_tag_type(&input)?;
    if tag_store::get_type(conn, &input.name).await?.is_some() {
        return Err(type_exists(&input.name));
    }
    Ok(TagTypeValidation {
        valid: true,
        tag_type: input,
    })
}

fn type_exists(name: &str) -> ApiError {
    ApiError::name_exists(format!("A tag type named {name} already exists"))
}

/// Creates a tag type (`tag-type-created`); 409 if the name is taken.
pub async fn create_type(tx: &mut WriteTx, input: TagType) -> Result<TagType, ApiError> {
    check_tag_type(&input)?;
    if tag_store::get_type(tx.conn(), &input.name).await?.is_some() {
        return Err(type_exists(&input.name));
    }
    insert_type(tx, input).await
}

async fn insert_type(tx: &mut WriteTx, input: TagType) -> Result<TagType, ApiError> {
    let row = TagTypeRow {
        name: input.name,
        description: input.description,
        icon: input.icon,
        color: input.color,
        created_at: tx.now(),
    };
    tag_store::insert_type(tx.conn(), &row).await?;
    let view = type_view(row);
    tx.record(EventType::TagTypeCreated.instance_wide(Some(payload(&view)), None))
        .await?;
    Ok(view)
}

/// Creates the tag type unless one of that name exists (kept as it is); whether it was created. For bulk
/// writes (import) within the caller's transaction.
pub async fn ensure_tag_type(tx: &mut WriteTx, input: TagType) -> Result<bool, ApiError> {
    check_tag_type(&input)?;
    if tag_store::get_type(tx.conn(), &input.name).await?.is_some() {
        return Ok(false);
    }
    insert_type(tx, input).await?;
    Ok(true)
}

/// Updates description, icon and color (`tag-type-updated`, only on a change); 404 for an unknown type.
pub async fn update_type(
    tx: &mut WriteTx,
    name: &str,
    input: UpdateTagType,
) -> Result<TagType, ApiError> {
    check_color("color", input.color.as_deref())?;
    let before = tag_store::get_type(tx.conn(), name)
        .await?
        .ok_or_else(|| type_not_found(name))?;
    let after = TagTypeRow {
        description: input.description.or_else(|| before.description.clone()),
        icon: input.icon.or_else(|| before.icon.clone()),
        color: input.color.or_else(|| before.color.clone()),
        ..before.clone()
    };
    let view = type_view(after.clone());
    if after != before {
        tag_store::update_type(tx.conn(), &after).await?;
        let pre_data = payload(&type_view(before));
        tx.record(EventType::TagTypeUpdated.instance_wide(Some(payload(&view)), Some(pre_data)))
            .await?;
    }
    Ok(view)
}

/// Deletes a tag type with its tags, which leave every flag (`tag-type-deleted`); 404 for an unknown type.
pub async fn delete_type(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    let before = tag_store::get_type(tx.conn(), name)
        .await?
        .ok_or_else(|| type_not_found(name))?;
    tag_store::delete_type(tx.conn(), name).await?;
    tx.record(EventType::TagTypeDeleted.instance_wide(None, Some(payload(&type_view(before)))))
        .await?;
    Ok(())
}

pub async fn list_tags(conn: &mut AnyConnection) -> Result<TagList, ApiError> {
    let tags = tag_store::list_tags(conn)
        .await?
        .into_iter()
        .map(tag_view)
        .collect();
    Ok(TagList { version: 1, tags })
}

/// The tags of one type (none for an unknown type).
pub async fn list_tags_of_type(
    conn: &mut AnyConnection,
    tag_type: &str,
) -> Result<TagList, ApiError> {
    let tags = tag_store::list_tags_of_type(conn, tag_type)
        .await?
        .into_iter()
        .map(tag_view)
        .collect();
    Ok(TagList { version: 1, tags })
}

fn tag_not_found(tag_type: &str, value: &str) -> ApiError {
    ApiError::not_found(format!("Tag {tag_type}:{value} does not exist"))
}

pub async fn get_tag(
    conn: &mut AnyConnection,
    tag_type: &str,
    value: &str,
) -> Result<TagWithVersion, ApiError> {
    let row = tag_store::get_tag(conn, tag_type, value)
        .await?
        .ok_or_else(|| tag_not_found(tag_type, value))?;
    Ok(TagWithVersion {
        version: 1,
        tag: tag_view(row),
    })
}

/// 404 unless the tag type exists.
async fn require_type(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    match tag_store::get_type(tx.conn(), name).await? {
        Some(_) => Ok(()),
        None => Err(type_not_found(name)),
    }
}

/// Creates the (checked) tag unless it exists (`tag-created`); whether it was created.
async fn ensure_tag(tx: &mut WriteTx, tag: &Tag) -> Result<bool, ApiError> {
    require_type(tx, &tag.tag_type).await?;
    let now = tx.now();
    let created = tag_store::insert_tag(tx.conn(), &tag.tag_type, &tag.value, now).await?;
    if created {
        tx.record(EventType::TagCreated.instance_wide(Some(tag_payload(tag)), None))
            .await?;
    }
    Ok(created)
}

/// `POST /api/admin/tags`: a new tag (`tag-created`); 404 for an unknown type, 409 if it exists.
pub async fn create_tag(tx: &mut WriteTx, input: Tag) -> Result<TagWithVersion, ApiError> {
    let tag = checked_tag(&input, "")?;
    if !ensure_tag(tx, &tag).await? {
        return Err(ApiError::name_exists(format!(
            "The tag {}:{} already exists",
            tag.tag_type, tag.value
        )));
    }
    Ok(TagWithVersion { version: 1, tag })
}

/// Deletes a tag and takes it off every flag (`tag-deleted`); 404 if it does not exist.
pub async fn delete_tag(tx: &mut WriteTx, tag_type: &str, value: &str) -> Result<(), ApiError> {
    let row = tag_store::get_tag(tx.conn(), tag_type, value)
        .await?
        .ok_or_else(|| tag_not_found(tag_type, value))?;
    tag_store::delete_tag(tx.conn(), tag_type, value).await?;
    let tag = tag_view(row);
    tx.record(EventType::TagDeleted.instance_wide(None, Some(tag_payload(&tag))))
        .await?;
    Ok(())
}

/// The flag (archived or not); 404 if it does not exist.
async fn require_feature(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<feature_store::FeatureRow, ApiError> {
    feature_store::get(conn, name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Flag {name} does not exist")))
}

/// `GET /api/admin/features/:f/tags`: the flag's tags by type and value; 404 for an unknown flag.
pub async fn feature_tags(conn: &mut AnyConnection, feature: &str) -> Result<TagList, ApiError> {
    require_feature(conn, feature).await?;
    let tags = tag_store::of_feature(conn, feature)
        .await?
        .into_iter()
        .map(tag_view)
        .collect();
    Ok(TagList { version: 1, tags })
}

/// The tags of the named flags (archived ones too), by flag, type and value.
pub async fn tags_of_features(
    conn: &mut AnyConnection,
    features: &[String],
) -> Result<Vec<FeatureTag>, ApiError> {
    Ok(tag_store::of_features(conn, features)
        .await?
        .into_iter()
        .map(|row| FeatureTag {
            feature_name: row.feature_name,
            tag: tag_view(row.tag),
        })
        .collect())
}

fn feature_event(
    event_type: EventType,
    feature: &feature_store::FeatureRow,
    data: Option<serde_json::Value>,
    pre_data: Option<serde_json::Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(feature.project_id.clone()),
        feature_name: Some(feature.name.clone()),
        data,
        pre_data,
        ..NewEvent::default()
    }
}

/// Puts a checked tag on a flag, creating the tag if it is new; `feature-tagged` when it was not there.
async fn tag_feature(
    tx: &mut WriteTx,
    feature: &feature_store::FeatureRow,
    tag: &Tag,
) -> Result<bool, ApiError> {
    ensure_tag(tx, tag).await?;
    let now = tx.now();
    let added =
        tag_store::add_to_feature(tx.conn(), &feature.name, &tag.tag_type, &tag.value, now).await?;
    if added {
        tx.record(feature_event(
            EventType::FeatureTagged,
            feature,
            Some(tag_payload(tag)),
            None,
        ))
        .await?;
    }
    Ok(added)
}

/// Takes a checked tag off a flag; `feature-untagged` when it was there.
async fn untag_feature(
    tx: &mut WriteTx,
    feature: &feature_store::FeatureRow,
    tag: &Tag,
) -> Result<bool, ApiError> {
    let removed =
        tag_store::remove_from_feature(tx.conn(), &feature.name, &tag.tag_type, &tag.value).await?;
    if removed {
        tx.record(feature_event(
            EventType::FeatureUntagged,
            feature,
            None,
            Some(tag_payload(tag)),
        ))
        .await?;
    }
    Ok(removed)
}

/// `POST /api/admin/features/:f/tags` (and import): puts a tag on a flag (archived ones too), creating the
/// tag if it is new; 404 for an unknown flag or tag type. Answers the tag as stored (trimmed).
pub async fn add_feature_tag(tx: &mut WriteTx, feature: &str, input: Tag) -> Result<Tag, ApiError> {
    let tag = checked_tag(&input, "")?;
    let row = require_feature(tx.conn(), feature).await?;
    tag_feature(tx, &row, &tag).await?;
    Ok(tag)
}

/// `PUT /api/admin/features/:f/tags`: adds `addedTags`, then removes `removedTags`; the flag's tags after.
pub async fn update_feature_tags(
    tx: &mut WriteTx,
    feature: &str,
    input: UpdateTags,
) -> Result<TagList, ApiError> {
    let added = input
        .added_tags
        .iter()
        .enumerate()
        .map(|(index, tag)| checked_tag(tag, &format!("addedTags[{index}].")))
        .collect::<Result<Vec<_>, _>>()?;
    let removed = input
        .removed_tags
        .iter()
        .enumerate()
        .map(|(index, tag)| checked_tag(tag, &format!("removedTags[{index}].")))
        .collect::<Result<Vec<_>, _>>()?;
    let row = require_feature(tx.conn(), feature).await?;
    for tag in &added {
        tag_feature(tx, &row, tag).await?;
    }
    for tag in &removed {
        untag_feature(tx, &row, tag).await?;
    }
    feature_tags(tx.conn(), feature).await
}

/// `DELETE /api/admin/features/:f/tags/:type/:value`: 404 for an unknown flag; a tag the flag does not
/// carry changes nothing.
pub async fn remove_feature_tag(
    tx: &mut WriteTx,
    feature: &str,
    tag_type: &str,
    value: &str,
) -> Result<(), ApiError> {
    let row = require_feature(tx.conn(), feature).await?;
    let tag = Tag {
        value: value.to_owned(),
        tag_type: tag_type.to_owned(),
        color: None,
    };
    untag_feature(tx, &row, &tag).await?;
    Ok(())
}
