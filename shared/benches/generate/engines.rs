//! The two engines fed the same document, what a document holds, and the check that Vexil and yggdrasil agree
//! wherever the result does not depend on chance.

use std::collections::{BTreeMap, HashMap};

use unleash_yggdrasil::{ClientFeatures, EngineState, UpdateMessage};
use vexil_shared::model::{Feature, FeatureStrategy, Variant};
use vexil_shared::{CompileOptions, Context, FeaturesDocument, Projects, Snapshot};

use super::{to_yggdrasil_context, BENCH_HOSTNAME};

// ---------------------------------------------------------------------------------------------------------
// The two engines.

pub fn vexil_snapshot(doc: &FeaturesDocument) -> Snapshot {
    Snapshot::compile_with(
        doc,
        &CompileOptions {
            hostname: Some(BENCH_HOSTNAME.into()),
        },
    )
}

/// yggdrasil fed the same document, through JSON as a client would get it.
pub fn yggdrasil_engine(doc: &FeaturesDocument) -> EngineState {
    let json = serde_json::to_string(doc).expect("serialize the generated document");
    let features: ClientFeatures =
        serde_json::from_str(&json).expect("yggdrasil reads the generated document");
    let engine = EngineState::default();
    if let Some(warnings) = engine.take_state(UpdateMessage::FullResponse(features)) {
        panic!("yggdrasil could not compile part of the generated document: {warnings:?}");
    }
    engine
}

/// What a document holds, for the bench's log.
pub fn describe(doc: &FeaturesDocument) -> String {
    let mut strategies: BTreeMap<&str, usize> = BTreeMap::new();
    let mut operators: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut segment_refs, mut strategy_variants) = (0, 0);
    for f in &doc.features {
        for s in &f.strategies {
            *strategies.entry(&s.name).or_default() += 1;
            for c in &s.constraints {
                *operators.entry(&c.operator).or_default() += 1;
            }
            segment_refs += s.segments.len();
            strategy_variants += usize::from(!s.variants.is_empty());
        }
    }
    for s in &doc.segments {
        for c in &s.constraints {
            *operators.entry(&c.operator).or_default() += 1;
        }
    }
    let count = |p: fn(&Feature) -> bool| doc.features.iter().filter(|f| p(f)).count();
    format!(
        "{} flags ({} switched off, {} with flag variants, {} with dependencies), {} segments, {} segment references, \
         {} strategies with variants\n  strategies: {strategies:?}\n  constraint operators: {operators:?}",
        doc.features.len(),
        count(|f| !f.enabled),
        count(|f| !f.variants.is_empty()),
        count(|f| !f.dependencies.is_empty()),
        doc.segments.len(),
        segment_refs,
        strategy_variants,
    )
}

// ---------------------------------------------------------------------------------------------------------
// Which results do not depend on chance.

fn field<'c>(ctx: &'c Context, name: &str) -> Option<&'c str> {
    match name {
        "userId" => ctx.user_id.as_deref(),
        "sessionId" => ctx.session_id.as_deref(),
        "remoteAddress" => ctx.remote_address.as_deref(),
        "environment" => ctx.environment.as_deref(),
        "appName" => ctx.app_name.as_deref(),
        other => ctx.properties.get(other).map(String::as_str),
    }
}

fn param<'a>(s: &'a FeatureStrategy, name: &str) -> Option<&'a str> {
    s.parameters.get(name).map(String::as_str)
}

/// Whether a strategy's rule may draw a random number for this context: random stickiness,
/// `gradualRolloutRandom`, or default stickiness without userId and sessionId, at a rollout strictly between
/// 0 and 100.
fn strategy_is_random(s: &FeatureStrategy, ctx: &Context) -> bool {
    let pct = |k| param(s, k).and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    match s.name.as_str() {
        "gradualRolloutRandom" => (1..100).contains(&pct("percentage")),
        "flexibleRollout" => {
            (1..100).contains(&pct("rollout"))
                && match param(s, "stickiness") {
                    None | Some("default") => ctx.user_id.is_none() && ctx.session_id.is_none(),
                    Some("random") => true,
                    Some(_) => false,
                }
        }
        _ => false,
    }
}

/// Whether a variant pick is decided by the context alone: a matching override, or a stickiness value the
/// context has (default stickiness: userId or sessionId; both engines draw a random bucket otherwise).
fn variants_are_fixed(variants: &[Variant], stickiness: Option<&str>, ctx: &Context) -> bool {
    if variants.is_empty() {
        return true;
    }
    let overridden = variants.iter().any(|v| {
        v.overrides
            .iter()
            .any(|o| field(ctx, &o.context_name).is_some_and(|x| o.values.iter().any(|y| y == x)))
    });
    overridden
        || match stickiness {
            None | Some("default") => ctx.user_id.is_some() || ctx.session_id.is_some(),
            Some("random") => false,
            Some(name) => field(ctx, name).is_some(),
        }
}

struct Determinism<'d> {
    by_name: HashMap<&'d str, &'d Feature>,
}

