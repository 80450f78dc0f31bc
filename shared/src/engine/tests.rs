//! Tests of the whole engine through [`Snapshot`]: compilation, updates, evaluation and the written JSON.

use std::collections::BTreeMap;

use super::compile::{CompileOptions, STALE_SLOTS_ALLOWED};
use super::evaluate::Projects;
use super::ofrep::OfrepFlag;
use super::snapshot::Snapshot;
use crate::context::Context;
use crate::model::{Feature, FeaturesDocument, Segment};

fn snapshot(json: &str) -> Snapshot {
    Snapshot::compile_with(
        &FeaturesDocument::from_json(json).unwrap(),
        &CompileOptions {
            hostname: Some("web-1".into()),
        },
    )
}

fn ctx(json: &str) -> Context {
    serde_json::from_str(json).unwrap()
}

/// A flag whose answer depends on the context in several ways (rollout, user ids, a property
/// constraint, a segment, variants), varied by `n` so that neighbours differ.
fn varied_flag(name: &str, n: usize) -> Feature {
    let json = match n % 5 {
        0 => serde_json::json!({"name": name, "project": "p1", "enabled": true,
            "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": (n * 7 % 100).to_string(), "stickiness": "default"}}]}),
        1 => serde_json::json!({"name": name, "project": "p2", "enabled": true,
            "strategies": [{"name": "userWithId", "parameters": {"userIds": format!("u{n},u{},u3", n + 1)}}],
            "variants": [{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"},
                         {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"}]}),
        2 => serde_json::json!({"name": name, "project": "p1", "enabled": !n.is_multiple_of(3),
            "strategies": [{"name": "default", "constraints": [{"contextName": format!("prop{}", n % 4), "operator": "IN", "values": ["a", "b"]}]}]}),
        3 => serde_json::json!({"name": name, "project": "p3", "enabled": true,
            "strategies": [{"name": "default", "segments": [1]}]}),
        _ => {
            serde_json::json!({"name": name, "project": "p2", "enabled": true, "impressionData": true,
            "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "g"},
                "variants": [{"name": "on", "weight": 1000, "weightType": "variable", "stickiness": "default",
                    "payload": {"type": "string", "value": format!("v{n}")}}]}]})
        }
    };
    serde_json::from_value(json).unwrap()
}

fn contexts() -> Vec<Context> {
    (0..40)
        .map(|i| {
            ctx(&format!(
                r#"{{"userId":"u{i}","properties":{{"prop0":"a","prop1":"{}","prop2":"b","prop3":"x","region":"r{}"}}}}"#,
                if i % 2 == 0 { "a" } else { "z" },
                i % 3
            ))
        })
        .collect()
}

/// `updated` answers exactly as a snapshot compiled from scratch on the same flags.
fn assert_same(updated: &Snapshot, flags: &BTreeMap<String, Feature>, segments: &[Segment]) {
    let fresh = Snapshot::compile_parts(
        flags.values(),
        segments,
        &CompileOptions {
            hostname: Some("web-1".into()),
        },
    );
    assert_eq!(updated.len(), fresh.len());
    assert_eq!(updated.toggles_json_bound(), fresh.toggles_json_bound());
    for (i, name) in flags.keys().enumerate() {
        assert_eq!(updated.flag_name(i), name);
        assert_eq!(updated.flag_index(name), Some(i));
        assert_eq!(
            updated.project_names()[updated.flag_project(i)],
            fresh.project_names()[fresh.flag_project(i)]
        );
    }
    for scope in [Projects::All, Projects::from_list(&["p2", "p3"])] {
        for c in contexts() {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let fingerprint = updated.write_toggles_json(&c, &scope, &mut a);
            assert_eq!(fingerprint, fresh.write_toggles_json(&c, &scope, &mut b));
            assert_eq!(String::from_utf8(a), String::from_utf8(b));
            let mut counted = Vec::new();
            updated.write_toggles_json_counted(&c, &scope, &mut Vec::new(), |i| counted.push(i));
            let expected: Vec<usize> = fresh
                .evaluate_all(&c, &scope)
                .iter()
                .map(|t| fresh.flag_index(t.name).unwrap())
                .collect();
            assert_eq!(counted, expected);
        }
    }
}

#[test]
fn a_field_read_two_ways_is_parsed_each_way() {
    // The number reading comes first (cheaper constraints go first) and fails; the version reading
    // of the same field must still be parsed.
    let s = snapshot(
        r#"{"features":[{"name":"a","enabled":true,"strategies":[{"name":"default","constraints":[
            {"contextName":"v","operator":"SEMVER_EQ","value":"1.2.3"},
            {"contextName":"v","operator":"NUM_LT","value":"5","inverted":true}]}]},
          {"name":"b","enabled":true,"strategies":[{"name":"default","constraints":[
            {"contextName":"v","operator":"NUM_LT","value":"5"}]}]}]}"#,
    );
    let names = |c: &Context| -> Vec<&str> {
        s.evaluate_all(c, &Projects::All)
            .iter()
            .map(|t| t.name)
            .collect()
    };
    assert_eq!(names(&ctx(r#"{"properties":{"v":"1.2.3"}}"#)), ["a"]);
    assert_eq!(names(&ctx(r#"{"properties":{"v":"4"}}"#)), ["b"]);
}

#[test]
fn updates_decline_once_replaced_constraints_outnumber_live_ones() {
    let options = CompileOptions::default();
    let flag = |n: usize| -> Feature {
        serde_json::from_value(
            serde_json::json!({"name": "f", "enabled": true, "strategies": [
            {"name": "default", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": [n.to_string()]}]}]}),
        )
        .unwrap()
    };
    let mut snapshot = Snapshot::compile_parts([&flag(0)], [], &options);
    let (mut updates, mut compiles) = (0, 0);
    for n in 1..=1_000 {
        let f = flag(n);
        snapshot = match snapshot.update(&["f"], |_| Some(&f), [], &options) {
            Some(next) => {
                updates += 1;
                next
            }
            None => {
                compiles += 1;
                Snapshot::compile_parts([&f], [], &options)
            }
        };
        assert!(snapshot.properties.constraints.initial.len() <= 2 + STALE_SLOTS_ALLOWED + 1);
        let user = |id: usize| -> Context { ctx(&format!(r#"{{"userId":"{id}"}}"#)) };
        assert!(snapshot.is_enabled("f", &user(n)));
        assert!(!snapshot.is_enabled("f", &user(n - 1)));
    }
    assert!(updates > 900, "{updates} updates");
    assert!(compiles >= 3, "{compiles} full compiles");
}

#[test]
fn an_update_answers_as_a_full_compile() {
    let options = CompileOptions {
        hostname: Some("web-1".into()),
    };
    let segments: Vec<Segment> = vec![serde_json::from_value(serde_json::json!(
        {"id": 1, "constraints": [{"contextName": "region", "operator": "IN", "values": ["r1"]}]}
    ))
    .unwrap()];
    let mut flags: BTreeMap<String, Feature> = (0..300)
        .map(|i| {
            let name = format!("flag-{:04}", i * 10);
            (name.clone(), varied_flag(&name, i))
        })
        .collect();
    let mut snapshot = Snapshot::compile_parts(flags.values(), &segments, &options);
    assert_same(&snapshot, &flags, &segments);

    let mut step = |flags: &mut BTreeMap<String, Feature>,
                    changes: Vec<(String, Option<Feature>)>| {
        for (name, feature) in &changes {
            match feature {
                Some(f) => flags.insert(name.clone(), f.clone()),
                None => flags.remove(name),
            };
        }
        let names: Vec<&str> = changes.iter().map(|(n, _)| n.as_str()).collect();
        let next = snapshot
            .update(&names, |n| flags.get(n), &segments, &options)
            .expect("an update without dependencies");
        assert_same(&next, flags, &segments);
        snapshot = next;
    };
    // A changed flag: a toggle, then a new strategy.
    let mut f = flags["flag-0100"].clone();
    f.enabled = !f.enabled;
    step(&mut flags, vec![("flag-0100".into(), Some(f))]);
    step(
        &mut flags,
        vec![("flag-0110".into(), Some(varied_flag("flag-0110", 3)))],
    );
    // New flags before the first, between two, after the last, and in a new project.
    let mut newcomer = varied_flag("flag-0015", 4);
    newcomer.project = "p9".into();
    step(
        &mut flags,
        vec![
            ("a-first".into(), Some(varied_flag("a-first", 1))),
            ("flag-0015".into(), Some(newcomer)),
            ("z-last".into(), Some(varied_flag("z-last", 2))),
        ],
    );
    // Removed flags, and one named twice.
    step(
        &mut flags,
        vec![
            ("flag-0000".into(), None),
            ("flag-2990".into(), None),
            ("flag-2990".into(), None),
            ("no-such-flag".into(), None),
        ],
    );
    // A chunk that grows past twice its size is split.
    let crowd: Vec<(String, Option<Feature>)> = (0..150)
        .map(|i| {
            let name = format!("flag-0500-{i:03}");
            let f = varied_flag(&name, i);
            (name, Some(f))
        })
        .collect();
    step(&mut flags, crowd);
    // A whole chunk removed.
    let gone: Vec<(String, Option<Feature>)> = (0..70)
        .map(|i| (format!("flag-{:04}", 1000 + i * 10), None))
        .collect();
    step(&mut flags, gone);
}

#[test]
fn fingerprints_follow_the_written_json() {
    let flags: Vec<Feature> = (0..150)
        .map(|i| varied_flag(&format!("flag-{i:03}"), i))
        .collect();
    let segments: Vec<Segment> = vec![serde_json::from_value(serde_json::json!(
        {"id": 1, "constraints": [{"contextName": "region", "operator": "IN", "values": ["r1"]}]}
    ))
    .unwrap()];
    let s = Snapshot::compile_parts(&flags, &segments, &CompileOptions::default());
    let mut seen: std::collections::HashMap<u64, Vec<u8>> = std::collections::HashMap::new();
    for c in contexts() {
        for scope in [Projects::All, Projects::from_list(&["p1"])] {
            let mut json = Vec::new();
            let fingerprint = s.write_toggles_json(&c, &scope, &mut json);
            let earlier = seen.entry(fingerprint).or_insert_with(|| json.clone());
            assert_eq!(*earlier, json, "one fingerprint, two different outputs");
        }
    }
    let distinct: std::collections::HashSet<&Vec<u8>> = seen.values().collect();
    assert_eq!(distinct.len(), seen.len(), "one output, two fingerprints");
    assert!(seen.len() > 10, "the contexts give different answers");
}

#[test]
fn an_update_declines_dependencies() {
    let options = CompileOptions::default();
    let child: Feature = serde_json::from_value(serde_json::json!(
        {"name": "child", "enabled": true, "dependencies": [{"feature": "parent"}]}
    ))
    .unwrap();
    let parent: Feature =
        serde_json::from_value(serde_json::json!({"name": "parent", "enabled": true})).unwrap();
    let plain = Snapshot::compile_parts([&parent], [], &options);
    assert!(plain
        .update(
            &["child"],
            |n| (n == "child")
                .then_some(&child)
                .or((n == "parent").then_some(&parent)),
            [],
            &options
        )
        .is_none());
    let both = Snapshot::compile_parts([&parent, &child], [], &options);
    assert!(both
        .update(
            &["parent"],
            |n| (n == "child")
                .then_some(&child)
                .or((n == "parent").then_some(&parent)),
            [],
            &options
        )
        .is_none());
}

#[test]
fn a_repeated_constraint_is_worked_out_once_and_only_shared_when_identical() {
    let s = snapshot(
        r#"{"features":[
            {"name":"a","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"plan","operator":"IN","values":["pro"]}]}]},
            {"name":"b","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"plan","operator":"IN","values":["pro"],"inverted":true}]}]},
            {"name":"c","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"plan","operator":"IN","values":["pro"]}]}]},
            {"name":"d","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"plan","operator":"IN","values":["PRO"],"caseInsensitive":true}]}]}
        ]}"#,
    );
    assert_eq!(s.properties.constraints.initial.len(), 3);
    let on = |plan: &str| -> Vec<&str> {
        s.evaluate_all(
            &ctx(&format!(r#"{{"properties":{{"plan":"{plan}"}}}}"#)),
            &Projects::All,
        )
        .iter()
        .map(|t| t.name)
        .collect()
    };
    assert_eq!(on("pro"), ["a", "c"]);
    assert_eq!(on("free"), ["b"]);
}

#[test]
fn snapshot_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Snapshot>();
}

#[test]
fn evaluate_all_filters_projects_sorts_and_drops_disabled() {
    let s = snapshot(
        r#"{"features":[
            {"name":"b","project":"p1","enabled":true,"strategies":[{"name":"default"}]},
            {"name":"a","project":"p2","enabled":true,"impressionData":true,"strategies":[{"name":"default"}]},
            {"name":"c","project":"p1","enabled":false,"strategies":[{"name":"default"}]},
            {"name":"d","project":"p1","enabled":true,"strategies":[{"name":"default","disabled":true}]}
        ]}"#,
    );
    let all: Vec<_> = s
        .evaluate_all(&Context::default(), &Projects::All)
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(all, ["a", "b"]);
    let p1 = s.evaluate_all(&Context::default(), &Projects::from_list(&["p1"]));
    assert_eq!(p1.len(), 1);
    assert_eq!(p1[0].name, "b");
    let json = serde_json::to_value(s.evaluate_all(&Context::default(), &Projects::All)).unwrap();
    assert_eq!(
        json[0],
        serde_json::json!({"name":"a","enabled":true,"impressionData":true,
            "variant":{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}})
    );
}

#[test]
fn unparseable_constraint_values_turn_the_flag_off() {
    for (op, value) in [
        ("NUM_GT", "ten"),
        ("DATE_AFTER", "yesterday"),
        ("SEMVER_EQ", "v1.2.3"),
    ] {
        let s = snapshot(&format!(
            r#"{{"features":[{{"name":"x","enabled":true,"strategies":[
                {{"name":"default","constraints":[{{"contextName":"a","operator":"{op}","value":"{value}","inverted":true}}]}},
                {{"name":"default"}}]}}]}}"#
        ));
        assert!(!s.is_enabled("x", &Context::default()), "{op} {value}");
    }
}

#[test]
fn an_invalid_regex_matches_nothing() {
    let s = snapshot(
        r#"{"features":[
            {"name":"plain","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"a","operator":"REGEX","value":"(["}]}]},
            {"name":"inverted","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"a","operator":"REGEX","value":"([","inverted":true}]}]}
        ]}"#,
    );
    let ctx = ctx(r#"{"properties":{"a":"(["}}"#);
    assert!(!s.is_enabled("plain", &ctx));
    assert!(s.is_enabled("inverted", &ctx));
}

#[test]
fn written_json_equals_the_serialized_toggles() {
    let s = snapshot(
        r#"{"features":[
            {"name":"quote\"d ✓","enabled":true,"impressionData":true,"strategies":[{"name":"default"}],
             "variants":[{"name":"v\\1","weight":1000,"payload":{"type":"json","value":"{\"a\":1}"}}]},
            {"name":"plain","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":"u1"}}]},
            {"name":"strategy-variant","enabled":true,"strategies":[{"name":"default","variants":[{"name":"sv","weight":1}]}]}
        ]}"#,
    );
    for c in [r#"{"userId":"u1"}"#, r#"{"userId":"u2"}"#] {
        let ctx = ctx(c);
        let mut written = Vec::new();
        s.write_toggles_json(&ctx, &Projects::All, &mut written);
        assert!(written.len() <= s.toggles_json_bound(), "the bound holds");
        let expected = serde_json::to_vec(&s.evaluate_all(&ctx, &Projects::All)).unwrap();
        assert_eq!(
            String::from_utf8(written).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }
    let mut empty = Vec::new();
    s.write_toggles_json(
        &Context::default(),
        &Projects::from_list(&["none"]),
        &mut empty,
    );
    assert_eq!(empty, b"[]");
}

#[test]
fn segments_are_checked() {
    let s = snapshot(
        r#"{"features":[
            {"name":"a","enabled":true,"strategies":[{"name":"default","segments":[1]}]},
            {"name":"b","enabled":true,"strategies":[{"name":"default","segments":[1,2]}]},
            {"name":"broken","enabled":true,"strategies":[{"name":"default","segments":[3]},{"name":"default"}]},
            {"name":"missing","enabled":true,"strategies":[{"name":"default","segments":[9]}]}
        ],"segments":[
            {"id":1,"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]},
            {"id":2,"constraints":[{"contextName":"userId","operator":"IN","values":["u1"]}]},
            {"id":3,"constraints":[{"contextName":"plan","operator":"BOGUS","values":["pro"]}]}
        ]}"#,
    );
    let on = |c: &str| -> Vec<&str> {
        let ctx = ctx(c);
        s.evaluate_all(&ctx, &Projects::All)
            .iter()
            .map(|t| t.name)
            .collect()
    };
    assert_eq!(
        on(r#"{"userId":"u1","properties":{"plan":"pro"}}"#),
        ["a", "b"]
    );
    assert_eq!(on(r#"{"userId":"u2","properties":{"plan":"pro"}}"#), ["a"]);
    assert!(on(r#"{"userId":"u1","properties":{"plan":"free"}}"#).is_empty());
}

#[test]
fn unknown_operator_turns_the_flag_off() {
    let s = snapshot(
        r#"{"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"default","constraints":[{"contextName":"a","operator":"BOGUS","value":"1"}]}]}]}"#,
    );
    assert!(!s.is_enabled("x", &Context::default()));
}

#[test]
fn application_hostname_uses_the_configured_host() {
    let s = snapshot(
        r#"{"features":[
            {"name":"on","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"db-1, WEB-1"}}]},
            {"name":"off","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"db-1"}}]}
        ]}"#,
    );
    assert!(s.is_enabled("on", &Context::default()));
    assert!(!s.is_enabled("off", &Context::default()));
}

#[test]
fn remote_address_matches_ipv6_networks_and_literals() {
    let s = snapshot(
        r#"{"features":[{"name":"x","enabled":true,"strategies":[{"name":"remoteAddress","parameters":{"IPs":"2001:db8::/32, 10.0.0.1, not-an-ip"}}]}]}"#,
    );
    assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"2001:db8::42"}"#)));
    assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"10.0.0.1"}"#)));
    assert!(s.is_enabled("x", &ctx(r#"{"remoteAddress":"not-an-ip"}"#)));
    assert!(!s.is_enabled("x", &ctx(r#"{"remoteAddress":"2001:db9::1"}"#)));
    assert!(!s.is_enabled("x", &Context::default()));
}

#[test]
fn strategies_follow_sort_order() {
    let s = snapshot(
        r#"{"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"default","sortOrder":2,"variants":[{"name":"second","weight":1000}]},
            {"name":"default","sortOrder":1,"variants":[{"name":"first","weight":1000}]}]}]}"#,
    );
    assert_eq!(s.variant("x", &Context::default()).name, "first");
}

/// A NUM operator reads a context value padded with whitespace as the number inside (`" 7"` is 7), as the
/// Node, .NET and Java SDKs do; yggdrasil 0.21.7 refuses such a value (BENCHMARKS.md's table of differences).
#[test]
fn num_operators_accept_a_context_value_padded_with_whitespace() {
    let json = r#"{"version":2,"features":[
        {"name":"eq","enabled":true,"strategies":[{"name":"default","constraints":[
            {"contextName":"n","operator":"NUM_EQ","value":"7"}]}]},
        {"name":"gt","enabled":true,"strategies":[{"name":"default","constraints":[
            {"contextName":"n","operator":"NUM_GT","value":"6.5"}]}]},
        {"name":"lte","enabled":true,"strategies":[{"name":"default","constraints":[
            {"contextName":"n","operator":"NUM_LTE","value":"7"}]}]}]}"#;
    let s = snapshot(json);
    let yggdrasil = unleash_yggdrasil::EngineState::default();
    let features: unleash_yggdrasil::ClientFeatures = serde_json::from_str(json).unwrap();
    assert!(yggdrasil
        .take_state(unleash_yggdrasil::UpdateMessage::FullResponse(features))
        .is_none());
    for padded in [" 7", "7 ", "\t7\n", "  7  "] {
        let context = Context {
            properties: [("n".to_owned(), padded.to_owned())].into_iter().collect(),
            ..Context::default()
        };
        let ygg_context = unleash_yggdrasil::Context {
            properties: Some([("n".to_owned(), padded.to_owned())].into_iter().collect()),
            ..unleash_yggdrasil::Context::default()
        };
        for flag in ["eq", "gt", "lte"] {
            assert!(s.is_enabled(flag, &context), "{flag} with {padded:?}");
            assert!(
                !yggdrasil.is_enabled(flag, &ygg_context, &None),
                "yggdrasil now accepts {padded:?} for {flag}: drop the row of BENCHMARKS.md"
            );
        }
    }
    // The unpadded value, for contrast: both engines agree.
    let context = Context {
        properties: [("n".to_owned(), "7".to_owned())].into_iter().collect(),
        ..Context::default()
    };
    let ygg_context = unleash_yggdrasil::Context {
        properties: Some([("n".to_owned(), "7".to_owned())].into_iter().collect()),
        ..unleash_yggdrasil::Context::default()
    };
    for flag in ["eq", "gt", "lte"] {
        assert!(s.is_enabled(flag, &context));
        assert!(yggdrasil.is_enabled(flag, &ygg_context, &None));
    }
}

/// Off, on for everyone, a dependency on an off parent, a split with payloads of each type, a flag outside
/// project p, a flag that needs a user id, a targeted one, and one with every strategy disabled.
const OFREP_FLAGS: &str = r#"{"features":[
  {"name":"a-off","enabled":false,"project":"p","strategies":[{"name":"default"}]},
  {"name":"b-split","enabled":true,"project":"p","impressionData":true,"strategies":[{"name":"default"}],
   "variants":[{"name":"x","weight":500,"stickiness":"default","payload":{"type":"json","value":"{\"a\": [1, 2]}"}},
               {"name":"y","weight":300,"stickiness":"default","payload":{"type":"number","value":"4.5"}},
               {"name":"z","weight":200,"stickiness":"default","payload":{"type":"number","value":"four"}}]},
  {"name":"c-child","enabled":true,"project":"p","strategies":[{"name":"default"}],
   "dependencies":[{"feature":"a-off"}]},
  {"name":"d-other","enabled":true,"project":"q","strategies":[{"name":"default"}]},
  {"name":"e-users","enabled":true,"project":"p","strategies":[{"name":"userWithId","parameters":{"userIds":"7"}}]},
  {"name":"f-plan","enabled":true,"project":"p","strategies":[{"name":"default","constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}],
   "variants":[{"name":"only","weight":1000,"stickiness":"default","payload":{"type":"string","value":"say \"hi\""}}]},
  {"name":"g-none-active","enabled":true,"project":"p","strategies":[{"name":"default","disabled":true}]},
  {"name":"h-mostly-on","enabled":true,"project":"p","strategies":[{"name":"flexibleRollout",
   "parameters":{"rollout":"60","stickiness":"sessionId","groupId":"h"}}]}]}"#;

#[test]
fn ofrep_answers_every_flag_in_scope_as_evaluate_does() {
    let s = snapshot(OFREP_FLAGS);
    let projects = Projects::from_list(&["p"]);
    let mut fingerprints = Vec::new();
    // Whether the rollout laid out on (its likelier outcome) came out on, by context: both must be seen.
    let mut mostly_on = Vec::new();
    for context in [
        r#"{"userId":"7","properties":{"plan":"pro"}}"#,
        r#"{"userId":"8","sessionId":"s"}"#,
        r#"{"sessionId":"s"}"#,
        r#"{"userId":"9","sessionId":"t"}"#,
    ] {
        let c = ctx(context);
        let mut out = Vec::new();
        let mut counted = Vec::new();
        let fingerprint = s.write_ofrep_flags_json(&c, &projects, &mut out, |index, enabled| {
            counted.push((s.flag_name(index).to_owned(), enabled));
        });
        fingerprints.push(fingerprint);
        assert!(out.len() <= s.ofrep_json_bound(), "{context}");
        // The ETag's parts without the body: the same length and fingerprint, the same flags evaluated.
        let mut counted_again = Vec::new();
        let etag = s.ofrep_flags_etag(&c, &projects, |index, enabled| {
            counted_again.push((s.flag_name(index).to_owned(), enabled));
        });
        assert_eq!(etag, (out.len(), fingerprint), "{context}");
        assert_eq!(counted_again, counted, "{context}");
        let written: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        // The same answers, one flag at a time, built here from `evaluate` by the documented rules.
        let mut expected = Vec::new();
        let mut expected_counts = Vec::new();
        for name in [
            "a-off",
            "b-split",
            "c-child",
            "e-users",
            "f-plan",
            "g-none-active",
            "h-mostly-on",
        ] {
            if name == "e-users" && c.user_id.is_none() {
                expected.push(
                    serde_json::json!({"key": name, "errorCode": "TARGETING_KEY_MISSING",
                    "errorDetails": "this flag's strategies need a targetingKey (or userId)"}),
                );
                let mut one = Vec::new();
                assert_eq!(
                    s.write_ofrep_flag_json(name, &c, &projects, &mut one),
                    OfrepFlag::TargetingKeyMissing
                );
                continue;
            }
            let toggle = s.evaluate(name, &c).expect("a flag");
            expected_counts.push((name.to_owned(), toggle.enabled));
            let variant = toggle.variant;
            let value = match (variant.enabled, variant.payload) {
                (false, _) => serde_json::json!(toggle.enabled),
                (true, None) => serde_json::json!(variant.name),
                (true, Some(p)) => match p.payload_type.as_str() {
                    "json" => serde_json::from_str(&p.value).unwrap(),
                    "number" => serde_json::from_str::<serde_json::Number>(&p.value)
                        .map_or(serde_json::json!(p.value), serde_json::Value::Number),
                    _ => serde_json::json!(p.value),
                },
            };

            let reason = match name {
                "a-off" => "DISABLED",
                _ if !toggle.enabled => "DEFAULT",
                "b-split" => "SPLIT",
                "f-plan" => "TARGETING_MATCH",
                "e-users" | "h-mostly-on" => "TARGETING_MATCH",
                _ => "STATIC",
            };
            // No `variant` without a chosen one; `impressionData` only when true.
            let mut answer = serde_json::json!({"key": name, "value": value, "reason": reason,
                "metadata": {"project": "p"}});
            if variant.enabled {
                answer["variant"] = serde_json::json!(variant.name);
            }
            if name == "b-split" {
                answer["metadata"]["impressionData"] = serde_json::json!(true);
            }
            let mut one = Vec::new();
            let outcome = s.write_ofrep_flag_json(name, &c, &projects, &mut one);
            assert_eq!(
                outcome,
                OfrepFlag::Written {
                    index: s.flag_index(name).unwrap(),
                    enabled: toggle.enabled
                }
            );
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(&one).unwrap(),
                answer
            );
            expected.push(answer);
        }
        assert_eq!(written, serde_json::Value::Array(expected), "{context}");
        assert_eq!(counted, expected_counts, "{context}");
        mostly_on.extend(
            counted
                .iter()
                .filter(|(name, _)| name == "h-mostly-on")
                .map(|&(_, enabled)| enabled),
        );
        // Outside the projects in scope, or unknown: not found.
        let mut none = Vec::new();
        assert_eq!(
            s.write_ofrep_flag_json("d-other", &c, &projects, &mut none),
            OfrepFlag::NotFound
        );
        assert_eq!(
            s.write_ofrep_flag_json("nope", &c, &projects, &mut none),
            OfrepFlag::NotFound
        );
        assert!(none.is_empty());
    }
    assert!(
        mostly_on.contains(&true) && mostly_on.contains(&false),
        "{mostly_on:?}"
    );
    // Different answers, different fingerprints; the same answers, the same one from another snapshot.
    assert_ne!(fingerprints[0], fingerprints[1]);
    assert_ne!(fingerprints[1], fingerprints[2]);
    let c = ctx(r#"{"userId":"7","properties":{"plan":"pro"}}"#);
    let mut out = Vec::new();
    assert_eq!(
        fingerprints[0],
        snapshot(OFREP_FLAGS).write_ofrep_flags_json(&c, &projects, &mut out, |_, _| {})
    );
}

#[test]
fn ofrep_bulk_is_one_array_whatever_flags_are_in_scope() {
    // Each flag's usual answer lies in place; answers that differ, flags out of scope and a first answer
    // that is not the chunk's first must still make one well-formed array in name order.
    let s = snapshot(OFREP_FLAGS);
    let c = ctx(r#"{"userId":"7","properties":{"plan":"pro"}}"#);
    let keys = |projects: &Projects| {
        let mut out = Vec::new();
        s.write_ofrep_flags_json(&c, projects, &mut out, |_, _| {});
        let answers: Vec<serde_json::Value> = serde_json::from_slice(&out).expect("JSON");
        answers
            .iter()
            .map(|a| a["key"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&Projects::from_list(&["q"])), ["d-other"]);
    assert_eq!(keys(&Projects::from_list(&["none"])), Vec::<String>::new());
    assert_eq!(
        keys(&Projects::All),
        [
            "a-off",
            "b-split",
            "c-child",
            "d-other",
            "e-users",
            "f-plan",
            "g-none-active",
            "h-mostly-on"
        ]
    );
    let mut out = Vec::new();
    s.write_ofrep_flags_json(&c, &Projects::from_list(&["q"]), &mut out, |_, _| {});
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"[{"key":"d-other","value":true,"reason":"STATIC","metadata":{"project":"q"}}]"#
    );
}

#[test]
fn a_scope_of_some_projects_holds_whether_the_snapshot_has_few_projects_or_many() {
    // Up to 64 projects the scope is a bit mask, past them a list: both leave out the same flags.
    for count in [4, 64, 65, 130] {
        let features: Vec<String> = (0..count)
            .map(|i| {
                format!(
                    r#"{{"name":"f{i:03}","enabled":true,"project":"p{i}","strategies":[{{"name":"default"}}]}}"#
                )
            })
            .collect();
        let s = snapshot(&format!(r#"{{"features":[{}]}}"#, features.join(",")));
        let last = format!("p{}", count - 1);
        let projects = Projects::from_list(&["p0", "p2", &last]);
        let c = ctx("{}");
        let names: Vec<String> = s
            .evaluate_all(&c, &projects)
            .iter()
            .map(|t| t.name.to_owned())
            .collect();
        let expected = vec![
            "f000".to_owned(),
            "f002".to_owned(),
            format!("f{:03}", count - 1),
        ];
        assert_eq!(names, expected, "{count} projects");
        let mut out = Vec::new();
        s.write_ofrep_flags_json(&c, &projects, &mut out, |_, _| {});
        let answers: Vec<serde_json::Value> = serde_json::from_slice(&out).unwrap();
        let keys: Vec<&str> = answers.iter().map(|a| a["key"].as_str().unwrap()).collect();
        assert_eq!(keys, expected, "{count} projects");
    }
}
