//! SCIM PATCH (RFC 7644 §3.5.2) on a resource's attributes as a JSON object: `add`, `replace` and `remove`,
//! with or without a `path`; a path is `attr`, `attr.sub`, `attr[filter]` or `attr[filter].sub`, its
//! attribute name in any case and with or without the schema URN. Operation names are case-insensitive (Entra
//! sends `Replace`). The result is checked afterwards by the resource's own normalisation (types, required
//! attributes), so a PATCH can never store what a PUT could not. Attributes the resource does not have
//! are left alone (providers send many that Vexil does not keep).
//!
//! Provider habits handled: a path-less `replace` with `{"active": false}` (Okta, Entra); a member removed by
//! `members[value eq "…"]` (Okta) or by `remove` of `members` with the members as the value (Entra); an
//! e-mail set by `emails[type eq "work"].value` when no work e-mail exists yet (Entra: it is added).

use super::filter::{self, Filter};
use super::{key_of, strip_urn, ScimError};
use serde_json::{Map, Value};

/// What PATCH needs to know of a resource type.
pub struct Shape {
    pub schema: &'static str,
    /// The attributes it keeps, canonically spelt.
    pub attributes: &'static [&'static str],
    /// Those that are multi-valued.
    pub multi_valued: &'static [&'static str],
    /// Those that are complex (single-valued, with sub-attributes).
    pub complex: &'static [&'static str],
}

impl Shape {
    fn canonical(&self, name: &str) -> Option<&'static str> {
        self.attributes
            .iter()
            .copied()
            .find(|known| known.eq_ignore_ascii_case(name))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Replace,
    Remove,
}

/// A parsed path.
struct Target {
    attribute: &'static str,
    filter: Option<Filter>,
    sub: Option<String>,
}

fn invalid_path(detail: impl Into<String>) -> ScimError {
    ScimError::bad("invalidPath", detail)
}

/// The path's target, or `None` for an attribute the resource does not keep.
fn target(path: &str, shape: &Shape) -> Result<Option<Target>, ScimError> {
    let path = strip_urn(path, shape.schema);
    let (head, filter, rest) = match path.find('[') {
        Some(open) => {
            let close = path[open..]
                .find(']')
                .map(|at| open + at)
                .ok_or_else(|| invalid_path(format!("The path {path:?} has no closing ]")))?;
            let filter = filter::parse(&path[open + 1..close], shape.schema)?;
            let rest = path[close + 1..].trim_start_matches('.');
            (&path[..open], Some(filter), rest)
        }
        None => match path.split_once('.') {
            Some((head, sub)) => (head, None, sub),
            None => (path, None, ""),
        },
    };
    if head.is_empty() {
        return Err(invalid_path(format!(
            "The path {path:?} names no attribute"
        )));
    }
    let Some(attribute) = shape.canonical(head) else {
        return Ok(None);
    };
    if filter.is_some() && !shape.multi_valued.contains(&attribute) {
        return Err(invalid_path(format!(
            "{attribute} is not multi-valued: a filter cannot select its values"
        )));
    }
    let sub = (!rest.is_empty()).then(|| rest.to_owned());
    Ok(Some(Target {
        attribute,
        filter,
        sub,
    }))
}

fn items(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        single => vec![single],
    }
}

/// Sets sub-attribute `sub` of `element` (an object, or made one).
fn set_sub(element: &mut Value, sub: &str, value: Value) {
    if !element.is_object() {
        *element = Value::Object(Map::new());
    }
    if let Value::Object(object) = element {
        let key = key_of(object, sub).unwrap_or_else(|| sub.to_owned());
        object.insert(key, value);
    }
}

/// Merges `value`'s keys into `element` (both objects), else replaces it.
fn merge(element: &mut Value, value: Value) {
    match (element.as_object_mut(), value) {
        (Some(object), Value::Object(incoming)) => {
            for (key, value) in incoming {
                let key = key_of(object, &key).unwrap_or(key);
                object.insert(key, value);
            }
        }
        (_, value) => *element = value,
    }
}

/// The element a filter like `type eq "work"` describes, for a value set on a missing element.
fn element_of(filter: &Filter) -> Option<Value> {
    filter::equality(filter).map(|(name, value)| {
        let mut object = Map::new();
        object.insert(name, value);
        Value::Object(object)
    })
}

