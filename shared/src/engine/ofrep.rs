//! OpenFeature's remote evaluation protocol (OFREP): a flag's answer `{"key","value","variant","reason",
//! "metadata"}` written from the compiled snapshot, one flag or every flag in scope in one pass, like the
//! frontend API's `toggles` (`toggles`). What a flag's answer needs beyond the evaluation is decided when it is
//! compiled ([`OfrepTraits`]: a handful of booleans) or serialized on first use and kept for the life of its
//! chunk or variant: compiling a snapshot costs nothing more for servers that never answer OFREP. A chunk's
//! text holds each flag's answer for its usual outcome (its likelier: on for everyone or for at least half
//! the contexts, else off), one after the other, so that a bulk request copies the answers of consecutive
//! flags that came to it in one piece ([`Runs`]); a flag that did not is written as its key and the rest of
//! the answer for its outcome.
//!
//! The answer's `value` is the variant's payload by its type (`number` a number, `json` the JSON value, any
//! other type or a payload that does not parse as its type a string), a variant without payload its name,
//! and a flag without a variant a boolean (and no `variant`: Unleash's `disabled` is not one). Its
//! `reason`: `DISABLED` (off in the environment), `DEFAULT` (on, no strategy matched), `SPLIT` (a variant
//! chosen among several), `STATIC` (on for everyone: no strategy, or only unconstrained `default`/100 %
//! rollouts), else `TARGETING_MATCH`. `metadata` has the project, and `impressionData: true` when set.

use std::hash::Hasher;
use std::ops::Range;

use super::evaluate::{in_scope, Projects, Resolution};
use super::hash::text_hash;
use super::snapshot::{
    Chunk, CompiledFeature, OfrepChunk, OfrepPieces, OfrepRests, OfrepTail, OfrepTraits, Snapshot,
};
use super::variant::{CompiledVariant, VariantSet};
use crate::context::Context;
use crate::model::{Feature, FeatureStrategy, VariantPayload};

impl OfrepTraits {
    pub(super) fn of(feature: &Feature) -> OfrepTraits {
        let active = || feature.strategies.iter().filter(|s| !s.disabled);
        OfrepTraits {
            switched: feature.enabled,
            several_variants: feature.variants.len() > 1 || active().any(|s| s.variants.len() > 1),
            for_everyone: active().all(for_everyone),
            mostly_on: active().any(mostly_on),
            needs_user_id: active().any(|s| {
                matches!(s.name.as_str(), "userWithId" | "gradualRolloutUserId")
                    || (s.name == "flexibleRollout"
                        && s.parameters.get("stickiness").map(String::as_str) == Some("userId"))
            }),
        }
    }

    /// The reason of an answer: off for the context, on without a variant, on with one.
    fn reason(self, enabled: bool, variant_chosen: bool) -> &'static str {
        if !self.switched {
            "DISABLED"
        } else if !enabled {
            "DEFAULT"
        } else if variant_chosen && self.several_variants {
            "SPLIT"
        } else if self.for_everyone {
            "STATIC"
        } else {
            "TARGETING_MATCH"
        }
    }
}

/// An unconstrained strategy that is on for everyone.
fn for_everyone(strategy: &FeatureStrategy) -> bool {
    let unconstrained = strategy.constraints.is_empty() && strategy.segments.is_empty();
    let full = match strategy.name.as_str() {
        "default" => true,
        "flexibleRollout" => strategy
            .parameters
            .get("rollout")
            .is_none_or(|rollout| rollout.trim() == "100"),
        _ => false,
    };
    unconstrained && full
}

/// An unconstrained rollout that is on for at least half the contexts (`flexibleRollout`'s `rollout`, the
/// older gradual rollouts' `percentage`).
fn mostly_on(strategy: &FeatureStrategy) -> bool {
    let percent = match strategy.name.as_str() {
        "flexibleRollout" => "rollout",
        "gradualRolloutUserId" | "gradualRolloutSessionId" | "gradualRolloutRandom" => "percentage",
        _ => return false,
    };
    strategy.constraints.is_empty()
        && strategy.segments.is_empty()
        && strategy
            .parameters
            .get(percent)
            .and_then(|value| value.trim().parse::<u32>().ok())
            .is_some_and(|value| value >= 50)
}

