//! The web UI's usage pages over HTTP, through the real binary: a flag's usage chart (`…/metrics`), the
//! applications, the edges and the event log (`/history`): their content against the admin API's numbers,
//! empty states, paging, the event filters, user input shown as text, and a Viewer reading them as the API
//! lets it. (The browser walk is `edge/tests/e2e/ui_usage.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN, EDGE_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;

crate::on_sqlite_and_postgres!(
    a_flags_usage_chart_shows_the_apis_counts,
    applications_and_edges_as_reported,
    the_event_log_filters_and_pages,
    what_edges_serve_is_usage_beside_the_sdks_reports,
);

async fn signed_in(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await
        .expect(303);
    browser
}

fn assert_has(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
}

const SCRIPT: &str = "<script>alert(1)</script>";
const ESCAPED: &str = "&lt;script&gt;alert(1)&lt;/script&gt;";

fn assert_escaped(text: &str) {
    assert!(!text.contains("<script>alert"), "unescaped input: {text}");
    assert!(text.contains(ESCAPED), "escaped input in {text}");
}

async fn client_post(server: &Server, path: &str, body: Value) {
    let answer = server
        .send("POST", path, Some(body), Some(CLIENT_TOKEN))
        .await;
    assert_eq!(answer.status, 202, "{path}: {:?}", answer.body);
}

fn register_body(app: &str, instance: &str) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "sdkVersion": "unleash-client-node:6.12.1",
        "strategies": ["default", "flexibleRollout"],
        "started": "2026-11-22T00:00:00.000Z",
        "interval": 10000
    })
}

fn metrics_body(app: &str, instance: &str, toggles: Value) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "sdkVersion": "unleash-client-node:6.12.1",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z", "toggles": toggles}
    })
}

async fn a_flags_usage_chart_shows_the_apis_counts(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "checkout"}),
        )
        .await
        .expect(201);
    let mut browser = signed_in(&server).await;
    let flag_page = browser.page("/projects/default/features/checkout").await;
    assert_has(
        &flag_page,
        &["<a class=\"button\" href=\"/projects/default/features/checkout/metrics\">Usage</a>"],
    );
    let empty = browser
        .page("/projects/default/features/checkout/metrics")
        .await;
    assert_has(
        &empty,
        &[
            "<h1>Usage</h1>",
            "No usage counted for this flag in the last 48 hours.",
            "aria-current=\"page\">Flags</a>",
        ],
    );
    assert!(!empty.contains("<svg"), "no chart without counts");

    // Two applications (one with markup in its name) count the flag in development.
    client_post(
        &server,
        "/api/client/metrics",
        metrics_body("shop", "i1", json!({"checkout": {"yes": 5, "no": 1}})),
    )
    .await;
    client_post(
        &server,
        "/api/client/metrics",
        metrics_body(SCRIPT, "i2", json!({"checkout": {"yes": 2, "no": 2}})),
    )
    .await;
    let api = server
        .get("/api/admin/client-metrics/features/checkout")
        .await;
    let rows = api.expect(200)["data"].as_array().unwrap().clone();
    let sum = |field: &str| {
        rows.iter()
            .map(|row| row[field].as_i64().unwrap())
            .sum::<i64>()
    };
    assert_eq!((sum("yes"), sum("no")), (7, 3), "{rows:?}");

    let text = browser
        .page("/projects/default/features/checkout/metrics")
        .await;
    assert_has(
        &text,
        &[
            "<h2 id=\"usage-env-0\">development</h2>",
            "<strong>7</strong> yes · <strong>3</strong> no",
            "role=\"img\" aria-labelledby=\"usage-chart-0-title usage-chart-0-desc\"",
            "<title id=\"usage-chart-0-title\">SDK counts of checkout in development, per hour</title>",
            "Last 48 hours: 7 yes and 3 no, in 1 hour with counts.",
            "<summary>Show the numbers</summary>",
            "<th scope=\"col\">Hour (UTC)</th>",
            "<td>7</td><td>3</td>",
            // Every SVG element closed: an HTML parser nests an unclosed <rect> in the one before.
            "height=\"64.4\"></rect><rect class=\"bar-no\"",
            "text-anchor=\"end\">0</text>",
            "text-anchor=\"end\">20</text>",
            "<h2 id=\"usage-env-1\">production</h2>",
            "Nothing counted in production in the last 48 hours.",
            "yes: the flag was on",
            "href=\"/applications/shop\">shop</a>",
            // The application's name as text, and as one escaped path segment.
            "href=\"/applications/%3Cscript%3Ealert(1)%3C%2Fscript%3E\"",
        ],
    );
    assert_escaped(&text);
    assert_eq!(text.matches("<svg").count(), 1, "one chart: development");

    let missing = browser
        .get("/projects/default/features/nope/metrics")
        .await
        .expect(404)
        .to_owned();
    assert!(missing.contains("Flag nope does not exist in project default"));
    // Signed out: to the sign-in page.
    let signed_out = Browser::new(&server)
        .get("/projects/default/features/checkout/metrics")
        .await;
    assert_eq!(signed_out.status, 303);
}

