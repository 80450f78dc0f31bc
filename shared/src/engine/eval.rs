//! One evaluation of a context: its tables, built on the stack by [`with_eval`] (the fields the snapshot
//! reads, the results of constraints, the resolutions of parent flags), and the typed readings of a field.

use std::cell::{Cell, OnceCell};
use std::net::IpAddr;

use chrono::{DateTime, Utc};
use semver::Version;
use smallvec::SmallVec;

use super::field::ContextField;
use super::slots::{EvalSlots, FALSE, NOT_WORKED_OUT, TRUE};
use crate::context::Context;

/// The context of one evaluation: every field the snapshot reads, by slot, with its typed readings (number,
/// version, time, IP address) parsed at most once however many constraints need them. Its tables are
/// slices of tables on the stack of [`with_eval`]: plain slices, read without the inline-or-heap check
/// a `SmallVec` makes on every access.
pub(crate) struct Eval<'c> {
    pub(crate) ctx: &'c Context,
    fields: &'c [FieldValue<'c>],
    /// Results of constraints, by slot (see [`EvalSlots`]): [`NOT_WORKED_OUT`], [`FALSE`] or [`TRUE`].
    pub(crate) constraints: &'c [Cell<u8>],
    /// Resolutions of parent flags, by memo slot (see `Resolution::encode`).
    pub(super) parents: &'c [Cell<u32>],
}

#[derive(Clone, Default)]
struct FieldValue<'c> {
    text: Option<&'c str>,
    /// The text read as a number, a version, a time or an address: as the first constraint that needed a
    /// reading asked. A field is read one way in practice; a field read another way as well is parsed
    /// again each time (see [`Eval::reading`]). One reading, not one of each, keeps the table small: an
    /// evaluation fills it in for every field the snapshot reads.
    reading: OnceCell<Reading>,
}

/// A field's text parsed as one type (`None`: it does not parse as that type).
#[derive(Clone)]
enum Reading {
    Number(Option<f64>),
    Version(Option<Version>),
    Time(Option<DateTime<Utc>>),
    Ip(Option<IpAddr>),
}

/// Runs `run` with an [`Eval`] of `ctx` whose tables are built here, on the stack, for the slots of a
/// snapshot or explanation (`slots`) and its number of parent flags. Inline for the sizes of most snapshots
/// (up to 2,048 constraint slots and 256 parents), so that an evaluation does not allocate; built in
/// place, not returned, so that they are not copied.
#[inline(always)]
pub(crate) fn with_eval<R>(
    ctx: &Context,
    slots: &EvalSlots,
    parent_count: usize,
    run: impl FnOnce(&Eval<'_>) -> R,
) -> R {
    let mut fields: SmallVec<[FieldValue<'_>; 16]> = SmallVec::new();
    fields.resize(
        ContextField::FIRST_PROPERTY_SLOT + slots.properties.len(),
        FieldValue::default(),
    );
    for (field, text) in [
        (ContextField::UserId, &ctx.user_id),
        (ContextField::SessionId, &ctx.session_id),
        (ContextField::RemoteAddress, &ctx.remote_address),
        (ContextField::Environment, &ctx.environment),
        (ContextField::AppName, &ctx.app_name),
        (ContextField::CurrentTime, &ctx.current_time),
    ] {
        fields[field.slot()].text = text.as_deref();
    }
    for (name, value) in &ctx.properties {
        if let Some(&slot) = slots.properties.get(name.as_str()) {
            fields[ContextField::FIRST_PROPERTY_SLOT + slot as usize].text = Some(value.as_str());
        }
    }
    let table = &slots.constraints;
    let mut constraints: SmallVec<[u8; 2048]> = SmallVec::new();
    constraints.extend_from_slice(&table.initial);
    for (field, by_value) in &table.set_lookups {
        let Some(text) = fields.get(*field).and_then(|f| f.text) else {
            continue;
        };
        for &slot in by_value.get(text).into_iter().flatten() {
            if let Some(result) = constraints.get_mut(slot as usize) {
                *result ^= FALSE ^ TRUE;
            }
        }
    }
    let mut parents: SmallVec<[Cell<u32>; 256]> = SmallVec::new();
    parents.resize(parent_count, Cell::new(0));
    run(&Eval {
        ctx,
        fields: &fields,
        constraints: Cell::from_mut(&mut constraints[..]).as_slice_of_cells(),
        parents: &parents,
    })
}

impl<'c> Eval<'c> {
    /// What is known of the result of the constraint in `slot`: [`NOT_WORKED_OUT`], [`FALSE`] or [`TRUE`].
    #[inline(always)]
    pub(crate) fn constraint_result(&self, slot: u32) -> u8 {
        self.constraints
            .get(slot as usize)
            .map_or(NOT_WORKED_OUT, Cell::get)
    }

    fn field(&self, field: &ContextField) -> Option<&FieldValue<'c>> {
        self.fields.get(field.slot())
    }

    pub(crate) fn value(&self, field: &ContextField) -> Option<&'c str> {
        self.field(field).and_then(|f| f.text)
    }

    /// The field's reading of the kind `pick` takes (`None` for another kind), parsed by `parse` at most once
    /// per evaluation when it is the field's first reading, and each time otherwise.
    fn reading<T>(
        &self,
        field: &ContextField,
        parse: impl Fn(Option<&'c str>) -> Reading,
        pick: impl Fn(&Reading) -> Option<T>,
    ) -> Option<T> {
        let f = self.field(field)?;
        pick(f.reading.get_or_init(|| parse(f.text))).or_else(|| pick(&parse(f.text)))
    }

    /// The field as a number.
    pub(crate) fn number_of(&self, field: &ContextField) -> Option<f64> {
        self.reading(
            field,
            |text| Reading::Number(text.and_then(|t| t.trim().parse::<f64>().ok())),
            |r| match r {
                Reading::Number(n) => Some(*n),
                _ => None,
            },
        )
        .flatten()
    }

    /// Whether the field is a semantic version for which `test` holds.
    pub(crate) fn version_holds(
        &self,
        field: &ContextField,
        test: impl Fn(&Version) -> bool,
    ) -> bool {
        self.reading(
            field,
            |text| Reading::Version(text.and_then(|t| Version::parse(t).ok())),
            |r| match r {
                Reading::Version(v) => Some(v.as_ref().is_some_and(&test)),
                _ => None,
            },
        )
        .unwrap_or(false)
    }

    /// The field as a timestamp; `currentTime` defaults to now.
    pub(crate) fn time_of(&self, field: &ContextField) -> Option<DateTime<Utc>> {
        self.reading(
            field,
            |text| {
                Reading::Time(match (field, text) {
                    (_, Some(t)) => parse_date(t),
                    (ContextField::CurrentTime, None) => Some(Utc::now()),
                    (_, None) => None,
                })
            },
            |r| match r {
                Reading::Time(t) => Some(*t),
                _ => None,
            },
        )
        .flatten()
    }

    /// The field as an IP address.
    pub(crate) fn ip_of(&self, field: &ContextField) -> Option<IpAddr> {
        self.reading(
            field,
            |text| Reading::Ip(text.and_then(|t| t.trim().parse::<IpAddr>().ok())),
            |r| match r {
                Reading::Ip(ip) => Some(*ip),
                _ => None,
            },
        )
        .flatten()
    }
}

/// An RFC 3339 timestamp, as Unleash writes them.
pub(crate) fn parse_date(value: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(value.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
