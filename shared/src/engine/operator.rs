//! The constraint operators the engine implements, and their names: the one list of them, which the admin
//! API validates constraints against.

/// A constraint operator: the client specification's 15 and Vexil's four extras (`SEMVER_GTE`, `SEMVER_LTE`,
/// `REGEX`, `IN_CIDR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    In,
    NotIn,
    StrStartsWith,
    StrEndsWith,
    StrContains,
    NumEq,
    NumGt,
    NumGte,
    NumLt,
    NumLte,
    DateAfter,
    DateBefore,
    SemverEq,
    SemverGt,
    SemverLt,
    SemverGte,
    SemverLte,
    Regex,
    InCidr,
}

impl Operator {
    /// Every operator, in the order of [`OPERATORS`].
    pub const ALL: [Operator; 19] = [
        Operator::In,
        Operator::NotIn,
        Operator::StrStartsWith,
        Operator::StrEndsWith,
        Operator::StrContains,
        Operator::NumEq,
        Operator::NumGt,
        Operator::NumGte,
        Operator::NumLt,
        Operator::NumLte,
        Operator::DateAfter,
        Operator::DateBefore,
        Operator::SemverEq,
        Operator::SemverGt,
        Operator::SemverLt,
        Operator::SemverGte,
        Operator::SemverLte,
        Operator::Regex,
        Operator::InCidr,
    ];

    /// The operator's name in a constraint's `operator`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operator::In => "IN",
            Operator::NotIn => "NOT_IN",
            Operator::StrStartsWith => "STR_STARTS_WITH",
            Operator::StrEndsWith => "STR_ENDS_WITH",
            Operator::StrContains => "STR_CONTAINS",
            Operator::NumEq => "NUM_EQ",
            Operator::NumGt => "NUM_GT",
            Operator::NumGte => "NUM_GTE",
            Operator::NumLt => "NUM_LT",
            Operator::NumLte => "NUM_LTE",
            Operator::DateAfter => "DATE_AFTER",
            Operator::DateBefore => "DATE_BEFORE",
            Operator::SemverEq => "SEMVER_EQ",
            Operator::SemverGt => "SEMVER_GT",
            Operator::SemverLt => "SEMVER_LT",
            Operator::SemverGte => "SEMVER_GTE",
            Operator::SemverLte => "SEMVER_LTE",
            Operator::Regex => "REGEX",
            Operator::InCidr => "IN_CIDR",
        }
    }

    /// The operator of [`Operator::ALL`] named `name` (case-sensitive); `None` for any other name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.as_str() == name)
    }
}

/// Every operator's name, in [`Operator::ALL`]'s order: what a constraint's `operator` may be.
pub const OPERATORS: [&str; Operator::ALL.len()] = {
    let mut names = [""; Operator::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = Operator::ALL[i].as_str();
        i += 1;
    }
    names
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_parse_back() {
        for (i, op) in Operator::ALL.into_iter().enumerate() {
            assert_eq!(OPERATORS[i], op.as_str());
            assert_eq!(Operator::parse(op.as_str()), Some(op));
            assert_eq!(OPERATORS.iter().filter(|n| **n == op.as_str()).count(), 1);
        }
        assert_eq!(Operator::parse("in"), None);
        assert_eq!(Operator::parse("BOGUS"), None);
        assert_eq!(Operator::parse(""), None);
    }
}
