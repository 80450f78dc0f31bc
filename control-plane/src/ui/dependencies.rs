//! The "Dependencies" section of a flag's page: the parent flags it depends on (each with a "Remove
//! dependency on <parent>" button), the flags that depend on it, and the form that adds a dependency
//! ("Parent flag", "Parent state", "Parent variants"), drawn again with what was typed and the domain's
//! refusal beside its field. The posts are `flag::add_dependency` and `flag::remove_dependency`.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::session::{FormFields, SignedIn};
use crate::domain::dependencies::{CreateDependency, Dependency};
use maud::{html, Markup};
use vexil_shared::ApiError;

/// The add form as typed: the parent's name, whether it must be enabled, its variants (comma-separated).
#[derive(Debug, Clone)]
pub struct DependencyDraft {
    pub parent: String,
    pub enabled: bool,
    pub variants: String,
}

impl Default for DependencyDraft {
    fn default() -> DependencyDraft {
        DependencyDraft {
            parent: String::new(),
            enabled: true,
            variants: String::new(),
        }
    }
}

impl DependencyDraft {
    /// The form as posted (`parent`, `state` enabled or disabled, `variants`).
    pub fn from_form(form: &FormFields) -> DependencyDraft {
        DependencyDraft {
            parent: form.text("parent").trim().to_owned(),
            enabled: form.get("state") != Some("disabled"),
            variants: form.text("variants"),
        }
    }

    /// The body the API takes; variants only where the parent must be enabled.
    pub fn to_input(&self) -> CreateDependency {
        let variants: Vec<String> = self
            .variants
            .split(',')
            .map(str::trim)
            .filter(|variant| !variant.is_empty())
            .map(str::to_owned)
            .collect();
        CreateDependency {
            feature: self.parent.clone(),
            enabled: Some(self.enabled),
            variants: Some(variants).filter(|_| self.enabled),
        }
    }
}

/// What the section shows of a flag: its dependencies, the flags that depend on it and the parents it
/// could take (the add form's suggestions).
pub struct Dependencies<'a> {
    pub dependencies: &'a [Dependency],
    pub children: &'a [String],
    pub parent_options: &'a [String],
    /// Whether more flags could be parents than `parent_options` suggests.
    pub more_parents: bool,
    /// Whether the caller may add and remove dependencies (the section shows its forms).
    pub may_change: bool,
}

/// The section; `flag_link` gives a flag's page, `base` is this flag's page.
pub fn section(
    who: &SignedIn,
    base: &str,
    flag_link: impl Fn(&str) -> String,
    shown: &Dependencies<'_>,
    (draft, error): (&DependencyDraft, Option<&ApiError>),
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("feature", "dependency-parent"),
            ("enabled", "dependency-state"),
            ("variants", "dependency-variants"),
        ],
        "dependency-parent",
    );
    html! {
        section.card #dependencies aria-labelledby="dependencies-title" {
            h2 #dependencies-title { "Dependencies" }
            @if shown.dependencies.is_empty() {
                p.muted { "This flag depends on no other flag." }
            } @else {
                ul.dependencies {
                    @for dependency in shown.dependencies {
                        li {
                            "Depends on " a href=(flag_link(&dependency.feature)) { (dependency.feature) }
                            " being " strong { (if dependency.enabled { "enabled" } else { "disabled" }) }
                            @if !dependency.variants.is_empty() {
                                " with variant " (dependency.variants.join(", "))
                            }
                            @if shown.may_change {
                                " "
                                form.inline method="post" action=(format!("{base}/dependencies/remove")) {
                                    input type="hidden" name="csrf" value=(who.csrf);
                                    input type="hidden" name="parent" value=(dependency.feature);
                                    button.danger type="submit"
                                        aria-label=(format!("Remove dependency on {}", dependency.feature)) { "Remove" }
                                }
                            }
                        }
                    }
                }
            }
            @if !shown.children.is_empty() {
                p {
                    "Flags that depend on this one: "
                    @for (index, child) in shown.children.iter().enumerate() {
                        @if index > 0 { ", " }
                        a href=(flag_link(child)) { (child) }
                    }
                }
            }
            @if shown.may_change {
                (errors.general())
                form.form-narrow method="post" action=(format!("{base}/dependencies")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (field("dependency-parent", "Parent flag", errors.at("dependency-parent"), Some(if shown.more_parents {
                        "A flag of this project: type its name (the first 100 by name are suggested)"
                    } else {
                        "A flag of this project"
                    }), html! {
                        input #dependency-parent type="text" name="parent" value=(draft.parent) list="dependency-parents"
                            autocomplete="off" aria-describedby="dependency-parent-hint dependency-parent-error"
                            aria-invalid=(errors.invalid("dependency-parent"));
                        datalist #dependency-parents {
                            @for option in shown.parent_options { option value=(option) {} }
                        }
                    }))
                    (field("dependency-state", "Parent state", errors.at("dependency-state"), None, html! {
                        select #dependency-state name="state" aria-describedby="dependency-state-error"
                            aria-invalid=(errors.invalid("dependency-state")) {
                            option value="enabled" selected[draft.enabled] { "enabled" }
                            option value="disabled" selected[!draft.enabled] { "disabled" }
                        }
                    }))
                    (field("dependency-variants", "Parent variants", errors.at("dependency-variants"),
                        Some("Comma-separated; empty: any variant (only when the parent must be enabled)"), html! {
                        input #dependency-variants type="text" name="variants" value=(draft.variants)
                            aria-describedby="dependency-variants-hint dependency-variants-error"
                            aria-invalid=(errors.invalid("dependency-variants"));
                    }))
                    div.actions {
                        button.primary type="submit" { "Add dependency" }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posted_form_becomes_the_api_body() {
        let form = FormFields::parse(b"parent=+parent+&state=enabled&variants=a%2C+b%2C%2C");
        let input = DependencyDraft::from_form(&form).to_input();
        assert_eq!(input.feature, "parent");
        assert_eq!(input.enabled, Some(true));
        assert_eq!(input.variants, Some(vec!["a".to_owned(), "b".to_owned()]));
        let form = FormFields::parse(b"parent=p&state=disabled&variants=a");
        let input = DependencyDraft::from_form(&form).to_input();
        assert_eq!(input.enabled, Some(false));
        assert_eq!(input.variants, None);
    }
}
