//! Who is calling and what they may do: authentication of a credential (API token, personal access token or
//! session cookie) into a [`Caller`], and the permission rule of the admin API ([`authorize`]).

use super::events::PersonalFields;
use super::permissions::{Level, Permission};
use super::roles::{ProjectRole, RootRole};
use super::tokens::PAT_PREFIX;
use crate::store::roles as role_store;
use crate::store::tokens as token_store;
use crate::store::users::{self as user_store, Account, UserRow};
use crate::store::Actor;
use crate::time::Timestamp;
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use vexil_shared::token::{self, SecretHash, TokenKind};
use vexil_shared::{ApiError, ErrorKind};

/// What a caller authenticated as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// An API token of this kind (`--auth-type none`: an admin token).
    Token(TokenKind),
    /// A user (session or personal access token) with their effective root role.
    User(RootRole),
    /// A service account's token, with the account's root role: as a user of that role, without an own
    /// account (its tokens are managed by Admins at `/api/admin/service-account/:id/token`).
    ServiceAccount(RootRole),
    /// The SCIM token (`domain::scim_settings`): an identity provider provisioning users and groups at
    /// `/scim/v2` ([`Area::Scim`]), nothing else.
    Scim,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub actor: Actor,
    pub credential: Credential,
    /// The SHA-256 of the API token or personal access token it authenticated with (none for a session),
    /// which the caller's extractor notes as used.
    pub token: Option<SecretHash>,
    /// What the caller holds (read with the credential, at every request).
    pub grants: Grants,
}

impl Caller {
    /// The caller when authentication is off (`--auth-type none`).
    pub fn unauthenticated_admin() -> Caller {
        Caller {
            actor: Actor::token("admin"),
            credential: Credential::Token(TokenKind::Admin),
            token: None,
            grants: Grants::admin(),
        }
    }
}

fn unauthenticated(message: &str) -> ApiError {
    ApiError::new(ErrorKind::AuthenticationRequired, message)
}

/// Authenticates the `Authorization` header value (`<secret>` or `Bearer <secret>`: an API token, or a
/// personal access token `user:…`, a person's or a service account's) or, without that header, the session
/// id of the session cookie.
pub async fn authenticate(
    conn: &mut AnyConnection,
    authorization: Option<&str>,
    session: Option<&str>,
) -> Result<Caller, ApiError> {
    let authorization = authorization
        .map(str::trim)
        .filter(|value| !value.is_empty());
    if let Some(header) = authorization {
        let secret = token::secret_of_authorization(header);
        let digest = token::sha256(secret);
        let hash = token::lowercase_hex(&digest);
        if secret.starts_with(PAT_PREFIX) {
            let (user, account) = user_store::pat_user(conn, &hash, Timestamp::now())
                .await?
                .ok_or_else(|| {
                    unauthenticated("The personal access token is not valid or has expired")
                })?;
            let caller = match account {
                Account::Person => caller(conn, user).await?,
                Account::Service => service_account_caller(conn, user).await?,
            };
            return Ok(Caller {
                token: Some(digest),
                ..caller
            });
        }
        let row = token_store::get_by_hash(conn, &hash)
            .await?
            .ok_or_else(|| unauthenticated("The API token is not valid"))?;
        if row
            .expires_at
            .is_some_and(|expires_at| expires_at <= Timestamp::now())
        {
            return Err(unauthenticated("The API token has expired"));
        }
        return Ok(Caller {
            actor: Actor::token(&row.name),
            credential: Credential::Token(row.kind),
            token: Some(digest),
            grants: if row.kind == TokenKind::Admin {
                Grants::admin()
            } else {
                Grants::default()
            },
        });
    }
    if let Some(session) = session {
        let hash = token::sha256_hex(session);
        let user = user_store::session_user(conn, &hash, Timestamp::now())
            .await?
            .ok_or_else(|| {
                unauthenticated("The session is not valid or has expired; sign in again")
            })?;
        return caller(conn, user).await;
    }
    Err(unauthenticated(
        "You must be authenticated: send an API token in the Authorization header or sign in",
    ))
}

fn display_name(row: &UserRow) -> String {
    row.username
        .clone()
        .or_else(|| row.email.clone())
        .or_else(|| row.name.clone())
        .unwrap_or_else(|| format!("user-{}", row.id))
}

