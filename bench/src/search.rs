//! Search benchmark (BENCHMARKS.md): `GET /api/admin/search/features` over 5,000 flags and
//! `GET /api/admin/search/events` over 100,000 events, against the release control plane, on SQLite or
//! Postgres.
//!
//! 1. Seeds the database (when it holds no flag yet) in this process through the control plane's own domain
//!    functions, each call in a `WriteTx` as the admin API's handlers make it, so the rows and events are
//!    those the API writes: 10 projects, FLAGS flags (5 types, names and descriptions from a word list),
//!    every 2nd on in production, every 3rd in development, every 7th stale, then flags switched off and on in
//!    development until the store holds EVENTS events. 100 calls share a transaction (the API commits
//!    each alone), which only makes seeding faster. Then, as the only write no API makes, it spreads the
//!    creation times of the flags and events evenly over the 365 days before now in creation order (a
//!    year of history instead of one afternoon), so date filters select a part of the data; and on
//!    Postgres it runs `VACUUM ANALYZE` (what autovacuum does after such a load).
//! 2. Starts `vexil-control-plane` (release, `VEXIL_BIN_DIR`, default `target/release`) on the database.
//! 3. Sends each query ROUNDS times, one at a time, after 5 unmeasured ones, and prints the median, p95 and
//!    maximum time to the whole answer, with the answer's total.
//!
//! Usage: search DATABASE_URL [FLAGS=5000] [EVENTS=100000] [ROUNDS=100]

use std::time::Instant;
use vexil_bench::{begin, event_count, flag_name, percentile, ControlPlane, ADMIN, BATCH, WORDS};
use vexil_control_plane::domain::features::{self, CreateFeature, FeatureType, UpdateFeature};
use vexil_control_plane::domain::first_start;
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::domain::projects::{self, CreateProject};
use vexil_control_plane::store::Store;
use vexil_control_plane::time::Timestamp;

const PROJECTS: usize = 10;
fn project(i: usize) -> String {
    if i.is_multiple_of(PROJECTS) {
        "default".to_owned()
    } else {
        format!("team-{}", i % PROJECTS)
    }
}

async fn seed(store: &Store, flags: usize, events: i64) {
    first_start::seed(store).await.expect("first start");
    let limits = Limits {
        feature_flags: u32::try_from(flags)
            .expect("FLAGS fits u32")
            .max(Limits::default().feature_flags),
        ..Limits::default()
    };
    let mut tx = begin(store).await;
    for i in 1..PROJECTS {
        let input = CreateProject {
            id: Some(project(i)),
            name: format!("Team {i}"),
            description: None,
            mode: None,
            default_stickiness: None,
            environments: None,
        };
        projects::create(&mut tx, input, &limits)
            .await
            .expect("project");
    }
    tx.commit().await.expect("commit");
    let types = [
        FeatureType::Release,
        FeatureType::Experiment,
        FeatureType::Operational,
        FeatureType::KillSwitch,
        FeatureType::Permission,
    ];
    for chunk in (0..flags).collect::<Vec<_>>().chunks(BATCH) {
        let mut tx = begin(store).await;
        for &i in chunk {
            let input = CreateFeature {
                name: flag_name(i),
                feature_type: Some(types[i % types.len()]),
                description: Some(format!(
                    "The {} of {} for team {}",
                    WORDS[(i / 3) % WORDS.len()],
                    WORDS[(i / 7) % WORDS.len()],
                    i % PROJECTS
                )),
                impression_data: Some(i % 5 == 0),
                tags: None,
            };
            features::create(&mut tx, &project(i), input, &limits)
                .await
                .expect("flag");
            for (environment, every) in [("production", 2), ("development", 3)] {
                if i % every == 0 {
                    features::set_enabled(
                        &mut tx,
                        &project(i),
                        &flag_name(i),
                        environment,
                        true,
                        false,
                    )
                    .await
                    .expect("switch on");
                }
            }
            if i % 7 == 0 {
                let input = UpdateFeature {
                    name: None,
                    feature_type: None,
                    description: None,
                    stale: Some(true),
                    impression_data: None,
                };
                features::update(&mut tx, &project(i), &flag_name(i), input)
                    .await
                    .expect("stale");
            }
        }
        tx.commit().await.expect("commit");
    }
    // Switch flags off and on in development until there are enough events (one per switch).
    let mut switch = 0usize;
    while event_count(store).await < events {
        let mut tx = begin(store).await;
        for _ in 0..BATCH * 10 {
            let i = switch % flags;
            // The first pass switches each flag away from its seeded state, the next one back, and so on.
            let away = (switch / flags).is_multiple_of(2);
            let on = away != i.is_multiple_of(3);
            features::set_enabled(
                &mut tx,
                &project(i),
                &flag_name(i),
                "development",
                on,
                false,
            )
            .await
            .expect("switch");
            switch += 1;
        }
        tx.commit().await.expect("commit");
    }
}

