//! The published configuration at one revision, the delta between two of them, and the ring of recent
//! deltas that lets a reconnecting edge catch up without a full snapshot.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use vexil_proto::v1;

/// How many deltas are kept for reconnecting edges.
pub const DELTA_RING: usize = 256;

/// One environment's flags and segments, by name and id. Flags are shared by `Arc` between successive
/// configurations, so that a configuration that re-read a few flags copies pointers, not flags, and the
/// diff skips the shared ones by pointer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvironmentDoc {
    pub features: BTreeMap<String, Arc<v1::Feature>>,
    pub segments: BTreeMap<i64, Arc<v1::Segment>>,
}

/// The configuration read from the store at one revision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Configuration {
    pub revision: u64,
    pub environments: BTreeMap<String, EnvironmentDoc>,
    /// By SHA-256, every kind: the gRPC channel checks edge tokens here, and this process's own SDK APIs
    /// refuse admin and edge tokens with 403. An edge receives only the client and frontend tokens it may
    /// let in ([`EnvironmentFilter::admits_token`]), in [`Published::full`] and in the ring.
    pub tokens: BTreeMap<Vec<u8>, Arc<v1::TokenGrant>>,
    pub settings: v1::Settings,
}

/// What the publisher serves: the current configuration and the deltas that led to it, kept for the edges
/// (oldest first, each starting where the previous one ended).
#[derive(Debug, Default)]
pub struct Published {
    pub configuration: Configuration,
    pub deltas: VecDeque<Arc<KeptDelta>>,
}

/// A delta as kept for the edges: its tokens are the client and frontend ones only, and the removed ones
/// are kept with their grants, so that each edge is told only of the removal of tokens it had received.
#[derive(Debug)]
pub struct KeptDelta {
    /// Without `removed_tokens` (they are in `removed`).
    delta: v1::Delta,
    removed: Vec<Arc<v1::TokenGrant>>,
}

/// Whether an SDK may use the token: a client or frontend token (not an admin or edge token).
fn is_sdk_token(grant: &v1::TokenGrant) -> bool {
    grant.kind == v1::TokenKind::Client as i32 || grant.kind == v1::TokenKind::Frontend as i32
}

/// Which environments an edge serves: those it asked for, within its edge token's (empty: all).
pub struct EnvironmentFilter(pub Vec<String>);

impl EnvironmentFilter {
    fn admits(&self, environment: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|e| e == environment)
    }

    /// Whether an edge serving these environments may receive the token's grant: only one it may let in, a
    /// client or frontend token of one of them or of every environment. Admin and edge tokens (and personal
    /// access tokens, which are never published) are never sent: a stolen edge, or its cache file, must not
    /// give away a hash to guess an operator-chosen admin secret from, nor another environment's tokens.
    pub fn admits_token(&self, grant: &v1::TokenGrant) -> bool {
        is_sdk_token(grant) && (grant.environment == "*" || self.admits(&grant.environment))
    }
}

impl Published {
    pub fn first(configuration: Configuration) -> Published {
        Published {
            configuration,
            deltas: VecDeque::new(),
        }
    }

    /// The next value: `next` with the delta from the current configuration appended to the ring (as
    /// [`KeptDelta`]), and the whole delta (for this process's own SDK APIs).
    pub fn advance(&self, next: Configuration) -> (Published, Arc<v1::Delta>) {
        let delta = Arc::new(diff(&self.configuration, &next));
        let kept = KeptDelta {
            delta: v1::Delta {
                from_revision: delta.from_revision,
                to_revision: delta.to_revision,
                environments: delta.environments.clone(),
                upserted_tokens: delta
                    .upserted_tokens
                    .iter()
                    .filter(|grant| is_sdk_token(grant))
                    .cloned()
                    .collect(),
                removed_tokens: Vec::new(),
                settings: delta.settings.clone(),
            },
            removed: delta
                .removed_tokens
                .iter()
                .filter_map(|hash| self.configuration.tokens.get(hash))
                .filter(|grant| is_sdk_token(grant))
                .cloned()
                .collect(),
        };
        let mut deltas = self.deltas.clone();
        if deltas.len() == DELTA_RING {
            deltas.pop_front();
        }
        deltas.push_back(Arc::new(kept));
        (
            Published {
                configuration: next,
                deltas,
            },
            delta,
        )
    }

    pub fn revision(&self) -> u64 {
        self.configuration.revision
    }

