//! The root roles (1 Admin, 2 Editor, 3 Viewer) a user has, on their own or through a group, and how a body
//! names one.

use super::permissions::{Level, Permission};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The root roles, by their Unleash ids; a lower id is more powerful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootRole {
    Admin = 1,
    Editor = 2,
    Viewer = 3,
}

impl RootRole {
    pub const ALL: [RootRole; 3] = [RootRole::Admin, RootRole::Editor, RootRole::Viewer];

    pub fn id(self) -> i64 {
        self as i64
    }

    pub fn name(self) -> &'static str {
        match self {
            RootRole::Admin => "Admin",
            RootRole::Editor => "Editor",
            RootRole::Viewer => "Viewer",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            RootRole::Admin => "Users with the root admin role have superuser access to Vexil.",
            RootRole::Editor => {
                "Users with the root editor role may change flags, strategies, segments and context fields."
            }
            RootRole::Viewer => "Users with the root viewer role can only read root resources.",
        }
    }

    pub fn from_id(id: i64) -> Option<RootRole> {
        RootRole::ALL.into_iter().find(|role| role.id() == id)
    }

    /// A body's `rootRole`: an id or a name; the message names `field`.
    pub fn from_reference(field: &str, reference: &RoleReference) -> Result<RootRole, ApiError> {
        let role = match reference {
            RoleReference::Id(id) => RootRole::from_id(*id),
            RoleReference::Name(name) => RootRole::ALL
                .into_iter()
                .find(|role| role.name().eq_ignore_ascii_case(name)),
        };
        role.ok_or_else(|| {
            ApiError::invalid_field(
                field,
                format!("{field} must be 1 (Admin), 2 (Editor) or 3 (Viewer)"),
            )
        })
    }
}

/// The predefined project roles, by their Unleash ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectRole {
    Owner = 4,
    Member = 5,
}

impl ProjectRole {
    pub fn id(self) -> i64 {
        self as i64
    }

    pub fn from_id(id: i64) -> Option<ProjectRole> {
        [ProjectRole::Owner, ProjectRole::Member]
            .into_iter()
            .find(|role| role.id() == id)
    }

    /// Whether `id` is a predefined role (root or project): its permissions are fixed.
    pub fn is_predefined(id: i64) -> bool {
        (1..=5).contains(&id)
    }

    /// The permissions the role holds in its project (in every environment of it).
    pub fn permissions(self) -> impl Iterator<Item = Permission> {
        Permission::ALL
            .iter()
            .copied()
            .filter(move |permission| match self {
                ProjectRole::Owner => {
                    permission.level() != Level::Root
                        && *permission != Permission::SkipChangeRequest
                }
                ProjectRole::Member => permission.of_member(),
            })
    }
}

/// A root role as a body gives it: its id or its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum RoleReference {
    Id(i64),
    Name(String),
}

/// A root role as `GET /api/admin/user-admin` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Role {
    pub id: i64,
    pub name: String,
    pub description: String,
    #[serde(rename = "type")]
    pub role_type: String,
}

/// Every root role as `GET /api/admin/user-admin` lists them.
pub fn root_roles() -> Vec<Role> {
    RootRole::ALL
        .into_iter()
        .map(|role| Role {
            id: role.id(),
            name: role.name().to_owned(),
            description: role.description().to_owned(),
            role_type: "root".to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_by_id_or_name() {
        assert_eq!(
            RootRole::from_reference("rootRole", &RoleReference::Id(2)).unwrap(),
            RootRole::Editor
        );
        assert_eq!(
            RootRole::from_reference("rootRole", &RoleReference::Name("viewer".into())).unwrap(),
            RootRole::Viewer
        );
        assert!(RootRole::from_reference("rootRole", &RoleReference::Id(4)).is_err());
        assert!(RootRole::Admin < RootRole::Viewer);
    }
}
