//! A flag's usage (`/projects/<project>/features/<flag>/metrics`, Unleash's URL): per environment, the SDKs'
//! yes/no counts per hour over the last 48 hours as a server-rendered SVG bar chart (no script), with its totals
//! as text and the hours behind it in a table; beside them, what edges served of the flag to frontend and OFREP
//! clients. The SDKs' numbers are `metrics::feature_usage`'s, the rows of
//! `GET /api/admin/client-metrics/features/<flag>`, summed over applications; the edges' are
//! `metrics::feature_served`'s. The two are never added up: a browser SDK that reports its own counts through
//! `/api/frontend/client/metrics` was also served by an edge.

use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::features;
use crate::domain::metrics::{self, FeatureHour, ServedHour, HOUR_MS, MINUTE_BUCKETS_KEPT_MS};
use crate::http::state::AppState;
use crate::time::Timestamp;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/projects/{project}/features/{feature}/metrics", get(page))
}

/// The chart's drawing box (SVG user units; the chart scales to its container).
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 44.0;

/// One hour's counts in one environment, summed over applications.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct HourCounts {
    yes: i64,
    no: i64,
}

/// One environment's hours (start of the hour, Unix ms → counts) and the applications that reported there.
#[derive(Debug, Default)]
struct EnvironmentUsage {
    hours: BTreeMap<i64, HourCounts>,
    applications: BTreeSet<String>,
}

impl EnvironmentUsage {
    fn totals(&self) -> HourCounts {
        self.hours
            .values()
            .fold(HourCounts::default(), |sum, hour| HourCounts {
                yes: sum.yes.saturating_add(hour.yes),
                no: sum.no.saturating_add(hour.no),
            })
    }
}

/// The API's rows (per hour, application, environment) summed per environment and hour.
fn per_environment(rows: &[FeatureHour]) -> BTreeMap<String, EnvironmentUsage> {
    let mut environments: BTreeMap<String, EnvironmentUsage> = BTreeMap::new();
    for row in rows {
        let Ok(hour) = Timestamp::parse(&row.timestamp) else {
            continue;
        };
        let usage = environments.entry(row.environment.clone()).or_default();
        usage.applications.insert(row.app_name.clone());
        let counts = usage.hours.entry(hour.millis()).or_default();
        counts.yes = counts.yes.saturating_add(row.yes);
        counts.no = counts.no.saturating_add(row.no);
    }
    environments
}

/// The edges' evaluations per environment and hour (on counted as yes, off as no).
fn served_per_environment(rows: &[ServedHour]) -> BTreeMap<String, EnvironmentUsage> {
    let mut environments: BTreeMap<String, EnvironmentUsage> = BTreeMap::new();
    for row in rows {
        let usage = environments.entry(row.environment.clone()).or_default();
        let counts = usage.hours.entry(row.hour_ms).or_default();
        counts.yes = counts.yes.saturating_add(row.enabled);
        counts.no = counts.no.saturating_add(row.disabled);
    }
    environments
}

/// What one environment's card shows: the SDKs' reports and the edges' evaluations.
#[derive(Debug, Default)]
struct EnvironmentCard {
    reported: EnvironmentUsage,
    served: EnvironmentUsage,
}

/// The hours the chart shows: from the first hour `feature_usage` reads to the current one.
fn hours_shown(now_ms: i64) -> Vec<i64> {
    let first = now_ms - MINUTE_BUCKETS_KEPT_MS;
    let first = first - first.rem_euclid(HOUR_MS);
    let last = now_ms - now_ms.rem_euclid(HOUR_MS);
    (0..)
        .map(|index| first + index * HOUR_MS)
        .take_while(|hour| *hour <= last)
        .collect()
}