/// What the single-flag answer came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfrepFlag {
    /// No such flag in the projects in scope: nothing written.
    NotFound,
    /// Its strategies need a user id the context lacks: nothing written, nothing evaluated.
    TargetingKeyMissing,
    /// The answer was written; the flag's index and whether it was enabled, for counting.
    Written { index: usize, enabled: bool },
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// A payload as OFREP's `value`: by its type, or a string when it does not parse as that type.
fn payload_json(payload: &VariantPayload) -> String {
    match payload.payload_type.as_str() {
        "number" => serde_json::from_str::<serde_json::Number>(payload.value.trim())
            .map_or_else(|_| json_string(&payload.value), |number| number.to_string()),
        "json" => serde_json::from_str::<serde_json::Value>(&payload.value)
            .map_or_else(|_| json_string(&payload.value), |value| value.to_string()),
        _ => json_string(&payload.value),
    }
}

impl CompiledVariant {
    /// The rest of its flag's answer (`pieces` and `rests` in `chunk`) after the key when this variant is
    /// chosen (`"value":…,"variant":…,"reason":…,"metadata":…}`) and the whole answer's hash: serialized
    /// on first use, then copied whole.
    fn ofrep_answer(
        &self,
        chunk: &OfrepChunk,
        pieces: &OfrepPieces,
        rests: &OfrepRests,
    ) -> (&[u8], u64) {
        let (tail, hash) = self.ofrep_answer.get_or_init(|| {
            let value = self
                .payload
                .as_ref()
                .map_or_else(|| json_string(&self.name), payload_json);
            let tail = format!(
                r#""value":{value},"variant":{},{}"#,
                json_string(&self.name),
                span(&chunk.text, &rests.variant_tail),
            );
            let hash = text_hash(&format!("{}{tail}", &span(&chunk.text, &pieces.key())[1..]));
            (tail.into(), hash)
        });
        (tail.as_bytes(), *hash)
    }
}

/// `"value":…,` of an answer without a chosen variant.
fn outcome_value(enabled: bool) -> &'static str {
    if enabled {
        r#""value":true,"#
    } else {
        r#""value":false,"#
    }
}

/// The rest of a `TARGETING_KEY_MISSING` answer after its key.
const MISSING_KEY_REST: &str = concat!(
    r#""errorCode":"TARGETING_KEY_MISSING","errorDetails":""#,
    "this flag's strategies need a targetingKey (or userId)",
    r#""}"#
);

fn span<'a>(text: &'a str, span: &Range<u32>) -> &'a str {
    &text[span.start as usize..span.end as usize]
}

/// Appends `piece` to `text`.
fn push_span(text: &mut String, piece: &str) -> Range<u32> {
    let start = text.len() as u32;
    text.push_str(piece);
    start..text.len() as u32
}

/// Pieces of a chunk's text that several of its flags share, each appended once.
#[derive(Default)]
struct SharedPieces(Vec<(String, Range<u32>)>);

impl SharedPieces {
    fn span_of(&mut self, text: &mut String, piece: String) -> Range<u32> {
        if let Some((_, span)) = self.0.iter().find(|(known, _)| *known == piece) {
            return span.clone();
        }
        let span = push_span(text, &piece);
        self.0.push((piece, span.clone()));
        span
    }
}

/// A flag's pieces while its chunk's text is laid out: its key (without the comma before it), where its usual
/// answer lies, and the rests after the key for each outcome.
struct Draft {
    key: String,
    answer: Range<u32>,
    key_end: u32,
    usually_on: bool,
    off: String,
    on: String,
    variant_tail: String,
}

