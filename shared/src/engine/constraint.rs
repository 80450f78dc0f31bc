//! Constraints compiled once per snapshot: values parsed, lists turned into sets, lower-cased copies made,
//! regexes built, CIDR masks computed.

use std::net::IpAddr;

use chrono::{DateTime, Utc};
use ipnet::IpNet;
use regex::Regex;
use semver::Version;

use super::eval::{parse_date, Eval};
use super::field::ContextField;
use super::hash::text_hash;
use super::operator::Operator;
use super::slots::{EvalSlots, SetLookup, FALSE, TRUE};
use crate::model::Constraint;

/// Why a flag could not be compiled; such a flag is always off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    #[error("unknown constraint operator `{0}`")]
    UnknownOperator(String),
    #[error("`{value}` is not a valid value for {operator}")]
    InvalidValue { operator: String, value: String },
}

/// A constraint ready to evaluate.
#[derive(Debug)]
pub(crate) struct CompiledConstraint {
    field: ContextField,
    inverted: bool,
    op: Op,
    /// Where an evaluation keeps this constraint's result (see `EvalSlots::constraint_slot`).
    slot: u32,
}

#[derive(Debug, Clone, Copy)]
enum Ordering {
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
}

impl Ordering {
    fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Ordering::Eq => ord == Equal,
            Ordering::Gt => ord == Greater,
            Ordering::Gte => ord != Less,
            Ordering::Lt => ord == Less,
            Ordering::Lte => ord != Greater,
        }
    }
}

#[derive(Debug)]
enum Op {
    In(StrSet),
    NotIn(StrSet),
    StartsWith(Box<TextValues>),
    EndsWith(Box<TextValues>),
    Contains(Box<TextValues>),
    Num(Ordering, f64),
    DateAfter(DateTime<Utc>),
    DateBefore(DateTime<Utc>),
    /// Boxed, as the regex is: the rare large variants would otherwise make every constraint as large.
    Semver(Ordering, Box<Version>),
    Regex(Box<Regex>),
    InCidr(Box<[IpNet]>),
    /// The constraint's regex does not compile: it matches nothing (as the reference engine does), so its
    /// inverse matches everything.
    Unsatisfiable,
}

impl CompiledConstraint {
    pub(crate) fn compile(
        c: &Constraint,
        properties: &mut EvalSlots,
    ) -> Result<Self, CompileError> {
        let single = c.value.as_deref().unwrap_or("").trim();
        let op = match Operator::parse(&c.operator) {
            Some(Operator::In) => Op::In(StrSet::new(&c.values)),
            Some(Operator::NotIn) => Op::NotIn(StrSet::new(&c.values)),
            Some(Operator::StrStartsWith) => {
                Op::StartsWith(Box::new(TextValues::new(&c.values, c.case_insensitive)))
            }
            Some(Operator::StrEndsWith) => {
                Op::EndsWith(Box::new(TextValues::new(&c.values, c.case_insensitive)))
            }
            Some(Operator::StrContains) => {
                Op::Contains(Box::new(TextValues::new(&c.values, c.case_insensitive)))
            }
            Some(Operator::NumEq) => Op::Num(Ordering::Eq, number(c, single)?),
            Some(Operator::NumGt) => Op::Num(Ordering::Gt, number(c, single)?),
            Some(Operator::NumGte) => Op::Num(Ordering::Gte, number(c, single)?),
            Some(Operator::NumLt) => Op::Num(Ordering::Lt, number(c, single)?),
            Some(Operator::NumLte) => Op::Num(Ordering::Lte, number(c, single)?),
            Some(Operator::DateAfter) => Op::DateAfter(date(c, single)?),
            Some(Operator::DateBefore) => Op::DateBefore(date(c, single)?),
            Some(Operator::SemverEq) => Op::Semver(Ordering::Eq, Box::new(version(c, single)?)),
            Some(Operator::SemverGt) => Op::Semver(Ordering::Gt, Box::new(version(c, single)?)),
            Some(Operator::SemverGte) => Op::Semver(Ordering::Gte, Box::new(version(c, single)?)),
            Some(Operator::SemverLt) => Op::Semver(Ordering::Lt, Box::new(version(c, single)?)),
            Some(Operator::SemverLte) => Op::Semver(Ordering::Lte, Box::new(version(c, single)?)),
            Some(Operator::Regex) => regex::RegexBuilder::new(c.value.as_deref().unwrap_or(""))
                .case_insensitive(c.case_insensitive)
                .build()
                .map_or(Op::Unsatisfiable, |re| Op::Regex(Box::new(re))),
            Some(Operator::InCidr) => {
                Op::InCidr(c.values.iter().filter_map(|v| parse_net(v)).collect())
            }
            None => return Err(CompileError::UnknownOperator(c.operator.clone())),
        };
        Ok(Self::with_op(c, op, properties))
    }

