//! What changed between two JSON values, as people read it: each changed field (`variants 1 › payload ›
//! value`) with its old value struck through and its new one, values as people write them (text without
//! quotes, JSON payloads laid out in a block, switches on/off, yes/no) — an event's change in the event log
//! and a flag's page, a change request's changes.

use maud::{html, Markup};
use serde_json::Value;
use std::collections::BTreeMap;

/// The most changed leaves one list shows.
const LEAVES_SHOWN: usize = 40;

/// `path` → value, for every leaf of a JSON value (`a.b[0]`).
fn leaves<'a>(prefix: &str, value: &'a Value, into: &mut BTreeMap<String, &'a Value>) {
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (name, inner) in fields {
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                leaves(&path, inner, into);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, inner) in items.iter().enumerate() {
                leaves(&format!("{prefix}[{index}]"), inner, into);
            }
        }
        other => {
            into.insert(prefix.to_owned(), other);
        }
    }
}

/// Nothing to tell: a field that is there only on one side, empty.
fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

type Change<'a> = (String, Option<&'a Value>, Option<&'a Value>);

/// Fields a resource shows about itself (when it was made, by whom, how much uses it), not what someone set:
/// left out where the resource appears or goes (they change with it, no one changed them).
const BOOKKEEPING: [&str; 9] = [
    "createdAt",
    "createdBy",
    "seenAt",
    "updatedAt",
    "featureName",
    "featureCount",
    "projectCount",
    "userCount",
    "usedInFeatures",
];

fn is_bookkeeping(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    BOOKKEEPING.contains(&last) || last == "usedInProjects"
}

/// What an event changed: `(path, before, after)` for each leaf that differs between `preData` and `data`
/// (a leaf only on one side and empty there is left out).
fn diff<'a>(before: Option<&'a Value>, after: Option<&'a Value>) -> Vec<Change<'a>> {
    let (mut old, mut new) = (BTreeMap::new(), BTreeMap::new());
    if let Some(before) = before {
        leaves("", before, &mut old);
    }
    if let Some(after) = after {
        leaves("", after, &mut new);
    }
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .map(|path| (path.clone(), old.get(path).copied(), new.get(path).copied()))
        .filter(|(_, old, new)| old != new)
        .filter(|(path, old, new)| match (old, new) {
            (Some(only), None) | (None, Some(only)) => !is_blank(only) && !is_bookkeeping(path),
            _ => true,
        })
        .collect()
}

/// A leaf's path as people read it: `variants[0].payload.value` → "variants 1 › payload › value",
/// `impressionData` → "impression data".
fn path_words(path: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in path.split('.') {
        let (name, indexes) = part.split_once('[').unwrap_or((part, ""));
        let mut words = String::new();
        for character in name.chars() {
            if character.is_uppercase() && !words.is_empty() {
                words.push(' ');
            }
            words.extend(character.to_lowercase());
        }
        for index in indexes.split('[') {
            if let Ok(index) = index.trim_end_matches(']').parse::<usize>() {
                words.push_str(&format!(" {}", index + 1));
            }
        }
        parts.push(words);
    }
    parts.join(" › ")
}

/// A value as people read it: text without quotes (JSON text laid out in a block), `enabled` as on/off,
/// other yes/no values as yes/no, nothing as "none".
fn value(path: &str, value: &Value) -> Markup {
    let last = path.rsplit('.').next().unwrap_or(path);
    html! {
        @match value {
            Value::Bool(on) if last == "enabled" => { (if *on { "on" } else { "off" }) }
            Value::Bool(yes) => { (if *yes { "yes" } else { "no" }) }
            Value::Null => { span.none { "none" } }
            Value::String(text) if text.is_empty() => { span.none { "empty" } }
            Value::String(text) => {
                @match (json_block(text), moment(text)) {
                    (Some(pretty), _) => { pre { (pretty) } }
                    (None, Some(at)) => { time datetime=(text) { (at) } }
                    (None, None) => { (text) }
                }
            }
            Value::Array(_) | Value::Object(_) => { span.none { "none" } }
            Value::Number(number) => {
                @match number.as_i64().filter(|_| last == "weight" && path.contains("variants")) {
                    Some(weight) => { (weight_percent(weight)) }
                    None => { (number) }
                }
            }
        }
    }
}

/// A variant's weight (thousandths) as the variant form shows it: 500 → "50%", 333 → "33.3%".
fn weight_percent(weight: i64) -> String {
    if weight % 10 == 0 {
        format!("{}%", weight / 10)
    } else {
        format!("{:.1}%", weight as f64 / 10.0)
    }
}