/// Sends one edge usage batch over gRPC, as an edge does.
async fn report(server: &Server, batch: v1::UsageBatch) {
    let channel = tonic::transport::Endpoint::from_shared(server.grpc.clone())
        .expect("the gRPC URL")
        .connect()
        .await
        .expect("connect to the gRPC listener");
    let authorization: tonic::metadata::MetadataValue<_> =
        format!("Bearer {EDGE_TOKEN}").parse().expect("ASCII");
    let mut client =
        UsageClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
            Ok(request)
        });
    client.report(batch).await.expect("accepted");
}

async fn applications_and_edges_as_reported(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    let mut browser = signed_in(&server).await;
    assert_has(
        &browser.page("/applications").await,
        &[
            "No application has registered yet.",
            "aria-current=\"page\">Applications</a>",
        ],
    );
    assert_has(
        &browser.page("/edges").await,
        &[
            "No edge has reported yet.",
            "aria-current=\"page\">Edges</a>",
        ],
    );

    for name in ["checkout", "search"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    client_post(
        &server,
        "/api/client/register",
        register_body(SCRIPT, "pod-1"),
    )
    .await;
    client_post(
        &server,
        "/api/client/metrics",
        metrics_body(
            SCRIPT,
            "pod-1",
            json!({"checkout": {"yes": 1, "no": 0}, "ghost": {"yes": 0, "no": 1}}),
        ),
    )
    .await;
    server
        .post(
            "/api/admin/metrics/applications/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
            json!({"description": format!("the {SCRIPT} shop")}),
        )
        .await
        .expect(202);
    for i in 0..26 {
        client_post(
            &server,
            "/api/client/register",
            register_body(&format!("app-{i:02}"), "only"),
        )
        .await;
    }

    let list = browser.page("/applications").await;
    assert_has(
        &list,
        &[
            "<th scope=\"col\">Instances</th>",
            "href=\"/applications/%3Cscript%3Ealert(1)%3C%2Fscript%3E\">&lt;script&gt;alert(1)&lt;/script&gt;</a>",
            "the &lt;script&gt;alert(1)&lt;/script&gt; shop",
            "Showing 1–25 of 27",
            "Page 1 of 2",
            "href=\"/applications?page=2\">Next page</a>",
            "just now",
        ],
    );
    assert_escaped(&list);
    let second = browser.page("/applications?page=2").await;
    assert_has(
        &second,
        &[
            ">app-24</a>",
            ">app-25</a>",
            "Showing 26–27 of 27",
            "href=\"/applications?page=1\">Previous page</a>",
        ],
    );
    assert!(!second.contains(">app-00</a>"));
    assert_has(
        &browser.page("/applications?page=9").await,
        &["No applications on this page."],
    );

    let app = browser
        .page("/applications/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        .await;
    assert_has(
        &app,
        &[
            "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>",
            "<code>pod-1</code>",
            "<td>unleash-client-node:6.12.1</td>",
            "<td>development</td>",
            ">SDK versions</h2>",
            "<dt>development</dt>",
            "unleash-client-node:6.12.1 · 1 instance",
            ">Flags it uses</h2>",
            "<code>checkout</code>",
            "<code>ghost</code> <span class=\"badge stale\">no such flag</span>",
            "uses flags of default",
            "Registered strategies: default, flexibleRollout",
        ],
    );
    assert_escaped(&app);
    let nobody = browser.get("/applications/nobody").await;
    let text = nobody.expect(404);
    assert!(text.contains("No application named nobody"));

    // An edge reports at revision 1; the control plane is further on.
    report(
        &server,
        v1::UsageBatch {
            edge_id: format!("edge {SCRIPT}"),
            batch_id: "b1".to_owned(),
            applied_revision: 1,
            edge_version: "9.8.7".to_owned(),
            ..v1::UsageBatch::default()
        },
    )
    .await;
    let edges = server.get("/api/admin/metrics/edges").await;
    assert_eq!(edges.expect(200)["edges"][0]["appliedRevision"], 1);
    let text = browser.page("/edges").await;
    let current: i64 = text
        .split("publishes revision <strong>")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .and_then(|number| number.parse().ok())
        .expect("the current revision on the page");
    assert!(
        current >= 3,
        "two flags written after the first start: {current}"
    );
    assert_has(
        &text,
        &[
            "<code>edge &lt;script&gt;alert(1)&lt;/script&gt;</code>",
            "<td>9.8.7</td>",
            &format!(
                "1 <span class=\"badge behind\">{} revisions behind</span>",
                current - 1
            ),
            "0 enabled · 0 not enabled",
            "just now",
        ],
    );
    assert_escaped(&text);
    report(
        &server,
        v1::UsageBatch {
            edge_id: format!("edge {SCRIPT}"),
            batch_id: "b2".to_owned(),
            applied_revision: current as u64,
            edge_version: "9.8.7".to_owned(),
            evaluations: vec![v1::EvaluationCount {
                environment: "development".to_owned(),
                feature_name: "checkout".to_owned(),
                minute_ms: chrono::Utc::now().timestamp_millis() / 60_000 * 60_000,
                enabled: 4,
                disabled: 1,
            }],
            ..v1::UsageBatch::default()
        },
    )
    .await;
    assert_has(
        &browser.page("/edges").await,
        &[
            &format!("{current} <span class=\"badge current\">current</span>"),
            "4 enabled · 1 not enabled",
        ],
    );
}

async fn the_event_log_filters_and_pages(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = signed_in(&server).await;
    let empty = browser.page("/history?flag=nothing").await;
    assert_has(
        &empty,
        &[
            "No events match these filters.",
            "<label for=\"filter-event-type\">Event type</label>",
            "<label for=\"filter-project\">Project</label>",
            "<label for=\"filter-flag\">Flag</label>",
            "<label for=\"filter-author\">Author</label>",
            ">Filter</button>",
            "aria-current=\"page\">Events</a>",
        ],
    );

    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": format!("Other {SCRIPT}")}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/other/features",
            json!({"name": "gamma", "description": SCRIPT}),
        )
        .await
        .expect(201);
    for i in 0..30 {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": format!("flag-{i:02}")}),
            )
            .await
            .expect(201);
    }

    let all = browser.page("/history").await;
    let api = server.get("/api/admin/search/events?limit=25").await;
    let api = api.expect(200);
    let total = api["total"].as_i64().unwrap();
    assert!(total >= 32, "{total}");
    assert_has(
        &all,
        &[
            &format!("Showing 1–25 of {total}"),
            "Next page</a>",
            "<option value=\"other\">Other &lt;script&gt;alert(1)&lt;/script&gt;</option>",
            "<option value=\"feature-created\">Flag created</option>",
        ],
    );
    // Newest first, as the API.
    let newest = api["events"][0]["featureName"].as_str().unwrap();
    assert_eq!(newest, "flag-29");
    let first = all.find("flag-29").unwrap();
    let later = all.find("flag-28").unwrap();
    assert!(first < later, "newest first");

    let gamma = browser.page("/history?flag=gamma").await;
    assert_has(
        &gamma,
        &[
            "created the flag <a href=\"/projects/other/features/gamma\">gamma</a> (project <a href=\"/projects/other\">other</a>)",
            "<summary aria-describedby=\"event-",
            ">Show the change</summary><ul class=\"diff\" aria-label=\"What changed\">",
            "description: </span><ins class=\"added\"><span class=\"sr-only\">now </span>&lt;script&gt;",
            "Showing 1–1 of 1",
            "value=\"gamma\"",
        ],
    );
    assert!(!gamma.contains("flag-29"));
    assert_escaped(&gamma);

    let projects = browser.page("/history?type=project-created").await;
    assert_has(
        &projects,
        &[
            "created the project <a href=\"/projects/other\">Other &lt;script&gt;",
            "<option value=\"project-created\" selected>Project created</option>",
        ],
    );
    assert!(!projects.contains("created the flag"));
    let in_other = browser.page("/history?project=other").await;
    assert_has(
        &in_other,
        &["Showing 1–2 of 2", "<option value=\"other\" selected>"],
    );

    // Author: the user id the events carry (the admin token's).
    let admin = json!({"id": api["events"][0]["createdByUserId"].clone()});
    let by_admin = browser
        .page(&format!(
            "/history?author={}&type=feature-created",
            admin["id"]
        ))
        .await;
    assert_has(&by_admin, &["Showing 1–25 of 31", "flag-29"]);
    assert_has(
        &browser.page("/history?author=999999").await,
        &["No events match these filters."],
    );

    // Paging keeps the filters; the last page holds the rest.
    let second = browser
        .page(&format!(
            "/history?type=feature-created&author={}&page=2",
            admin["id"]
        ))
        .await;
    assert_has(
        &second,
        &[
            "Showing 26–31 of 31",
            &format!(
                "href=\"/history?type=feature-created&amp;author={}&amp;page=1\">Previous page</a>",
                admin["id"]
            ),
        ],
    );
    // What the search refuses is said above the list.
    let refused = browser.page("/history?page=999999999999").await;
    assert_has(&refused, &["class=\"error-box\" role=\"alert\">offset"]);

    // A Viewer reads these pages, as the admin API lets it read events and metrics.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "vera", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let mut viewer = Browser::new(&server);
    viewer
        .sign_in(&[("username", "vera"), ("password", "correct horse battery")])
        .await;
    assert_has(
        &viewer.page("/history?flag=gamma").await,
        &["Showing 1–1 of 1"],
    );
    assert_has(
        &viewer.page("/applications").await,
        &["No application has registered yet."],
    );
    assert_has(&viewer.page("/edges").await, &["No edge has reported yet."]);
    assert_has(
        &viewer.page("/projects/other/features/gamma/metrics").await,
        &["No usage counted for this flag in the last 48 hours."],
    );
}

