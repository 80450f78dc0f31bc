//! `vexil-control-plane import`: an export file into one project and environment (`--file`), or a whole
//! running Unleash (`--from-unleash URL --token ADMIN_TOKEN`: its environments, projects, context fields,
//! custom strategies, segments, tag types, then each project's export of each of its environments). Each run is one
//! [`WriteTx`](crate::store::WriteTx) through the same domain functions as the admin API, so a bad file
//! writes nothing, and a second run of the same data changes nothing. It prints what it created.

mod unleash;

use crate::domain::context_fields::{self, ContextFieldInput};
use crate::domain::environments::{self, CreateEnvironment};
use crate::domain::first_start;
use crate::domain::import_export::bodies::{ExportResult, ImportReport, ImportToggles};
use crate::domain::import_export::write;
use crate::domain::limits::Limits;
use crate::domain::projects::{self, AddProjectEnvironment, CreateProject};
use crate::domain::segments::{self, SegmentInput};
use crate::domain::strategy_definitions::{self, CreateStrategyDefinition};
use crate::domain::tags::{self, TagType};
use crate::store::context_fields as field_store;
use crate::store::environments as environment_store;
use crate::store::projects as project_store;
use crate::store::segments as segment_store;
use crate::store::strategy_definitions as definition_store;
use crate::store::{Actor, Store, WriteTx};
use clap::Args;
use std::path::{Path, PathBuf};
use vexil_shared::ApiError;

/// `vexil-control-plane import` (the store is `--database-url`'s).
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// An export (`POST /api/admin/features-batch/export`'s answer) to import.
    #[arg(long, value_name = "EXPORT.json", conflicts_with = "from_unleash", requires_all = ["project", "environment"])]
    pub file: Option<PathBuf>,
    /// The project to import `--file` into.
    #[arg(long)]
    pub project: Option<String>,
    /// The environment to import `--file` into.
    #[arg(long)]
    pub environment: Option<String>,
    /// The base URL of a running Unleash to copy everything from.
    #[arg(long, value_name = "URL", requires = "token")]
    pub from_unleash: Option<String>,
    /// An admin token of that Unleash.
    #[arg(
        long,
        env = "UNLEASH_ADMIN_TOKEN",
        value_name = "ADMIN_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Refused(String),
}

impl From<ApiError> for ImportError {
    fn from(error: ApiError) -> Self {
        ImportError::Refused(format!("{}: {}", error.kind.name(), error.message))
    }
}

impl From<crate::store::StoreError> for ImportError {
    fn from(error: crate::store::StoreError) -> Self {
        ImportError::Refused(error.to_string())
    }
}

/// Reads an export file; a bad one is refused naming the JSON path of the fault.
fn read_export(path: &Path) -> Result<ExportResult, ImportError> {
    let text = std::fs::read(path)
        .map_err(|error| ImportError::Input(format!("{}: {error}", path.display())))?;
    let mut deserializer = serde_json::Deserializer::from_slice(&text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        ImportError::Input(format!(
            "{}: not an export at {}: {}; nothing was imported",
            path.display(),
            error.path(),
            error.inner()
        ))
    })
}

fn print_report(project: &str, environment: &str, report: &ImportReport) {
    let target = format!("{project}/{environment}");
    for name in &report.created_context_fields {
        println!("created context field {name}");
    }
    for name in &report.created_tag_types {
        println!("created tag type {name}");
    }
    for name in &report.created_features {
        println!("created flag {name} ({target})");
    }
    for name in &report.updated_features {
        println!("updated flag {name} ({target})");
    }
    for name in &report.changed_configurations {
        println!("changed configuration of {name} in {target}");
    }
    for warning in &report.warnings {
        println!(
            "warning: {} {}",
            warning.message,
            warning.affected_items.join(", ")
        );
    }
}

