//! The client API's features documents and delta answers (`client_delta`: a hydration, or the changes since
//! a revision) kept with their snapshot. Every server SDK and every downstream edge of one token scope polls
//! the same document, and after a change all of them fetch it within one refresh interval: it is serialized
//! once per revision and query, and compressed once per coding, instead of on every request (BENCHMARKS.md:
//! 5–10× the answers per second). A new snapshot starts with none, so nothing is ever stale.
//!
//! Kept by the whole query (environment, the token's projects, the filter), never by its hash, so that two
//! scopes can never be given each other's document. At most [`BUDGET`] bytes per snapshot: past it, documents
//! are built per request, as without this cache, so that varied queries cannot grow the edge's memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Bytes;
use rustc_hash::FxHashMap;

use crate::answer_encoding::Encoding;

/// The most bytes (plain and compressed) one snapshot keeps.
pub const BUDGET: usize = 32 << 20;

/// One snapshot's documents, by query.
#[derive(Default)]
pub struct ClientDocuments {
    entries: Mutex<FxHashMap<Box<[u8]>, Arc<Document>>>,
    bytes: AtomicUsize,
}

/// A document: its JSON, built by the first request that needs it (the others wait for it rather than
/// build it again), and its compressed forms, each made by the first request accepting it. `None`: it could
/// not be serialized (or compressed).
#[derive(Default)]
struct Document {
    plain: OnceLock<Option<Bytes>>,
    zstd: OnceLock<Option<Bytes>>,
    gzip: OnceLock<Option<Bytes>>,
}

/// A document's body as it is sent: in `encoding`, or plain when that is `None`.
#[derive(Debug, Clone)]
pub struct Answer {
    pub body: Bytes,
    pub encoding: Option<Encoding>,
}

impl Answer {
    /// `encoded` when there is one, else `plain`.
    fn of(plain: Bytes, encoded: Option<(Encoding, Bytes)>) -> Answer {
        match encoded {
            Some((encoding, body)) => Answer {
                body,
                encoding: Some(encoding),
            },
            None => Answer {
                body: plain,
                encoding: None,
            },
        }
    }
}

impl ClientDocuments {
    /// The document of `query` (the whole query, see the module) in the client's `encoding` where it gains
    /// from it, built by `build` if this snapshot does not have it yet; `None` when `build` failed.
    pub fn answer(
        &self,
        query: &[u8],
        encoding: Option<Encoding>,
        build: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<Answer> {
        let Some(document) = self.document(query) else {
            // Over budget: built for this request only.
            let plain = Bytes::from(build()?);
            let encoded = encoding
                .and_then(|encoding| Some((encoding, encoding.encode_answer(&plain)?.into())));
            return Some(Answer::of(plain, encoded));
        };
        let plain = document
            .plain
            .get_or_init(|| {
                let plain = Bytes::from(build()?);
                self.bytes.fetch_add(plain.len(), Ordering::Relaxed);
                Some(plain)
            })
            .clone()?;
        let encoded = encoding.and_then(|encoding| {
            let slot = match encoding {
                Encoding::Zstd => &document.zstd,
                Encoding::Gzip => &document.gzip,
            };
            let body = slot
                .get_or_init(|| {
                    let body = Bytes::from(encoding.encode_answer(&plain)?);
                    self.bytes.fetch_add(body.len(), Ordering::Relaxed);
                    Some(body)
                })
                .clone()?;
            Some((encoding, body))
        });
        Some(Answer::of(plain, encoded))
    }

    /// The entry of `query`, new if there is room; `None` when there is none and the budget is spent.
    fn document(&self, query: &[u8]) -> Option<Arc<Document>> {
        // A poisoned lock only means another request panicked while holding it: the map is still whole.
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(document) = entries.get(query) {
            return Some(document.clone());
        }
        if self.bytes.load(Ordering::Relaxed) >= BUDGET {
            return None;
        }
        let document = Arc::new(Document::default());
        entries.insert(query.into(), document.clone());
        Some(document)
    }
}

impl std::fmt::Debug for ClientDocuments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientDocuments")
            .field("bytes", &self.bytes.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// A query written so that two different queries are never written alike: each part preceded by its length.
#[derive(Debug, Default)]
pub struct QueryKey(Vec<u8>);

impl QueryKey {
    /// Appends `part`.
    pub fn push(&mut self, part: &[u8]) {
        self.0.extend_from_slice(&(part.len() as u64).to_le_bytes());
        self.0.extend_from_slice(part);
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(n: usize) -> Vec<u8> {
        format!("[{}]", vec!["{\"name\":\"flag\"}"; n].join(",")).into_bytes()
    }

    #[test]
    fn a_query_is_built_once_and_each_coding_made_once() {
        let documents = ClientDocuments::default();
        let mut builds = 0;
        for encoding in [None, Some(Encoding::Zstd), Some(Encoding::Gzip), None] {
            let answer = documents
                .answer(b"q", encoding, || {
                    builds += 1;
                    Some(document(200))
                })
                .unwrap();
            assert_eq!(answer.encoding, encoding);
            match encoding {
                None => assert_eq!(answer.body, document(200)),
                Some(Encoding::Zstd) => {
                    assert_eq!(zstd::decode_all(&answer.body[..]).unwrap(), document(200))
                }
                Some(Encoding::Gzip) => {
                    let mut plain = Vec::new();
                    std::io::Read::read_to_end(
                        &mut flate2::read::GzDecoder::new(&answer.body[..]),
                        &mut plain,
                    )
                    .unwrap();
                    assert_eq!(plain, document(200));
                }
            }
        }
        assert_eq!(builds, 1);
    }

    #[test]
    fn queries_written_alike_only_when_equal() {
        let key = |parts: &[&str]| {
            let mut key = QueryKey::default();
            parts.iter().for_each(|p| key.push(p.as_bytes()));
            key.0
        };
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
        assert_ne!(key(&["a\0", ""]), key(&["a", "\0"]));
        assert_eq!(key(&["a", "b"]), key(&["a", "b"]));
    }

    #[test]
    fn past_the_budget_documents_are_built_each_time() {
        let documents = ClientDocuments::default();
        let big = vec![b' '; BUDGET];
        documents
            .answer(b"big", None, || Some(big.clone()))
            .unwrap();
        let mut builds = 0;
        for _ in 0..2 {
            let answer = documents
                .answer(b"other", None, || {
                    builds += 1;
                    Some(b"[]".to_vec())
                })
                .unwrap();
            assert_eq!(answer.body, &b"[]"[..]);
        }
        assert_eq!(builds, 2);
        // What it kept is still answered from memory.
        documents.answer(b"big", None, || unreachable!()).unwrap();
    }

    #[test]
    fn short_documents_go_plain_and_a_failed_build_answers_none() {
        let documents = ClientDocuments::default();
        let answer = documents
            .answer(b"q", Some(Encoding::Zstd), || Some(b"[]".to_vec()))
            .unwrap();
        assert_eq!(
            (answer.body, answer.encoding),
            (Bytes::from_static(b"[]"), None)
        );
        assert!(documents.answer(b"failed", None, || None).is_none());
    }
}
