//! Time as the control plane keeps it: a [`Timestamp`] (an instant to the millisecond, written as RFC 3339
//! UTC text) and the [`Clock`] the usage metrics read.

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// A source of the current time in Unix milliseconds: the metrics views' windows are relative to it, and
/// tests inject their own.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// An instant, to the millisecond. Its text form is RFC 3339 in UTC with exactly three fractional digits
/// (`2026-11-23T10:00:00.000Z`), so that the text order of stored timestamps is their time order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

/// Text that is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimestampError(String);

impl Timestamp {
    /// 1970-01-01T00:00:00.000Z.
    pub const EPOCH: Timestamp = Timestamp(DateTime::<Utc>::UNIX_EPOCH);

    /// Now, to the millisecond.
    pub fn now() -> Timestamp {
        let now = Utc::now();
        Timestamp::from_millis(now.timestamp_millis()).unwrap_or(Timestamp(now))
    }

    /// Any RFC 3339 date-time (any offset, any precision), kept to the millisecond.
    pub fn parse(text: &str) -> Result<Timestamp, TimestampError> {
        let parsed = DateTime::parse_from_rfc3339(text.trim())
            .map_err(|error| TimestampError(error.to_string()))?;
        Timestamp::from_millis(parsed.timestamp_millis())
            .ok_or_else(|| TimestampError(format!("{text} is out of range")))
    }

    /// The instant `ms` milliseconds after the Unix epoch, if representable.
    pub fn from_millis(ms: i64) -> Option<Timestamp> {
        DateTime::from_timestamp_millis(ms).map(Timestamp)
    }

    /// Milliseconds since the Unix epoch.
    pub fn millis(self) -> i64 {
        self.0.timestamp_millis()
    }

    /// This instant plus `minutes` (saturating at the end of time).
    pub fn plus_minutes(self, minutes: i64) -> Timestamp {
        TimeDelta::try_minutes(minutes)
            .and_then(|delta| self.0.checked_add_signed(delta))
            .map_or(self, Timestamp)
    }

    /// This instant plus `hours` (saturating at the end of time).
    pub fn plus_hours(self, hours: i64) -> Timestamp {
        TimeDelta::try_hours(hours)
            .and_then(|delta| self.0.checked_add_signed(delta))
            .map_or(self, Timestamp)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_utc_with_milliseconds_and_orders_like_time() {
        let a = Timestamp::parse("2026-11-23T11:00:00.1234+01:00").unwrap();
        assert_eq!(a.to_string(), "2026-11-23T10:00:00.123Z");
        let b = Timestamp::parse("2026-11-23T10:00:00Z").unwrap();
        assert_eq!(b.to_string(), "2026-11-23T10:00:00.000Z");
        assert!(b < a && b.to_string() < a.to_string());
        assert_eq!(b.plus_hours(48).to_string(), "2026-11-25T10:00:00.000Z");
        assert_eq!(Timestamp::from_millis(b.millis()), Some(b));
        assert!(Timestamp::parse("yesterday").is_err());
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"2026-11-23T10:00:00.123Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), a);
    }

    #[test]
    fn now_is_whole_milliseconds() {
        let now = Timestamp::now();
        assert_eq!(Timestamp::from_millis(now.millis()), Some(now));
    }
}
