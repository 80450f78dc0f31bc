//! The admin web UI's HTML tests' browser: a client without JavaScript that keeps its cookies and does not
//! follow redirects, and the page it gets back (`ui`, `ui_access`, `ui_changes`, `ui_config`).

use crate::server::Server;
use std::collections::BTreeMap;

/// A browser without JavaScript: its own cookies, redirects not followed.
pub(crate) struct Browser {
    pub(crate) client: reqwest::Client,
    pub(crate) base: String,
    pub(crate) cookies: BTreeMap<String, String>,
}

/// A page: status, `Location` for redirects, headers' values we check, and the HTML.
#[derive(Debug)]
pub(crate) struct Html {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    pub(crate) content_type: String,
    pub(crate) csp: String,
    pub(crate) set_cookies: Vec<String>,
    pub(crate) text: String,
}

impl Html {
    pub(crate) fn expect(&self, status: u16) -> &str {
        assert_eq!(self.status, status, "page: {}", self.text);
        &self.text
    }

    /// The value of the first hidden `csrf` field.
    pub(crate) fn csrf(&self) -> String {
        let at = self
            .text
            .find("name=\"csrf\" value=\"")
            .expect("a CSRF field");
        let rest = &self.text[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }

    pub(crate) fn has(&self, fragment: &str) -> bool {
        self.text.contains(fragment)
    }
}

impl Browser {
    pub(crate) fn new(server: &Server) -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: server.base.clone(),
            cookies: BTreeMap::new(),
        }
    }

    pub(crate) async fn send(&mut self, request: reqwest::RequestBuilder) -> Html {
        let cookie = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        let request = if cookie.is_empty() {
            request
        } else {
            request.header("Cookie", cookie)
        };
        let response = request.send().await.expect("request");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        let (location, content_type, csp) = (
            Some(header("location")).filter(|value| !value.is_empty()),
            header("content-type"),
            header("content-security-policy"),
        );
        let set_cookies: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|value| value.to_str().unwrap().to_owned())
            .collect();
        for set in &set_cookies {
            let pair = set.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        let status = response.status().as_u16();
        Html {
            status,
            location,
            content_type,
            csp,
            set_cookies,
            text: response.text().await.expect("body"),
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Html {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Html {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body);
        self.send(request).await
    }

    /// The body of a page that must answer 200.
    pub(crate) async fn page(&mut self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.text);
        page.text
    }

    /// Signs in as a person does: opens `/login` (which sets the CSRF cookie and puts its token in the form)
    /// and posts the form with `fields`.
    pub(crate) async fn sign_in(&mut self, fields: &[(&str, &str)]) -> Html {
        let csrf = self.get("/login").await.csrf();
        let mut form = fields.to_vec();
        form.push(("csrf", &csrf));
        self.post("/login", &form).await
    }
}
