//! The admin UI's words for the API's names: strategies ("Gradual rollout" for `flexibleRollout`), a
//! strategy's one-line summary, constraint operators ("is one of" for `IN`), parameters, stickiness, context
//! fields ("User ID" for `userId`), a field path in a refusal, and a constraint as a chip ("country is one of
//! NO, SE") whose title keeps the API's form (`country IN [NO, SE]`) for engineers, and what a flag serves in
//! an environment in a few words ("50% · 2 constraints"). Every page that names one of these takes the words
//! from here.

use crate::domain::lifecycle::LifecycleStage;
use crate::domain::playground::PlaygroundConstraint;
use crate::domain::strategies::Strategy;
use crate::domain::strategy_definitions::StrategyDefinition;
use crate::model::constraint::Constraint;
use maud::{html, Markup};
use std::collections::{BTreeMap, HashMap};

/// Values a chip or summary shows before "+N more".
pub const VALUES_SHOWN: usize = 5;

/// The name people read of a built-in strategy.
pub fn built_in_strategy(name: &str) -> Option<&'static str> {
    Some(match name {
        "default" => "Standard (on for everyone)",
        "flexibleRollout" => "Gradual rollout",
        "userWithId" => "User IDs",
        "remoteAddress" => "IPs",
        "applicationHostname" => "Hosts",
        "gradualRolloutUserId" => "Gradual rollout by user ID",
        "gradualRolloutSessionId" => "Gradual rollout by session ID",
        "gradualRolloutRandom" => "Randomized rollout",
        _ => return None,
    })
}

/// Strategy names as people read them: the built-ins' own, a custom strategy's definition title (or its name).
#[derive(Debug, Default)]
pub struct StrategyNames {
    titles: HashMap<String, String>,
}

impl StrategyNames {
    pub fn of(definitions: &[StrategyDefinition]) -> StrategyNames {
        let titles = definitions
            .iter()
            .filter_map(|definition| {
                let title = definition.display_name.as_deref()?.trim();
                (!title.is_empty()).then(|| (definition.name.clone(), title.to_owned()))
            })
            .collect();
        StrategyNames { titles }
    }

    /// `flexibleRollout` → "Gradual rollout"; a custom strategy → its title, else its name.
    pub fn name<'a>(&'a self, api_name: &'a str) -> &'a str {
        built_in_strategy(api_name)
            .or_else(|| self.titles.get(api_name).map(String::as_str))
            .unwrap_or(api_name)
    }
}

/// A strategy's heading: its own title when it has one, else its strategy's name; with the API name as a
/// tooltip.
pub fn strategy_heading(names: &StrategyNames, api_name: &str, title: Option<&str>) -> Markup {
    let kind = names.name(api_name);
    let title = title.map(str::trim).filter(|title| !title.is_empty());
    html! {
        span.strategy-name title=(format!("API name: {api_name}")) {
            @match title {
                Some(title) => { (title) " " span.muted { "· " (kind) } }
                None => { (kind) }
            }
        }
    }
}

/// A parameter's label (`groupId` → "Group"); a custom strategy's parameters keep their own names.
pub fn parameter_label(parameter: &str) -> String {
    match parameter {
        "rollout" => "Rollout",
        "stickiness" => "Stickiness",
        "groupId" => "Group",
        "userIds" => "User IDs",
        "IPs" => "IP addresses",
        "hostNames" => "Host names",
        "percentage" => "Percentage",
        other => return other.to_owned(),
    }
    .to_owned()
}

/// What a built-in parameter does, where the definition's own description (Unleash's) says it poorly.
pub fn parameter_hint(parameter: &str) -> Option<&'static str> {
    match parameter {
        "stickiness" => {
            Some("What keeps a person in or out of the rollout from one visit to the next")
        }
        "groupId" => Some("Strategies with the same group and rollout reach the same people"),
        _ => None,
    }
}

/// A stickiness value as the strategy form offers it.
pub fn stickiness_label(value: &str) -> String {
    match value {
        "default" => "Default (userId, then sessionId, then random)".to_owned(),
        "random" => "Random".to_owned(),
        other => context_field_label(other),
    }
}

/// A context field as people read it (`userId` → "User ID"); a custom field: its own name.
pub fn context_field_label(name: &str) -> String {
    match name {
        "userId" => "User ID",
        "sessionId" => "Session ID",
        "appName" => "Application",
        "environment" => "Environment",
        "remoteAddress" => "IP address",
        "currentTime" => "Current time",
        other => return other.to_owned(),
    }
    .to_owned()
}

