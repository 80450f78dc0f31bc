//! The named permissions (Unleash's names) at their three levels — root (the whole instance), project, and
//! environment (within a project) — and which the predefined roles hold. `GET /api/admin/permissions` lists
//! them; roles (`domain::roles`) are sets of them; `domain::access` decides with them.

use serde::Serialize;
use utoipa::ToSchema;

/// Where a permission applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The whole instance: context fields, segments, strategies, tag types, projects' creation…
    Root,
    /// One project: its flags, its settings, its access, its API tokens.
    Project,
    /// One environment of one project: switching, strategies, variants, change-request reviews.
    Environment,
}

macro_rules! permissions {
    ($($variant:ident = $id:literal, $name:literal, $level:ident, $display:literal;)*) => {
        /// A named permission. Its id is its place in this list (stable: new ones are added at the end of
        /// their level's ids).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Permission {
            $($variant,)*
        }

        impl Permission {
            pub const ALL: &'static [Permission] = &[$(Permission::$variant,)*];

            pub fn id(self) -> i64 {
                match self {
                    $(Permission::$variant => $id,)*
                }
            }

            /// Unleash's name, as bodies and answers carry it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Permission::$variant => $name,)*
                }
            }

            pub fn level(self) -> Level {
                match self {
                    $(Permission::$variant => Level::$level,)*
                }
            }

            /// What it lets one do, in a few words.
            pub fn display_name(self) -> &'static str {
                match self {
                    $(Permission::$variant => $display,)*
                }
            }
        }
    };
}

