//! The evaluation engine: a features document compiled into an immutable [`Snapshot`] that evaluates
//! contexts without locks, without mutation, and without allocating for flags that do not match.

mod constraint;
pub mod explain;
mod hash;
mod strategy;
mod variant;

use std::cell::{Cell, OnceCell};
use std::net::IpAddr;
use std::ops::Range;

use chrono::{DateTime, Utc};
use rustc_hash::FxHashMap;
use semver::Version;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use smallvec::SmallVec;

use crate::context::Context;
use crate::model::{FeaturesDocument, Segment};
use constraint::{parse_date, CompiledConstraint, ContextField};
use strategy::CompiledStrategy;
pub use variant::VariantView;
use variant::{CompiledVariant, VariantSet};

/// Why a flag could not be compiled; such a flag is always off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    #[error("unknown constraint operator `{0}`")]
    UnknownOperator(String),
    #[error("`{value}` is not a valid value for {operator}")]
    InvalidValue { operator: String, value: String },
}

/// Settings of compilation that do not come from the document.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The host name `applicationHostname` strategies compare with; the machine's when `None`.
    pub hostname: Option<String>,
}

/// Which projects' flags an evaluation may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projects {
    All,
    Only(Vec<String>),
}

impl Projects {
    /// A token's project list: `*` anywhere (or an empty list) means every project.
    pub fn from_list<S: AsRef<str>>(list: &[S]) -> Self {
        if list.is_empty() || list.iter().any(|p| p.as_ref() == "*") {
            Projects::All
        } else {
            Projects::Only(list.iter().map(|p| p.as_ref().to_owned()).collect())
        }
    }
}

/// An immutable, compiled features document. Share it through `Arc`; every method takes `&self`.
#[derive(Debug)]
pub struct Snapshot {
    /// Sorted by name (code points).
    features: Box<[CompiledFeature]>,
    by_name: FxHashMap<Box<str>, u32>,
    projects: Box<[Box<str>]>,
    properties: PropertySlots,
    /// How many flags are parents of others (see `CompiledFeature::memo_slot`).
    parent_count: usize,
    /// Every flag's strategies and every strategy's constraints, each in one contiguous array in flag order,
    /// so that evaluating all flags walks memory forwards instead of chasing a box per flag and strategy.
    strategies: Box<[CompiledStrategy]>,
    constraints: Box<[CompiledConstraint]>,
    /// The most bytes [`Snapshot::write_toggles_json`] can write (every flag on with its longest variant),
    /// so that a response buffer is allocated once.
    toggles_json_bound: usize,
}

/// The context properties a snapshot reads, each given a slot at compile time, so that an evaluation looks
/// each property up once instead of once per constraint.
#[derive(Debug, Default)]
pub(crate) struct PropertySlots(FxHashMap<Box<str>, u32>);

impl PropertySlots {
    pub(crate) fn slot(&mut self, name: &str) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(name.into()).or_insert(next)
    }
}

#[derive(Debug)]
struct CompiledFeature {
    name: Box<str>,
    /// `{"name":…,"enabled":true,"impressionData":…,"variant":`, serialized once.
    json_head: Box<str>,
    project: u32,
    impression_data: bool,
    /// False when switched off, when every strategy is disabled, or when the flag could not be compiled.
    switched_on: bool,
    /// Its strategies, within the snapshot's one array of strategies.
    strategies: Range<u32>,
    variants: Option<VariantSet>,
    dependencies: Box<[Dependency]>,
    /// For a flag that other flags depend on: where an evaluation keeps its resolution, so that it is worked
    /// out once per context however many children ask.
    memo_slot: Option<u32>,
}

#[derive(Debug)]
struct Dependency {
    /// `None` when the parent is missing or has parents of its own: never satisfied.
    parent: Option<u32>,
    expect_enabled: bool,
    variants: Box<[Box<str>]>,
}

/// How a flag came out for a context.
#[derive(Debug, Clone, Copy)]
enum Resolution {
    Off,
    /// On, decided by the strategy at this index, or by having no strategy at all.
    On(Option<usize>),
}

