//! Compiling a features document into a [`Snapshot`]: its flags in name order, compiled [`CHUNK`] at a
//! time; and [`Snapshot::update`], which compiles again only the chunks holding the changed flags.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::constraint::CompiledConstraint;
use super::field;
use super::hash::text_hash;
use super::slots::EvalSlots;
use super::snapshot::{Chunk, CompiledFeature, Dependency, OfrepTraits, Snapshot, CHUNK};
use super::strategy::CompiledStrategy;
use super::toggles::toggle_json_head;
use super::variant::{self, VariantSet};
use crate::model::{Feature, FeaturesDocument, Segment};

/// Settings of compilation that do not come from the document.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The host name `applicationHostname` strategies compare with; the machine's when `None`.
    pub hostname: Option<String>,
}

impl CompileOptions {
    /// The host name `applicationHostname` strategies compare with.
    pub fn hostname(&self) -> String {
        self.hostname
            .clone()
            .unwrap_or_else(|| gethostname::gethostname().to_string_lossy().into_owned())
    }

    /// These options with the host name looked up now, for callers that explain many flags in a row.
    pub fn with_hostname_resolved(&self) -> CompileOptions {
        CompileOptions {
            hostname: Some(self.hostname()),
        }
    }
}

/// How many more constraint slots than twice those in use [`Snapshot::update`] lets a snapshot have before
/// it declines (see there).
pub(super) const STALE_SLOTS_ALLOWED: usize = 256;

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
        let hostname = options.hostname();
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
                ofrep: OfrepTraits::of(f),
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
            ofrep: std::sync::OnceLock::new(),
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
}
