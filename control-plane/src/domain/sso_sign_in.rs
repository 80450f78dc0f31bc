//! Who a verified single sign-on identity is in Vexil: the user with that e-mail, or a new one (`autoCreate`,
//! within `emailDomains`, with `defaultRootRole`); and, with group syncing, their membership of every group
//! whose `mappingsSSO` names one of the identity's groups, set again at each sign-in (added and removed,
//! one `group-user-added` / `group-user-removed` event each). Groups without SSO mappings are left alone. A
//! sign-in that would take the last active Admin's Admin root role away (a group that gave it no longer
//! listed) is refused, 403 as every other refused sign-in (`domain::last_admin`).

use super::events::EventType;
use super::last_admin;
use super::roles::{RoleReference, RootRole};
use super::users::{self, CreateUser};
use crate::store::groups::{self as group_store, MemberRow};
use crate::store::users::{self as user_store, UserRow};
use crate::store::{NewEvent, WriteTx};
use std::collections::BTreeSet;
use vexil_shared::{ApiError, ErrorKind};

/// What the provider vouched for, from a verified ID token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    pub email: String,
    pub name: Option<String>,
    /// The groups claim; `None` when the token has none (memberships are then left as they are).
    pub groups: Option<Vec<String>>,
}

/// Who a single sign-on may create, with which root role, and whether it syncs groups: the same rules for
/// OpenID Connect and SAML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provisioning {
    pub auto_create: bool,
    /// The e-mail domains a created user must have (lower case; empty: any).
    pub email_domains: Vec<String>,
    pub default_role: RootRole,
    pub group_syncing: bool,
}

impl Provisioning {
    /// From Unleash's settings fields: `emailDomains` comma-separated, the role by id (first) or name,
    /// Editor when neither names one.
    pub fn new(
        auto_create: bool,
        email_domains: Option<&str>,
        role_id: Option<i64>,
        role_name: Option<&str>,
        group_syncing: bool,
    ) -> Provisioning {
        let default_role = role_id
            .and_then(RootRole::from_id)
            .or_else(|| {
                let name = role_name?;
                RootRole::from_reference("defaultRootRole", &RoleReference::Name(name.to_owned()))
                    .ok()
            })
            .unwrap_or(RootRole::Editor);
        Provisioning {
            auto_create,
            email_domains: email_domains
                .unwrap_or_default()
                .split(',')
                .map(|domain| domain.trim().trim_start_matches('@').to_lowercase())
                .filter(|domain| !domain.is_empty())
                .collect(),
            default_role,
            group_syncing,
        }
    }
}

fn refused(message: String) -> ApiError {
    ApiError::new(ErrorKind::NoAccess, message)
}

/// The user `identity` signs in as, created or with their groups synced as `rules` say.
pub async fn resolve(
    tx: &mut WriteTx,
    rules: &Provisioning,
    identity: &Identity,
) -> Result<UserRow, ApiError> {
    let email = identity.email.trim();
    let existing = user_store::find_by_email(tx.conn(), email).await?;
    let row = match existing {
        Some(row) if !row.active => {
            return Err(refused(format!(
                "The user {email} was deactivated by your identity provider (SCIM): ask your administrator"
            )));
        }
        Some(row) => row,
        None => {
            if !rules.auto_create {
                return Err(refused(format!(
                    "No Vexil user has the e-mail address {email}: ask an Admin to add you (or to switch on \
                     creating users at their first single sign-on)"
                )));
            }
            let domain = email
                .rsplit_once('@')
                .map(|(_, domain)| domain.to_lowercase())
                .unwrap_or_default();
            if !rules.email_domains.is_empty() && !rules.email_domains.contains(&domain) {
                return Err(refused(format!(
                    "Users of the e-mail domain {domain} are not created here: ask an Admin to add you"
                )));
            }
            let input = CreateUser {
                username: None,
                email: Some(email.to_owned()),
                name: identity.name.clone(),
                password: None,
                root_role: RoleReference::Id(rules.default_role.id()),
                send_email: None,
            };
            let user = users::create(tx, input, None).await?;
            users::require(tx.conn(), user.id).await?
        }
    };
    if rules.group_syncing {
        if let Some(groups) = &identity.groups {
            sync_groups(tx, row.id, groups).await?;
        }
    }
    Ok(row)
}

/// Makes `user_id` a member of exactly the SSO-mapped groups that name one of `claimed`.
pub async fn sync_groups(
    tx: &mut WriteTx,
    user_id: i64,
    claimed: &[String],
) -> Result<(), ApiError> {
    let admins = last_admin::before(tx.conn()).await?;
    let claimed: BTreeSet<&str> = claimed.iter().map(String::as_str).collect();
    let current: BTreeSet<i64> = group_store::groups_of(tx.conn(), user_id)
        .await?
        .into_iter()
        .map(|group| group.id)
        .collect();
    for group in group_store::list(tx.conn()).await? {
        if group.mappings_sso.is_empty() {
            continue;
        }
        let wanted = group
            .mappings_sso
            .iter()
            .any(|mapping| claimed.contains(mapping.as_str()));
        let member = current.contains(&group.id);
        if wanted && !member {
            let row = MemberRow {
                user_id,
                joined_at: tx.now(),
                created_by: Some(tx.actor().name.clone()),
            };
            group_store::add_member(tx.conn(), group.id, &row).await?;
            tx.record(NewEvent {
                event_type: EventType::GroupUserAdded.as_str(),
                data: Some(serde_json::json!({ "groupId": group.id, "userId": user_id })),
                ..NewEvent::default()
            })
            .await?;
        } else if !wanted && member {
            group_store::remove_member(tx.conn(), group.id, user_id).await?;
            tx.record(NewEvent {
                event_type: EventType::GroupUserRemoved.as_str(),
                pre_data: Some(serde_json::json!({ "groupId": group.id, "userId": user_id })),
                ..NewEvent::default()
            })
            .await?;
        }
    }
    let refusal =
        "You are the last active Admin user, and have the Admin root role through a group \
         your identity provider no longer lists you in: signing in would take it away";
    // A refused sign-in, like the others here (403), not a refused form.
    last_admin::keep_an_admin(tx.conn(), admins, refusal)
        .await
        .map_err(|error| refused(error.message))
}

/// The groups at `path` (a claim name, or names joined by dots into nested objects) of an ID token's claims:
/// a list of strings, or one string. `None` when absent or of another shape.
pub fn groups_at(claims: &serde_json::Value, path: &str) -> Option<Vec<String>> {
    let value = claims.get(path).or_else(|| {
        path.split('.')
            .try_fold(claims, |value, key| value.get(key))
    })?;
    match value {
        serde_json::Value::String(group) => Some(vec![group.clone()]),
        serde_json::Value::Array(items) => Some(
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn groups_by_name_or_dotted_path() {
        let claims = json!({
            "groups": ["a", "b", 3],
            "realm_access": {"roles": ["admin"]},
            "cognito:groups": "one",
            "https://example.com/groups": ["x"],
        });
        assert_eq!(
            groups_at(&claims, "groups"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            groups_at(&claims, "realm_access.roles"),
            Some(vec!["admin".into()])
        );
        assert_eq!(
            groups_at(&claims, "cognito:groups"),
            Some(vec!["one".into()])
        );
        assert_eq!(
            groups_at(&claims, "https://example.com/groups"),
            Some(vec!["x".into()])
        );
        assert_eq!(groups_at(&claims, "missing"), None);
        assert_eq!(groups_at(&claims, "realm_access"), None);
    }
}
