//! What this edge holds of its upstream Unleash, and how it becomes served snapshots: per environment, the
//! document each startup token fetched (merged: a token with projects `a, b` contributes those projects'
//! flags), and the tokens learnt (validated or pretrusted), by hash. Every change is one
//! [`ServingState::advance`] by a `vexil.v1.Delta` naming only what changed, so the engine, the frontend
//! and client APIs, delta and streaming to SDKs and OFREP work on it unchanged.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use vexil_proto::v1;
use vexil_serving::snapshot::EnvironmentView;
use vexil_serving::{ServingState, SnapshotChange, TokenGrant};
use vexil_shared::model::{Feature, Segment};
use vexil_shared::token::{lowercase_hex, SecretHash, TokenKind};
use vexil_shared::{CompileOptions, FeaturesDocument, Projects};

/// What the backup holds: enough to serve as before, with no secret in it (tokens by hash).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Backup {
    pub revision: u64,
    /// Environment → startup token key → the document it fetched.
    pub documents: BTreeMap<String, BTreeMap<String, FeaturesDocument>>,
    pub tokens: Vec<BackedUpToken>,
}

/// A learnt token, by the hex SHA-256 of its secret.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BackedUpToken {
    pub sha256: String,
    pub kind: String,
    pub environment: String,
    pub projects: Vec<String>,
}

#[derive(Default)]
struct Held {
    documents: BTreeMap<String, BTreeMap<String, FeaturesDocument>>,
    tokens: BTreeMap<SecretHash, TokenGrant>,
}

/// The upstream's state as this edge holds it, and the serving state it feeds.
pub struct Mirror {
    serving: Arc<ServingState>,
    options: CompileOptions,
    settings: v1::Settings,
    held: Mutex<Held>,
}

