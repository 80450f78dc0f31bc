//! The one rule that keeps an instance administrable: no write leaves it without an active Admin — a person
//! (not a service account) SCIM has not deactivated, with the Admin root role of their own or through a group
//! (a group's root role holds for every member, `domain::access::caller`). Every write that can take the role
//! from someone calls [`keep_an_admin`] in its transaction: a user's root role changed, a user deleted or
//! deactivated, a group's root role changed, a group deleted, a member leaving a group — through the admin
//! API, the UI, SCIM or a single sign-on's group syncing. It counts the active Admins before the change
//! ([`before`]) and refuses (400 `ValidationError`, the transaction rolls back) when there were some and none
//! are left (a single sign-on answers 403, as it does to every refused sign-in). So the last Admin who holds
//! the role directly may lose it while an Admin through a group remains, and the other way round. Admin API
//! tokens are not users and do not count; the operator's admin token can always sign in to the UI besides
//! (`/login`). Writes take the revision counter's row lock first (`store::write`), so two writes cannot each
//! take one of the last two Admins.

use super::roles::RootRole;
use crate::store::users as user_store;
use sqlx::AnyConnection;
use vexil_shared::ApiError;

/// How many active Admins there were before a write, for [`keep_an_admin`] after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a write that may take the Admin root role from someone checks with keep_an_admin"]
pub struct AdminsBefore(i64);

/// The active Admins now, before a write that may take the Admin root role from someone.
pub async fn before(conn: &mut AnyConnection) -> Result<AdminsBefore, ApiError> {
    Ok(AdminsBefore(count(conn).await?))
}

async fn count(conn: &mut AnyConnection) -> Result<i64, ApiError> {
    Ok(user_store::count_active_with_root_role(conn, RootRole::Admin.id()).await?)
}

/// After the write (in its transaction): 400 with `refusal` when the instance had an active Admin before it
/// and has none now.
pub async fn keep_an_admin(
    conn: &mut AnyConnection,
    before: AdminsBefore,
    refusal: &str,
) -> Result<(), ApiError> {
    if before.0 == 0 || count(conn).await? > 0 {
        return Ok(());
    }
    Err(ApiError::validation(format!(
        "{refusal}; give another user the Admin root role first"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{groups, sso_sign_in, users};
    use crate::store::{Actor, Store, WriteTx};
    use serde_json::json;
    use vexil_shared::ErrorKind;

    fn body<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    /// One write, committed when it succeeds (rolled back otherwise, as the routes do).
    async fn write<T>(
        store: &Store,
        change: impl AsyncFnOnce(&mut WriteTx) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut tx = store.begin_write(&Actor::system()).await.unwrap();
        let done = change(&mut tx).await;
        if done.is_ok() {
            tx.commit().await.unwrap();
        }
        done
    }

    async fn user(store: &Store, name: &str, role: &str) -> i64 {
        let input = body(json!({"username": name, "rootRole": role}));
        write(store, async |tx| users::create(tx, input, None).await)
            .await
            .unwrap()
            .id
    }

    fn group_body(role: &str, members: &[i64]) -> groups::WriteGroup {
        let users: Vec<_> = members
            .iter()
            .map(|id| json!({"user": {"id": id}}))
            .collect();
        body(
            json!({"name": "admins", "rootRole": role, "users": users, "mappingsSSO": ["vexil-admins"]}),
        )
    }

    fn assert_refused(done: Result<(), ApiError>, fragment: &str) {
        assert_refused_as(done, ErrorKind::Validation, fragment);
    }

    fn assert_refused_as(done: Result<(), ApiError>, kind: ErrorKind, fragment: &str) {
        let error = done.unwrap_err();
        assert_eq!(error.kind, kind, "{}", error.message);
        assert!(error.message.contains(fragment), "{}", error.message);
        assert!(
            error
                .message
                .ends_with("; give another user the Admin root role first"),
            "{}",
            error.message
        );
    }

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
        let store = Store::connect(&url).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn an_admin_through_a_group_counts_and_the_last_one_stays() {
        let (_dir, store) = store().await;
        let ada = user(&store, "ada", "Admin").await;
        let gus = user(&store, "gus", "Editor").await;
        let admins = write(&store, async |tx| {
            groups::create(tx, group_body("Admin", &[gus])).await
        })
        .await
        .unwrap()
        .id;
        // gus is an Admin through the group: ada may stop being one of her own.
        let demote = body(json!({"rootRole": "Editor"}));
        write(&store, async |tx| users::update(tx, ada, demote).await)
            .await
            .unwrap();
        // Now gus is the last one: no write takes it from him.
        let done = write(&store, async |tx| {
            groups::replace(tx, admins, group_body("Editor", &[gus]))
                .await
                .map(drop)
        });
        assert_refused(
            done.await,
            "rootRole: group admins gives the last active Admin user",
        );
        let done = write(&store, async |tx| {
            groups::replace(tx, admins, group_body("Admin", &[]))
                .await
                .map(drop)
        });
        assert_refused(
            done.await,
            "users: the last active Admin user has the Admin root role through group admins",
        );
        let done = write(&store, async |tx| groups::delete(tx, admins).await);
        assert_refused(done.await, "Group admins cannot be deleted");
        let done = write(&store, async |tx| users::delete(tx, gus).await);
        assert_refused(done.await, "The last Admin user cannot be deleted");
        let done = write(&store, async |tx| {
            sso_sign_in::sync_groups(tx, gus, &[]).await
        });
        // A refused sign-in: 403, as the sign-in's other refusals.
        assert_refused_as(
            done.await,
            ErrorKind::NoAccess,
            "You are the last active Admin user",
        );
        // Nothing changed; a sign-in that keeps the group, and a change of gus's own role, go through.
        let claimed = ["vexil-admins".to_owned()];
        write(&store, async |tx| {
            sso_sign_in::sync_groups(tx, gus, &claimed).await
        })
        .await
        .unwrap();
        let viewer = body(json!({"rootRole": "Viewer"}));
        write(&store, async |tx| users::update(tx, gus, viewer).await)
            .await
            .unwrap();
        let mut conn = store.read().await.unwrap();
        let group = groups::get(&mut conn, admins).await.unwrap();
        assert_eq!(group.root_role, Some(RootRole::Admin.id()));
        let members: Vec<i64> = group.users.iter().map(|member| member.user.id).collect();
        assert_eq!(members, [gus]);
        assert_eq!(count(&mut conn).await.unwrap(), 1);
        drop(conn);
        // With ada an Admin again, gus may leave and the group may go.
        let promote = body(json!({"rootRole": "Admin"}));
        write(&store, async |tx| users::update(tx, ada, promote).await)
            .await
            .unwrap();
        write(&store, async |tx| {
            sso_sign_in::sync_groups(tx, gus, &[]).await
        })
        .await
        .unwrap();
        write(&store, async |tx| groups::delete(tx, admins).await)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn an_instance_without_an_admin_user_is_not_held() {
        let (_dir, store) = store().await;
        let ed = user(&store, "ed", "Editor").await;
        let group = write(&store, async |tx| {
            groups::create(tx, group_body("Editor", &[ed])).await
        })
        .await
        .unwrap()
        .id;
        write(&store, async |tx| groups::delete(tx, group).await)
            .await
            .unwrap();
        write(&store, async |tx| users::delete(tx, ed).await)
            .await
            .unwrap();
        let mut conn = store.read().await.unwrap();
        assert_eq!(count(&mut conn).await.unwrap(), 0);
    }
}
