//! The evaluation engine: a features document compiled into an immutable [`Snapshot`] that evaluates
//! contexts without locks, without mutation, and without allocating for flags that do not match.

mod constraint;
mod eval;
pub mod explain;
mod field;
mod hash;
mod slots;
mod strategy;
mod variant;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::context::Context;
use crate::model::{Feature, FeaturesDocument, Segment};
pub use constraint::CompileError;
use constraint::CompiledConstraint;
use eval::{with_eval, Eval};
use hash::text_hash;
use slots::EvalSlots;
use strategy::CompiledStrategy;
pub use variant::VariantView;
use variant::{CompiledVariant, VariantSet};

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
    /// The flags in name order (code points), in chunks of about [`CHUNK`] flags. A chunk keeps its flags'
    /// strategies and constraints in contiguous arrays, so that evaluating all flags walks memory forwards
    /// instead of chasing a box per flag and strategy; a snapshot made by [`Snapshot::update`] shares the
    /// chunks the update did not touch.
    chunks: Box<[Arc<Chunk>]>,
    /// The index of each chunk's first flag, then the number of flags.
    starts: Box<[u32]>,
    by_name: Arc<FxHashMap<Box<str>, u32>>,
    projects: Box<[Box<str>]>,
    properties: EvalSlots,
    /// How many flags are parents of others (see `CompiledFeature::memo_slot`).
    parent_count: usize,
    /// Whether any flag depends on another; [`Snapshot::update`] then declines.
    has_dependencies: bool,
    /// The most bytes [`Snapshot::write_toggles_json`] can write (every flag on with its longest variant),
    /// so that a response buffer is allocated once.
    toggles_json_bound: usize,
}

/// How many more constraint slots than twice those in use [`Snapshot::update`] lets a snapshot have before
/// it declines (see there).
const STALE_SLOTS_ALLOWED: usize = 256;

/// How many flags a chunk gets when a snapshot is compiled; an update splits a chunk that grew past twice
/// as many. Small enough that recompiling one is cheap next to compiling thousands of flags, large enough
/// that moving from chunk to chunk costs nothing measurable in an evaluation.
const CHUNK: usize = 64;

/// A run of consecutive flags (by name) with their strategies and constraints.
#[derive(Debug)]
struct Chunk {
    features: Box<[CompiledFeature]>,
    strategies: Box<[CompiledStrategy]>,
    constraints: Box<[CompiledConstraint]>,
    /// Each constraint's memo slot, beside the constraints: a strategy checks its constraints' memos here
    /// without reading a constraint whose result is already known.
    constraint_slots: Box<[u32]>,
    /// Its flags' share of `Snapshot::toggles_json_bound`.
    toggles_json_bound: usize,
    /// How many constraint slots its constraints and variant overrides use (some may share one).
    slot_uses: usize,
}

impl Chunk {
    fn strategies_of(&self, f: &CompiledFeature) -> &[CompiledStrategy] {
        &self.strategies[f.strategies.start as usize..f.strategies.end as usize]
    }

    /// What `f`'s strategies make of the context: on by the first that is on, or by having none; off
    /// otherwise. Its switch and dependencies are the caller's.
    #[inline(always)]
    fn strategies_decide(&self, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        let strategies = self.strategies_of(f);
        if strategies.is_empty() {
            return Resolution::On(None);
        }
        match strategies
            .iter()
            .position(|s| s.is_on(e, &self.constraints, &self.constraint_slots))
        {
            Some(i) => Resolution::On(Some(i)),
            None => Resolution::Off,
        }
    }

    /// The variant of an enabled flag of this chunk: the deciding strategy's variants if it has any, else
    /// the flag's; `None` when there is none to give. Most flags have no variants anywhere: they are
    /// answered inline.
    #[inline(always)]
    fn variant_of<'s>(
        &'s self,
        f: &'s CompiledFeature,
        by: Option<usize>,
        e: &Eval<'_>,
    ) -> Option<&'s CompiledVariant> {
        if f.has_variants {
            self.select_variant(f, by, e)
        } else {
            None
        }
    }

    fn select_variant<'s>(
        &'s self,
        f: &'s CompiledFeature,
        by: Option<usize>,
        e: &Eval<'_>,
    ) -> Option<&'s CompiledVariant> {
        by.and_then(|i| self.strategies_of(f)[i].variants.as_deref())
            .or(f.variants.as_deref())
            .and_then(|s| s.select(e))
    }
}