    /// The constraint `<field> IN <values>`: how `userWithId` strategies and variant overrides look up
    /// their values.
    pub(crate) fn set_lookup(field: &str, values: &[String], properties: &mut EvalSlots) -> Self {
        let c = Constraint {
            context_name: field.into(),
            operator: "IN".into(),
            case_insensitive: false,
            inverted: false,
            values: values.to_vec(),
            value: None,
        };
        let op = Op::In(StrSet::new(&c.values));
        Self::with_op(&c, op, properties)
    }

    /// `c` with its operator compiled to `op`.
    fn with_op(c: &Constraint, op: Op, properties: &mut EvalSlots) -> Self {
        let field = ContextField::parse(&c.context_name, properties);
        // A set lookup's result is worked out for every context before any flag is walked (see
        // `EvalSlots::constraint_slot`): what it is when the field's value is in no set, and which values flip it.
        let set_lookup = match &op {
            Op::In(set) => Some((set, c.inverted)),
            Op::NotIn(set) => Some((set, !c.inverted)),
            _ => None,
        }
        .map(|(set, when_absent)| SetLookup {
            field: field.slot(),
            values: set.values(),
            when_absent,
        });
        let slot = properties.constraint_slot(c, set_lookup);
        CompiledConstraint {
            field,
            inverted: c.inverted,
            op,
            slot,
        }
    }

    /// A rough cost of evaluating the constraint, so that a strategy tries its cheap constraints first (they
    /// are all pure: the order changes no result, only how soon a failing one stops the others).
    pub(crate) fn cost(&self) -> u8 {
        match self.op {
            Op::In(_) | Op::NotIn(_) | Op::Unsatisfiable => 0,
            Op::StartsWith(_) | Op::EndsWith(_) | Op::Contains(_) => 1,
            Op::Num(..) | Op::DateAfter(_) | Op::DateBefore(_) | Op::InCidr(_) => 2,
            Op::Semver(..) => 3,
            Op::Regex(_) => 4,
        }
    }

    /// Whether the context satisfies the constraint, worked out once per evaluation for all the
    /// constraints that share its slot.
    #[inline]
    pub(crate) fn matches(&self, e: &Eval<'_>) -> bool {
        self.matches_in_slot(self.slot, e)
    }

    /// [`CompiledConstraint::matches`] with the constraint's slot given, read from a chunk's dense array of
    /// slots: a result already worked out is then found without reading the constraint itself.
    #[inline]
    pub(crate) fn matches_in_slot(&self, slot: u32, e: &Eval<'_>) -> bool {
        let Some(memo) = e.constraints.get(slot as usize) else {
            return self.evaluate(e);
        };
        match memo.get() {
            FALSE => false,
            TRUE => true,
            _ => {
                let result = self.evaluate(e);
                memo.set(if result { TRUE } else { FALSE });
                result
            }
        }
    }

    pub(crate) fn slot(&self) -> u32 {
        self.slot
    }

