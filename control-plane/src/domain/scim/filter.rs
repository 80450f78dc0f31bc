//! SCIM filters (RFC 7644 §3.4.2.2) as far as provisioning needs them: `attrPath op value` with `eq`, `ne`,
//! `co`, `sw`, `ew`, `gt`, `ge`, `lt`, `le`, `attrPath pr`, combined with `and`, `or`, `not (…)` and
//! parentheses. Attribute names are case-insensitive and may carry the resource's schema URN; a dotted path
//! (`emails.value`, `name.givenName`) looks into complex and multi-valued attributes (any value matches).
//! Strings compare case-insensitively (provisioning's attributes are not case-exact). Anything else is an
//! `invalidFilter` error.

use super::{strip_urn, ScimError};
use serde_json::Value;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Co,
    Sw,
    Ew,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A parsed filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Compare(Vec<String>, OpValue),
    Present(Vec<String>),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
}

/// An operator with its comparison value.
#[derive(Debug, Clone, PartialEq)]
pub struct OpValue {
    op: Op,
    value: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Open,
    Close,
}

fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::bad("invalidFilter", detail)
}

fn tokens(text: &str) -> Result<Vec<Token>, ScimError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' => {
                chars.next();
                tokens.push(Token::Open);
            }
            ')' => {
                chars.next();
                tokens.push(Token::Close);
            }
            '"' => {
                chars.next();
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped) => value.push(escaped),
                            None => return Err(invalid("The filter ends inside a string")),
                        },
                        Some(c) => value.push(c),
                        None => return Err(invalid("The filter ends inside a string")),
                    }
                }
                tokens.push(Token::Text(value));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' || c == '"' {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    schema: &'a str,
}

