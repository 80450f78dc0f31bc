//! `/admin/settings/banners`: the banners (`domain::banners`) every signed-in user sees on every page while
//! they are on — a list with each one's switch, Edit and Delete, a form for a new one, and the edit form.
//! Everyone who may read settings sees the list; only Admins (the admin API's Settings area) get the forms.
//! A refused form is drawn again with what was typed and the message beside its field.

use super::controls::{field, switch};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InSettings, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::banners::{self, Banner, BannerInput, VARIANTS};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

const LIST: &str = "/admin/settings/banners";

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(LIST, get(list).post(create))
        .route("/admin/settings/banners/{id}", get(edit).post(update))
        .route("/admin/settings/banners/{id}/enabled", post(switch_banner))
        .route("/admin/settings/banners/{id}/delete", post(delete))
}

fn id_of(text: &str) -> Result<i64, ApiError> {
    text.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::not_found(format!("There is no banner with id {text}")))
}

/// The body a form describes.
fn input_of(form: &FormFields) -> BannerInput {
    let some = |name: &str| Some(form.text(name)).filter(|text| !text.trim().is_empty());
    BannerInput {
        message: form.text("message"),
        enabled: Some(form.checked("enabled")),
        variant: some("variant"),
        sticky: Some(form.checked("sticky")),
        icon: None,
        link: some("link"),
        link_text: some("linkText"),
        dialog_title: some("dialogTitle"),
        dialog: some("dialog"),
    }
}

/// A banner's fields as its edit form starts with them.
fn fields_of(banner: &Banner) -> FormFields {
    let mut fields = vec![
        ("message".to_owned(), banner.message.clone()),
        ("variant".to_owned(), banner.variant.clone()),
    ];
    if banner.enabled {
        fields.push(("enabled".to_owned(), "on".to_owned()));
    }
    if banner.sticky {
        fields.push(("sticky".to_owned(), "on".to_owned()));
    }
    for (name, value) in [
        ("link", &banner.link),
        ("linkText", &banner.link_text),
        ("dialogTitle", &banner.dialog_title),
        ("dialog", &banner.dialog),
    ] {
        if let Some(value) = value {
            fields.push((name.to_owned(), value.clone()));
        }
    }
    FormFields(fields)
}

/// The create or edit form, filled from `form`, with `error` beside its field.
fn banner_form(
    who: &SignedIn,
    action: &str,
    form: &FormFields,
    error: Option<&ApiError>,
    submit: &str,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("message", "banner-message"),
            ("variant", "banner-variant"),
            ("link", "banner-link"),
            ("linkText", "banner-link-text"),
            ("dialogTitle", "banner-dialog-title"),
            ("dialog", "banner-dialog"),
        ],
        "banner-message",
    );
    let variant = form.get("variant").unwrap_or("info");
    html! {
        (errors.general())
        form.form-narrow method="post" action=(action) novalidate {
            input type="hidden" name="csrf" value=(who.csrf);
            (field("banner-message", "Message", errors.at("banner-message"),
                Some("Shown as plain text on every page, 1 to 1,000 characters"), html! {
                textarea #banner-message name="message" rows="3" required maxlength="1000"
                    aria-invalid=(errors.invalid("banner-message"))
                    aria-describedby="banner-message-hint banner-message-error" { (form.text("message")) }
            }))
            (field("banner-variant", "Kind", errors.at("banner-variant"), None, html! {
                select #banner-variant name="variant" aria-describedby="banner-variant-error" {
                    @for option in VARIANTS {
                        option value=(option) selected[option == variant] { (option) }
                    }
                }
            }))
            div.field {
                label.check {
                    input type="checkbox" name="enabled" checked[form.checked("enabled")];
                    " Shown now"
                }
            }
            div.field {
                label.check {
                    input type="checkbox" name="sticky" checked[form.checked("sticky")];
                    " Stays in view when the page scrolls"
                }
            }
            (field("banner-link", "Link", errors.at("banner-link"),
                Some("Optional: an http(s) address, a path of this instance such as /admin/settings, or dialog"), html! {
                input #banner-link type="text" name="link" value=(form.text("link")) maxlength="2000"
                    aria-invalid=(errors.invalid("banner-link"))
                    aria-describedby="banner-link-hint banner-link-error";
            }))
            (field("banner-link-text", "Link text", errors.at("banner-link-text"),
                Some("Optional; “More info” when empty"), html! {
                input #banner-link-text type="text" name="linkText" value=(form.text("linkText")) maxlength="100"
                    aria-invalid=(errors.invalid("banner-link-text"))
                    aria-describedby="banner-link-text-hint banner-link-text-error";
            }))
            (field("banner-dialog-title", "Dialog title", errors.at("banner-dialog-title"),
                Some("With the link dialog: the title of the text it opens"), html! {
                input #banner-dialog-title type="text" name="dialogTitle" value=(form.text("dialogTitle"))
                    maxlength="100" aria-invalid=(errors.invalid("banner-dialog-title"))
                    aria-describedby="banner-dialog-title-hint banner-dialog-title-error";
            }))
            (field("banner-dialog", "Dialog text", errors.at("banner-dialog"),
                Some("With the link dialog: the text it opens, plain text"), html! {
                textarea #banner-dialog name="dialog" rows="3" maxlength="10000"
                    aria-invalid=(errors.invalid("banner-dialog"))
                    aria-describedby="banner-dialog-hint banner-dialog-error" { (form.text("dialog")) }
            }))
            div.actions {
                button.primary type="submit" { (submit) }
                a href=(who.link(LIST)) { "Cancel" }
            }
        }
    }
}