impl Resolution {
    /// As a memo cell: 0 is "not worked out yet".
    fn encode(self) -> u32 {
        match self {
            Resolution::Off => 1,
            Resolution::On(None) => 2,
            Resolution::On(Some(i)) => 3 + i as u32,
        }
    }

    fn decode(cell: u32) -> Option<Self> {
        match cell {
            0 => None,
            1 => Some(Resolution::Off),
            2 => Some(Resolution::On(None)),
            n => Some(Resolution::On(Some((n - 3) as usize))),
        }
    }
}

/// One flag's result, in the shape of an entry of the frontend API's `toggles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvaluatedToggle<'s> {
    pub name: &'s str,
    pub enabled: bool,
    pub impression_data: bool,
    pub variant: VariantView<'s>,
}

impl Serialize for EvaluatedToggle<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Toggle", 4)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("enabled", &self.enabled)?;
        st.serialize_field("impressionData", &self.impression_data)?;
        st.serialize_field("variant", &self.variant)?;
        st.end()
    }
}

/// The context of one evaluation: every field the snapshot reads, by slot, with its typed readings (number,
/// version, time, IP address) parsed at most once however many constraints need them.
pub(crate) struct Eval<'c> {
    pub(crate) ctx: &'c Context,
    fields: SmallVec<[FieldValue<'c>; 16]>,
    /// Resolutions of parent flags, by memo slot (see [`Resolution::encode`]).
    parents: SmallVec<[Cell<u32>; 64]>,
}

#[derive(Clone, Default)]
struct FieldValue<'c> {
    text: Option<&'c str>,
    number: OnceCell<Option<f64>>,
    version: OnceCell<Option<Version>>,
    time: OnceCell<Option<DateTime<Utc>>>,
    ip: OnceCell<Option<IpAddr>>,
}

impl<'c> Eval<'c> {
    fn new(ctx: &'c Context, slots: &PropertySlots, parent_count: usize) -> Self {
        let mut fields: SmallVec<[FieldValue<'c>; 16]> = smallvec::smallvec![FieldValue::default(); ContextField::FIRST_PROPERTY_SLOT + slots.0.len()];
        for (field, text) in [
            (ContextField::UserId, &ctx.user_id),
            (ContextField::SessionId, &ctx.session_id),
            (ContextField::RemoteAddress, &ctx.remote_address),
            (ContextField::Environment, &ctx.environment),
            (ContextField::AppName, &ctx.app_name),
            (ContextField::CurrentTime, &ctx.current_time),
        ] {
            fields[field.slot()].text = text.as_deref();
        }
        for (name, value) in &ctx.properties {
            if let Some(&slot) = slots.0.get(name.as_str()) {
                fields[ContextField::FIRST_PROPERTY_SLOT + slot as usize].text =
                    Some(value.as_str());
            }
        }
        Eval {
            ctx,
            fields,
            parents: smallvec::smallvec![Cell::new(0); parent_count],
        }
    }

    fn field(&self, field: &ContextField) -> Option<&FieldValue<'c>> {
        self.fields.get(field.slot())
    }

    pub(crate) fn value(&self, field: &ContextField) -> Option<&'c str> {
        self.field(field).and_then(|f| f.text)
    }

    /// The field as a number.
    pub(crate) fn number_of(&self, field: &ContextField) -> Option<f64> {
        let f = self.field(field)?;
        *f.number
            .get_or_init(|| f.text.and_then(|t| t.trim().parse::<f64>().ok()))
    }

    /// The field as a semantic version.
    pub(crate) fn version_of(&self, field: &ContextField) -> Option<&Version> {
        let f = self.field(field)?;
        f.version
            .get_or_init(|| f.text.and_then(|t| Version::parse(t).ok()))
            .as_ref()
    }

    /// The field as a timestamp; `currentTime` defaults to now.
    pub(crate) fn time_of(&self, field: &ContextField) -> Option<DateTime<Utc>> {
        let f = self.field(field)?;
        *f.time.get_or_init(|| match (field, f.text) {
            (_, Some(t)) => parse_date(t),
            (ContextField::CurrentTime, None) => Some(Utc::now()),
            (_, None) => None,
        })
    }

    /// The field as an IP address.
    pub(crate) fn ip_of(&self, field: &ContextField) -> Option<IpAddr> {
        let f = self.field(field)?;
        *f.ip
            .get_or_init(|| f.text.and_then(|t| t.trim().parse::<IpAddr>().ok()))
    }
}

