//! Deterministic generators shared by the benchmarks: a features document with a realistic mix of strategies,
//! constraints, segments, variants and dependencies; a rotating set of evaluation contexts drawn from the same
//! vocabulary (so that a good share of flags match); the same document and contexts in yggdrasil's types; and
//! the check that Vexil and yggdrasil agree wherever the result does not depend on chance.
//!
//! Everything is seeded: the same seed gives the same document and contexts on every machine.
//!
//! The documents stay inside what both engines read the same way. yggdrasil 0.21.7 differs from Vexil (which
//! follows the Unleash client specification and the Node SDK there) on these, so the generator does not
//! produce them (each was checked on a one-flag document):
//! - a parent whose flexibleRollout has no groupId, evaluated through a child: yggdrasil hashes it with the
//!   child's name (so parents here always name their groupId);
//! - a dependency on given variants of a parent that has no variants: yggdrasil counts it as met (so variant
//!   conditions only name parents with flag-level variants);
//! - `disabled: true` strategies (yggdrasil evaluates them) and `sortOrder` out of list order (yggdrasil does
//!   not sort): strategies here are all enabled and listed in order;
//! - a strategy naming a missing segment (yggdrasil turns the whole flag off, Vexil only that strategy);
//! - gradualRolloutUserId/SessionId without groupId, and fractional percentages (yggdrasil: off);
//! - a remoteAddress entry that is not an IP (Vexil also matches it literally; yggdrasil never);
//! - applicationHostname on this host (yggdrasil, built without its `hostname` feature, never matches).

// Each bench binary includes this module and uses a different part of it.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};

use unleash_yggdrasil::{ClientFeatures, EngineState, UpdateMessage};
use vexil_shared::model::{
    Constraint, Feature, FeatureDependency, FeatureStrategy, Segment, Variant, VariantOverride,
    VariantPayload,
};
use vexil_shared::{CompileOptions, Context, FeaturesDocument, Projects, Snapshot};

/// Seed of the contexts.
pub const CONTEXT_SEED: u64 = 0x5EED_C0DE;
/// Seed of a document (the flag count is mixed in, so each size is its own document).
pub const DOCUMENT_SEED: u64 = 0xF1A6_5EED;

/// The host name Vexil compiles `applicationHostname` against. No generated strategy names it, and yggdrasil
/// (built without its `hostname` feature) never matches a host name, so both engines see every
/// `applicationHostname` strategy as off.
pub const BENCH_HOSTNAME: &str = "vexil-bench-host";

/// splitmix64: tiny, fast and stable across versions of every dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with the given probability in percent.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index drawn with the given relative weights.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// Between `lo` and `hi` distinct words of the list.
    pub fn some(&mut self, items: &[&str], lo: u64, hi: u64) -> Vec<String> {
        let k = self.range(lo, hi) as usize;
        self.sample(items, k)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// `k` distinct items (fewer if there are not that many).
    pub fn sample<T: Clone + Ord>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut chosen = BTreeSet::new();
        let k = k.min(items.len());
        while chosen.len() < k {
            chosen.insert(self.pick(items).clone());
        }
        chosen.into_iter().collect()
    }
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary shared by flags and contexts.

const APPS: &[&str] = &[
    "web",
    "ios",
    "android",
    "backend",
    "admin-console",
    "checkout",
];
const ENVIRONMENTS: &[&str] = &["production", "staging", "development"];
const PLANS: &[&str] = &["free", "pro", "enterprise", "trial"];
const COUNTRIES: &[&str] = &["NO", "SE", "DK", "US", "DE", "FR", "JP", "BR", "IN", "GB"];
const DOMAINS: &[&str] = &["example.com", "Example.org", "corp.io", "mail.no"];
const FIRST_NAMES: &[&str] = &[
    "ada", "alan", "grace", "linus", "margaret", "ken", "barbara", "dennis",
];
/// A few non-ASCII names, so that case-insensitive string operators meet non-ASCII input.
const NON_ASCII_NAMES: &[&str] = &["øyvind", "zoë", "ÅSA", "józef"];
const PROJECTS: &[&str] = &["default", "payments", "growth", "platform", "mobile"];
const AREAS: &[&str] = &[
    "checkout",
    "search",
    "onboarding",
    "billing",
    "profile",
    "feed",
    "ads",
    "infra",
];
const NOUNS: &[&str] = &[
    "banner",
    "new-flow",
    "redesign",
    "kill-switch",
    "experiment",
    "cache",
    "api-v2",
];
const VARIANT_NAMES: &[&str] = &[
    "control",
    "blue",
    "green",
    "red",
    "treatment-a",
    "treatment-b",
];
const USERS: u64 = 20_000;
const TENANTS: u64 = 200;

