//! How a route's declared permission is found and where it applies: the tables are where routes are mounted
//! (`http::admin::PERMISSIONS` for the admin API, `ui::PERMISSIONS` for the UI's forms); the request's
//! matched route picks the entry, its path parameters (and a UI form's `environment` field) the
//! [`Scope`]. `domain::access::authorize` then decides.

use crate::domain::access::Scope;
use crate::domain::permissions::Permission;
use crate::store::features as feature_store;
use axum::extract::MatchedPath;
use axum::http::request::Parts;
use axum::http::Method;
use sqlx::AnyConnection;
use vexil_shared::ApiError;

/// One route's permission: what a request with this method on this route template (as mounted, path
/// parameters in braces, without the base path) needs.
#[derive(Debug, Clone)]
pub struct RoutePermission {
    pub method: Method,
    pub path: &'static str,
    pub permission: Permission,
    /// The UI form field naming the environment when the path does not (`environment`, or `to` where a
    /// copy writes into another environment).
    pub environment_field: &'static str,
}

/// A router's table of permissions, put into each request's extensions where the router is mounted
/// (`http::admin::routes`), so the extractor finds the one of the route it serves.
#[derive(Debug, Clone, Copy)]
pub struct PermissionTable(pub &'static [RoutePermission]);

/// `POST /path` (a UI form) needs `permission` in the environment its field `field` names.
pub const fn post_in(
    path: &'static str,
    permission: Permission,
    field: &'static str,
) -> RoutePermission {
    RoutePermission {
        method: Method::POST,
        path,
        permission,
        environment_field: field,
    }
}

/// `POST /path` needs `permission`.
pub const fn post(path: &'static str, permission: Permission) -> RoutePermission {
    RoutePermission {
        method: Method::POST,
        path,
        permission,
        environment_field: "environment",
    }
}

/// `PUT /path` needs `permission`.
pub const fn put(path: &'static str, permission: Permission) -> RoutePermission {
    RoutePermission {
        method: Method::PUT,
        path,
        permission,
        environment_field: "environment",
    }
}

/// `PATCH /path` needs `permission`.
pub const fn patch(path: &'static str, permission: Permission) -> RoutePermission {
    RoutePermission {
        method: Method::PATCH,
        path,
        permission,
        environment_field: "environment",
    }
}

/// `DELETE /path` needs `permission`.
pub const fn delete(path: &'static str, permission: Permission) -> RoutePermission {
    RoutePermission {
        method: Method::DELETE,
        path,
        permission,
        environment_field: "environment",
    }
}

/// `GET /path` needs `permission` (a read that not every user may make).
pub const fn get(path: &'static str, permission: Permission) -> RoutePermission {
    RoutePermission {
        method: Method::GET,
        path,
        permission,
        environment_field: "environment",
    }
}

/// The permission `table` declares for `method` on the route `matched` (the matched route template, under
/// `base_path`).
pub fn declared(
    table: &'static [RoutePermission],
    method: &Method,
    matched: &str,
    base_path: &str,
) -> Option<&'static RoutePermission> {
    let route = matched.strip_prefix(base_path).unwrap_or(matched);
    table.iter().find(|entry| {
        (entry.method == *method || (entry.method == Method::GET && method == Method::HEAD))
            && entry.path == route
    })
}

/// The entry of `table` for the route a request matched (its `MatchedPath`), if any.
pub fn declared_for(
    parts: &Parts,
    table: &'static [RoutePermission],
    base_path: &str,
) -> Option<&'static RoutePermission> {
    let matched = parts.extensions.get::<MatchedPath>()?;
    declared(table, &parts.method, matched.as_str(), base_path)
}

/// The project and environment a request names: its path's `projectId` / `project`, else the project of its
/// `featureName` / `feature` (a route without the project in its path); its path's `environment`, else a
/// form's `environment` field. A flag that does not exist leaves the project unnamed (the handler answers
/// 404 once let in; only callers holding the permission everywhere get that far).
pub async fn scope_of(
    conn: &mut AnyConnection,
    params: &[(String, String)],
    form_environment: Option<&str>,
) -> Result<Scope, ApiError> {
    let param = |names: &[&str]| {
        params
            .iter()
            .find(|(name, _)| names.contains(&name.as_str()))
            .map(|(_, value)| value.clone())
    };
    let project = match param(&["projectId", "project"]) {
        Some(project) => Some(project),
        None => match param(&["featureName", "feature"]) {
            Some(flag) => feature_store::get(conn, &flag)
                .await?
                .map(|row| row.project_id),
            None => None,
        },
    };
    let environment = param(&["environment"]).or_else(|| {
        form_environment
            .filter(|environment| !environment.is_empty())
            .map(str::to_owned)
    });
    Ok(Scope {
        project,
        environment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_found_under_the_base_path() {
        static TABLE: [RoutePermission; 2] = [
            post("/api/admin/projects", Permission::CreateProject),
            get(
                "/api/admin/projects/{projectId}/access",
                Permission::ProjectUserAccessRead,
            ),
        ];
        let found = |method, path, base| {
            declared(&TABLE, &method, path, base).map(|entry| entry.permission)
        };
        assert_eq!(
            found(Method::POST, "/x/api/admin/projects", "/x"),
            Some(Permission::CreateProject)
        );
        assert_eq!(found(Method::PUT, "/api/admin/projects", ""), None);
        assert_eq!(
            found(Method::HEAD, "/api/admin/projects/{projectId}/access", ""),
            Some(Permission::ProjectUserAccessRead)
        );
    }
}
