//! The vocabulary shared by flags and contexts: apps, environments, plans, countries, names, projects; user
//! ids, tenants, IP addresses, dates and app versions.

use super::Rng;

pub(super) const APPS: &[&str] = &[
    "web",
    "ios",
    "android",
    "backend",
    "admin-console",
    "checkout",
];
pub(super) const ENVIRONMENTS: &[&str] = &["production", "staging", "development"];
pub(super) const PLANS: &[&str] = &["free", "pro", "enterprise", "trial"];
pub(super) const COUNTRIES: &[&str] = &["NO", "SE", "DK", "US", "DE", "FR", "JP", "BR", "IN", "GB"];
pub(super) const DOMAINS: &[&str] = &["example.com", "Example.org", "corp.io", "mail.no"];
pub(super) const FIRST_NAMES: &[&str] = &[
    "ada", "alan", "grace", "linus", "margaret", "ken", "barbara", "dennis",
];
/// A few non-ASCII names, so that case-insensitive string operators meet non-ASCII input.
pub(super) const NON_ASCII_NAMES: &[&str] = &["øyvind", "zoë", "ÅSA", "józef"];
pub(super) const PROJECTS: &[&str] = &["default", "payments", "growth", "platform", "mobile"];
pub(super) const AREAS: &[&str] = &[
    "checkout",
    "search",
    "onboarding",
    "billing",
    "profile",
    "feed",
    "ads",
    "infra",
];
pub(super) const NOUNS: &[&str] = &[
    "banner",
    "new-flow",
    "redesign",
    "kill-switch",
    "experiment",
    "cache",
    "api-v2",
];
pub(super) const VARIANT_NAMES: &[&str] = &[
    "control",
    "blue",
    "green",
    "red",
    "treatment-a",
    "treatment-b",
];
pub(super) const USERS: u64 = 20_000;
pub(super) const TENANTS: u64 = 200;

/// One user in seven has a bare numeric id.
pub(super) fn user_id(n: u64) -> String {
    match n % 7 {
        0 => n.to_string(),
        _ => format!("user-{n}"),
    }
}

pub(super) fn tenant(n: u64) -> String {
    format!("tenant-{n}")
}

pub(super) fn ip(rng: &mut Rng) -> String {
    match rng.weighted(&[40, 25, 15, 10, 10]) {
        0 => format!(
            "10.{}.{}.{}",
            rng.range(0, 4),
            rng.range(0, 255),
            rng.range(1, 254)
        ),
        1 => format!("192.168.{}.{}", rng.range(0, 3), rng.range(1, 254)),
        2 => format!("172.16.{}.{}", rng.range(0, 31), rng.range(1, 254)),
        3 => format!("203.0.113.{}", rng.range(1, 254)),
        _ => format!(
            "2001:db8:{:x}::{:x}",
            rng.range(0, 15),
            rng.range(1, 0xffff)
        ),
    }
}

/// An RFC 3339 time in the given years.
pub(super) fn date(rng: &mut Rng, from_year: u64, to_year: u64) -> String {
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}{}",
        rng.range(from_year, to_year),
        rng.range(1, 12),
        rng.range(1, 28),
        rng.range(0, 23),
        rng.range(0, 59),
        rng.range(0, 59),
        if rng.chance(50) { "Z" } else { ".000Z" }
    )
}

pub(super) fn app_version(rng: &mut Rng) -> String {
    let mut v = format!(
        "{}.{}.{}",
        rng.range(1, 4),
        rng.range(0, 12),
        rng.range(0, 20)
    );
    match rng.weighted(&[77, 8, 7, 8]) {
        1 => v.push_str(&format!("-beta.{}", rng.range(1, 9))),
        2 => v.push_str(&format!("-rc.{}", rng.range(1, 3))),
        // Long build metadata: semver keeps identifiers longer than 8 bytes on the heap.
        3 => v.push_str(&format!("+build.{}", rng.range(20_240_101, 20_251_231))),
        _ => {}
    }
    v
}