/// The caller a user row authenticates as: their effective root role (the highest of their own and their
/// groups'; a custom root role counts as Viewer plus its permissions) and their grants.
pub async fn caller(conn: &mut AnyConnection, row: UserRow) -> Result<Caller, ApiError> {
    let own = RootRole::from_id(row.root_role).unwrap_or(RootRole::Viewer);
    let from_groups = user_store::group_root_role(conn, row.id)
        .await?
        .and_then(RootRole::from_id);
    let role = from_groups.map_or(own, |group_role| own.min(group_role));
    Ok(Caller {
        actor: Actor::user(&display_name(&row), row.id),
        credential: Credential::User(role),
        token: None,
        grants: grants_of_user(conn, row.id, row.root_role, role).await?,
    })
}

/// The caller a service account's token authenticates as: the account (its username names it in events)
/// with its own root role (service accounts belong to no group) and the project roles it was given.
pub async fn service_account_caller(
    conn: &mut AnyConnection,
    row: UserRow,
) -> Result<Caller, ApiError> {
    let role = RootRole::from_id(row.root_role).unwrap_or(RootRole::Viewer);
    Ok(Caller {
        actor: Actor::user(&display_name(&row), row.id),
        credential: Credential::ServiceAccount(role),
        token: None,
        grants: grants_of_user(conn, row.id, row.root_role, role).await?,
    })
}

/// The caller of a `/scim/v2` request: the identity provider, if its `Authorization` carries the SCIM token
/// and provisioning is on (`scim_settings::check_token`: 403 off, 401 otherwise). Its changes are recorded
/// as made by `scim`.
pub async fn authenticate_scim(
    conn: &mut AnyConnection,
    authorization: Option<&str>,
) -> Result<Caller, ApiError> {
    super::scim_settings::check_token(conn, authorization).await?;
    Ok(Caller {
        actor: Actor::token("scim"),
        credential: Credential::Scim,
        token: None,
        grants: Grants::default(),
    })
}

/// What part of the admin API a route belongs to: declared where the route is mounted
/// (`http::extract::area`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `/api/admin/user…`: the caller's own account and personal access tokens.
    OwnAccount,
    /// `/api/admin/user-admin…`, `/api/admin/groups…`, `/api/admin/api-tokens…`,
    /// `/api/admin/service-account…`, roles' changes.
    Access,
    /// `/api/admin/ui-config…`, `/api/admin/settings…`, `/api/admin/addons…`.
    Settings,
    /// Everything else: projects, environments, flags, strategies, segments, context fields, events… Every
    /// write here needs the [`Permission`] its route declares (`http::admin::PERMISSIONS`), in the project and
    /// environment the request names; reads are open to every user.
    Configuration,
    /// Configuration reads asked with a POST body (`/api/admin/features-batch/export`): Viewers too, as in
    /// Unleash.
    ConfigurationQuery,
    /// `/scim/v2`: provisioning by an identity provider, with the SCIM token only.
    Scim,
}

/// Where a request acts: the project and environment its path names (or its form, in the UI). `None`: the
/// request names none, so a project permission must be held in every project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub project: Option<String>,
    pub environment: Option<String>,
}

impl Scope {
    pub fn project(project: &str) -> Scope {
        Scope {
            project: Some(project.to_owned()),
            environment: None,
        }
    }

    pub fn environment(project: &str, environment: &str) -> Scope {
        Scope {
            project: Some(project.to_owned()),
            environment: Some(environment.to_owned()),
        }
    }
}

/// A permission held in a project: in every environment of it (`environment: None`) or in one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProjectGrant {
    project: String,
    permission: Permission,
    environment: Option<String>,
}

/// What a caller holds: read for every request from the store (no cache: a revoked grant is gone at the next
/// request).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    admin: bool,
    root: BTreeSet<Permission>,
    /// Project and environment permissions held in every project (the root role Editor).
    everywhere: BTreeSet<Permission>,
    in_projects: Vec<ProjectGrant>,
}

impl Grants {
    /// Everything (Admins, admin tokens).
    pub fn admin() -> Grants {
        Grants {
            admin: true,
            ..Grants::default()
        }
    }

    /// What a predefined root role holds by itself.
    pub fn of_root_role(role: RootRole) -> Grants {
        match role {
            RootRole::Admin => Grants::admin(),
            RootRole::Editor => Grants {
                root: Permission::ALL
                    .iter()
                    .copied()
                    .filter(|permission| permission.of_editor_root())
                    .collect(),
                everywhere: Permission::ALL
                    .iter()
                    .copied()
                    .filter(|permission| permission.of_editor_everywhere())
                    .collect(),
                ..Grants::default()
            },
            RootRole::Viewer => Grants::default(),
        }
    }

