//! The slots of an evaluation's tables ([`EvalSlots`]), given at compile time: one per context property a
//! snapshot reads and one per distinct constraint; the set lookups an evaluation works out up front; the
//! values of a cell of the table of constraint results.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::Constraint;

/// The slots of an evaluation's tables, given at compile time: each context property a snapshot reads (so
/// that an evaluation looks each property up once instead of once per constraint), and each distinct
/// constraint (so that a constraint repeated across strategies, as a segment's are, is evaluated once per
/// context). A snapshot made by `Snapshot::update` keeps its predecessor's slots and adds to them.
#[derive(Debug, Default, Clone)]
pub(crate) struct EvalSlots {
    pub(super) properties: FxHashMap<Box<str>, u32>,
    /// Shared with the snapshots updated from this one until one meets a new constraint.
    pub(super) constraints: Arc<ConstraintSlots>,
}

/// Every distinct constraint's slot, and what an evaluation needs to fill in its table of their results.
#[derive(Debug, Default, Clone)]
pub(super) struct ConstraintSlots {
    by_key: FxHashMap<ConstraintKey, u32>,
    /// Each slot's entry in an evaluation's table of constraint results before any flag is walked: for a
    /// set lookup its result when the field's value is in none of its sets, 0 (not worked out) otherwise.
    pub(super) initial: Vec<u8>,
    /// The set lookups, by the field-table slot they read, then by value: the slots whose result a context
    /// with that value flips from `initial`. An evaluation looks up each such field once, so set lookups
    /// cost nothing more while the flags are walked, however many there are.
    pub(super) set_lookups: Vec<(usize, SlotsByValue)>,
}

/// The set lookups of one field: for each value, the slots of the sets that hold it.
type SlotsByValue = FxHashMap<Box<str>, Vec<u32>>;

/// What makes two constraints the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ConstraintKey {
    context_name: Box<str>,
    operator: Box<str>,
    inverted: bool,
    case_insensitive: bool,
    values: Box<[Box<str>]>,
    value: Option<Box<str>>,
}

/// A memo cell's values in an evaluation's table of constraint results.
pub(super) const NOT_WORKED_OUT: u8 = 0;
pub(super) const FALSE: u8 = 1;
pub(super) const TRUE: u8 = 2;

/// A set lookup (`IN`, `NOT_IN`) as an evaluation works it out up front: its result is `when_absent` unless
/// the context's value of `field` (a field-table slot) is one of `values`.
pub(crate) struct SetLookup<'a, I: Iterator<Item = &'a str>> {
    pub(crate) field: usize,
    pub(crate) values: I,
    pub(crate) when_absent: bool,
}

impl EvalSlots {
    pub(crate) fn slot(&mut self, name: &str) -> u32 {
        let next = self.properties.len() as u32;
        *self.properties.entry(name.into()).or_insert(next)
    }

    /// The result slot of a constraint: the same for every constraint with the same field, operator,
    /// values and flags. A set lookup's slot is worked out for each context up front.
    pub(crate) fn constraint_slot<'a>(
        &mut self,
        c: &Constraint,
        set_lookup: Option<SetLookup<'a, impl Iterator<Item = &'a str>>>,
    ) -> u32 {
        let key = ConstraintKey {
            context_name: c.context_name.as_str().into(),
            operator: c.operator.as_str().into(),
            inverted: c.inverted,
            case_insensitive: c.case_insensitive,
            values: c.values.iter().map(|v| v.as_str().into()).collect(),
            value: c.value.as_deref().map(Into::into),
        };
        if let Some(&slot) = self.constraints.by_key.get(&key) {
            return slot;
        }
        let table = Arc::make_mut(&mut self.constraints);
        let slot = table.initial.len() as u32;
        table.by_key.insert(key, slot);
        let Some(lookup) = set_lookup else {
            table.initial.push(NOT_WORKED_OUT);
            return slot;
        };
        table
            .initial
            .push(if lookup.when_absent { TRUE } else { FALSE });
        let i = match table
            .set_lookups
            .iter()
            .position(|(field, _)| *field == lookup.field)
        {
            Some(i) => i,
            None => {
                table.set_lookups.push((lookup.field, FxHashMap::default()));
                table.set_lookups.len() - 1
            }
        };
        let by_value = &mut table.set_lookups[i].1;
        // The values are distinct, so that no value flips a slot twice.
        for value in lookup.values {
            by_value.entry(value.into()).or_default().push(slot);
        }
        slot
    }
}
