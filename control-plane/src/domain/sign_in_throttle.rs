//! Failed sign-ins, counted over [`FAILURE_WINDOW`] per client address, per login, and per login from each
//! address. An address with [`MAX_FAILURES_PER_CLIENT`] failures is turned away whatever the login. A login
//! with [`MAX_FAILURES_PER_LOGIN`] failures (from anywhere) is locked, but only for the addresses that have
//! failed on it themselves in their window: from any other address its password is still checked, so
//! strangers guessing a login cannot keep its owner out, and each address they add gets one more guess at
//! it per window, not ten. Turned away is 429 `RateLimitError` with `Retry-After` (when the first window that
//! would let the attempt through ends), before any password work (whose concurrency and memory `passwords`
//! bounds).
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
/// [`FAILURE_WINDOW`], from any addresses, after which the login is locked for the addresses that failed on
/// it: ten is more than a person mistyping makes, and keeps guessing from one place to two a minute.
pub const MAX_FAILURES_PER_LOGIN: u32 = 10;

/// Failed attempts from one client address (an IPv6 address counts by its /64, which one host usually
/// holds whole) within [`FAILURE_WINDOW`], whatever the logins: room for an office behind one address.
pub const MAX_FAILURES_PER_CLIENT: u32 = 30;

/// Keys tracked at once in each table (logins, addresses, login-and-address pairs). Past it, expired windows
/// are dropped, then the oldest: a login table stays under 5 MiB even with the longest keys
/// ([`MAX_LOGIN_KEY_CHARS`] characters).
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
    /// A login's failures from one address: whether that address may still try the login once it is locked.
    by_login_and_client: FailureTable<(String, IpAddr)>,
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

    fn remaining(&self, now: Instant) -> Duration {
        (self.started + FAILURE_WINDOW).saturating_duration_since(now)
    }
}

impl<K: Hash + Eq + Clone> FailureTable<K> {
    fn new(max_failures: u32) -> Self {
        FailureTable {
            windows: HashMap::new(),
            max_failures,
        }
    }

    /// The live window of `key`, if it has failed within [`FAILURE_WINDOW`].
    fn live(&self, key: &K, now: Instant) -> Option<Window> {
        self.windows
            .get(key)
            .copied()
            .filter(|window| !window.expired(now) && window.failures > 0)
    }

    /// How long `key` must still wait, if it has used up its failures.
    fn wait(&self, key: &K, now: Instant) -> Option<Duration> {
        self.live(key, now)
            .filter(|window| window.failures >= self.max_failures)
            .map(|window| window.remaining(now))
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
                // Any failure on a locked login counts: the limit that matters is the login's.
                by_login_and_client: FailureTable::new(1),
            }),
        }
    }
}

fn too_many_failures(wait: Duration) -> ApiError {
    ApiError::rate_limited("Too many failed sign-in attempts; try again later", wait)
}

impl Failures {
    /// How long an attempt on `login` from `client` must wait, if it must: the address has used up its
    /// failures, or the login has and this address failed on it too (an unknown address counts as one that
    /// failed). It passes again when the first of the windows that hold it ends.
    fn wait(&self, login: &str, client: Option<IpAddr>, now: Instant) -> Option<Duration> {
        let login = login_key(login);
        let by_client = client.and_then(|ip| self.by_client.wait(&client_key(ip), now));
        let by_login = self.by_login.wait(&login, now).and_then(|login_wait| {
            let Some(ip) = client else {
                return Some(login_wait);
            };
            self.by_login_and_client
                .wait(&(login, client_key(ip)), now)
                .map(|pair_wait| pair_wait.min(login_wait))
        });
        by_login.max(by_client)
    }
}

impl SignInThrottle {
    /// 429 if `client` has used up its failed attempts, or `login` has and `client` failed on it too.
    pub fn check(&self, login: &str, client: Option<IpAddr>, now: Instant) -> Result<(), ApiError> {
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        match failures.wait(login, client, now) {
            Some(wait) => Err(too_many_failures(wait)),
            None => Ok(()),
        }
    }

    /// Counts a failed attempt against `login`, `client`, and `login` from `client`.
    pub fn record_failure(&self, login: &str, client: Option<IpAddr>, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let login = login_key(login);
        if let Some(ip) = client {
            let ip = client_key(ip);
            failures.by_client.record_failure(ip, now);
            failures
                .by_login_and_client
                .record_failure((login.clone(), ip), now);
        }
        failures.by_login.record_failure(login, now);
    }

    /// Forgets the failed attempts on `login` from `client` (not the login's count from elsewhere: its owner
    /// signing in does not unlock it for the addresses guessing it; nor the address's on other logins: a
    /// success does not vouch for the others tried from it). Without an address, the login's count.
    pub fn record_success(&self, login: &str, client: Option<IpAddr>) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let login = login_key(login);
        match client {
            Some(ip) => {
                failures
                    .by_login_and_client
                    .windows
                    .remove(&(login, client_key(ip)));
            }
            None => {
                failures.by_login.windows.remove(&login);
            }
        }
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
    fn a_locked_login_refuses_the_addresses_that_failed_on_it_until_their_window_ends() {
        let throttle = SignInThrottle::default();
        let start = Instant::now();
        for n in 0..MAX_FAILURES_PER_LOGIN {
            // A new address each time: only the login's count is reached.
            let client = ip(&format!("192.0.2.{n}"));
            assert!(throttle.check("Alice ", client, start).is_ok());
            throttle.record_failure("Alice ", client, start);
        }
        let later = start + Duration::from_secs(60);
        let refused = throttle.check("alice", ip("192.0.2.3"), later).unwrap_err();
        assert_eq!(refused.kind.status(), 429);
        assert_eq!(refused.retry_after_secs, Some(240));
        // An address that has not failed on it may still try it; an unknown one may not.
        assert!(throttle.check("alice", ip("198.51.100.1"), later).is_ok());
        assert!(throttle.check("alice", None, later).is_err());
        assert!(throttle.check("bob", ip("192.0.2.3"), later).is_ok());
        assert!(throttle
            .check("alice", ip("192.0.2.3"), start + FAILURE_WINDOW)
            .is_ok());
        // Each new address gets one guess while the login stays locked.
        throttle.record_failure("alice", ip("198.51.100.1"), later);
        assert!(throttle.check("alice", ip("198.51.100.1"), later).is_err());
    }

    #[test]
    fn one_address_gets_the_login_s_failures_and_no_more() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..MAX_FAILURES_PER_LOGIN {
            assert!(throttle.check("dave", ip("192.0.2.1"), now).is_ok());
            throttle.record_failure("dave", ip("192.0.2.1"), now);
        }
        assert!(throttle.check("dave", ip("192.0.2.1"), now).is_err());
        assert!(throttle.check("dave", ip("192.0.2.2"), now).is_ok());
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
    fn a_success_forgets_the_failures_of_its_address_on_the_login() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for n in 0..MAX_FAILURES_PER_LOGIN {
            let client = ip(&format!("192.0.2.{}", n % 2));
            throttle.record_failure("carol", client, now);
        }
        assert!(throttle.check("carol", ip("192.0.2.0"), now).is_err());
        throttle.record_success("Carol", ip("192.0.2.0"));
        assert!(throttle.check("carol", ip("192.0.2.0"), now).is_ok());
        // The login stays locked for the other address that failed on it.
        assert!(throttle.check("carol", ip("192.0.2.1"), now).is_err());
        throttle.record_success("carol", None);
        assert!(throttle.check("carol", ip("192.0.2.1"), now).is_ok());
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
