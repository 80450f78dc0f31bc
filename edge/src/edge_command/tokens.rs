//! Unleash tokens as this edge knows them: the scope a secret's prefix names (`project:environment.secret`,
//! `[]:…` and `*:…` for every project; Unleash 8.1's `v2_` secrets have the same prefix), the scope the
//! upstream vouches for (`/edge/validate`), and Unleash Edge's rule of which tokens an edge serves: those
//! whose environment and projects one of its startup tokens covers.

use vexil_shared::token::TokenKind;

/// A token's scope: its kind (when known), environment and projects (`*`: every project).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenScope {
    #[serde(rename = "type", default, with = "kind_name")]
    pub kind: Option<TokenKind>,
    pub environment: String,
    pub projects: Vec<String>,
}

impl TokenScope {
    /// Whether every project of `other` is one of these projects, in the same environment (Unleash Edge's
    /// "same environment and broader or equal project access").
    pub fn covers(&self, other: &TokenScope) -> bool {
        self.environment == other.environment
            && (self.projects.iter().any(|p| p == "*")
                || other.projects.iter().all(|p| self.projects.contains(p)))
    }
}

/// The scope a secret's prefix names, kind unknown; `None` when it has none.
pub fn scope_of_secret(secret: &str) -> Option<TokenScope> {
    let (project, rest) = secret.split_once(':')?;
    let (environment, random) = rest.split_once('.')?;
    if project.is_empty() || environment.is_empty() || random.is_empty() {
        return None;
    }
    let project = if project == "[]" { "*" } else { project };
    Some(TokenScope {
        kind: None,
        environment: environment.to_owned(),
        projects: vec![project.to_owned()],
    })
}

/// A `PRETRUSTED_TOKENS` entry: `project:environment.secret`, or Unleash Edge's legacy `secret@environment`
/// (every project); both are frontend tokens. Returns the secret and its scope.
pub fn parse_pretrusted(entry: &str) -> Result<(String, TokenScope), String> {
    let entry = entry.trim();
    let frontend = |mut scope: TokenScope| {
        scope.kind = Some(TokenKind::Frontend);
        scope
    };
    if let Some(scope) = scope_of_secret(entry) {
        return Ok((entry.to_owned(), frontend(scope)));
    }
    match entry.split_once('@') {
        Some((secret, environment))
            if !secret.is_empty() && !environment.is_empty() && !environment.contains('@') =>
        {
            Ok((
                secret.to_owned(),
                frontend(TokenScope {
                    kind: None,
                    environment: environment.to_owned(),
                    projects: vec!["*".to_owned()],
                }),
            ))
        }
        _ => Err(format!(
            "a pretrusted token is `project:environment.secret` or `secret@environment`, not {:?}",
            redacted(entry)
        )),
    }
}

/// A secret as it may appear in a log line: its prefix up to the first `.`, the rest hidden.
pub fn redacted(secret: &str) -> String {
    match secret.split_once('.') {
        Some((prefix, _)) => format!("{prefix}.[redacted]"),
        None => "[redacted]".to_owned(),
    }
}

/// `type` of `/edge/validate`'s answer: `client`/`backend`, `frontend`, `admin` (any case).
mod kind_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use vexil_shared::token::TokenKind;

    pub fn serialize<S: Serializer>(kind: &Option<TokenKind>, s: S) -> Result<S::Ok, S::Error> {
        match kind {
            Some(kind) => s.serialize_some(kind.as_str()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TokenKind>, D::Error> {
        let name: Option<String> = Option::deserialize(d)?;
        Ok(name.and_then(|name| TokenKind::parse(&name.to_ascii_lowercase())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(environment: &str, projects: &[&str]) -> TokenScope {
        TokenScope {
            kind: None,
            environment: environment.to_owned(),
            projects: projects.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn both_secret_formats_name_their_scope() {
        assert_eq!(
            scope_of_secret("default:development.4f2a"),
            Some(scope("development", &["default"]))
        );
        assert_eq!(
            scope_of_secret("[]:production.v2_AbCdEfGhIjKlMnOpQrStUv_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"),
            Some(scope("production", &["*"]))
        );
        assert_eq!(scope_of_secret("*:*.x"), Some(scope("*", &["*"])));
        assert_eq!(scope_of_secret("no-prefix"), None);
        assert_eq!(scope_of_secret("a:b."), None);
    }

    #[test]
    fn a_token_is_covered_by_a_broader_one_of_its_environment() {
        let all = scope("development", &["*"]);
        let two = scope("development", &["a", "b"]);
        assert!(all.covers(&two));
        assert!(two.covers(&scope("development", &["a"])));
        assert!(!two.covers(&scope("development", &["a", "c"])));
        assert!(!two.covers(&all));
        assert!(!all.covers(&scope("production", &["a"])));
    }

    #[test]
    fn pretrusted_tokens_in_both_forms() {
        let (secret, scope) = parse_pretrusted("default:development.abc").unwrap();
        assert_eq!(secret, "default:development.abc");
        assert_eq!(scope.kind, Some(TokenKind::Frontend));
        let (secret, scope) = parse_pretrusted("s3cret@production").unwrap();
        assert_eq!(secret, "s3cret");
        assert_eq!(
            (scope.environment.as_str(), scope.projects),
            ("production", vec!["*".to_owned()])
        );
        let error = parse_pretrusted("just-a-secret").unwrap_err();
        assert!(!error.contains("just-a-secret"), "{error}");
    }
}
