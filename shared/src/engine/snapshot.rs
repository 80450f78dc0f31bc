//! A compiled snapshot's data: its flags in name order, in chunks that keep their flags' strategies and
//! constraints in contiguous arrays, and the lookups every entry point shares (a flag by name or by index).
//! Compiling it is `compile`'s, evaluating it `evaluate`'s, writing its JSON `toggles`'s.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use super::constraint::CompiledConstraint;
use super::slots::EvalSlots;
use super::strategy::CompiledStrategy;
use super::variant::VariantSet;

/// An immutable, compiled features document. Share it through `Arc`; every method takes `&self`.
#[derive(Debug)]
pub struct Snapshot {
    /// The flags in name order (code points), in chunks of about [`CHUNK`] flags. A chunk keeps its flags'
    /// strategies and constraints in contiguous arrays, so that evaluating all flags walks memory forwards
    /// instead of chasing a box per flag and strategy; a snapshot made by [`Snapshot::update`] shares the
    /// chunks the update did not touch.
    pub(super) chunks: Box<[Arc<Chunk>]>,
    /// The index of each chunk's first flag, then the number of flags.
    pub(super) starts: Box<[u32]>,
    pub(super) by_name: Arc<FxHashMap<Box<str>, u32>>,
    pub(super) projects: Box<[Box<str>]>,
    pub(super) properties: EvalSlots,
    /// How many flags are parents of others (see `CompiledFeature::memo_slot`).
    pub(super) parent_count: usize,
    /// Whether any flag depends on another; [`Snapshot::update`] then declines.
    pub(super) has_dependencies: bool,
    /// The most bytes [`Snapshot::write_toggles_json`] can write (every flag on with its longest variant),
    /// so that a response buffer is allocated once.
    pub(super) toggles_json_bound: usize,
}

/// How many flags a chunk gets when a snapshot is compiled; an update splits a chunk that grew past twice
/// as many. Small enough that recompiling one is cheap next to compiling thousands of flags, large enough
/// that moving from chunk to chunk costs nothing measurable in an evaluation.
pub(super) const CHUNK: usize = 64;

/// A run of consecutive flags (by name) with their strategies and constraints.
#[derive(Debug)]
pub(super) struct Chunk {
    pub(super) features: Box<[CompiledFeature]>,
    pub(super) strategies: Box<[CompiledStrategy]>,
    pub(super) constraints: Box<[CompiledConstraint]>,
    /// Each constraint's memo slot, beside the constraints: a strategy checks its constraints' memos here
    /// without reading a constraint whose result is already known.
    pub(super) constraint_slots: Box<[u32]>,
    /// Its flags' share of `Snapshot::toggles_json_bound`.
    pub(super) toggles_json_bound: usize,
    /// How many constraint slots its constraints and variant overrides use (some may share one).
    pub(super) slot_uses: usize,
    /// Its flags' OFREP pieces, serialized when an OFREP answer first needs them.
    pub(super) ofrep: OnceLock<OfrepChunk>,
}

#[derive(Debug)]
pub(super) struct CompiledFeature {
    pub(super) name: Box<str>,
    /// `{"name":…,"enabled":true,"impressionData":…,"variant":`, serialized once.
    pub(super) json_head: Box<str>,
    /// `text_hash` of `json_head`.
    pub(super) json_head_hash: u64,
    pub(super) project: u32,
    pub(super) impression_data: bool,
    /// False when switched off, when every strategy is disabled, or when the flag could not be compiled.
    pub(super) switched_on: bool,
    /// Its strategies, within its chunk's array of strategies.
    pub(super) strategies: Range<u32>,
    /// Boxed, like a strategy's: needed only once the flag is on, so kept out of the walk over flags.
    pub(super) variants: Option<Box<VariantSet>>,
    /// Whether the flag or any of its strategies has variants.
    pub(super) has_variants: bool,
    /// What its OFREP answers need beyond the evaluation.
    pub(super) ofrep: OfrepTraits,
    pub(super) dependencies: Box<[Dependency]>,
    /// For a flag that other flags depend on: where an evaluation keeps its resolution, so that it is worked
    /// out once per context however many children ask.
    pub(super) memo_slot: Option<u32>,
}

#[derive(Debug)]
pub(super) struct Dependency {
    /// The parent's index; `None` when the parent is missing or has parents of its own: never satisfied.
    pub(super) parent: Option<u32>,
    pub(super) expect_enabled: bool,
    pub(super) variants: Box<[Box<str>]>,
}