    /// The updates that bring an edge at `revision` to the current one: none when it is current, the kept
    /// deltas when they cover it, else a full snapshot.
    pub fn catch_up(
        &self,
        revision: u64,
        filter: &EnvironmentFilter,
    ) -> Vec<v1::snapshot_update::Update> {
        if revision == self.revision() {
            return Vec::new();
        }
        if revision != 0 {
            if let Some(start) = self
                .deltas
                .iter()
                .position(|d| d.delta.from_revision == revision)
            {
                return self
                    .deltas
                    .iter()
                    .skip(start)
                    .map(|d| v1::snapshot_update::Update::Delta(filtered(d, filter)))
                    .collect();
            }
        }
        vec![v1::snapshot_update::Update::Full(self.full(filter))]
    }

    /// The updates for an edge that (re)subscribes at `revision`: [`Published::catch_up`], and the current
    /// settings whatever the revision. Settings come partly from start flags (`--frontend-api-enabled`), which
    /// a restarted control plane can change without a new revision, so an edge that resumes must be told
    /// them: a `Full` carries them, the last of the deltas gets them, and an edge already at this revision
    /// gets a delta from its revision to itself that carries only them.
    pub fn resume(
        &self,
        revision: u64,
        filter: &EnvironmentFilter,
    ) -> Vec<v1::snapshot_update::Update> {
        let settings = Some(self.configuration.settings.clone());
        let mut updates = self.catch_up(revision, filter);
        match updates.last_mut() {
            Some(v1::snapshot_update::Update::Delta(last)) => last.settings = settings,
            Some(_) => {}
            None => updates.push(v1::snapshot_update::Update::Delta(v1::Delta {
                from_revision: revision,
                to_revision: revision,
                settings,
                ..v1::Delta::default()
            })),
        }
        updates
    }

    /// The whole configuration as an edge receives it: restricted to the environments asked for and to the
    /// tokens it may let in ([`EnvironmentFilter::admits_token`]).
    pub fn full(&self, filter: &EnvironmentFilter) -> v1::Full {
        let mut full = self.full_with_edge_tokens(filter);
        full.tokens.retain(|grant| filter.admits_token(grant));
        full
    }

    /// The whole configuration with every token, admin and edge tokens included: what this process's own
    /// SDK APIs serve from (they answer 403 to those).
    pub fn full_with_edge_tokens(&self, filter: &EnvironmentFilter) -> v1::Full {
        let c = &self.configuration;
        v1::Full {
            revision: c.revision,
            environments: c
                .environments
                .iter()
                .filter(|(name, _)| filter.admits(name))
                .map(|(name, doc)| v1::EnvironmentState {
                    environment: name.clone(),
                    features: doc.features.values().map(|f| (**f).clone()).collect(),
                    segments: doc.segments.values().map(|s| (**s).clone()).collect(),
                })
                .collect(),
            tokens: c.tokens.values().map(|t| (**t).clone()).collect(),
            settings: Some(c.settings.clone()),
        }
    }
}

/// A kept delta as an edge serving `filter`'s environments receives it: those environments, the tokens it
/// may let in, the removal of those it had received.
fn filtered(kept: &KeptDelta, filter: &EnvironmentFilter) -> v1::Delta {
    let delta = &kept.delta;
    v1::Delta {
        from_revision: delta.from_revision,
        to_revision: delta.to_revision,
        environments: delta
            .environments
            .iter()
            .filter(|e| filter.admits(&e.environment))
            .cloned()
            .collect(),
        upserted_tokens: delta
            .upserted_tokens
            .iter()
            .filter(|grant| filter.admits_token(grant))
            .cloned()
            .collect(),
        removed_tokens: kept
            .removed
            .iter()
            .filter(|grant| filter.admits_token(grant))
            .map(|grant| grant.sha256.clone())
            .collect(),
        settings: delta.settings.clone(),
    }
}

/// What changed from `old` to `new`: only the flags, segments and tokens that differ, so the delta's size
/// follows the change, not the number of flags.
pub fn diff(old: &Configuration, new: &Configuration) -> v1::Delta {
    let empty = EnvironmentDoc::default();
    let names: BTreeSet<&String> = old
        .environments
        .keys()
        .chain(new.environments.keys())
        .collect();
    let mut environments = Vec::new();
    for name in names {
        let before = old.environments.get(name).unwrap_or(&empty);
        let after = new.environments.get(name).unwrap_or(&empty);
        let change = v1::EnvironmentDelta {
            environment: name.clone(),
            upserted_features: changed(&before.features, &after.features),
            removed_features: removed(&before.features, &after.features),
            upserted_segments: changed(&before.segments, &after.segments),
            removed_segments: removed(&before.segments, &after.segments),
        };
        let touched = !(change.upserted_features.is_empty()
            && change.removed_features.is_empty()
            && change.upserted_segments.is_empty()
            && change.removed_segments.is_empty());
        if touched {
            environments.push(change);
        }
    }
    v1::Delta {
        from_revision: old.revision,
        to_revision: new.revision,
        environments,
        upserted_tokens: changed(&old.tokens, &new.tokens),
        removed_tokens: removed(&old.tokens, &new.tokens),
        settings: (old.settings != new.settings).then(|| new.settings.clone()),
    }
}

