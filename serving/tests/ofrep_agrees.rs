//! OFREP bulk (`POST /ofrep/v1/evaluate/flags`) and the frontend API (`GET /api/frontend`) over real HTTP
//! agree: for 200 seeded random contexts against 200 flags of varied strategies, constraints, segments,
//! dependencies and variants, the flags OFREP answers enabled are exactly the frontend's toggles, with the
//! same variants, values and impression data; the flags it answers disabled are absent from the frontend's
//! answer, and `TARGETING_KEY_MISSING` appears only without a targeting key. Every other round asks with a
//! token of two of the three projects: OFREP lists exactly their flags.

mod common;

use std::collections::BTreeMap;

use common::*;
use serde_json::{json, Value};
use vexil_proto::v1;
use vexil_serving::ServingState;
use vexil_shared::model::{FeaturesDocument, Segment};

/// SplitMix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A frontend token of the projects `web` and `mobile`.
const SCOPED: &str = "web:development.scoped-secret";

const PLANS: &[&str] = &["free", "pro", "enterprise", "beta"];
const COUNTRIES: &[&str] = &["se", "no", "de", "fr", "us"];
const VERSIONS: &[&str] = &["1.0.0", "1.4.2", "2.0.0", "2.1.0-beta.1", "3.0.0"];

fn constraint(rng: &mut Rng) -> Value {
    let inverted = rng.below(5) == 0;
    match rng.below(7) {
        0 => {
            json!({"contextName": "plan", "operator": "IN", "values": [rng.pick(PLANS), rng.pick(PLANS)], "inverted": inverted})
        }
        1 => {
            json!({"contextName": "country", "operator": "NOT_IN", "values": [rng.pick(COUNTRIES)]})
        }
        2 => {
            json!({"contextName": "age", "operator": "NUM_GT", "value": (18 + rng.below(50)).to_string(), "inverted": inverted})
        }
        3 => {
            json!({"contextName": "version", "operator": "SEMVER_GT", "value": rng.pick(VERSIONS)})
        }
        4 => {
            json!({"contextName": "userId", "operator": "STR_ENDS_WITH", "values": [rng.below(10).to_string()]})
        }
        5 => {
            json!({"contextName": "plan", "operator": "STR_CONTAINS", "values": ["PR"], "caseInsensitive": true})
        }
        _ => {
            json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2020-01-01T00:00:00Z", "inverted": inverted})
        }
    }
}

/// Variants whose stickiness the context always has (never random: both answers must be deterministic).
fn variants(rng: &mut Rng, name: &str) -> Vec<Value> {
    let payloads = [
        json!({"type": "string", "value": format!("{name}-text")}),
        json!({"type": "json", "value": format!("{{\"flag\":\"{name}\",\"n\":{}}}", rng.below(100))}),
        json!({"type": "number", "value": rng.below(1000).to_string()}),
        Value::Null,
    ];
    (0..1 + rng.below(3))
        .map(|v| {
            let mut variant = json!({
                "name": format!("v{v}"), "weight": 1 + rng.below(1000),
                "stickiness": if rng.below(2) == 0 { "default" } else { "sessionId" },
            });
            let payload = &payloads[rng.below(4) as usize];
            if !payload.is_null() {
                variant["payload"] = payload.clone();
            }
            variant
        })
        .collect()
}

fn strategy(rng: &mut Rng, name: &str) -> Value {
    let mut strategy = match rng.below(7) {
        0 => json!({"name": "default"}),
        1 => {
            json!({"name": "userWithId", "parameters": {"userIds": (0..5).map(|_| format!("user-{}", rng.below(40))).collect::<Vec<_>>().join(",")}})
        }
        2 => {
            json!({"name": "gradualRolloutUserId", "parameters": {"percentage": rng.below(101).to_string(), "groupId": name}})
        }
        3 => {
            json!({"name": "gradualRolloutSessionId", "parameters": {"percentage": rng.below(101).to_string(), "groupId": name}})
        }
        4 => {
            json!({"name": "remoteAddress", "parameters": {"IPs": if rng.below(2) == 0 { "127.0.0.1" } else { "10.0.0.0/8" }}})
        }
        _ => {
            let rollout = (25 * rng.below(5)).to_string();
            let stickiness = rng.pick(&["default", "userId", "sessionId"]);
            json!({"name": "flexibleRollout", "parameters": {
                "rollout": rollout, "stickiness": stickiness, "groupId": name}})
        }
    };
    let constraints: Vec<Value> = (0..rng.below(3)).map(|_| constraint(rng)).collect();
    strategy["constraints"] = Value::Array(constraints);
    if rng.below(4) == 0 {
        strategy["segments"] = json!([1 + rng.below(2)]);
    }
    if rng.below(4) == 0 {
        strategy["variants"] = Value::Array(variants(rng, name));
    }
    if rng.below(8) == 0 {
        strategy["disabled"] = json!(true);
    }
    strategy
}