    /// Whether the context satisfies the constraint. An absent field satisfies only `NOT_IN`; `inverted`
    /// applies last. Out of line: the walk over strategies calls it only for a result not worked out yet,
    /// which a set lookup's always is (see `EvalSlots::constraint_slot`).
    #[inline(never)]
    fn evaluate(&self, e: &Eval<'_>) -> bool {
        let hit = match &self.op {
            Op::In(set) => e.value(&self.field).is_some_and(|v| set.contains(v)),
            Op::NotIn(set) => e.value(&self.field).is_none_or(|v| !set.contains(v)),
            Op::DateAfter(t) => e.time_of(&self.field).is_some_and(|now| now > *t),
            Op::DateBefore(t) => e.time_of(&self.field).is_some_and(|now| now < *t),
            Op::InCidr(nets) => e
                .ip_of(&self.field)
                .is_some_and(|ip| nets.iter().any(|n| n.contains(&ip))),
            Op::Num(ord, want) => e.number_of(&self.field).is_some_and(|got| match ord {
                Ordering::Eq => (got - want).abs() < f64::EPSILON,
                _ => got.partial_cmp(want).is_some_and(|o| ord.holds(o)),
            }),
            Op::Semver(ord, want) => {
                e.version_holds(&self.field, |got| ord.holds(cmp_semver(got, want)))
            }
            op => e.value(&self.field).is_some_and(|v| op.holds_for(v)),
        };
        hit != self.inverted
    }
}

impl Op {
    fn holds_for(&self, v: &str) -> bool {
        match self {
            Op::StartsWith(t) => t.any(v, starts_with_ascii_ci, |h, n| h.starts_with(n)),
            Op::EndsWith(t) => t.any(v, ends_with_ascii_ci, |h, n| h.ends_with(n)),
            Op::Contains(t) => t.any(v, contains_ascii_ci, |h, n| h.contains(n)),
            Op::Regex(re) => re.is_match(v),
            // Set and typed operators are worked out in `evaluate`; an unsatisfiable constraint matches
            // nothing.
            Op::In(_)
            | Op::NotIn(_)
            | Op::Num(..)
            | Op::Semver(..)
            | Op::DateAfter(_)
            | Op::DateBefore(_)
            | Op::InCidr(_)
            | Op::Unsatisfiable => false,
        }
    }
}

/// Semantic-version precedence (build metadata ignored, as SemVer 2.0 says).
fn cmp_semver(a: &Version, b: &Version) -> std::cmp::Ordering {
    (a.major, a.minor, a.patch, &a.pre).cmp(&(b.major, b.minor, b.patch, &b.pre))
}

/// Whether the engine would take `c` as written: a known operator, a number, date or semver where the
/// operator compares one, a regex that compiles, every `IN_CIDR` value a network or address. (Compiling
/// never fails on a bad regex or CIDR, it matches nothing; the admin API's constraint check asks here.)
pub fn check(c: &Constraint) -> Result<(), CompileError> {
    let single = c.value.as_deref().unwrap_or("").trim();
    match Operator::parse(&c.operator) {
        None => return Err(CompileError::UnknownOperator(c.operator.clone())),
        Some(
            Operator::NumEq
            | Operator::NumGt
            | Operator::NumGte
            | Operator::NumLt
            | Operator::NumLte,
        ) => {
            number(c, single)?;
        }
        Some(Operator::DateAfter | Operator::DateBefore) => {
            date(c, single)?;
        }
        Some(
            Operator::SemverEq
            | Operator::SemverGt
            | Operator::SemverGte
            | Operator::SemverLt
            | Operator::SemverLte,
        ) => {
            version(c, single)?;
        }
        Some(Operator::Regex) => {
            let pattern = c.value.as_deref().unwrap_or("");
            if regex::Regex::new(pattern).is_err() {
                return Err(invalid(c, pattern));
            }
        }
        Some(Operator::InCidr) => {
            if let Some(bad) = c.values.iter().find(|value| parse_net(value).is_none()) {
                return Err(invalid(c, bad));
            }
        }
        Some(
            Operator::In
            | Operator::NotIn
            | Operator::StrStartsWith
            | Operator::StrEndsWith
            | Operator::StrContains,
        ) => {}
    }
    Ok(())
}

