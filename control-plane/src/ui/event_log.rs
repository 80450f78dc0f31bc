//! The readable form of audit events, shared by a flag's page and the event log (`/history`): grouped by day
//! ("Today", "Yesterday", then dates), each event one line a person reads (`event_sentence`: who did what,
//! where) with how long ago, and what it changed (`diff`) behind a disclosure.

use super::controls::{ago, when};
use super::diff::changes;
use super::event_sentence::{sentence, Context};
use crate::domain::events::Event;
use chrono::{DateTime, NaiveDate, Utc};
use maud::{html, Markup};

/// The level of the day headings: under the page's `h1` (the event log) or a section's `h2` (a flag's page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayHeading {
    H2,
    H3,
}

/// Events (newest first) by day, each day a heading and an ordered list of its events.
pub fn event_days(events: &[Event], context: &Context, heading: DayHeading) -> Markup {
    let now = Utc::now();
    let mut days: Vec<(Option<NaiveDate>, Vec<&Event>)> = Vec::new();
    for event in events {
        let day = parse(&event.created_at).map(|at| at.date_naive());
        match days.last_mut() {
            Some((last, events)) if *last == day => events.push(event),
            _ => days.push((day, vec![event])),
        }
    }
    html! {
        div.event-log {
            @for (index, (day, events)) in days.iter().enumerate() {
                @let id = format!("events-day-{}", day.map_or(index.to_string(), |day| day.to_string()));
                @let title = day_title(*day, now.date_naive());
                section.event-day aria-labelledby=(id) {
                    @if heading == DayHeading::H2 { h2.day #(id) { (title) } } @else { h3.day #(id) { (title) } }
                    ol.events aria-labelledby=(id) {
                        @for event in events { (event_item(event, context, now)) }
                    }
                }
            }
        }
    }
}

fn parse(rfc3339: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

/// "Today", "Yesterday", "Monday 23 November", or with the year when it is not this year's.
fn day_title(day: Option<NaiveDate>, today: NaiveDate) -> String {
    let Some(day) = day else {
        return "Unknown day".to_owned();
    };
    if day == today {
        "Today".to_owned()
    } else if today.pred_opt() == Some(day) {
        "Yesterday".to_owned()
    } else if day.format("%Y").to_string() == today.format("%Y").to_string() {
        day.format("%A %-d %B").to_string()
    } else {
        day.format("%A %-d %B %Y").to_string()
    }
}

/// One event: its sentence and how long ago (the exact time in the `<time>`), then what it changed behind
/// "Show the change" (described by the sentence, for who tabs from one to the next).
fn event_item(event: &Event, context: &Context, now: DateTime<Utc>) -> Markup {
    let line = format!("event-{}", event.id);
    let ago = parse(&event.created_at).map_or_else(
        || event.created_at.clone(),
        |at| ago(at.timestamp_millis(), now.timestamp_millis()),
    );
    html! {
        li.event {
            p.event-line #(line) {
                span.event-what { (sentence(event, context)) }
                " "
                time.event-time datetime=(event.created_at) title=(when(&event.created_at)) { (ago) }
            }
            @if let Some(list) = changes(event.pre_data.as_ref(), event.data.as_ref()) {
                details.event-change {
                    summary aria-describedby=(line) { "Show the change" }
                    (list)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::day_title;
    use chrono::NaiveDate;

    #[test]
    fn days_are_named_as_people_say_them() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        let day = |m, d| NaiveDate::from_ymd_opt(2026, m, d);
        assert_eq!(day_title(Some(today), today), "Today");
        assert_eq!(day_title(day(11, 24), today), "Yesterday");
        assert_eq!(day_title(day(11, 23), today), "Monday 23 November");
        assert_eq!(
            day_title(NaiveDate::from_ymd_opt(2025, 1, 2), today),
            "Thursday 2 January 2025"
        );
        assert_eq!(day_title(None, today), "Unknown day");
    }
}
