//! Outdated SDKs (`GET /api/admin/metrics/sdks/outdated`, `GET /api/admin/projects/:p/sdks/outdated`,
//! Unleash's outdatedSdksSchema): the `sdkVersion`s applications' instances reported (registration or
//! metrics, kept in `client_instances`) that are older than [`MINIMUM_VERSIONS`] says for their SDK, each with
//! the applications using it. An SDK missing from the table, or a version that does not read as
//! `name:version`, is never called outdated.

use crate::store::applications as application_store;
use crate::store::projects as project_store;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The oldest release of each official server-side SDK that Vexil considers current, by the name the SDK
/// reports in `sdkVersion` (`name:version`). Each is the first release that evaluates everything Vexil
/// serves in the client document — flag dependencies, strategy variants and segments — so an older one may
/// answer differently from the edges and the playground. A version below its floor is outdated.
pub const MINIMUM_VERSIONS: &[(&str, &str)] = &[
    ("unleash-client-dotnet", "4.1.3"),
    ("unleash-client-go", "4.1.0"),
    ("unleash-client-java", "9.0.0"),
    ("unleash-client-node", "5.0.0"),
    ("unleash-client-php", "1.13.0"),
    ("unleash-client-python", "5.8.0"),
    ("unleash-client-ruby", "5.0.0"),
    ("unleash-client-rust", "0.11.0"),
];

/// One outdated `sdkVersion` and the applications reporting it, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutdatedSdk {
    /// `name:version` as the SDK reported it.
    pub sdk_version: String,
    pub applications: Vec<String>,
}

/// Unleash's outdatedSdksSchema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OutdatedSdks {
    pub sdks: Vec<OutdatedSdk>,
}

/// A version's numeric release parts and whether it is a pre-release (`5.0.0-beta.1` is before `5.0.0`);
/// `None` when it does not start with a number (`v` allowed).
fn parse(version: &str) -> Option<(Vec<u64>, bool)> {
    let version = version.trim();
    let version = version.strip_prefix(['v', 'V']).unwrap_or(version);
    let (release, pre) = match version.find(['-', '+']) {
        Some(at) => (&version[..at], version[at..].starts_with('-')),
        None => (version, false),
    };
    let parts = release
        .split('.')
        .map(|part| part.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    Some((parts, pre))
}

fn compare(a: &(Vec<u64>, bool), b: &(Vec<u64>, bool)) -> Ordering {
    let length = a.0.len().max(b.0.len());
    for index in 0..length {
        let (x, y) = (
            a.0.get(index).copied().unwrap_or(0),
            b.0.get(index).copied().unwrap_or(0),
        );
        if x != y {
            return x.cmp(&y);
        }
    }
    // Same release: a pre-release comes first.
    b.1.cmp(&a.1)
}

/// Whether `sdk_version` (`name:version`) is older than its SDK's floor in [`MINIMUM_VERSIONS`].
pub fn is_outdated(sdk_version: &str) -> bool {
    let Some((name, version)) = sdk_version.rsplit_once(':') else {
        return false;
    };
    let Some((_, floor)) = MINIMUM_VERSIONS
        .iter()
        .find(|(sdk, _)| sdk.eq_ignore_ascii_case(name.trim()))
    else {
        return false;
    };
    match (parse(version), parse(floor)) {
        (Some(version), Some(floor)) => compare(&version, &floor) == Ordering::Less,
        _ => false,
    }
}

fn outdated_of(pairs: Vec<(String, String)>) -> OutdatedSdks {
    let mut by_version: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (app, version) in pairs {
        if is_outdated(&version) {
            let apps = by_version.entry(version).or_default();
            if !apps.contains(&app) {
                apps.push(app);
            }
        }
    }
    OutdatedSdks {
        sdks: by_version
            .into_iter()
            .map(|(sdk_version, mut applications)| {
                applications.sort();
                OutdatedSdk {
                    sdk_version,
                    applications,
                }
            })
            .collect(),
    }
}

/// Every outdated SDK version reported, by version.
pub async fn all(conn: &mut AnyConnection) -> Result<OutdatedSdks, ApiError> {
    Ok(outdated_of(
        application_store::sdk_versions(conn, None).await?,
    ))
}

/// The outdated SDK versions of the applications that reported a flag of `project` (404 for no such
/// project).
pub async fn of_project(conn: &mut AnyConnection, project: &str) -> Result<OutdatedSdks, ApiError> {
    if project_store::get(conn, project).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "There is no project {project}"
        )));
    }
    Ok(outdated_of(
        application_store::sdk_versions(conn, Some(project)).await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::is_outdated;

    #[test]
    fn versions_below_the_floor_are_outdated() {
        assert!(is_outdated("unleash-client-node:4.9.9"));
        assert!(is_outdated("unleash-client-node:5.0.0-beta.3"));
        assert!(is_outdated("unleash-client-java:v8.4.0"));
        assert!(is_outdated("unleash-client-python:5.7"));
        assert!(!is_outdated("unleash-client-node:5.0.0"));
        assert!(!is_outdated("unleash-client-node:10.1.2"));
        assert!(!is_outdated("unleash-client-go:4.1"));
        assert!(!is_outdated("some-other-sdk:0.0.1"));
        assert!(!is_outdated("unleash-client-node:latest"));
        assert!(!is_outdated("no-version"));
    }
}
