//! The readable form of audit events, shared by a flag's page and the event log (`/history`): each event's
//! type, place, author and time, and what it changed as a leaf-by-leaf diff of `preData` → `data`.

use super::controls::when;
use crate::domain::events::Event;
use maud::{html, Markup};
use serde_json::Value;
use std::collections::BTreeMap;

/// `path` → value, for every leaf of a JSON value (`a.b[0]`).
fn leaves(prefix: &str, value: &Value, into: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(fields) => {
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
            into.insert(prefix.to_owned(), other.to_string());
        }
    }
}

/// What an event changed: `(path, before, after)` for each leaf that differs between `preData` and `data`.
fn diff(
    before: Option<&Value>,
    after: Option<&Value>,
) -> Vec<(String, Option<String>, Option<String>)> {
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
        .filter(|path| old.get(*path) != new.get(*path))
        .map(|path| (path.clone(), old.get(path).cloned(), new.get(path).cloned()))
        .collect()
}

/// One event of a list: its type, where, who, when, then each changed leaf as `path: − before → + after`.
/// `about` names what the event is about where the list holds events of many things (the event log).
pub fn event_item(event: &Event, about: Option<Markup>) -> Markup {
    let changes = diff(event.pre_data.as_ref(), event.data.as_ref());
    html! {
        li {
            strong { (event.event_type) }
            @if let Some(about) = about { " " (about) }
            @if let Some(environment) = &event.environment { " in " (environment) }
            " · by " (event.created_by) " · " time datetime=(event.created_at) { (when(&event.created_at)) }
            @if !changes.is_empty() {
                ul.diff aria-label="What changed" {
                    @for (path, old, new) in changes.iter().take(40) {
                        li {
                            (path) ": "
                            @if let Some(old) = old { span.removed { del { (old) } } }
                            @if old.is_some() && new.is_some() { " → " }
                            @if let Some(new) = new { span.added { ins { (new) } } }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::diff;
    use serde_json::json;

    #[test]
    fn a_diff_names_each_changed_leaf() {
        let before = json!({"name": "a", "stale": false, "tags": [], "x": {"y": 1}});
        let after = json!({"name": "a", "stale": true, "x": {"y": 2, "z": "new"}});
        let changes = diff(Some(&before), Some(&after));
        assert_eq!(
            changes,
            vec![
                (
                    "stale".to_owned(),
                    Some("false".to_owned()),
                    Some("true".to_owned())
                ),
                ("tags".to_owned(), Some("[]".to_owned()), None),
                ("x.y".to_owned(), Some("1".to_owned()), Some("2".to_owned())),
                ("x.z".to_owned(), None, Some("\"new\"".to_owned())),
            ]
        );
        assert!(diff(None, None).is_empty());
    }
}
