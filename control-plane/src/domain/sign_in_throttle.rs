//! Failed sign-ins, counted per login and per client address over [`FAILURE_WINDOW`]: once a login has
//! [`MAX_FAILURES_PER_LOGIN`] or an address [`MAX_FAILURES_PER_CLIENT`], further attempts get 429
//! `RateLimitError` with `Retry-After` until that window ends, before any password work (whose concurrency
//! and memory `passwords` bounds).
//!
//! It is all in this process's memory, bounded by [`MAX_TRACKED_KEYS`] per table: each replica counts on its
//! own, and a restart forgets.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use vexil_shared::ApiError;

/// How long failed attempts are counted: the window starts at a key's first failure.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(5 * 60);

/// Failed attempts on one login (username or e-mail, whether or not a user has it) within
/// [`FAILURE_WINDOW`]: ten is more than a person mistyping makes, and keeps guessing to two a minute.
pub const MAX_FAILURES_PER_LOGIN: u32 = 10;

/// Failed attempts from one client address (an IPv6 address counts by its /64, which one host usually
/// holds whole) within [`FAILURE_WINDOW`], whatever the logins: room for an office behind one address.
pub const MAX_FAILURES_PER_CLIENT: u32 = 30;

/// Logins (and, apart, addresses) tracked at once. Past it, expired windows are dropped, then the oldest: the
/// logins' table stays under 5 MiB even with the longest keys ([`MAX_LOGIN_KEY_CHARS`] characters).
pub const MAX_TRACKED_KEYS: usize = 4_096;

/// Characters of a login kept as its key: the longest e-mail address; no login is longer, so a longer one
/// only shares its key with other impossible ones.
pub const MAX_LOGIN_KEY_CHARS: usize = 254;

/// The failed sign-ins of this process (see the module's documentation).
pub struct SignInThrottle {
    failures: Mutex<Failures>,
}

struct Failures {
    by_login: FailureTable<String>,
    by_client: FailureTable<IpAddr>,
}

/// The failure windows of one kind of key.
struct FailureTable<K> {
    windows: HashMap<K, Window>,
    max_failures: u32,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

impl Window {
    fn expired(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.started) >= FAILURE_WINDOW
    }
}

impl<K: Hash + Eq + Clone> FailureTable<K> {
    fn new(max_failures: u32) -> Self {
        FailureTable {
            windows: HashMap::new(),
            max_failures,
        }
    }

    /// How long `key` must still wait, if it has used up its failures.
    fn wait(&self, key: &K, now: Instant) -> Option<Duration> {
        let window = self.windows.get(key)?;
        if window.expired(now) || window.failures < self.max_failures {
            return None;
        }
        Some((window.started + FAILURE_WINDOW).saturating_duration_since(now))
    }

    fn record_failure(&mut self, key: K, now: Instant) {
        if !self.windows.contains_key(&key) && self.windows.len() >= MAX_TRACKED_KEYS {
            self.make_room(now);
        }
        let window = self.windows.entry(key).or_insert(Window {
            started: now,
            failures: 0,
        });
        if window.expired(now) {
            *window = Window {
                started: now,
                failures: 0,
            };
        }
        window.failures = window.failures.saturating_add(1);
    }

    /// Drops the expired windows, or else the oldest one.
    fn make_room(&mut self, now: Instant) {
        self.windows.retain(|_, window| !window.expired(now));
        if self.windows.len() < MAX_TRACKED_KEYS {
            return;
        }
        let oldest = self
            .windows
            .iter()
            .min_by_key(|(_, window)| window.started)
            .map(|(key, _)| key.clone());
        if let Some(oldest) = oldest {
            self.windows.remove(&oldest);
        }
    }
}

impl Default for SignInThrottle {
    fn default() -> Self {
        SignInThrottle {
            failures: Mutex::new(Failures {
                by_login: FailureTable::new(MAX_FAILURES_PER_LOGIN),
                by_client: FailureTable::new(MAX_FAILURES_PER_CLIENT),
            }),
        }
    }
}

fn too_many_failures(wait: Duration) -> ApiError {
    ApiError::rate_limited("Too many failed sign-in attempts; try again later", wait)
}