fn document(rng: &mut Rng) -> FeaturesDocument {
    let features = (0..200)
        .map(|i| {
            let name = format!("flag-{i:03}");
            let project = rng.pick(&["default", "web", "mobile"]);
            let mut flag = json!({
                "name": name, "project": project,
                "enabled": rng.below(6) != 0, "impressionData": rng.below(3) == 0,
                "strategies": (0..rng.below(4)).map(|_| strategy(rng, &name)).collect::<Vec<_>>(),
            });
            if rng.below(3) == 0 {
                flag["variants"] = Value::Array(variants(rng, &name));
            }
            // Children of the first ten flags (which have no parents themselves).
            if i >= 10 && rng.below(8) == 0 {
                let mut dependency = json!({"feature": format!("flag-{:03}", rng.below(10)), "enabled": rng.below(4) != 0});
                if rng.below(3) == 0 {
                    dependency["variants"] = json!(["v0"]);
                }
                flag["dependencies"] = json!([dependency]);
            }
            feature(flag)
        })
        .collect();
    let segment = |id: u64, value: Value| -> Segment {
        serde_json::from_value(json!({"id": id, "name": format!("s{id}"), "constraints": [value]}))
            .unwrap()
    };
    FeaturesDocument {
        version: 2,
        features,
        segments: vec![
            segment(
                1,
                json!({"contextName": "country", "operator": "IN", "values": ["se", "no"]}),
            ),
            segment(
                2,
                json!({"contextName": "plan", "operator": "NOT_IN", "values": ["free"]}),
            ),
        ],
    }
}

/// A random context: (field, value) pairs; `userId` absent in about one in five.
fn context(rng: &mut Rng) -> Vec<(&'static str, String)> {
    let mut fields = vec![("sessionId", format!("s-{}", rng.below(1_000_000)))];
    if rng.below(5) != 0 {
        fields.push(("userId", format!("user-{}", rng.below(60))));
    }
    fields.push(("plan", rng.pick(PLANS).to_owned()));
    if rng.below(2) == 0 {
        fields.push(("country", rng.pick(COUNTRIES).to_owned()));
    }
    if rng.below(2) == 0 {
        fields.push(("age", (10 + rng.below(70)).to_string()));
    }
    if rng.below(2) == 0 {
        fields.push(("version", rng.pick(VERSIONS).to_owned()));
    }
    fields
}

/// What OFREP's `value` is for a frontend variant: its payload by type, else its name.
fn ofrep_value(variant: &Value) -> Value {
    match variant.get("payload") {
        None => variant["name"].clone(),
        Some(payload) => {
            let text = payload["value"].as_str().unwrap();
            match payload["type"].as_str().unwrap() {
                "json" | "number" => serde_json::from_str(text).unwrap(),
                _ => Value::String(text.to_owned()),
            }
        }
    }
}