#[derive(Debug)]
struct CompiledFeature {
    name: Box<str>,
    /// `{"name":…,"enabled":true,"impressionData":…,"variant":`, serialized once.
    json_head: Box<str>,
    /// [`text_hash`] of `json_head`.
    json_head_hash: u64,
    project: u32,
    impression_data: bool,
    /// False when switched off, when every strategy is disabled, or when the flag could not be compiled.
    switched_on: bool,
    /// Its strategies, within its chunk's array of strategies.
    strategies: Range<u32>,
    /// Boxed, like a strategy's: needed only once the flag is on, so kept out of the walk over flags.
    variants: Option<Box<VariantSet>>,
    /// Whether the flag or any of its strategies has variants.
    has_variants: bool,
    dependencies: Box<[Dependency]>,
    /// For a flag that other flags depend on: where an evaluation keeps its resolution, so that it is worked
    /// out once per context however many children ask.
    memo_slot: Option<u32>,
}

#[derive(Debug)]
struct Dependency {
    /// The parent's index; `None` when the parent is missing or has parents of its own: never satisfied.
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

/// What compiling flags into chunks needs besides the flags: the segments, the host name, and the property
/// slots and projects met so far (an update starts from the previous snapshot's, so that the chunks it
/// keeps stay valid).
struct Compiler<'d> {
    hostname: String,
    segments: FxHashMap<i64, &'d Segment>,
    properties: EvalSlots,
    projects: Vec<Box<str>>,
    project_ids: FxHashMap<Box<str>, u32>,
}

/// How flags find their parents, in a compilation of the whole document.
struct Links<'a, 'd> {
    /// Every flag, in name order.
    sources: &'a [&'d Feature],
    by_name: &'a FxHashMap<Box<str>, u32>,
    memo_slots: &'a FxHashMap<u32, u32>,
}

impl<'d> Compiler<'d> {
    fn new(
        options: &CompileOptions,
        segments: impl IntoIterator<Item = &'d Segment>,
        properties: EvalSlots,
        projects: Vec<Box<str>>,
    ) -> Self {
        let hostname = options
            .hostname
            .clone()
            .unwrap_or_else(|| gethostname::gethostname().to_string_lossy().into_owned());
        let project_ids = projects
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect();
        Compiler {
            hostname,
            segments: segments.into_iter().map(|s| (s.id, s)).collect(),
            properties,
            projects,
            project_ids,
        }
    }

