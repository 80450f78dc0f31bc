//! Activation strategies in a sentence's words: the names of [`crate::ui::vocabulary`] (every page's), in
//! lower case mid-sentence, with a gradual rollout's percentage (`flexibleRollout` with `rollout: 50` →
//! "gradual rollout of 50%").

use crate::ui::vocabulary::built_in_strategy;
use serde_json::Value;

/// A strategy's name mid-sentence: `flexibleRollout` → "gradual rollout of 50%" (when its parameters give
/// the percentage), `default` → "standard (on for everyone)", `userWithId` → "user IDs", `remoteAddress` →
/// "IPs"; a custom strategy keeps its own name.
pub fn strategy_name(name: &str, parameters: Option<&Value>) -> String {
    let Some(built_in) = built_in_strategy(name) else {
        return name.to_owned();
    };
    let named = mid_sentence(built_in);
    match rollout_of(name, parameters) {
        Some(percent) => format!("{named} of {percent}"),
        None => named,
    }
}

/// "Gradual rollout" → "gradual rollout"; "IPs" stays (an abbreviation keeps its capitals).
fn mid_sentence(name: &str) -> String {
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if second.is_lowercase() => first
            .to_lowercase()
            .chain(name[first.len_utf8()..].chars())
            .collect(),
        _ => name.to_owned(),
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
            "gradual rollout by user ID of 10%"
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