/// A body field's path as people read it, for a refusal beside its control: `context.appName` →
/// "Application", `constraints[1].values` → "Values", `parameters.groupId` → "Group", `tokenName` → "Token
/// name".
pub fn field_label(path: &str) -> String {
    let last = path.rsplit('.').next().unwrap_or(path);
    let last = last.split('[').next().unwrap_or(last);
    let known = match last {
        "contextName" => Some("Context field"),
        "operator" => Some("Operator"),
        "value" => Some("Value"),
        "values" => Some("Values"),
        _ => None,
    };
    if let Some(known) = known {
        return known.to_owned();
    }
    if path.starts_with("context.") {
        return context_field_label(last);
    }
    if path.starts_with("parameters.") {
        let label = parameter_label(last);
        if label != last {
            return label;
        }
    }
    words_of(last)
}

/// `tokenName` → "Token name".
fn words_of(camel: &str) -> String {
    let mut words = String::new();
    for (index, character) in camel.chars().enumerate() {
        if index == 0 {
            words.extend(character.to_uppercase());
        } else if character.is_uppercase() {
            words.push(' ');
            words.extend(character.to_lowercase());
        } else {
            words.push(character);
        }
    }
    words
}

/// What a constraint operator says, inverted or not (`IN` → "is one of", inverted "is not one of").
pub fn operator_phrase(operator: &str, inverted: bool) -> String {
    let (plain, negated) = match operator {
        "IN" => ("is one of", "is not one of"),
        "NOT_IN" => ("is not one of", "is one of"),
        "STR_CONTAINS" => ("contains", "does not contain"),
        "STR_STARTS_WITH" => ("starts with", "does not start with"),
        "STR_ENDS_WITH" => ("ends with", "does not end with"),
        "NUM_EQ" => ("=", "≠"),
        "NUM_GT" => (">", "is not >"),
        "NUM_GTE" => ("≥", "is not ≥"),
        "NUM_LT" => ("<", "is not <"),
        "NUM_LTE" => ("≤", "is not ≤"),
        "DATE_AFTER" => ("is after", "is not after"),
        "DATE_BEFORE" => ("is before", "is not before"),
        "SEMVER_EQ" => ("is version", "is not version"),
        "SEMVER_GT" => ("is a version after", "is not a version after"),
        "SEMVER_LT" => ("is a version before", "is not a version before"),
        "SEMVER_GTE" => ("is version or after", "is not version or after"),
        "SEMVER_LTE" => ("is version or before", "is not version or before"),
        "REGEX" => ("matches", "does not match"),
        "IN_CIDR" => ("is in", "is not in"),
        other => {
            return if inverted {
                format!("not {other}")
            } else {
                other.to_owned()
            }
        }
    };
    (if inverted { negated } else { plain }).to_owned()
}

/// Operators that compare one value (the rest take a list).
pub fn single_valued(operator: &str) -> bool {
    operator.starts_with("NUM_")
        || operator.starts_with("DATE_")
        || operator.starts_with("SEMVER_")
        || operator == "REGEX"
}

/// A date-time as people read it (`2026-01-02T03:04:00.000Z` → "2 Jan 2026, 03:04 UTC"); anything else as is.
pub fn date_text(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => at
            .with_timezone(&chrono::Utc)
            .format("%-d %b %Y, %H:%M UTC")
            .to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

/// The first [`VALUES_SHOWN`] of `values` joined with `join`, then "+N more" for the rest.
pub fn values_text(values: &[String], join: &str) -> String {
    let shown = values
        .iter()
        .take(VALUES_SHOWN)
        .cloned()
        .collect::<Vec<_>>();
    let mut text = shown.join(join);
    if values.len() > VALUES_SHOWN {
        text.push_str(&format!(" +{} more", values.len() - VALUES_SHOWN));
    }
    text
}

/// A constraint, whichever page holds it.
#[derive(Debug, Clone, Copy)]
pub struct Said<'a> {
    pub context_name: &'a str,
    pub operator: &'a str,
    pub values: &'a [String],
    pub value: Option<&'a str>,
    pub case_insensitive: bool,
    pub inverted: bool,
}

impl<'a> From<&'a Constraint> for Said<'a> {
    fn from(constraint: &'a Constraint) -> Said<'a> {
        Said {
            context_name: &constraint.context_name,
            operator: &constraint.operator,
            values: &constraint.values,
            value: constraint.value.as_deref(),
            case_insensitive: constraint.case_insensitive,
            inverted: constraint.inverted,
        }
    }
}