/// A round top for the y axis: four equal steps of 1, 2, 2.5 or 5 × 10ⁿ (whole numbers) that reach `max`.
fn axis_step(max: i64) -> i64 {
    let quarter = (max.max(1) - 1) / 4 + 1;
    let mut scale: i64 = 1;
    loop {
        for factor in [10, 20, 25, 50] {
            let step = scale.saturating_mul(factor) / 10;
            if step >= 1 && step >= quarter && (factor != 25 || scale >= 10) {
                return step;
            }
        }
        if scale > i64::MAX / 10 {
            return quarter;
        }
        scale *= 10;
    }
}

/// A coordinate to a tenth of a unit, so the markup holds `64.4`, not `64.39999999999999`.
fn tenth(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn hour_text(hour_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(hour_ms)
        .map(|at| at.format("%Y-%m-%d %H:00 UTC").to_string())
        .unwrap_or_default()
}

fn plural(count: i64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The chart of one environment: stacked bars (yes below, no above) per hour, y axis with four steps, the
/// hour of day every 6 hours on the x axis (with the date at midnight). `role="img"` with a title and a
/// description holding the totals; each bar's own title gives its hour and counts.
/// `id` prefixes the ids of the title and description (environment names an SDK reports may hold spaces).
fn chart(
    id: &str,
    (series, flag, environment): (&str, &str, &str),
    usage: &EnvironmentUsage,
    hours: &[i64],
) -> Markup {
    let totals = usage.totals();
    let max = hours
        .iter()
        .filter_map(|hour| usage.hours.get(hour))
        .map(|counts| counts.yes.saturating_add(counts.no))
        .max()
        .unwrap_or(0);
    let step = axis_step(max);
    let top = step.saturating_mul(4) as f64;
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let slot = plot_width / hours.len().max(1) as f64;
    let bar = tenth((slot * 0.7).max(1.0));
    let y = |value: i64| tenth(TOP + plot_height - (value as f64 / top) * plot_height);
    html! {
        svg.usage-chart viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img"
            aria-labelledby=(format!("{id}-title {id}-desc")) preserveAspectRatio="xMidYMid meet" {
            title id=(format!("{id}-title")) { (series) " " (flag) " in " (environment) ", per hour" }
            desc id=(format!("{id}-desc")) {
                "Last 48 hours: " (totals.yes) " yes and " (totals.no) " no"
                ", in " (plural(usage.hours.len() as i64, "hour", "hours")) " with counts."
            }
            g.axis {
                @for tick in 0..=4_i64 {
                    @let value = step.saturating_mul(tick);
                    line.grid x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y(value)) y2=(y(value)) {}
                    text.tick x=(LEFT - 6.0) y=(tenth(y(value) + 4.0)) text-anchor="end" { (value) }
                }
                @for (index, hour) in hours.iter().enumerate() {
                    @let hour_of_day = hour.rem_euclid(24 * HOUR_MS) / HOUR_MS;
                    @if hour_of_day % 6 == 0 {
                        @let x = tenth(LEFT + slot * (index as f64 + 0.5));
                        line.tick-mark x1=(x) x2=(x) y1=(y(0)) y2=(tenth(y(0) + 4.0)) {}
                        text.tick x=(x) y=(TOP + plot_height + 18.0) text-anchor="middle" {
                            (format!("{hour_of_day:02}:00"))
                        }
                        @if hour_of_day == 0 {
                            text.tick x=(x) y=(TOP + plot_height + 34.0) text-anchor="middle" {
                                (chrono::DateTime::from_timestamp_millis(*hour).map(|at| at.format("%b %d").to_string()).unwrap_or_default())
                            }
                        }
                    }
                }
            }
            @for (index, hour) in hours.iter().enumerate() {
                @if let Some(counts) = usage.hours.get(hour) {
                    @let x = tenth(LEFT + slot * index as f64 + (slot - bar) / 2.0);
                    @let total = counts.yes.saturating_add(counts.no);
                    g {
                        title { (hour_text(*hour)) ": " (counts.yes) " yes, " (counts.no) " no" }
                        rect.bar-yes x=(x) width=(bar) y=(y(counts.yes)) height=(tenth(y(0) - y(counts.yes))) {}
                        rect.bar-no x=(x) width=(bar) y=(y(total)) height=(tenth(y(counts.yes) - y(total))) {}
                    }
                }
            }
            line.baseline x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y(0)) y2=(y(0)) {}
        }
    }
}

