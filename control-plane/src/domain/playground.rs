//! The playground (`POST /api/admin/playground`): every live flag of the chosen projects evaluated for one
//! context in one environment, with the engine the edges use (`vexil_shared::Snapshot` on the same client
//! document), and per strategy why: its result, each constraint's and each segment's
//! (`vexil_shared::engine::explain`).

use super::client_document::{self, Detail};
use crate::model::variant::FlagVariant;
use crate::store;
use crate::store::variants as variant_store;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use utoipa::ToSchema;
use vexil_shared::engine::explain::{self, StrategyOutcome};
use vexil_shared::model::{Constraint as ModelConstraint, Feature, FeaturesDocument};
use vexil_shared::{ApiError, CompileOptions, Context, Projects, Snapshot};

/// The request body.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundRequest {
    pub environment: String,
    /// `"*"` (the default) or a list of project ids.
    #[schema(value_type = Object)]
    #[serde(default)]
    pub projects: Option<serde_json::Value>,
    /// An Unleash context; `appName` is required. `environment` defaults to the request's.
    #[schema(value_type = Object)]
    pub context: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlaygroundResponse {
    pub input: PlaygroundRequest,
    pub features: Vec<PlaygroundFeature>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundFeature {
    pub name: String,
    pub project_id: String,
    /// What SDKs and edges answer for this context.
    pub is_enabled: bool,
    /// The flag's switch in the environment.
    pub is_enabled_in_current_environment: bool,
    /// `{name, enabled, payload?, feature_enabled}` as the frontend API answers.
    #[schema(value_type = Object)]
    pub variant: serde_json::Value,
    /// The flag-level variants of the environment.
    pub variants: Vec<FlagVariant>,
    pub strategies: PlaygroundStrategies,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlaygroundStrategies {
    /// true, false or "unknown" (only custom strategies could have enabled the flag).
    #[schema(value_type = Object)]
    pub result: serde_json::Value,
    pub data: Vec<PlaygroundStrategy>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundStrategy {
    pub id: Option<String>,
    pub name: String,
    pub title: Option<String>,
    pub disabled: bool,
    pub parameters: BTreeMap<String, String>,
    pub result: StrategyResult,
    pub constraints: Vec<PlaygroundConstraint>,
    pub segments: Vec<PlaygroundSegment>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyResult {
    /// `complete`, `incomplete` (a custom strategy) or `unevaluated` (disabled).
    pub evaluation_status: String,
    /// true, false, or "unknown" when incomplete.
    #[schema(value_type = Object)]
    pub enabled: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundConstraint {
    pub context_name: String,
    pub operator: String,
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub case_insensitive: bool,
    pub inverted: bool,
    pub result: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlaygroundSegment {
    pub id: i64,
    pub name: String,
    pub result: bool,
    pub constraints: Vec<PlaygroundConstraint>,
}

fn projects_of(value: Option<&serde_json::Value>) -> Result<Projects, ApiError> {
    let invalid = || {
        ApiError::invalid_field(
            "projects",
            "projects must be \"*\" or a list of project ids",
        )
    };
    match value {
        None | Some(serde_json::Value::Null) => Ok(Projects::All),
        Some(serde_json::Value::String(text)) if text == "*" => Ok(Projects::All),
        Some(serde_json::Value::Array(items)) => {
            let ids = items
                .iter()
                .map(|item| item.as_str().map(str::to_owned).ok_or_else(invalid))
                .collect::<Result<Vec<String>, _>>()?;
            Ok(Projects::from_list(&ids))
        }
        Some(_) => Err(invalid()),
    }
}

/// The context of a request: `appName` required, `environment` defaulting to the request's.
fn context_of(request: &PlaygroundRequest) -> Result<Context, ApiError> {
    let object = request
        .context
        .as_object()
        .ok_or_else(|| ApiError::invalid_field("context", "context must be an object"))?;
    if object.get("appName").is_none_or(serde_json::Value::is_null) {
        return Err(ApiError::invalid_field(
            "context.appName",
            "context.appName is required",
        ));
    }
    let mut context: Context =
        serde_path_to_error::deserialize(&request.context).map_err(|error| {
            ApiError::invalid_field(
                format!("context.{}", error.path()),
                format!("context.{}: {}", error.path(), error.inner()),
            )
        })?;
    if context.environment.is_none() {
        context.environment = Some(request.environment.clone());
    }
    Ok(context)
}

fn constraint_view(constraint: &ModelConstraint, result: bool) -> PlaygroundConstraint {
    PlaygroundConstraint {
        context_name: constraint.context_name.clone(),
        operator: constraint.operator.clone(),
        values: constraint.values.clone(),
        value: constraint.value.clone(),
        case_insensitive: constraint.case_insensitive,
        inverted: constraint.inverted,
        result,
    }
}

/// One page of the playground's answer (the UI's): how many flags are in scope and how many are on, and
/// only the shown ones explained.
#[derive(Debug, Clone)]
pub struct PlaygroundPage {
    /// Flags in the chosen projects.
    pub total: usize,
    /// Of them, those on for the context.
    pub enabled: usize,
    /// The page shown (from 1).
    pub page: usize,
    /// The flags of that page, by name, explained.
    pub features: Vec<PlaygroundFeature>,
}

/// An environment's admin document (disabled strategies included) compiled, with its flags' order by name.
struct Compiled {
    document: FeaturesDocument,
    snapshot: Snapshot,
    options: CompileOptions,
    /// Indexes into `document.features`, by name.
    by_name: Vec<usize>,
}

/// The admin document the playground compiled last in each environment, with the store revision it was read
/// at. Every configuration write moves the revision on, so an evaluation at an unchanged revision (another
/// context, another page) reads only the revision; the first after a change reads the document again and
/// compiles only what changed in it ([`Compiled::after`]). One document per environment is kept.
#[derive(Default)]
pub struct CompiledDocuments {
    latest: Mutex<HashMap<String, (i64, Arc<Compiled>)>>,
}

impl CompiledDocuments {
    async fn of(
        &self,
        conn: &mut AnyConnection,
        environment: &str,
    ) -> Result<Arc<Compiled>, ApiError> {
        let revision = store::revision_on(conn).await?;
        let kept = self
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(environment)
            .map(|(at, compiled)| (*at, Arc::clone(compiled)));
        if let Some((at, compiled)) = &kept {
            if *at == revision {
                return Ok(Arc::clone(compiled));
            }
        }
        // Read after the revision: the document is at least as new as the revision it is kept under.
        let document = client_document::document(conn, environment, Detail::Admin).await?;
        let compiled = match kept {
            Some((_, kept)) if kept.document == document => kept,
            Some((_, kept)) => Arc::new(Compiled::after(&kept, document)),
            // The host name once, not once per flag explained.
            None => Arc::new(Compiled::new(
                document,
                CompileOptions::default().with_hostname_resolved(),
            )),
        };
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(environment.to_owned(), (revision, Arc::clone(&compiled)));
        Ok(compiled)
    }
}

impl Compiled {
    fn new(document: FeaturesDocument, options: CompileOptions) -> Compiled {
        let snapshot = Snapshot::compile_with(&document, &options);
        Compiled::of(document, snapshot, options)
    }

    fn of(document: FeaturesDocument, snapshot: Snapshot, options: CompileOptions) -> Compiled {
        let mut by_name: Vec<usize> = (0..document.features.len()).collect();
        by_name.sort_by(|a, b| document.features[*a].name.cmp(&document.features[*b].name));
        Compiled {
            document,
            snapshot,
            options,
            by_name,
        }
    }

    /// `document` compiled from `previous`: only the flags that differ (added, changed or gone) are compiled
    /// again (`Snapshot::update`), as the edges do; the whole document when its segments changed or an
    /// update cannot be done that way. A write in another environment changes nothing here, and a switch
    /// one flag: the cost follows the change, not the number of flags.
    fn after(previous: &Compiled, document: FeaturesDocument) -> Compiled {
        let options = previous.options.clone();
        if previous.document.segments != document.segments {
            return Compiled::new(document, options);
        }
        let before: HashMap<&str, &Feature> = previous
            .document
            .features
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect();
        let now: HashMap<&str, &Feature> = document
            .features
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect();
        let changed: Vec<&str> = now
            .iter()
            .filter(|(name, f)| before.get(*name) != Some(*f))
            .map(|(name, _)| *name)
            .chain(
                before
                    .keys()
                    .filter(|name| !now.contains_key(*name))
                    .copied(),
            )
            .collect();
        let updated = previous.snapshot.update(
            &changed,
            |name| now.get(name).copied(),
            &document.segments,
            &options,
        );
        match updated {
            Some(snapshot) => Compiled::of(document, snapshot, options),
            None => Compiled::new(document, options),
        }
    }
}

/// What a request evaluates: the compiled document, the context and the flags in scope.
struct Evaluation {
    compiled: Arc<Compiled>,
    context: Context,
    /// Indexes into `document.features` of the flags in scope, by name.
    in_scope: Vec<usize>,
}

impl Evaluation {
    async fn read(
        conn: &mut AnyConnection,
        documents: &CompiledDocuments,
        request: &PlaygroundRequest,
    ) -> Result<Evaluation, ApiError> {
        let projects = projects_of(request.projects.as_ref())?;
        let context = context_of(request)?;
        if crate::store::environments::get(conn, &request.environment)
            .await?
            .is_none()
        {
            return Err(ApiError::invalid_field(
                "environment",
                format!(
                    "environment: environment {} does not exist",
                    request.environment
                ),
            ));
        }
        let compiled = documents.of(conn, &request.environment).await?;
        let in_scope = compiled
            .by_name
            .iter()
            .copied()
            .filter(|&index| projects.includes(&compiled.document.features[index].project))
            .collect();
        Ok(Evaluation {
            compiled,
            context,
            in_scope,
        })
    }

    /// Whether the engine answers the flag on for the context (what SDKs and edges answer).
    fn is_enabled(&self, index: usize) -> bool {
        self.compiled
            .snapshot
            .evaluate(&self.compiled.document.features[index].name, &self.context)
            .is_some_and(|toggle| toggle.enabled)
    }

    /// The flags at `indexes` explained, with their stored variants (one query for them all).
    async fn explain(
        &self,
        conn: &mut AnyConnection,
        environment: &str,
        indexes: &[usize],
    ) -> Result<Vec<PlaygroundFeature>, ApiError> {
        let mut variants_by_flag: HashMap<String, Vec<FlagVariant>> =
            variant_store::list_in_environment(conn, environment)
                .await?
                .into_iter()
                .map(|row| (row.feature_name, row.variants))
                .collect();
        let segment_names: BTreeMap<i64, &str> = self
            .compiled
            .document
            .segments
            .iter()
            .map(|segment| (segment.id, segment.name.as_deref().unwrap_or("")))
            .collect();
        Ok(indexes
            .iter()
            .map(|&index| {
                let feature = &self.compiled.document.features[index];
                PlaygroundFeature {
                    variants: variants_by_flag.remove(&feature.name).unwrap_or_default(),
                    ..self.explain_one(feature, &segment_names)
                }
            })
            .collect())
    }

    fn explain_one(
        &self,
        feature: &vexil_shared::model::Feature,
        segment_names: &BTreeMap<i64, &str>,
    ) -> PlaygroundFeature {
        let document = &self.compiled.document;
        let (is_enabled, variant) = match self
            .compiled
            .snapshot
            .evaluate(&feature.name, &self.context)
        {
            Some(toggle) => (toggle.enabled, serde_json::to_value(toggle.variant)),
            None => (false, Ok(serde_json::Value::Null)),
        };
        let explained = explain::explain_strategies(
            feature,
            &document.segments,
            &self.context,
            &self.compiled.options,
        );
        let data: Vec<PlaygroundStrategy> = explained
            .iter()
            .map(|strategy| {
                let source = &feature.strategies[strategy.index];
                let (status, enabled) = match strategy.outcome {
                    StrategyOutcome::Matched => ("complete", serde_json::json!(true)),
                    StrategyOutcome::NotMatched => ("complete", serde_json::json!(false)),
                    StrategyOutcome::Unknown => ("incomplete", serde_json::json!("unknown")),
                    StrategyOutcome::Unevaluated => ("unevaluated", serde_json::json!(false)),
                };
                PlaygroundStrategy {
                    id: source.id.clone(),
                    name: source.name.clone(),
                    title: source.title.clone(),
                    disabled: source.disabled,
                    parameters: source.parameters.clone(),
                    result: StrategyResult {
                        evaluation_status: status.to_owned(),
                        enabled,
                    },
                    constraints: source
                        .constraints
                        .iter()
                        .zip(&strategy.constraints)
                        .map(|(constraint, &result)| constraint_view(constraint, result))
                        .collect(),
                    segments: strategy
                        .segments
                        .iter()
                        .map(|segment| PlaygroundSegment {
                            id: segment.id,
                            name: segment_names
                                .get(&segment.id)
                                .map_or_else(String::new, |name| (*name).to_owned()),
                            result: segment.matched,
                            constraints: document
                                .segments
                                .iter()
                                .find(|s| s.id == segment.id)
                                .map(|s| {
                                    s.constraints
                                        .iter()
                                        .zip(&segment.constraints)
                                        .map(|(c, &result)| constraint_view(c, result))
                                        .collect()
                                })
                                .unwrap_or_default(),
                        })
                        .collect(),
                }
            })
            .collect();
        let result = if explained.is_empty()
            || explained
                .iter()
                .any(|s| s.outcome == StrategyOutcome::Matched)
        {
            serde_json::json!(true)
        } else if explained
            .iter()
            .any(|s| s.outcome == StrategyOutcome::Unknown)
        {
            serde_json::json!("unknown")
        } else {
            serde_json::json!(false)
        };
        PlaygroundFeature {
            name: feature.name.clone(),
            project_id: feature.project.clone(),
            is_enabled,
            is_enabled_in_current_environment: feature.enabled,
            variant: variant.unwrap_or(serde_json::Value::Null),
            variants: Vec::new(),
            strategies: PlaygroundStrategies { result, data },
        }
    }
}

/// Evaluates the playground request: every flag in scope, by name, explained.
pub async fn evaluate(
    conn: &mut AnyConnection,
    documents: &CompiledDocuments,
    request: PlaygroundRequest,
) -> Result<PlaygroundResponse, ApiError> {
    let evaluation = Evaluation::read(conn, documents, &request).await?;
    let features = evaluation
        .explain(conn, &request.environment, &evaluation.in_scope)
        .await?;
    Ok(PlaygroundResponse {
        input: request,
        features,
    })
}

/// Evaluates the playground request for one page of the answer: every flag in scope is evaluated (for the
/// counts), only page `page` (from 1; past the end, the last) of `page_size` flags by name is explained.
pub async fn evaluate_page(
    conn: &mut AnyConnection,
    documents: &CompiledDocuments,
    request: &PlaygroundRequest,
    page: usize,
    page_size: usize,
) -> Result<PlaygroundPage, ApiError> {
    let evaluation = Evaluation::read(conn, documents, request).await?;
    let total = evaluation.in_scope.len();
    let page_size = page_size.max(1);
    let page = page.clamp(1, total.div_ceil(page_size).max(1));
    let enabled = evaluation
        .in_scope
        .iter()
        .filter(|&&index| evaluation.is_enabled(index))
        .count();
    let shown: Vec<usize> = evaluation
        .in_scope
        .iter()
        .skip((page - 1) * page_size)
        .take(page_size)
        .copied()
        .collect();
    let features = evaluation
        .explain(conn, &request.environment, &shown)
        .await?;
    Ok(PlaygroundPage {
        total,
        enabled,
        page,
        features,
    })
}

/// The advanced playground's evaluation in one environment: every flag in scope, by name, explained for
/// each of `contexts` (each an Unleash context as [`PlaygroundRequest::context`]; `environment` and
/// `projects` are `request`'s, its own context ignored). The document is read once, the flags' variants
/// once; the answer has one list per context, in `contexts`' order.
pub async fn evaluate_contexts(
    conn: &mut AnyConnection,
    documents: &CompiledDocuments,
    request: &PlaygroundRequest,
    contexts: &[serde_json::Value],
) -> Result<Vec<Vec<PlaygroundFeature>>, ApiError> {
    let Some(first) = contexts.first() else {
        return Ok(Vec::new());
    };
    let base = Evaluation::read(
        conn,
        documents,
        &PlaygroundRequest {
            context: first.clone(),
            ..request.clone()
        },
    )
    .await?;
    let variants: HashMap<String, Vec<FlagVariant>> =
        variant_store::list_in_environment(conn, &request.environment)
            .await?
            .into_iter()
            .map(|row| (row.feature_name, row.variants))
            .collect();
    let segment_names: BTreeMap<i64, &str> = base
        .compiled
        .document
        .segments
        .iter()
        .map(|segment| (segment.id, segment.name.as_deref().unwrap_or("")))
        .collect();
    let mut answers = Vec::with_capacity(contexts.len());
    for context in contexts {
        let evaluation = Evaluation {
            compiled: Arc::clone(&base.compiled),
            context: context_of(&PlaygroundRequest {
                context: context.clone(),
                ..request.clone()
            })?,
            in_scope: Vec::new(),
        };
        answers.push(
            base.in_scope
                .iter()
                .map(|&index| {
                    let feature = &base.compiled.document.features[index];
                    PlaygroundFeature {
                        variants: variants.get(&feature.name).cloned().unwrap_or_default(),
                        ..evaluation.explain_one(feature, &segment_names)
                    }
                })
                .collect(),
        );
    }
    Ok(answers)
}
