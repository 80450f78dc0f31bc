//! Why a flag comes out as it does for a context: per strategy, its own rule, each constraint and each
//! segment, evaluated piece by piece with the engine's compiled types. For the admin playground; the hot path
//! ([`Snapshot::evaluate`](super::snapshot::Snapshot::evaluate) and friends) does not use it.

use rustc_hash::FxHashMap;

use super::compile::CompileOptions;
use super::constraint::CompiledConstraint;
use super::eval::{with_eval, Eval};
use super::slots::EvalSlots;
use super::strategy::CompiledStrategy;
use crate::context::Context;
use crate::model::{Feature, FeatureStrategy, Segment};

/// The strategies the engine knows; any other name is a custom strategy, which the engine treats as off.
pub const BUILT_IN_STRATEGY_NAMES: [&str; 8] = [
    "default",
    "flexibleRollout",
    "userWithId",
    "gradualRolloutUserId",
    "gradualRolloutSessionId",
    "gradualRolloutRandom",
    "remoteAddress",
    "applicationHostname",
];

/// A strategy's result for a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyOutcome {
    /// Its rule, every constraint and every segment hold: the strategy enables the flag.
    Matched,
    NotMatched,
    /// A custom strategy whose constraints and segments hold: only an SDK implementing it could tell. The
    /// engine treats it as off.
    Unknown,
    /// Disabled: not evaluated.
    Unevaluated,
}

/// One segment of a strategy for a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentExplanation {
    pub id: i64,
    /// False when the document has no segment with this id (the strategy is then off).
    pub found: bool,
    /// Each of its constraints, in order.
    pub constraints: Vec<bool>,
    pub matched: bool,
}

/// One strategy of a flag for a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyExplanation {
    /// The strategy's index in the flag's `strategies` of the document.
    pub index: usize,
    pub outcome: StrategyOutcome,
    /// Whether the strategy's own rule (rollout, user ids, addresses, host) holds; `None` for a custom or a
    /// disabled strategy.
    pub rule: Option<bool>,
    /// Each of the strategy's own constraints, in order (false for one that cannot be compiled).
    pub constraints: Vec<bool>,
    pub segments: Vec<SegmentExplanation>,
}

/// Explains every strategy of `feature` (disabled ones included), in the order the engine evaluates them
/// (`sortOrder`, stable). `segments` are the document's; `options` as given to
/// [`Snapshot::compile_with`](super::snapshot::Snapshot::compile_with).
pub fn explain_strategies(
    feature: &Feature,
    segments: &[Segment],
    ctx: &Context,
    options: &CompileOptions,
) -> Vec<StrategyExplanation> {
    let hostname = options.hostname();
    let segments: FxHashMap<i64, &Segment> = segments.iter().map(|s| (s.id, s)).collect();
    let mut order: Vec<usize> = (0..feature.strategies.len()).collect();
    order.sort_by_key(|&i| feature.strategies[i].sort_order.unwrap_or(0));
    // Compile everything first (the property slots must be complete before the context is read), then evaluate.
    let mut slots = EvalSlots::default();
    let compiled: Vec<PiecewiseStrategy> = order
        .into_iter()
        .map(|index| {
            PiecewiseStrategy::compile(
                index,
                &feature.strategies[index],
                &feature.name,
                &segments,
                &hostname,
                &mut slots,
            )
        })
        .collect();
    with_eval(ctx, &slots, 0, |e| {
        compiled
            .iter()
            .map(|strategy| strategy.explain(e))
            .collect()
    })
}

/// A strategy's rule alone, with the constraints the rule itself brings (`userWithId`'s user ids) and their
/// slots.
struct BareRule {
    strategy: CompiledStrategy,
    constraints: Vec<CompiledConstraint>,
    slots: Vec<u32>,
}

/// A constraint that could not be compiled is `None` (it holds for nobody, as the engine turns its flag off).
type Constraints = Vec<Option<CompiledConstraint>>;

/// One strategy compiled piece by piece: its rule alone, its constraints, each segment's constraints.
struct PiecewiseStrategy {
    index: usize,
    disabled: bool,
    /// `None` for a custom strategy.
    rule: Option<Option<BareRule>>,
    constraints: Constraints,
    /// By segment id; `None` when the document has no such segment.
    segments: Vec<(i64, Option<Constraints>)>,
}

fn compile_constraints(
    constraints: &[crate::model::Constraint],
    slots: &mut EvalSlots,
) -> Constraints {
    constraints
        .iter()
        .map(|c| CompiledConstraint::compile(c, slots).ok())
        .collect()
}

fn results(constraints: &Constraints, e: &Eval<'_>) -> Vec<bool> {
    constraints
        .iter()
        .map(|c| c.as_ref().is_some_and(|c| c.matches(e)))
        .collect()
}