    /// One chunk of consecutive flags (in name order), the first of which has index `first`.
    fn chunk(&mut self, flags: &[&Feature], first: usize, links: Option<&Links<'_, '_>>) -> Chunk {
        let mut strategies: Vec<CompiledStrategy> = Vec::new();
        let mut constraints: Vec<CompiledConstraint> = Vec::new();
        let mut features = Vec::with_capacity(flags.len());
        for (offset, f) in flags.iter().enumerate() {
            let index = (first + offset) as u32;
            let project = match self.project_ids.get(f.project.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.projects.len() as u32;
                    self.projects.push(f.project.as_str().into());
                    self.project_ids.insert(f.project.as_str().into(), id);
                    id
                }
            };
            let mut active: Vec<_> = f.strategies.iter().filter(|s| !s.disabled).collect();
            active.sort_by_key(|s| s.sort_order.unwrap_or(0));
            let all_disabled = active.is_empty() && !f.strategies.is_empty();
            let constraints_mark = constraints.len();
            let compiled = active
                .iter()
                .map(|s| {
                    CompiledStrategy::compile(
                        s,
                        &f.name,
                        &self.segments,
                        &self.hostname,
                        &mut self.properties,
                        &mut constraints,
                    )
                })
                .collect::<Result<Vec<_>, _>>();
            let start = strategies.len() as u32;
            let compiled_ok = match compiled {
                Ok(s) => {
                    strategies.extend(s);
                    true
                }
                Err(_) => {
                    constraints.truncate(constraints_mark);
                    false
                }
            };
            let stickiness = f.variants.first().and_then(|v| v.stickiness.as_deref());
            let dependencies = f
                .dependencies
                .iter()
                .map(|d| Dependency {
                    parent: links.and_then(|l| {
                        l.by_name.get(d.feature.as_str()).copied().filter(|&p| {
                            // A parent must have no parents of its own.
                            l.sources[p as usize].dependencies.is_empty()
                        })
                    }),
                    expect_enabled: d.enabled,
                    variants: d.variants.iter().map(|v| v.as_str().into()).collect(),
                })
                .collect();
            let variants = VariantSet::compile(
                &f.variants,
                field::Stickiness::parse(stickiness, &mut self.properties),
                &f.name,
                &mut self.properties,
            )
            .map(Box::new);
            let has_variants = variants.is_some()
                || strategies[start as usize..]
                    .iter()
                    .any(|s| s.variants.is_some());
            let json_head = toggle_json_head(&f.name, f.impression_data);
            let json_head_hash = text_hash(&json_head);
            features.push(CompiledFeature {
                name: f.name.as_str().into(),
                json_head,
                json_head_hash,
                project,
                impression_data: f.impression_data,
                switched_on: f.enabled && compiled_ok && !all_disabled,
                strategies: start..strategies.len() as u32,
                variants,
                has_variants,
                dependencies,
                memo_slot: links.and_then(|l| l.memo_slots.get(&index).copied()),
            });
        }
        let toggles_json_bound = features
            .iter()
            .map(|f: &CompiledFeature| {
                let strategy_variants = strategies
                    [f.strategies.start as usize..f.strategies.end as usize]
                    .iter()
                    .filter_map(|s| s.variants.as_deref())
                    .chain(f.variants.as_deref())
                    .map(VariantSet::longest_json)
                    .max()
                    .unwrap_or(0);
                let variant =
                    strategy_variants.max(variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON.len());
                f.json_head.len() + variant + 2
            })
            .sum::<usize>();
        let slot_uses = constraints.len()
            + strategies
                .iter()
                .filter_map(|s| s.variants.as_deref())
                .chain(features.iter().filter_map(|f| f.variants.as_deref()))
                .map(VariantSet::override_slots)
                .sum::<usize>();
        Chunk {
            slot_uses,
            features: features.into_boxed_slice(),
            strategies: strategies.into_boxed_slice(),
            constraint_slots: constraints.iter().map(CompiledConstraint::slot).collect(),
            constraints: constraints.into_boxed_slice(),
            toggles_json_bound,
        }
    }

    fn finish(
        self,
        chunks: Vec<Arc<Chunk>>,
        by_name: Arc<FxHashMap<Box<str>, u32>>,
        parent_count: usize,
        has_dependencies: bool,
    ) -> Snapshot {
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut count = 0u32;
        for chunk in &chunks {
            starts.push(count);
            count += chunk.features.len() as u32;
        }
        starts.push(count);
        Snapshot {
            toggles_json_bound: 2 + chunks.iter().map(|c| c.toggles_json_bound).sum::<usize>(),
            chunks: chunks.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            by_name,
            projects: self.projects.into_boxed_slice(),
            properties: self.properties,
            parent_count,
            has_dependencies,
        }
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
        features: impl IntoIterator<Item = &'d Feature>,
        segments: impl IntoIterator<Item = &'d Segment>,
        options: &CompileOptions,
    ) -> Self {
        let mut compiler = Compiler::new(options, segments, EvalSlots::default(), Vec::new());

        // One entry per name (the last wins), in code-point order.
        let features = features.into_iter();
        let mut sources: Vec<&Feature> = Vec::with_capacity(features.size_hint().0);
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
        let has_dependencies = sources.iter().any(|f| !f.dependencies.is_empty());

        let links = Links {
            sources: &sources,
            by_name: &by_name,
            memo_slots: &memo_slots,
        };
        let chunks = sources
            .chunks(CHUNK)
            .enumerate()
            .map(|(i, flags)| Arc::new(compiler.chunk(flags, i * CHUNK, Some(&links))))
            .collect();
        compiler.finish(
            chunks,
            Arc::new(by_name),
            memo_slots.len(),
            has_dependencies,
        )
    }

    /// This snapshot with the flags named in `changed` recompiled: each is taken from `source`, or removed
    /// when `source` has no flag of that name. Only the chunks holding those flags are compiled again (from
    /// `source`, which must have every flag of the snapshot); the others are shared with this snapshot, so
    /// the cost follows the change, not the number of flags. `segments` must be this snapshot's.
    ///
    /// `None` when an update cannot be done this way: the snapshot or a changed flag has dependencies (a
    /// change to one flag can change how its children resolve), `source` lacks a flag it should have, or
    /// earlier updates left too many constraint slots no flag uses. Compile the whole document then.
    pub fn update<'d>(
        &self,
        changed: &[&str],
        source: impl Fn(&str) -> Option<&'d Feature>,
        segments: impl IntoIterator<Item = &'d Segment>,
        options: &CompileOptions,
    ) -> Option<Snapshot> {
        let mut changed = changed.to_vec();
        changed.sort_unstable();
        changed.dedup();
        // Slots are never given back: the slot of a constraint an update replaced stays, and every
        // evaluation still fills it in. Once such slots outnumber the used ones, a compilation starts afresh.
        let used: usize = self.chunks.iter().map(|c| c.slot_uses).sum();
        if self.has_dependencies
            || self.chunks.is_empty()
            || self.properties.constraints.initial.len() > 2 * used + STALE_SLOTS_ALLOWED
            || changed
                .iter()
                .any(|name| source(name).is_some_and(|f| !f.dependencies.is_empty()))
        {
            return None;
        }
        // The chunk each changed flag belongs in: its own, or for a new flag the last chunk that starts
        // at or before it.
        let mut affected: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for &name in &changed {
            let chunk = match self.by_name.get(name) {
                Some(&index) => self.chunk_of(index),
                None => self
                    .chunks
                    .partition_point(|c| &*c.features[0].name <= name)
                    .saturating_sub(1),
            };
            affected.entry(chunk).or_default().push(name);
        }
        let mut compiler = Compiler::new(
            options,
            segments,
            self.properties.clone(),
            self.projects.to_vec(),
        );
        let mut chunks: Vec<Arc<Chunk>> = Vec::with_capacity(self.chunks.len() + affected.len());
        let mut names_changed = false;
        for (c, chunk) in self.chunks.iter().enumerate() {
            let Some(names) = affected.get(&c) else {
                chunks.push(chunk.clone());
                continue;
            };
            let mut all: Vec<&str> = chunk.features.iter().map(|f| &*f.name).collect();
            all.extend(names.iter().copied());
            all.sort_unstable();
            all.dedup();
            let mut flags = Vec::with_capacity(all.len());
            for name in all {
                match source(name) {
                    Some(f) if f.name == name => flags.push(f),
                    Some(_) => return None,
                    None if changed.binary_search(&name).is_ok() => {}
                    None => return None,
                }
            }
            names_changed |= flags.len() != chunk.features.len()
                || names.iter().any(|n| !self.by_name.contains_key(*n));
            // A chunk that grew past twice its size is split; the first index is fixed up by `finish`.
            let parts = if flags.len() > 2 * CHUNK {
                CHUNK
            } else {
                2 * CHUNK
            };
            for part in flags.chunks(parts) {
                chunks.push(Arc::new(compiler.chunk(part, 0, None)));
            }
        }
        let by_name = if names_changed {
            Arc::new(
                chunks
                    .iter()
                    .flat_map(|c| c.features.iter())
                    .enumerate()
                    .map(|(i, f)| (f.name.clone(), i as u32))
                    .collect(),
            )
        } else {
            self.by_name.clone()
        };
        Some(compiler.finish(chunks, by_name, 0, false))
    }

    /// At least as many bytes as [`Snapshot::write_toggles_json`] writes for any context.
    pub fn toggles_json_bound(&self) -> usize {
        self.toggles_json_bound
    }

    /// Number of flags.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The chunk of the flag at `index`.
    fn chunk_of(&self, index: u32) -> usize {
        self.starts.partition_point(|&s| s <= index) - 1
    }

    /// The flag at `index` and its chunk.
    fn locate(&self, index: u32) -> (&Chunk, &CompiledFeature) {
        let c = self.chunk_of(index);
        let chunk = &self.chunks[c];
        (chunk, &chunk.features[(index - self.starts[c]) as usize])
    }

    /// The name of the flag at `index` (flags are indexed `0..len()` in name order).
    pub fn flag_name(&self, index: usize) -> &str {
        &self.locate(index as u32).1.name
    }

    /// The index of a flag by name.
    pub fn flag_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&i| i as usize)
    }

    /// The index, within [`Snapshot::project_names`], of the project of the flag at `index`.
    pub fn flag_project(&self, index: usize) -> usize {
        self.locate(index as u32).1.project as usize
    }

    /// Every project that has (or, after an update, had) a flag here, indexed.
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
        let (chunk, f) = self.locate(i);
        let (enabled, variant) =
            with_eval(ctx, &self.properties, self.parent_count, |e| {
                match self.resolved(chunk, f, e) {
                    Resolution::Off => (false, VariantView::disabled(false)),
                    Resolution::On(by) => (true, VariantView::of(chunk.variant_of(f, by, e))),
                }
            });
        Some(EvaluatedToggle {
            name: &f.name,
            enabled,
            impression_data: f.impression_data,
            variant,
        })
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
    /// appending. Every piece was serialized at compile time: this only copies bytes. Returns a fingerprint
    /// of what it wrote (a hash of the pieces' hashes, computed at compile time), for an ETag that costs a
    /// step per enabled flag rather than a pass over the bytes: equal output, equal fingerprint, in any
    /// process and snapshot.
    pub fn write_toggles_json(&self, ctx: &Context, projects: &Projects, out: &mut Vec<u8>) -> u64 {
        self.write_toggles_json_counted(ctx, projects, out, |_| {})
    }

    /// [`Snapshot::write_toggles_json`], calling `enabled` with the index ([`Snapshot::flag_name`]) of each
    /// flag it writes, so that a caller can count evaluations without a second pass.
    pub fn write_toggles_json_counted(
        &self,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<u8>,
        mut enabled: impl FnMut(usize),
    ) -> u64 {
        use std::hash::Hasher;
        let mut fingerprint = rustc_hash::FxHasher::default();
        out.push(b'[');
        let mut first = true;
        self.for_each_enabled(ctx, projects, |index, f, variant| {
            enabled(index);
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(f.json_head.as_bytes());
            fingerprint.write_u64(f.json_head_hash);
            match variant {
                Some(v) => {
                    out.extend_from_slice(v.json.as_bytes());
                    fingerprint.write_u64(v.json_hash);
                }
                None => {
                    out.extend_from_slice(
                        variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON.as_bytes(),
                    );
                    fingerprint.write_u64(DISABLED_VARIANT_HASH);
                }
            }
            out.push(b'}');
        });
        out.push(b']');
        fingerprint.finish()
    }

    /// Calls `found` with each enabled flag of the projects in scope, in name order, and its variant.
    fn for_each_enabled<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        mut found: impl FnMut(usize, &'s CompiledFeature, Option<&'s CompiledVariant>),
    ) {
        let mask: Option<Vec<bool>> = match projects {
            Projects::All => None,
            Projects::Only(list) => Some(
                self.projects
                    .iter()
                    .map(|p| list.iter().any(|x| **p == **x))
                    .collect(),
            ),
        };
        with_eval(ctx, &self.properties, self.parent_count, |e| {
            for (chunk, &start) in self.chunks.iter().zip(self.starts.iter()) {
                for (offset, f) in chunk.features.iter().enumerate() {
                    if !f.switched_on {
                        continue;
                    }
                    if let Some(mask) = &mask {
                        if !mask[f.project as usize] {
                            continue;
                        }
                    }
                    // Most flags have no parents and no children: their strategies alone decide, inline.
                    let resolution = if f.dependencies.is_empty() && f.memo_slot.is_none() {
                        chunk.strategies_decide(f, e)
                    } else {
                        self.resolved(chunk, f, e)
                    };
                    if let Resolution::On(by) = resolution {
                        found(start as usize + offset, f, chunk.variant_of(f, by, e));
                    }
                }
            }
        });
    }

    /// [`Snapshot::resolve`], remembered for the rest of the evaluation when other flags depend on `f`.
    fn resolved(&self, chunk: &Chunk, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        let Some(cell) = f.memo_slot.and_then(|slot| e.parents.get(slot as usize)) else {
            return self.resolve(chunk, f, e);
        };
        if let Some(known) = Resolution::decode(cell.get()) {
            return known;
        }
        let resolution = self.resolve(chunk, f, e);
        cell.set(resolution.encode());
        resolution
    }

    fn resolve(&self, chunk: &Chunk, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        if !f.switched_on {
            return Resolution::Off;
        }
        for d in f.dependencies.iter() {
            if !self.dependency_met(d, e) {
                return Resolution::Off;
            }
        }
        chunk.strategies_decide(f, e)
    }

    fn dependency_met(&self, d: &Dependency, e: &Eval<'_>) -> bool {
        let Some(p) = d.parent else {
            return false;
        };
        let (chunk, parent) = self.locate(p);
        match self.resolved(chunk, parent, e) {
            Resolution::Off => !d.expect_enabled,
            Resolution::On(by) => {
                d.expect_enabled
                    && (d.variants.is_empty() || {
                        let chosen = VariantView::of(chunk.variant_of(parent, by, e));
                        d.variants.iter().any(|v| **v == *chosen.name)
                    })
            }
        }
    }
}

