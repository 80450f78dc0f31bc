//! A change request's strategy or segment change as people read it: the strategy now and as proposed, each
//! as the flag page shows one (name, summary, constraints as chips), with the field-by-field difference
//! behind a disclosure for who needs it.

use super::diff::diff_list;
use super::vocabulary::{constraint_chip, strategy_heading, Rule, StrategyNames};
use crate::domain::change_requests::ChangePreview;
use crate::model::constraint::Constraint;
use maud::{html, Markup};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The names a preview needs: strategies' and segments'.
pub struct Words {
    pub strategies: StrategyNames,
    pub segments: HashMap<i64, String>,
}

/// A strategy in the shape the preview compares (`domain::change_requests::preview`).
#[derive(Deserialize)]
struct StrategyShape {
    name: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    parameters: BTreeMap<String, String>,
    #[serde(default)]
    constraints: Vec<Constraint>,
    #[serde(default)]
    segments: Vec<i64>,
    #[serde(default)]
    variants: Vec<Named>,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

/// A segment in the shape the preview compares.
#[derive(Deserialize)]
struct SegmentShape {
    #[serde(default)]
    constraints: Vec<Constraint>,
}

fn strategy(words: &Words, value: Option<&Value>) -> Option<Markup> {
    let shape = StrategyShape::deserialize(value?).ok()?;
    let title = Some(shape.title.as_str()).filter(|title| !title.is_empty());
    Some(html! {
        div.cr-strategy {
            p.cr-strategy-name {
                strong { (strategy_heading(&words.strategies, &shape.name, title)) }
                @if shape.disabled { " " span.disabled-note { "disabled" } }
            }
            (Rule {
                name: &shape.name,
                parameters: &shape.parameters,
                constraints: &shape.constraints,
                segments: &shape.segments,
                segment_names: &words.segments,
                variants: shape.variants.iter().map(|variant| variant.name.as_str()).collect(),
            }.markup())
        }
    })
}

fn segment(value: Option<&Value>) -> Option<Markup> {
    let shape = SegmentShape::deserialize(value?).ok()?;
    Some(html! {
        @if shape.constraints.is_empty() { p.muted { "No conditions: everyone." } }
        @else {
            ul.chips aria-label="Conditions, all must match" {
                @for constraint in &shape.constraints { li { (constraint_chip(constraint)) } }
            }
        }
    })
}

/// A strategy's or segment's change from `before` to `after` (a preview's, or only its `after` for a closed
/// request): now and proposed in words, then the difference in a `<details>`; `None` for other changes
/// (their difference is already short).
pub fn in_words(
    words: &Words,
    preview: &ChangePreview,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Option<Markup> {
    let draw = |value: Option<&Value>| match preview.action.as_str() {
        "addStrategy" | "updateStrategy" | "deleteStrategy" => strategy(words, value),
        "updateSegment" | "deleteSegment" => segment(value),
        _ => None,
    };
    let (was, proposed) = (draw(before), draw(after));
    if was.is_none() && proposed.is_none() {
        return None;
    }
    Some(html! {
        div.cr-words {
            @if let Some(was) = was {
                div { p.cr-when { @if proposed.is_some() { "Now" } @else { "Removed" } } (was) }
            }
            @if let Some(proposed) = proposed {
                div { p.cr-when { "Proposed" } (proposed) }
            }
        }
        details.cr-fields {
            summary { "Field by field" }
            (diff_list(before, after))
        }
    })
}