impl PiecewiseStrategy {
    fn compile(
        index: usize,
        strategy: &FeatureStrategy,
        flag_name: &str,
        segments: &FxHashMap<i64, &Segment>,
        hostname: &str,
        slots: &mut EvalSlots,
    ) -> Self {
        let built_in = BUILT_IN_STRATEGY_NAMES.contains(&strategy.name.as_str());
        let rule = built_in.then(|| {
            // The rule alone: the same strategy without its constraints, segments and variants.
            let bare = FeatureStrategy {
                constraints: Vec::new(),
                segments: Vec::new(),
                variants: Vec::new(),
                ..strategy.clone()
            };
            // Only the rule's own constraints, in a scratch array.
            let mut constraints = Vec::new();
            CompiledStrategy::compile(
                &bare,
                flag_name,
                &FxHashMap::default(),
                hostname,
                slots,
                &mut constraints,
            )
            .ok()
            .map(|strategy| BareRule {
                strategy,
                slots: constraints.iter().map(CompiledConstraint::slot).collect(),
                constraints,
            })
        });
        PiecewiseStrategy {
            index,
            disabled: strategy.disabled,
            rule,
            constraints: compile_constraints(&strategy.constraints, slots),
            segments: strategy
                .segments
                .iter()
                .map(|&id| {
                    let constraints = segments
                        .get(&id)
                        .map(|segment| compile_constraints(&segment.constraints, slots));
                    (id, constraints)
                })
                .collect(),
        }
    }

    fn explain(&self, e: &Eval<'_>) -> StrategyExplanation {
        let constraints = results(&self.constraints, e);
        let segments: Vec<SegmentExplanation> = self
            .segments
            .iter()
            .map(|(id, constraints)| match constraints {
                Some(constraints) => {
                    let constraints = results(constraints, e);
                    SegmentExplanation {
                        id: *id,
                        found: true,
                        matched: constraints.iter().all(|&c| c),
                        constraints,
                    }
                }
                None => SegmentExplanation {
                    id: *id,
                    found: false,
                    constraints: Vec::new(),
                    matched: false,
                },
            })
            .collect();
        if self.disabled {
            return StrategyExplanation {
                index: self.index,
                outcome: StrategyOutcome::Unevaluated,
                rule: None,
                constraints,
                segments,
            };
        }
        let conditions_hold = constraints.iter().all(|&c| c) && segments.iter().all(|s| s.matched);
        let rule = self.rule.as_ref().map(|compiled| {
            compiled
                .as_ref()
                .is_some_and(|bare| bare.strategy.is_on(e, &bare.constraints, &bare.slots))
        });
        let outcome = match rule {
            Some(true) if conditions_hold => StrategyOutcome::Matched,
            None if conditions_hold => StrategyOutcome::Unknown,
            _ => StrategyOutcome::NotMatched,
        };
        StrategyExplanation {
            index: self.index,
            outcome,
            rule,
            constraints,
            segments,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::snapshot::Snapshot;
    use crate::model::FeaturesDocument;

    #[test]
    fn explains_rules_constraints_and_segments_and_agrees_with_the_engine() {
        let doc = FeaturesDocument::from_json(
            r#"{"features":[{"name":"x","enabled":true,"strategies":[
                {"name":"userWithId","sortOrder":1,"parameters":{"userIds":"ann,bob"},
                 "constraints":[{"contextName":"appName","operator":"IN","values":["web"]}],"segments":[1]},
                {"name":"custom","sortOrder":0,"constraints":[{"contextName":"appName","operator":"IN","values":["web"]}]},
                {"name":"default","sortOrder":2,"disabled":true},
                {"name":"default","sortOrder":3,"segments":[9]}
            ]}],
            "segments":[{"id":1,"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}]}"#,
        )
        .unwrap();
        let options = CompileOptions {
            hostname: Some("h".into()),
        };
        let snapshot = Snapshot::compile_with(&doc, &options);
        let ctx: Context =
            serde_json::from_str(r#"{"userId":"ann","appName":"web","properties":{"plan":"pro"}}"#)
                .unwrap();
        let explained = explain_strategies(&doc.features[0], &doc.segments, &ctx, &options);
        let indexes: Vec<usize> = explained.iter().map(|s| s.index).collect();
        assert_eq!(indexes, [1, 0, 2, 3], "sortOrder");
        assert_eq!(explained[0].outcome, StrategyOutcome::Unknown);
        assert_eq!(explained[1].outcome, StrategyOutcome::Matched);
        assert_eq!(explained[1].rule, Some(true));
        assert_eq!(explained[1].segments[0].constraints, [true]);
        assert_eq!(explained[2].outcome, StrategyOutcome::Unevaluated);
        assert_eq!(explained[3].outcome, StrategyOutcome::NotMatched);
        assert!(!explained[3].segments[0].found);
        assert!(snapshot.is_enabled("x", &ctx));

        let basic: Context =
            serde_json::from_str(r#"{"userId":"cy","appName":"web","properties":{"plan":"free"}}"#)
                .unwrap();
        let explained = explain_strategies(&doc.features[0], &doc.segments, &basic, &options);
        assert_eq!(explained[1].outcome, StrategyOutcome::NotMatched);
        assert_eq!(explained[1].rule, Some(false));
        assert_eq!(explained[1].constraints, [true]);
        assert!(!explained[1].segments[0].matched);
        assert!(!snapshot.is_enabled("x", &basic));
    }
}