fn invalid(c: &Constraint, value: &str) -> CompileError {
    CompileError::InvalidValue {
        operator: c.operator.clone(),
        value: value.to_owned(),
    }
}

fn number(c: &Constraint, value: &str) -> Result<f64, CompileError> {
    match value.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(n),
        _ => Err(invalid(c, value)),
    }
}

fn date(c: &Constraint, value: &str) -> Result<DateTime<Utc>, CompileError> {
    parse_date(value).ok_or_else(|| invalid(c, value))
}

fn version(c: &Constraint, value: &str) -> Result<Version, CompileError> {
    Version::parse(value).map_err(|_| invalid(c, value))
}

/// A network (`10.0.0.0/8`, `::1/128`) or a single address taken as a host network.
pub(crate) fn parse_net(value: &str) -> Option<IpNet> {
    let value = value.trim();
    value
        .parse::<IpNet>()
        .ok()
        .or_else(|| value.parse::<IpAddr>().ok().map(IpNet::from))
}

/// An exact-match string set. Each value is kept beside its [`text_hash`], sorted by hash, so that a lookup
/// compares 8-byte hashes and compares text only when a hash matches; a short set is scanned, a long one
/// binary-searched. A constraint's set lookup is worked out for each context from the values up front (see
/// `EvalSlots::constraint_slot`); the set itself answers the `remoteAddress` rule's literal addresses
/// (faster than a binary search over the text: measured), and a constraint evaluated without a slot.
#[derive(Debug)]
pub(crate) struct StrSet(Box<[(u64, Box<str>)]>);

impl StrSet {
    const SCAN_LIMIT: usize = 16;

    pub(crate) fn new<S: AsRef<str>>(values: &[S]) -> Self {
        let mut entries: Vec<(u64, Box<str>)> = values
            .iter()
            .map(|v| (text_hash(v.as_ref()), v.as_ref().into()))
            .collect();
        entries.sort_unstable();
        entries.dedup();
        StrSet(entries.into_boxed_slice())
    }

    /// Whether `v`, whose [`text_hash`] is `hash`, is in the set.
    #[inline]
    fn contains_hashed(&self, v: &str, hash: u64) -> bool {
        let entries = &*self.0;
        if entries.len() <= Self::SCAN_LIMIT {
            entries.iter().any(|(h, x)| *h == hash && &**x == v)
        } else {
            let start = entries.partition_point(|(h, _)| *h < hash);
            entries[start..]
                .iter()
                .take_while(|(h, _)| *h == hash)
                .any(|(_, x)| &**x == v)
        }
    }

    /// The distinct values.
    fn values(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, v)| &**v)
    }

    pub(crate) fn contains(&self, v: &str) -> bool {
        self.contains_hashed(v, text_hash(v))
    }
}

/// The values of a string operator; lower-cased at compile time when the constraint is case-insensitive.
#[derive(Debug)]
struct TextValues {
    values: Box<[Box<str>]>,
    case_insensitive: bool,
    /// When case-insensitive: the lower-cased values that are ASCII, the only ones ASCII text can contain.
    ascii_values: Box<[Box<str>]>,
}

impl TextValues {
    fn new(values: &[String], case_insensitive: bool) -> Self {
        let values: Box<[Box<str>]> = values
            .iter()
            .map(|v| {
                if case_insensitive {
                    v.to_lowercase().into()
                } else {
                    v.as_str().into()
                }
            })
            .collect();
        let ascii_values = if case_insensitive {
            values.iter().filter(|v| v.is_ascii()).cloned().collect()
        } else {
            Box::default()
        };
        TextValues {
            values,
            case_insensitive,
            ascii_values,
        }
    }

