//! The serving snapshot: everything the SDK-facing API needs at one revision, immutable once built.
//!
//! A [`ServingSnapshot`] is built from a `vexil.v1.Full` and advanced by applying a `vexil.v1.Delta` into a
//! NEW value (the old one keeps serving the requests that hold it); the holder swaps it in with
//! `ArcSwap::store`, so requests never lock. Environments a delta does not touch are shared by `Arc`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use vexil_proto::v1;
use vexil_shared::model::{Feature, FeaturesDocument, Segment};
use vexil_shared::token::{lowercase_hex, SecretHash, TokenKind};
use vexil_shared::{CompileOptions, Projects, Snapshot};

use crate::change_feed::{ChangeLog, EnvironmentChange, RevisionChange};
use crate::client_documents::ClientDocuments;
use crate::evaluation_counters::EvaluationCounters;

/// A token's scope, as the edge knows it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    /// Client or frontend; an admin token is known only so that it is refused with 403 rather than 401.
    pub kind: TokenKind,
    pub projects: Projects,
    /// Shared, as `projects` and `ofrep_channel`: a request's scope holds a clone of its grant.
    pub environment: Arc<str>,
    /// Milliseconds since the Unix epoch; `None`: never expires.
    pub expires_at_ms: Option<i64>,
    /// The channel of its OFREP event stream, which OFREP bulk answers name (frontend tokens only may
    /// open it): a digest of its hash, worked out once here rather than on every answer.
    pub ofrep_channel: Arc<str>,
}

impl TokenGrant {
    /// The grant of the token whose secret's hash is `hash` (`None`: the anonymous grant of
    /// authentication `none`, whose channel is `anonymous`).
    pub fn new(
        hash: Option<&SecretHash>,
        kind: TokenKind,
        projects: Projects,
        environment: String,
        expires_at_ms: Option<i64>,
    ) -> TokenGrant {
        TokenGrant {
            kind,
            projects,
            environment: environment.into(),
            expires_at_ms,
            ofrep_channel: ofrep_channel_of(hash).into(),
        }
    }
}

/// The channel of a token's OFREP event stream: a digest of its hash (not the hash: the URL is no credential
/// for any other API); `anonymous` under authentication `none`.
fn ofrep_channel_of(hash: Option<&SecretHash>) -> String {
    match hash {
        None => "anonymous".to_owned(),
        Some(hash) => {
            let mut digest = Sha256::new();
            digest.update(b"vexil-ofrep-events\0");
            digest.update(hash);
            lowercase_hex(&digest.finalize())
        }
    }
}

/// Settings of the SDK-facing API that come from the control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Allowed `Origin`s of the frontend API; `*` (or none) allows every origin.
    pub frontend_api_origins: Vec<String>,
    pub frontend_api_enabled: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            frontend_api_origins: vec!["*".to_owned()],
            frontend_api_enabled: true,
        }
    }
}

/// A flag of an environment view, shared by the views of successive snapshots (a delta copies the map, not
/// the flags).
pub type SharedFeature = Arc<Feature>;

/// One environment's configuration: its document (by name and by id) and the compiled engine.
#[derive(Debug)]
pub struct EnvironmentView {
    pub name: String,
    pub features: BTreeMap<Arc<str>, SharedFeature>,
    pub segments: BTreeMap<i64, Segment>,
    pub engine: Snapshot,
    /// The evaluations answered from this view, per flag (when the server counts them).
    pub evaluations: EvaluationCounters,
}

impl EnvironmentView {
    fn new(
        name: String,
        features: BTreeMap<Arc<str>, SharedFeature>,
        segments: BTreeMap<i64, Segment>,
        engine: Snapshot,
    ) -> EnvironmentView {
        EnvironmentView {
            name,
            features,
            segments,
            evaluations: EvaluationCounters::new(&engine),
            engine,
        }
    }