    /// Whether these grants hold `permission` where `scope` says. An environment permission asked without an
    /// environment (a change request's routes name none) is held if it is held in any environment of the
    /// project; the domain then asks again with the request's own environment.
    pub fn allows(&self, permission: Permission, scope: &Scope) -> bool {
        if self.admin {
            return true;
        }
        match permission.level() {
            Level::Root => self.root.contains(&permission),
            Level::Project | Level::Environment => {
                self.everywhere.contains(&permission)
                    || self.in_projects.iter().any(|grant| {
                        grant.permission == permission
                            && scope.project.as_deref() == Some(grant.project.as_str())
                            && (permission.level() == Level::Project
                                || grant.environment.is_none()
                                || scope.environment.is_none()
                                || grant.environment == scope.environment)
                    })
            }
        }
    }

    /// The projects in which these grants hold something (all of them: `None`).
    pub fn projects(&self) -> Option<BTreeSet<String>> {
        if self.admin || !self.everywhere.is_empty() {
            return None;
        }
        Some(
            self.in_projects
                .iter()
                .map(|grant| grant.project.clone())
                .collect(),
        )
    }
}

/// The id of the user `actor` is, for what is each user's own (`what`: "Favourites", "Feedback"…); an API
/// token has no user (403).
pub fn own_user_id(actor: &Actor, what: &str) -> Result<i64, ApiError> {
    if actor.user_id < 0 {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!("{what} belong to a user; an API token has none"),
        ));
    }
    Ok(actor.user_id)
}

/// The grants of user `user`: their root role (`root_role`: a predefined one, or a custom root role with its
/// permissions) as `effective` says (the highest of their own and their groups'), and every role they have
/// in a project, directly or through a group.
pub async fn grants_of_user(
    conn: &mut AnyConnection,
    user: i64,
    root_role: i64,
    effective: RootRole,
) -> Result<Grants, ApiError> {
    let mut grants = Grants::of_root_role(effective);
    if grants.admin {
        return Ok(grants);
    }
    let in_projects = role_store::of_user(conn, user).await?;
    let mut custom: Vec<i64> = in_projects
        .iter()
        .map(|(_, role)| *role)
        .filter(|role| !ProjectRole::is_predefined(*role))
        .collect();
    if RootRole::from_id(root_role).is_none() {
        custom.push(root_role);
    }
    custom.sort_unstable();
    custom.dedup();
    let stored = role_store::permissions(conn, &custom).await?;
    let permissions_of = |role: i64| {
        stored
            .iter()
            .filter(move |row| row.role_id == role)
            .filter_map(|row| {
                let permission = Permission::named(&row.permission)?;
                let environment = (!row.environment.is_empty()).then(|| row.environment.clone());
                Some((permission, environment))
            })
    };
    if RootRole::from_id(root_role).is_none() {
        grants.root.extend(
            permissions_of(root_role)
                .map(|(permission, _)| permission)
                .filter(|permission| permission.level() == Level::Root),
        );
    }
    for (project, role) in in_projects {
        let held: Vec<(Permission, Option<String>)> = match ProjectRole::from_id(role) {
            Some(predefined) => predefined
                .permissions()
                .map(|permission| (permission, None))
                .collect(),
            None => permissions_of(role)
                .filter(|(permission, _)| permission.level() != Level::Root)
                .collect(),
        };
        grants.in_projects.extend(
            held.into_iter()
                .map(|(permission, environment)| ProjectGrant {
                    project: project.clone(),
                    permission,
                    environment,
                }),
        );
    }
    Ok(grants)
}

/// What a request needs: read or change `area`, with the permission its route declares where the project
/// and environment it names (`scope`) say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub read: bool,
    pub area: Area,
    pub permission: Option<Permission>,
    pub scope: Scope,
}

impl Need {
    /// Reading or changing `area`, no permission declared (the areas other than [`Area::Configuration`]).
    pub fn area(read: bool, area: Area) -> Need {
        Need {
            read,
            area,
            permission: None,
            scope: Scope::default(),
        }
    }

    /// `permission` in `scope` (a configuration write).
    pub fn permission(permission: Permission, scope: Scope) -> Need {
        Need {
            read: false,
            area: Area::Configuration,
            permission: Some(permission),
            scope,
        }
    }
}