/// The values of `after` that are new or differ from `before`'s. Both maps are walked once, side by side;
/// a value shared by `Arc` is unchanged without being compared.
fn changed<K: Ord, V: Clone + PartialEq>(
    before: &BTreeMap<K, Arc<V>>,
    after: &BTreeMap<K, Arc<V>>,
) -> Vec<V> {
    let mut out = Vec::new();
    let mut old = before.iter().peekable();
    for (key, value) in after {
        while old.next_if(|(k, _)| *k < key).is_some() {}
        match old.next_if(|(k, _)| *k == key) {
            Some((_, previous)) if Arc::ptr_eq(previous, value) || previous == value => {}
            _ => out.push((**value).clone()),
        }
    }
    out
}

/// The keys of `before` that `after` does not have, in one side-by-side walk.
fn removed<K: Ord + Clone, V>(before: &BTreeMap<K, V>, after: &BTreeMap<K, V>) -> Vec<K> {
    let mut out = Vec::new();
    let mut new = after.keys().peekable();
    for key in before.keys() {
        while new.next_if(|k| *k < key).is_some() {}
        if new.next_if(|k| *k == key).is_none() {
            out.push(key.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configuration(revision: u64, flags: &[(&str, bool)]) -> Configuration {
        let features = flags
            .iter()
            .map(|(name, enabled)| {
                (
                    name.to_string(),
                    Arc::new(v1::Feature {
                        name: name.to_string(),
                        project: "default".to_owned(),
                        enabled: *enabled,
                        ..Default::default()
                    }),
                )
            })
            .collect();
        Configuration {
            revision,
            environments: [(
                "development".to_owned(),
                EnvironmentDoc {
                    features,
                    segments: BTreeMap::new(),
                },
            )]
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_delta_carries_only_what_changed() {
        let old = configuration(1, &[("a", true), ("b", false), ("c", true)]);
        let new = configuration(2, &[("a", true), ("b", true), ("d", true)]);
        let delta = diff(&old, &new);
        assert_eq!((delta.from_revision, delta.to_revision), (1, 2));
        let env = &delta.environments[0];
        let upserted: Vec<&str> = env
            .upserted_features
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(upserted, ["b", "d"]);
        assert_eq!(env.removed_features, ["c"]);
        assert!(delta.settings.is_none());
    }

    #[test]
    fn shared_and_equal_flags_are_unchanged() {
        let old = configuration(1, &[("a", true), ("b", false), ("c", true)]);
        let mut new = old.clone();
        new.revision = 2;
        let doc = new
            .environments
            .get_mut("development")
            .expect("environment");
        // "a": shared; "b": an equal copy; "c": changed; "d": new.
        doc.features.insert(
            "b".to_owned(),
            Arc::new((*old.environments["development"].features["b"]).clone()),
        );
        let mut c = (*doc.features["c"]).clone();
        c.enabled = false;
        doc.features.insert("c".to_owned(), Arc::new(c));
        doc.features.insert(
            "d".to_owned(),
            Arc::new(v1::Feature {
                name: "d".to_owned(),
                ..Default::default()
            }),
        );
        let delta = diff(&old, &new);
        let upserted: Vec<&str> = delta.environments[0]
            .upserted_features
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(upserted, ["c", "d"]);
        assert!(delta.environments[0].removed_features.is_empty());
        assert!(diff(&new, &old).environments[0].removed_features == ["d"]);
    }

    #[test]
    fn a_reconnecting_edge_gets_the_missing_deltas_or_a_full() {
        let all = EnvironmentFilter(Vec::new());
        let mut published = Published::first(configuration(1, &[("a", true)]));
        for revision in 2..=4 {
            published = published
                .advance(configuration(revision, &[("a", revision % 2 == 0)]))
                .0;
        }
        assert!(published.catch_up(4, &all).is_empty());
        let updates = published.catch_up(2, &all);
        let revisions: Vec<(u64, u64)> = updates
            .iter()
            .map(|u| match u {
                v1::snapshot_update::Update::Delta(d) => (d.from_revision, d.to_revision),
                other => panic!("expected deltas, got {other:?}"),
            })
            .collect();
        assert_eq!(revisions, [(2, 3), (3, 4)]);
        assert!(matches!(
            published.catch_up(0, &all)[..],
            [v1::snapshot_update::Update::Full(ref f)] if f.revision == 4
        ));
        assert!(matches!(
            published.catch_up(99, &all)[..],
            [v1::snapshot_update::Update::Full(_)]
        ));
    }

    #[test]
    fn a_resuming_edge_always_gets_the_settings() {
        let all = EnvironmentFilter(Vec::new());
        let mut published = Published::first(configuration(1, &[("a", true)]));
        for revision in 2..=3 {
            published = published.advance(configuration(revision, &[("a", true)])).0;
        }
        published.configuration.settings.frontend_api_enabled = true;
        let settings = Some(published.configuration.settings.clone());
        // At the current revision: a delta from it to itself with the settings only.
        assert_eq!(
            published.resume(3, &all),
            [v1::snapshot_update::Update::Delta(v1::Delta {
                from_revision: 3,
                to_revision: 3,
                settings: settings.clone(),
                ..v1::Delta::default()
            })]
        );
        // Behind, within the ring: the deltas, the last with the settings.
        let deltas: Vec<(u64, u64, bool)> = published
            .resume(1, &all)
            .iter()
            .map(|u| match u {
                v1::snapshot_update::Update::Delta(d) => {
                    (d.from_revision, d.to_revision, d.settings == settings)
                }
                other => panic!("expected deltas, got {other:?}"),
            })
            .collect();
        assert_eq!(deltas, [(1, 2, false), (2, 3, true)]);
        // Otherwise a Full, which carries them.
        assert!(matches!(
            published.resume(0, &all)[..],
            [v1::snapshot_update::Update::Full(ref f)] if f.settings == settings
        ));
        // Following the stream afterwards adds nothing while the revision stands.
        assert!(published.catch_up(3, &all).is_empty());
    }

    fn grant(byte: u8, kind: v1::TokenKind, environment: &str) -> (Vec<u8>, Arc<v1::TokenGrant>) {
        let grant = v1::TokenGrant {
            sha256: vec![byte; 32],
            kind: kind as i32,
            projects: vec!["*".to_owned()],
            environment: environment.to_owned(),
            expires_at_ms: None,
        };
        (grant.sha256.clone(), Arc::new(grant))
    }

    fn first_bytes(grants: &[v1::TokenGrant]) -> Vec<u8> {
        grants.iter().map(|grant| grant.sha256[0]).collect()
    }

    #[test]
    fn edges_receive_only_the_sdk_tokens_they_may_let_in() {
        let all = EnvironmentFilter(Vec::new());
        let production = EnvironmentFilter(vec!["production".to_owned()]);
        let mut first = configuration(1, &[]);
        first.tokens = [
            grant(1, v1::TokenKind::Frontend, "development"),
            grant(2, v1::TokenKind::Edge, "*"),
            grant(3, v1::TokenKind::Admin, "*"),
            grant(4, v1::TokenKind::Client, "production"),
            grant(5, v1::TokenKind::Client, "*"),
            grant(6, v1::TokenKind::Client, "development"),
        ]
        .into();
        let published = Published::first(first.clone());
        assert_eq!(first_bytes(&published.full(&all).tokens), [1, 4, 5, 6]);
        assert_eq!(first_bytes(&published.full(&production).tokens), [4, 5]);
        assert_eq!(published.full_with_edge_tokens(&all).tokens.len(), 6);

        // Tokens made and revoked: the whole delta has them all; an edge, those it may let in.
        let mut next = first;
        next.revision = 2;
        for revoked in [2, 3, 4, 6] {
            next.tokens.remove(&vec![revoked; 32]);
        }
        next.tokens.extend([
            grant(7, v1::TokenKind::Edge, "production"),
            grant(8, v1::TokenKind::Client, "production"),
            grant(9, v1::TokenKind::Frontend, "development"),
            grant(10, v1::TokenKind::Admin, "*"),
        ]);
        let (published, whole) = published.advance(next);
        assert_eq!(whole.upserted_tokens.len(), 4);
        assert_eq!(whole.removed_tokens.len(), 4);
        let delta = |filter: &EnvironmentFilter| match &published.catch_up(1, filter)[..] {
            [v1::snapshot_update::Update::Delta(delta)] => delta.clone(),
            other => panic!("expected one delta, got {other:?}"),
        };
        let to_production = delta(&production);
        assert_eq!(first_bytes(&to_production.upserted_tokens), [8]);
        assert_eq!(to_production.removed_tokens, [vec![4; 32]]);
        let to_all = delta(&all);
        assert_eq!(first_bytes(&to_all.upserted_tokens), [8, 9]);
        assert_eq!(to_all.removed_tokens, [vec![4; 32], vec![6; 32]]);
    }

    #[test]
    fn the_ring_keeps_a_bounded_history() {
        let mut published = Published::first(configuration(1, &[]));
        for revision in 2..(DELTA_RING as u64 + 10) {
            published = published.advance(configuration(revision, &[])).0;
        }
        assert_eq!(published.deltas.len(), DELTA_RING);
        assert!(matches!(
            published.catch_up(2, &EnvironmentFilter(Vec::new()))[..],
            [v1::snapshot_update::Update::Full(_)]
        ));
    }
}