#[tokio::test]
async fn ofrep_bulk_and_the_frontend_api_answer_the_same_flags_and_variants() {
    let mut rng = Rng(0x0f2e_9b11);
    let first = v1::Full {
        revision: 3,
        environments: vec![vexil_proto::environment_state(
            "development",
            document(&mut rng),
        )],
        tokens: [
            tokens(),
            vec![grant(
                SCOPED,
                v1::TokenKind::Frontend,
                &["web", "mobile"],
                "development",
            )],
        ]
        .concat(),
        settings: None,
    };
    let scoped_names: Vec<String> = first.environments[0]
        .features
        .iter()
        .filter(|f| f.project != "default")
        .map(|f| f.name.clone())
        .collect();
    let in_scope = |name: &str| scoped_names.iter().any(|scoped| scoped == name);
    let scoped_flags = scoped_names.len();
    assert!((50..150).contains(&scoped_flags), "{scoped_flags}");
    let server = Server::start_with(ServingState::new(false), first).await;
    let (mut enabled_seen, mut variants_seen, mut missing_seen) = (0, 0, 0);
    for round in 0..200 {
        let scoped = round % 2 == 1;
        let token = if scoped { SCOPED } else { FRONTEND };
        let fields = context(&mut rng);
        let has_user = fields.iter().any(|(name, _)| *name == "userId");
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let frontend: Value = server
            .http
            .get(server.url(&format!("/api/frontend?{query}")))
            .header("authorization", token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let mut ofrep_context: serde_json::Map<String, Value> = fields
            .iter()
            .map(|(k, v)| {
                let key = if *k == "userId" { "targetingKey" } else { k };
                (key.to_owned(), Value::String(v.clone()))
            })
            .collect();
        if round % 2 == 0 {
            // Numbers are read as their text, as the frontend's query strings are.
            if let Some(age) = ofrep_context.get_mut("age") {
                *age = json!(age.as_str().unwrap().parse::<u64>().unwrap());
            }
        }
        let answer = server
            .http
            .post(server.url("/ofrep/v1/evaluate/flags"))
            .header("authorization", format!("Bearer {token}"))
            .json(&json!({ "context": ofrep_context }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let ofrep: Value = answer.json().await.unwrap();

        let toggles: BTreeMap<&str, &Value> = frontend["toggles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        let flags = ofrep["flags"].as_array().unwrap();
        if scoped {
            assert_eq!(flags.len(), scoped_flags, "OFREP lists every flag in scope");
            assert!(flags.iter().all(|f| in_scope(f["key"].as_str().unwrap())));
        } else {
            assert_eq!(flags.len(), 200, "OFREP lists every flag");
        }
        let mut listed_enabled = 0;
        let mut missing = 0;
        for flag in flags {
            let key = flag["key"].as_str().unwrap();
            if let Some(code) = flag.get("errorCode") {
                assert_eq!(code, "TARGETING_KEY_MISSING", "{key}: {flag}");
                assert!(!has_user, "{key}: missing key with a targeting key");
                missing_seen += 1;
                missing += usize::from(toggles.contains_key(key));
                continue;
            }
            let toggle = toggles.get(key);
            let reason = flag["reason"].as_str().unwrap();
            if reason == "DISABLED" || reason == "DEFAULT" {
                assert_eq!(flag["value"], false, "{key}: {flag}");
                assert!(flag.get("variant").is_none(), "{key}: {flag}");
                assert!(
                    toggle.is_none(),
                    "round {round}: {key} is off in OFREP ({flag}), on in the frontend API"
                );
                continue;
            }
            let toggle = toggle.unwrap_or_else(|| {
                panic!("round {round}: {key} is on in OFREP ({flag}), absent from the frontend API")
            });
            listed_enabled += 1;
            enabled_seen += 1;
            // `impressionData` is left out when false.
            assert_eq!(
                flag["metadata"]
                    .get("impressionData")
                    .unwrap_or(&json!(false)),
                &toggle["impressionData"],
                "{key}: {flag}"
            );
            let variant = &toggle["variant"];
            if variant["enabled"] == true {
                variants_seen += 1;
                assert_eq!(flag["variant"], variant["name"], "round {round}: {key}");
                assert_eq!(flag["value"], ofrep_value(variant), "round {round}: {key}");
            } else {
                assert_eq!(flag["value"], true, "round {round}: {key}");
                assert!(
                    flag.get("variant").is_none(),
                    "round {round}: {key}: {flag}"
                );
            }
        }
        assert_eq!(
            listed_enabled + missing,
            toggles.len(),
            "round {round}: every frontend toggle is on in OFREP"
        );
    }
    // The seeded document and contexts reach every kind of answer.
    assert!(enabled_seen > 10_000, "{enabled_seen}");
    assert!(variants_seen > 3_000, "{variants_seen}");
    assert!(missing_seen > 1_000, "{missing_seen}");
}