/// Runs the command; prints what it created.
pub async fn run(database_url: &str, limits: &Limits, args: ImportArgs) -> Result<(), ImportError> {
    let store = Store::connect(database_url).await?;
    // A new store gets what the server's first start gives it (project `default`, its environments), so an
    // import may be the first thing run against it.
    first_start::seed(&store).await?;
    let actor = Actor::token("import");
    let result = match (&args.file, &args.from_unleash) {
        (Some(file), None) => {
            let data = read_export(file)?;
            let (Some(project), Some(environment)) = (args.project, args.environment) else {
                return Err(ImportError::Input(
                    "--file needs --project and --environment".to_owned(),
                ));
            };
            let mut tx = store.begin_write(&actor).await?;
            let input = ImportToggles {
                project: project.clone(),
                environment: environment.clone(),
                data,
            };
            let report = write::import(&mut tx, input, limits).await?;
            print_report(&project, &environment, &report);
            commit(tx).await
        }
        (None, Some(url)) => {
            let token = args.token.unwrap_or_default();
            let instance = unleash::read(url, &token)
                .await
                .map_err(ImportError::Input)?;
            let mut tx = store.begin_write(&actor).await?;
            copy_instance(&mut tx, instance, limits).await?;
            commit(tx).await
        }
        _ => Err(ImportError::Input(
            "give --file EXPORT.json --project P --environment E, or --from-unleash URL --token ADMIN_TOKEN"
                .to_owned(),
        )),
    };
    store.close().await;
    result
}

async fn commit(tx: WriteTx) -> Result<(), ImportError> {
    let revision = tx.revision();
    if tx.commit().await? {
        println!("committed as revision {revision}");
    } else {
        println!("nothing to change");
    }
    Ok(())
}

/// Creates what Vexil lacks of an Unleash instance, then imports each project's exports.
async fn copy_instance(
    tx: &mut WriteTx,
    instance: unleash::UnleashInstance,
    limits: &Limits,
) -> Result<(), ImportError> {
    for environment in instance.environments {
        if environment_store::get(tx.conn(), &environment.name)
            .await?
            .is_none()
        {
            environments::create(
                tx,
                CreateEnvironment {
                    name: environment.name.clone(),
                    environment_type: environment.environment_type,
                    enabled: environment.enabled,
                    sort_order: None,
                },
                limits,
            )
            .await?;
            println!("created environment {}", environment.name);
        }
    }
    for (project, names) in &instance.projects {
        if project_store::get(tx.conn(), &project.id).await?.is_none() {
            projects::create(
                tx,
                CreateProject {
                    id: Some(project.id.clone()),
                    name: project.name.clone(),
                    description: project.description.clone(),
                    mode: None,
                    default_stickiness: None,
                    environments: Some(names.clone()),
                },
                limits,
            )
            .await?;
            println!("created project {}", project.id);
        }
        for environment in names {
            if !project_store::has_environment(tx.conn(), &project.id, environment).await? {
                projects::add_environment(
                    tx,
                    &project.id,
                    AddProjectEnvironment {
                        environment: environment.clone(),
                        change_requests_enabled: None,
                        default_strategy: None,
                    },
                )
                .await?;
                println!("added environment {environment} to project {}", project.id);
            }
        }
    }
    for field in instance.context_fields {
        if field_store::get(tx.conn(), &field.name).await?.is_none() {
            context_fields::create(
                tx,
                ContextFieldInput {
                    name: Some(field.name.clone()),
                    description: field.description,
                    stickiness: field.stickiness,
                    sort_order: field.sort_order,
                    legal_values: Some(field.legal_values),
                    project: None,
                },
            )
            .await?;
            println!("created context field {}", field.name);
        }
    }
    for strategy in instance.strategies {
        if definition_store::get(tx.conn(), &strategy.name)
            .await?
            .is_none()
        {
            strategy_definitions::create(
                tx,
                CreateStrategyDefinition {
                    name: strategy.name.clone(),
                    title: strategy.display_name,
                    description: strategy.description,
                    parameters: strategy.parameters,
                },
            )
            .await?;
            println!("created strategy {}", strategy.name);
        }
    }
    for segment in instance.segments {
        if segment_store::get_by_name(tx.conn(), &segment.name)
            .await?
            .is_none()
        {
            segments::create(
                tx,
                SegmentInput {
                    name: segment.name.clone(),
                    description: segment.description,
                    project: segment.project,
                    constraints: segment.constraints,
                },
                limits,
            )
            .await?;
            println!("created segment {}", segment.name);
        }
    }
    for tag_type in instance.tag_types {
        let name = tag_type.name.clone();
        let tag_type = TagType {
            name: tag_type.name,
            description: tag_type.description,
            icon: tag_type.icon,
            color: tag_type.color,
        };
        if tags::ensure_tag_type(tx, tag_type).await? {
            println!("created tag type {name}");
        }
    }
    for export in instance.exports {
        let input = ImportToggles {
            project: export.project.clone(),
            environment: export.environment.clone(),
            data: export.data,
        };
        let report = write::import(tx, input, limits).await?;
        print_report(&export.project, &export.environment, &report);
    }
    Ok(())
}