/// One user in seven has a bare numeric id.
fn user_id(n: u64) -> String {
    match n % 7 {
        0 => n.to_string(),
        _ => format!("user-{n}"),
    }
}

fn tenant(n: u64) -> String {
    format!("tenant-{n}")
}

fn ip(rng: &mut Rng) -> String {
    match rng.weighted(&[40, 25, 15, 10, 10]) {
        0 => format!(
            "10.{}.{}.{}",
            rng.range(0, 4),
            rng.range(0, 255),
            rng.range(1, 254)
        ),
        1 => format!("192.168.{}.{}", rng.range(0, 3), rng.range(1, 254)),
        2 => format!("172.16.{}.{}", rng.range(0, 31), rng.range(1, 254)),
        3 => format!("203.0.113.{}", rng.range(1, 254)),
        _ => format!(
            "2001:db8:{:x}::{:x}",
            rng.range(0, 15),
            rng.range(1, 0xffff)
        ),
    }
}

/// An RFC 3339 time in the given years.
fn date(rng: &mut Rng, from_year: u64, to_year: u64) -> String {
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}{}",
        rng.range(from_year, to_year),
        rng.range(1, 12),
        rng.range(1, 28),
        rng.range(0, 23),
        rng.range(0, 59),
        rng.range(0, 59),
        if rng.chance(50) { "Z" } else { ".000Z" }
    )
}

fn app_version(rng: &mut Rng) -> String {
    let mut v = format!(
        "{}.{}.{}",
        rng.range(1, 4),
        rng.range(0, 12),
        rng.range(0, 20)
    );
    match rng.weighted(&[77, 8, 7, 8]) {
        1 => v.push_str(&format!("-beta.{}", rng.range(1, 9))),
        2 => v.push_str(&format!("-rc.{}", rng.range(1, 3))),
        // Long build metadata: semver keeps identifiers longer than 8 bytes on the heap.
        3 => v.push_str(&format!("+build.{}", rng.range(20_240_101, 20_251_231))),
        _ => {}
    }
    v
}

// ---------------------------------------------------------------------------------------------------------
// Contexts.

/// `count` contexts: varying userId, sessionId, remoteAddress, appName, environment, sometimes a currentTime,
/// and a few properties.
pub fn contexts(count: usize, seed: u64) -> Vec<Context> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| context(&mut rng)).collect()
}

fn context(rng: &mut Rng) -> Context {
    let user = rng.range(0, USERS - 1);
    let mut properties = BTreeMap::new();
    if rng.chance(80) {
        properties.insert("tenantId".into(), tenant(rng.range(0, TENANTS - 1)));
    }
    if rng.chance(85) {
        properties.insert("plan".into(), rng.pick(PLANS).to_string());
    }
    if rng.chance(80) {
        properties.insert("country".into(), rng.pick(COUNTRIES).to_string());
    }
    if rng.chance(70) {
        properties.insert("appVersion".into(), app_version(rng));
    }
    if rng.chance(60) {
        properties.insert("score".into(), rng.range(0, 1000).to_string());
    }
    if rng.chance(50) {
        let name = if rng.chance(4) {
            rng.pick(NON_ASCII_NAMES)
        } else {
            rng.pick(FIRST_NAMES)
        };
        properties.insert(
            "email".into(),
            format!("{name}.{user}@{}", rng.pick(DOMAINS)),
        );
    }
    if rng.chance(40) {
        properties.insert("signupDate".into(), date(rng, 2019, 2025));
    }
    if rng.chance(30) {
        properties.insert("betaTester".into(), rng.chance(30).to_string());
    }
    Context {
        user_id: rng.chance(85).then(|| user_id(user)),
        session_id: rng
            .chance(75)
            .then(|| format!("sess-{:016x}", rng.next_u64())),
        remote_address: rng.chance(90).then(|| ip(rng)),
        environment: rng.chance(95).then(|| rng.pick(ENVIRONMENTS).to_string()),
        app_name: rng.chance(95).then(|| rng.pick(APPS).to_string()),
        current_time: rng.chance(15).then(|| date(rng, 2019, 2033)),
        properties,
    }
}

