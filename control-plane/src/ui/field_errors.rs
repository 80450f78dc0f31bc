//! Where a domain error shows on a form: beside the control its message names, or above the form.
//!
//! The domain's validation errors carry the path of the body field they are about ([`ApiError::field`]:
//! `tokenName`, `constraints[1].values`, `variants[0].payload.value`). A form maps paths to its controls'
//! ids; the longest path that the error's path starts with (whole segments: it is followed by nothing, `.`
//! or `[`) wins, so `constraints[1].values` finds control `c1-values` and `variants` the variants group. The control is drawn with `aria-invalid` and `aria-describedby` naming `<id>-error`, the
//! element [`super::controls::field`] draws with the message.
//!
//! Beside its control a message reads as people write it: where it starts with its own field path (the
//! error's [`ApiError::field`], not a guess from the text) and that path is an API name (`context.appName`,
//! `constraints[0].values`, `tokenName`), the path becomes the field's label ([`field_label`]):
//! "context.appName is required" → "Application is required", "constraints[0].values: x" → "x". The JSON
//! API's messages are unchanged; above the form (no control) the message stays whole.

use super::vocabulary::field_label;
use maud::{html, Markup};
use vexil_shared::{ApiError, ErrorKind};

/// A domain error placed on a form (or no error).
#[derive(Debug, Default)]
pub struct FieldErrors {
    field: Option<String>,
    message: Option<String>,
    /// The error's own field path and kind, for a form that words a refusal its own way.
    path: Option<String>,
    kind: Option<ErrorKind>,
}

impl FieldErrors {
    /// `fields` maps a body field path to the form control's id; `clash` is the control a name clash (409)
    /// belongs to.
    pub fn of<P: AsRef<str>, I: AsRef<str>>(
        error: Option<&ApiError>,
        fields: &[(P, I)],
        clash: &str,
    ) -> FieldErrors {
        let Some(error) = error else {
            return FieldErrors::default();
        };
        let field = if error.kind == ErrorKind::NameExists {
            None
        } else {
            error.field.as_deref().and_then(|path| {
                fields
                    .iter()
                    .filter(|(body_field, _)| names(path, body_field.as_ref()))
                    .max_by_key(|(body_field, _)| body_field.as_ref().len())
            })
        };
        let message = match (&field, error.field.as_deref()) {
            (Some((body_field, _)), Some(path)) => {
                readable(path, &error.message, body_field.as_ref() == path)
            }
            _ => error.message.clone(),
        };
        let field = match error.kind {
            ErrorKind::NameExists => Some(clash.to_owned()),
            _ => field.map(|(_, id)| id.as_ref().to_owned()),
        };
        FieldErrors {
            field,
            message: Some(message),
            path: error.field.clone(),
            kind: Some(error.kind),
        }
    }

    /// The path of the body field the error is about, and its kind, when the error sits beside control `id`.
    pub fn refusal_at(&self, id: &str) -> Option<(&str, ErrorKind)> {
        self.at(id)?;
        Some((self.path.as_deref()?, self.kind?))
    }

    /// The message shown beside control `id`.
    pub fn at(&self, id: &str) -> Option<&str> {
        self.message
            .as_deref()
            .filter(|_| self.field.as_deref() == Some(id))
    }

    /// `aria-invalid` of control `id`.
    pub fn invalid(&self, id: &str) -> &'static str {
        if self.at(id).is_some() {
            "true"
        } else {
            "false"
        }
    }

    /// The message of no control, shown above the form.
    pub fn general(&self) -> Markup {
        html! {
            @if let Some(message) = self.message.as_deref().filter(|_| self.field.is_none()) {
                p.error-box role="alert" { (message) }
            }
        }
    }
}