impl<'a> From<&'a PlaygroundConstraint> for Said<'a> {
    fn from(constraint: &'a PlaygroundConstraint) -> Said<'a> {
        Said {
            context_name: &constraint.context_name,
            operator: &constraint.operator,
            values: &constraint.values,
            value: constraint.value.as_deref(),
            case_insensitive: constraint.case_insensitive,
            inverted: constraint.inverted,
        }
    }
}

impl Said<'_> {
    /// "country is one of NO, SE", "Current time is after 2 Jan 2026, 03:04 UTC", "email ends with @a.com or
    /// @b.com (ignoring case)"; long lists end in "+N more".
    pub fn text(&self) -> String {
        let field = context_field_label(self.context_name);
        let phrase = operator_phrase(self.operator, self.inverted);
        let value = if single_valued(self.operator) {
            let value = self.value.unwrap_or_default();
            if self.operator.starts_with("DATE_") {
                date_text(value)
            } else {
                value.to_owned()
            }
        } else if self.values.is_empty() {
            "(no values)".to_owned()
        } else if self.operator.starts_with("STR_") || self.operator == "IN_CIDR" {
            values_text(self.values, " or ")
        } else {
            values_text(self.values, ", ")
        };
        let case = if self.case_insensitive {
            " (ignoring case)"
        } else {
            ""
        };
        format!("{field} {phrase} {value}{case}")
    }

    /// The API's form, every value: `country NOT IN [NO, SE] (case insensitive)`.
    pub fn api_form(&self) -> String {
        let values = if single_valued(self.operator) {
            self.value.unwrap_or_default().to_owned()
        } else {
            format!("[{}]", self.values.join(", "))
        };
        format!(
            "{}{} {} {}{}",
            self.context_name,
            if self.inverted { " NOT" } else { "" },
            self.operator,
            values,
            if self.case_insensitive {
                " (case insensitive)"
            } else {
                ""
            }
        )
    }
}

/// A constraint as a chip: its words, the API's form (every value) as the tooltip.
pub fn constraint_chip<'a>(constraint: impl Into<Said<'a>>) -> Markup {
    let said = constraint.into();
    html! { span.chip title=(said.api_form()) { (said.text()) } }
}

/// A strategy's rule in one line, as people say it: "50% of users by User ID, group new-checkout", "On for
/// everyone", "User IDs: anna, ben"; a custom strategy's parameters by their labels. Empty when a custom
/// strategy has no parameters.
pub fn strategy_summary(name: &str, parameters: &BTreeMap<String, String>) -> String {
    let parameter = |key: &str| {
        parameters
            .get(key)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty())
    };
    let list = |key: &str| -> Vec<String> {
        parameter(key)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let group = parameter("groupId")
        .map(|group| format!(", group {group}"))
        .unwrap_or_default();
    let percent = |key: &str| format!("{}%", parameter(key).unwrap_or("100"));
    match name {
        "default" => "On for everyone".to_owned(),
        "flexibleRollout" => {
            let whom = match parameter("stickiness").unwrap_or("default") {
                "default" => " of users".to_owned(),
                "random" => ", at random".to_owned(),
                "sessionId" => " of sessions".to_owned(),
                other => format!(" of users by {}", context_field_label(other)),
            };
            format!("{}{whom}{group}", percent("rollout"))
        }
        "gradualRolloutUserId" => format!("{} of users by User ID{group}", percent("percentage")),
        "gradualRolloutSessionId" => format!("{} of sessions{group}", percent("percentage")),
        "gradualRolloutRandom" => format!("{}, at random", percent("percentage")),
        "userWithId" => format!("User IDs: {}", values_text(&list("userIds"), ", ")),
        "remoteAddress" => format!("IPs: {}", values_text(&list("IPs"), ", ")),
        "applicationHostname" => format!("Hosts: {}", values_text(&list("hostNames"), ", ")),
        _ => parameters
            .iter()
            .filter(|(_, value)| !value.trim().is_empty())
            .map(|(key, value)| format!("{}: {}", parameter_label(key), value.trim()))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// What a flag serves in an environment, in a few words (the flag list's cells, the top of an environment on
/// the flag's page): "off", "on for everyone", "50% · 2 constraints", "User IDs · 1 segment", "3 strategies";
/// disabled strategies do not count, and with every strategy disabled the flag is off.
pub fn served_summary(names: &StrategyNames, enabled: bool, strategies: &[Strategy]) -> String {
    if !enabled {
        return "off".to_owned();
    }
    let active: Vec<&Strategy> = strategies.iter().filter(|s| !s.disabled).collect();
    match active.as_slice() {
        [] if strategies.is_empty() => "on for everyone".to_owned(),
        [] => "off: every strategy disabled".to_owned(),
        [one] => one_rule(names, one),
        many => format!("{} strategies", many.len()),
    }
}

/// One strategy in brief: its share or kind, then how many constraints and segments it has.
fn one_rule(names: &StrategyNames, strategy: &Strategy) -> String {
    let percent = |key: &str| {
        let value = strategy
            .parameters
            .get(key)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty())
            .unwrap_or("100");
        (value != "100").then(|| format!("{value}%"))
    };
    let kind = match strategy.name.as_str() {
        "default" => None,
        "flexibleRollout" => percent("rollout"),
        "gradualRolloutUserId" | "gradualRolloutSessionId" | "gradualRolloutRandom" => {
            percent("percentage")
        }
        other => Some(names.name(other).to_owned()),
    };
    let counted = |count: usize, what: &str| match count {
        0 => None,
        1 => Some(format!("1 {what}")),
        _ => Some(format!("{count} {what}s")),
    };
    let conditions: Vec<String> = [
        counted(strategy.constraints.len(), "constraint"),
        counted(strategy.segments.len(), "segment"),
    ]
    .into_iter()
    .flatten()
    .collect();
    match (kind, conditions.is_empty()) {
        (None, true) => "on for everyone".to_owned(),
        (kind, _) => std::iter::once(kind.unwrap_or_else(|| "100%".to_owned()))
            .chain(conditions)
            .collect::<Vec<_>>()
            .join(" · "),
    }
}

/// A strategy's rule as a page shows it: the one-line summary, then its conditions (every one must match)
/// as chips (constraints, then segments by name), then its variants' names.
pub struct Rule<'a> {
    pub name: &'a str,
    pub parameters: &'a BTreeMap<String, String>,
    pub constraints: &'a [Constraint],
    pub segments: &'a [i64],
    pub segment_names: &'a HashMap<i64, String>,
    pub variants: Vec<&'a str>,
}