/// Text that is a moment (`2026-11-25T23:46:29.749Z`) as the pages show times: "2026-11-25 23:46 UTC".
fn moment(text: &str) -> Option<String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|_| super::controls::when(text))
}

/// Text that is a JSON object or array (a variant's payload), pretty-printed.
fn json_block(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let parsed: Value = serde_json::from_str(text).ok()?;
    serde_json::to_string_pretty(&parsed).ok()
}

/// The changed leaves of `before` → `after` as a list (`path: old → new`); `None` when nothing changed.
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Option<Markup> {
    let changes = diff(before, after);
    if changes.is_empty() {
        return None;
    }
    let hidden = changes.len().saturating_sub(LEAVES_SHOWN);
    Some(html! {
        ul.diff aria-label="What changed" {
            @for (path, old, new) in changes.iter().take(LEAVES_SHOWN) {
                li {
                    span.diff-path { (path_words(path)) ": " }
                    @if let Some(old) = old { del.removed { span.sr-only { "was " } (value(path, old)) } }
                    @if old.is_some() && new.is_some() { " → " }
                    @if let Some(new) = new { ins.added { span.sr-only { "now " } (value(path, new)) } }
                }
            }
            @if hidden > 0 { li.muted { "and " (hidden) " more" } }
        }
    })
}

/// [`changes`], or nothing.
pub fn diff_list(before: Option<&Value>, after: Option<&Value>) -> Markup {
    html! { @if let Some(list) = changes(before, after) { (list) } }
}

#[cfg(test)]
mod tests {
    use super::{changes, diff, path_words};
    use serde_json::json;

    #[test]
    fn a_diff_names_each_changed_leaf() {
        let before =
            json!({"name": "a", "stale": false, "tags": ["x"], "x": {"y": 1}, "gone": null});
        let after = json!({"name": "a", "stale": true, "x": {"y": 2, "z": "new"}, "empty": []});
        let changes: Vec<_> = diff(Some(&before), Some(&after))
            .into_iter()
            .map(|(path, old, new)| (path, old.cloned(), new.cloned()))
            .collect();
        assert_eq!(
            changes,
            vec![
                ("stale".to_owned(), Some(json!(false)), Some(json!(true))),
                ("tags[0]".to_owned(), Some(json!("x")), None),
                ("x.y".to_owned(), Some(json!(1)), Some(json!(2))),
                ("x.z".to_owned(), None, Some(json!("new"))),
            ]
        );
        assert!(diff(None, None).is_empty());
    }

    #[test]
    fn values_read_as_people_write_them() {
        assert_eq!(
            path_words("variants[0].payload.value"),
            "variants 1 › payload › value"
        );
        assert_eq!(path_words("impressionData"), "impression data");
        let before = json!({"enabled": false, "stale": false, "archivedAt": null});
        let after = json!({"enabled": true, "stale": true, "createdAt": "2026-11-25T23:46:29.749Z",
            "archivedAt": "2026-11-25T23:46:29.749Z",
            "variants": [{"payload": {"type": "json", "value": "{\"color\":\"blue\"}"}}]});
        let shown = changes(Some(&before), Some(&after)).unwrap().into_string();
        assert!(shown.contains("off</del> → <ins"), "{shown}");
        assert!(shown.contains("</span>on</ins>"), "{shown}");
        assert!(shown.contains("</span>yes</ins>"), "{shown}");
        assert!(
            shown.contains(
                "type: </span><ins class=\"added\"><span class=\"sr-only\">now </span>json</ins>"
            ),
            "{shown}"
        );
        assert!(
            shown.contains("<pre>{\n  &quot;color&quot;: &quot;blue&quot;\n}</pre>"),
            "{shown}"
        );
        assert!(
            shown.contains(
                "<time datetime=\"2026-11-25T23:46:29.749Z\">2026-11-25 23:46 UTC</time>"
            ),
            "{shown}"
        );
        assert!(!shown.contains("created at"), "what no one set: {shown}");
        assert!(changes(Some(&before), Some(&before)).is_none());
    }

    #[test]
    fn variant_weights_read_as_percentages() {
        let before =
            json!({"variants": [{"name": "a", "weight": 500}, {"name": "b", "weight": 500}]});
        let after = json!({"variants": [{"name": "a", "weight": 700}, {"name": "b", "weight": 333}],
            "weight": 7});
        let shown = changes(Some(&before), Some(&after)).unwrap().into_string();
        assert!(shown.contains("was </span>50%</del>"), "{shown}");
        assert!(shown.contains("now </span>70%</ins>"), "{shown}");
        assert!(shown.contains("now </span>33.3%</ins>"), "{shown}");
        assert!(
            shown.contains("now </span>7</ins>"),
            "not a variant's: {shown}"
        );
    }
}