    /// An environment from a features document (offline mode).
    pub fn from_document(
        name: &str,
        doc: FeaturesDocument,
        options: &CompileOptions,
    ) -> EnvironmentView {
        let engine = Snapshot::compile_with(&doc, options);
        EnvironmentView::new(
            name.to_owned(),
            doc.features
                .into_iter()
                .map(|f| (f.name.as_str().into(), Arc::new(f)))
                .collect(),
            doc.segments.into_iter().map(|s| (s.id, s)).collect(),
            engine,
        )
    }

    /// An environment without flags or segments (one a token names but the snapshot does not hold).
    pub fn empty(name: &str) -> EnvironmentView {
        EnvironmentView::from_document(
            name,
            FeaturesDocument::default(),
            &CompileOptions::default(),
        )
    }

    /// The project of a flag, if the flag exists here.
    pub fn project_of(&self, flag: &str) -> Option<&str> {
        self.features.get(flag).map(|f| f.project.as_str())
    }
}

fn document(
    features: &BTreeMap<Arc<str>, SharedFeature>,
    segments: &BTreeMap<i64, Segment>,
) -> FeaturesDocument {
    FeaturesDocument {
        version: 2,
        features: features.values().map(|f| (**f).clone()).collect(),
        segments: segments.values().cloned().collect(),
    }
}

/// Everything served at one revision.
#[derive(Debug, Default)]
pub struct ServingSnapshot {
    pub revision: u64,
    pub environments: FxHashMap<String, Arc<EnvironmentView>>,
    /// By the SHA-256 of their secrets.
    pub tokens: FxHashMap<SecretHash, TokenGrant>,
    pub settings: Settings,
    /// What the last advances touched, up to this revision (see [`crate::change_feed`]).
    pub changes: ChangeLog,
    /// The client API's documents served from this snapshot (built when first asked for).
    pub client_documents: ClientDocuments,
}

/// A delta that does not start at the snapshot's revision: the subscriber must resubscribe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionGap {
    pub have: u64,
    pub delta_from: u64,
}

impl std::fmt::Display for RevisionGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a delta from revision {} cannot apply to revision {}",
            self.delta_from, self.have
        )
    }
}

impl ServingSnapshot {
    /// The snapshot a `Full` describes.
    pub fn from_full(full: v1::Full, options: &CompileOptions) -> ServingSnapshot {
        let environments = full
            .environments
            .into_iter()
            .map(|state| {
                let name = state.environment.clone();
                let doc = vexil_proto::document_of(state);
                (
                    name.clone(),
                    Arc::new(EnvironmentView::from_document(&name, doc, options)),
                )
            })
            .collect();
        ServingSnapshot {
            revision: full.revision,
            environments,
            tokens: full.tokens.into_iter().filter_map(grant_of).collect(),
            settings: full.settings.map(settings_of).unwrap_or_default(),
            changes: ChangeLog::starting_at(full.revision),
            client_documents: ClientDocuments::default(),
        }
    }

