//! The controls several pages draw: a flag's switch in an environment, a form field with its validation
//! message, the change-request notice, times as people read them, and the local-path check of `back` links.

use super::session::SignedIn;
use maud::{html, Markup};

/// Where a `next` or `back` parameter may send the browser: a path of this site under the base path, else
/// the home page (`<base>/`). Never an open redirect, and always a valid `Location`: every redirect
/// parameter of the UI goes through here.
pub fn local_path(base: &str, path: Option<&str>) -> String {
    match path {
        Some(path) if is_local_path(base, path) => path.to_owned(),
        _ => format!("{base}/"),
    }
}

/// Printable ASCII only (no whitespace or control character, which browsers drop or stop at), and, as sent
/// and percent-decoded alike, one leading `/` (not `//`, which names a host), no backslash (which browsers
/// read as `/`) and no control character; the base path or below it.
fn is_local_path(base: &str, path: &str) -> bool {
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    let under_base = base.is_empty()
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?', '#']));
    path.bytes().all(|byte| byte.is_ascii_graphic())
        && decoded.starts_with(b"/")
        && !decoded.starts_with(b"//")
        && !decoded
            .iter()
            .any(|&byte| byte == b'\\' || byte == b' ' || byte.is_ascii_control())
        && under_base
}

/// `path` with `notice=<notice>` added to its query (before its `#fragment`, if any).
pub fn with_notice(path: &str, notice: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(notice.as_bytes()).collect();
    let (path, fragment) = match path.split_once('#') {
        Some((path, fragment)) => (path, format!("#{fragment}")),
        None => (path, String::new()),
    };
    let separator = if path.contains('?') { '&' } else { '?' };
    format!("{path}{separator}notice={encoded}{fragment}")
}

/// A flag's switch in an environment: a form posting the opposite state, its button a `switch` named
/// `label`. A caller who may not switch it (`allowed` false) sees the state as text, with no control. Where `back` ends in a
/// `#fragment`, that is the button's id: the page drawn after the switch lands on it (and the script gives
/// it the focus again).
pub fn switch(
    who: &SignedIn,
    allowed: bool,
    label: &str,
    enabled: bool,
    action: &str,
    back: &str,
) -> Markup {
    let id = back.split_once('#').map(|(_, fragment)| fragment);
    html! {
        @if allowed {
            form.switch-form method="post" action=(action) {
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="enabled" value=(if enabled { "false" } else { "true" });
                input type="hidden" name="back" value=(back);
                button type="submit" id=[id] role="switch" aria-checked=(if enabled { "true" } else { "false" })
                    aria-label=(label) title=(label) {}
            }
        } @else {
            span.badge title=(label) { (if enabled { "On" } else { "Off" }) }
        }
    }
}

/// A new token's secret, shown once: read-only, with a Copy button (the page's script copies it and says so in
/// the live line below).
pub fn secret_field(secret: &str) -> Markup {
    html! {
        div.field {
            label for="token-secret" { "Secret" }
            div.secret-line {
                input #token-secret type="text" readonly value=(secret) spellcheck="false" autocomplete="off";
                button type="button" data-copy="token-secret" { "Copy" }
            }
            p.hint.copy-status aria-live="polite" {}
        }
    }
}

/// The first submit button of a form with several (rows added or removed, the form redrawn): Enter in a text
/// field presses a form's first submit button, so this one makes Enter save, never "Remove". Out of sight and
/// of the tab order, hidden from assistive technology: the visible button that saves, `label`, follows.
pub fn enter_saves(label: &str) -> Markup {
    html! {
        button.enter-default type="submit" name="intent" value="save" tabindex="-1" aria-hidden="true" { (label) }
    }
}

/// A labelled field with its hint and validation message (tied to the control by `aria-describedby`).
pub fn field(
    id: &str,
    label: &str,
    error: Option<&str>,
    hint: Option<&str>,
    control: Markup,
) -> Markup {
    html! {
        div.field.invalid[error.is_some()] {
            label for=(id) { (label) }
            @if let Some(hint) = hint {
                span.hint id=(format!("{id}-hint")) { (hint) }
            }
            (control)
            p.field-error id=(format!("{id}-error")) aria-live="polite" {
                @if let Some(error) = error { (error) }
            }
        }
    }
}

/// The notice a page shows after a write, from its code in the query (`proposed-<id>`: the change went into
/// change request `id`, linked under `change_requests`, the project's change-request list); an unknown code
/// shows nothing, so no link can put words on a page.
pub fn notice(code: Option<&str>, change_requests: &str) -> Markup {
    let proposed = code
        .and_then(|code| code.strip_prefix("proposed-"))
        .and_then(|id| id.parse::<i64>().ok());
    html! {
        @if let Some(id) = proposed {
            p.notice role="status" {
                "Change requests are on in this environment: your change was added to change request #"
                (id) " (a draft) instead of being made. It is applied once the request is approved. "
                a href=(format!("{change_requests}/{id}")) { "Open change request #" (id) }
            }
        }
    }
}

