//! The release templates' pages and a flag's release plan on its page, over HTTP through the real binary:
//! create a template with milestones and their strategies (refusals drawn with what was typed), apply it to a
//! flag in an environment, start its milestones (the flag's strategies follow), and what a Viewer sees.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(release_templates_and_a_flags_release_plan_in_the_ui);

const FLAG: &str = "/projects/default/features/checkout";

/// The rollouts of checkout's strategies in development.
async fn rollouts(server: &Server) -> Vec<String> {
    let path = "/api/admin/projects/default/features/checkout/environments/development/strategies";
    server
        .get(path)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|strategy| {
            strategy["parameters"]["rollout"]
                .as_str()
                .unwrap_or("-")
                .to_owned()
        })
        .collect()
}

/// Adds a milestone `name` on the template's page `edit`, then a flexibleRollout of `rollout` % to it.
async fn milestone_with_rollout(
    browser: &mut Browser,
    server: &Server,
    edit: &str,
    name: &str,
    rollout: &str,
) {
    let csrf = browser.get(edit).await.csrf();
    let id = edit.rsplit('/').next().unwrap();
    let added = browser
        .post(
            &format!("/release-templates/{id}/milestones"),
            &[("csrf", &csrf), ("name", name), ("minutes", "")],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.text);
    let template: Value = server
        .get(&format!("/api/admin/release-plan-templates/{id}"))
        .await
        .expect(200)
        .clone();
    let milestone = template["milestones"]
        .as_array()
        .unwrap()
        .iter()
        .find(|milestone| milestone["name"] == name)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let strategies = format!("/release-templates/{id}/milestones/{milestone}/strategies");
    let form = browser.get(&format!("{strategies}/create")).await;
    assert!(
        form.expect(200).contains("value=\"{{featureName}}\""),
        "{}",
        form.text
    );
    assert!(
        !form.has("Disabled"),
        "a milestone's strategy has no switch"
    );
    let saved = browser
        .post(
            &format!("{strategies}/create"),
            &[
                ("csrf", &csrf),
                ("environment", ""),
                ("strategy", "flexibleRollout"),
                ("param.rollout", rollout),
                ("param.stickiness", "default"),
                ("param.groupId", "{{featureName}}"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
}

async fn release_templates_and_a_flags_release_plan_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "checkout"}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/release-templates")])
        .await;
    let list = browser.get("/release-templates").await;
    assert!(list.expect(200).contains("No release templates yet."));
    assert!(list.has(">New release template</a>"));
    let csrf = list.csrf();

    // A refused name is drawn again; a good one leads to the template's page.
    let refused = browser
        .post(
            "/release-templates/create",
            &[("csrf", &csrf), ("name", " ")],
        )
        .await;
    assert!(refused.expect(400).contains("id=\"template-name-error\""));
    let created = browser
        .post(
            "/release-templates/create",
            &[("csrf", &csrf), ("name", "Gradual <b>")],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let edit = created.location.clone().unwrap();
    assert!(edit.starts_with("/release-templates/edit/"), "{edit}");
    let page = browser.get(&edit).await;
    assert!(page.expect(200).contains("Gradual &lt;b&gt;"));
    assert!(page.has("<label for=\"new-milestone-name\">Milestone name</label>"));

    // A milestone refused (its minutes) keeps what was typed beside the message.
    let id = edit.rsplit('/').next().unwrap().to_owned();
    let refused = browser
        .post(
            &format!("/release-templates/{id}/milestones"),
            &[("csrf", &csrf), ("name", "Quarter"), ("minutes", "0")],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("value=\"Quarter\""), "{text}");
    assert!(text.contains("aria-invalid=\"true\""), "{text}");
    milestone_with_rollout(&mut browser, &server, &edit, "Quarter", "25").await;
    milestone_with_rollout(&mut browser, &server, &edit, "Everyone", "100").await;
    let page = browser.get(&edit).await;
    assert!(
        page.expect(200).contains("Milestone 2: Everyone"),
        "{}",
        page.text
    );
    let list = browser.get("/release-templates").await;
    assert!(list.expect(200).contains("Quarter → Everyone"));

    // On the flag's page: apply the template in development, start each milestone.
    let flag_page = browser.get(FLAG).await;
    assert!(flag_page
        .expect(200)
        .contains("<label for=\"template-development\">Release template</label>"));
    let applied = browser
        .post(
            &format!("{FLAG}/environments/development/release-plan"),
            &[("csrf", &csrf), ("templateId", &id)],
        )
        .await;
    assert_eq!(applied.status, 303, "{}", applied.text);
    let plans = server
        .get("/api/admin/projects/default/features/checkout/environments/development/release-plans")
        .await
        .expect(200)
        .clone();
    let plan = &plans[0];
    let flag_page = browser.get(FLAG).await;
    let text = flag_page.expect(200);
    assert!(text.contains("Release plan: Gradual &lt;b&gt;"), "{text}");
    assert!(
        text.contains("aria-label=\"Start Quarter in development\""),
        "{text}"
    );
    for (index, expected) in [(0, "25"), (1, "100")] {
        let started = browser
            .post(
                &format!("{FLAG}/environments/development/release-plan/start"),
                &[
                    ("csrf", &csrf),
                    ("planId", plan["id"].as_str().unwrap()),
                    (
                        "milestoneId",
                        plan["milestones"][index]["id"].as_str().unwrap(),
                    ),
                ],
            )
            .await;
        assert_eq!(started.status, 303, "{}", started.text);
        assert_eq!(rollouts(&server).await, [expected]);
    }
    let flag_page = browser.get(FLAG).await;
    assert!(flag_page.expect(200).contains("aria-current=\"step\""));
    // The event log says it in words.
    assert!(
        flag_page.has(
            "started the milestone <span class=\"subject\">Everyone</span> of the release plan"
        ),
        "{}",
        flag_page.text
    );
    assert!(
        flag_page.has("applied the release template"),
        "{}",
        flag_page.text
    );

    // A Viewer sees the plan, no Start and no template to apply; the post is refused.
    user_with_pat(&server, "vera", "Viewer").await;
    let mut reader = Browser::new(&server);
    reader
        .sign_in(&[("username", "vera"), ("password", "correct horse battery")])
        .await;
    let seen = reader.get(FLAG).await;
    let text = seen.expect(200);
    assert!(text.contains("Release plan: Gradual"), "{text}");
    assert!(!text.contains(">Start</button>"), "{text}");
    let refused = reader
        .post(
            &format!("{FLAG}/environments/development/release-plan/remove"),
            &[
                ("csrf", &seen.csrf()),
                ("planId", plan["id"].as_str().unwrap()),
            ],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
}