    /// A new snapshot: this one with `delta` applied. Environments it does not touch are shared; in those
    /// it touches, only the engine chunks of the changed flags are compiled again (see
    /// [`Snapshot::update`]), so the cost follows the size of the change, not the number of flags.
    pub fn apply(
        &self,
        delta: v1::Delta,
        options: &CompileOptions,
    ) -> Result<ServingSnapshot, RevisionGap> {
        if delta.from_revision != self.revision {
            return Err(RevisionGap {
                have: self.revision,
                delta_from: delta.from_revision,
            });
        }
        let mut environments = self.environments.clone();
        let mut touched = RevisionChange {
            from: delta.from_revision,
            to: delta.to_revision,
            environments: Default::default(),
        };
        for change in delta.environments {
            let previous = environments.get(&change.environment);
            let project_before =
                |name: &str| previous.and_then(|view| view.project_of(name).map(str::to_owned));
            let mut record = EnvironmentChange::default();
            for name in change
                .removed_features
                .iter()
                .chain(change.upserted_features.iter().map(|f| &f.name))
            {
                record
                    .features
                    .push((name.as_str().into(), project_before(name)));
            }
            record
                .segments
                .extend(change.removed_segments.iter().copied());
            record
                .segments
                .extend(change.upserted_segments.iter().map(|s| s.id));
            touched
                .environments
                .insert(change.environment.clone(), record);
            let (mut features, mut segments) = match previous {
                Some(view) => (view.features.clone(), view.segments.clone()),
                None => (BTreeMap::new(), BTreeMap::new()),
            };
            let mut changed: Vec<Arc<str>> =
                Vec::with_capacity(change.removed_features.len() + change.upserted_features.len());
            for name in &change.removed_features {
                features.remove(name.as_str());
                changed.push(name.as_str().into());
            }
            for feature in change.upserted_features {
                let feature: Feature = feature.into();
                let name: Arc<str> = feature.name.as_str().into();
                features.insert(name.clone(), Arc::new(feature));
                changed.push(name);
            }
            let segments_changed =
                !(change.removed_segments.is_empty() && change.upserted_segments.is_empty());
            for id in &change.removed_segments {
                segments.remove(id);
            }
            for segment in change.upserted_segments {
                let segment: Segment = segment.into();
                segments.insert(segment.id, segment);
            }
            // Only the changed flags' chunks are compiled again, unless segments changed (strategies
            // carry their segments' constraints) or the engine declines.
            let updated = previous.filter(|_| !segments_changed).and_then(|view| {
                let names: Vec<&str> = changed.iter().map(|n| &**n).collect();
                view.engine.update(
                    &names,
                    |name| features.get(name).map(|f| &**f),
                    segments.values(),
                    options,
                )
            });
            let engine = updated.unwrap_or_else(|| {
                Snapshot::compile_parts(features.values().map(|f| &**f), segments.values(), options)
            });
            let name = change.environment;
            let view = EnvironmentView::new(name.clone(), features, segments, engine);
            environments.insert(name, Arc::new(view));
        }
        let mut tokens = self.tokens.clone();
        for hash in &delta.removed_tokens {
            if let Ok(hash) = SecretHash::try_from(hash.as_slice()) {
                tokens.remove(&hash);
            }
        }
        tokens.extend(delta.upserted_tokens.into_iter().filter_map(grant_of));
        Ok(ServingSnapshot {
            revision: delta.to_revision,
            environments,
            tokens,
            settings: delta
                .settings
                .map(settings_of)
                .unwrap_or_else(|| self.settings.clone()),
            changes: self.changes.followed_by(touched),
            client_documents: ClientDocuments::default(),
        })
    }

    /// This snapshot as a `Full` (what the edge writes to its cache file).
    pub fn to_full(&self) -> v1::Full {
        let mut environments: Vec<&Arc<EnvironmentView>> = self.environments.values().collect();
        environments.sort_by(|a, b| a.name.cmp(&b.name));
        v1::Full {
            revision: self.revision,
            environments: environments
                .into_iter()
                .map(|view| {
                    vexil_proto::environment_state(
                        &view.name,
                        document(&view.features, &view.segments),
                    )
                })
                .collect(),
            tokens: self
                .tokens
                .iter()
                .map(|(hash, grant)| grant.to_wire(hash))
                .collect(),
            settings: Some(v1::Settings {
                frontend_api_origins: self.settings.frontend_api_origins.clone(),
                frontend_api_enabled: self.settings.frontend_api_enabled,
            }),
        }
    }
}

fn grant_of(grant: v1::TokenGrant) -> Option<(SecretHash, TokenGrant)> {
    let hash = SecretHash::try_from(grant.sha256.as_slice()).ok()?;
    let kind = TokenKind::try_from(v1::TokenKind::try_from(grant.kind).ok()?).ok()?;
    let grant = TokenGrant::new(
        Some(&hash),
        kind,
        Projects::from_list(&grant.projects),
        grant.environment,
        grant.expires_at_ms,
    );
    Some((hash, grant))
}

impl TokenGrant {
    /// The grant of the token whose secret's hash is `hash`, as the gRPC contract carries it.
    pub fn to_wire(&self, hash: &SecretHash) -> v1::TokenGrant {
        v1::TokenGrant {
            sha256: hash.to_vec(),
            kind: v1::TokenKind::from(self.kind) as i32,
            projects: self.projects.to_list(),
            environment: self.environment.to_string(),
            expires_at_ms: self.expires_at_ms,
        }
    }
}