/// An RFC 3339 time as `2026-11-24 02:45 UTC`.
pub fn when(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => at
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

/// A token's "last used" cell: its time, or "never" (`seenAt` is null until a use is written, within a
/// minute of it).
pub fn last_used(seen_at: Option<&str>) -> Markup {
    html! {
        @match seen_at {
            Some(at) => { (when(at)) }
            None => { span.muted { "never" } }
        }
    }
}

/// How long ago `at_ms` was, as people say it.
pub fn ago(at_ms: i64, now_ms: i64) -> String {
    let seconds = (now_ms - at_ms).max(0) / 1000;
    match seconds {
        0..=59 => "just now".to_owned(),
        60..=3599 => plural(seconds / 60, "minute"),
        3600..=86_399 => plural(seconds / 3600, "hour"),
        _ => plural(seconds / 86_400, "day"),
    }
}

fn plural(count: i64, unit: &str) -> String {
    if count == 1 {
        format!("1 {unit} ago")
    } else {
        format!("{count} {unit}s ago")
    }
}

/// The id of a flag's switch in an environment on a page (the `#fragment` its `back` carries).
pub fn switch_id(flag: &str, environment: &str) -> String {
    format!("switch--{flag}--{environment}")
}

/// The control a form redrawn by `intent` gives the focus to (drawn with `autofocus`, so the page lands on
/// it without JavaScript too): after `add-<row>` the new row's first field, after `remove-<row>-<i>` the
/// first field of the row that took its place (or of the last row), and with no row left the Add button,
/// whose id is its intent (`add-<row>`). `rows` is the number of rows after the edit; `first_field(i)` the
/// id of row `i`'s first field. None for any other intent.
pub fn row_focus(
    intent: &str,
    row: &str,
    rows: usize,
    first_field: impl Fn(usize) -> String,
) -> Option<String> {
    let add = format!("add-{row}");
    if intent == add {
        return rows.checked_sub(1).map(first_field);
    }
    let removed = intent
        .strip_prefix("remove-")
        .and_then(|rest| rest.strip_prefix(row))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|index| index.parse::<usize>().ok())?;
    Some(match rows {
        0 => add,
        _ => first_field(removed.min(rows - 1)),
    })
}

/// A form's rows edited without JavaScript, by posting the form back: intent `add-<row>` appends
/// `new_row()`, `remove-<row>-<index>` removes that row (an index past the end changes nothing). Whether
/// `intent` was one of these: the form is then drawn again, nothing saved.
pub fn edit_rows<T>(
    intent: &str,
    row: &str,
    rows: &mut Vec<T>,
    new_row: impl FnOnce() -> T,
) -> bool {
    if intent.strip_prefix("add-") == Some(row) {
        rows.push(new_row());
        return true;
    }
    let removed = intent
        .strip_prefix("remove-")
        .and_then(|rest| rest.strip_prefix(row))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|index| index.parse::<usize>().ok());
    match removed {
        Some(index) => {
            if index < rows.len() {
                rows.remove(index);
            }
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_people_say_them() {
        assert_eq!(ago(0, 30_000), "just now");
        assert_eq!(ago(0, 60_000), "1 minute ago");
        assert_eq!(ago(0, 7_200_000), "2 hours ago");
        assert_eq!(ago(0, 3 * 86_400_000), "3 days ago");
        assert_eq!(when("2026-11-24T02:45:06.123Z"), "2026-11-24 02:45 UTC");
    }

    #[test]
    fn back_links_stay_local_and_notices_join_the_query() {
        assert_eq!(local_path("", Some("/a?b=1")), "/a?b=1");
        assert_eq!(local_path("/x", Some("//evil")), "/x/");
        assert_eq!(local_path("", Some("http://evil")), "/");
        for off_site in [
            "/\t/evil",
            "/%09/evil",
            "/%2F/evil",
            "/%5Cevil",
            "/\\evil",
            "/a\r\nb",
            "/a%0d%0ab",
            " /a",
            "/é",
        ] {
            assert_eq!(local_path("", Some(off_site)), "/", "{off_site:?}");
        }
        assert_eq!(local_path("/x", Some("/x?page=2")), "/x?page=2");
        assert_eq!(local_path("/x", Some("/x/flags")), "/x/flags");
        assert_eq!(local_path("/x", Some("/xy")), "/x/");
        assert_eq!(local_path("/x", Some("/y")), "/x/");
        assert_eq!(with_notice("/a", "x y"), "/a?notice=x+y");
        assert_eq!(with_notice("/a?b=1", "z"), "/a?b=1&notice=z");
        assert_eq!(with_notice("/a#env-x", "z"), "/a?notice=z#env-x");
    }

    #[test]
    fn rows_are_added_and_removed_by_intent() {
        let mut rows = vec![1, 2, 3];
        assert!(edit_rows("add-value", "value", &mut rows, || 9));
        assert_eq!(rows, [1, 2, 3, 9]);
        assert!(edit_rows("remove-value-1", "value", &mut rows, || 0));
        assert_eq!(rows, [1, 3, 9]);
        assert!(edit_rows("remove-value-7", "value", &mut rows, || 0));
        assert_eq!(rows, [1, 3, 9]);
        for other in [
            "save",
            "add-values",
            "remove-values-0",
            "remove-value-x",
            "add-parameter",
        ] {
            assert!(!edit_rows(other, "value", &mut rows, || 0), "{other}");
        }
        assert_eq!(rows, [1, 3, 9]);
    }

    #[test]
    fn the_focus_goes_to_the_row_added_or_to_the_one_in_the_removed_ones_place() {
        let first = |index: usize| format!("c{index}-context");
        assert_eq!(
            row_focus("add-constraint", "constraint", 3, first).as_deref(),
            Some("c2-context")
        );
        assert_eq!(
            row_focus("remove-constraint-1", "constraint", 3, first).as_deref(),
            Some("c1-context")
        );
        assert_eq!(
            row_focus("remove-constraint-3", "constraint", 3, first).as_deref(),
            Some("c2-context")
        );
        assert_eq!(
            row_focus("remove-constraint-0", "constraint", 0, first).as_deref(),
            Some("add-constraint")
        );
        assert_eq!(row_focus("save", "constraint", 3, first), None);
        assert_eq!(row_focus("add-sv", "constraint", 3, first), None);
    }
}