impl SignInThrottle {
    /// 429 if `login` or `client` has used up its failed attempts.
    pub fn check(&self, login: &str, client: Option<IpAddr>, now: Instant) -> Result<(), ApiError> {
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let by_login = failures.by_login.wait(&login_key(login), now);
        let by_client = client.and_then(|ip| failures.by_client.wait(&client_key(ip), now));
        match by_login.max(by_client) {
            Some(wait) => Err(too_many_failures(wait)),
            None => Ok(()),
        }
    }

    /// Counts a failed attempt against `login` and `client`.
    pub fn record_failure(&self, login: &str, client: Option<IpAddr>, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.by_login.record_failure(login_key(login), now);
        if let Some(ip) = client {
            failures.by_client.record_failure(client_key(ip), now);
        }
    }

    /// Forgets the failed attempts on `login` (not those of the address: a success does not vouch for the
    /// others tried from it).
    pub fn record_success(&self, login: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.by_login.windows.remove(&login_key(login));
    }
}

/// The key of a login: trimmed, lower-cased (e-mails match whatever their case), at most
/// [`MAX_LOGIN_KEY_CHARS`] characters.
fn login_key(login: &str) -> String {
    login
        .trim()
        .chars()
        .take(MAX_LOGIN_KEY_CHARS)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The key of a client address: an IPv4 address as it is, an IPv6 address by its /64.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn a_login_is_refused_after_its_failures_until_the_window_ends() {
        let throttle = SignInThrottle::default();
        let start = Instant::now();
        for n in 0..MAX_FAILURES_PER_LOGIN {
            // A new address each time: only the login's count is reached.
            let client = ip(&format!("192.0.2.{n}"));
            assert!(throttle.check("Alice ", client, start).is_ok());
            throttle.record_failure("Alice ", client, start);
        }
        let later = start + Duration::from_secs(60);
        let refused = throttle
            .check("alice", ip("198.51.100.1"), later)
            .unwrap_err();
        assert_eq!(refused.kind.status(), 429);
        assert_eq!(refused.retry_after_secs, Some(240));
        assert!(throttle.check("bob", ip("198.51.100.1"), later).is_ok());
        assert!(throttle
            .check("alice", None, start + FAILURE_WINDOW)
            .is_ok());
    }

    #[test]
    fn an_address_is_refused_after_its_failures_whatever_the_login() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for n in 0..MAX_FAILURES_PER_CLIENT {
            throttle.record_failure(&format!("user-{n}"), ip("2001:db8::1"), now);
        }
        // The same /64.
        let refused = throttle
            .check("someone", ip("2001:db8::ffff"), now)
            .unwrap_err();
        assert_eq!(refused.retry_after_secs, Some(FAILURE_WINDOW.as_secs()));
        assert!(throttle
            .check("someone", ip("2001:db8:0:1::1"), now)
            .is_ok());
        assert!(throttle.check("someone", None, now).is_ok());
    }

    #[test]
    fn a_success_forgets_the_login_s_failures() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..MAX_FAILURES_PER_LOGIN {
            throttle.record_failure("carol", None, now);
        }
        assert!(throttle.check("carol", None, now).is_err());
        throttle.record_success("Carol");
        assert!(throttle.check("carol", None, now).is_ok());
    }

    #[test]
    fn the_tables_stay_bounded() {
        let throttle = SignInThrottle::default();
        let start = Instant::now();
        for n in 0..MAX_TRACKED_KEYS + 100 {
            let at = start + Duration::from_millis(n as u64);
            throttle.record_failure(&format!("{n}-{}", "x".repeat(1_000)), None, at);
        }
        let failures = throttle.failures.lock().unwrap();
        assert_eq!(failures.by_login.windows.len(), MAX_TRACKED_KEYS);
        assert!(failures
            .by_login
            .windows
            .keys()
            .all(|key| key.chars().count() <= MAX_LOGIN_KEY_CHARS));
        // The oldest went first.
        assert!(!failures
            .by_login
            .windows
            .keys()
            .any(|key| key.starts_with("0-")));
    }
}