impl Snapshot {
    /// Number of flags.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The chunk of the flag at `index`.
    pub(super) fn chunk_of(&self, index: u32) -> usize {
        self.starts.partition_point(|&s| s <= index) - 1
    }

    /// The flag at `index` and its chunk.
    pub(super) fn locate(&self, index: u32) -> (&Chunk, &CompiledFeature) {
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
}

/// What a flag's OFREP answer needs to know of its source, decided when it is compiled (`ofrep`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OfrepTraits {
    /// Switched on in the environment (a flag whose strategies are all disabled is on but never matches).
    pub(super) switched: bool,
    /// More than one variant to choose from, on the flag or on one of its strategies: a chosen variant is a
    /// `SPLIT`.
    pub(super) several_variants: bool,
    /// Every active strategy is on for everyone (or there is none): an enabled answer is `STATIC`.
    pub(super) for_everyone: bool,
    /// An active strategy without constraints is on for at least half the contexts: the flag's usual
    /// answer (`OfrepPieces::usually_on`) is on.
    pub(super) mostly_on: bool,
    /// A strategy needs a user id (`userWithId`, `gradualRolloutUserId`, a rollout sticky on `userId`):
    /// without one the answer is `TARGETING_KEY_MISSING`.
    pub(super) needs_user_id: bool,
}

/// A chunk's OFREP pieces (`ofrep`). Its text starts with each flag's answer for its usual outcome (on
/// when it is for everyone or for at least half the contexts, else off), in flag order and each after a
/// comma, so that the answers of consecutive flags that came to their usual outcome are copied in one
/// piece; then the other ends of answers (after the key), once for all the chunk's flags that end alike.
/// A request copies mostly memory that many answers share: answers of whole flags for every outcome, copied
/// one by one, were read from memory that had left the caches (BENCHMARKS.md, OFREP bulk).
#[derive(Debug)]
pub(super) struct OfrepChunk {
    pub(super) text: Box<str>,
    /// By flag, in the chunk's order.
    pub(super) flags: Box<[OfrepPieces]>,
    /// By flag, like `flags`.
    pub(super) rests: Box<[OfrepRests]>,
    /// Where the flags' usual answers end in `text`.
    pub(super) answers_end: u32,
    /// At least as many bytes as its flags' answers take, whatever the context (`ofrep`).
    pub(super) bound: usize,
}

/// What a bulk answer reads of each flag (24 bytes, so that 2,000 flags' walk stays in the caches); what
/// only an unusual outcome needs is in its `OfrepRests`, and a chosen variant's tail the variant keeps
/// (`CompiledVariant::ofrep_answer`).
#[derive(Debug)]
pub(super) struct OfrepPieces {
    /// `,{"key":…,` and the rest of its usual answer, in the chunk's text (its comma left out for the
    /// first answer of an array).
    pub(super) answer: Range<u32>,
    /// Where its key (`,{"key":…,`) ends in `answer`.
    pub(super) key_end: u32,
    /// Whether its usual outcome is on (without a variant) rather than off: on for everyone, or for at least
    /// half the contexts.
    pub(super) usually_on: bool,
    /// The hash of its usual answer, for fingerprints.
    pub(super) usual_hash: u64,
}

// The size its comment promises, kept when a field is added.
const _: () = assert!(std::mem::size_of::<OfrepPieces>() == 24);

impl OfrepPieces {
    /// `,{"key":…,` in the chunk's text.
    pub(super) fn key(&self) -> Range<u32> {
        self.answer.start..self.key_end
    }
}

/// A flag's OFREP pieces for the outcomes other than its usual one, apart from its `OfrepPieces`.
#[derive(Debug)]
pub(super) struct OfrepRests {
    /// Its other outcome without a variant: on (`STATIC` or `TARGETING_MATCH`) when usually off, else off
    /// (`DISABLED` or `DEFAULT`).
    pub(super) unusual: OfrepTail,
    /// The hash of its `{"key":…,errorCode: TARGETING_KEY_MISSING…}`.
    pub(super) missing_key_hash: u64,
    /// `"reason":…,"metadata":{…}}` of an answer with a chosen variant, in the chunk's text.
    pub(super) variant_tail: Range<u32>,
}

/// The rest of an answer after its key, in the chunk's text, and the hash of the flag's whole answer, for
/// fingerprints.
#[derive(Debug)]
pub(super) struct OfrepTail {
    pub(super) span: Range<u32>,
    pub(super) hash: u64,
}
