//! The admin search routes (`GET /api/admin/search/features`, `GET /api/admin/search/events`) and Unleash's
//! query syntax they share: a filter is `OPERATOR:value,value…`, a date `yyyy-MM-dd` (UTC), and paging by
//! `offset` and `limit`. Anything else is a 400 naming the parameter.

pub mod events;
pub mod features;

use super::events::{MAX_LIMIT, MAX_OFFSET};
use crate::store::search::Match;
use crate::time::Timestamp;
use chrono::NaiveDate;
use vexil_shared::ApiError;

/// `limit` when absent (Unleash's default for both routes).
pub const DEFAULT_LIMIT: u32 = 50;

/// Which operators a set filter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operators {
    /// `IS`, `IS_ANY_OF` (any of the values).
    Positive,
    /// Those and `IS_NOT`, `IS_NONE_OF` (none of the values).
    All,
}

impl Operators {
    fn names(self) -> &'static str {
        match self {
            Operators::Positive => "IS or IS_ANY_OF",
            Operators::All => "IS, IS_NOT, IS_ANY_OF or IS_NONE_OF",
        }
    }
}

/// `IS:a`, `IS_ANY_OF:a,b` → any of; `IS_NOT:a`, `IS_NONE_OF:a,b` → none of (when `operators` allows).
fn parse_set(param: &str, value: &str, operators: Operators) -> Result<Match<String>, ApiError> {
    let bad_operator = || {
        ApiError::validation(format!(
            "{param} must be an operator ({}) and values, as in IS:value or IS_ANY_OF:a,b; got \"{value}\"",
            operators.names()
        ))
    };
    let (operator, list) = value.split_once(':').ok_or_else(bad_operator)?;
    let values = split_values(param, list)?;
    match (operator, operators) {
        ("IS" | "IS_ANY_OF", _) => Ok(Match::AnyOf(values)),
        ("IS_NOT" | "IS_NONE_OF", Operators::All) => Ok(Match::NoneOf(values)),
        _ => Err(bad_operator()),
    }
}

/// A set filter over a closed list of words, each checked against `allowed`.
fn parse_words(
    param: &str,
    value: &str,
    operators: Operators,
    allowed: &[&str],
) -> Result<Match<String>, ApiError> {
    let set = parse_set(param, value, operators)?;
    let (Match::AnyOf(values) | Match::NoneOf(values)) = &set;
    if let Some(unknown) = values
        .iter()
        .find(|value| !allowed.contains(&value.as_str()))
    {
        return Err(ApiError::validation(format!(
            "{param}: \"{unknown}\" is not one of {}",
            allowed.join(", ")
        )));
    }
    Ok(set)
}

/// A set filter over whole numbers (ids).
fn parse_ids(param: &str, value: &str) -> Result<Match<i64>, ApiError> {
    let parse = |values: Vec<String>| {
        values
            .iter()
            .map(|value| {
                value.parse::<i64>().map_err(|_| {
                    ApiError::validation(format!("{param}: \"{value}\" is not a whole number"))
                })
            })
            .collect::<Result<Vec<i64>, ApiError>>()
    };
    Ok(match parse_set(param, value, Operators::Positive)? {
        Match::AnyOf(values) => Match::AnyOf(parse(values)?),
        Match::NoneOf(values) => Match::NoneOf(parse(values)?),
    })
}

/// Comma-separated values, trimmed; none may be empty.
fn split_values(param: &str, list: &str) -> Result<Vec<String>, ApiError> {
    let values: Vec<String> = list
        .split(',')
        .map(|value| value.trim().to_owned())
        .collect();
    if values.iter().any(String::is_empty) {
        return Err(ApiError::validation(format!(
            "{param} has an empty value: give one or more values separated by commas"
        )));
    }
    Ok(values)
}

