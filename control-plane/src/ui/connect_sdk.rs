//! `/projects/<project>/connect`: "Connect an SDK", the next step for a project without flags or usage — where
//! SDKs connect (`--sdk-url`, else this control plane, which serves the SDK routes too), the tokens that can
//! read the project (and links that open the token form filled in), and copyable snippets for the browser
//! (`unleash-proxy-client`), for a Node.js server (`unleash-client`) and for curl.

use super::page::{Page, UiError};
use super::session::SignedIn;
use crate::domain::access::Area;
use crate::domain::{projects, tokens};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::http::header::HOST;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// This module's page.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/projects/{project}/connect", get(page))
}

/// Where SDKs connect: `--sdk-url`, else this control plane's own address as the request reached it.
fn sdk_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.sdk_url {
        return url.clone();
    }
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    let forwarded = |name: &str| state.trust_proxy.then(|| text(name)).flatten();
    let scheme = forwarded("x-forwarded-proto")
        .filter(|scheme| matches!(*scheme, "http" | "https"))
        .unwrap_or("http");
    let host = forwarded("x-forwarded-host")
        .or_else(|| text(HOST.as_str()))
        .unwrap_or("localhost");
    format!("{scheme}://{host}{}", state.base_path)
}

/// A snippet with its Copy button (`vexil.js` copies the code's text).
fn snippet(id: &str, label: &str, code: &str) -> Markup {
    html! {
        div.field.snippet {
            div.snippet-head {
                span.snippet-label id=(format!("{id}-label")) { (label) }
                button type="button" data-copy=(id) aria-describedby=(format!("{id}-label")) { "Copy" }
            }
            pre { code #(id) { (code) } }
            p.hint.copy-status aria-live="polite" {}
        }
    }
}

/// `GET /projects/<project>/connect`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    let (current, listed) = {
        let mut conn = state.store.read().await?;
        let current = projects::get(&mut conn, &project).await?;
        // Names only: a secret is never shown again.
        let listed = match who.authorize(true, Area::Access) {
            Ok(()) => Some(tokens::list_with_hashes(&mut conn).await?),
            Err(_) => None,
        };
        (current, listed)
    };
    let readers: Option<Vec<_>> = listed.map(|listed| {
        listed
            .into_iter()
            .map(|row| row.token)
            .filter(|token| matches!(token.token_type.as_str(), "client" | "frontend"))
            .filter(|token| token.projects.iter().any(|p| p == "*" || *p == project))
            .collect()
    });
    let may_create = who.authorize(false, Area::Access).is_ok();
    let url = sdk_url(&state, &headers);
    let environment = current
        .environments
        .first()
        .cloned()
        .unwrap_or_else(|| "development".to_owned());
    let new_token = |kind: &str, name: &str| {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("type", kind)
            .append_pair("projects", &project)
            .append_pair("environment", &environment)
            .append_pair("name", &format!("{project}-{name}"))
            .finish();
        who.link(&format!("/admin/api/create?{query}"))
    };
    let browser = format!(
        "import {{ UnleashClient }} from \"unleash-proxy-client\";\n\n\
         const unleash = new UnleashClient({{\n  \
         url: \"{url}/api/frontend\",\n  \
         clientKey: \"<a frontend token of {project}>\",\n  \
         appName: \"{project}-web\",\n}});\n\
         unleash.start();\n\
         unleash.on(\"ready\", () => console.log(unleash.isEnabled(\"my-flag\")));\n"
    );
    let server = format!(
        "const {{ initialize }} = require(\"unleash-client\");\n\n\
         const unleash = initialize({{\n  \
         url: \"{url}/api/\",\n  \
         appName: \"{project}-service\",\n  \
         customHeaders: {{ Authorization: \"<a server token of {project}>\" }},\n}});\n\
         unleash.on(\"synchronized\", () => console.log(unleash.isEnabled(\"my-flag\")));\n"
    );
    let curl = format!(
        "curl -H 'Authorization: <a frontend token of {project}>' \\\n  \
         '{url}/api/frontend?userId=alice'\n"
    );
    let flags = who.link(&format!("/projects/{project}"));
    let markup = who.shell().render(
        "Connect an SDK",
        html! {
            div.page-head { div {
                h1 { "Connect an SDK" }
                p.subtitle { "to project " strong { (current.name) } " · " a href=(flags) { "← its flags" } }
            } }
            section.card aria-labelledby="where-title" {
                h2 #where-title { "1. Where SDKs connect" }
                (snippet("sdk-url", "SDK address", &url))
                @if state.sdk_url.is_none() {
                    p.hint { "This control plane's own address: it answers SDKs too. Behind edges, start it with "
                        code { "--sdk-url" } " (your edges' address) and this page shows that." }
                }
            }
            section.card aria-labelledby="token-title" {
                h2 #token-title { "2. A token" }
                p { "Browsers and mobile apps use a " strong { "frontend" } " token, servers a "
                    strong { "server (client)" } " token. A token reads one environment." }
                @match &readers {
                    Some(readers) if !readers.is_empty() => {
                        p { "Tokens that can read " (current.name) " (their secrets were shown once, when created):" }
                        ul.found {
                            @for token in readers {
                                li { strong { (token.token_name) } " " span.muted { (token.token_type) " · " (token.environment) } }
                            }
                        }
                    }
                    Some(_) => { p.muted { "No token reads this project yet." } }
                    None => {}
                }
                @if may_create {
                    div.row-actions {
                        a.button.primary href=(new_token("frontend", "web")) { "New frontend token" }
                        a.button href=(new_token("client", "service")) { "New server token" }
                    }
                } @else {
                    p.muted { "An Admin creates tokens, on the API tokens page." }
                }
            }
            section.card aria-labelledby="code-title" {
                h2 #code-title { "3. The code" }
                (snippet("snippet-browser", "In the browser (npm install unleash-proxy-client)", &browser))
                (snippet("snippet-server", "On a Node.js server (npm install unleash-client)", &server))
                (snippet("snippet-curl", "Or try it with curl", &curl))
            }
            section.card aria-labelledby="check-title" {
                h2 #check-title { "4. See it work" }
                p { "Once the SDK has asked, its flags show when they were last seen on "
                    a href=(flags) { "the flag list" } ", and the SDK itself under "
                    a href=(who.link("/applications")) { "Applications" } "." }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}
