//! What the access pages (API tokens, users, groups, profile) share: where a domain error shows on a form
//! ([`FieldErrors`]) and the root-role choice.

use crate::domain::roles::RootRole;
use maud::{html, Markup};
use vexil_shared::{ApiError, ErrorKind};

/// A domain error placed on a form: beside the field its message names (the domain's validation messages
/// start with the body field, e.g. `tokenName must be…`), a name clash beside the form's name field, anything
/// else above the form.
#[derive(Debug, Default)]
pub struct FieldErrors {
    field: Option<&'static str>,
    message: Option<String>,
}

impl FieldErrors {
    /// `fields` maps a body field (the message's first word) to the form field's id; `clash` is the field a
    /// name clash (409) belongs to.
    pub fn of(
        error: Option<&ApiError>,
        fields: &[(&str, &'static str)],
        clash: &'static str,
    ) -> FieldErrors {
        let Some(error) = error else {
            return FieldErrors::default();
        };
        let field = if error.kind == ErrorKind::NameExists {
            Some(clash)
        } else {
            fields
                .iter()
                .find(|(body_field, _)| {
                    error
                        .message
                        .split([' ', ':', '['])
                        .next()
                        .is_some_and(|first| first == *body_field)
                })
                .map(|(_, id)| *id)
        };
        FieldErrors {
            field,
            message: Some(error.message.clone()),
        }
    }

    /// The message shown beside field `id`.
    pub fn at(&self, id: &str) -> Option<&str> {
        self.message
            .as_deref()
            .filter(|_| self.field.is_some_and(|field| field == id))
    }

    /// The message of no field, shown above the form.
    pub fn general(&self) -> Markup {
        html! {
            @if let Some(message) = self.message.as_deref().filter(|_| self.field.is_none()) {
                p.error-box role="alert" { (message) }
            }
        }
    }
}

/// The options of a root-role select, `current` selected (by id).
pub fn role_options(current: Option<i64>) -> Markup {
    html! {
        @for role in RootRole::ALL {
            option value=(role.id()) selected[current == Some(role.id())] { (role.name()) }
        }
    }
}

/// The root role's name of an id as stored.
pub fn role_name(id: i64) -> &'static str {
    RootRole::from_id(id)
        .map(RootRole::name)
        .unwrap_or("Unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_go_beside_the_field_they_name() {
        let fields = [("tokenName", "token-name"), ("projects", "token-projects")];
        let error = ApiError::validation("projects: nope does not exist");
        let placed = FieldErrors::of(Some(&error), &fields, "token-name");
        assert_eq!(
            placed.at("token-projects"),
            Some("projects: nope does not exist")
        );
        assert_eq!(placed.at("token-name"), None);
        assert!(placed.general().into_string().is_empty());
        let clash = ApiError::name_exists("taken");
        assert_eq!(
            FieldErrors::of(Some(&clash), &fields, "token-name").at("token-name"),
            Some("taken")
        );
        let other = ApiError::validation("something else");
        let placed = FieldErrors::of(Some(&other), &fields, "token-name");
        assert!(placed.general().into_string().contains("something else"));
    }
}