impl<'d> Determinism<'d> {
    fn new(doc: &'d FeaturesDocument) -> Self {
        Determinism {
            by_name: doc.features.iter().map(|f| (f.name.as_str(), f)).collect(),
        }
    }

    /// Whether the flag's on/off result is decided by the context alone.
    fn enabled_is_fixed(&self, f: &Feature, ctx: &Context) -> bool {
        !f.strategies.iter().any(|s| strategy_is_random(s, ctx))
            && f.dependencies
                .iter()
                .all(|d| match self.by_name.get(d.feature.as_str()) {
                    None => true,
                    Some(p) => {
                        self.enabled_is_fixed(p, ctx)
                            && (d.variants.is_empty() || self.variant_is_fixed(p, ctx))
                    }
                })
    }

    /// Whether the variant of the flag, when it is on, is decided by the context alone.
    fn variant_is_fixed(&self, f: &Feature, ctx: &Context) -> bool {
        let flag_stickiness = f.variants.first().and_then(|v| v.stickiness.as_deref());
        variants_are_fixed(&f.variants, flag_stickiness, ctx)
            && f.strategies
                .iter()
                .all(|s| variants_are_fixed(&s.variants, param(s, "stickiness"), ctx))
    }
}

/// What the agreement check saw.
#[derive(Debug, Default)]
pub struct Agreement {
    pub contexts: usize,
    /// (flag, context) pairs whose on/off was compared.
    pub compared: usize,
    /// Pairs left out because a rollout or a variant of theirs is drawn at random.
    pub random: usize,
    /// Pairs on in both engines.
    pub on: usize,
    /// Variants compared (both on, pick not random).
    pub variants_compared: usize,
    /// Variants compared that were real ones (not `disabled`).
    pub real_variants: usize,
}

/// Panics, with the flags and contexts concerned, unless Vexil and yggdrasil give the same enabled flags, and
/// the same variant names and payloads, for every flag whose result does not depend on chance.
pub fn assert_engines_agree(
    doc: &FeaturesDocument,
    snapshot: &Snapshot,
    engine: &EngineState,
    contexts: &[Context],
) -> Agreement {
    let det = Determinism::new(doc);
    let mut stats = Agreement::default();
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for ctx in contexts {
        stats.contexts += 1;
        snapshot.evaluate_all_into(ctx, &Projects::All, &mut out);
        let vexil: HashMap<&str, _> = out.iter().map(|t| (t.name, t.variant)).collect();
        let ygg = engine
            .resolve_all(&to_yggdrasil_context(ctx), &None)
            .expect("yggdrasil has a state");
        for f in &doc.features {
            if !det.enabled_is_fixed(f, ctx) {
                stats.random += 1;
                continue;
            }
            stats.compared += 1;
            let y = ygg.get(&f.name).expect("yggdrasil knows every flag");
            let v = vexil.get(f.name.as_str());
            if v.is_some() != y.enabled {
                problems.push(format!(
                    "flag enabled: vexil={} yggdrasil={}\n  flag: {}\n  context: {}",
                    v.is_some(),
                    y.enabled,
                    flag_json(doc, f),
                    serde_json::to_string(ctx).unwrap_or_default()
                ));
                continue;
            }
            let Some(v) = v else { continue };
            stats.on += 1;
            if !det.variant_is_fixed(f, ctx) {
                continue;
            }
            stats.variants_compared += 1;
            stats.real_variants += usize::from(v.enabled);
            let v_payload = v
                .payload
                .map(|p| (p.payload_type.as_str(), p.value.as_str()));
            let y_payload = y
                .variant
                .payload
                .as_ref()
                .map(|p| (p.payload_type.as_str(), p.value.as_str()));
            if v.name != y.variant.name || v_payload != y_payload {
                problems.push(format!(
                    "variant: vexil={} {v_payload:?} yggdrasil={} {y_payload:?}\n  flag: {}\n  context: {}",
                    v.name,
                    y.variant.name,
                    flag_json(doc, f),
                    serde_json::to_string(ctx).unwrap_or_default()
                ));
            }
        }
    }
    if !problems.is_empty() {
        let shown: Vec<&String> = problems.iter().take(10).collect();
        panic!(
            "Vexil and yggdrasil disagree on {} (flag, context) pairs; the first ones:\n{}",
            problems.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
    stats
}

/// The flag's JSON, with its parents' and its segments' JSON when it has any.
fn flag_json(doc: &FeaturesDocument, f: &Feature) -> String {
    let mut text = serde_json::to_string(f).unwrap_or_default();
    for d in &f.dependencies {
        if let Some(p) = doc.features.iter().find(|p| p.name == d.feature) {
            text.push_str(&format!(
                "\n  parent: {}",
                serde_json::to_string(p).unwrap_or_default()
            ));
        }
    }
    for id in f.strategies.iter().flat_map(|s| s.segments.iter()) {
        if let Some(s) = doc.segments.iter().find(|s| s.id == *id) {
            text.push_str(&format!(
                "\n  segment: {}",
                serde_json::to_string(s).unwrap_or_default()
            ));
        }
    }
    text
}
