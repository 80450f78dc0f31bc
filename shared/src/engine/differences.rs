//! The deliberate differences from yggdrasil (BENCHMARKS.md, "Where Vexil answers differently from
//! yggdrasil"): each case is evaluated by both engines on the same one-flag document and context, so that
//! this fails when Vexil's answer changes, and also when yggdrasil starts answering as Vexil does (then the
//! row goes from the table).

use super::compile::CompileOptions;
use super::snapshot::Snapshot;
use crate::context::Context;
use crate::model::FeaturesDocument;
use unleash_yggdrasil::{ClientFeatures, EngineState, UpdateMessage};

/// One document compiled by both engines.
struct Both {
    vexil: Snapshot,
    yggdrasil: EngineState,
}

impl Both {
    fn new(json: &str) -> Both {
        let vexil = Snapshot::compile_with(
            &FeaturesDocument::from_json(json).unwrap(),
            &CompileOptions {
                hostname: Some("web-1".into()),
            },
        );
        let yggdrasil = EngineState::default();
        let features: ClientFeatures = serde_json::from_str(json).unwrap();
        // Warnings are expected here: some of these documents are the odd cases themselves.
        let _ = yggdrasil.take_state(UpdateMessage::FullResponse(features));
        Both { vexil, yggdrasil }
    }

    /// (Vexil's answer, yggdrasil's answer) for `flag` in the context given as JSON.
    fn enabled(&self, flag: &str, context: &str) -> (bool, bool) {
        let ours: Context = serde_json::from_str(context).unwrap();
        let theirs: unleash_yggdrasil::Context = serde_json::from_str(context).unwrap();
        (
            self.vexil.is_enabled(flag, &ours),
            self.yggdrasil.is_enabled(flag, &theirs, &None),
        )
    }

    /// (Vexil's variant name, yggdrasil's variant name).
    fn variant(&self, flag: &str, context: &str) -> (String, String) {
        let ours: Context = serde_json::from_str(context).unwrap();
        let theirs: unleash_yggdrasil::Context = serde_json::from_str(context).unwrap();
        (
            self.vexil.variant(flag, &ours).name.to_owned(),
            self.yggdrasil.get_variant(flag, &theirs, &None).name,
        )
    }
}

fn user(id: usize) -> String {
    format!(r#"{{"userId":"user-{id}"}}"#)
}

/// A parent's flexibleRollout without groupId hashes with the parent's name also when it is evaluated
/// through a child, so the child agrees with the parent's own answer; yggdrasil hashes with the child's name.
#[test]
fn a_parent_rollout_without_group_id_hashes_with_the_parents_name() {
    let both = Both::new(
        r#"{"version":2,"features":[
            {"name":"parent","enabled":true,"strategies":[{"name":"flexibleRollout",
              "parameters":{"rollout":"50","stickiness":"userId"}}]},
            {"name":"child","enabled":true,"strategies":[{"name":"default"}],
              "dependencies":[{"feature":"parent"}]}]}"#,
    );
    let mut yggdrasil_disagrees_with_itself = 0;
    for id in 0..200 {
        let context = user(id);
        let (parent, parent_ygg) = both.enabled("parent", &context);
        let (child, child_ygg) = both.enabled("child", &context);
        assert_eq!(child, parent, "{context}");
        if child_ygg != parent_ygg {
            yggdrasil_disagrees_with_itself += 1;
        }
    }
    assert!(yggdrasil_disagrees_with_itself > 0);
}

/// A dependency on given variants of a parent that has no variants is not met (the parent's variant is
/// `disabled`); yggdrasil counts it as met.
#[test]
fn a_dependency_on_variants_of_a_parent_without_variants_is_not_met() {
    let both = Both::new(
        r#"{"version":2,"features":[
            {"name":"parent","enabled":true,"strategies":[{"name":"default"}]},
            {"name":"child","enabled":true,"strategies":[{"name":"default"}],
              "dependencies":[{"feature":"parent","variants":["blue"]}]}]}"#,
    );
    assert_eq!(both.enabled("child", &user(1)), (false, true));
}

/// A strategy with `disabled: true` is skipped, as Unleash's UI shows it ("paused"); yggdrasil evaluates it.
#[test]
fn a_disabled_strategy_is_skipped() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,
            "strategies":[{"name":"default","disabled":true}]}]}"#,
    );
    assert_eq!(both.enabled("x", &user(1)), (false, true));
}

/// Strategies are evaluated in `sortOrder`, as the Unleash server orders them; yggdrasil takes list order.
#[test]
fn strategies_are_evaluated_in_sort_order() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"default","sortOrder":2,"variants":[{"name":"second","weight":1000,"stickiness":"default"}]},
            {"name":"default","sortOrder":1,"variants":[{"name":"first","weight":1000,"stickiness":"default"}]}]}]}"#,
    );
    assert_eq!(
        both.variant("x", &user(1)),
        ("first".to_owned(), "second".to_owned())
    );
}

/// A strategy naming a segment the document lacks is off, and the flag's other strategies still count;
/// yggdrasil turns the whole flag off.
#[test]
fn a_missing_segment_turns_only_its_strategy_off() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"default","segments":[9]},{"name":"default"}]}],"segments":[]}"#,
    );
    assert_eq!(both.enabled("x", &user(1)), (true, false));
}

/// gradualRolloutUserId without groupId hashes with the group `""`; yggdrasil turns it off.
#[test]
fn a_gradual_rollout_without_group_id_uses_the_empty_group() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"gradualRolloutUserId","parameters":{"percentage":"100"}}]}]}"#,
    );
    assert_eq!(both.enabled("x", &user(1)), (true, false));
}

/// A fractional percentage is floored (`"99.5"` is 99 %); yggdrasil refuses it and turns the flag off.
#[test]
fn a_fractional_percentage_is_floored() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"flexibleRollout","parameters":{"rollout":"99.5","stickiness":"userId","groupId":"x"}}]}]}"#,
    );
    let on: Vec<(bool, bool)> = (0..50).map(|id| both.enabled("x", &user(id))).collect();
    assert!(on.iter().filter(|(ours, _)| *ours).count() >= 45);
    assert!(on.iter().all(|(_, theirs)| !theirs));
}

/// A remoteAddress entry that is not an IP address is compared as text; yggdrasil never matches it.
#[test]
fn a_remote_address_entry_that_is_not_an_ip_matches_literally() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"remoteAddress","parameters":{"IPs":"not-an-ip"}}]}]}"#,
    );
    assert_eq!(
        both.enabled("x", r#"{"remoteAddress":"not-an-ip"}"#),
        (true, false)
    );
}

/// applicationHostname compares the configured host name (here `web-1`); yggdrasil, built without its
/// `hostname` feature, is always off.
#[test]
fn application_hostname_compares_the_host_name() {
    let both = Both::new(
        r#"{"version":2,"features":[{"name":"x","enabled":true,"strategies":[
            {"name":"applicationHostname","parameters":{"hostNames":"web-1"}}]}]}"#,
    );
    assert_eq!(both.enabled("x", "{}"), (true, false));
}