    /// Whether `test(haystack, value)` holds for any value. Case-insensitive ASCII input is compared without
    /// allocating; other case-insensitive input is lower-cased once.
    fn any(
        &self,
        hay: &str,
        ascii_ci: fn(&[u8], &[u8]) -> bool,
        test: fn(&str, &str) -> bool,
    ) -> bool {
        if !self.case_insensitive {
            return self.values.iter().any(|n| test(hay, n));
        }
        if hay.is_ascii() {
            // Lower-cased ASCII text is ASCII: a value with other characters cannot occur in it.
            return self
                .ascii_values
                .iter()
                .any(|n| ascii_ci(hay.as_bytes(), n.as_bytes()));
        }
        let lower = hay.to_lowercase();
        self.values.iter().any(|n| test(&lower, n))
    }
}

fn starts_with_ascii_ci(hay: &[u8], lower_needle: &[u8]) -> bool {
    hay.len() >= lower_needle.len() && hay[..lower_needle.len()].eq_ignore_ascii_case(lower_needle)
}

fn ends_with_ascii_ci(hay: &[u8], lower_needle: &[u8]) -> bool {
    hay.len() >= lower_needle.len()
        && hay[hay.len() - lower_needle.len()..].eq_ignore_ascii_case(lower_needle)
}