fn settings_of(settings: v1::Settings) -> Settings {
    Settings {
        frontend_api_origins: settings.frontend_api_origins,
        frontend_api_enabled: settings.frontend_api_enabled,
    }
}

/// What differs between two snapshots (a whole snapshot loaded over another): the flags and segments whose
/// value differs, per environment.
pub fn difference(before: &ServingSnapshot, after: &ServingSnapshot) -> RevisionChange {
    let empty = EnvironmentView::empty("");
    let mut environments = FxHashMap::default();
    let names: BTreeSet<&String> = before
        .environments
        .keys()
        .chain(after.environments.keys())
        .collect();
    for name in names {
        let old = before.environments.get(name).map_or(&empty, |view| &**view);
        let new = after.environments.get(name).map_or(&empty, |view| &**view);
        if std::ptr::eq(old, new) {
            continue;
        }
        let mut change = EnvironmentChange::default();
        let flags: BTreeSet<&Arc<str>> = old.features.keys().chain(new.features.keys()).collect();
        for flag in flags {
            let was = old.features.get(flag);
            let is = new.features.get(flag);
            let same = match (was, is) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => false,
            };
            if !same {
                change
                    .features
                    .push((flag.clone(), was.map(|f| f.project.clone())));
            }
        }
        let ids: BTreeSet<&i64> = old.segments.keys().chain(new.segments.keys()).collect();
        for id in ids {
            if old.segments.get(id) != new.segments.get(id) {
                change.segments.push(*id);
            }
        }
        if !(change.features.is_empty() && change.segments.is_empty()) {
            environments.insert(name.clone(), change);
        }
    }
    RevisionChange {
        from: before.revision,
        to: after.revision,
        environments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vexil_shared::token::sha256;
    use vexil_shared::Context;

    #[test]
    fn a_grants_ofrep_channel_is_a_digest_of_its_hash_not_the_hash() {
        let grant = |hash: Option<&SecretHash>| {
            TokenGrant::new(
                hash,
                TokenKind::Frontend,
                Projects::All,
                "development".to_owned(),
                None,
            )
            .ofrep_channel
        };
        let one = sha256("default:development.one");
        let two = sha256("default:development.two");
        assert_eq!(&*grant(None), "anonymous");
        assert_eq!(grant(Some(&one)).len(), 64);
        assert!(grant(Some(&one)).bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(&*grant(Some(&one)), lowercase_hex(&one), "not the hash");
        assert_eq!(grant(Some(&one)), grant(Some(&one)));
        assert_ne!(grant(Some(&one)), grant(Some(&two)));
    }

    fn feature(name: &str, enabled: bool) -> v1::Feature {
        v1::Feature {
            name: name.to_owned(),
            project: "default".to_owned(),
            enabled,
            ..Default::default()
        }
    }

    fn full() -> v1::Full {
        v1::Full {
            revision: 3,
            environments: vec![
                v1::EnvironmentState {
                    environment: "development".to_owned(),
                    features: vec![feature("a", true), feature("b", true)],
                    segments: vec![],
                },
                v1::EnvironmentState {
                    environment: "production".to_owned(),
                    features: vec![feature("a", false)],
                    segments: vec![],
                },
            ],
            tokens: vec![v1::TokenGrant {
                sha256: sha256("default:development.x").to_vec(),
                kind: v1::TokenKind::Frontend as i32,
                projects: vec!["default".to_owned()],
                environment: "development".to_owned(),
                expires_at_ms: None,
            }],
            settings: None,
        }
    }

    fn enabled(snapshot: &ServingSnapshot, environment: &str) -> Vec<String> {
        snapshot.environments[environment]
            .engine
            .evaluate_all(&Context::default(), &Projects::All)
            .iter()
            .map(|t| t.name.to_owned())
            .collect()
    }

    #[test]
    fn a_delta_makes_a_new_snapshot_and_shares_untouched_environments() {
        let options = CompileOptions::default();
        let first = ServingSnapshot::from_full(full(), &options);
        assert_eq!(enabled(&first, "development"), ["a", "b"]);
        let delta = v1::Delta {
            from_revision: 3,
            to_revision: 4,
            environments: vec![v1::EnvironmentDelta {
                environment: "development".to_owned(),
                upserted_features: vec![feature("c", true)],
                removed_features: vec!["a".to_owned()],
                ..Default::default()
            }],
            upserted_tokens: vec![],
            removed_tokens: vec![sha256("default:development.x").to_vec()],
            settings: Some(v1::Settings {
                frontend_api_origins: vec![],
                frontend_api_enabled: false,
            }),
        };
        let second = first.apply(delta, &options).expect("applies");
        assert_eq!(second.revision, 4);
        assert_eq!(enabled(&second, "development"), ["b", "c"]);
        assert_eq!(
            enabled(&first, "development"),
            ["a", "b"],
            "the old value is untouched"
        );
        assert!(Arc::ptr_eq(
            &first.environments["production"],
            &second.environments["production"]
        ));
        assert!(second.tokens.is_empty());
        assert!(!second.settings.frontend_api_enabled);
    }

    #[test]
    fn a_changed_segment_reaches_the_flags_that_use_it() {
        let options = CompileOptions::default();
        let segment = |user: &str| v1::Segment {
            id: 1,
            name: Some("beta".to_owned()),
            constraints: vec![v1::Constraint {
                context_name: "userId".to_owned(),
                operator: "IN".to_owned(),
                values: vec![user.to_owned()],
                ..Default::default()
            }],
        };
        let mut gated = feature("gated", true);
        gated.strategies = vec![v1::Strategy {
            name: "default".to_owned(),
            segments: vec![1],
            ..Default::default()
        }];
        let mut first = full();
        first.environments[0].features.push(gated);
        first.environments[0].segments.push(segment("u1"));
        let first = ServingSnapshot::from_full(first, &options);
        let on_for = |snapshot: &ServingSnapshot, user: &str| {
            let ctx: Context =
                serde_json::from_value(serde_json::json!({ "userId": user })).unwrap();
            snapshot.environments["development"]
                .engine
                .is_enabled("gated", &ctx)
        };
        assert!(on_for(&first, "u1") && !on_for(&first, "u2"));
        let second = first
            .apply(
                v1::Delta {
                    from_revision: 3,
                    to_revision: 4,
                    environments: vec![v1::EnvironmentDelta {
                        environment: "development".to_owned(),
                        upserted_segments: vec![segment("u2")],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                &options,
            )
            .expect("applies");
        assert!(!on_for(&second, "u1") && on_for(&second, "u2"));
        // A flag change next to it is applied incrementally and still sees the new segment.
        let third = second
            .apply(
                v1::Delta {
                    from_revision: 4,
                    to_revision: 5,
                    environments: vec![v1::EnvironmentDelta {
                        environment: "development".to_owned(),
                        upserted_features: vec![feature("b", false)],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                &options,
            )
            .expect("applies");
        assert!(on_for(&third, "u2"));
        assert_eq!(enabled(&third, "development"), ["a"]);
    }

    #[test]
    fn a_delta_from_another_revision_is_refused() {
        let options = CompileOptions::default();
        let first = ServingSnapshot::from_full(full(), &options);
        let gap = first
            .apply(
                v1::Delta {
                    from_revision: 5,
                    to_revision: 6,
                    ..Default::default()
                },
                &options,
            )
            .unwrap_err();
        assert_eq!(
            gap,
            RevisionGap {
                have: 3,
                delta_from: 5
            }
        );
    }

    #[test]
    fn round_trips_through_a_full() {
        let options = CompileOptions::default();
        let first = ServingSnapshot::from_full(full(), &options);
        let again = ServingSnapshot::from_full(first.to_full(), &options);
        assert_eq!(again.revision, 3);
        assert_eq!(again.tokens, first.tokens);
        assert_eq!(
            again.environments["development"].features,
            first.environments["development"].features
        );
    }
}