permissions! {
    CreateAddon = 1, "CREATE_ADDON", Root, "Create integrations";
    UpdateAddon = 2, "UPDATE_ADDON", Root, "Update integrations";
    DeleteAddon = 3, "DELETE_ADDON", Root, "Delete integrations";
    CreateClientApiToken = 4, "CREATE_CLIENT_API_TOKEN", Root, "Create backend API tokens";
    UpdateClientApiToken = 5, "UPDATE_CLIENT_API_TOKEN", Root, "Update backend API tokens";
    DeleteClientApiToken = 6, "DELETE_CLIENT_API_TOKEN", Root, "Delete backend API tokens";
    ReadClientApiToken = 7, "READ_CLIENT_API_TOKEN", Root, "Read backend API tokens";
    CreateFrontendApiToken = 8, "CREATE_FRONTEND_API_TOKEN", Root, "Create frontend API tokens";
    UpdateFrontendApiToken = 9, "UPDATE_FRONTEND_API_TOKEN", Root, "Update frontend API tokens";
    DeleteFrontendApiToken = 10, "DELETE_FRONTEND_API_TOKEN", Root, "Delete frontend API tokens";
    ReadFrontendApiToken = 11, "READ_FRONTEND_API_TOKEN", Root, "Read frontend API tokens";
    UpdateApplication = 12, "UPDATE_APPLICATION", Root, "Update applications";
    CreateContextField = 13, "CREATE_CONTEXT_FIELD", Root, "Create context fields";
    UpdateContextField = 14, "UPDATE_CONTEXT_FIELD", Root, "Update context fields";
    DeleteContextField = 15, "DELETE_CONTEXT_FIELD", Root, "Delete context fields";
    CreateProject = 16, "CREATE_PROJECT", Root, "Create projects";
    ReadRole = 17, "READ_ROLE", Root, "Read roles";
    CreateSegment = 18, "CREATE_SEGMENT", Root, "Create segments";
    UpdateSegment = 19, "UPDATE_SEGMENT", Root, "Edit segments";
    DeleteSegment = 20, "DELETE_SEGMENT", Root, "Delete segments";
    CreateStrategy = 21, "CREATE_STRATEGY", Root, "Create activation strategies";
    UpdateStrategy = 22, "UPDATE_STRATEGY", Root, "Update activation strategies";
    DeleteStrategy = 23, "DELETE_STRATEGY", Root, "Delete activation strategies";
    CreateTagType = 24, "CREATE_TAG_TYPE", Root, "Create tag types";
    UpdateTagType = 25, "UPDATE_TAG_TYPE", Root, "Update tag types";
    DeleteTagType = 26, "DELETE_TAG_TYPE", Root, "Delete tag types";
    ReadLogs = 27, "READ_LOGS", Root, "Read the event log";
    UpdateMaintenanceMode = 28, "UPDATE_MAINTENANCE_MODE", Root, "Update maintenance mode";
    UpdateInstanceBanners = 29, "UPDATE_INSTANCE_BANNERS", Root, "Update banners";
    UpdateCors = 30, "UPDATE_CORS", Root, "Update CORS settings";
    UpdateAuthConfiguration = 31, "UPDATE_AUTH_CONFIGURATION", Root, "Update authentication settings";
    CreateEnvironment = 32, "CREATE_ENVIRONMENT", Root, "Create environments";
    UpdateEnvironment = 33, "UPDATE_ENVIRONMENT", Root, "Update environments";
    DeleteEnvironment = 34, "DELETE_ENVIRONMENT", Root, "Delete environments";
    CreateFeature = 101, "CREATE_FEATURE", Project, "Create feature flags";
    UpdateFeature = 102, "UPDATE_FEATURE", Project, "Update feature flags";
    UpdateFeatureDependency = 103, "UPDATE_FEATURE_DEPENDENCY", Project, "Update feature dependencies";
    DeleteFeature = 104, "DELETE_FEATURE", Project, "Archive feature flags";
    UpdateFeatureVariants = 105, "UPDATE_FEATURE_VARIANTS", Project, "Update variants";
    MoveFeatureToggle = 106, "MOVE_FEATURE_TOGGLE", Project, "Move feature flags to another project";
    ReadProjectApiToken = 107, "READ_PROJECT_API_TOKEN", Project, "Read project API tokens";
    CreateProjectApiToken = 108, "CREATE_PROJECT_API_TOKEN", Project, "Create project API tokens";
    DeleteProjectApiToken = 109, "DELETE_PROJECT_API_TOKEN", Project, "Delete project API tokens";
    UpdateProjectSegment = 110, "UPDATE_PROJECT_SEGMENT", Project, "Create, edit and delete project segments";
    UpdateProject = 111, "UPDATE_PROJECT", Project, "Update the project";
    DeleteProject = 112, "DELETE_PROJECT", Project, "Delete the project";
    ProjectUserAccessRead = 113, "PROJECT_USER_ACCESS_READ", Project, "See who has access to the project";
    ProjectUserAccessWrite = 114, "PROJECT_USER_ACCESS_WRITE", Project, "Give and take access to the project";
    ProjectDefaultStrategyRead = 115, "PROJECT_DEFAULT_STRATEGY_READ", Project, "Read default strategies";
    ProjectDefaultStrategyWrite = 116, "PROJECT_DEFAULT_STRATEGY_WRITE", Project, "Change default strategies";
    ProjectChangeRequestRead = 117, "PROJECT_CHANGE_REQUEST_READ", Project, "Read change-request settings";
    ProjectChangeRequestWrite = 118, "PROJECT_CHANGE_REQUEST_WRITE", Project, "Change change-request settings";
    ProjectSettingsRead = 119, "PROJECT_SETTINGS_READ", Project, "Read project settings";
    ProjectSettingsWrite = 120, "PROJECT_SETTINGS_WRITE", Project, "Change project settings";
    CreateFeatureStrategy = 201, "CREATE_FEATURE_STRATEGY", Environment, "Add strategies";
    UpdateFeatureStrategy = 202, "UPDATE_FEATURE_STRATEGY", Environment, "Edit strategies";
    DeleteFeatureStrategy = 203, "DELETE_FEATURE_STRATEGY", Environment, "Remove strategies";
    UpdateFeatureEnvironmentVariants = 204, "UPDATE_FEATURE_ENVIRONMENT_VARIANTS", Environment, "Update variants in the environment";
    UpdateFeatureEnvironment = 205, "UPDATE_FEATURE_ENVIRONMENT", Environment, "Switch flags on and off";
    ApproveChangeRequest = 206, "APPROVE_CHANGE_REQUEST", Environment, "Approve and reject change requests";
    ApplyChangeRequest = 207, "APPLY_CHANGE_REQUEST", Environment, "Apply change requests";
    SkipChangeRequest = 208, "SKIP_CHANGE_REQUEST", Environment, "Change directly where change requests are on";
}

impl Permission {
    /// The permission Unleash calls `name` (case as given).
    pub fn named(name: &str) -> Option<Permission> {
        Permission::ALL
            .iter()
            .copied()
            .find(|permission| permission.name() == name)
    }

    pub fn from_id(id: i64) -> Option<Permission> {
        Permission::ALL
            .iter()
            .copied()
            .find(|permission| permission.id() == id)
    }

    /// The permissions of `level`, in list order.
    pub fn at(level: Level) -> impl Iterator<Item = Permission> {
        Permission::ALL
            .iter()
            .copied()
            .filter(move |permission| permission.level() == level)
    }