/// Stands for [`variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON`] in fingerprints (any fixed value will do).
const DISABLED_VARIANT_HASH: u64 = 0x9e37_79b9_7f4a_7c15;

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

    /// A flag whose answer depends on the context in several ways (rollout, user ids, a property
    /// constraint, a segment, variants), varied by `n` so that neighbours differ.
    fn varied_flag(name: &str, n: usize) -> Feature {
        let json = match n % 5 {
            0 => serde_json::json!({"name": name, "project": "p1", "enabled": true,
                "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": (n * 7 % 100).to_string(), "stickiness": "default"}}]}),
            1 => serde_json::json!({"name": name, "project": "p2", "enabled": true,
                "strategies": [{"name": "userWithId", "parameters": {"userIds": format!("u{n},u{},u3", n + 1)}}],
                "variants": [{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"},
                             {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"}]}),
            2 => serde_json::json!({"name": name, "project": "p1", "enabled": !n.is_multiple_of(3),
                "strategies": [{"name": "default", "constraints": [{"contextName": format!("prop{}", n % 4), "operator": "IN", "values": ["a", "b"]}]}]}),
            3 => serde_json::json!({"name": name, "project": "p3", "enabled": true,
                "strategies": [{"name": "default", "segments": [1]}]}),
            _ => {
                serde_json::json!({"name": name, "project": "p2", "enabled": true, "impressionData": true,
                "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "g"},
                    "variants": [{"name": "on", "weight": 1000, "weightType": "variable", "stickiness": "default",
                        "payload": {"type": "string", "value": format!("v{n}")}}]}]})
            }
        };
        serde_json::from_value(json).unwrap()
    }

    fn contexts() -> Vec<Context> {
        (0..40)
            .map(|i| {
                ctx(&format!(
                    r#"{{"userId":"u{i}","properties":{{"prop0":"a","prop1":"{}","prop2":"b","prop3":"x","region":"r{}"}}}}"#,
                    if i % 2 == 0 { "a" } else { "z" },
                    i % 3
                ))
            })
            .collect()
    }

    /// `updated` answers exactly as a snapshot compiled from scratch on the same flags.
    fn assert_same(updated: &Snapshot, flags: &BTreeMap<String, Feature>, segments: &[Segment]) {
        let fresh = Snapshot::compile_parts(
            flags.values(),
            segments,
            &CompileOptions {
                hostname: Some("web-1".into()),
            },
        );
        assert_eq!(updated.len(), fresh.len());
        assert_eq!(updated.toggles_json_bound(), fresh.toggles_json_bound());
        for (i, name) in flags.keys().enumerate() {
            assert_eq!(updated.flag_name(i), name);
            assert_eq!(updated.flag_index(name), Some(i));
            assert_eq!(
                updated.project_names()[updated.flag_project(i)],
                fresh.project_names()[fresh.flag_project(i)]
            );
        }
        for scope in [Projects::All, Projects::from_list(&["p2", "p3"])] {
            for c in contexts() {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let fingerprint = updated.write_toggles_json(&c, &scope, &mut a);
                assert_eq!(fingerprint, fresh.write_toggles_json(&c, &scope, &mut b));
                assert_eq!(String::from_utf8(a), String::from_utf8(b));
                let mut counted = Vec::new();
                updated
                    .write_toggles_json_counted(&c, &scope, &mut Vec::new(), |i| counted.push(i));
                let expected: Vec<usize> = fresh
                    .evaluate_all(&c, &scope)
                    .iter()
                    .map(|t| fresh.flag_index(t.name).unwrap())
                    .collect();
                assert_eq!(counted, expected);
            }
        }
    }

    #[test]
    fn a_field_read_two_ways_is_parsed_each_way() {
        // The number reading comes first (cheaper constraints go first) and fails; the version reading
        // of the same field must still be parsed.
        let s = snapshot(
            r#"{"features":[{"name":"a","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"v","operator":"SEMVER_EQ","value":"1.2.3"},
                {"contextName":"v","operator":"NUM_LT","value":"5","inverted":true}]}]},
              {"name":"b","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"v","operator":"NUM_LT","value":"5"}]}]}]}"#,
        );
        let names = |c: &Context| -> Vec<&str> {
            s.evaluate_all(c, &Projects::All)
                .iter()
                .map(|t| t.name)
                .collect()
        };
        assert_eq!(names(&ctx(r#"{"properties":{"v":"1.2.3"}}"#)), ["a"]);
        assert_eq!(names(&ctx(r#"{"properties":{"v":"4"}}"#)), ["b"]);
    }

    #[test]
    fn updates_decline_once_replaced_constraints_outnumber_live_ones() {
        let options = CompileOptions::default();
        let flag = |n: usize| -> Feature {
            serde_json::from_value(
                serde_json::json!({"name": "f", "enabled": true, "strategies": [
                {"name": "default", "constraints": [
                    {"contextName": "userId", "operator": "IN", "values": [n.to_string()]}]}]}),
            )
            .unwrap()
        };
        let mut snapshot = Snapshot::compile_parts([&flag(0)], [], &options);
        let (mut updates, mut compiles) = (0, 0);
        for n in 1..=1_000 {
            let f = flag(n);
            snapshot = match snapshot.update(&["f"], |_| Some(&f), [], &options) {
                Some(next) => {
                    updates += 1;
                    next
                }
                None => {
                    compiles += 1;
                    Snapshot::compile_parts([&f], [], &options)
                }
            };
            assert!(snapshot.properties.constraints.initial.len() <= 2 + STALE_SLOTS_ALLOWED + 1);
            let user = |id: usize| -> Context { ctx(&format!(r#"{{"userId":"{id}"}}"#)) };
            assert!(snapshot.is_enabled("f", &user(n)));
            assert!(!snapshot.is_enabled("f", &user(n - 1)));
        }
        assert!(updates > 900, "{updates} updates");
        assert!(compiles >= 3, "{compiles} full compiles");
    }

    #[test]
    fn an_update_answers_as_a_full_compile() {
        let options = CompileOptions {
            hostname: Some("web-1".into()),
        };
        let segments: Vec<Segment> = vec![serde_json::from_value(serde_json::json!(
            {"id": 1, "constraints": [{"contextName": "region", "operator": "IN", "values": ["r1"]}]}
        ))
        .unwrap()];
        let mut flags: BTreeMap<String, Feature> = (0..300)
            .map(|i| {
                let name = format!("flag-{:04}", i * 10);
                (name.clone(), varied_flag(&name, i))
            })
            .collect();
        let mut snapshot = Snapshot::compile_parts(flags.values(), &segments, &options);
        assert_same(&snapshot, &flags, &segments);

        let mut step = |flags: &mut BTreeMap<String, Feature>,
                        changes: Vec<(String, Option<Feature>)>| {
            for (name, feature) in &changes {
                match feature {
                    Some(f) => flags.insert(name.clone(), f.clone()),
                    None => flags.remove(name),
                };
            }
            let names: Vec<&str> = changes.iter().map(|(n, _)| n.as_str()).collect();
            let next = snapshot
                .update(&names, |n| flags.get(n), &segments, &options)
                .expect("an update without dependencies");
            assert_same(&next, flags, &segments);
            snapshot = next;
        };
        // A changed flag: a toggle, then a new strategy.
        let mut f = flags["flag-0100"].clone();
        f.enabled = !f.enabled;
        step(&mut flags, vec![("flag-0100".into(), Some(f))]);
        step(
            &mut flags,
            vec![("flag-0110".into(), Some(varied_flag("flag-0110", 3)))],
        );
        // New flags before the first, between two, after the last, and in a new project.
        let mut newcomer = varied_flag("flag-0015", 4);
        newcomer.project = "p9".into();
        step(
            &mut flags,
            vec![
                ("a-first".into(), Some(varied_flag("a-first", 1))),
                ("flag-0015".into(), Some(newcomer)),
                ("z-last".into(), Some(varied_flag("z-last", 2))),
            ],
        );
        // Removed flags, and one named twice.
        step(
            &mut flags,
            vec![
                ("flag-0000".into(), None),
                ("flag-2990".into(), None),
                ("flag-2990".into(), None),
                ("no-such-flag".into(), None),
            ],
        );
        // A chunk that grows past twice its size is split.
        let crowd: Vec<(String, Option<Feature>)> = (0..150)
            .map(|i| {
                let name = format!("flag-0500-{i:03}");
                let f = varied_flag(&name, i);
                (name, Some(f))
            })
            .collect();
        step(&mut flags, crowd);
        // A whole chunk removed.
        let gone: Vec<(String, Option<Feature>)> = (0..70)
            .map(|i| (format!("flag-{:04}", 1000 + i * 10), None))
            .collect();
        step(&mut flags, gone);
    }

    #[test]
    fn fingerprints_follow_the_written_json() {
        let flags: Vec<Feature> = (0..150)
            .map(|i| varied_flag(&format!("flag-{i:03}"), i))
            .collect();
        let segments: Vec<Segment> = vec![serde_json::from_value(serde_json::json!(
            {"id": 1, "constraints": [{"contextName": "region", "operator": "IN", "values": ["r1"]}]}
        ))
        .unwrap()];
        let s = Snapshot::compile_parts(&flags, &segments, &CompileOptions::default());
        let mut seen: std::collections::HashMap<u64, Vec<u8>> = std::collections::HashMap::new();
        for c in contexts() {
            for scope in [Projects::All, Projects::from_list(&["p1"])] {
                let mut json = Vec::new();
                let fingerprint = s.write_toggles_json(&c, &scope, &mut json);
                let earlier = seen.entry(fingerprint).or_insert_with(|| json.clone());
                assert_eq!(*earlier, json, "one fingerprint, two different outputs");
            }
        }
        let distinct: std::collections::HashSet<&Vec<u8>> = seen.values().collect();
        assert_eq!(distinct.len(), seen.len(), "one output, two fingerprints");
        assert!(seen.len() > 10, "the contexts give different answers");
    }

    #[test]
    fn an_update_declines_dependencies() {
        let options = CompileOptions::default();
        let child: Feature = serde_json::from_value(serde_json::json!(
            {"name": "child", "enabled": true, "dependencies": [{"feature": "parent"}]}
        ))
        .unwrap();
        let parent: Feature =
            serde_json::from_value(serde_json::json!({"name": "parent", "enabled": true})).unwrap();
        let plain = Snapshot::compile_parts([&parent], [], &options);
        assert!(plain
            .update(
                &["child"],
                |n| (n == "child")
                    .then_some(&child)
                    .or((n == "parent").then_some(&parent)),
                [],
                &options
            )
            .is_none());
        let both = Snapshot::compile_parts([&parent, &child], [], &options);
        assert!(both
            .update(
                &["parent"],
                |n| (n == "child")
                    .then_some(&child)
                    .or((n == "parent").then_some(&parent)),
                [],
                &options
            )
            .is_none());
    }

    #[test]
    fn a_repeated_constraint_is_worked_out_once_and_only_shared_when_identical() {
        let s = snapshot(
            r#"{"features":[
                {"name":"a","enabled":true,"strategies":[{"name":"default","constraints":[
                    {"contextName":"plan","operator":"IN","values":["pro"]}]}]},
                {"name":"b","enabled":true,"strategies":[{"name":"default","constraints":[
                    {"contextName":"plan","operator":"IN","values":["pro"],"inverted":true}]}]},
                {"name":"c","enabled":true,"strategies":[{"name":"default","constraints":[
                    {"contextName":"plan","operator":"IN","values":["pro"]}]}]},
                {"name":"d","enabled":true,"strategies":[{"name":"default","constraints":[
                    {"contextName":"plan","operator":"IN","values":["PRO"],"caseInsensitive":true}]}]}
            ]}"#,
        );
        assert_eq!(s.properties.constraints.initial.len(), 3);
        let on = |plan: &str| -> Vec<&str> {
            s.evaluate_all(
                &ctx(&format!(r#"{{"properties":{{"plan":"{plan}"}}}}"#)),
                &Projects::All,
            )
            .iter()
            .map(|t| t.name)
            .collect()
        };
        assert_eq!(on("pro"), ["a", "c"]);
        assert_eq!(on("free"), ["b"]);
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