async fn list_page(
    state: &AppState,
    who: &SignedIn,
    form: &FormFields,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Settings)?;
    let may_change = who.authorize(false, Area::Settings).is_ok();
    let list = {
        let mut conn = state.store.read().await?;
        banners::list(&mut conn).await?.banners
    };
    let markup = who.shell().render(
        "Banners",
        html! {
            div.page-head { div {
                h1 { "Banners" }
                p.subtitle { a href=(who.link("/admin/settings")) { "← Settings" } " · A banner that is on shows at the top of every page, for everyone signed in." }
            } }
            @if list.is_empty() {
                div.empty { p { "No banners yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Message" }
                            th scope="col" { "Kind" }
                            th scope="col" { "Shown" }
                            @if may_change { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for banner in &list {
                                tr {
                                    td { (banner.message) }
                                    td { (banner.variant) }
                                    td { (switch(who, may_change, &format!("Show banner {}", banner.id), banner.enabled,
                                        &who.link(&format!("{LIST}/{}/enabled", banner.id)), &who.link(LIST))) }
                                    @if may_change {
                                        td {
                                            a href=(who.link(&format!("{LIST}/{}", banner.id)))
                                                aria-label=(format!("Edit banner {}", banner.id)) { "Edit" }
                                            " "
                                            form.inline method="post" action=(who.link(&format!("{LIST}/{}/delete", banner.id))) {
                                                input type="hidden" name="csrf" value=(who.csrf);
                                                button.danger type="submit" aria-label=(format!("Delete banner {}", banner.id)) { "Delete" }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if may_change {
                section.card aria-labelledby="new-banner-title" {
                    h2 #new-banner-title { "New banner" }
                    (banner_form(who, &who.link(LIST), form, error, "Create banner"))
                }
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// `GET /admin/settings/banners`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    let fresh = FormFields(vec![("enabled".to_owned(), "on".to_owned())]);
    list_page(&state, &who, &fresh, None, StatusCode::OK).await
}

/// `POST /admin/settings/banners`: a new banner.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InSettings>,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        banners::create(&mut tx, input_of(&form)).await?;
        state.commit(tx).await?;
        Ok(Done::to(who.link(LIST), "The banner was created."))
    }
    .await;
    written(done, async |error| {
        list_page(&state, &who, &form, Some(error), StatusCode::BAD_REQUEST).await
    })
    .await
}

fn edit_page(
    who: &SignedIn,
    id: i64,
    form: &FormFields,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Response {
    let markup = who.shell().render(
        "Edit banner",
        html! {
            div.page-head { div {
                h1 { "Edit banner" }
                p.subtitle { a href=(who.link(LIST)) { "← Banners" } }
            } }
            (banner_form(who, &who.link(&format!("{LIST}/{id}")), form, error, "Save banner"))
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /admin/settings/banners/<id>`: the edit form (Admins).
pub async fn edit(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    who: SignedIn,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Settings)?;
    let id = id_of(&id)?;
    let banner = {
        let mut conn = state.store.read().await?;
        banners::get(&mut conn, id).await?
    };
    Ok(edit_page(
        &who,
        id,
        &fields_of(&banner),
        None,
        StatusCode::OK,
    ))
}

/// `POST /admin/settings/banners/<id>`: the banner's fields as typed.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, form, .. }: UiWrite<InSettings>,
) -> Result<Response, UiError> {
    let id = id_of(&id)?;
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        banners::update(&mut tx, id, input_of(&form)).await?;
        state.commit(tx).await?;
        Ok(Done::to(who.link(LIST), "The banner was saved."))
    }
    .await;
    written(done, async |error| {
        Ok(edit_page(
            &who,
            id,
            &form,
            Some(error),
            StatusCode::BAD_REQUEST,
        ))
    })
    .await
}

/// `POST /admin/settings/banners/<id>/enabled` (`enabled`): the banner on or off.
pub async fn switch_banner(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, form, .. }: UiWrite<InSettings>,
) -> Result<Response, UiError> {
    let id = id_of(&id)?;
    let enabled = form.get("enabled") == Some("true");
    let mut tx = state.store.begin_write(&who.actor).await?;
    banners::set_enabled(&mut tx, id, enabled).await?;
    state.commit(tx).await?;
    let said = if enabled {
        "The banner is shown."
    } else {
        "The banner is hidden."
    };
    Ok(Done::to(who.link(LIST), said).into_response())
}

/// `POST /admin/settings/banners/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, .. }: UiWrite<InSettings>,
) -> Result<Response, UiError> {
    let id = id_of(&id)?;
    let mut tx = state.store.begin_write(&who.actor).await?;
    banners::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(who.link(LIST), "The banner was deleted.").into_response())
}