impl Snapshot {
    /// Compiles a document, with `applicationHostname` compared against this machine's host name.
    pub fn compile(doc: &FeaturesDocument) -> Self {
        Self::compile_with(doc, &CompileOptions::default())
    }

    pub fn compile_with(doc: &FeaturesDocument, options: &CompileOptions) -> Self {
        Self::compile_parts(&doc.features, &doc.segments, options)
    }

    /// [`Snapshot::compile_with`] from borrowed flags (in any order; of two with one name the last wins)
    /// and segments, so that a caller holding them elsewhere need not assemble a document.
    pub fn compile_parts<'d>(
        features: impl IntoIterator<Item = &'d crate::model::Feature>,
        segments: impl IntoIterator<Item = &'d Segment>,
        options: &CompileOptions,
    ) -> Self {
        let hostname = options
            .hostname
            .clone()
            .unwrap_or_else(|| gethostname::gethostname().to_string_lossy().into_owned());
        let segments: FxHashMap<i64, &Segment> = segments.into_iter().map(|s| (s.id, s)).collect();
        let mut properties = PropertySlots::default();

        // One entry per name (the last wins), in code-point order.
        let features = features.into_iter();
        let mut sources: Vec<&crate::model::Feature> = Vec::with_capacity(features.size_hint().0);
        {
            let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
            for f in features {
                match seen.get(f.name.as_str()) {
                    Some(&i) => sources[i] = f,
                    None => {
                        seen.insert(&f.name, sources.len());
                        sources.push(f);
                    }
                }
            }
        }
        sources.sort_by(|a, b| a.name.cmp(&b.name));

        let by_name: FxHashMap<Box<str>, u32> = sources
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.as_str().into(), i as u32))
            .collect();

        // Flags that others depend on (and that have no parents themselves) get a memo slot each.
        let mut memo_slots: FxHashMap<u32, u32> = FxHashMap::default();
        for f in &sources {
            for d in &f.dependencies {
                if let Some(&p) = by_name.get(d.feature.as_str()) {
                    if sources[p as usize].dependencies.is_empty() {
                        let next = memo_slots.len() as u32;
                        memo_slots.entry(p).or_insert(next);
                    }
                }
            }
        }

        let mut projects: Vec<Box<str>> = Vec::new();
        let mut project_ids: FxHashMap<&str, u32> = FxHashMap::default();

        let mut all_strategies: Vec<CompiledStrategy> = Vec::new();
        let mut all_constraints: Vec<CompiledConstraint> = Vec::new();
        let mut features = Vec::with_capacity(sources.len());
        for (index, f) in sources.iter().enumerate() {
            {
                let project = *project_ids.entry(&f.project).or_insert_with(|| {
                    projects.push(f.project.as_str().into());
                    (projects.len() - 1) as u32
                });
                let mut active: Vec<_> = f.strategies.iter().filter(|s| !s.disabled).collect();
                active.sort_by_key(|s| s.sort_order.unwrap_or(0));
                let all_disabled = active.is_empty() && !f.strategies.is_empty();
                let constraints_mark = all_constraints.len();
                let compiled = active
                    .iter()
                    .map(|s| {
                        CompiledStrategy::compile(
                            s,
                            &f.name,
                            &segments,
                            &hostname,
                            &mut properties,
                            &mut all_constraints,
                        )
                    })
                    .collect::<Result<Vec<_>, _>>();
                let start = all_strategies.len() as u32;
                let compiled_ok = match compiled {
                    Ok(s) => {
                        all_strategies.extend(s);
                        true
                    }
                    Err(_) => {
                        all_constraints.truncate(constraints_mark);
                        false
                    }
                };
                let strategies = start..all_strategies.len() as u32;
                let stickiness = f.variants.first().and_then(|v| v.stickiness.as_deref());
                let dependencies = f
                    .dependencies
                    .iter()
                    .map(|d| Dependency {
                        parent: by_name.get(d.feature.as_str()).copied().filter(|&p| {
                            // A parent must have no parents of its own.
                            sources[p as usize].dependencies.is_empty()
                        }),
                        expect_enabled: d.enabled,
                        variants: d.variants.iter().map(|v| v.as_str().into()).collect(),
                    })
                    .collect();
                features.push(CompiledFeature {
                    name: f.name.as_str().into(),
                    json_head: toggle_json_head(&f.name, f.impression_data),
                    project,
                    impression_data: f.impression_data,
                    switched_on: f.enabled && compiled_ok && !all_disabled,
                    strategies,
                    variants: VariantSet::compile(
                        &f.variants,
                        strategy::Stickiness::parse(stickiness, &mut properties),
                        &f.name,
                        &mut properties,
                    ),
                    dependencies,
                    memo_slot: memo_slots.get(&(index as u32)).copied(),
                });
            }
        }

        let toggles_json_bound = 2 + features
            .iter()
            .map(|f: &CompiledFeature| {
                let strategy_variants = all_strategies
                    [f.strategies.start as usize..f.strategies.end as usize]
                    .iter()
                    .filter_map(|s| s.variants.as_deref())
                    .chain(f.variants.as_ref())
                    .map(VariantSet::longest_json)
                    .max()
                    .unwrap_or(0);
                let variant =
                    strategy_variants.max(variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON.len());
                f.json_head.len() + variant + 2
            })
            .sum::<usize>();
        Snapshot {
            features: features.into_boxed_slice(),
            by_name,
            projects: projects.into_boxed_slice(),
            properties,
            parent_count: memo_slots.len(),
            strategies: all_strategies.into_boxed_slice(),
            constraints: all_constraints.into_boxed_slice(),
            toggles_json_bound,
        }
    }

    /// At least as many bytes as [`Snapshot::write_toggles_json`] writes for any context.
    pub fn toggles_json_bound(&self) -> usize {
        self.toggles_json_bound
    }

    /// Number of flags.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The name of the flag at `index` (flags are indexed `0..len()` in name order).
    pub fn flag_name(&self, index: usize) -> &str {
        &self.features[index].name
    }

    /// The index of a flag by name.
    pub fn flag_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&i| i as usize)
    }

    /// The index, within [`Snapshot::project_names`], of the project of the flag at `index`.
    pub fn flag_project(&self, index: usize) -> usize {
        self.features[index].project as usize
    }

    /// Every project that has a flag here, indexed.
    pub fn project_names(&self) -> &[Box<str>] {
        &self.projects
    }

    /// Whether the named flag is enabled for the context; an unknown flag is not.
    pub fn is_enabled(&self, name: &str, ctx: &Context) -> bool {
        self.evaluate(name, ctx).is_some_and(|t| t.enabled)
    }

    /// The variant the context gets for the named flag; `disabled` (flag not enabled) for an unknown flag.
    pub fn variant(&self, name: &str, ctx: &Context) -> VariantView<'_> {
        self.evaluate(name, ctx)
            .map_or(VariantView::disabled(false), |t| t.variant)
    }

    /// One flag, enabled or not; `None` for an unknown flag.
    pub fn evaluate(&self, name: &str, ctx: &Context) -> Option<EvaluatedToggle<'_>> {
        let &i = self.by_name.get(name)?;
        let e = Eval::new(ctx, &self.properties, self.parent_count);
        Some(self.toggle(&self.features[i as usize], &e))
    }

    /// The enabled flags of the projects in scope, sorted by name, in the shape of the frontend API's
    /// `toggles`.
    pub fn evaluate_all(&self, ctx: &Context, projects: &Projects) -> Vec<EvaluatedToggle<'_>> {
        let mut out = Vec::new();
        self.evaluate_all_into(ctx, projects, &mut out);
        out
    }

    /// [`Snapshot::evaluate_all`] into a caller's buffer (cleared first), so that a loop can reuse it.
    pub fn evaluate_all_into<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<EvaluatedToggle<'s>>,
    ) {
        out.clear();
        self.for_each_enabled(ctx, projects, |_, f, variant| {
            out.push(EvaluatedToggle {
                name: &f.name,
                enabled: true,
                impression_data: f.impression_data,
                variant: VariantView::of(variant),
            })
        });
    }

    /// Writes the JSON array of [`Snapshot::evaluate_all`] (`[{"name":…,"enabled":true,…}, …]`) into `out`,
    /// appending. Every piece was serialized at compile time: this only copies bytes.
    pub fn write_toggles_json(&self, ctx: &Context, projects: &Projects, out: &mut Vec<u8>) {
        self.write_toggles_json_counted(ctx, projects, out, |_| {});
    }

    /// [`Snapshot::write_toggles_json`], calling `enabled` with the index ([`Snapshot::flag_name`]) of each
    /// flag it writes, so that a caller can count evaluations without a second pass.
    pub fn write_toggles_json_counted(
        &self,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<u8>,
        mut enabled: impl FnMut(usize),
    ) {
        out.push(b'[');
        let mut first = true;
        self.for_each_enabled(ctx, projects, |index, f, variant| {
            enabled(index);
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(f.json_head.as_bytes());
            out.extend_from_slice(match variant {
                Some(v) => v.json.as_bytes(),
                None => variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON.as_bytes(),
            });
            out.push(b'}');
        });
        out.push(b']');
    }

    /// Calls `found` with each enabled flag of the projects in scope, in name order, and its variant.
    fn for_each_enabled<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        mut found: impl FnMut(usize, &'s CompiledFeature, Option<&'s CompiledVariant>),
    ) {
        let e = Eval::new(ctx, &self.properties, self.parent_count);
        let mask: Option<Vec<bool>> = match projects {
            Projects::All => None,
            Projects::Only(list) => Some(
                self.projects
                    .iter()
                    .map(|p| list.iter().any(|x| **p == **x))
                    .collect(),
            ),
        };
        for (index, f) in self.features.iter().enumerate() {
            if !f.switched_on {
                continue;
            }
            if let Some(mask) = &mask {
                if !mask[f.project as usize] {
                    continue;
                }
            }
            if let Resolution::On(by) = self.resolved(f, &e) {
                found(index, f, self.variant_of(f, by, &e));
            }
        }
    }

    fn toggle<'s>(&'s self, f: &'s CompiledFeature, e: &Eval<'_>) -> EvaluatedToggle<'s> {
        let (enabled, variant) = match self.resolved(f, e) {
            Resolution::Off => (false, VariantView::disabled(false)),
            Resolution::On(by) => (true, VariantView::of(self.variant_of(f, by, e))),
        };
        EvaluatedToggle {
            name: &f.name,
            enabled,
            impression_data: f.impression_data,
            variant,
        }
    }

    /// [`Snapshot::resolve`], remembered for the rest of the evaluation when other flags depend on `f`.
    fn resolved(&self, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        let Some(cell) = f.memo_slot.and_then(|slot| e.parents.get(slot as usize)) else {
            return self.resolve(f, e);
        };
        if let Some(known) = Resolution::decode(cell.get()) {
            return known;
        }
        let resolution = self.resolve(f, e);
        cell.set(resolution.encode());
        resolution
    }

    fn resolve(&self, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        if !f.switched_on {
            return Resolution::Off;
        }
        for d in f.dependencies.iter() {
            if !self.dependency_met(d, e) {
                return Resolution::Off;
            }
        }
        let strategies = self.strategies_of(f);
        if strategies.is_empty() {
            return Resolution::On(None);
        }
        match strategies
            .iter()
            .position(|s| s.is_on(e, &self.constraints))
        {
            Some(i) => Resolution::On(Some(i)),
            None => Resolution::Off,
        }
    }

    fn strategies_of(&self, f: &CompiledFeature) -> &[CompiledStrategy] {
        &self.strategies[f.strategies.start as usize..f.strategies.end as usize]
    }

    fn dependency_met(&self, d: &Dependency, e: &Eval<'_>) -> bool {
        let Some(p) = d.parent else {
            return false;
        };
        let parent = &self.features[p as usize];
        match self.resolved(parent, e) {
            Resolution::Off => !d.expect_enabled,
            Resolution::On(by) => {
                d.expect_enabled
                    && (d.variants.is_empty() || {
                        let chosen = VariantView::of(self.variant_of(parent, by, e));
                        d.variants.iter().any(|v| **v == *chosen.name)
                    })
            }
        }
    }

    /// The variant of an enabled flag: the deciding strategy's variants if it has any, else the flag's;
    /// `None` when there is none to give.
    fn variant_of<'s>(
        &'s self,
        f: &'s CompiledFeature,
        by: Option<usize>,
        e: &Eval<'_>,
    ) -> Option<&'s CompiledVariant> {
        by.and_then(|i| self.strategies_of(f)[i].variants.as_deref())
            .or(f.variants.as_ref())
            .and_then(|s| s.select(e))
    }
}

