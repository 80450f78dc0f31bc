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
    /// By SHA-256. Edge tokens too: the gRPC channel checks them here, and this process's own SDK APIs
    /// refuse them with 403; they are left out of what the edges receive ([`Published::full`], the ring).
    pub tokens: BTreeMap<Vec<u8>, Arc<v1::TokenGrant>>,
    pub settings: v1::Settings,
}

/// What the publisher serves: the current configuration and the deltas that led to it as the edges receive
/// them (oldest first, each starting where the previous one ended; without edge tokens).
#[derive(Debug, Default)]
pub struct Published {
    pub configuration: Configuration,
    pub deltas: VecDeque<Arc<v1::Delta>>,
}

fn is_edge_token(grant: &v1::TokenGrant) -> bool {
    grant.kind == v1::TokenKind::Edge as i32
}

/// Which environments an edge asked for (empty: all).
pub struct EnvironmentFilter(pub Vec<String>);

impl EnvironmentFilter {
    fn admits(&self, environment: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|e| e == environment)
    }
}

impl Published {
    pub fn first(configuration: Configuration) -> Published {
        Published {
            configuration,
            deltas: VecDeque::new(),
        }
    }

    /// The next value: `next` with the delta from the current configuration appended to the ring (as the
    /// edges receive it), and the whole delta (for this process's own SDK APIs).
    pub fn advance(&self, next: Configuration) -> (Published, Arc<v1::Delta>) {
        let delta = Arc::new(diff(&self.configuration, &next));
        let mut for_edges = (*delta).clone();
        for_edges
            .upserted_tokens
            .retain(|grant| !is_edge_token(grant));
        for_edges.removed_tokens.retain(|hash| {
            self.configuration
                .tokens
                .get(hash)
                .is_none_or(|grant| !is_edge_token(grant))
        });
        let mut deltas = self.deltas.clone();
        if deltas.len() == DELTA_RING {
            deltas.pop_front();
        }
        deltas.push_back(Arc::new(for_edges));
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
            if let Some(start) = self.deltas.iter().position(|d| d.from_revision == revision) {
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

    /// The whole configuration as an edge receives it: restricted to the environments asked for, without
    /// edge tokens.
    pub fn full(&self, filter: &EnvironmentFilter) -> v1::Full {
        let mut full = self.full_with_edge_tokens(filter);
        full.tokens.retain(|grant| !is_edge_token(grant));
        full
    }

    /// The whole configuration with every token, edge tokens included: what this process's own SDK APIs
    /// serve from (they answer 403 to an edge token).
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

fn filtered(delta: &v1::Delta, filter: &EnvironmentFilter) -> v1::Delta {
    if filter.0.is_empty() {
        return delta.clone();
    }
    v1::Delta {
        environments: delta
            .environments
            .iter()
            .filter(|e| filter.admits(&e.environment))
            .cloned()
            .collect(),
        ..delta.clone()
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

    fn grant(byte: u8, kind: v1::TokenKind) -> (Vec<u8>, Arc<v1::TokenGrant>) {
        let grant = v1::TokenGrant {
            sha256: vec![byte; 32],
            kind: kind as i32,
            projects: vec!["*".to_owned()],
            environment: "*".to_owned(),
            expires_at_ms: None,
        };
        (grant.sha256.clone(), Arc::new(grant))
    }

    #[test]
    fn edges_never_receive_edge_tokens() {
        let all = EnvironmentFilter(Vec::new());
        let mut first = configuration(1, &[]);
        first.tokens = [
            grant(1, v1::TokenKind::Frontend),
            grant(2, v1::TokenKind::Edge),
        ]
        .into();
        let published = Published::first(first.clone());
        let kinds = |full: &v1::Full| full.tokens.iter().map(|t| t.kind).collect::<Vec<_>>();
        assert_eq!(
            kinds(&published.full(&all)),
            [v1::TokenKind::Frontend as i32]
        );
        assert_eq!(kinds(&published.full_with_edge_tokens(&all)).len(), 2);

        // A new edge token and a revoked one: the whole delta has both, the ring neither.
        let mut next = first;
        next.revision = 2;
        next.tokens.remove(&vec![2; 32]);
        next.tokens.extend([
            grant(3, v1::TokenKind::Edge),
            grant(4, v1::TokenKind::Client),
        ]);
        let (published, whole) = published.advance(next);
        assert_eq!(whole.upserted_tokens.len(), 2);
        assert_eq!(whole.removed_tokens, [vec![2; 32]]);
        let ring = &published.deltas[0];
        assert_eq!(
            ring.upserted_tokens
                .iter()
                .map(|t| t.sha256[0])
                .collect::<Vec<_>>(),
            [4]
        );
        assert!(ring.removed_tokens.is_empty());
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