impl Parser<'_> {
    fn peek_word(&self) -> Option<String> {
        match self.tokens.get(self.at) {
            Some(Token::Word(word)) => Some(word.to_ascii_lowercase()),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<Filter, ScimError> {
        let mut left = self.and()?;
        while self.peek_word().as_deref() == Some("or") {
            self.at += 1;
            let right = self.and()?;
            left = Filter::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Filter, ScimError> {
        let mut left = self.factor()?;
        while self.peek_word().as_deref() == Some("and") {
            self.at += 1;
            let right = self.factor()?;
            left = Filter::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<Filter, ScimError> {
        if self.peek_word().as_deref() == Some("not") {
            self.at += 1;
            return Ok(Filter::Not(Box::new(self.group()?)));
        }
        if self.tokens.get(self.at) == Some(&Token::Open) {
            return self.group();
        }
        let Some(Token::Word(path)) = self.tokens.get(self.at).cloned() else {
            return Err(invalid("Expected an attribute name"));
        };
        self.at += 1;
        let path: Vec<String> = strip_urn(&path, self.schema)
            .split('.')
            .map(str::to_owned)
            .collect();
        if path
            .iter()
            .any(|part| part.is_empty() || part.contains('['))
        {
            return Err(invalid(format!(
                "Unsupported attribute path {:?}",
                path.join(".")
            )));
        }
        let op = self
            .peek_word()
            .ok_or_else(|| invalid("Expected an operator after the attribute name"))?;
        self.at += 1;
        let op = match op.as_str() {
            "pr" => return Ok(Filter::Present(path)),
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "co" => Op::Co,
            "sw" => Op::Sw,
            "ew" => Op::Ew,
            "gt" => Op::Gt,
            "ge" => Op::Ge,
            "lt" => Op::Lt,
            "le" => Op::Le,
            other => return Err(invalid(format!("Unknown operator {other:?}"))),
        };
        let value = match self.tokens.get(self.at).cloned() {
            Some(Token::Text(text)) => Value::String(text),
            Some(Token::Word(word)) => match word.to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => serde_json::from_str::<serde_json::Number>(&word)
                    .map(Value::Number)
                    .map_err(|_| invalid(format!("Unquoted value {word:?}: quote strings")))?,
            },
            _ => return Err(invalid("Expected a value after the operator")),
        };
        self.at += 1;
        Ok(Filter::Compare(path, OpValue { op, value }))
    }

    fn group(&mut self) -> Result<Filter, ScimError> {
        if self.tokens.get(self.at) != Some(&Token::Open) {
            return Err(invalid("Expected ( after not"));
        }
        self.at += 1;
        let inner = self.or()?;
        if self.tokens.get(self.at) != Some(&Token::Close) {
            return Err(invalid("A parenthesis is not closed"));
        }
        self.at += 1;
        Ok(inner)
    }
}

/// Parses `text`, a filter on resources of `schema`.
pub fn parse(text: &str, schema: &str) -> Result<Filter, ScimError> {
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
        schema,
    };
    let filter = parser.or()?;
    if parser.at != parser.tokens.len() {
        return Err(invalid(format!("Unexpected text in the filter {text:?}")));
    }
    Ok(filter)
}

/// Every value at `path` in `value` (arrays flattened, keys in any case).
fn values_at<'a>(value: &'a Value, path: &[String], out: &mut Vec<&'a Value>) {
    match value {
        Value::Array(items) => {
            for item in items {
                values_at(item, path, out);
            }
        }
        _ if path.is_empty() => out.push(value),
        Value::Object(object) => {
            if let Some((_, child)) = object
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(&path[0]))
            {
                values_at(child, &path[1..], out);
            }
        }
        _ => {}
    }
}

fn compare(actual: &Value, expected: &OpValue) -> bool {
    let ordering = match (actual, &expected.value) {
        (Value::String(a), Value::String(b)) => {
            let (a, b) = (a.to_lowercase(), b.to_lowercase());
            match expected.op {
                Op::Co => return a.contains(&b),
                Op::Sw => return a.starts_with(&b),
                Op::Ew => return a.ends_with(&b),
                _ => a.cmp(&b),
            }
        }
        (Value::Number(a), Value::Number(b)) => match a.as_f64().partial_cmp(&b.as_f64()) {
            Some(ordering) => ordering,
            None => return false,
        },
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        (a, b) => return (expected.op == Op::Ne) != (a == b),
    };
    match expected.op {
        Op::Eq => ordering == Ordering::Equal,
        Op::Ne => ordering != Ordering::Equal,
        Op::Gt => ordering == Ordering::Greater,
        Op::Ge => ordering != Ordering::Less,
        Op::Lt => ordering == Ordering::Less,
        Op::Le => ordering != Ordering::Greater,
        Op::Co | Op::Sw | Op::Ew => false,
    }
}

/// The attribute and value of a plain `attr eq value` filter.
pub fn equality(filter: &Filter) -> Option<(String, Value)> {
    match filter {
        Filter::Compare(path, OpValue { op: Op::Eq, value }) if path.len() == 1 => {
            Some((path[0].clone(), value.clone()))
        }
        _ => None,
    }
}

impl Filter {
    /// Whether `resource` (its JSON representation) matches.
    pub fn matches(&self, resource: &Value) -> bool {
        match self {
            Filter::Compare(path, expected) => {
                let mut found = Vec::new();
                values_at(resource, path, &mut found);
                if found.is_empty() {
                    return expected.op == Op::Ne;
                }
                if expected.op == Op::Ne {
                    return found.iter().all(|value| compare(value, expected));
                }
                found.iter().any(|value| compare(value, expected))
            }
            Filter::Present(path) => {
                let mut found = Vec::new();
                values_at(resource, path, &mut found);
                found
                    .iter()
                    .any(|value| !value.is_null() && *value != &Value::String(String::new()))
            }
            Filter::And(left, right) => left.matches(resource) && right.matches(resource),
            Filter::Or(left, right) => left.matches(resource) || right.matches(resource),
            Filter::Not(inner) => !inner.matches(resource),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::scim::USER_SCHEMA;
    use serde_json::json;

    #[test]
    fn user_name_and_more() {
        let ada = json!({"userName": "Ada@Example.com", "emails": [{"value": "ada@example.com", "type": "work"}], "active": true});
        let matches = |text: &str| parse(text, USER_SCHEMA).unwrap().matches(&ada);
        assert!(matches(r#"userName eq "ada@example.com""#));
        assert!(matches(r#"USERNAME Eq "ADA@example.com""#));
        assert!(matches(&format!(
            r#"{USER_SCHEMA}:userName eq "ada@example.com""#
        )));
        assert!(!matches(r#"userName eq "bob""#));
        assert!(matches(r#"emails.value co "example" and active eq true"#));
        assert!(matches(r#"userName eq "bob" or emails.type eq "work""#));
        assert!(matches(r#"not (userName eq "bob")"#));
        assert!(matches("emails pr"));
        assert!(!matches("displayName pr"));
        assert!(matches(r#"displayName ne "x""#));
        for bad in [
            "userName",
            r#"userName eq"#,
            r#"userName xx "a""#,
            r#"(userName eq "a""#,
            r#"userName eq "a"#,
        ] {
            let error = parse(bad, USER_SCHEMA).unwrap_err();
            assert_eq!(error.scim_type, Some("invalidFilter"), "{bad}");
        }
    }
}
