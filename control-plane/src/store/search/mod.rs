//! SQL of the admin search routes (`/api/admin/search/…`): a WHERE clause built from the filters, with its
//! values bound in placeholder order, and the page and the count read with the same clause.

pub mod events;
pub mod features;

use crate::time::Timestamp;
use sqlx::any::AnyArguments;
use sqlx::query::{QueryAs, QueryScalar};
use sqlx::Any;

/// A filter on one column: the row's value is one of these, or none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match<T> {
    AnyOf(Vec<T>),
    NoneOf(Vec<T>),
}

/// A value bound to a placeholder.
#[derive(Debug, Clone)]
enum Value {
    Text(String),
    Integer(i64),
    Time(Timestamp),
}

/// The conditions of a WHERE clause (joined by AND) and the values of their placeholders.
#[derive(Debug, Default)]
struct Conditions {
    conditions: Vec<String>,
    values: Vec<Value>,
}

impl Conditions {
    /// Binds a value; the placeholder to write in its place.
    fn bind(&mut self, value: Value) -> String {
        self.values.push(value);
        format!("${}", self.values.len())
    }

    fn push(&mut self, condition: String) {
        self.conditions.push(condition);
    }

    /// `column IN (…)` or `NOT IN (…)`; an empty "any of" matches nothing, an empty "none of" everything.
    fn matching(&mut self, column: &str, filter: &Match<Value>) {
        let (values, negated) = match filter {
            Match::AnyOf(values) => (values, false),
            Match::NoneOf(values) => (values, true),
        };
        if values.is_empty() {
            if !negated {
                self.push("1 = 0".to_owned());
            }
            return;
        }
        let placeholders: Vec<String> = values
            .iter()
            .map(|value| self.bind(value.clone()))
            .collect();
        let not = if negated { "NOT " } else { "" };
        self.push(format!("{column} {not}IN ({})", placeholders.join(", ")));
    }

    fn matching_text(&mut self, column: &str, filter: &Match<String>) {
        self.matching(
            column,
            &map_match(filter, |value| Value::Text(value.clone())),
        );
    }

    /// Any of `columns` contains any of `terms`, ignoring case (`terms` are lower case already).
    fn containing(&mut self, columns: &[&str], terms: &[String]) {
        if terms.is_empty() {
            return;
        }
        let mut alternatives = Vec::new();
        for term in terms {
            let pattern = self.bind(Value::Text(format!("%{}%", escape_like(term))));
            for column in columns {
                alternatives.push(format!("LOWER({column}) LIKE {pattern} ESCAPE '\\'"));
            }
        }
        self.push(format!("({})", alternatives.join(" OR ")));
    }

    fn clause(&self) -> String {
        if self.conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.conditions.join(" AND "))
        }
    }

    fn bind_rows<'q, O>(
        &self,
        mut query: QueryAs<'q, Any, O, AnyArguments<'q>>,
    ) -> QueryAs<'q, Any, O, AnyArguments<'q>> {
        for value in &self.values {
            query = match value.clone() {
                Value::Text(text) => query.bind(text),
                Value::Integer(integer) => query.bind(integer),
                Value::Time(time) => query.bind(time),
            };
        }
        query
    }

    fn bind_scalars<'q, O>(
        &self,
        mut query: QueryScalar<'q, Any, O, AnyArguments<'q>>,
    ) -> QueryScalar<'q, Any, O, AnyArguments<'q>> {
        for value in &self.values {
            query = match value.clone() {
                Value::Text(text) => query.bind(text),
                Value::Integer(integer) => query.bind(integer),
                Value::Time(time) => query.bind(time),
            };
        }
        query
    }
}

fn map_match<T, U>(filter: &Match<T>, f: impl Fn(&T) -> U) -> Match<U> {
    match filter {
        Match::AnyOf(values) => Match::AnyOf(values.iter().map(f).collect()),
        Match::NoneOf(values) => Match::NoneOf(values.iter().map(f).collect()),
    }
}

/// `%`, `_` and the escape character itself, escaped for `LIKE … ESCAPE '\'`.
fn escape_like(term: &str) -> String {
    let mut escaped = String::with_capacity(term.len());
    for character in term.chars() {
        if matches!(character, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// `$k, $k+1, …` for a list of names, bound in order (the page's flags).
fn name_list(conditions: &mut Conditions, names: &[String]) -> String {
    names
        .iter()
        .map(|name| conditions.bind(Value::Text(name.clone())))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_their_wildcards() {
        assert_eq!(escape_like("50%_off\\now"), "50\\%\\_off\\\\now");
        assert_eq!(escape_like("plain"), "plain");
    }

    #[test]
    fn an_empty_set_matches_nothing_or_everything() {
        let mut conditions = Conditions::default();
        conditions.matching_text("type", &Match::NoneOf(Vec::new()));
        assert_eq!(conditions.clause(), "");
        conditions.matching_text("type", &Match::AnyOf(Vec::new()));
        assert_eq!(conditions.clause(), "WHERE 1 = 0");
        conditions.matching_text(
            "project",
            &Match::NoneOf(vec!["a".to_owned(), "b".to_owned()]),
        );
        assert_eq!(
            conditions.clause(),
            "WHERE 1 = 0 AND project NOT IN ($1, $2)"
        );
    }
}
