//! A flag's tags on its page: chips, each with a remove button ("Remove tag simple:beta"), and a form that
//! adds one (tag type and value). The posts are `flag_tag_writes`'.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::session::SignedIn;
use crate::domain::tags::{Tag, TagType};
use maud::{html, Markup};
use vexil_shared::ApiError;

/// The add-tag form as typed.
#[derive(Debug, Default, Clone)]
pub struct TagDraft {
    pub tag_type: String,
    pub value: String,
}

/// The tags section of the flag page at `base`: the flag's `tags`, and for who may write the form with the
/// `types` to choose from, as typed (`draft`) with its refusal.
pub fn section(
    who: &SignedIn,
    (base, may_change): (&str, bool),
    tags: &[Tag],
    types: &[TagType],
    (draft, error): (&TagDraft, Option<&ApiError>),
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[("value", "tag-value"), ("type", "tag-type")],
        "tag-value",
    );
    let chosen = if draft.tag_type.is_empty() {
        "simple"
    } else {
        draft.tag_type.as_str()
    };
    let value_error = errors.at("tag-value");
    html! {
        section.card #tags aria-labelledby="tags-title" {
            h2 #tags-title { "Tags" }
            @if tags.is_empty() {
                p.muted { "No tags yet." }
            } @else {
                ul.chips aria-label="Tags of this flag" {
                    @for tag in tags {
                        @let name = format!("{}:{}", tag.tag_type, tag.value);
                        li {
                            span.chip.tag-chip {
                                (name)
                                @if may_change {
                                    form.inline method="post" action=(format!("{base}/tags/remove")) {
                                        input type="hidden" name="csrf" value=(who.csrf);
                                        input type="hidden" name="type" value=(tag.tag_type);
                                        input type="hidden" name="value" value=(tag.value);
                                        button.chip-remove type="submit" aria-label=(format!("Remove tag {name}"))
                                            title=(format!("Remove tag {name}")) { "×" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if may_change {
                form.tag-form method="post" action=(format!("{base}/tags")) novalidate {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (errors.general())
                    (field("tag-type", "Tag type", errors.at("tag-type"), None, html! {
                        select #tag-type name="type" aria-invalid=(errors.invalid("tag-type")) {
                            @for tag_type in types {
                                option value=(tag_type.name) selected[tag_type.name == chosen] { (tag_type.name) }
                            }
                        }
                    }))
                    (field("tag-value", "Value", value_error, None, html! {
                        input #tag-value type="text" name="value" value=(draft.value) required autocomplete="off"
                            minlength="2" maxlength="50" aria-describedby="tag-value-error"
                            aria-invalid=(errors.invalid("tag-value"));
                    }))
                    button type="submit" { "Add tag" }
                }
            }
        }
    }
}
