//! The names rule of API.md §1: 1 to 100 characters, URL-safe (`encodeURIComponent(n) == n`), not `.` or `..`.

use vexil_shared::ApiError;

/// Checks `value` against the names rule; the message names `field`.
pub fn validate(field: &str, value: &str) -> Result<(), ApiError> {
    let length = value.chars().count();
    if length == 0 || length > 100 {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be 1 to 100 characters long"),
        ));
    }
    if value == "." || value == ".." {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must not be \".\" or \"..\""),
        ));
    }
    if let Some(bad) = value.chars().find(|c| !is_url_safe(*c)) {
        return Err(ApiError::invalid_field(
            field,
            format!("{field} must be URL-safe (letters, digits and -_.!~*'()), found {bad:?}"),
        ));
    }
    Ok(())
}

/// The characters `encodeURIComponent` leaves as they are.
fn is_url_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '!' | '~' | '*' | '\'' | '(' | ')')
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_url_safe_names_and_rejects_others() {
        for good in ["a", "my-flag_1.x", "(x)!~*'", &"a".repeat(100)] {
            assert!(validate("name", good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", "a b", "a/b", "é", "a?b", &"a".repeat(101)] {
            let error = validate("name", bad).unwrap_err();
            assert!(
                error.message.starts_with("name "),
                "{bad}: {}",
                error.message
            );
        }
    }
}