impl Mirror {
    pub fn new(serving: Arc<ServingState>, cors_origins: Vec<String>) -> Mirror {
        Mirror {
            serving,
            options: CompileOptions::default(),
            settings: v1::Settings {
                frontend_api_origins: if cors_origins.is_empty() {
                    vec!["*".to_owned()]
                } else {
                    cors_origins
                },
                frontend_api_enabled: true,
            },
            held: Mutex::new(Held::default()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `document` is what the startup token `key` of `environment` now reads.
    pub fn set_document(&self, environment: &str, key: &str, document: FeaturesDocument) {
        let mut held = self.held();
        held.documents
            .entry(environment.to_owned())
            .or_default()
            .insert(key.to_owned(), document);
        self.publish_environment(&held, environment);
    }

    /// The startup token `key` of `environment` no longer reads anything (the upstream refused it).
    pub fn drop_document(&self, environment: &str, key: &str) {
        let mut held = self.held();
        if let Some(documents) = held.documents.get_mut(environment) {
            documents.remove(key);
        }
        self.publish_environment(&held, environment);
    }

    /// Serves these tokens (replacing earlier grants of the same hashes).
    pub fn upsert_tokens(&self, grants: Vec<(SecretHash, TokenGrant)>) {
        let mut held = self.held();
        let wire = grants
            .iter()
            .map(|(hash, grant)| grant.to_wire(hash))
            .collect();
        held.tokens.extend(grants);
        self.publish(&held, Vec::new(), wire, Vec::new());
    }

    /// Stops serving these tokens.
    pub fn remove_tokens(&self, hashes: &[SecretHash]) {
        let mut held = self.held();
        let removed: Vec<Vec<u8>> = hashes
            .iter()
            .filter(|hash| held.tokens.remove(*hash).is_some())
            .map(|hash| hash.to_vec())
            .collect();
        if !removed.is_empty() {
            self.publish(&held, Vec::new(), Vec::new(), removed);
        }
    }

    /// Whether the environment's documents are all fetched (or restored).
    pub fn has_documents(&self) -> bool {
        !self.held().documents.is_empty()
    }

    /// The state to back up.
    pub fn backup(&self) -> Backup {
        let held = self.held();
        Backup {
            revision: self
                .serving
                .current
                .load()
                .as_ref()
                .map_or(0, |s| s.revision),
            documents: held.documents.clone(),
            tokens: held
                .tokens
                .iter()
                .map(|(hash, grant)| BackedUpToken {
                    sha256: lowercase_hex(hash),
                    kind: grant.kind.as_str().to_owned(),
                    environment: grant.environment.to_string(),
                    projects: grant.projects.to_list(),
                })
                .collect(),
        }
    }

    /// Serves a backup (at start): its tokens until `tokens_expire_at_ms`, by when an SDK presenting one
    /// has it validated again (the backup holds no secret to revalidate it with).
    pub fn restore(&self, backup: Backup, tokens_expire_at_ms: i64) {
        let mut held = self.held();
        held.documents = backup.documents;
        for token in backup.tokens {
            let (Some(hash), Some(kind)) =
                (hash_of_hex(&token.sha256), TokenKind::parse(&token.kind))
            else {
                continue;
            };
            let grant = TokenGrant::new(
                Some(&hash),
                kind,
                Projects::from_list(&token.projects),
                token.environment,
                Some(tokens_expire_at_ms),
            );
            held.tokens.insert(hash, grant);
        }
        let full = self.full(&held, backup.revision.max(1));
        if let Err(error) = self
            .serving
            .advance(SnapshotChange::Full(full), &self.options)
        {
            tracing::warn!(%error, "cannot serve the backup");
        }
    }

    /// Publishes `environment`'s merged document (with what else is pending).
    fn publish_environment(&self, held: &Held, environment: &str) {
        let merged = merged(held.documents.get(environment));
        let current = self.serving.current.load_full();
        let view = current
            .as_ref()
            .and_then(|s| s.environments.get(environment));
        let change = environment_delta(environment, view.map(|v| &**v), merged);
        if current.is_some() && change.is_none() {
            return;
        }
        self.publish(held, change.into_iter().collect(), Vec::new(), Vec::new());
    }

    /// Advances the serving state by these changes; before any snapshot, by a whole one once there are
    /// documents (until then a change waits in `held`).
    fn publish(
        &self,
        held: &Held,
        environments: Vec<v1::EnvironmentDelta>,
        upserted_tokens: Vec<v1::TokenGrant>,
        removed_tokens: Vec<Vec<u8>>,
    ) {
        let change = match self.serving.current.load_full() {
            Some(current) => SnapshotChange::Delta(v1::Delta {
                from_revision: current.revision,
                to_revision: current.revision + 1,
                environments,
                upserted_tokens,
                removed_tokens,
                settings: None,
            }),
            None if held.documents.is_empty() => return,
            None => SnapshotChange::Full(self.full(held, 1)),
        };
        if let Err(error) = self.serving.advance(change, &self.options) {
            tracing::warn!(%error, "cannot apply the upstream's change");
        }
    }

    fn full(&self, held: &Held, revision: u64) -> v1::Full {
        v1::Full {
            revision,
            environments: held
                .documents
                .iter()
                .map(|(name, documents)| {
                    vexil_proto::environment_state(name, merged(Some(documents)))
                })
                .collect(),
            tokens: held
                .tokens
                .iter()
                .map(|(hash, grant)| grant.to_wire(hash))
                .collect(),
            settings: Some(self.settings.clone()),
        }
    }
}

/// One environment's documents as one: flags by name, segments by id.
fn merged(documents: Option<&BTreeMap<String, FeaturesDocument>>) -> FeaturesDocument {
    let mut features: BTreeMap<&str, &Feature> = BTreeMap::new();
    let mut segments: BTreeMap<i64, &Segment> = BTreeMap::new();
    for document in documents.into_iter().flat_map(BTreeMap::values) {
        features.extend(document.features.iter().map(|f| (f.name.as_str(), f)));
        segments.extend(document.segments.iter().map(|s| (s.id, s)));
    }
    FeaturesDocument {
        version: 2,
        features: features.into_values().cloned().collect(),
        segments: segments.into_values().cloned().collect(),
    }
}

/// What turns `view` into `document`; `None` when nothing differs.
fn environment_delta(
    environment: &str,
    view: Option<&EnvironmentView>,
    document: FeaturesDocument,
) -> Option<v1::EnvironmentDelta> {
    let empty = EnvironmentView::empty(environment);
    let view = view.unwrap_or(&empty);
    let mut change = v1::EnvironmentDelta {
        environment: environment.to_owned(),
        ..Default::default()
    };
    change.removed_features = view
        .features
        .keys()
        .filter(|name| !document.features.iter().any(|f| f.name == ***name))
        .map(|name| name.to_string())
        .collect();
    change.removed_segments = view
        .segments
        .keys()
        .filter(|id| !document.segments.iter().any(|s| s.id == **id))
        .copied()
        .collect();
    for feature in document.features {
        if view.features.get(feature.name.as_str()).map(|f| &**f) != Some(&feature) {
            change.upserted_features.push(feature.into());
        }
    }
    for segment in document.segments {
        if view.segments.get(&segment.id) != Some(&segment) {
            change.upserted_segments.push(segment.into());
        }
    }
    let unchanged = change.removed_features.is_empty()
        && change.removed_segments.is_empty()
        && change.upserted_features.is_empty()
        && change.upserted_segments.is_empty();
    (!unchanged).then_some(change)
}

fn hash_of_hex(hex: &str) -> Option<SecretHash> {
    if hex.len() != 64 {
        return None;
    }
    let mut hash = [0u8; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vexil_shared::token::sha256;

    fn document(flags: &[(&str, &str, bool)]) -> FeaturesDocument {
        let features: Vec<serde_json::Value> = flags
            .iter()
            .map(|(name, project, enabled)| {
                serde_json::json!({"name": name, "project": project, "enabled": enabled,
                    "strategies": [{"name": "default"}]})
            })
            .collect();
        FeaturesDocument::from_json(&serde_json::json!({"features": features}).to_string()).unwrap()
    }

    fn names(state: &ServingState, environment: &str) -> Vec<String> {
        let current = state.current.load_full().expect("a snapshot");
        current.environments[environment]
            .features
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    #[test]
    fn documents_of_an_environment_merge_and_each_change_is_one_advance() {
        let state = Arc::new(ServingState::new(false));
        let mirror = Mirror::new(state.clone(), vec![]);
        let hash = sha256("default:development.x");
        mirror.upsert_tokens(vec![(
            hash,
            TokenGrant::new(
                Some(&hash),
                TokenKind::Client,
                Projects::All,
                "development".to_owned(),
                None,
            ),
        )]);
        assert!(
            state.current.load().is_none(),
            "no snapshot before a document"
        );
        mirror.set_document("development", "a", document(&[("one", "a", true)]));
        assert_eq!(state.current.load().as_ref().unwrap().revision, 1);
        assert!(state
            .current
            .load()
            .as_ref()
            .unwrap()
            .tokens
            .contains_key(&hash));
        mirror.set_document("development", "b", document(&[("two", "b", true)]));
        assert_eq!(names(&state, "development"), ["one", "two"]);
        mirror.set_document("development", "b", document(&[("two", "b", true)]));
        assert_eq!(
            state.current.load().as_ref().unwrap().revision,
            2,
            "no change, no advance"
        );
        mirror.drop_document("development", "a");
        assert_eq!(names(&state, "development"), ["two"]);
        mirror.remove_tokens(&[hash]);
        assert!(state.current.load().as_ref().unwrap().tokens.is_empty());

        let backup = mirror.backup();
        let again = Arc::new(ServingState::new(false));
        Mirror::new(again.clone(), vec![]).restore(backup, 5);
        assert_eq!(names(&again, "development"), ["two"]);
        assert_eq!(again.current.load().as_ref().unwrap().revision, 4);
    }

    #[test]
    fn hex_hashes_round_trip() {
        let hash = sha256("x");
        assert_eq!(hash_of_hex(&lowercase_hex(&hash)), Some(hash));
        assert_eq!(hash_of_hex("zz"), None);
    }
}