fn apply_one(
    object: &mut Map<String, Value>,
    op: Op,
    target: Target,
    value: Option<Value>,
    shape: &Shape,
) -> Result<(), ScimError> {
    let attribute = target.attribute;
    let multi = shape.multi_valued.contains(&attribute);
    let current = object
        .remove(attribute)
        .or_else(|| key_of(object, attribute).and_then(|key| object.remove(&key)));
    let needs_value = || {
        value.clone().ok_or_else(|| {
            ScimError::bad(
                "invalidValue",
                format!("{op:?} of {attribute} needs a value"),
            )
        })
    };
    let next: Option<Value> = match (op, &target.filter, &target.sub) {
        (Op::Remove, None, None) => match (multi, value.clone(), current) {
            // Entra: `remove` of `members` with the members to remove as the value.
            (true, Some(listed), Some(Value::Array(existing))) => {
                let listed = items(listed);
                let gone = |element: &Value| {
                    listed
                        .iter()
                        .any(|item| match (item.get("value"), element.get("value")) {
                            (Some(Value::String(a)), Some(Value::String(b))) => {
                                a.eq_ignore_ascii_case(b)
                            }
                            _ => item == element,
                        })
                };
                Some(Value::Array(
                    existing
                        .into_iter()
                        .filter(|element| !gone(element))
                        .collect(),
                ))
            }
            _ => None,
        },
        (Op::Remove, None, Some(sub)) => current.map(|mut current| {
            let drop_sub = |element: &mut Value| {
                if let Some(object) = element.as_object_mut() {
                    if let Some(key) = key_of(object, sub) {
                        object.remove(&key);
                    }
                }
            };
            match &mut current {
                Value::Array(elements) => elements.iter_mut().for_each(drop_sub),
                element => drop_sub(element),
            }
            current
        }),
        (Op::Remove, Some(filter), sub) => {
            let elements = items(current.unwrap_or(Value::Null));
            let kept = elements
                .into_iter()
                .filter_map(|mut element| {
                    if !filter.matches(&element) {
                        return Some(element);
                    }
                    let sub = sub.as_ref()?;
                    if let Some(object) = element.as_object_mut() {
                        if let Some(key) = key_of(object, sub) {
                            object.remove(&key);
                        }
                    }
                    Some(element)
                })
                .collect();
            Some(Value::Array(kept))
        }
        (_, None, None) => {
            let value = needs_value()?;
            if multi {
                let mut elements = match op {
                    Op::Add => items(current.unwrap_or(Value::Null)),
                    _ => Vec::new(),
                };
                for item in items(value) {
                    if !elements.contains(&item) {
                        elements.push(item);
                    }
                }
                Some(Value::Array(elements))
            } else if shape.complex.contains(&attribute) {
                let mut element = current.unwrap_or(Value::Object(Map::new()));
                merge(&mut element, value);
                Some(element)
            } else {
                Some(value)
            }
        }
        (_, None, Some(sub)) => {
            let value = needs_value()?;
            let mut current = current.unwrap_or(if multi {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            });
            match &mut current {
                Value::Array(elements) if elements.is_empty() => {
                    let mut element = Value::Object(Map::new());
                    set_sub(&mut element, sub, value);
                    elements.push(element);
                }
                Value::Array(elements) => {
                    for element in elements.iter_mut() {
                        set_sub(element, sub, value.clone());
                    }
                }
                element => set_sub(element, sub, value),
            }
            Some(current)
        }
        (_, Some(filter), sub) => {
            let value = needs_value()?;
            let mut elements = items(current.unwrap_or(Value::Null));
            let mut matched = false;
            for element in elements
                .iter_mut()
                .filter(|element| filter.matches(element))
            {
                matched = true;
                match sub {
                    Some(sub) => set_sub(element, sub, value.clone()),
                    None => merge(element, value.clone()),
                }
            }
            if !matched {
                let mut element = element_of(filter).ok_or_else(|| {
                    ScimError::bad(
                        "noTarget",
                        format!("No value of {attribute} matches the path's filter"),
                    )
                })?;
                match sub {
                    Some(sub) => set_sub(&mut element, sub, value),
                    None => merge(&mut element, value),
                }
                elements.push(element);
            }
            Some(Value::Array(elements))
        }
    };
    match next {
        Some(Value::Array(elements)) if elements.is_empty() => {}
        Some(Value::Null) | None => {}
        Some(next) => {
            object.insert(attribute.to_owned(), next);
        }
    }
    Ok(())
}

/// Applies the PatchOp `request` to `object` (the resource's attributes, canonical keys).
pub fn apply(
    object: &mut Map<String, Value>,
    request: &Value,
    shape: &Shape,
) -> Result<(), ScimError> {
    let syntax = |detail: &str| ScimError::bad("invalidSyntax", detail.to_owned());
    let body = request
        .as_object()
        .ok_or_else(|| syntax("A PATCH body is a PatchOp object"))?;
    let operations = key_of(body, "Operations")
        .and_then(|key| body.get(&key))
        .and_then(Value::as_array)
        .ok_or_else(|| syntax("A PATCH body needs its Operations array"))?;
    for operation in operations {
        let operation = operation
            .as_object()
            .ok_or_else(|| syntax("Each operation is an object"))?;
        let field = |name: &str| {
            key_of(operation, name)
                .and_then(|key| operation.get(&key))
                .cloned()
        };
        let op = match field("op")
            .as_ref()
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("add") => Op::Add,
            Some("replace") => Op::Replace,
            Some("remove") => Op::Remove,
            _ => return Err(syntax("Each operation's op is add, replace or remove")),
        };
        let value = field("value");
        match field("path")
            .as_ref()
            .and_then(Value::as_str)
            .filter(|path| !path.trim().is_empty())
        {
            Some(path) => {
                if let Some(target) = target(path, shape)? {
                    apply_one(object, op, target, value, shape)?;
                }
            }
            None => {
                if op == Op::Remove {
                    return Err(ScimError::bad(
                        "noTarget",
                        "A remove operation needs a path",
                    ));
                }
                let Some(Value::Object(values)) = value else {
                    return Err(ScimError::bad(
                        "invalidValue",
                        "An operation without a path takes an object of attributes as its value",
                    ));
                };
                for (name, value) in values {
                    if let Some(target) = target(&name, shape)? {
                        apply_one(object, op, target, Some(value), shape)?;
                    }
                }
            }
        }
    }
    Ok(())
}