/// The permission rule, the one function that decides. Admin tokens and Admin users may do everything (admin
/// tokens have no own account). In [`Area::Configuration`] a declared permission decides: held through the
/// root role (Editors hold the project permissions in every project, but not giving access, the
/// change-request configuration or skipping change requests), a custom root role, or a role in the
/// request's project (the caller's own or a group's), for its environment; reads are open to every user.
/// Users and groups, settings and the change-request configuration are Admins' (and, for a project's
/// access and change requests, its Owners'); every user manages their own account. A service account's
/// token acts with the account's roles but has no own account. Client, frontend and edge tokens have no
/// business here.
pub fn authorize(credential: Credential, grants: &Grants, need: &Need) -> Result<(), ApiError> {
    let (read, area) = (need.read, need.area);
    let allowed = match credential {
        Credential::Scim => area == Area::Scim,
        _ if area == Area::Scim => false,
        Credential::Token(TokenKind::Client | TokenKind::Frontend | TokenKind::Edge) => false,
        Credential::Token(TokenKind::Admin) => area != Area::OwnAccount,
        Credential::ServiceAccount(_) if area == Area::OwnAccount => false,
        Credential::User(role) | Credential::ServiceAccount(role) => match need.permission {
            Some(permission) => grants.allows(permission, &need.scope),
            None => role_allows(role, read, area),
        },
    };
    if allowed {
        return Ok(());
    }
    let message = match credential {
        Credential::Scim => "The SCIM token is for /scim/v2 only".to_owned(),
        _ if area == Area::Scim => {
            "Only the SCIM token provisions users and groups at /scim/v2".to_owned()
        }
        Credential::Token(TokenKind::Admin) => {
            "An admin token has no user account; use a personal access token or sign in".to_owned()
        }
        Credential::Token(kind) => {
            let kind = kind.with_article();
            format!(
                "{}{} cannot use the admin API",
                kind[..1].to_uppercase(),
                &kind[1..]
            )
        }
        Credential::ServiceAccount(_) if area == Area::OwnAccount => {
            "A service account has no own account; an Admin manages its tokens at \
             /api/admin/service-account/:id/token"
                .to_owned()
        }
        Credential::User(_) | Credential::ServiceAccount(_) => match need.permission {
            Some(permission) => missing_permission(permission, &need.scope),
            None if area == Area::Configuration && !read => {
                tracing::error!("a configuration write declares no permission");
                "This change declares no permission, so no one but an Admin may make it".to_owned()
            }
            None => match credential {
                Credential::User(role) | Credential::ServiceAccount(role) => format!(
                    "The {} role may not {} this",
                    role.name(),
                    if read { "read" } else { "change" }
                ),
                _ => unreachable!("matched above"),
            },
        },
    };
    Err(ApiError::new(ErrorKind::NoAccess, message))
}

/// A caller as the domain's own checks see it (a change request's review in its environment).
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub credential: Credential,
    pub grants: &'a Grants,
}

impl Who<'_> {
    /// 403 unless the caller holds `permission` where `scope` says ([`authorize`]).
    pub fn require(&self, permission: Permission, scope: Scope) -> Result<(), ApiError> {
        authorize(
            self.credential,
            self.grants,
            &Need::permission(permission, scope),
        )
    }
}

/// "You need the UPDATE_FEATURE_ENVIRONMENT permission in project a's environment production".
fn missing_permission(permission: Permission, scope: &Scope) -> String {
    let place = match (permission.level(), &scope.project, &scope.environment) {
        (Level::Root, _, _) => String::new(),
        (Level::Environment, Some(project), Some(environment)) => {
            format!(" in project {project}'s environment {environment}")
        }
        (_, Some(project), _) => format!(" in project {project}"),
        (_, None, _) => " in every project".to_owned(),
    };
    format!(
        "You need the {} permission{place} ({}); an Admin or the project's Owner can give it",
        permission.name(),
        permission.display_name().to_lowercase()
    )
}

/// What a root role may do in `area` without a declared permission (`read`: GET or HEAD).
fn role_allows(role: RootRole, read: bool, area: Area) -> bool {
    match (role, area) {
        (RootRole::Admin, _) => true,
        (_, Area::OwnAccount | Area::ConfigurationQuery) => true,
        (_, Area::Access | Area::Scim) => false,
        (_, Area::Settings | Area::Configuration) => read,
    }
}