impl Chunk {
    fn ofrep_chunk(&self, projects: &[Box<str>]) -> &OfrepChunk {
        self.ofrep.get_or_init(|| {
            // Each flag's answer for its usual outcome, in flag order, then the other rests once each.
            let mut text = String::new();
            let mut drafts = Vec::with_capacity(self.features.len());
            for f in self.features.iter() {
                let start = text.len() as u32;
                let key = format!(r#"{{"key":{},"#, json_string(&f.name));
                text.push(',');
                text.push_str(&key);
                let key_end = text.len() as u32;
                let project = projects.get(f.project as usize).map_or("", |p| &**p);
                // `impressionData` only when true: absent is false, and most flags have none.
                let impression = if f.impression_data {
                    r#","impressionData":true"#
                } else {
                    ""
                };
                let metadata = format!(
                    r#""metadata":{{"project":{}{impression}}}}}"#,
                    json_string(project),
                );
                let tail =
                    |value: &str, reason: &str| format!(r#"{value}"reason":"{reason}",{metadata}"#);
                // The likelier outcome: on without a variant when for everyone (`STATIC`) or for at least
                // half the contexts (a rollout of 50 % or more), else off. A layout only, so that fewer
                // answers break a run: an answer is what the evaluation comes to.
                let usually_on = f.switched_on
                    && (f.ofrep.for_everyone || f.ofrep.mostly_on)
                    && !f.has_variants
                    && f.dependencies.is_empty();
                let off = tail(outcome_value(false), f.ofrep.reason(false, false));
                let on = tail(outcome_value(true), f.ofrep.reason(true, false));
                text.push_str(if usually_on { &on } else { &off });
                drafts.push(Draft {
                    answer: start..text.len() as u32,
                    variant_tail: tail("", f.ofrep.reason(true, true)),
                    key,
                    key_end,
                    usually_on,
                    off,
                    on,
                });
            }
            let answers_end = text.len() as u32;
            let mut shared = SharedPieces::default();
            let (flags, rests): (Vec<OfrepPieces>, Vec<OfrepRests>) = drafts
                .into_iter()
                .map(|d| {
                    let (usual, unusual) = if d.usually_on {
                        (d.on, d.off)
                    } else {
                        (d.off, d.on)
                    };
                    let pieces = OfrepPieces {
                        usual_hash: text_hash(&format!("{}{usual}", d.key)),
                        answer: d.answer,
                        key_end: d.key_end,
                        usually_on: d.usually_on,
                    };
                    let rests = OfrepRests {
                        unusual: OfrepTail {
                            hash: text_hash(&format!("{}{unusual}", d.key)),
                            span: shared.span_of(&mut text, unusual),
                        },
                        variant_tail: shared.span_of(&mut text, d.variant_tail),
                        missing_key_hash: text_hash(&format!("{}{MISSING_KEY_REST}", d.key)),
                    };
                    (pieces, rests)
                })
                .unzip();
            let text: Box<str> = text.into();
            // A variant's `"value":…,"variant":…` is no longer than its frontend object (where a payload
            // is a JSON string, escaped) but for a re-serialized JSON number; then the buffer just grows.
            let longest_variant = |f: &CompiledFeature| {
                self.strategies[f.strategies.start as usize..f.strategies.end as usize]
                    .iter()
                    .filter_map(|s| s.variants.as_deref())
                    .chain(f.variants.as_deref())
                    .map(VariantSet::longest_json)
                    .max()
                    .unwrap_or(0)
            };
            let bound = flags
                .iter()
                .zip(&rests)
                .zip(self.features.iter())
                .map(|((p, r), f)| {
                    let len = |span: &Range<u32>| (span.end - span.start) as usize;
                    let rest = len(&(p.key_end..p.answer.end))
                        .max(len(&r.unusual.span))
                        .max(longest_variant(f) + 1 + len(&r.variant_tail))
                        .max(MISSING_KEY_REST.len());
                    len(&p.key()) + rest
                })
                .sum();
            OfrepChunk {
                text,
                flags: flags.into(),
                rests: rests.into(),
                answers_end,
                bound,
            }
        })
    }
}

/// Where an answer goes: a buffer, or only a count of its bytes (for an ETag without the body).
pub(super) trait OfrepSink {
    fn put(&mut self, bytes: &[u8]);
}

impl OfrepSink for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Counts the bytes an answer would take.
struct Length(usize);

impl OfrepSink for Length {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

impl OfrepChunk {
    /// A piece's bytes: sliced as bytes, without the text's char-boundary checks (every piece was
    /// appended whole), which were a fifth of a bulk answer's own instructions.
    #[inline(always)]
    fn bytes(&self, piece: Range<u32>) -> &[u8] {
        &self.text.as_bytes()[piece.start as usize..piece.end as usize]
    }

    /// The rest of the answer of the chunk's flag at `offset` (its `pieces`) after its key for an outcome
    /// other than its usual one, and the answer's part of the fingerprint; `None` for its usual outcome
    /// (the answer in place).
    #[inline(always)]
    fn unusual_rest<'s>(
        &'s self,
        offset: usize,
        pieces: &OfrepPieces,
        enabled: bool,
        variant: Option<&'s CompiledVariant>,
    ) -> (Option<&'s [u8]>, u64) {
        match variant {
            None if enabled == pieces.usually_on => (None, pieces.usual_hash),
            Some(v) => {
                let (rest, hash) = v.ofrep_answer(self, pieces, &self.rests[offset]);
                (Some(rest), hash)
            }
            None => {
                let tail = &self.rests[offset].unusual;
                (Some(self.bytes(tail.span.clone())), tail.hash)
            }
        }
    }

    /// Writes the answer of the chunk's flag at `offset` alone (without a comma). Returns its part of the
    /// fingerprint.
    fn write_one(
        &self,
        offset: usize,
        enabled: bool,
        variant: Option<&CompiledVariant>,
        out: &mut Vec<u8>,
    ) -> u64 {
        let pieces = &self.flags[offset];
        let (rest, hash) = self.unusual_rest(offset, pieces, enabled, variant);
        match rest {
            None => out.put(self.bytes(pieces.answer.start + 1..pieces.answer.end)),
            Some(rest) => {
                out.put(self.bytes(pieces.answer.start + 1..pieces.key_end));
                out.put(rest);
            }
        }
        hash
    }
}

/// Writes a chunk's answers into an array: the answers of flags that came to their usual outcome are
/// copied a run at a time from the chunk's text, where they lie one after the other; the answer of a flag
/// that did not breaks the run after its key and is written from its key's end.
struct Runs<'a, S> {
    chunk: &'a OfrepChunk,
    out: &'a mut S,
    /// Where the run not yet written starts in the chunk's text.
    from: u32,
    /// Nothing written into the array yet: the next run's leading comma is left out.
    first: &'a mut bool,
}

impl<S: OfrepSink> Runs<'_, S> {
    /// Writes the run up to `to`.
    #[inline(always)]
    fn flush(&mut self, to: u32) {
        if self.from < to {
            let from = self.from + u32::from(std::mem::take(self.first));
            self.out.put(self.chunk.bytes(from..to));
        }
    }

