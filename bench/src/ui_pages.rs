//! Web UI page-time benchmark (BENCHMARKS.md): every page of the admin web UI with FLAGS flags in one project,
//! against the release control plane, on SQLite or Postgres.
//!
//! 1. Seeds the database (when it holds no flag yet) in this process through the control plane's own domain
//!    functions, each call in a `WriteTx` as the handlers make it (100 calls a transaction, only faster):
//!    FLAGS flags in project `default` (the flag list's worst case: every flag in the listed project), 5
//!    types, names and descriptions from a word list, every 2nd on in production, every 3rd in development
//!    (each with the default flexibleRollout that turning on adds), every 7th stale, and 100 more flags
//!    archived. Then (for the usage pages, issue 21 part 2) flags switched off and on in development until the
//!    store holds EVENTS events; APPLICATIONS applications of INSTANCES instances each; 48 hours of usage
//!    through `metrics::ingest` (the SDK posts' path): every flag counted once an hour by one application,
//!    and the measured flag every minute by three; and EDGES edges' batches through `metrics::ingest_batch`.
//!    Then (the access pages) TOKENS API tokens and USERS users (`bench-admin` an Admin with a password, the
//!    rest Editors and Viewers without), and 5 change requests in development, where change requests are on.
//! 2. Starts `vexil-control-plane` (release, `VEXIL_BIN_DIR`, default `target/release`) on the database and
//!    signs in on `/login` as `bench-admin`, as a person would.
//! 3. Asks each page ROUNDS times, one at a time, after 5 unmeasured ones, with the sign-in cookie, and prints
//!    the median, p95 and maximum time to the whole answer (HTML read), with its size.
//!
//! Usage: ui-pages DATABASE_URL [FLAGS=5000] [ROUNDS=100]

use std::time::Instant;
use vexil_bench::{begin, event_count, flag_name, percentile, ControlPlane, BATCH, WORDS};
use vexil_control_plane::domain::change_requests::{self, ChangeRequestConfigInput};
use vexil_control_plane::domain::features::{self, CreateFeature, FeatureType, UpdateFeature};
use vexil_control_plane::domain::first_start;
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::domain::metrics::{self, HOUR_MS, MINUTE_MS};
use vexil_control_plane::domain::passwords::PasswordWork;
use vexil_control_plane::domain::roles::RoleReference;
use vexil_control_plane::domain::tokens::{self, CreateApiToken};
use vexil_control_plane::domain::users::{self, CreateUser};
use vexil_control_plane::model::change_request::Change;
use vexil_control_plane::store::{Actor, Store};
use vexil_control_plane::time::Timestamp;
use vexil_proto::v1;
use vexil_serving::usage::Usage;

const ARCHIVED: usize = 100;
/// Events in the store after seeding (the 100,000).
const EVENTS: i64 = 100_000;
const APPLICATIONS: usize = 200;
const INSTANCES: usize = 5;
const EDGES: usize = 20;
const TOKENS: usize = 100;
const USERS: usize = 100;
const BENCH_PASSWORD: &str = "correct horse battery";
/// The flag whose usage page is measured (counted every minute).
const MEASURED: usize = 1234;
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
    seed_events(store, flags).await;
    seed_usage(store, flags).await;
    seed_access(store).await;
    seed_change_requests(store).await;
}

/// TOKENS API tokens of every kind and USERS users, through the domain functions the admin API calls.
async fn seed_access(store: &Store) {
    let limits = Limits {
        api_tokens: u32::try_from(TOKENS + 10).expect("fits"),
        ..Limits::default()
    };
    let mut tx = begin(store).await;
    for i in 0..TOKENS {
        let (kind, environment) = match i % 4 {
            0 => ("client", Some("development")),
            1 => ("frontend", Some("production")),
            2 => ("edge", None),
            _ => ("admin", None),
        };
        let input = CreateApiToken {
            token_name: format!("bench-token-{i:03}"),
            token_type: kind.to_owned(),
            environment: environment.map(str::to_owned),
            project: None,
            projects: None,
            expires_at: None,
        };
        tokens::create(&mut tx, input, &limits)
            .await
            .expect("token");
    }
    let work = PasswordWork::default();
    let hash = users::hash_password(&work, BENCH_PASSWORD.to_owned())
        .await
        .expect("hash");
    for i in 0..USERS {
        let (username, role, password) = match i {
            0 => ("bench-admin".to_owned(), "Admin", Some(hash.clone())),
            _ => (
                format!("bench-user-{i:03}"),
                if i % 2 == 0 { "Editor" } else { "Viewer" },
                None,
            ),
        };
        let input = CreateUser {
            username: Some(username.clone()),
            email: Some(format!("{username}@example.com")),
            name: Some(format!("Bench user {i}")),
            password: None,
            root_role: RoleReference::Name(role.to_owned()),
            send_email: None,
        };
        users::create(&mut tx, input, password).await.expect("user");
    }
    tx.commit().await.expect("commit");
}

