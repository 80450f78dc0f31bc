//! OpenFeature's remote evaluation protocol (OFREP): a flag's answer `{"key","value","variant","reason",
//! "metadata"}` written from the compiled snapshot, one flag or every flag in scope in one pass, like the
//! frontend API's `toggles` (`toggles`). What a flag's answer needs beyond the evaluation is decided when it is
//! compiled ([`OfrepTraits`]: a handful of booleans) or serialized on first use and kept for the life of its
//! chunk or variant (its key, its metadata, a variant's value): compiling a snapshot costs nothing more for
//! servers that never answer OFREP, and a request only copies bytes.
//!
//! The answer's `value` is the variant's payload by its type (`number` a number, `json` the JSON value, any
//! other type or a payload that does not parse as its type a string), a variant without payload its name,
//! and a flag without a variant a boolean. Its `reason`: `DISABLED` (off in the environment), `DEFAULT` (on,
//! no strategy matched), `SPLIT` (a variant chosen among several), `STATIC` (on for everyone: no strategy, or
//! only unconstrained `default`/100 % rollouts), else `TARGETING_MATCH`.

use std::hash::Hasher;

use super::evaluate::{Projects, Resolution};
use super::hash::text_hash;
use super::snapshot::{
    Chunk, CompiledFeature, OfrepChunk, OfrepPiece, OfrepPieces, OfrepTraits, Snapshot,
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

const MISSING_KEY_DETAILS: &str = "this flag's strategies need a targetingKey (or userId)";

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
    /// `"value":…,"variant":…` for this variant, serialized on first use.
    fn ofrep_json(&self) -> &str {
        self.ofrep_json.get_or_init(|| {
            let value = self
                .payload
                .as_ref()
                .map_or_else(|| json_string(&self.name), payload_json);
            format!(r#""value":{value},"variant":{}"#, json_string(&self.name)).into()
        })
    }
}

/// Appends `piece` to `text`, hashed as `hashed` (the piece itself when `None`).
fn push_piece(text: &mut String, piece: &str, hashed: Option<&str>) -> OfrepPiece {
    let start = text.len() as u32;
    text.push_str(piece);
    OfrepPiece {
        start,
        end: text.len() as u32,
        hash: text_hash(hashed.unwrap_or(piece)),
    }
}

impl Chunk {
    fn ofrep_chunk(&self, projects: &[Box<str>]) -> &OfrepChunk {
        self.ofrep.get_or_init(|| {
            let mut text = String::new();
            let flags = self
                .features
                .iter()
                .map(|f| {
                    let key = json_string(&f.name);
                    let project = projects.get(f.project as usize).map_or("", |p| &**p);
                    let metadata = format!(
                        r#""metadata":{{"project":{},"impressionData":{}}}}}"#,
                        json_string(project),
                        f.impression_data
                    );
                    let whole = |value: &str, variant: &str, enabled: bool| {
                        let reason = f.ofrep.reason(enabled, false);
                        format!(
                            r#"{{"key":{key},"value":{value},"variant":"{variant}","reason":"{reason}",{metadata}"#
                        )
                    };
                    let missing_key = format!(
                        r#"{{"key":{key},"errorCode":"TARGETING_KEY_MISSING","errorDetails":{}}}"#,
                        json_string(MISSING_KEY_DETAILS)
                    );
                    let tail = format!(r#","reason":"{}",{metadata}"#, f.ofrep.reason(true, true));
                    OfrepPieces {
                        off: push_piece(&mut text, &whole("false", "disabled", false), None),
                        on: push_piece(&mut text, &whole("true", "enabled", true), None),
                        missing_key: push_piece(&mut text, &missing_key, None),
                        head: push_piece(&mut text, &format!(r#"{{"key":{key},"#), None),
                        variant_tail: push_piece(&mut text, &tail, Some(&format!("{key}{tail}"))),
                    }
                })
                .collect::<Box<[OfrepPieces]>>();
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
                .zip(self.features.iter())
                .map(|(p, f)| {
                    let len = |piece: OfrepPiece| (piece.end - piece.start) as usize;
                    let with_variant = len(p.head) + longest_variant(f) + len(p.variant_tail);
                    1 + len(p.off).max(len(p.on)).max(len(p.missing_key)).max(with_variant)
                })
                .sum();
            OfrepChunk {
                text: text.into(),
                flags,
                bound,
            }
        })
    }
}

impl OfrepChunk {
    fn piece(&self, piece: OfrepPiece) -> &[u8] {
        &self.text.as_bytes()[piece.start as usize..piece.end as usize]
    }

    /// Writes the answer of the flag at `offset`, evaluated; returns its part of the fingerprint.
    #[inline(always)]
    fn write_answer(
        &self,
        offset: usize,
        enabled: bool,
        variant: Option<&CompiledVariant>,
        out: &mut Vec<u8>,
    ) -> u64 {
        let pieces = &self.flags[offset];
        match variant {
            Some(v) => {
                out.extend_from_slice(self.piece(pieces.head));
                out.extend_from_slice(v.ofrep_json().as_bytes());
                out.extend_from_slice(self.piece(pieces.variant_tail));
                pieces.variant_tail.hash ^ v.json_hash.rotate_left(17)
            }
            None => {
                let piece = if enabled { pieces.on } else { pieces.off };
                out.extend_from_slice(self.piece(piece));
                piece.hash
            }
        }
    }

    /// Writes the flag's `TARGETING_KEY_MISSING` answer; returns its part of the fingerprint.
    fn write_missing_key(&self, offset: usize, out: &mut Vec<u8>) -> u64 {
        let piece = self.flags[offset].missing_key;
        out.extend_from_slice(self.piece(piece));
        piece.hash
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
        mut evaluated: impl FnMut(usize, bool),
    ) -> u64 {
        let mut fingerprint = rustc_hash::FxHasher::default();
        let no_user_id = ctx.user_id.is_none();
        out.push(b'[');
        let mut first = true;
        self.for_each_in_scope(ctx, projects, |index, chunk, offset, f, e| {
            let pieces = chunk.ofrep_chunk(&self.projects);
            if !first {
                out.push(b',');
            }
            first = false;
            if no_user_id && f.ofrep.needs_user_id {
                fingerprint.write_u64(pieces.write_missing_key(offset, out));
                return;
            }
            let (enabled, variant) = match self.resolved(chunk, f, e) {
                Resolution::Off => (false, None),
                Resolution::On(by) => (true, chunk.variant_of(f, by, e)),
            };
            evaluated(index, enabled);
            fingerprint.write_u64(pieces.write_answer(offset, enabled, variant, out));
        });
        out.push(b']');
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
        let pieces = chunk.ofrep_chunk(&self.projects);
        let (enabled, variant) = self.with_evaluation(ctx, |e| match self.resolved(chunk, f, e) {
            Resolution::Off => (false, None),
            Resolution::On(by) => (true, chunk.variant_of(f, by, e)),
        });
        pieces.write_answer(offset, enabled, variant, out);
        OfrepFlag::Written {
            index: index as usize,
            enabled,
        }
    }
}