    /// Leaves the flag of `pieces` out: the run ends before it and starts again after it.
    #[inline(always)]
    fn skip(&mut self, pieces: &OfrepPieces) {
        self.flush(pieces.answer.start);
        self.from = pieces.answer.end;
    }

    /// Writes the flag of `pieces` with `rest` after its key instead of its usual answer.
    #[inline(always)]
    fn replace(&mut self, pieces: &OfrepPieces, rest: &[u8]) {
        self.flush(pieces.key_end);
        self.out.put(rest);
        self.from = pieces.answer.end;
    }

    /// Writes the rest of the chunk's run.
    #[inline(always)]
    fn finish(mut self) {
        self.flush(self.chunk.answers_end);
    }
}

impl Snapshot {
    /// At least as many bytes as [`Snapshot::write_ofrep_flags_json`] writes for any context (the answers'
    /// pieces are serialized now if they were not yet), so that a buffer is allocated once.
    pub fn ofrep_json_bound(&self) -> usize {
        2 + self
            .chunks
            .iter()
            .map(|chunk| chunk.ofrep_chunk(&self.projects).bound)
            .sum::<usize>()
    }

    /// Writes OFREP's bulk `flags` array for `ctx`: every flag of the projects in scope, on or off, in name
    /// order, each its answer or `{key, errorCode: TARGETING_KEY_MISSING, …}`. Calls `evaluated` with the
    /// index and outcome of each flag it evaluated (for counting). Returns a fingerprint of what it wrote
    /// (equal output, equal fingerprint, in any process and snapshot), for the ETag.
    pub fn write_ofrep_flags_json(
        &self,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<u8>,
        evaluated: impl FnMut(usize, bool),
    ) -> u64 {
        self.write_ofrep_flags(ctx, projects, out, evaluated)
    }