/// The start of a frontend toggle's JSON, up to its variant.
fn toggle_json_head(name: &str, impression_data: bool) -> Box<str> {
    let name = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned());
    format!(r#"{{"name":{name},"enabled":true,"impressionData":{impression_data},"variant":"#)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(json: &str) -> Snapshot {
        Snapshot::compile_with(
            &FeaturesDocument::from_json(json).unwrap(),
            &CompileOptions {
                hostname: Some("web-1".into()),
            },
        )
    }

    fn ctx(json: &str) -> Context {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn snapshot_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Snapshot>();
    }

    #[test]
    fn evaluate_all_filters_projects_sorts_and_drops_disabled() {
        let s = snapshot(
            r#"{"features":[
                {"name":"b","project":"p1","enabled":true,"strategies":[{"name":"default"}]},
                {"name":"a","project":"p2","enabled":true,"impressionData":true,"strategies":[{"name":"default"}]},
                {"name":"c","project":"p1","enabled":false,"strategies":[{"name":"default"}]},
                {"name":"d","project":"p1","enabled":true,"strategies":[{"name":"default","disabled":true}]}
            ]}"#,
        );
        let all: Vec<_> = s
            .evaluate_all(&Context::default(), &Projects::All)
            .iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(all, ["a", "b"]);
        let p1 = s.evaluate_all(&Context::default(), &Projects::from_list(&["p1"]));
        assert_eq!(p1.len(), 1);
        assert_eq!(p1[0].name, "b");
        let json =
            serde_json::to_value(s.evaluate_all(&Context::default(), &Projects::All)).unwrap();
        assert_eq!(
            json[0],
            serde_json::json!({"name":"a","enabled":true,"impressionData":true,
                "variant":{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}})
        );
    }

    #[test]
    fn unparseable_constraint_values_turn_the_flag_off() {
        for (op, value) in [
            ("NUM_GT", "ten"),
            ("DATE_AFTER", "yesterday"),
            ("SEMVER_EQ", "v1.2.3"),
        ] {
            let s = snapshot(&format!(
                r#"{{"features":[{{"name":"x","enabled":true,"strategies":[
                    {{"name":"default","constraints":[{{"contextName":"a","operator":"{op}","value":"{value}","inverted":true}}]}},
                    {{"name":"default"}}]}}]}}"#
            ));
            assert!(!s.is_enabled("x", &Context::default()), "{op} {value}");
        }
    }

    #[test]
    fn an_invalid_regex_matches_nothing() {
        let s = snapshot(
            r#"{"features":[
                {"name":"plain","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"a","operator":"REGEX","value":"(["}]}]},
                {"name":"inverted","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"a","operator":"REGEX","value":"([","inverted":true}]}]}
            ]}"#,
        );
        let ctx = ctx(r#"{"properties":{"a":"(["}}"#);
        assert!(!s.is_enabled("plain", &ctx));
        assert!(s.is_enabled("inverted", &ctx));
    }

    #[test]
    fn written_json_equals_the_serialized_toggles() {
        let s = snapshot(
            r#"{"features":[
                {"name":"quote\"d ✓","enabled":true,"impressionData":true,"strategies":[{"name":"default"}],
                 "variants":[{"name":"v\\1","weight":1000,"payload":{"type":"json","value":"{\"a\":1}"}}]},
                {"name":"plain","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":"u1"}}]},
                {"name":"strategy-variant","enabled":true,"strategies":[{"name":"default","variants":[{"name":"sv","weight":1}]}]}
            ]}"#,
        );
        for c in [r#"{"userId":"u1"}"#, r#"{"userId":"u2"}"#] {
            let ctx = ctx(c);
            let mut written = Vec::new();
            s.write_toggles_json(&ctx, &Projects::All, &mut written);
            assert!(written.len() <= s.toggles_json_bound(), "the bound holds");
            let expected = serde_json::to_vec(&s.evaluate_all(&ctx, &Projects::All)).unwrap();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
        let mut empty = Vec::new();
        s.write_toggles_json(
            &Context::default(),
            &Projects::from_list(&["none"]),
            &mut empty,
        );
        assert_eq!(empty, b"[]");
    }

    #[test]
    fn segments_are_checked() {
        let s = snapshot(
            r#"{"features":[
                {"name":"a","enabled":true,"strategies":[{"name":"default","segments":[1]}]},
                {"name":"b","enabled":true,"strategies":[{"name":"default","segments":[1,2]}]},
                {"name":"broken","enabled":true,"strategies":[{"name":"default","segments":[3]},{"name":"default"}]},
                {"name":"missing","enabled":true,"strategies":[{"name":"default","segments":[9]}]}
            ],"segments":[
                {"id":1,"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]},
                {"id":2,"constraints":[{"contextName":"userId","operator":"IN","values":["u1"]}]},
                {"id":3,"constraints":[{"contextName":"plan","operator":"BOGUS","values":["pro"]}]}
            ]}"#,
        );
        let on = |c: &str| -> Vec<&str> {
            let ctx = ctx(c);
            s.evaluate_all(&ctx, &Projects::All)
                .iter()
                .map(|t| t.name)
                .collect()
        };
        assert_eq!(
            on(r#"{"userId":"u1","properties":{"plan":"pro"}}"#),
            ["a", "b"]
        );
        assert_eq!(on(r#"{"userId":"u2","properties":{"plan":"pro"}}"#), ["a"]);
        assert!(on(r#"{"userId":"u1","properties":{"plan":"free"}}"#).is_empty());
    }

    #[test]
    fn unknown_operator_turns_the_flag_off() {
        let s = snapshot(
            r#"{"features":[{"name":"x","enabled":true,"strategies":[
                {"name":"default","constraints":[{"contextName":"a","operator":"BOGUS","value":"1"}]}]}]}"#,
        );
        assert!(!s.is_enabled("x", &Context::default()));
    }

    #[test]
    fn application_hostname_uses_the_configured_host() {
        let s = snapshot(
            r#"{"features":[
                {"name":"on","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"db-1, WEB-1"}}]},
                {"name":"off","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"db-1"}}]}
            ]}"#,
        );
        assert!(s.is_enabled("on", &Context::default()));
        assert!(!s.is_enabled("off", &Context::default()));
    }

    #[test]
    fn remote_address_matches_ipv6_networks_and_literals() {
        let s = snapshot(
            r#"{"features":[{"name":"x","enabled":true,"strategies":[{"name":"remoteAddress","parameters":{"IPs":"2001:db8::/32, 10.0.0.1, not-an-ip"}}]}]}"#,
        );
        assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"2001:db8::42"}"#)));
        assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"10.0.0.1"}"#)));
        assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"not-an-ip"}"#)));
        assert!(!s.is_enabled("x", &ctx(r#"{"remoteAddress":"2001:db9::1"}"#)));
        assert!(!s.is_enabled("x", &Context::default()));
    }

    #[test]
    fn strategies_follow_sort_order() {
        let s = snapshot(
            r#"{"features":[{"name":"x","enabled":true,"strategies":[
                {"name":"default","sortOrder":2,"variants":[{"name":"second","weight":1000}]},
                {"name":"default","sortOrder":1,"variants":[{"name":"first","weight":1000}]}]}]}"#,
        );
        assert_eq!(s.variant("x", &Context::default()).name, "first");
    }
}