/// The same context in yggdrasil's type.
pub fn to_yggdrasil_context(c: &Context) -> unleash_yggdrasil::Context {
    unleash_yggdrasil::Context {
        user_id: c.user_id.clone(),
        session_id: c.session_id.clone(),
        environment: c.environment.clone(),
        app_name: c.app_name.clone(),
        current_time: c.current_time.clone(),
        remote_address: c.remote_address.clone(),
        properties: (!c.properties.is_empty()).then(|| {
            c.properties
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Documents.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// May be a dependency's parent: has no parents itself, and its rollouts name their groupId (see the
    /// module's documentation on why).
    Parent,
    /// Has one or two parents.
    Child,
    Plain,
}

/// A document of `flags` flags over 40 segments.
pub fn document(flags: usize, seed: u64) -> FeaturesDocument {
    let mut rng = Rng::new(seed ^ (flags as u64).wrapping_mul(0x9E37_79B9));
    let segments: Vec<Segment> = (1..=40)
        .map(|id| Segment {
            id,
            name: Some(format!("segment-{id}")),
            constraints: (0..rng.range(1, 3)).map(|_| constraint(&mut rng)).collect(),
        })
        .collect();

    let roles: Vec<Role> = (0..flags)
        .map(|i| {
            if i % 10 == 3 {
                Role::Parent
            } else if rng.chance(12) {
                Role::Child
            } else {
                Role::Plain
            }
        })
        .collect();

    let mut features: Vec<Feature> = (0..flags)
        .map(|i| feature(&mut rng, i, roles[i] == Role::Parent, segments.len() as i64))
        .collect();

    // Dependencies, once every flag (and so every parent's variants) exists.
    let parents: Vec<usize> = (0..flags).filter(|&i| roles[i] == Role::Parent).collect();
    let children: Vec<usize> = (0..flags).filter(|&i| roles[i] == Role::Child).collect();
    for &i in &children {
        let count = if rng.chance(10) { 2 } else { 1 };
        let mut deps = Vec::new();
        for _ in 0..count {
            let kind = rng.weighted(&[95, 3, 2]);
            let dep = match kind {
                // A parent that does not exist: never satisfied.
                1 => FeatureDependency {
                    feature: format!("missing-parent-{}", rng.below(1000)),
                    enabled: true,
                    variants: Vec::new(),
                },
                // A parent that has parents of its own: never satisfied.
                2 => FeatureDependency {
                    feature: features[*rng.pick(&children)].name.clone(),
                    enabled: true,
                    variants: Vec::new(),
                },
                _ => {
                    let p = &features[*rng.pick(&parents)];
                    let expect_enabled = rng.chance(80);
                    // Only a parent with flag-level variants always has a real variant when it is on; a
                    // variant condition on any other parent is read differently by the two engines.
                    let variants = if expect_enabled && !p.variants.is_empty() && rng.chance(40) {
                        let names: Vec<String> =
                            p.variants.iter().map(|v| v.name.clone()).collect();
                        let k = rng.range(1, 2) as usize;
                        rng.sample(&names, k)
                    } else {
                        Vec::new()
                    };
                    FeatureDependency {
                        feature: p.name.clone(),
                        enabled: expect_enabled,
                        variants,
                    }
                }
            };
            deps.push(dep);
        }
        features[i].dependencies = deps;
    }

    FeaturesDocument {
        version: 2,
        features,
        segments,
    }
}

fn feature(rng: &mut Rng, i: usize, parent: bool, segment_count: i64) -> Feature {
    let name = format!("{}.{}-{:05}", rng.pick(AREAS), rng.pick(NOUNS), i);
    let strategy_count = [0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3][rng.below(12)];
    let strategies: Vec<FeatureStrategy> = (0..strategy_count)
        .map(|k| strategy(rng, &name, k as i64, parent, segment_count))
        .collect();
    let variants = if rng.chance(if parent { 50 } else { 30 }) {
        flag_variants(rng)
    } else {
        Vec::new()
    };
    Feature {
        name,
        feature_type: Some(
            rng.pick(&["release", "experiment", "operational", "kill-switch"])
                .to_string(),
        ),
        description: None,
        project: rng.pick(PROJECTS).to_string(),
        enabled: rng.chance(88),
        stale: false,
        impression_data: rng.chance(10),
        strategies,
        variants,
        dependencies: Vec::new(),
        tags: Vec::new(),
    }
}

fn percent(rng: &mut Rng) -> u64 {
    *rng.pick(&[0, 5, 10, 25, 33, 50, 50, 75, 90, 100, 100])
}

fn strategy(
    rng: &mut Rng,
    flag: &str,
    sort_order: i64,
    parent: bool,
    segment_count: i64,
) -> FeatureStrategy {
    let mut parameters = BTreeMap::new();
    let mut p = |k: &str, v: String| {
        parameters.insert(k.to_owned(), v);
    };
    let name = match rng.weighted(&[15, 36, 10, 6, 5, 3, 9, 4, 2]) {
        0 => "default",
        1 => {
            p("rollout", percent(rng).to_string());
            let stickiness = [
                "default",
                "userId",
                "sessionId",
                "random",
                "tenantId",
                "appName",
            ][rng.weighted(&[50, 20, 10, 4, 11, 5])];
            p("stickiness", stickiness.to_owned());
            // The Unleash UI always sets groupId; documents written by hand sometimes do not.
            match rng.weighted(&[80, 5, 15]) {
                0 => p("groupId", flag.to_owned()),
                1 => p("groupId", format!("experiment-{}", rng.below(5))),
                _ if parent => p("groupId", flag.to_owned()),
                _ => {}
            }
            "flexibleRollout"
        }
        2 => {
            let n = [1, 2, 3, 5, 12, 40][rng.below(6)];
            let ids: Vec<String> = (0..n).map(|_| user_id(rng.range(0, USERS - 1))).collect();
            p("userIds", ids.join(", "));
            "userWithId"
        }
        3 => {
            p("percentage", percent(rng).to_string());
            p("groupId", flag.to_owned());
            "gradualRolloutUserId"
        }
        4 => {
            p("percentage", percent(rng).to_string());
            p("groupId", flag.to_owned());
            "gradualRolloutSessionId"
        }
        5 => {
            p("percentage", percent(rng).to_string());
            "gradualRolloutRandom"
        }
        6 => {
            let ips = [
                "10.0.0.0/8, 192.168.1.0/24",
                "192.168.2.17, 203.0.113.0/25",
                "2001:db8:3::/48, 10.2.0.0/16",
                "172.16.0.0/12",
                "203.0.113.7, 203.0.113.8, 203.0.113.9",
            ];
            p("IPs", rng.pick(&ips).to_string());
            "remoteAddress"
        }
        7 => {
            p(
                "hostNames",
                rng.pick(&["web-1, web-2", "db-1", "worker-7,worker-8"])
                    .to_string(),
            );
            "applicationHostname"
        }
        // A custom strategy neither engine knows: always off.
        _ => "customTenantStrategy",
    };
    let constraints = (0..[0, 0, 0, 0, 1, 1, 1, 2, 2, 3][rng.below(10)])
        .map(|_| constraint(rng))
        .collect();
    let segments = if rng.chance(20) {
        (0..rng.range(1, 2))
            .map(|_| rng.range(1, segment_count as u64) as i64)
            .collect()
    } else {
        Vec::new()
    };
    let variants = if rng.chance(20) {
        let stickiness = parameters
            .get("stickiness")
            .cloned()
            .unwrap_or_else(|| "default".into());
        let n = rng.range(1, 3) as usize;
        let mut vs = variants_with_weights(rng, n);
        for v in &mut vs {
            v.stickiness = Some(stickiness.clone());
        }
        vs
    } else {
        Vec::new()
    };
    FeatureStrategy {
        id: None,
        name: name.to_owned(),
        title: None,
        disabled: false,
        sort_order: Some(sort_order),
        parameters,
        constraints,
        segments,
        variants,
    }
}

/// `n` variants whose weights add up to 1000, as Unleash hands them out; most carry a payload.
fn variants_with_weights(rng: &mut Rng, n: usize) -> Vec<Variant> {
    let names = rng.sample(VARIANT_NAMES, n);
    let n = names.len() as u32;
    names
        .into_iter()
        .enumerate()
        .map(|(k, name)| {
            let payload = match rng.weighted(&[40, 20, 20, 10, 10]) {
                0 => None,
                1 => Some(("string", format!("{name}-copy"))),
                2 => Some((
                    "json",
                    format!(r#"{{"color":"{name}","limit":{}}}"#, rng.range(1, 99)),
                )),
                3 => Some(("number", rng.range(1, 500).to_string())),
                _ => Some(("csv", "a,b,c".to_owned())),
            };
            Variant {
                name: name.to_string(),
                weight: 1000 / n + if k == 0 { 1000 % n } else { 0 },
                weight_type: Some("variable".into()),
                stickiness: None,
                payload: payload.map(|(t, v)| VariantPayload {
                    payload_type: t.into(),
                    value: v,
                }),
                overrides: Vec::new(),
            }
        })
        .collect()
}

fn flag_variants(rng: &mut Rng) -> Vec<Variant> {
    let n = rng.range(2, 4) as usize;
    let mut vs = variants_with_weights(rng, n);
    let stickiness =
        ["default", "userId", "sessionId", "tenantId", "random"][rng.weighted(&[70, 10, 7, 8, 5])];
    for v in &mut vs {
        v.stickiness = Some(stickiness.into());
    }
    if rng.chance(25) {
        let k = rng.below(vs.len());
        vs[k].overrides.push(match rng.below(3) {
            0 => VariantOverride {
                context_name: "userId".into(),
                values: (0..rng.range(1, 30))
                    .map(|_| user_id(rng.range(0, USERS - 1)))
                    .collect(),
            },
            1 => VariantOverride {
                context_name: "tenantId".into(),
                values: rng.sample(&(0..TENANTS).map(tenant).collect::<Vec<_>>(), 5),
            },
            _ => VariantOverride {
                context_name: "appName".into(),
                values: vec![rng.pick(APPS).to_string()],
            },
        });
    }
    vs
}

fn constraint(rng: &mut Rng) -> Constraint {
    let list = |name: &str, op: &str, values: Vec<String>| Constraint {
        context_name: name.into(),
        operator: op.into(),
        case_insensitive: false,
        inverted: false,
        values,
        value: None,
    };
    let single = |name: &str, op: &str, value: String| Constraint {
        context_name: name.into(),
        operator: op.into(),
        case_insensitive: false,
        inverted: false,
        values: Vec::new(),
        value: Some(value),
    };
    let strs = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ordering = |rng: &mut Rng| *rng.pick(&["EQ", "GT", "GTE", "LT", "LTE"]);

    let mut c = match rng.weighted(&[12, 10, 6, 7, 8, 5, 5, 4, 7, 4, 3, 7, 4, 5, 3]) {
        0 => list("environment", "IN", rng.some(ENVIRONMENTS, 1, 2)),
        1 => list("appName", "IN", rng.some(APPS, 1, 4)),
        2 => list("country", "NOT_IN", rng.some(COUNTRIES, 1, 4)),
        3 => {
            let tenants: Vec<String> = (0..TENANTS).map(tenant).collect();
            let k = [2, 5, 12, 30][rng.below(4)];
            list("tenantId", "IN", rng.sample(&tenants, k))
        }
        4 => list(
            "plan",
            rng.pick::<&str>(&["IN", "NOT_IN"]),
            rng.some(PLANS, 1, 2),
        ),
        5 => {
            let mut c = list(
                "email",
                "STR_STARTS_WITH",
                strs(rng.pick::<&[&str]>(&[
                    &["ada.", "grace."][..],
                    &["Linus"],
                    &["ØYVIND", "zoë"],
                    &["ken.1", "ken.2"],
                ])),
            );
            c.case_insensitive = rng.chance(50);
            c
        }
        6 => {
            let mut c = list(
                "email",
                "STR_ENDS_WITH",
                strs(rng.pick::<&[&str]>(&[
                    &["@example.com"][..],
                    &["@EXAMPLE.ORG", "@corp.io"],
                    &[".no"],
                ])),
            );
            c.case_insensitive = rng.chance(50);
            c
        }
        7 => {
            let (field, values) = *rng.pick(&[
                ("userId", &["-1", "99"][..]),
                ("tenantId", &["-1"]),
                ("email", &["CORP", "mail"]),
            ]);
            let mut c = list(field, "STR_CONTAINS", strs(values));
            c.case_insensitive = rng.chance(40);
            c
        }
        8 => single(
            "score",
            &format!("NUM_{}", ordering(rng)),
            rng.range(0, 1000).to_string(),
        ),
        // Far from today, so that "now" gives the same answer for years.
        9 => {
            let (op, t) = if rng.chance(50) {
                ("DATE_AFTER", date(rng, 2015, 2023))
            } else {
                ("DATE_BEFORE", date(rng, 2030, 2035))
            };
            single(
                "currentTime",
                if rng.chance(20) {
                    if op == "DATE_AFTER" {
                        "DATE_BEFORE"
                    } else {
                        "DATE_AFTER"
                    }
                } else {
                    op
                },
                t,
            )
        }
        10 => single(
            "signupDate",
            rng.pick::<&str>(&["DATE_AFTER", "DATE_BEFORE"]),
            date(rng, 2019, 2025),
        ),
        11 => {
            let mut v = format!("{}.{}.0", rng.range(1, 4), rng.range(0, 12));
            if rng.chance(20) {
                v.push_str("-beta.2");
            }
            single("appVersion", &format!("SEMVER_{}", ordering(rng)), v)
        }
        12 => {
            let (field, pattern) = *rng.pick(&[
                ("email", r"^[a-z]+\.[0-9]+@example\.(com|org)$"),
                ("userId", r"^user-[0-9]*7$"),
                ("userId", r"^[0-9]+$"),
                ("country", r"^(NO|SE|DK)$"),
                ("email", r"corp\.io$"),
            ]);
            let mut c = single(field, "REGEX", pattern.into());
            c.case_insensitive = rng.chance(30);
            c
        }
        13 => list(
            "remoteAddress",
            "IN_CIDR",
            strs(rng.pick::<&[&str]>(&[
                &["10.0.0.0/8"][..],
                &["192.168.1.0/24", "10.2.0.0/16"],
                &["2001:db8::/32"],
                &["203.0.113.10", "172.16.0.0/16"],
            ])),
        ),
        _ => list("betaTester", "IN", strs(&["true"])),
    };
    c.inverted = rng.chance(12);
    c
}

// ---------------------------------------------------------------------------------------------------------
// The two engines.

pub fn vexil_snapshot(doc: &FeaturesDocument) -> Snapshot {
    Snapshot::compile_with(
        doc,
        &CompileOptions {
            hostname: Some(BENCH_HOSTNAME.into()),
        },
    )
}

/// yggdrasil fed the same document, through JSON as a client would get it.
pub fn yggdrasil_engine(doc: &FeaturesDocument) -> EngineState {
    let json = serde_json::to_string(doc).expect("serialize the generated document");
    let features: ClientFeatures =
        serde_json::from_str(&json).expect("yggdrasil reads the generated document");
    let engine = EngineState::default();
    if let Some(warnings) = engine.take_state(UpdateMessage::FullResponse(features)) {
        panic!("yggdrasil could not compile part of the generated document: {warnings:?}");
    }
    engine
}

/// What a document holds, for the bench's log.
pub fn describe(doc: &FeaturesDocument) -> String {
    let mut strategies: BTreeMap<&str, usize> = BTreeMap::new();
    let mut operators: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut segment_refs, mut strategy_variants) = (0, 0);
    for f in &doc.features {
        for s in &f.strategies {
            *strategies.entry(&s.name).or_default() += 1;
            for c in &s.constraints {
                *operators.entry(&c.operator).or_default() += 1;
            }
            segment_refs += s.segments.len();
            strategy_variants += usize::from(!s.variants.is_empty());
        }
    }
    for s in &doc.segments {
        for c in &s.constraints {
            *operators.entry(&c.operator).or_default() += 1;
        }
    }
    let count = |p: fn(&Feature) -> bool| doc.features.iter().filter(|f| p(f)).count();
    format!(
        "{} flags ({} switched off, {} with flag variants, {} with dependencies), {} segments, {} segment references, \
         {} strategies with variants\n  strategies: {strategies:?}\n  constraint operators: {operators:?}",
        doc.features.len(),
        count(|f| !f.enabled),
        count(|f| !f.variants.is_empty()),
        count(|f| !f.dependencies.is_empty()),
        doc.segments.len(),
        segment_refs,
        strategy_variants,
    )
}

// ---------------------------------------------------------------------------------------------------------
// Which results do not depend on chance.

fn field<'c>(ctx: &'c Context, name: &str) -> Option<&'c str> {
    match name {
        "userId" => ctx.user_id.as_deref(),
        "sessionId" => ctx.session_id.as_deref(),
        "remoteAddress" => ctx.remote_address.as_deref(),
        "environment" => ctx.environment.as_deref(),
        "appName" => ctx.app_name.as_deref(),
        other => ctx.properties.get(other).map(String::as_str),
    }
}

fn param<'a>(s: &'a FeatureStrategy, name: &str) -> Option<&'a str> {
    s.parameters.get(name).map(String::as_str)
}

