//! Favourite flags and projects (Unleash's favorites): each user marks their own, the lists put them first.
//! `POST/DELETE /api/admin/projects/:p/features/:f/favorites` and `…/projects/:p/favorites`; each change is
//! one write with its event (`feature-favorited`, `feature-unfavorited`, `project-favorited`,
//! `project-unfavorited`); marking a favourite twice, or removing one that is not, changes nothing.

use super::access::own_user_id;
use super::events::EventType;
use super::{feature_lookup, projects};
use crate::store::favorites::{self as favorite_store, Favorite};
use crate::store::{NewEvent, WriteTx};
use serde_json::json;
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use vexil_shared::ApiError;

/// Marks (`on`) or unmarks a flag of `project` as the caller's favourite; 404 for an unknown project or flag.
pub async fn set_feature(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    on: bool,
) -> Result<(), ApiError> {
    let user_id = own_user_id(tx.actor(), "Favourites")?;
    feature_lookup::require_in_project(tx.conn(), project, feature).await?;
    let now = tx.now();
    let changed = if on {
        favorite_store::add(tx.conn(), Favorite::Feature, user_id, feature, now).await?
    } else {
        favorite_store::remove(tx.conn(), Favorite::Feature, user_id, feature).await?
    };
    if changed {
        let event_type = if on {
            EventType::FeatureFavorited
        } else {
            EventType::FeatureUnfavorited
        };
        tx.record(NewEvent {
            event_type: event_type.as_str(),
            project: Some(project.to_owned()),
            feature_name: Some(feature.to_owned()),
            data: Some(json!({"feature": feature})),
            ..NewEvent::default()
        })
        .await?;
    }
    Ok(())
}

/// Marks (`on`) or unmarks a project as the caller's favourite; 404 for an unknown project.
pub async fn set_project(tx: &mut WriteTx, project: &str, on: bool) -> Result<(), ApiError> {
    let user_id = own_user_id(tx.actor(), "Favourites")?;
    projects::require(tx.conn(), project).await?;
    let now = tx.now();
    let changed = if on {
        favorite_store::add(tx.conn(), Favorite::Project, user_id, project, now).await?
    } else {
        favorite_store::remove(tx.conn(), Favorite::Project, user_id, project).await?
    };
    if changed {
        let event_type = if on {
            EventType::ProjectFavorited
        } else {
            EventType::ProjectUnfavorited
        };
        tx.record(NewEvent {
            event_type: event_type.as_str(),
            project: Some(project.to_owned()),
            data: Some(json!({"project": project})),
            ..NewEvent::default()
        })
        .await?;
    }
    Ok(())
}

/// The flags (`Favorite::Feature`) or projects a user marked; none for an API token (no user).
pub async fn of_user(
    conn: &mut AnyConnection,
    kind: Favorite,
    user_id: i64,
) -> Result<BTreeSet<String>, ApiError> {
    if user_id < 0 {
        return Ok(BTreeSet::new());
    }
    Ok(favorite_store::of_user(conn, kind, user_id).await?)
}
