//! What changed between two JSON values, as people read it: each changed leaf with its old value struck
//! through and its new one (a flag's event log, a change request's changes).

use maud::{html, Markup};
use serde_json::Value;
use std::collections::BTreeMap;

/// The most changed leaves one list shows.
const LEAVES_SHOWN: usize = 40;

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

/// The changed leaves of `before` → `after` as a list (`path: old → new`); nothing when nothing changed.
pub fn diff_list(before: Option<&Value>, after: Option<&Value>) -> Markup {
    let changes = diff(before, after);
    html! {
        @if !changes.is_empty() {
            ul.diff aria-label="What changed" {
                @for (path, old, new) in changes.iter().take(LEAVES_SHOWN) {
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