impl Rule<'_> {
    pub fn markup(&self) -> Markup {
        let summary = strategy_summary(self.name, self.parameters);
        html! {
            @if !summary.is_empty() { p.rule-summary { (summary) } }
            @if !self.constraints.is_empty() || !self.segments.is_empty() {
                ul.chips aria-label="Conditions, all must match" {
                    @for constraint in self.constraints { li { (constraint_chip(constraint)) } }
                    @for id in self.segments {
                        li {
                            span.chip.segment-chip title=(format!("segment id {id}")) {
                                "in segment " (self.segment_names.get(id).cloned().unwrap_or_else(|| format!("#{id}")))
                            }
                        }
                    }
                }
            }
            @if !self.variants.is_empty() {
                p.rule-variants { "Variants: " (self.variants.join(", ")) }
            }
        }
    }
}

/// A lifecycle stage as people read it.
pub fn stage_words(stage: LifecycleStage) -> &'static str {
    match stage {
        LifecycleStage::Initial => "Initial",
        LifecycleStage::PreLive => "Pre-live",
        LifecycleStage::Live => "Live",
        LifecycleStage::Completed => "Completed",
        LifecycleStage::Archived => "Archived",
    }
}

/// What a stage means, for a badge's title.
fn stage_meaning(stage: LifecycleStage) -> &'static str {
    match stage {
        LifecycleStage::Initial => "No SDK has reported the flag yet",
        LifecycleStage::PreLive => "Seen by an SDK outside production",
        LifecycleStage::Live => "Seen by an SDK in a production environment",
        LifecycleStage::Completed => "Marked completed: ready to be cleaned up",
        LifecycleStage::Archived => "Archived",
    }
}