/// Whether a strategy's rule may draw a random number for this context: random stickiness,
/// `gradualRolloutRandom`, or default stickiness without userId and sessionId, at a rollout strictly between
/// 0 and 100.
fn strategy_is_random(s: &FeatureStrategy, ctx: &Context) -> bool {
    let pct = |k| param(s, k).and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    match s.name.as_str() {
        "gradualRolloutRandom" => (1..100).contains(&pct("percentage")),
        "flexibleRollout" => {
            (1..100).contains(&pct("rollout"))
                && match param(s, "stickiness") {
                    None | Some("default") => ctx.user_id.is_none() && ctx.session_id.is_none(),
                    Some("random") => true,
                    Some(_) => false,
                }
        }
        _ => false,
    }
}

/// Whether a variant pick is decided by the context alone: a matching override, or a stickiness value the
/// context has (default stickiness: userId or sessionId; both engines draw a random bucket otherwise).
fn variants_are_fixed(variants: &[Variant], stickiness: Option<&str>, ctx: &Context) -> bool {
    if variants.is_empty() {
        return true;
    }
    let overridden = variants.iter().any(|v| {
        v.overrides
            .iter()
            .any(|o| field(ctx, &o.context_name).is_some_and(|x| o.values.iter().any(|y| y == x)))
    });
    overridden
        || match stickiness {
            None | Some("default") => ctx.user_id.is_some() || ctx.session_id.is_some(),
            Some("random") => false,
            Some(name) => field(ctx, name).is_some(),
        }
}

