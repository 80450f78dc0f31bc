//! Who is calling and what they may do: authentication of a credential (API token, personal access token or
//! session cookie) into a [`Caller`], and the permission rule of the admin API ([`authorize`]).

use super::events::PersonalFields;
use super::roles::RootRole;
use super::tokens::PAT_PREFIX;
use crate::store::tokens as token_store;
use crate::store::users::{self as user_store, Account, UserRow};
use crate::store::Actor;
use crate::time::Timestamp;
use sqlx::AnyConnection;
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
}

impl Caller {
    /// The caller when authentication is off (`--auth-type none`).
    pub fn unauthenticated_admin() -> Caller {
        Caller {
            actor: Actor::token("admin"),
            credential: Credential::Token(TokenKind::Admin),
            token: None,
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
                Account::Service => service_account_caller(user),
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
/// groups').
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
    })
}

/// The caller a service account's token authenticates as: the account (its username names it in events)
/// with its own root role (service accounts belong to no group).
fn service_account_caller(row: UserRow) -> Caller {
    let role = RootRole::from_id(row.root_role).unwrap_or(RootRole::Viewer);
    Caller {
        actor: Actor::user(&display_name(&row), row.id),
        credential: Credential::ServiceAccount(role),
        token: None,
    }
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
    })
}

/// What part of the admin API a route belongs to: declared where the route is mounted
/// (`http::extract::area`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `/api/admin/user…`: the caller's own account and personal access tokens.
    OwnAccount,
    /// `/api/admin/user-admin…`, `/api/admin/groups…`, `/api/admin/api-tokens…`,
    /// `/api/admin/service-account…`.
    Access,
    /// `/api/admin/ui-config…`, `/api/admin/settings…`, `/api/admin/addons…`.
    Settings,
    /// Everything else: projects, environments, flags, strategies, segments, context fields, events…
    Configuration,
    /// Configuration reads asked with a POST body (`/api/admin/features-batch/export`): Viewers too, as in
    /// Unleash.
    ConfigurationQuery,
    /// `/scim/v2`: provisioning by an identity provider, with the SCIM token only.
    Scim,
    /// Whether change requests are on in a project's environment, and how many approvals they need
    /// (`PUT …/environments/:env/change-requests/config`): read like configuration, changed by Admins only,
    /// so that no Editor can switch them off, write directly and switch them on again.
    ChangeRequestConfiguration,
}

/// The permission rule of the admin API. Admin tokens and Admin users may do everything (admin tokens have
/// no own account); Editors everything but access management, settings changes and the change-request
/// configuration; Viewers read configuration and settings only; every user manages their own account. A
/// service account's token acts with the account's root role, as a user of that role, but has no own account.
/// Client, frontend and edge tokens have no business here. `read` is true for GET and HEAD.
pub fn authorize(credential: Credential, read: bool, area: Area) -> Result<(), ApiError> {
    let allowed = match credential {
        Credential::Scim => area == Area::Scim,
        _ if area == Area::Scim => false,
        Credential::Token(TokenKind::Client | TokenKind::Frontend | TokenKind::Edge) => false,
        Credential::Token(TokenKind::Admin) => area != Area::OwnAccount,
        Credential::User(role) => role_allows(role, read, area),
        Credential::ServiceAccount(role) => {
            area != Area::OwnAccount && role_allows(role, read, area)
        }
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
        Credential::User(role) | Credential::ServiceAccount(role)
            if area == Area::ChangeRequestConfiguration =>
        {
            format!(
            "Only Admins may switch change requests on or off or change their approvals; the {} role may not",
            role.name()
        )
        }
        Credential::User(role) | Credential::ServiceAccount(role) => format!(
            "The {} role may not {} this",
            role.name(),
            if read { "read" } else { "change" }
        ),
    };
    Err(ApiError::new(ErrorKind::NoAccess, message))
}

/// What a root role may do in `area` (`read`: GET or HEAD).
fn role_allows(role: RootRole, read: bool, area: Area) -> bool {
    match (role, area) {
        (RootRole::Admin, _) => true,
        (_, Area::OwnAccount | Area::ConfigurationQuery) => true,
        (_, Area::Access | Area::Scim) => false,
        (_, Area::Settings | Area::ChangeRequestConfiguration) => read,
        (role, Area::Configuration) => read || role == RootRole::Editor,
    }
}

/// The personal fields of events (people's names, emails, roles) `credential` may see: those who may read the
/// users ([`authorize`] in [`Area::Access`]) see them, everyone else reads the events without them.
pub fn personal_fields(credential: Credential) -> PersonalFields {
    if authorize(credential, true, Area::Access).is_ok() {
        PersonalFields::Shown
    } else {
        PersonalFields::Hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
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
            ChangeRequestConfiguration,
        ] {
            for read in [true, false] {
                assert!(authorize(admin, read, area).is_ok());
                assert!(authorize(client, read, area).is_err());
                assert!(authorize(edge, read, area).is_err());
                assert_eq!(authorize(token, read, area).is_ok(), area != OwnAccount);
            }
        }
        assert!(authorize(editor, false, Configuration).is_ok());
        assert!(authorize(editor, true, Access).is_err());
        assert!(authorize(editor, true, Settings).is_ok());
        assert!(authorize(editor, false, Settings).is_err());
        assert!(authorize(viewer, true, Configuration).is_ok());
        assert!(authorize(viewer, false, Configuration).is_err());
        assert!(authorize(viewer, false, OwnAccount).is_ok());
        assert!(authorize(viewer, false, ConfigurationQuery).is_ok());
        assert!(authorize(editor, true, ChangeRequestConfiguration).is_ok());
        assert!(authorize(editor, false, ChangeRequestConfiguration).is_err());
        assert!(authorize(viewer, false, ChangeRequestConfiguration).is_err());
        assert!(authorize(Credential::Scim, false, Scim).is_ok());
        assert!(authorize(Credential::Scim, true, Access).is_err());
        assert!(authorize(admin, true, Scim).is_err());
        assert!(authorize(token, false, Scim).is_err());
        let service_admin = Credential::ServiceAccount(RootRole::Admin);
        let service_editor = Credential::ServiceAccount(RootRole::Editor);
        let service_viewer = Credential::ServiceAccount(RootRole::Viewer);
        assert!(authorize(service_admin, false, Access).is_ok());
        assert!(authorize(service_admin, true, OwnAccount).is_err());
        assert!(authorize(service_editor, false, Configuration).is_ok());
        assert!(authorize(service_editor, true, Access).is_err());
        assert!(authorize(service_viewer, true, Configuration).is_ok());
        assert!(authorize(service_viewer, false, Configuration).is_err());
        assert!(authorize(service_viewer, false, OwnAccount).is_err());
        let error = authorize(viewer, false, Configuration).unwrap_err();
        assert_eq!(error.kind, ErrorKind::NoAccess);
        let error = authorize(edge, true, Configuration).unwrap_err();
        assert_eq!(error.message, "An edge token cannot use the admin API");
    }
}
