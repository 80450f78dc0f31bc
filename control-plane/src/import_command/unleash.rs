//! Reading a running Unleash over its admin API (`--from-unleash URL --token ADMIN_TOKEN`): what a
//! migration needs, each answer read leniently (unknown fields ignored) into the shapes Vexil imports, and
//! each flag's strategy order (`sortOrder`), which Unleash's export leaves out.

use crate::domain::import_export::bodies::{ExportContextField, ExportResult, ExportTagType};
use crate::model::constraint::Constraint;
use crate::model::strategy_definition::StrategyParameter;
use reqwest::header::AUTHORIZATION;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Deserialize)]
pub struct UnleashProject {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Projects {
    projects: Vec<UnleashProject>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnleashEnvironment {
    pub name: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    #[serde(default)]
    pub enabled: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct Environments {
    environments: Vec<UnleashEnvironment>,
}

#[derive(Debug, Deserialize)]
struct ProjectEnvironment {
    environment: String,
}

#[derive(Debug, Deserialize)]
struct Overview {
    #[serde(default)]
    environments: Vec<ProjectEnvironment>,
}

#[derive(Debug, Deserialize)]
pub struct UnleashSegment {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
}

#[derive(Debug, Deserialize)]
struct Segments {
    segments: Vec<UnleashSegment>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnleashStrategy {
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Vec<StrategyParameter>,
}

#[derive(Debug, Deserialize)]
struct Strategies {
    strategies: Vec<UnleashStrategy>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TagTypes {
    tag_types: Vec<ExportTagType>,
}

/// A strategy as a flag's admin answer (`GET /api/admin/projects/:p/features/:f`) lists it: with its place.
#[derive(Debug, Deserialize)]
struct PlacedStrategy {
    id: String,
    #[serde(default, rename = "sortOrder")]
    sort_order: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct FeatureEnvironment {
    name: String,
    #[serde(default)]
    strategies: Vec<PlacedStrategy>,
}

#[derive(Debug, Deserialize)]
struct Feature {
    #[serde(default)]
    environments: Vec<FeatureEnvironment>,
}

impl Feature {
    fn sort_order(&self, environment: &str, id: &str) -> Option<i64> {
        self.environments
            .iter()
            .filter(|entry| entry.name == environment)
            .flat_map(|entry| &entry.strategies)
            .find(|strategy| strategy.id == id)
            .and_then(|strategy| strategy.sort_order)
    }
}

/// One project's export of one environment.
pub struct ProjectExport {
    pub project: String,
    pub environment: String,
    pub data: ExportResult,
}

/// Everything read from Unleash, in the order it is created in Vexil.
pub struct UnleashInstance {
    pub environments: Vec<UnleashEnvironment>,
    pub projects: Vec<(UnleashProject, Vec<String>)>,
    pub context_fields: Vec<ExportContextField>,
    pub strategies: Vec<UnleashStrategy>,
    pub segments: Vec<UnleashSegment>,
    pub tag_types: Vec<ExportTagType>,
    pub exports: Vec<ProjectExport>,
}

struct Reader {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Reader {
    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<T, String> {
        let response = request
            .header(AUTHORIZATION, &self.token)
            .send()
            .await
            .map_err(|error| format!("{what}: {error}"))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|error| format!("{what}: {error}"))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let text: String = text.chars().take(300).collect();
            return Err(format!("{what}: Unleash answered {status}: {text}"));
        }
        let mut deserializer = serde_json::Deserializer::from_slice(&body);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            format!(
                "{what}: unexpected answer at {}: {}",
                error.path(),
                error.inner()
            )
        })
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, String> {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request, &format!("GET {path}")).await
    }
}

/// The path segment `text`, percent-encoded.
fn segment(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Reads projects, environments, context fields, strategy definitions, segments, tag types and each
/// project's export of each of its environments.
pub async fn read(base: &str, token: &str) -> Result<UnleashInstance, String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|error| format!("HTTP client: {error}"))?;
    let reader = Reader {
        client,
        base: base.trim_end_matches('/').to_owned(),
        token: token.to_owned(),
    };
    let environments: Environments = reader.get("/api/admin/environments").await?;
    let projects: Projects = reader.get("/api/admin/projects").await?;
    let context_fields: Vec<ExportContextField> = reader.get("/api/admin/context").await?;
    let strategies: Strategies = reader.get("/api/admin/strategies").await?;
    let segments: Segments = reader.get("/api/admin/segments").await?;
    let tag_types: TagTypes = reader.get("/api/admin/tag-types").await?;
    let mut with_environments = Vec::new();
    let mut exports = Vec::new();
    for project in projects.projects {
        let overview: Overview = reader
            .get(&format!(
                "/api/admin/projects/{}/overview",
                segment(&project.id)
            ))
            .await?;
        let names: Vec<String> = overview
            .environments
            .into_iter()
            .map(|environment| environment.environment)
            .collect();
        for environment in &names {
            let body = serde_json::json!({
                "environment": environment, "project": project.id, "downloadFile": false
            });
            let request = reader
                .client
                .post(format!("{}/api/admin/features-batch/export", reader.base))
                .json(&body);
            let what = format!("export of project {} in {environment}", project.id);
            exports.push(ProjectExport {
                project: project.id.clone(),
                environment: environment.clone(),
                data: reader.send(request, &what).await?,
            });
        }
        let first = exports.len() - names.len();
        add_sort_orders(&reader, &project.id, &mut exports[first..]).await?;
        with_environments.push((project, names));
    }
    Ok(UnleashInstance {
        environments: environments.environments,
        projects: with_environments,
        context_fields,
        strategies: strategies.strategies,
        segments: segments.segments,
        tag_types: tag_types.tag_types,
        exports,
    })
}

/// Unleash's export lists a flag's strategies in no useful order and without `sortOrder`, which decides
/// the order Unleash evaluates them in (then creation). The flag's admin answer has it: each flag with more
/// than one strategy in one of the project's exports is asked once, and its strategies get their
/// `sortOrder`; one Unleash no longer lists (changed between the two reads) keeps none, and goes last.
async fn add_sort_orders(
    reader: &Reader,
    project: &str,
    exports: &mut [ProjectExport],
) -> Result<(), String> {
    let mut features: BTreeMap<String, Feature> = BTreeMap::new();
    for export in exports.iter_mut() {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for strategy in &export.data.feature_strategies {
            if let Some(feature) = &strategy.feature_name {
                *counts.entry(feature).or_default() += 1;
            }
        }
        let several: Vec<String> = counts
            .into_iter()
            .filter(|(name, count)| *count > 1 && !features.contains_key(*name))
            .map(|(name, _)| name.to_owned())
            .collect();
        for name in several {
            let path = format!(
                "/api/admin/projects/{}/features/{}",
                segment(project),
                segment(&name)
            );
            features.insert(name, reader.get(&path).await?);
        }
        for strategy in &mut export.data.feature_strategies {
            let (Some(feature), Some(id)) = (&strategy.feature_name, &strategy.id) else {
                continue;
            };
            if let Some(feature) = features.get(feature) {
                strategy.sort_order = feature.sort_order(&export.environment, id);
            }
        }
    }
    Ok(())
}