/// A stage as a badge, its meaning in the title.
pub fn stage_badge(stage: LifecycleStage) -> Markup {
    let live = matches!(stage, LifecycleStage::Live | LifecycleStage::Completed);
    html! {
        span.badge.state-good[live] title=(stage_meaning(stage)) { (stage_words(stage)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraint(operator: &str, values: &[&str], value: Option<&str>) -> Constraint {
        Constraint {
            context_name: "country".to_owned(),
            operator: operator.to_owned(),
            values: values.iter().map(|value| (*value).to_owned()).collect(),
            value: value.map(str::to_owned),
            case_insensitive: false,
            inverted: false,
        }
    }

    #[test]
    fn constraints_read_as_sentences_with_the_api_form_as_title() {
        let listed = constraint("IN", &["NO", "SE"], None);
        assert_eq!(Said::from(&listed).text(), "country is one of NO, SE");
        assert_eq!(
            constraint_chip(&listed).into_string(),
            "<span class=\"chip\" title=\"country IN [NO, SE]\">country is one of NO, SE</span>"
        );
        let mut ends = constraint("STR_ENDS_WITH", &["@a.com", "@b.com"], None);
        ends.context_name = "email".to_owned();
        ends.inverted = true;
        ends.case_insensitive = true;
        assert_eq!(
            Said::from(&ends).text(),
            "email does not end with @a.com or @b.com (ignoring case)"
        );
        let mut date = constraint("DATE_AFTER", &[], Some("2026-01-02T03:04:00.000Z"));
        date.context_name = "currentTime".to_owned();
        assert_eq!(
            Said::from(&date).text(),
            "Current time is after 2 Jan 2026, 03:04 UTC"
        );
        let semver = constraint("SEMVER_GT", &[], Some("2.0.0"));
        assert_eq!(
            Said::from(&semver).text(),
            "country is a version after 2.0.0"
        );
        let many: Vec<String> = (0..17).map(|n| format!("c{n}")).collect();
        let long = Constraint {
            values: many,
            ..listed
        };
        let said = Said::from(&long);
        assert_eq!(said.text(), "country is one of c0, c1, c2, c3, c4 +12 more");
        assert!(said.api_form().ends_with("c15, c16]"));
    }

    fn strategy(name: &str, parameters: &[(&str, &str)], constraints: usize) -> Strategy {
        Strategy {
            id: String::new(),
            name: name.to_owned(),
            title: None,
            disabled: false,
            feature_name: "f".to_owned(),
            sort_order: 0,
            segments: Vec::new(),
            constraints: (0..constraints)
                .map(|_| constraint("IN", &["NO"], None))
                .collect(),
            variants: Vec::new(),
            parameters: parameters
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn an_environment_is_summed_up_in_a_few_words() {
        let names = StrategyNames::default();
        let half = strategy("flexibleRollout", &[("rollout", "50")], 2);
        assert_eq!(
            served_summary(&names, false, std::slice::from_ref(&half)),
            "off"
        );
        assert_eq!(served_summary(&names, true, &[]), "on for everyone");
        assert_eq!(
            served_summary(&names, true, std::slice::from_ref(&half)),
            "50% · 2 constraints"
        );
        let everyone = strategy("flexibleRollout", &[("rollout", "100")], 0);
        assert_eq!(served_summary(&names, true, &[everyone]), "on for everyone");
        let mut users = strategy("userWithId", &[("userIds", "anna")], 0);
        users.segments = vec![4];
        assert_eq!(
            served_summary(&names, true, &[users]),
            "User IDs · 1 segment"
        );
        assert_eq!(
            served_summary(&names, true, &[strategy("default", &[], 1)]),
            "100% · 1 constraint"
        );
        let mut paused = half.clone();
        paused.disabled = true;
        assert_eq!(
            served_summary(&names, true, &[paused.clone()]),
            "off: every strategy disabled"
        );
        let three = [half.clone(), half.clone(), half.clone(), paused];
        assert_eq!(served_summary(&names, true, &three), "3 strategies");
    }

    #[test]
    fn strategies_and_fields_have_names_people_read() {
        let names = StrategyNames::default();
        assert_eq!(names.name("flexibleRollout"), "Gradual rollout");
        assert_eq!(names.name("default"), "Standard (on for everyone)");
        assert_eq!(names.name("mine"), "mine");
        let parameters = BTreeMap::from([
            ("rollout".to_owned(), "50".to_owned()),
            ("stickiness".to_owned(), "userId".to_owned()),
            ("groupId".to_owned(), "new-checkout".to_owned()),
        ]);
        assert_eq!(
            strategy_summary("flexibleRollout", &parameters),
            "50% of users by User ID, group new-checkout"
        );
        assert_eq!(field_label("context.appName"), "Application");
        assert_eq!(field_label("constraints[1].values"), "Values");
        assert_eq!(field_label("parameters.groupId"), "Group");
        assert_eq!(field_label("segments[0]"), "Segments");
        assert_eq!(field_label("tokenName"), "Token name");
        assert_eq!(
            operator_phrase("SEMVER_LT", true),
            "is not a version before"
        );
    }
}