struct Determinism<'d> {
    by_name: HashMap<&'d str, &'d Feature>,
}

impl<'d> Determinism<'d> {
    fn new(doc: &'d FeaturesDocument) -> Self {
        Determinism {
            by_name: doc.features.iter().map(|f| (f.name.as_str(), f)).collect(),
        }
    }

    /// Whether the flag's on/off result is decided by the context alone.
    fn enabled_is_fixed(&self, f: &Feature, ctx: &Context) -> bool {
        !f.strategies.iter().any(|s| strategy_is_random(s, ctx))
            && f.dependencies
                .iter()
                .all(|d| match self.by_name.get(d.feature.as_str()) {
                    None => true,
                    Some(p) => {
                        self.enabled_is_fixed(p, ctx)
                            && (d.variants.is_empty() || self.variant_is_fixed(p, ctx))
                    }
                })
    }

    /// Whether the variant of the flag, when it is on, is decided by the context alone.
    fn variant_is_fixed(&self, f: &Feature, ctx: &Context) -> bool {
        let flag_stickiness = f.variants.first().and_then(|v| v.stickiness.as_deref());
        variants_are_fixed(&f.variants, flag_stickiness, ctx)
            && f.strategies
                .iter()
                .all(|s| variants_are_fixed(&s.variants, param(s, "stickiness"), ctx))
    }
}