fn this_minute_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    now - now % 60_000
}

/// Issue 30 §7: the frontend/OFREP evaluations an edge reports set the flag's last seen on the flag list and
/// fill its usage page, as their own series beside the SDKs' reports (never added to them: the SDK metrics
/// APIs keep counting exactly what SDKs reported), once however often the batch is retried. (Frontend requests
/// to a real edge reaching the control plane are edge/tests/e2e's.)
async fn what_edges_serve_is_usage_beside_the_sdks_reports(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    for name in ["banner", "checkout"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    let mut browser = signed_in(&server).await;
    let usage_page = "/projects/default/features/banner/metrics";
    assert_has(&browser.page(usage_page).await, &["No usage counted"]);
    let list = browser.page("/projects/default").await;
    assert_eq!(list.matches(">never<").count(), 2, "{list}");

    let evaluated = |batch_id: &str| v1::UsageBatch {
        edge_id: "edge-frontend".to_owned(),
        batch_id: batch_id.to_owned(),
        applied_revision: 1,
        edge_version: "0.1.0".to_owned(),
        evaluations: vec![v1::EvaluationCount {
            environment: "development".to_owned(),
            feature_name: "banner".to_owned(),
            minute_ms: this_minute_ms(),
            enabled: 7,
            disabled: 3,
        }],
        ..v1::UsageBatch::default()
    };
    // The same batch twice (an edge retrying after a lost answer) counts once.
    report(&server, evaluated("b-1")).await;
    report(&server, evaluated("b-1")).await;

    let list = browser.page("/projects/default").await;
    assert_eq!(
        list.matches(">never<").count(),
        1,
        "checkout is still never seen: {list}"
    );
    let page = browser.page(usage_page).await;
    assert!(!page.contains("No usage counted"), "{page}");
    assert_has(
        &page,
        &[
            "Served by edges to browsers and apps <span class=\"usage-totals\"><strong>7</strong> yes · <strong>3</strong> no",
            "Edge evaluations of banner in development, per hour",
        ],
    );
    assert!(
        !page.contains("Reported by SDKs"),
        "no SDK reported: {page}"
    );

    // An SDK's own report shows beside it, and the SDK APIs count only what SDKs reported.
    client_post(
        &server,
        "/api/client/register",
        register_body("web", "tab-1"),
    )
    .await;
    client_post(
        &server,
        "/api/client/metrics",
        metrics_body("web", "tab-1", json!({"banner": {"yes": 2, "no": 1}})),
    )
    .await;
    let page = browser.page(usage_page).await;
    assert_has(
        &page,
        &[
            "Reported by SDKs <span class=\"usage-totals\"><strong>2</strong> yes · <strong>1</strong> no",
            "<strong>7</strong> yes · <strong>3</strong> no",
            "The two are not added up",
        ],
    );
    let last_hour = server
        .get("/api/admin/metrics/feature-toggles")
        .await
        .expect(200)["lastHour"]
        .clone();
    assert_eq!(last_hour["banner"], json!({"yes": 2, "no": 1}));
    let hours = server
        .get("/api/admin/client-metrics/features/banner")
        .await
        .expect(200)["data"]
        .clone();
    let apps: Vec<&str> = hours
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|hour| hour["appName"].as_str())
        .collect();
    assert_eq!(apps, ["web"], "{hours}");
}
