//! Bad input, on SQLite and on Postgres: each case gets its status and an exact `{id, name, message}` body,
//! the message names the bad field where there is one, and the store is unchanged afterwards.

use crate::database::TestDb;
use crate::server::{assert_error_body, Answer, Server, ADMIN_TOKEN, CLIENT_TOKEN, FRONTEND_TOKEN};
use serde_json::{json, Value};
use vexil_control_plane::store::Store;

crate::on_sqlite_and_postgres!(bad_input_gets_the_right_error_and_changes_nothing);

const FEATURES: &str = "/api/admin/projects/default/features";
const STRATEGIES: &str =
    "/api/admin/projects/default/features/existing/environments/development/strategies";

/// One request of the table.
struct Case {
    what: &'static str,
    method: &'static str,
    path: String,
    token: Option<&'static str>,
    content_type: Option<&'static str>,
    body: Option<String>,
    status: u16,
    name: &'static str,
    /// A piece the message must contain (the bad field, typically).
    mentions: &'static str,
}

fn case(what: &'static str, method: &'static str, path: &str, body: Option<&str>) -> Case {
    Case {
        what,
        method,
        path: path.to_owned(),
        token: Some(ADMIN_TOKEN),
        content_type: body.map(|_| "application/json"),
        body: body.map(str::to_owned),
        status: 400,
        name: "ValidationError",
        mentions: "",
    }
}

impl Case {
    fn expect(mut self, status: u16, name: &'static str, mentions: &'static str) -> Case {
        self.status = status;
        self.name = name;
        self.mentions = mentions;
        self
    }

    fn token(mut self, token: Option<&'static str>) -> Case {
        self.token = token;
        self
    }

    fn content_type(mut self, content_type: Option<&'static str>) -> Case {
        self.content_type = content_type;
        self
    }
}