/// `message` with its leading `path` (an API name: with `.`, `[` or a capital) put as people read it: `path:
/// rest` → "rest" (the control's label says which field), `path rest` → "<label> rest".
///
/// Beside a control of a part of the field (`parameters` for `parameters[0].name`), the path is kept in
/// words instead, as it says which part: "Parameter 1 name must be …".
fn readable(path: &str, message: &str, own_control: bool) -> String {
    let api_name = path.contains(['.', '[']) || path.chars().any(char::is_uppercase);
    let Some(rest) = message.strip_prefix(path).filter(|_| api_name) else {
        return message.to_owned();
    };
    if !own_control && (rest.starts_with(": ") || rest.starts_with(' ')) {
        return format!("{}{rest}", located(path));
    }
    if let Some(rest) = rest.strip_prefix(": ").filter(|rest| !rest.is_empty()) {
        return rest.to_owned();
    }
    if rest.starts_with(' ') {
        return format!("{}{rest}", field_label(path));
    }
    message.to_owned()
}

/// A path in words: `parameters[0].name` → "Parameter 1 name", `segments[2]` → "Segment 3",
/// `legalValues[1].value` → "Legal value 2".
fn located(path: &str) -> String {
    let mut words: Vec<String> = path
        .split('.')
        .map(|segment| match segment.split_once('[') {
            Some((list, index)) => {
                let number = index
                    .trim_end_matches(']')
                    .parse::<usize>()
                    .map_or(0, |i| i + 1);
                let item = field_label(list);
                format!("{} {number}", item.strip_suffix('s').unwrap_or(&item))
            }
            None => field_label(segment).to_lowercase(),
        })
        .collect();
    // "Legal value 2 value" says "value" twice: the item's own name is enough ("Legal value 2").
    if let [.., item, last] = words.as_slice() {
        if item.to_lowercase().contains(last.as_str()) {
            words.pop();
        }
    }
    let joined = words.join(" ");
    let mut characters = joined.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => joined,
    }
}

/// Whether a message's `path` is about `field`: the same, or inside it.
fn names(path: &str, field: &str) -> bool {
    path.strip_prefix(field)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_go_beside_the_field_they_name() {
        let fields = [("tokenName", "token-name"), ("projects", "token-projects")];
        let error = ApiError::invalid_field("projects", "projects: nope does not exist");
        let placed = FieldErrors::of(Some(&error), &fields, "token-name");
        assert_eq!(
            placed.at("token-projects"),
            Some("projects: nope does not exist")
        );
        assert_eq!(placed.invalid("token-projects"), "true");
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

    #[test]
    fn paths_read_as_words() {
        assert_eq!(located("parameters[0].name"), "Parameter 1 name");
        assert_eq!(located("segments[2]"), "Segment 3");
        assert_eq!(located("legalValues[1].value"), "Legal value 2");
    }

    #[test]
    fn the_longest_path_wins_and_paths_match_whole_segments() {
        let fields = [
            ("constraints", "constraints"),
            ("constraints[1].values", "c1-values"),
            ("constraints[1].value", "c1-value"),
            ("constraints[10].values", "c10-values"),
        ];
        let place = |path: &str| {
            FieldErrors::of(Some(&ApiError::invalid_field(path, "no")), &fields, "x")
                .field
                .unwrap_or_default()
        };
        assert_eq!(place("constraints[1].values"), "c1-values");
        assert_eq!(place("constraints[1].value"), "c1-value");
        assert_eq!(place("constraints[10].values"), "c10-values");
        assert_eq!(place("constraints[2].operator"), "constraints");
        assert_eq!(place("constraintsx"), "");
        // Beside its control, the message loses its path (an API name) or reads it as a label.
        let placed = |path: &str, message: &str| {
            let error = ApiError::invalid_field(path, message);
            let errors = FieldErrors::of(Some(&error), &fields, "x");
            errors.message.unwrap_or_default()
        };
        assert_eq!(
            placed("constraints[1].values", "constraints[1].values: too many"),
            "too many"
        );
        assert_eq!(
            placed("constraints[1].value", "constraints[1].value is required"),
            "Value is required"
        );
        assert_eq!(
            placed("constraints[1].values", "the values: x"),
            "the values: x"
        );
        assert_eq!(
            placed("constraints[2].value", "constraints[2].value: no"),
            "Constraint 3 value: no"
        );
        // The message is not read: a path-like message without a field path goes above the form.
        let unplaced = ApiError::validation("constraints[1].values: too many");
        assert_eq!(FieldErrors::of(Some(&unplaced), &fields, "x").field, None);
    }
}