/// `GET /projects/<project>/features/<flag>/metrics`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let now_ms = (state.clock)();
    let (flag, usage, served) = async {
        let flag = {
            let mut conn = state.store.read().await?;
            features::get(&mut conn, &project, &feature).await?
        };
        let usage = metrics::feature_usage(&state.store, &feature, now_ms).await?;
        let served = metrics::feature_served(&state.store, &feature, now_ms).await?;
        Ok::<_, ApiError>((flag, usage, served))
    }
    .await?;
    let mut reported = per_environment(&usage.data);
    let mut served = served_per_environment(&served);
    let mut shown: Vec<(String, EnvironmentCard)> = flag
        .environments
        .iter()
        .map(|environment| {
            let card = EnvironmentCard {
                reported: reported.remove(&environment.name).unwrap_or_default(),
                served: served.remove(&environment.name).unwrap_or_default(),
            };
            (environment.name.clone(), card)
        })
        .collect();
    // Environments an SDK reported (or an edge served) that the flag's project does not have: shown too,
    // after the others.
    let mut others: BTreeMap<String, EnvironmentCard> = BTreeMap::new();
    for (environment, usage) in reported {
        others.entry(environment).or_default().reported = usage;
    }
    for (environment, usage) in served {
        others.entry(environment).or_default().served = usage;
    }
    shown.extend(others);
    let hours = hours_shown(now_ms);
    let flag_page = who.link(&format!("/projects/{project}/features/{feature}"));
    let counted = shown
        .iter()
        .any(|(_, card)| !card.reported.hours.is_empty() || !card.served.hours.is_empty());
    let markup = shell.render(
        &format!("Usage of {feature}"),
        html! {
            p { a href=(flag_page) { "← Flag " (feature) } }
            div.page-head {
                div {
                    h1 { "Usage" }
                    p.subtitle {
                        "What SDKs reported for " strong { (feature) } ", and what edges served of it to browsers "
                        "and apps (frontend API, OFREP), per hour over the last 48 hours, per environment (times in UTC)."
                    }
                }
            }
            @if !counted {
                div.empty {
                    p { "No usage counted for this flag in the last 48 hours." }
                    p { "Server SDKs report their yes/no counts to an edge or to the control plane with a client token; browsers and apps asking an edge's frontend API or OFREP are counted by the edge. Either shows here within a minute or two." }
                }
            } @else {
                ul.legend aria-label="Legend" {
                    li { span.swatch.yes {} "yes: the flag was on" }
                    li { span.swatch.no {} "no: the flag was off" }
                }
                @for (index, (environment, card)) in shown.iter().enumerate() {
                    section.card aria-labelledby=(format!("usage-env-{index}")) {
                        div.card-head {
                            h2 id=(format!("usage-env-{index}")) { (environment) }
                        }
                        @if card.reported.hours.is_empty() && card.served.hours.is_empty() {
                            p.muted { "Nothing counted in " (environment) " in the last 48 hours." }
                        }
                        @if !card.reported.hours.is_empty() {
                            (series(&who, SeriesKind::Reported, index, (&feature, environment), &card.reported, &hours))
                        }
                        @if !card.served.hours.is_empty() {
                            (series(&who, SeriesKind::Served, index, (&feature, environment), &card.served, &hours))
                        }
                        @if !card.reported.hours.is_empty() && !card.served.hours.is_empty() {
                            p.muted {
                                "The two are not added up: a browser SDK that reports its own counts is in both."
                            }
                        }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// Which of an environment's two series a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeriesKind {
    /// The SDKs' own yes/no reports.
    Reported,
    /// The edges' frontend and OFREP evaluations.
    Served,
}

/// One series of an environment's card: its heading with the totals, the chart, who counted, the numbers.
fn series(
    who: &SignedIn,
    kind: SeriesKind,
    index: usize,
    (feature, environment): (&str, &str),
    usage: &EnvironmentUsage,
    hours: &[i64],
) -> Markup {
    let (id, heading, title) = match kind {
        SeriesKind::Reported => (
            format!("usage-chart-{index}"),
            "Reported by SDKs",
            "SDK counts of",
        ),
        SeriesKind::Served => (
            format!("served-chart-{index}"),
            "Served by edges to browsers and apps",
            "Edge evaluations of",
        ),
    };
    let totals = usage.totals();
    html! {
        div.usage-series {
            h3.usage-series-head {
                (heading) " "
                span.usage-totals { strong { (totals.yes) } " yes · " strong { (totals.no) } " no" }
            }
            div.chart-wrap tabindex="0" role="group" aria-label=(format!("{heading}: chart of {environment}, scrolls sideways on narrow screens")) {
                (chart(&id, (title, feature, environment), usage, hours))
            }
            @match kind {
                SeriesKind::Reported => p.muted {
                    "Reported by "
                    @for (index, application) in usage.applications.iter().enumerate() {
                        @if index > 0 { ", " }
                        a href=(who.link(&format!("/applications/{}", metrics::path_segment(application)))) { (application) }
                    }
                    "."
                },
                SeriesKind::Served => p.muted {
                    "Counted by the edges as they answered the frontend API and OFREP ("
                    a href=(who.link("/edges")) { "Edges" } ")."
                },
            }
            details {
                summary { "Show the numbers" }
                div.table-wrap {
                    table {
                        caption.skip { (heading) " per hour in " (environment) "; hours with no count are left out" }
                        thead { tr {
                            th scope="col" { "Hour (UTC)" }
                            th scope="col" { "Yes" }
                            th scope="col" { "No" }
                        } }
                        tbody {
                            @for (hour, counts) in usage.hours.iter().rev() {
                                tr {
                                    td { (hour_text(*hour)) }
                                    td { (counts.yes) }
                                    td { (counts.no) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_y_axis_takes_four_round_steps() {
        assert_eq!(axis_step(0), 1);
        assert_eq!(axis_step(3), 1);
        assert_eq!(axis_step(5), 2);
        assert_eq!(axis_step(10), 5);
        assert_eq!(axis_step(100), 25);
        assert_eq!(axis_step(1000), 250);
        assert_eq!(axis_step(1001), 500);
        assert!(axis_step(i64::MAX).saturating_mul(4) >= i64::MAX / 2);
    }

    #[test]
    fn the_chart_covers_the_hours_feature_usage_reads() {
        let now = 100 * HOUR_MS + 30 * 60_000;
        let hours = hours_shown(now);
        assert_eq!(hours.first(), Some(&(52 * HOUR_MS)));
        assert_eq!(hours.last(), Some(&(100 * HOUR_MS)));
        assert_eq!(hours.len(), 49);
    }

    #[test]
    fn rows_are_summed_per_environment_and_hour() {
        let row = |app: &str, environment: &str, hour: &str, yes, no| FeatureHour {
            feature_name: "f".to_owned(),
            app_name: app.to_owned(),
            environment: environment.to_owned(),
            timestamp: hour.to_owned(),
            yes,
            no,
        };
        let summed = per_environment(&[
            row("a", "development", "2026-11-24T10:00:00.000Z", 3, 1),
            row("b", "development", "2026-11-24T10:00:00.000Z", 2, 0),
            row("a", "production", "2026-11-24T11:00:00.000Z", 0, 7),
        ]);
        let development = &summed["development"];
        assert_eq!(development.totals(), HourCounts { yes: 5, no: 1 });
        assert_eq!(development.applications.len(), 2);
        assert_eq!(summed["production"].totals(), HourCounts { yes: 0, no: 7 });
    }
}
