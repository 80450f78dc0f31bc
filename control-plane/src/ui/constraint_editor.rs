//! The constraint editor, drawn in the strategy form and the segment form (and read by the flag page and the
//! playground): each constraint's context field, operator, values or value, switches and Remove, posted back
//! as `constraintCount` and `c<i>.<field>`; "Add constraint" and "Remove" redraw the form with what was typed.

use super::controls::{edit_rows, field, row_focus};
use super::field_errors::FieldErrors;
use super::session::FormFields;
use super::vocabulary::{context_field_label, operator_phrase, single_valued};
use crate::domain::context_fields::ContextField;
use crate::model::constraint::Constraint;
use maud::{html, Markup};
use vexil_shared::engine::OPERATORS;
use vexil_shared::ErrorKind;

/// The constraints of a posted form (`constraintCount`, then `c<i>.contextName`, `c<i>.operator`, …).
pub fn constraints_of(form: &FormFields) -> Vec<ConstraintDraft> {
    let count: usize = form
        .get("constraintCount")
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
        .min(100);
    (0..count)
        .map(|index| {
            let key = |name: &str| format!("c{index}.{name}");
            ConstraintDraft {
                context_name: form.text(&key("contextName")),
                operator: form.get(&key("operator")).unwrap_or("IN").to_owned(),
                values: form.text(&key("values")),
                value: form.text(&key("value")),
                case_insensitive: form.checked(&key("caseInsensitive")),
                inverted: form.checked(&key("inverted")),
            }
        })
        .collect()
}

/// "Add constraint" or "Remove" of a posted form, applied to `constraints`; false for any other intent.
pub fn edit_constraints(intent: &str, constraints: &mut Vec<ConstraintDraft>) -> bool {
    edit_rows(intent, "constraint", constraints, || ConstraintDraft {
        operator: "IN".to_owned(),
        ..ConstraintDraft::default()
    })
}

/// Where the focus goes after `intent` redrew the form: the added constraint's context field, or the one
/// in the removed one's place ([`row_focus`]).
pub fn constraint_focus(intent: &str, constraints: &[ConstraintDraft]) -> Option<String> {
    row_focus(intent, "constraint", constraints.len(), |index| {
        format!("c{index}-context")
    })
}

/// One constraint as typed: list values one per line (or comma-separated), or one value.
#[derive(Debug, Clone, Default)]
pub struct ConstraintDraft {
    pub context_name: String,
    pub operator: String,
    pub values: String,
    pub value: String,
    pub case_insensitive: bool,
    pub inverted: bool,
}

impl ConstraintDraft {
    pub fn of(constraint: &Constraint) -> ConstraintDraft {
        ConstraintDraft {
            context_name: constraint.context_name.clone(),
            operator: constraint.operator.clone(),
            values: constraint.values.join("\n"),
            value: constraint.value.clone().unwrap_or_default(),
            case_insensitive: constraint.case_insensitive,
            inverted: constraint.inverted,
        }
    }

    /// The constraint the API takes: a date-time picker's `2026-01-02T03:04` is read as UTC.
    pub fn to_constraint(&self) -> Constraint {
        let single = single_valued(&self.operator);
        let mut value = self.value.trim().to_owned();
        if self.operator.starts_with("DATE_") && value.len() == 16 {
            value.push_str(":00.000Z");
        }
        Constraint {
            context_name: self.context_name.trim().to_owned(),
            operator: self.operator.clone(),
            values: if single {
                Vec::new()
            } else {
                self.values
                    .split(['\n', ','])
                    .map(str::trim)
                    .filter(|value| !value.is_empty())
                    .map(str::to_owned)
                    .collect()
            },
            value: single.then_some(value),
            case_insensitive: self.case_insensitive,
            inverted: self.inverted,
        }
    }
}