fn contains_ascii_ci(hay: &[u8], lower_needle: &[u8]) -> bool {
    lower_needle.is_empty()
        || hay
            .windows(lower_needle.len())
            .any(|w| w.eq_ignore_ascii_case(lower_needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraint(operator: &str, values: &[&str], value: Option<&str>) -> Constraint {
        Constraint {
            context_name: "field".into(),
            operator: operator.into(),
            case_insensitive: false,
            inverted: false,
            values: values.iter().map(|v| (*v).to_owned()).collect(),
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn check_reads_values_as_the_engine_does() {
        for good in [
            constraint("IN", &[], None),
            constraint("NUM_GT", &[], Some(" 1.5 ")),
            constraint("DATE_AFTER", &[], Some("2026-01-01T00:00:00Z")),
            constraint("SEMVER_LTE", &[], Some("1.2.3-beta.1")),
            constraint("REGEX", &[], Some("^a+$")),
            constraint("IN_CIDR", &["10.0.0.0/8", "::1"], None),
        ] {
            assert!(check(&good).is_ok(), "{good:?}");
        }
        for bad in [
            constraint("LIKE", &[], None),
            constraint("NUM_EQ", &[], Some("NaN")),
            constraint("NUM_EQ", &[], None),
            constraint("DATE_BEFORE", &[], Some("soon")),
            constraint("SEMVER_EQ", &[], Some("1.2")),
            constraint("REGEX", &[], Some("(")),
            constraint("IN_CIDR", &["10.0.0.0/33"], None),
        ] {
            assert!(check(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ascii_case_insensitive_helpers() {
        assert!(starts_with_ascii_ci(b"HeLLo", b"hel"));
        assert!(!starts_with_ascii_ci(b"He", b"hel"));
        assert!(ends_with_ascii_ci(b"HeLLo", b"llo"));
        assert!(contains_ascii_ci(b"xxHeLLoxx", b"hello"));
        assert!(!contains_ascii_ci(b"xxHeLoxx", b"hello"));
    }

    #[test]
    fn case_insensitive_values_with_other_characters_still_match() {
        let t = TextValues::new(&["ØYVIND".to_owned(), "Zoe".to_owned()], true);
        let contains = |hay: &str| t.any(hay, contains_ascii_ci, |h, n| h.contains(n));
        assert!(contains("hi ZOE!"));
        assert!(contains("øyvind@x"));
        assert!(contains("hi ZOË and ØYVIND"));
        assert!(!contains("hi zoë"));
        assert!(!contains("OYVIND"));
    }

    #[test]
    fn large_sets_hash() {
        let values: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let set = StrSet::new(&values);
        assert!(set.0.len() > StrSet::SCAN_LIMIT);
        assert!(set.contains("42"));
        assert!(!set.contains("420"));
    }

    #[test]
    fn set_lookups_worked_out_up_front_agree_with_evaluating_them() {
        let mut slots = EvalSlots::default();
        let constraints: Vec<CompiledConstraint> = serde_json::json!([
            {"contextName": "userId", "operator": "IN", "values": ["1", "2", "2"]},
            {"contextName": "userId", "operator": "IN", "values": ["2", "3"], "inverted": true},
            {"contextName": "userId", "operator": "NOT_IN", "values": ["1"]},
            {"contextName": "userId", "operator": "NOT_IN", "values": ["1", "4"], "inverted": true},
            {"contextName": "plan", "operator": "IN", "values": ["pro", ""]},
            {"contextName": "plan", "operator": "NOT_IN", "values": ["PRO"], "caseInsensitive": true},
            {"contextName": "plan", "operator": "IN", "values": ["pro", ""]},
            {"contextName": "environment", "operator": "IN", "values": []},
            {"contextName": "environment", "operator": "NOT_IN", "values": [], "inverted": true},
            {"contextName": "country", "operator": "STR_STARTS_WITH", "values": ["N"]}
        ])
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let c: Constraint = serde_json::from_value(c.clone()).unwrap();
            CompiledConstraint::compile(&c, &mut slots).unwrap()
        })
        .collect();
        let contexts = [
            serde_json::json!({}),
            serde_json::json!({"userId": "1", "properties": {"plan": "pro"}}),
            serde_json::json!({"userId": "2", "environment": "", "properties": {"plan": ""}}),
            serde_json::json!({"userId": "4", "properties": {"plan": "PRO", "country": "NO"}}),
            serde_json::json!({"userId": " 1", "environment": "prod"}),
        ];
        let mut checked = 0;
        for ctx in contexts {
            let ctx: crate::context::Context = serde_json::from_value(ctx).unwrap();
            super::super::eval::with_eval(&ctx, &slots, 0, |e| {
                for c in &constraints {
                    let up_front = e.constraints[c.slot as usize].get();
                    if matches!(c.op, Op::In(_) | Op::NotIn(_)) {
                        assert_eq!(up_front == TRUE, c.evaluate(e), "{c:?} {ctx:?}");
                        assert_ne!(up_front, super::super::slots::NOT_WORKED_OUT);
                        checked += 1;
                    } else {
                        assert_eq!(up_front, super::super::slots::NOT_WORKED_OUT);
                    }
                }
            });
        }
        assert_eq!(checked, 5 * 9);
    }

    #[test]
    fn every_listed_operator_compiles_and_no_other() {
        let mut slots = EvalSlots::default();
        for op in Operator::ALL {
            let value = match op {
                Operator::NumEq
                | Operator::NumGt
                | Operator::NumGte
                | Operator::NumLt
                | Operator::NumLte => "1",
                Operator::DateAfter | Operator::DateBefore => "2024-01-01T00:00:00Z",
                Operator::SemverEq
                | Operator::SemverGt
                | Operator::SemverLt
                | Operator::SemverGte
                | Operator::SemverLte => "1.0.0",
                _ => "a",
            };
            let c: Constraint = serde_json::from_value(serde_json::json!(
                {"contextName": "x", "operator": op.as_str(), "value": value, "values": [value]}
            ))
            .unwrap();
            assert!(
                CompiledConstraint::compile(&c, &mut slots).is_ok(),
                "{op:?}"
            );
        }
        let c: Constraint = serde_json::from_value(serde_json::json!(
            {"contextName": "x", "operator": "in", "values": ["a"]}
        ))
        .unwrap();
        assert_eq!(
            CompiledConstraint::compile(&c, &mut slots).err(),
            Some(CompileError::UnknownOperator("in".into()))
        );
    }

    #[test]
    fn semver_ignores_build_metadata() {
        let a = Version::parse("1.0.0+a").unwrap();
        let b = Version::parse("1.0.0+b").unwrap();
        assert_eq!(cmp_semver(&a, &b), std::cmp::Ordering::Equal);
    }
}
