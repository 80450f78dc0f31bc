//! The features document: flags with a realistic mix of strategies, constraints, segments, variants and
//! dependencies, inside what both engines read the same way (see the module `generate`'s documentation).

use std::collections::BTreeMap;

use vexil_shared::model::{
    Constraint, Feature, FeatureDependency, FeatureStrategy, Segment, Variant, VariantOverride,
    VariantPayload,
};
use vexil_shared::FeaturesDocument;

use super::vocabulary::*;
use super::Rng;

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