/// Where the constraint editor's controls are, for [`FieldErrors`]: `constraints[i].<field>` → the control of
/// constraint `i` (`value` and `values` both → the one drawn for its operator); `constraints` and
/// `constraints[i]` → the editor as a whole.
pub fn constraint_fields(constraints: &[ConstraintDraft]) -> Vec<(String, String)> {
    let mut fields = vec![("constraints".to_owned(), "constraints".to_owned())];
    for (index, constraint) in constraints.iter().enumerate() {
        let value = if single_valued(&constraint.operator) {
            "value"
        } else {
            "values"
        };
        fields.extend([
            (format!("constraints[{index}]"), "constraints".to_owned()),
            (
                format!("constraints[{index}].contextName"),
                format!("c{index}-context"),
            ),
            (
                format!("constraints[{index}].operator"),
                format!("c{index}-operator"),
            ),
            (
                format!("constraints[{index}].value"),
                format!("c{index}-{value}"),
            ),
            (
                format!("constraints[{index}].values"),
                format!("c{index}-{value}"),
            ),
        ]);
    }
    fields
}

/// The refusal beside constraint `index`'s one value: where the engine could not read it (the error's path
/// is `constraints[index].value`, the field has no legal values to break), what the operator needs, in
/// words; any other refusal as [`FieldErrors`] words it.
fn value_message(
    errors: &FieldErrors,
    index: usize,
    constraint: &ConstraintDraft,
    has_legal_values: bool,
) -> Option<String> {
    let id = format!("c{index}-value");
    let placed = errors.at(&id)?.to_owned();
    let Some((path, ErrorKind::Validation)) = errors.refusal_at(&id) else {
        return Some(placed);
    };
    if path != format!("constraints[{index}].value") || has_legal_values {
        return Some(placed);
    }
    let operator = constraint.operator.as_str();
    let needed = match operator {
        _ if operator.starts_with("NUM_") => "a number, such as 18 or 2.5",
        _ if operator.starts_with("DATE_") => "a date and time",
        _ if operator.starts_with("SEMVER_") => "a version such as 1.2.3",
        "REGEX" => "a regular expression",
        _ => return Some(placed),
    };
    let typed = constraint.value.trim();
    Some(if typed.is_empty() {
        format!("Enter {needed}.")
    } else {
        format!("“{typed}” is not {needed}.")
    })
}

/// The refusal beside constraint `index`'s values: over this instance's limit of values per constraint
/// (`ExceedsLimit` at `constraints[index].values`), said with the numbers; any other as [`FieldErrors`]
/// words it.
fn values_message(
    errors: &FieldErrors,
    index: usize,
    constraint: &ConstraintDraft,
    max_values: Option<u32>,
) -> Option<String> {
    let id = format!("c{index}-values");
    let placed = errors.at(&id)?.to_owned();
    match (errors.refusal_at(&id), max_values) {
        (Some((path, ErrorKind::ExceedsLimit)), Some(limit))
            if path == format!("constraints[{index}].values") =>
        {
            let given = constraint.to_constraint().values.len();
            Some(format!(
                "Too many values: {given} given, at most {limit} per constraint on this instance."
            ))
        }
        _ => Some(placed),
    }
}