    /// The project role Member: work on the project's flags in every environment, its project segments and
    /// API tokens; not its settings, access, change-request configuration, nor reviews of change requests.
    pub fn of_member(self) -> bool {
        use Permission::*;
        matches!(
            self,
            CreateFeature
                | UpdateFeature
                | UpdateFeatureDependency
                | DeleteFeature
                | UpdateFeatureVariants
                | ReadProjectApiToken
                | CreateProjectApiToken
                | DeleteProjectApiToken
                | UpdateProjectSegment
                | ProjectUserAccessRead
                | ProjectDefaultStrategyRead
                | ProjectChangeRequestRead
                | ProjectSettingsRead
                | CreateFeatureStrategy
                | UpdateFeatureStrategy
                | DeleteFeatureStrategy
                | UpdateFeatureEnvironmentVariants
                | UpdateFeatureEnvironment
        )
    }

    /// What the root role Editor holds in every project (Vexil's Editors work on every project, as before
    /// project roles existed): every project and environment permission but giving access, the
    /// change-request configuration and skipping change requests, which stay with Admins and project Owners.
    pub fn of_editor_everywhere(self) -> bool {
        use Permission::*;
        self.level() != Level::Root
            && !matches!(
                self,
                ProjectUserAccessWrite | ProjectChangeRequestWrite | SkipChangeRequest
            )
    }

    /// The root permissions of the root role Editor: the instance's shared configuration (context fields,
    /// segments, strategies, tag types, environments, applications), creating projects, reading roles.
    pub fn of_editor_root(self) -> bool {
        use Permission::*;
        matches!(
            self,
            CreateContextField
                | UpdateContextField
                | DeleteContextField
                | CreateProject
                | ReadRole
                | CreateSegment
                | UpdateSegment
                | DeleteSegment
                | CreateStrategy
                | UpdateStrategy
                | DeleteStrategy
                | CreateTagType
                | UpdateTagType
                | DeleteTagType
                | UpdateApplication
                | CreateEnvironment
                | UpdateEnvironment
                | DeleteEnvironment
                | ReadLogs
        )
    }
}

/// A permission as `GET /api/admin/permissions` and a role's permissions list it (Unleash's
/// adminPermissionSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionBody {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    /// `root`, `project` or `environment`.
    #[serde(rename = "type")]
    pub permission_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl PermissionBody {
    pub fn of(permission: Permission, environment: Option<&str>) -> PermissionBody {
        PermissionBody {
            id: permission.id(),
            name: permission.name().to_owned(),
            display_name: permission.display_name().to_owned(),
            permission_type: match permission.level() {
                Level::Root => "root",
                Level::Project => "project",
                Level::Environment => "environment",
            }
            .to_owned(),
            environment: environment.map(str::to_owned),
        }
    }
}

/// The environment permissions of one environment.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EnvironmentPermissions {
    pub name: String,
    pub permissions: Vec<PermissionBody>,
}

/// The permissions at each level (adminPermissionsSchema's `permissions`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PermissionLevels {
    pub root: Vec<PermissionBody>,
    pub project: Vec<PermissionBody>,
    pub environments: Vec<EnvironmentPermissions>,
}

/// `GET /api/admin/permissions` (adminPermissionsSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PermissionsBody {
    pub permissions: PermissionLevels,
    pub version: i64,
}

/// Every permission, the environment ones once per environment of `environments`.
pub fn listing(environments: &[String]) -> PermissionsBody {
    let at = |level| {
        Permission::at(level)
            .map(|permission| PermissionBody::of(permission, None))
            .collect()
    };
    PermissionsBody {
        permissions: PermissionLevels {
            root: at(Level::Root),
            project: at(Level::Project),
            environments: environments
                .iter()
                .map(|environment| EnvironmentPermissions {
                    name: environment.clone(),
                    permissions: Permission::at(Level::Environment)
                        .map(|permission| PermissionBody::of(permission, Some(environment)))
                        .collect(),
                })
                .collect(),
        },
        version: 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_are_unique_and_found() {
        let mut names = std::collections::BTreeSet::new();
        let mut ids = std::collections::BTreeSet::new();
        for permission in Permission::ALL {
            assert!(names.insert(permission.name()));
            assert!(ids.insert(permission.id()));
            assert_eq!(Permission::named(permission.name()), Some(*permission));
            assert_eq!(Permission::from_id(permission.id()), Some(*permission));
        }
        assert_eq!(Permission::named("create_feature"), None);
    }

    #[test]
    fn predefined_sets() {
        assert!(Permission::UpdateFeatureEnvironment.of_member());
        assert!(!Permission::ApproveChangeRequest.of_member());
        assert!(!Permission::ProjectUserAccessWrite.of_member());
        assert!(Permission::ApproveChangeRequest.of_editor_everywhere());
        assert!(!Permission::ProjectChangeRequestWrite.of_editor_everywhere());
        assert!(!Permission::SkipChangeRequest.of_editor_everywhere());
        assert!(!Permission::CreateProject.of_editor_everywhere());
        assert!(Permission::CreateProject.of_editor_root());
        assert!(!Permission::UpdateCors.of_editor_root());
    }
}
