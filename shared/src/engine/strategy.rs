//! Activation strategies compiled once per snapshot.

use std::collections::BTreeMap;
use std::ops::Range;

use ipnet::IpNet;
use rustc_hash::FxHashMap;

use super::constraint::{parse_net, CompileError, CompiledConstraint, StrSet};
use super::eval::Eval;
use super::field::{ContextField, Stickiness};
use super::hash::{random_bucket, HashGroup, ROLLOUT_SEED};
use super::slots::{EvalSlots, FALSE, NOT_WORKED_OUT};
use super::variant::VariantSet;
use crate::model::{FeatureStrategy, Segment};

/// A strategy ready to evaluate: its rule, its constraints (its segments' constraints appended) and its variants.
#[derive(Debug)]
pub(crate) struct CompiledStrategy {
    rule: Rule,
    /// Its constraints, within the snapshot's one array of constraints.
    constraints: Range<u32>,
    /// Boxed: needed only once the strategy matched, so kept out of the way of the walk over strategies.
    pub(crate) variants: Option<Box<VariantSet>>,
}

#[derive(Debug)]
enum Rule {
    /// `default`, `userWithId` (its user ids are a constraint), or `applicationHostname` on a matching host.
    Always,
    /// An unknown (custom) strategy, a missing segment, `applicationHostname` on another host.
    Never,
    /// `flexibleRollout`, `gradualRolloutUserId`, `gradualRolloutSessionId`, `gradualRolloutRandom`.
    Rollout {
        stickiness: Stickiness,
        group: HashGroup,
        percentage: u32,
    },
    RemoteAddress {
        nets: Box<[IpNet]>,
        literals: StrSet,
    },
}

impl CompiledStrategy {
    pub(crate) fn compile(
        s: &FeatureStrategy,
        flag_name: &str,
        segments: &FxHashMap<i64, &Segment>,
        hostname: &str,
        properties: &mut EvalSlots,
        all_constraints: &mut Vec<CompiledConstraint>,
    ) -> Result<Self, CompileError> {
        let p = &s.parameters;
        let mut rule = match s.name.as_str() {
            "default" => Rule::Always,
            "flexibleRollout" => Rule::Rollout {
                stickiness: Stickiness::parse(param(p, "stickiness"), properties),
                group: HashGroup::new(param(p, "groupId").unwrap_or(flag_name), ROLLOUT_SEED, 100),
                percentage: percentage(param(p, "rollout")),
            },
            "gradualRolloutUserId" => Rule::Rollout {
                stickiness: Stickiness::Field(ContextField::UserId),
                group: HashGroup::new(param(p, "groupId").unwrap_or(""), ROLLOUT_SEED, 100),
                percentage: percentage(param(p, "percentage")),
            },
            "gradualRolloutSessionId" => Rule::Rollout {
                stickiness: Stickiness::Field(ContextField::SessionId),
                group: HashGroup::new(param(p, "groupId").unwrap_or(""), ROLLOUT_SEED, 100),
                percentage: percentage(param(p, "percentage")),
            },
            "gradualRolloutRandom" => Rule::Rollout {
                stickiness: Stickiness::Random,
                group: HashGroup::new("", ROLLOUT_SEED, 100),
                percentage: percentage(param(p, "percentage")),
            },
            "userWithId" => Rule::Always,
            "remoteAddress" => {
                let entries = csv(param(p, "IPs"));
                Rule::RemoteAddress {
                    nets: entries.iter().filter_map(|e| parse_net(e)).collect(),
                    literals: StrSet::new(&entries),
                }
            }
            "applicationHostname" => {
                let host = hostname.to_lowercase();
                if csv(param(p, "hostNames"))
                    .iter()
                    .any(|h| h.to_lowercase() == host)
                {
                    Rule::Always
                } else {
                    Rule::Never
                }
            }
            _ => Rule::Never,
        };

        let mut constraints = s
            .constraints
            .iter()
            .map(|c| CompiledConstraint::compile(c, properties))
            .collect::<Result<Vec<_>, _>>()?;
        if s.name == "userWithId" {
            // A set lookup on `userId` (worked out for each context up front, as constraints' are), in front
            // of a rule that always holds.
            let ids: Vec<String> = csv(param(p, "userIds"))
                .into_iter()
                .map(Into::into)
                .collect();
            constraints.push(CompiledConstraint::set_lookup("userId", &ids, properties));
        }
        for id in &s.segments {
            match segments.get(id) {
                Some(segment) => {
                    for c in &segment.constraints {
                        constraints.push(CompiledConstraint::compile(c, properties)?);
                    }
                }
                None => rule = Rule::Never,
            }
        }

        constraints.sort_by_key(CompiledConstraint::cost);
        let start = all_constraints.len() as u32;
        all_constraints.extend(constraints);
        let constraints = start..all_constraints.len() as u32;

        let group = param(p, "groupId").unwrap_or(flag_name);
        let variants = VariantSet::compile(
            &s.variants,
            Stickiness::parse(param(p, "stickiness"), properties),
            group,
            properties,
        );
        Ok(CompiledStrategy {
            rule,
            constraints,
            variants: variants.map(Box::new),
        })
    }