fn table() -> Vec<Case> {
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(1024 * 1024 + 10));
    let strategy_path = format!("{STRATEGIES}/not-a-uuid");
    let variants_path = format!("{FEATURES}/existing/environments/development/variants");
    vec![
        // Malformed JSON, wrong types, missing fields, bad values.
        case("malformed JSON", "POST", FEATURES, Some(r#"{"name":"#)).expect(400, "ValidationError", "not valid JSON"),
        case("trailing garbage", "POST", FEATURES, Some(r#"{"name":"a"} x"#)).expect(400, "ValidationError", "JSON"),
        case("empty body", "POST", FEATURES, Some("")).expect(400, "ValidationError", "JSON"),
        case("wrong type", "POST", FEATURES, Some(r#"{"name":5}"#)).expect(400, "ValidationError", "name"),
        case("not an object", "POST", FEATURES, Some("[1]")).expect(400, "ValidationError", "invalid type"),
        case("missing name", "POST", FEATURES, Some(r#"{"type":"release"}"#)).expect(400, "ValidationError", "`name`"),
        case("unknown flag type", "POST", FEATURES, Some(r#"{"name":"ok","type":"bogus"}"#))
            .expect(400, "ValidationError", "type"),
        case("name not URL-safe", "POST", FEATURES, Some(r#"{"name":"a b"}"#)).expect(400, "ValidationError", "name"),
        case("name too long", "POST", FEATURES, Some(&format!(r#"{{"name":"{}"}}"#, "a".repeat(101))))
            .expect(400, "ValidationError", "name"),
        case("impressionData not a boolean", "POST", FEATURES, Some(r#"{"name":"ok","impressionData":"yes"}"#))
            .expect(400, "ValidationError", "impressionData"),
        case("unknown strategy", "POST", STRATEGIES, Some(r#"{"name":"custom"}"#))
            .expect(400, "ValidationError", "name"),
        case("missing strategy name", "POST", STRATEGIES, Some(r#"{"parameters":{}}"#))
            .expect(400, "ValidationError", "`name`"),
        case(
            "unknown operator",
            "POST",
            STRATEGIES,
            Some(r#"{"name":"default","constraints":[{"contextName":"userId","operator":"LIKE","values":[]}]}"#),
        )
        .expect(400, "ValidationError", "constraints[0].operator"),
        case(
            "constraint without contextName",
            "POST",
            STRATEGIES,
            Some(r#"{"name":"default","constraints":[{"operator":"IN"}]}"#),
        )
        .expect(400, "ValidationError", "constraints[0]"),
        case(
            "contextName not URL-safe",
            "POST",
            STRATEGIES,
            Some(r#"{"name":"default","constraints":[{"contextName":"user id","operator":"IN"}]}"#),
        )
        .expect(400, "ValidationError", "constraints[0].contextName"),
        case("constraints not a list", "POST", STRATEGIES, Some(r#"{"name":"default","constraints":"x"}"#))
            .expect(400, "ValidationError", "constraints"),
        case("object parameter", "POST", STRATEGIES, Some(r#"{"name":"default","parameters":{"a":{}}}"#))
            .expect(400, "ValidationError", "parameters.a"),
        case("unknown segment", "POST", STRATEGIES, Some(r#"{"name":"default","segments":[1]}"#))
            .expect(400, "ValidationError", "segments"),
        case(
            "fixed weights over 1000",
            "POST",
            STRATEGIES,
            Some(r#"{"name":"default","variants":[{"name":"a","weight":900,"weightType":"fix"},{"name":"b","weight":900,"weightType":"fix"}]}"#),
        )
        .expect(400, "ValidationError", "variants"),
        case("sort order with a string id list", "POST", &format!("{STRATEGIES}/set-sort-order"), Some(r#"["a"]"#))
            .expect(400, "ValidationError", "[0]"),
        case("sort order of an unknown strategy", "POST", &format!("{STRATEGIES}/set-sort-order"), Some(r#"[{"id":"x","sortOrder":1}]"#))
            .expect(400, "ValidationError", "[0].id"),
        case("strategy id not a UUID", "GET", &strategy_path, None).expect(400, "ValidationError", "strategyId"),
        case("limit not a number", "GET", "/api/admin/events?limit=lots", None).expect(400, "ValidationError", "limit"),
        case("limit too high", "GET", "/api/admin/events?limit=5000", None).expect(400, "ValidationError", "limit"),
        case("bad JSON Patch", "PATCH", &format!("{FEATURES}/existing"), Some(r#"[{"op":"jump"}]"#))
            .expect(400, "ValidationError", "[0]"),
        case("patch that renames", "PATCH", &format!("{FEATURES}/existing"), Some(r#"[{"op":"replace","path":"/name","value":"x"}]"#))
            .expect(400, "ValidationError", "name"),
        case("patch with a wrong type", "PATCH", &format!("{FEATURES}/existing"), Some(r#"[{"op":"replace","path":"/stale","value":"no"}]"#))
            .expect(400, "ValidationError", "stale"),
        case("project id not URL-safe", "POST", "/api/admin/projects", Some(r#"{"id":"a/b","name":"A"}"#))
            .expect(400, "ValidationError", "id"),
        case("delete the default project", "DELETE", "/api/admin/projects/default", None)
            .expect(400, "ValidationError", "default"),
        // Segments, strategy definitions, context fields, flag variants, the playground.
        case("segment without constraints", "POST", "/api/admin/segments", Some(r#"{"name":"s"}"#))
            .expect(400, "ValidationError", "`constraints`"),
        case("segment with an empty name", "POST", "/api/admin/segments", Some(r#"{"name":" ","constraints":[]}"#))
            .expect(400, "ValidationError", "name"),
        case("segment id not an integer", "GET", "/api/admin/segments/abc", None).expect(400, "ValidationError", "id"),
        case("strategy definition with a bad parameter type", "POST", "/api/admin/strategies",
             Some(r#"{"name":"custom","parameters":[{"name":"a","type":"colour"}]}"#))
            .expect(400, "ValidationError", "parameters[0].type"),
        case("strategy definition name not URL-safe", "POST", "/api/admin/strategies", Some(r#"{"name":"a b","parameters":[]}"#))
            .expect(400, "ValidationError", "name"),
        case("edit a built-in strategy", "PUT", "/api/admin/strategies/default", Some(r#"{"parameters":[]}"#))
            .expect(400, "ValidationError", "default"),
        case("deprecate an unknown strategy", "POST", "/api/admin/strategies/nope/deprecate", None)
            .expect(404, "NotFoundError", "nope"),
        case("legal values not a list", "POST", "/api/admin/context", Some(r#"{"name":"plan","legalValues":"pro"}"#))
            .expect(400, "ValidationError", "legalValues"),
        case("duplicate context field", "POST", "/api/admin/context", Some(r#"{"name":"userId"}"#))
            .expect(409, "NameExistsError", "userId"),
        case("delete a built-in context field", "DELETE", "/api/admin/context/userId", None)
            .expect(400, "ValidationError", "userId"),
        case("negative variant weight", "PUT", &variants_path, Some(r#"[{"name":"a","weight":-1}]"#))
            .expect(400, "ValidationError", "[0].weight"),
        case("variants of an unknown flag", "PUT", &format!("{FEATURES}/nothing/environments/development/variants"), Some("[]"))
            .expect(404, "NotFoundError", "nothing"),
        case("playground without environment", "POST", "/api/admin/playground", Some(r#"{"context":{"appName":"a"}}"#))
            .expect(400, "ValidationError", "`environment`"),
        case("playground with bad projects", "POST", "/api/admin/playground",
             Some(r#"{"environment":"development","projects":[1],"context":{"appName":"a"}}"#))
            .expect(400, "ValidationError", "projects"),
        // A NUL character, which PostgreSQL refuses in text and SQLite's full-text search cannot hold: in any
        // search or query parameter, path segment or JSON value.
        case("NUL in the event search's text", "GET", "/api/admin/search/events?query=abc%00def", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a short event search text", "GET", "/api/admin/search/events?query=%00", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in an event search filter", "GET", "/api/admin/search/events?feature=IS:ex%00isting", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in the flag search's text", "GET", "/api/admin/search/features?query=exi%00sting", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a flag search filter", "GET", "/api/admin/search/features?project=IS:def%00ault", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in an event list filter", "GET", "/api/admin/events?project=def%00ault", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a path segment", "GET", &format!("{FEATURES}/exi%00sting"), None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a web UI page's query", "GET", "/history?flag=exi%00sting", None)
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a JSON value", "POST", FEATURES, Some(r#"{"name":"nul","description":"a\u0000b"}"#))
            .expect(400, "ValidationError", "NUL"),
        case("NUL in a JSON key", "POST", "/api/admin/context", Some(r#"{"name":"plan","legal\u0000Values":[]}"#))
            .expect(400, "ValidationError", "NUL"),
        // Conflicts and unknown resources.
        case("duplicate flag", "POST", FEATURES, Some(r#"{"name":"existing"}"#)).expect(409, "NameExistsError", "existing"),
        case("duplicate project", "POST", "/api/admin/projects", Some(r#"{"id":"default","name":"D"}"#))
            .expect(409, "NameExistsError", "default"),
        case("validate a taken name", "POST", "/api/admin/features/validate", Some(r#"{"name":"existing"}"#))
            .expect(409, "NameExistsError", "existing"),
        case("unknown project", "GET", "/api/admin/projects/nowhere/features", None).expect(404, "NotFoundError", "nowhere"),
        case("unknown flag", "GET", &format!("{FEATURES}/nothing"), None).expect(404, "NotFoundError", "nothing"),
        case("unknown environment", "POST", &format!("{FEATURES}/existing/environments/staging/on"), None)
            .expect(404, "NotFoundError", "staging"),
        case("unknown strategy id", "GET", &format!("{STRATEGIES}/{}", uuid::Uuid::nil()), None)
            .expect(404, "NotFoundError", "Strategy"),
        // Routes and methods.
        case("unknown admin route", "GET", "/api/admin/nothing-here", None).expect(404, "NotFoundError", "/api/admin/nothing-here"),
        case("unknown route", "GET", "/definitely/not", None).token(None).expect(404, "NotFoundError", "/definitely/not"),
        case("wrong method", "PUT", "/api/admin/events", None).expect(405, "MethodNotAllowedError", "PUT"),
        // Content type and size.
        case("text/plain body", "POST", FEATURES, Some(r#"{"name":"plain"}"#))
            .content_type(Some("text/plain"))
            .expect(415, "ContentTypeError", "application/json"),
        case("no content type", "POST", FEATURES, Some(r#"{"name":"plain"}"#))
            .content_type(None)
            .expect(415, "ContentTypeError", "application/json"),
        case("body over the limit", "POST", FEATURES, Some(&big)).expect(413, "PayloadTooLargeError", "limit"),
        // Tokens.
        case("no token", "GET", "/api/admin/projects", None).token(None).expect(401, "AuthenticationRequired", "Authorization"),
        case("no token on a write", "POST", FEATURES, Some(r#"{"name":"sneaky"}"#))
            .token(None)
            .expect(401, "AuthenticationRequired", "Authorization"),
        case("unknown token", "GET", "/api/admin/projects", None)
            .token(Some("*:*.not-a-real-secret"))
            .expect(401, "AuthenticationRequired", "not valid"),
        case("empty bearer", "GET", "/api/admin/projects", None).token(Some("Bearer ")).expect(401, "AuthenticationRequired", ""),
        case("client token on the admin API", "GET", "/api/admin/projects", None)
            .token(Some(CLIENT_TOKEN))
            .expect(403, "NoAccessError", "client"),
        case("frontend token writing", "POST", FEATURES, Some(r#"{"name":"sneaky"}"#))
            .token(Some(FRONTEND_TOKEN))
            .expect(403, "NoAccessError", "frontend"),
        case("client token as bearer", "DELETE", &format!("{FEATURES}/existing"), None)
            .token(Some("Bearer default:development.test-client-secret"))
            .expect(403, "NoAccessError", "client"),
    ]
}

/// Everything a bad request could have changed.
async fn store_state(server: &Server, db: &TestDb) -> (i64, Value, Value, Value, Value) {
    let store = Store::connect(&db.url).await.unwrap();
    let revision = store.revision().await.unwrap();
    store.close().await;
    let events = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .clone();
    let projects = server.get("/api/admin/projects").await.expect(200).clone();
    let features = server.get(FEATURES).await.expect(200).clone();
    let archived = server
        .get("/api/admin/archive/features")
        .await
        .expect(200)
        .clone();
    (revision, events, projects, features, archived)
}

async fn bad_input_gets_the_right_error_and_changes_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(FEATURES, json!({"name": "existing"}))
        .await
        .expect(201);
    server
        .post(STRATEGIES, json!({"name": "default"}))
        .await
        .expect(200);
    let before = store_state(&server, &db).await;

    for case in table() {
        let method = reqwest::Method::from_bytes(case.method.as_bytes()).unwrap();
        let mut request = server
            .client
            .request(method, format!("{}{}", server.base, case.path));
        if let Some(token) = case.token {
            request = request.header("Authorization", token);
        }
        if let Some(content_type) = case.content_type {
            request = request.header("Content-Type", content_type);
        }
        if let Some(body) = case.body {
            request = request.body(body);
        }
        let answer = Answer::read(request.send().await.unwrap()).await;
        assert_eq!(answer.status, case.status, "{}: {}", case.what, answer.body);
        let message = assert_error_body(&answer.body, case.name);
        assert!(
            message.contains(case.mentions),
            "{}: message {message:?} should mention {:?}",
            case.what,
            case.mentions
        );
    }

    let after = store_state(&server, &db).await;
    assert_eq!(after, before, "bad requests changed the store");
    // Still serving normally.
    server
        .get(&format!("{FEATURES}/existing"))
        .await
        .expect(200);
}