/// What the agreement check saw.
#[derive(Debug, Default)]
pub struct Agreement {
    pub contexts: usize,
    /// (flag, context) pairs whose on/off was compared.
    pub compared: usize,
    /// Pairs left out because a rollout or a variant of theirs is drawn at random.
    pub random: usize,
    /// Pairs on in both engines.
    pub on: usize,
    /// Variants compared (both on, pick not random).
    pub variants_compared: usize,
    /// Variants compared that were real ones (not `disabled`).
    pub real_variants: usize,
}

/// Panics, with the flags and contexts concerned, unless Vexil and yggdrasil give the same enabled flags, and
/// the same variant names and payloads, for every flag whose result does not depend on chance.
pub fn assert_engines_agree(
    doc: &FeaturesDocument,
    snapshot: &Snapshot,
    engine: &EngineState,
    contexts: &[Context],
) -> Agreement {
    let det = Determinism::new(doc);
    let mut stats = Agreement::default();
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for ctx in contexts {
        stats.contexts += 1;
        snapshot.evaluate_all_into(ctx, &Projects::All, &mut out);
        let vexil: HashMap<&str, _> = out.iter().map(|t| (t.name, t.variant)).collect();
        let ygg = engine
            .resolve_all(&to_yggdrasil_context(ctx), &None)
            .expect("yggdrasil has a state");
        for f in &doc.features {
            if !det.enabled_is_fixed(f, ctx) {
                stats.random += 1;
                continue;
            }
            stats.compared += 1;
            let y = ygg.get(&f.name).expect("yggdrasil knows every flag");
            let v = vexil.get(f.name.as_str());
            if v.is_some() != y.enabled {
                problems.push(format!(
                    "flag enabled: vexil={} yggdrasil={}\n  flag: {}\n  context: {}",
                    v.is_some(),
                    y.enabled,
                    flag_json(doc, f),
                    serde_json::to_string(ctx).unwrap_or_default()
                ));
                continue;
            }
            let Some(v) = v else { continue };
            stats.on += 1;
            if !det.variant_is_fixed(f, ctx) {
                continue;
            }
            stats.variants_compared += 1;
            stats.real_variants += usize::from(v.enabled);
            let v_payload = v
                .payload
                .map(|p| (p.payload_type.as_str(), p.value.as_str()));
            let y_payload = y
                .variant
                .payload
                .as_ref()
                .map(|p| (p.payload_type.as_str(), p.value.as_str()));
            if v.name != y.variant.name || v_payload != y_payload {
                problems.push(format!(
                    "variant: vexil={} {v_payload:?} yggdrasil={} {y_payload:?}\n  flag: {}\n  context: {}",
                    v.name,
                    y.variant.name,
                    flag_json(doc, f),
                    serde_json::to_string(ctx).unwrap_or_default()
                ));
            }
        }
    }
    if !problems.is_empty() {
        let shown: Vec<&String> = problems.iter().take(10).collect();
        panic!(
            "Vexil and yggdrasil disagree on {} (flag, context) pairs; the first ones:\n{}",
            problems.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
    stats
}

/// The flag's JSON, with its parents' and its segments' JSON when it has any.
fn flag_json(doc: &FeaturesDocument, f: &Feature) -> String {
    let mut text = serde_json::to_string(f).unwrap_or_default();
    for d in &f.dependencies {
        if let Some(p) = doc.features.iter().find(|p| p.name == d.feature) {
            text.push_str(&format!(
                "\n  parent: {}",
                serde_json::to_string(p).unwrap_or_default()
            ));
        }
    }
    for id in f.strategies.iter().flat_map(|s| s.segments.iter()) {
        if let Some(s) = doc.segments.iter().find(|s| s.id == *id) {
            text.push_str(&format!(
                "\n  segment: {}",
                serde_json::to_string(s).unwrap_or_default()
            ));
        }
    }
    text
}