/// The bench-only write: creation times spread evenly over the year before now, in creation order.
async fn spread_over_a_year(store: &Store, flags: usize) {
    use sqlx::Connection;
    let year_ms: i64 = 365 * 24 * 3600 * 1000;
    let now = Timestamp::now().millis();
    let mut conn = store.read().await.expect("read");
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM events ORDER BY id")
        .fetch_all(&mut *conn)
        .await
        .expect("event ids");
    let mut tx = conn.begin().await.expect("begin");
    let step = year_ms / ids.len().max(1) as i64;
    for (k, id) in ids.iter().enumerate() {
        let at = Timestamp::from_millis(now - year_ms + k as i64 * step).expect("a time");
        sqlx::query("UPDATE events SET created_at = $1 WHERE id = $2")
            .bind(at)
            .bind(*id)
            .execute(&mut *tx)
            .await
            .expect("event time");
    }
    let step = year_ms / flags.max(1) as i64;
    for i in 0..flags {
        let at = Timestamp::from_millis(now - year_ms + i as i64 * step).expect("a time");
        sqlx::query("UPDATE features SET created_at = $1 WHERE name = $2")
            .bind(at)
            .bind(flag_name(i))
            .execute(&mut *tx)
            .await
            .expect("flag time");
    }
    tx.commit().await.expect("commit");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .expect("usage: search DATABASE_URL [FLAGS] [EVENTS] [ROUNDS]");
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let (flags, events, rounds) = (arg(2, 5000), arg(3, 100_000), arg(4, 100));
    let store = Store::connect(&url).await.expect("connect");
    let mut conn = store.read().await.expect("read");
    let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM features")
        .fetch_one(&mut *conn)
        .await
        .expect("count flags");
    drop(conn);
    if existing == 0 {
        let started = Instant::now();
        seed(&store, flags, events as i64).await;
        spread_over_a_year(&store, flags).await;
        if url.starts_with("postgres") {
            let mut conn = store.read().await.expect("read");
            sqlx::query("VACUUM ANALYZE")
                .execute(&mut *conn)
                .await
                .expect("vacuum");
        }
        eprintln!("seeded in {:.1?}", started.elapsed());
    }
    eprintln!("{} events", event_count(&store).await);
    store.close().await;

    let server = ControlPlane::start(&url, flags);
    let http = reqwest::Client::new();
    let (month_from, month_to) = {
        let now = Timestamp::now().millis();
        let day =
            |ms: i64| Timestamp::from_millis(ms).expect("a time").to_string()[..10].to_owned();
        (day(now - 120 * 86_400_000), day(now - 90 * 86_400_000))
    };
    let one_flag = flag_name(1234);
    let queries = [
        "/api/admin/search/features".to_owned(),
        "/api/admin/search/features?query=checkout".to_owned(),
        "/api/admin/search/features?status=production:enabled".to_owned(),
        "/api/admin/search/features?state=IS:stale&type=IS:release".to_owned(),
        "/api/admin/search/features?sortBy=createdAt&sortOrder=desc&offset=2500".to_owned(),
        "/api/admin/search/features?project=IS:team-3&sortBy=name&limit=100".to_owned(),
        format!("/api/admin/search/features?createdAt=IS_ON_OR_AFTER:{month_from}"),
        "/api/admin/search/events".to_owned(),
        "/api/admin/search/events?type=IS:feature-stale-on".to_owned(),
        "/api/admin/search/events?type=IS:feature-environment-disabled&offset=1000".to_owned(),
        format!("/api/admin/search/events?feature=IS:{one_flag}"),
        format!("/api/admin/search/events?from=IS:{month_from}&to=IS:{month_to}"),
        format!("/api/admin/search/events?type=IS:feature-created&from=IS:{month_from}&to=IS:{month_to}"),
        "/api/admin/search/events?createdBy=IS:1&project=IS:team-3".to_owned(),
        "/api/admin/search/events?query=pricing".to_owned(),
    ];
    println!("| query | total | median ms | p95 ms | max ms |");
    println!("|---|---:|---:|---:|---:|");
    for path in queries {
        let mut times = Vec::with_capacity(rounds);
        let mut total = serde_json::Value::Null;
        for round in 0..rounds + 5 {
            let started = Instant::now();
            let response = http
                .get(format!("{}{path}", server.base))
                .header("Authorization", ADMIN)
                .send()
                .await
                .expect("request");
            assert!(
                response.status().is_success(),
                "{path}: {}",
                response.status()
            );
            let body: serde_json::Value = response.json().await.expect("a JSON answer");
            if round >= 5 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            total = body["total"].clone();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "| `{path}` | {total} | {:.2} | {:.2} | {:.2} |",
            percentile(&times, 50.0),
            percentile(&times, 95.0),
            percentile(&times, 100.0)
        );
    }
}
