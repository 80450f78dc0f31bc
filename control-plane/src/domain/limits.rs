//! Resource limits (the spec's "Limits"): one instance-wide value per resource, each a command-line flag
//! `--limit-<field in kebab-case>` with env `VEXIL_LIMIT_<FIELD IN SNAKE CASE>`, defaults = the reference's
//! (API.md §3.7). Serialized with the spec's `resourceLimits` field names. Creating past a limit answers 400
//! `ExceedsLimitError` naming the limit.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, clap::Args)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Values in one segment, all its constraints together.
    #[arg(
        long = "limit-segment-values",
        env = "VEXIL_LIMIT_SEGMENT_VALUES",
        default_value_t = 1000
    )]
    pub segment_values: u32,
    /// Segments on one strategy.
    #[arg(
        long = "limit-strategy-segments",
        env = "VEXIL_LIMIT_STRATEGY_SEGMENTS",
        default_value_t = 5
    )]
    pub strategy_segments: u32,
    /// Actions per action set.
    #[arg(
        long = "limit-action-set-actions",
        env = "VEXIL_LIMIT_ACTION_SET_ACTIONS",
        default_value_t = 10
    )]
    pub action_set_actions: u32,
    /// Action sets per project.
    #[arg(
        long = "limit-action-sets-per-project",
        env = "VEXIL_LIMIT_ACTION_SETS_PER_PROJECT",
        default_value_t = 5
    )]
    pub action_sets_per_project: u32,
    /// Filters (payload paths) per action set.
    #[arg(
        long = "limit-action-set-filters",
        env = "VEXIL_LIMIT_ACTION_SET_FILTERS",
        default_value_t = 5
    )]
    pub action_set_filters: u32,
    /// Filter values inside an action set, all its filters together.
    #[arg(
        long = "limit-action-set-filter-values",
        env = "VEXIL_LIMIT_ACTION_SET_FILTER_VALUES",
        default_value_t = 25
    )]
    pub action_set_filter_values: u32,
    /// Signal endpoints.
    #[arg(
        long = "limit-signal-endpoints",
        env = "VEXIL_LIMIT_SIGNAL_ENDPOINTS",
        default_value_t = 5
    )]
    pub signal_endpoints: u32,
    /// Tokens per signal endpoint.
    #[arg(
        long = "limit-signal-tokens-per-endpoint",
        env = "VEXIL_LIMIT_SIGNAL_TOKENS_PER_ENDPOINT",
        default_value_t = 5
    )]
    pub signal_tokens_per_endpoint: u32,
    /// Strategies of one flag in one environment.
    #[arg(
        long = "limit-feature-environment-strategies",
        env = "VEXIL_LIMIT_FEATURE_ENVIRONMENT_STRATEGIES",
        default_value_t = 30
    )]
    pub feature_environment_strategies: u32,
    /// Values of one constraint.
    #[arg(
        long = "limit-constraint-values",
        env = "VEXIL_LIMIT_CONSTRAINT_VALUES",
        default_value_t = 250
    )]
    pub constraint_values: u32,
    /// Constraints of one strategy.
    #[arg(
        long = "limit-constraints",
        env = "VEXIL_LIMIT_CONSTRAINTS",
        default_value_t = 30
    )]
    pub constraints: u32,
    /// Environments; at least 1.
    #[arg(long = "limit-environments", env = "VEXIL_LIMIT_ENVIRONMENTS", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub environments: u32,
    /// Admin, client and frontend API tokens together (not personal access tokens).
    #[arg(
        long = "limit-api-tokens",
        env = "VEXIL_LIMIT_API_TOKENS",
        default_value_t = 2000
    )]
    pub api_tokens: u32,
    /// Projects; at least 1.
    #[arg(long = "limit-projects", env = "VEXIL_LIMIT_PROJECTS", default_value_t = 500,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub projects: u32,
    /// Segments.
    #[arg(
        long = "limit-segments",
        env = "VEXIL_LIMIT_SEGMENTS",
        default_value_t = 300
    )]
    pub segments: u32,
    /// Live flags (archived ones do not count); at least 1.
    #[arg(long = "limit-feature-flags", env = "VEXIL_LIMIT_FEATURE_FLAGS", default_value_t = 5000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub feature_flags: u32,
    /// Release templates not archived.
    #[arg(
        long = "limit-release-templates",
        env = "VEXIL_LIMIT_RELEASE_TEMPLATES",
        default_value_t = 10
    )]
    pub release_templates: u32,
}

impl Default for Limits {
    /// The reference's defaults.
    fn default() -> Self {
        Limits {
            segment_values: 1000,
            strategy_segments: 5,
            action_set_actions: 10,
            action_sets_per_project: 5,
            action_set_filters: 5,
            action_set_filter_values: 25,
            signal_endpoints: 5,
            signal_tokens_per_endpoint: 5,
            feature_environment_strategies: 30,
            constraint_values: 250,
            constraints: 30,
            environments: 50,
            api_tokens: 2000,
            projects: 500,
            segments: 300,
            feature_flags: 5000,
            release_templates: 10,
        }
    }
}

/// 400 `ExceedsLimitError` when `count` (what there would be after the write) is over `limit`. `name` is the
/// limit's `resourceLimits` field, `what` the counted thing.
pub fn ensure_within(name: &str, what: &str, count: usize, limit: u32) -> Result<(), ApiError> {
    if count > limit as usize {
        return Err(ApiError::new(
            ErrorKind::ExceedsLimit,
            format!(
                "The {name} limit is {limit}: {what} would be {count}. Raise it with --limit-{} if needed.",
                kebab(name)
            ),
        ));
    }
    Ok(())
}

/// `featureFlags` → `feature-flags`.
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        limits: Limits,
    }

    #[test]
    fn defaults_are_the_reference_defaults_and_flags_override() {
        let parsed = Flags::try_parse_from(["x"]).unwrap().limits;
        assert_eq!(parsed, Limits::default());
        let parsed = Flags::try_parse_from([
            "x",
            "--limit-feature-flags",
            "7",
            "--limit-segment-values",
            "3",
        ])
        .unwrap()
        .limits;
        assert_eq!(parsed.feature_flags, 7);
        assert_eq!(parsed.segment_values, 3);
        assert!(Flags::try_parse_from(["x", "--limit-projects", "0"]).is_err());
        let json = serde_json::to_value(Limits::default()).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 17);
        assert_eq!(json["featureEnvironmentStrategies"], 30);
        assert_eq!(json["signalTokensPerEndpoint"], 5);
    }

    #[test]
    fn the_error_names_the_limit() {
        assert!(ensure_within("segments", "segments", 300, 300).is_ok());
        let error = ensure_within("featureFlags", "live flags", 6, 5).unwrap_err();
        assert_eq!(error.kind, ErrorKind::ExceedsLimit);
        assert!(
            error.message.contains("featureFlags limit is 5"),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("--limit-feature-flags"),
            "{}",
            error.message
        );
    }
}