    /// The length and the fingerprint of what [`Snapshot::write_ofrep_flags_json`] would write for `ctx`
    /// (the same evaluation, calling `evaluated` the same way), without writing it: an ETag to compare
    /// with a client's `If-None-Match` before any answer is written.
    pub fn ofrep_flags_etag(
        &self,
        ctx: &Context,
        projects: &Projects,
        evaluated: impl FnMut(usize, bool),
    ) -> (usize, u64) {
        let mut length = Length(0);
        let fingerprint = self.write_ofrep_flags(ctx, projects, &mut length, evaluated);
        (length.0, fingerprint)
    }

    #[inline(always)]
    fn write_ofrep_flags(
        &self,
        ctx: &Context,
        projects: &Projects,
        out: &mut impl OfrepSink,
        mut evaluated: impl FnMut(usize, bool),
    ) -> u64 {
        let mut fingerprint = rustc_hash::FxHasher::default();
        let no_user_id = ctx.user_id.is_none();
        out.put(b"[");
        let mut first = true;
        self.for_each_chunk(ctx, projects, |start, chunk, mask, e| {
            let ofrep = chunk.ofrep_chunk(&self.projects);
            let mut runs = Runs {
                chunk: ofrep,
                out: &mut *out,
                from: 0,
                first: &mut first,
            };
            for (offset, (f, pieces)) in chunk.features.iter().zip(ofrep.flags.iter()).enumerate() {
                if !in_scope(mask, f) {
                    runs.skip(pieces);
                    continue;
                }
                let hash = if no_user_id && f.ofrep.needs_user_id {
                    runs.replace(pieces, MISSING_KEY_REST.as_bytes());
                    ofrep.rests[offset].missing_key_hash
                } else {
                    let (enabled, variant) = match self.decided(chunk, f, e) {
                        Resolution::Off => (false, None),
                        Resolution::On(by) => (true, chunk.variant_of(f, by, e)),
                    };
                    evaluated(start + offset, enabled);
                    let (rest, hash) = ofrep.unusual_rest(offset, pieces, enabled, variant);
                    if let Some(rest) = rest {
                        runs.replace(pieces, rest);
                    }
                    hash
                };
                fingerprint.write_u64(hash);
            }
            runs.finish();
        });
        out.put(b"]");
        fingerprint.finish()
    }

    /// Writes the OFREP answer of the flag `name` for `ctx`, when it exists in the projects in scope and the
    /// context has what its strategies need.
    pub fn write_ofrep_flag_json(
        &self,
        name: &str,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<u8>,
    ) -> OfrepFlag {
        let Some(&index) = self.by_name.get(name) else {
            return OfrepFlag::NotFound;
        };
        let (chunk, f) = self.locate(index);
        if !projects.includes(&self.projects[f.project as usize]) {
            return OfrepFlag::NotFound;
        }
        if ctx.user_id.is_none() && f.ofrep.needs_user_id {
            return OfrepFlag::TargetingKeyMissing;
        }
        let offset = (index - self.starts[self.chunk_of(index)]) as usize;
        let ofrep = chunk.ofrep_chunk(&self.projects);
        let (enabled, variant) = self.with_evaluation(ctx, |e| match self.resolved(chunk, f, e) {
            Resolution::Off => (false, None),
            Resolution::On(by) => (true, chunk.variant_of(f, by, e)),
        });
        ofrep.write_one(offset, enabled, variant, out);
        OfrepFlag::Written {
            index: index as usize,
            enabled,
        }
    }
}