/// Change requests on in development (one approval), and 5 drafts there, each switching one flag.
async fn seed_change_requests(store: &Store) {
    let mut tx = begin(store).await;
    let config = ChangeRequestConfigInput {
        change_requests_enabled: true,
        required_approvals: Some(1.into()),
    };
    change_requests::configure(&mut tx, "default", "development", config)
        .await
        .expect("configure change requests");
    tx.commit().await.expect("commit");
    for i in 0..5 {
        // The Editors `bench-user-002`, `-004`…: user ids after the first-start admin and `bench-admin`.
        let editor = 2 + 2 * i;
        let actor = Actor::user(&format!("bench-user-{editor:03}"), 2 + editor as i64);
        let mut tx = store.begin_write(&actor).await.expect("begin");
        let change = Change::UpdateEnabled {
            enabled: i % 3 != 0,
        };
        change_requests::make_or_propose(
            &mut tx,
            ("default", "development", &flag_name(i)),
            change,
            &Limits::default(),
        )
        .await
        .expect("draft");
        tx.commit().await.expect("commit");
    }
}

/// Flags switched off and on in development (one event each) until the store holds [`EVENTS`].
async fn seed_events(store: &Store, flags: usize) {
    let mut switch = 0usize;
    while event_count(store).await < EVENTS {
        let mut tx = begin(store).await;
        for _ in 0..BATCH * 10 {
            let i = switch % flags;
            let away = (switch / flags).is_multiple_of(2);
            let on = away != i.is_multiple_of(3);
            features::set_enabled(&mut tx, "default", &flag_name(i), "development", on, false)
                .await
                .expect("switch");
            switch += 1;
        }
        tx.commit().await.expect("commit");
    }
}

fn count(flag: usize, app: usize, minute_ms: i64) -> v1::FlagCount {
    v1::FlagCount {
        feature_name: flag_name(flag),
        app_name: format!("bench-app-{app:03}"),
        environment: "development".to_owned(),
        minute_ms,
        yes: (flag % 17) as u64 + 3,
        no: (flag % 5) as u64,
        variants: Default::default(),
    }
}

