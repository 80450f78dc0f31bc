//! The frontend API's JSON of evaluated flags: an [`EvaluatedToggle`] serialized by serde, and the whole
//! `toggles` array written from pieces serialized at compile time.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::evaluate::{EvaluatedToggle, Projects};
use super::snapshot::Snapshot;
use super::variant;
use crate::context::Context;

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

impl Snapshot {
    /// At least as many bytes as [`Snapshot::write_toggles_json`] writes for any context.
    pub fn toggles_json_bound(&self) -> usize {
        self.toggles_json_bound
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
}

/// Stands for [`variant::DISABLED_VARIANT_OF_ENABLED_FLAG_JSON`] in fingerprints (any fixed value will do).
const DISABLED_VARIANT_HASH: u64 = 0x9e37_79b9_7f4a_7c15;

/// The start of a frontend toggle's JSON, up to its variant.
pub(super) fn toggle_json_head(name: &str, impression_data: bool) -> Box<str> {
    let name = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned());
    format!(r#"{{"name":{name},"enabled":true,"impressionData":{impression_data},"variant":"#)
        .into()
}