/// `yyyy-MM-dd` → the start of that day, UTC.
fn parse_date(param: &str, text: &str) -> Result<Timestamp, ApiError> {
    let invalid = || {
        ApiError::validation(format!(
            "{param}: \"{text}\" is not a date of the form yyyy-MM-dd"
        ))
    };
    if text.len() != 10 {
        return Err(invalid());
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| invalid())?;
    let midnight = date.and_hms_opt(0, 0, 0).ok_or_else(invalid)?;
    Timestamp::from_millis(midnight.and_utc().timestamp_millis()).ok_or_else(invalid)
}

/// `OPERATOR:yyyy-MM-dd` with one of `operators`: the operator and the start of that day.
fn parse_dated<'a>(
    param: &str,
    value: &'a str,
    operators: &[&str],
) -> Result<(&'a str, Timestamp), ApiError> {
    let bad = || {
        ApiError::validation(format!(
            "{param} must be {}:yyyy-MM-dd; got \"{value}\"",
            operators.join(":yyyy-MM-dd or ")
        ))
    };
    let (operator, date) = value.split_once(':').ok_or_else(bad)?;
    if !operators.contains(&operator) {
        return Err(bad());
    }
    Ok((operator, parse_date(param, date)?))
}

/// `offset` and `limit`: whole numbers, at most [`MAX_OFFSET`] and [`MAX_LIMIT`].
fn parse_page(offset: Option<&str>, limit: Option<&str>) -> Result<(i64, i64), ApiError> {
    let number = |param: &str, text: Option<&str>, default: u32, max: u32| match text {
        None => Ok(default),
        Some(text) => text
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|number| *number <= max)
            .ok_or_else(|| {
                ApiError::validation(format!(
                    "{param} must be a whole number from 0 to {max}; got \"{text}\""
                ))
            }),
    };
    let offset = number("offset", offset, 0, MAX_OFFSET)?;
    let limit = number("limit", limit, DEFAULT_LIMIT, MAX_LIMIT)?;
    Ok((i64::from(offset), i64::from(limit)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_filters_take_unleash_operators() {
        assert_eq!(
            parse_set("project", "IS:default", Operators::All).unwrap(),
            Match::AnyOf(vec!["default".to_owned()])
        );
        assert_eq!(
            parse_set("type", "IS_NONE_OF:release, experiment", Operators::All).unwrap(),
            Match::NoneOf(vec!["release".to_owned(), "experiment".to_owned()])
        );
        for bad in ["default", "IS_NOT:a", "INCLUDE:a", "IS:", "IS_ANY_OF:a,,b"] {
            assert!(
                parse_set("feature", bad, Operators::Positive).is_err(),
                "{bad}"
            );
        }
        assert!(parse_ids("createdBy", "IS:x").is_err());
        assert_eq!(
            parse_ids("id", "IS_ANY_OF:1,2").unwrap(),
            Match::AnyOf(vec![1, 2])
        );
        assert!(parse_words("state", "IS:gone", Operators::All, &["active", "stale"]).is_err());
    }

    #[test]
    fn dates_are_days_in_utc() {
        assert_eq!(
            parse_date("from", "2026-11-21").unwrap().to_string(),
            "2026-11-21T00:00:00.000Z"
        );
        for bad in [
            "2026-1-21",
            "2026-02-30",
            "21-11-2026",
            "2026-11-21T00:00:00Z",
        ] {
            assert!(parse_date("from", bad).is_err(), "{bad}");
        }
        assert!(parse_dated("createdAt", "IS_AFTER:2026-11-21", &["IS_BEFORE"]).is_err());
    }

    #[test]
    fn pages_are_bounded() {
        assert_eq!(parse_page(None, None).unwrap(), (0, 50));
        assert_eq!(parse_page(Some("10"), Some("1000")).unwrap(), (10, 1000));
        assert!(parse_page(None, Some("1001")).is_err());
        assert!(parse_page(Some("-1"), None).is_err());
        assert!(parse_page(Some("ten"), None).is_err());
    }
}
