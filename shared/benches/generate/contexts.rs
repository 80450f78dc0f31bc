//! The evaluation contexts, drawn from the shared vocabulary, in Vexil's and in yggdrasil's type.

use std::collections::BTreeMap;

use vexil_shared::Context;

use super::vocabulary::*;
use super::Rng;

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