    /// Whether the strategy is on for this context: its constraints first (`all_constraints` and their
    /// `slots` are the chunk's arrays, which its range indexes), then its own rule.
    pub(crate) fn is_on(
        &self,
        e: &Eval<'_>,
        all_constraints: &[CompiledConstraint],
        slots: &[u32],
    ) -> bool {
        if matches!(self.rule, Rule::Never) {
            return false;
        }
        let own = self.constraints.start as usize..self.constraints.end as usize;
        // Which results the constraints have so far, gathered without a branch per constraint (whether a
        // constraint holds depends on the context, so such branches are mispredicted often): one result
        // known false decides, and only when none is, those not worked out yet are, in order.
        let seen = slots[own.clone()]
            .iter()
            .fold(0u8, |seen, &slot| seen | 1 << e.constraint_result(slot));
        if seen & (1 << FALSE) != 0 {
            return false;
        }
        if seen & (1 << NOT_WORKED_OUT) != 0
            && !all_constraints[own.clone()]
                .iter()
                .zip(&slots[own])
                .all(|(c, &slot)| c.matches_in_slot(slot, e))
        {
            return false;
        }
        self.rule_holds(e)
    }

    fn rule_holds(&self, e: &Eval<'_>) -> bool {
        match &self.rule {
            Rule::Always => true,
            Rule::Never => false,
            Rule::Rollout {
                stickiness,
                group,
                percentage,
            } => {
                if *percentage == 0 {
                    return false;
                }
                let value = match stickiness {
                    Stickiness::Default => e.ctx.user_id.as_deref().or(e.ctx.session_id.as_deref()),
                    Stickiness::Random => None,
                    Stickiness::Field(field) => match e.value(field) {
                        Some(v) => Some(v),
                        None => return false,
                    },
                };
                if *percentage >= 100 {
                    return true;
                }
                let bucket = match value {
                    Some(v) => group.bucket(v),
                    None => random_bucket(100),
                };
                bucket <= *percentage
            }
            Rule::RemoteAddress { nets, literals } => {
                e.ctx.remote_address.as_deref().is_some_and(|addr| {
                    literals.contains(addr.trim())
                        || e.ip_of(&ContextField::RemoteAddress)
                            .is_some_and(|ip| nets.iter().any(|n| n.contains(&ip)))
                })
            }
        }
    }
}

fn param<'a>(p: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    p.get(name)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
}

/// A percentage parameter as a whole number 0..=100; anything unreadable is 0 (never on).
fn percentage(value: Option<&str>) -> u32 {
    let n = value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    if n.is_nan() || n <= 0.0 {
        0
    } else {
        n.min(100.0).floor() as u32
    }
}

fn csv(value: Option<&str>) -> Vec<&str> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_clamped_and_floored() {
        assert_eq!(percentage(Some("50.9")), 50);
        assert_eq!(percentage(Some("250")), 100);
        assert_eq!(percentage(Some("-3")), 0);
        assert_eq!(percentage(Some("abc")), 0);
        assert_eq!(percentage(None), 0);
    }

    #[test]
    fn csv_trims_and_drops_empties() {
        assert_eq!(csv(Some(" a, b,,c ")), vec!["a", "b", "c"]);
    }
}
