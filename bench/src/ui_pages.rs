//! Web UI page-time benchmark (BENCHMARKS.md): every page of the admin web UI with FLAGS flags in one project,
//! against the release control plane, on SQLite or Postgres.
//!
//! 1. Seeds the database (when it holds no flag yet) in this process through the control plane's own domain
//!    functions, each call in a `WriteTx` as the handlers make it (100 calls a transaction, only faster):
//!    FLAGS flags in project `default` (the flag list's worst case: every flag in the listed project), 5
//!    types, names and descriptions from a word list, every 2nd on in production, every 3rd in development
//!    (each with the default flexibleRollout that turning on adds), every 7th stale, and 100 more flags
//!    archived.
//! 2. Starts `vexil-control-plane` (release, `VEXIL_BIN_DIR`, default `target/release`) on the database and
//!    signs in on `/login` with the admin token (no user exists), as a person would.
//! 3. Asks each page ROUNDS times, one at a time, after 5 unmeasured ones, with the sign-in cookie, and prints
//!    the median, p95 and maximum time to the whole answer (HTML read), with its size.
//!
//! Usage: ui-pages DATABASE_URL [FLAGS=5000] [ROUNDS=100]

use std::time::Instant;
use vexil_bench::{percentile, ControlPlane, ADMIN};
use vexil_control_plane::domain::features::{self, CreateFeature, FeatureType, UpdateFeature};
use vexil_control_plane::domain::first_start;
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::store::{Actor, Store, WriteTx};

/// Calls per seeding transaction.
const BATCH: usize = 100;
const ARCHIVED: usize = 100;
const WORDS: [&str; 16] = [
    "checkout",
    "search",
    "billing",
    "banner",
    "onboarding",
    "payments",
    "profile",
    "reports",
    "export",
    "mobile",
    "pricing",
    "invoice",
    "gallery",
    "coupons",
    "sharing",
    "tracking",
];

fn flag_name(i: usize) -> String {
    format!(
        "{}-{}-{i:05}",
        WORDS[i % WORDS.len()],
        WORDS[(i / 16) % WORDS.len()]
    )
}

async fn begin(store: &Store) -> WriteTx {
    store
        .begin_write(&Actor::user("bench", 1))
        .await
        .expect("begin a write")
}

async fn seed(store: &Store, flags: usize) {
    first_start::seed(store).await.expect("first start");
    let limits = Limits {
        feature_flags: u32::try_from(flags + ARCHIVED)
            .expect("FLAGS fits u32")
            .max(Limits::default().feature_flags),
        ..Limits::default()
    };
    let types = [
        FeatureType::Release,
        FeatureType::Experiment,
        FeatureType::Operational,
        FeatureType::KillSwitch,
        FeatureType::Permission,
    ];
    let all: Vec<usize> = (0..flags + ARCHIVED).collect();
    for chunk in all.chunks(BATCH) {
        let mut tx = begin(store).await;
        for &i in chunk {
            let input = CreateFeature {
                name: flag_name(i),
                feature_type: Some(types[i % types.len()]),
                description: Some(format!(
                    "The {} of {} for team {}",
                    WORDS[(i / 3) % WORDS.len()],
                    WORDS[(i / 7) % WORDS.len()],
                    i % 10
                )),
                impression_data: Some(i % 5 == 0),
                tags: None,
            };
            features::create(&mut tx, "default", input, &limits)
                .await
                .expect("flag");
            for (environment, every) in [("production", 2), ("development", 3)] {
                if i % every == 0 {
                    features::set_enabled(
                        &mut tx,
                        "default",
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
                features::update(&mut tx, "default", &flag_name(i), input)
                    .await
                    .expect("stale");
            }
            if i >= flags {
                features::archive(&mut tx, "default", &flag_name(i))
                    .await
                    .expect("archive");
            }
        }
        tx.commit().await.expect("commit");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .expect("usage: ui-pages DATABASE_URL [FLAGS] [ROUNDS]");
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let (flags, rounds) = (arg(2, 5000), arg(3, 100));
    let store = Store::connect(&url).await.expect("connect");
    let mut conn = store.read().await.expect("read");
    let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM features")
        .fetch_one(&mut *conn)
        .await
        .expect("count flags");
    drop(conn);
    if existing == 0 {
        let started = Instant::now();
        seed(&store, flags).await;
        if url.starts_with("postgres") {
            let mut conn = store.read().await.expect("read");
            sqlx::query("VACUUM ANALYZE")
                .execute(&mut *conn)
                .await
                .expect("vacuum");
        }
        eprintln!("seeded in {:.1?}", started.elapsed());
    }
    store.close().await;

    let server = ControlPlane::start(&url, flags + ARCHIVED);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let signed = http
        .post(format!("{}/login", server.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "token={}&next=%2F",
            ADMIN.replace('*', "%2A").replace(':', "%3A")
        ))
        .send()
        .await
        .expect("sign in");
    assert_eq!(signed.status().as_u16(), 303, "sign-in");
    let cookie = signed
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .expect("a cookie")
        .to_owned();
    let one_flag = flag_name(1234);
    let pages = [
        "/login".to_owned(),
        "/projects/default".to_owned(),
        "/projects/default?query=checkout".to_owned(),
        "/projects/default?type=release&state=stale&sort=created".to_owned(),
        format!("/projects/default?page={}", flags / 25),
        "/projects/default/create-flag".to_owned(),
        format!("/projects/default/features/{one_flag}"),
        format!(
            "/projects/default/features/{one_flag}/strategies/create?environmentId=development"
        ),
        format!("/projects/default/features/{one_flag}/variants?environment=development"),
        "/segments".to_owned(),
        "/archive".to_owned(),
    ];
    println!("| page | median ms | p95 ms | max ms | bytes |");
    println!("|---|---|---|---|---|");
    for page in &pages {
        let mut times = Vec::with_capacity(rounds);
        let mut bytes = 0;
        for round in 0..rounds + 5 {
            let started = Instant::now();
            let response = http
                .get(format!("{}{page}", server.base))
                .header("Cookie", &cookie)
                .send()
                .await
                .expect("request");
            let status = response.status().as_u16();
            let body = response.text().await.expect("body");
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(status, 200, "{page}: {body}");
            bytes = body.len();
            if round >= 5 {
                times.push(elapsed);
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "| `{page}` | {:.1} | {:.1} | {:.1} | {bytes} |",
            percentile(&times, 50.0),
            percentile(&times, 95.0),
            percentile(&times, 100.0)
        );
    }
}
