//! The variants form of one environment of a flag (`/projects/<project>/features/<flag>/variants`): rows
//! added and removed by posting the form back (drawn again with the focus on the new row), saved through the
//! API's variants write or proposed as a change request.

use super::controls::enter_saves;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use super::variant_editor::{
    drafts_of, edit_variants, variant_fields, variant_focus, variant_rows, VariantDraft,
};
use crate::domain::access::Scope;
use crate::domain::change_requests;
use crate::domain::{features, variants};
use crate::http::state::AppState;
use crate::model::change_request::Change;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's page and form post.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route(
        "/projects/{project}/features/{feature}/variants",
        get(variants_page).post(save_variants),
    )
}

/// The field-name prefix of the flag-level variant editor.
const FLAG_PREFIX: &str = "v";

#[derive(Debug, Deserialize)]
pub struct VariantsQuery {
    environment: String,
}

fn variants_form(
    who: &SignedIn,
    (project, feature, environment): (&str, &str, &str),
    drafts: &[VariantDraft],
    (error, focus): (Option<&ApiError>, Option<&str>),
    status: StatusCode,
) -> Page {
    let shell = who.shell();
    let errors = FieldErrors::of(
        error,
        &variant_fields(FLAG_PREFIX, drafts, true),
        &format!("{FLAG_PREFIX}-variants"),
    );
    let base = who.link(&format!("/projects/{project}/features/{feature}"));
    let may_vary = who.may_submit(
        "/projects/{project}/features/{feature}/variants",
        &Scope::environment(project, environment),
    );
    let markup = shell.render(
        "Variants",
        html! {
            div.page-head {
                div {
                    h1 { "Variants" }
                    p.subtitle { "Flag " a href=(base) { (feature) } " in " strong { (environment) } }
                }
            }
            (errors.general())
            form.form-narrow #variants-form method="post" action=(format!("{base}/variants")) data-redraw {
                @if may_vary { (enter_saves("Save variants")) }
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="environment" value=(environment);
                @if drafts.is_empty() {
                    p.muted { "No variants: SDKs get the flag's on/off only." }
                }
                (variant_rows(may_vary, FLAG_PREFIX, drafts, (true, focus), &errors))
                @if may_vary {
                    div.actions {
                        @let add = format!("add-{FLAG_PREFIX}");
                        button id=(add) type="submit" formnovalidate name="intent" value=(add)
                            autofocus[focus == Some(add.as_str())] { "Add variant" }
                        button.primary type="submit" name="intent" value="save" { "Save variants" }
                        a href=(base) { "Cancel" }
                    }
                }
            }
        },
    );
    Page { status, markup }
}

/// `GET …/variants?environment=`.
pub async fn variants_page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
    Query(query): Query<VariantsQuery>,
) -> Result<Response, UiError> {
    let stored = {
        let mut conn = state.store.read().await?;
        features::get(&mut conn, &project, &feature).await?;
        variants::get(&mut conn, &project, &feature, &query.environment).await?
    };
    let drafts: Vec<VariantDraft> = stored.variants.iter().map(VariantDraft::of_flag).collect();
    let place = (
        project.as_str(),
        feature.as_str(),
        query.environment.as_str(),
    );
    Ok(variants_form(&who, place, &drafts, (None, None), StatusCode::OK).into_response())
}

/// `POST …/variants`: add or remove a row (drawn again), or save through the API's variants write (or a
/// change request draft).
pub async fn save_variants(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let environment = form.text("environment");
    let mut drafts = drafts_of(&form, FLAG_PREFIX);
    let place = (project.as_str(), feature.as_str(), environment.as_str());
    let intent = form.get("intent").unwrap_or("save");
    if edit_variants(intent, FLAG_PREFIX, &mut drafts) || intent != "save" {
        let focus = variant_focus(intent, FLAG_PREFIX, &drafts);
        let page = variants_form(
            &who,
            place,
            &drafts,
            (None, focus.as_deref()),
            StatusCode::OK,
        );
        return Ok(page.into_response());
    }
    let done = async {
        let variants = drafts
            .iter()
            .enumerate()
            .map(|(index, draft)| draft.to_flag_variant(index))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tx = state.store.begin_write(&who.actor).await?;
        let outcome = change_requests::make_or_propose(
            &mut tx,
            (&project, &environment, &feature),
            Change::PatchVariant { variants },
            &state.limits,
        )
        .await?;
        state.commit(tx).await?;
        Ok(Done::after_change(
            who.link(&format!("/projects/{project}/features/{feature}")),
            outcome,
            format!("The variants in {environment} were saved."),
        ))
    }
    .await;
    written(done, async |error| {
        let page = variants_form(&who, place, &drafts, (Some(error), None), StatusCode::OK);
        Ok(page.into_response())
    })
    .await
}
