//! What the flag list and a flag's page say of a flag at a glance: per environment what it serves in a few
//! words ("50% · 2 constraints", from [`served_summary`]) with a "change pending" badge that links to the
//! change request waiting there, and who changed the flag last and when.

use super::controls::{ago, when};
use super::session::SignedIn;
use super::vocabulary::{served_summary, StrategyNames};
use crate::domain::flag_summaries::LastChange;
use crate::domain::strategies::Strategy;
use maud::{html, Markup};

/// A flag in one environment, as its summary line needs it.
pub struct Served<'a> {
    pub project: &'a str,
    pub flag: &'a str,
    pub environment: &'a str,
    pub enabled: bool,
    pub strategies: &'a [Strategy],
    /// The change requests waiting to change the flag here, oldest first.
    pub pending: &'a [i64],
}

impl Served<'_> {
    /// The summary line, then the badge when a change request waits (its text says where, for screen
    /// readers).
    pub fn markup(&self, who: &SignedIn, names: &StrategyNames) -> Markup {
        let summary = served_summary(names, self.enabled, self.strategies);
        html! {
            span.served { (summary) }
            (self.pending_badge(who))
        }
    }

    fn pending_badge(&self, who: &SignedIn) -> Markup {
        let requests = who.link(&format!("/projects/{}/change-requests", self.project));
        html! {
            @match self.pending {
                [] => {}
                [id] => {
                    a.badge.pending href=(format!("{requests}/{id}")) {
                        "change pending"
                        span.sr-only { " (change request #" (id) " for " (self.flag) " in " (self.environment) ")" }
                    }
                }
                many => {
                    a.badge.pending href=(requests) {
                        (many.len()) " changes pending"
                        span.sr-only { " (change requests for " (self.flag) " in " (self.environment) ")" }
                    }
                }
            }
        }
    }
}

/// "anna · 3 minutes ago", the exact time in the `<time>`'s title; "–" for a flag without events.
pub fn last_changed(change: Option<&LastChange>, now_ms: i64) -> Markup {
    html! {
        @match change {
            Some(change) => {
                span.change {
                    span.changed-by { (change.by) } " · "
                    time datetime=(change.at.to_string()) title=(when(&change.at.to_string())) {
                        (ago(change.at.millis(), now_ms))
                    }
                }
            }
            None => { span.muted { "–" } }
        }
    }
}