/// The constraint editor (the strategy form's and the segment form's): each constraint's context field,
/// operator, values or value (a date-time picker for dates), case-insensitive and inverted switches, Remove;
/// the context field's legal values offered when it has some; a refusal beside the control it names
/// ([`constraint_fields`]); `focus`, the id of the control that takes the focus ([`constraint_focus`]).
/// The caller's "Add constraint" button has the id `add-constraint`.
pub fn constraint_rows(
    context_fields: &[ContextField],
    constraints: &[ConstraintDraft],
    (editable, max_values): (bool, Option<u32>),
    errors: &FieldErrors,
    focus: Option<&str>,
) -> Markup {
    html! {
        input type="hidden" name="constraintCount" value=(constraints.len());
        p.field-error #constraints-error aria-live="polite" { @if let Some(error) = errors.at("constraints") { (error) } }
        datalist #context-fields {
            @for context_field in context_fields {
                @let label = context_field_label(&context_field.name);
                @if label == context_field.name { option value=(context_field.name) {} }
                @else { option value=(context_field.name) label=(label) {} }
            }
        }
        @if constraints.is_empty() {
            p.muted { "No constraints: every context matches." }
        }
        @for (index, constraint) in constraints.iter().enumerate() {
            @let key = |name: &str| format!("c{index}.{name}");
            @let id = |name: &str| format!("c{index}-{name}");
            @let described = |name: &str| format!("{0}-error constraints-error", id(name));
            @let legal: Vec<String> = context_fields.iter()
                .find(|f| f.name == constraint.context_name)
                .map(|f| f.legal_values.iter().map(|v| v.value.clone()).collect())
                .unwrap_or_default();
            @let value_error = value_message(errors, index, constraint, !legal.is_empty());
            @let values_error = values_message(errors, index, constraint, max_values);
            fieldset.constraint-box id=(format!("c{index}")) {
                legend { "Constraint " (index + 1) }
                div.constraint {
                    (field(&id("context"), "Context field", errors.at(&id("context")), None, html! {
                        input id=(id("context")) type="text" name=(key("contextName")) value=(constraint.context_name)
                            list="context-fields" autocomplete="off" autofocus[focus == Some(id("context").as_str())]
                            aria-describedby=(described("context")) aria-invalid=(errors.invalid(&id("context")));
                    }))
                    (field(&id("operator"), "Operator", errors.at(&id("operator")), None, html! {
                        select id=(id("operator")) name=(key("operator")) data-autosubmit="refresh-form"
                            title=(format!("API operator: {}", constraint.operator))
                            aria-describedby=(described("operator")) aria-invalid=(errors.invalid(&id("operator"))) {
                            @for operator in OPERATORS {
                                option value=(operator) selected[operator == constraint.operator] { (operator_phrase(operator, false)) }
                            }
                        }
                    }))
                    @if single_valued(&constraint.operator) {
                        @if constraint.operator.starts_with("DATE_") {
                            (field(&id("value"), "Value", value_error.as_deref(), Some("Date and time, UTC"), html! {
                                input id=(id("value")) type="datetime-local" name=(key("value"))
                                    value=(constraint.value.get(..16).unwrap_or(&constraint.value))
                                    aria-describedby=(format!("{}-hint {}", id("value"), described("value")))
                                    aria-invalid=(errors.invalid(&id("value")));
                            }))
                        } @else {
                            (field(&id("value"), "Value", value_error.as_deref(), None, html! {
                                input id=(id("value")) type="text" name=(key("value")) value=(constraint.value)
                                    list=(format!("{}-legal", id("value")))
                                    aria-describedby=(described("value")) aria-invalid=(errors.invalid(&id("value")));
                                datalist id=(format!("{}-legal", id("value"))) {
                                    @for value in &legal { option value=(value) {} }
                                }
                            }))
                        }
                    } @else {
                        div.values {
                            (field(&id("values"), "Values", values_error.as_deref(),
                                Some(&if legal.is_empty() { "One per line, or comma-separated".to_owned() } else { format!("One per line, or comma-separated. Legal values: {}", legal.join(", ")) }),
                                html! {
                                    textarea id=(id("values")) name=(key("values")) rows=(constraint.values.lines().count().clamp(2, 8))
                                        aria-describedby=(format!("{}-hint {}", id("values"), described("values")))
                                        aria-invalid=(errors.invalid(&id("values"))) { (constraint.values) }
                                }))
                        }
                    }
                }
                div.actions {
                    label.check { input type="checkbox" name=(key("caseInsensitive")) value="true" checked[constraint.case_insensitive]; "Case insensitive" }
                    label.check { input type="checkbox" name=(key("inverted")) value="true" checked[constraint.inverted]; "Inverted" }
                    @if editable {
                        button type="submit" formnovalidate name="intent" value=(format!("remove-constraint-{index}"))
                            aria-label=(format!("Remove constraint {}", index + 1)) { "Remove" }
                    }
                }
            }
        }
    }
}