/// Applications and instances, 48 hours of counts, and the edges' reports.
async fn seed_usage(store: &Store, flags: usize) {
    let now = Timestamp::now().millis();
    let this_minute = now - now.rem_euclid(MINUTE_MS);
    let applications: Vec<v1::ApplicationSeen> = (0..APPLICATIONS)
        .map(|app| v1::ApplicationSeen {
            app_name: format!("bench-app-{app:03}"),
            seen_at_ms: now,
            registered: true,
            strategies: vec!["default".to_owned(), "flexibleRollout".to_owned()],
        })
        .collect();
    let instances: Vec<v1::InstanceSeen> = (0..APPLICATIONS * INSTANCES)
        .map(|i| v1::InstanceSeen {
            app_name: format!("bench-app-{:03}", i / INSTANCES),
            instance_id: format!("pod-{i:05}"),
            seen_at_ms: now,
            client_ip: Some("10.0.0.1".to_owned()),
            sdk_version: Some("unleash-client-node:6.12.1".to_owned()),
            environment: Some("development".to_owned()),
        })
        .collect();
    let usage = Usage {
        applications,
        instances,
        counts: Vec::new(),
        unleash_edges: Vec::new(),
    };
    metrics::ingest(store, usage).await.expect("applications");
    // Every flag once an hour, by one of the applications; one ingest per hour.
    for hour in 0..48 {
        let minute = this_minute - hour * HOUR_MS;
        let counts = (0..flags)
            .map(|flag| count(flag, flag % APPLICATIONS, minute))
            .collect();
        let usage = Usage {
            applications: Vec::new(),
            instances: Vec::new(),
            counts,
            unleash_edges: Vec::new(),
        };
        metrics::ingest(store, usage).await.expect("hourly counts");
    }
    // The measured flag every minute of the 48 hours, by three applications.
    let counts: Vec<v1::FlagCount> = (0..48 * 60)
        .flat_map(|minute| {
            (0..3).map(move |app| count(MEASURED, app, this_minute - minute * MINUTE_MS))
        })
        .collect();
    for chunk in counts.chunks(1000) {
        let usage = Usage {
            applications: Vec::new(),
            instances: Vec::new(),
            counts: chunk.to_vec(),
            unleash_edges: Vec::new(),
        };
        metrics::ingest(store, usage).await.expect("minute counts");
    }
    for edge in 0..EDGES {
        let batch = v1::UsageBatch {
            edge_id: format!("edge-{edge:02}"),
            batch_id: "seed".to_owned(),
            applied_revision: 1,
            edge_version: "bench".to_owned(),
            evaluations: (0..60)
                .map(|minute| v1::EvaluationCount {
                    environment: "development".to_owned(),
                    feature_name: flag_name(edge),
                    minute_ms: this_minute - minute * MINUTE_MS,
                    enabled: 10,
                    disabled: 2,
                })
                .collect(),
            ..v1::UsageBatch::default()
        };
        metrics::ingest_batch(store, batch, now)
            .await
            .expect("edge batch");
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
    // As a person signs in: the sign-in page sets the CSRF cookie whose token its form carries.
    let form = http
        .get(format!("{}/login", server.base))
        .send()
        .await
        .expect("the sign-in page");
    let csrf_cookie = first_cookie(&form);
    let form = form.text().await.expect("the sign-in page");
    let csrf = form
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a CSRF field")
        .to_owned();
    let signed = http
        .post(format!("{}/login", server.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Cookie", &csrf_cookie)
        .body(format!(
            "username=bench-admin&password={}&next=%2F&csrf={csrf}",
            BENCH_PASSWORD.replace(' ', "+")
        ))
        .send()
        .await
        .expect("sign in");
    assert_eq!(signed.status().as_u16(), 303, "sign-in");
    let cookie = first_cookie(&signed);
    let one_flag = flag_name(MEASURED);
    let pages = [
        "/login".to_owned(),
        "/projects/default".to_owned(),
        "/projects/default?query=checkout".to_owned(),
        "/projects/default?type=release&state=stale&sort=created".to_owned(),
        "/projects/default?sort=changed".to_owned(),
        format!("/projects/default?page={}", flags / 25),
        "/projects/default/create-flag".to_owned(),
        format!("/projects/default/features/{one_flag}"),
        format!(
            "/projects/default/features/{one_flag}/strategies/create?environmentId=development"
        ),
        format!("/projects/default/features/{one_flag}/variants?environment=development"),
        "/segments".to_owned(),
        "/archive".to_owned(),
        format!("/projects/default/features/{one_flag}/metrics"),
        "/applications".to_owned(),
        format!("/applications?page={}", APPLICATIONS / 25),
        "/applications/bench-app-001".to_owned(),
        "/edges".to_owned(),
        "/history".to_owned(),
        "/history?page=2000".to_owned(),
        "/history?type=feature-created".to_owned(),
        format!("/history?flag={one_flag}"),
        "/history?project=default&author=1".to_owned(),
        "/admin/api".to_owned(),
        format!("/admin/api?page={}", TOKENS / 25),
        "/admin/users".to_owned(),
        "/admin/users/5".to_owned(),
        "/admin/groups".to_owned(),
        "/profile".to_owned(),
        "/search?q=checkout".to_owned(),
        "/projects/default/connect".to_owned(),
        "/projects/default/overview".to_owned(),
        "/projects".to_owned(),
        "/projects/default/settings".to_owned(),
        "/environments".to_owned(),
        "/context".to_owned(),
        "/strategies".to_owned(),
        "/admin/settings".to_owned(),
        "/projects/default/change-requests".to_owned(),
        "/projects/default/change-requests/1".to_owned(),
        "/playground".to_owned(),
        "/playground?environment=development&userId=u1&propertyName=plan&propertyValue=pro&action=evaluate&appName=bench".to_owned(),
        "/playground?environment=development&userId=u1&action=evaluate&appName=bench&page=100".to_owned(),
    ];
    // The playground keeps the compiled document while the revision stands; these pages are also measured
    // right after a write (a switch in production flipped through the admin API), when it reads and compiles
    // it again.
    let after_a_write = [
        "/playground?environment=development&userId=u1&action=evaluate&appName=bench".to_owned(),
    ];
    println!("| page | median ms | p95 ms | max ms | bytes |");
    println!("|---|---|---|---|---|");
    let measured = pages
        .iter()
        .map(|page| (page, false))
        .chain(after_a_write.iter().map(|page| (page, true)));
    for (round_trip, (page, write_first)) in measured.enumerate() {
        let mut times = Vec::with_capacity(rounds);
        let mut bytes = 0;
        for round in 0..rounds + 5 {
            if write_first {
                let switch = if (round_trip + round) % 2 == 0 {
                    "on"
                } else {
                    "off"
                };
                let written = http
                    .post(format!(
                        "{}/api/admin/projects/default/features/{one_flag}/environments/production/{switch}",
                        server.base
                    ))
                    .header("Cookie", &cookie)
                    .send()
                    .await
                    .expect("a write");
                assert!(
                    written.status().is_success(),
                    "the write: {}",
                    written.status()
                );
            }
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
        let label = if write_first {
            format!("`{page}` after a write")
        } else {
            format!("`{page}`")
        };
        println!(
            "| {label} | {:.1} | {:.1} | {:.1} | {bytes} |",
            percentile(&times, 50.0),
            percentile(&times, 95.0),
            percentile(&times, 100.0)
        );
    }
}

/// The `name=value` of the first cookie an answer sets.
fn first_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .expect("a cookie")
        .to_owned()
}