/// The personal fields of events (people's names, emails, roles) `credential` may see: those who may read the
/// users ([`authorize`] in [`Area::Access`]) see them, everyone else reads the events without them.
pub fn personal_fields(credential: Credential) -> PersonalFields {
    if authorize(
        credential,
        &Grants::default(),
        &Need::area(true, Area::Access),
    )
    .is_ok()
    {
        PersonalFields::Shown
    } else {
        PersonalFields::Hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(credential: Credential, read: bool, area: Area) -> Result<(), ApiError> {
        let grants = match credential {
            Credential::User(role) | Credential::ServiceAccount(role) => Grants::of_root_role(role),
            Credential::Token(TokenKind::Admin) => Grants::admin(),
            _ => Grants::default(),
        };
        authorize(credential, &grants, &Need::area(read, area))
    }

    #[test]
    fn the_area_rule() {
        use Area::*;
        let admin = Credential::User(RootRole::Admin);
        let editor = Credential::User(RootRole::Editor);
        let viewer = Credential::User(RootRole::Viewer);
        let token = Credential::Token(TokenKind::Admin);
        let client = Credential::Token(TokenKind::Client);
        let edge = Credential::Token(TokenKind::Edge);
        for area in [
            OwnAccount,
            Access,
            Settings,
            Configuration,
            ConfigurationQuery,
        ] {
            for read in [true, false] {
                assert!(decide(admin, read, area).is_ok());
                assert!(decide(client, read, area).is_err());
                assert!(decide(edge, read, area).is_err());
                assert_eq!(decide(token, read, area).is_ok(), area != OwnAccount);
            }
        }
        // A configuration write must declare its permission: without one, only Admins.
        assert!(decide(editor, false, Configuration).is_err());
        assert!(decide(editor, true, Access).is_err());
        assert!(decide(editor, true, Settings).is_ok());
        assert!(decide(editor, false, Settings).is_err());
        assert!(decide(viewer, true, Configuration).is_ok());
        assert!(decide(viewer, false, OwnAccount).is_ok());
        assert!(decide(viewer, false, ConfigurationQuery).is_ok());
        assert!(decide(Credential::Scim, false, Scim).is_ok());
        assert!(decide(Credential::Scim, true, Access).is_err());
        assert!(decide(admin, true, Scim).is_err());
        assert!(decide(token, false, Scim).is_err());
        let service_admin = Credential::ServiceAccount(RootRole::Admin);
        assert!(decide(service_admin, false, Access).is_ok());
        assert!(decide(service_admin, true, OwnAccount).is_err());
        let service_viewer = Credential::ServiceAccount(RootRole::Viewer);
        assert!(decide(service_viewer, true, Configuration).is_ok());
        assert!(decide(service_viewer, false, OwnAccount).is_err());
        let error = decide(edge, true, Configuration).unwrap_err();
        assert_eq!(error.message, "An edge token cannot use the admin API");
    }

    #[test]
    fn permissions_in_projects_and_environments() {
        let in_a = |permission, environment: Option<&str>| ProjectGrant {
            project: "a".into(),
            permission,
            environment: environment.map(str::to_owned),
        };
        let member_of_a = Grants {
            in_projects: ProjectRole::Member
                .permissions()
                .map(|permission| in_a(permission, None))
                .collect(),
            ..Grants::default()
        };
        let switch_in_development = Grants {
            in_projects: vec![in_a(
                Permission::UpdateFeatureEnvironment,
                Some("development"),
            )],
            ..Grants::default()
        };
        let viewer = Credential::User(RootRole::Viewer);
        let need = |permission, project: &str, environment: Option<&str>| {
            Need::permission(
                permission,
                Scope {
                    project: Some(project.into()),
                    environment: environment.map(str::to_owned),
                },
            )
        };
        let switch = Permission::UpdateFeatureEnvironment;
        assert!(authorize(viewer, &member_of_a, &need(switch, "a", Some("production"))).is_ok());
        assert!(authorize(viewer, &member_of_a, &need(switch, "b", Some("production"))).is_err());
        assert!(authorize(
            viewer,
            &member_of_a,
            &need(Permission::ProjectUserAccessWrite, "a", None)
        )
        .is_err());
        assert!(authorize(
            viewer,
            &switch_in_development,
            &need(switch, "a", Some("development"))
        )
        .is_ok());
        let error = authorize(
            viewer,
            &switch_in_development,
            &need(switch, "a", Some("production")),
        )
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::NoAccess);
        assert!(error.message.contains("UPDATE_FEATURE_ENVIRONMENT"));
        assert!(error.message.contains("production"));
        // A project permission asked without a project is held only everywhere (Editors).
        let editor = Credential::User(RootRole::Editor);
        let editor_grants = Grants::of_root_role(RootRole::Editor);
        let create = Need::permission(Permission::CreateFeature, Scope::default());
        assert!(authorize(editor, &editor_grants, &create).is_ok());
        assert!(authorize(viewer, &member_of_a, &create).is_err());
        assert!(authorize(
            editor,
            &editor_grants,
            &need(
                Permission::ProjectChangeRequestWrite,
                "a",
                Some("production")
            )
        )
        .is_err());
    }
}
