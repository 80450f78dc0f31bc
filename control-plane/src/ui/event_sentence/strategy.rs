//! Activation strategies in people's words, from the name the API gives them and their parameters
//! (`flexibleRollout` with `rollout: 50` → "gradual rollout of 50%"). Self-contained (plain strings in,
//! strings out), so any page may use it.

use serde_json::Value;

/// A strategy's name as people read it: `flexibleRollout` → "gradual rollout of 50%" (when its parameters
/// give the percentage), `default` → "standard (on for everyone)", `userWithId` → "user IDs",
/// `remoteAddress` → "IPs", `applicationHostname` → "hosts"; a custom strategy keeps its own name.
pub fn strategy_name(name: &str, parameters: Option<&Value>) -> String {
    match name {
        "flexibleRollout"
        | "gradualRolloutRandom"
        | "gradualRolloutSessionId"
        | "gradualRolloutUserId" => match rollout_of(name, parameters) {
            Some(percent) => format!("gradual rollout of {percent}"),
            None => "gradual rollout".to_owned(),
        },
        "default" => "standard (on for everyone)".to_owned(),
        "userWithId" => "user IDs".to_owned(),
        "remoteAddress" => "IPs".to_owned(),
        "applicationHostname" => "hosts".to_owned(),
        other => other.to_owned(),
    }
}

/// A strategy as the object of a sentence ("added … to new-checkout"): "a gradual rollout of 50%",
/// "a standard strategy (on for everyone)", "a strategy for user IDs", "the strategy my-custom".
pub fn strategy_phrase(name: &str, parameters: Option<&Value>) -> String {
    let named = strategy_name(name, parameters);
    match name {
        "flexibleRollout"
        | "gradualRolloutRandom"
        | "gradualRolloutSessionId"
        | "gradualRolloutUserId" => format!("a {named}"),
        "default" => "a standard strategy (on for everyone)".to_owned(),
        "userWithId" | "remoteAddress" | "applicationHostname" => format!("a strategy for {named}"),
        _ => format!("the strategy {named}"),
    }
}

/// The percentage of a gradual rollout's parameters ("50%"); `None` for other strategies or without one.
pub fn rollout_of(name: &str, parameters: Option<&Value>) -> Option<String> {
    let parameter = match name {
        "flexibleRollout" => "rollout",
        "gradualRolloutRandom" | "gradualRolloutSessionId" | "gradualRolloutUserId" => "percentage",
        _ => return None,
    };
    let percent = match parameters?.get(parameter)? {
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        _ => return None,
    };
    Some(percent)
        .filter(|percent| !percent.is_empty())
        .map(|percent| format!("{percent}%"))
}

#[cfg(test)]
mod tests {
    use super::{rollout_of, strategy_name, strategy_phrase};
    use serde_json::json;

    #[test]
    fn strategies_have_names_people_read() {
        let half = json!({"rollout": "50", "stickiness": "default", "groupId": "x"});
        assert_eq!(
            strategy_name("flexibleRollout", Some(&half)),
            "gradual rollout of 50%"
        );
        assert_eq!(strategy_name("flexibleRollout", None), "gradual rollout");
        assert_eq!(
            strategy_name("gradualRolloutUserId", Some(&json!({"percentage": 10}))),
            "gradual rollout of 10%"
        );
        assert_eq!(strategy_name("default", None), "standard (on for everyone)");
        assert_eq!(strategy_name("userWithId", None), "user IDs");
        assert_eq!(strategy_name("remoteAddress", None), "IPs");
        assert_eq!(strategy_name("applicationHostname", None), "hosts");
        assert_eq!(strategy_name("my-custom", None), "my-custom");
        assert_eq!(
            strategy_phrase("flexibleRollout", Some(&half)),
            "a gradual rollout of 50%"
        );
        assert_eq!(
            strategy_phrase("default", None),
            "a standard strategy (on for everyone)"
        );
        assert_eq!(
            strategy_phrase("userWithId", None),
            "a strategy for user IDs"
        );
        assert_eq!(strategy_phrase("my-custom", None), "the strategy my-custom");
        assert_eq!(
            rollout_of("flexibleRollout", Some(&half)).as_deref(),
            Some("50%")
        );
        assert_eq!(rollout_of("default", None), None);
    }
}
