//! `/archive`: archived flags, searchable and a page at a time; revive, delete for good.

use super::controls::when;
use super::page::{Page, UiError};
use super::paging::{ListQuery, Paged, PAGE_SIZE};
use super::scope::Done;
use super::session::{SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::search::features::{
    self as feature_search, FeatureSearchItem, FeatureSearchQuery,
};
use crate::domain::{feature_lookup, features};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// The archive's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/archive", get(list))
        .route("/archive/{feature}/revive", post(revive))
        .route("/archive/{feature}/delete", post(delete))
}

/// `GET /archive`: archived flags, the last archived first, found by name or description, a page at a time
/// (through the flag search, so one page costs the same with 10 or 100,000 archived flags).
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let asked = query.page.unwrap_or(1).max(1);
    let search = |page: usize| FeatureSearchQuery {
        query: Some(query.query.trim().to_owned()).filter(|text| !text.is_empty()),
        archived: Some("IS:true".to_owned()),
        sort_by: Some("archivedAt".to_owned()),
        sort_order: Some("desc".to_owned()),
        offset: Some(((page - 1) * PAGE_SIZE).to_string()),
        limit: Some(PAGE_SIZE.to_string()),
        ..FeatureSearchQuery::default()
    };
    let (list, paged) = async {
        let mut conn = state.store.read().await?;
        let mut result =
            feature_search::search(&mut conn, &search(asked), who.actor.user_id).await?;
        let paged = Paged::new(Some(asked), usize::try_from(result.total).unwrap_or(0));
        if paged.page != asked {
            // Past the end: the last page.
            result =
                feature_search::search(&mut conn, &search(paged.page), who.actor.user_id).await?;
        }
        Ok::<_, ApiError>((result.features, paged))
    }
    .await?;
    // What each flag's row offers, by the permissions in its project.
    let may = |flag: &FeatureSearchItem| {
        let scope = Scope::project(&flag.project);
        (
            who.may_submit("/archive/{feature}/revive", &scope),
            who.may_submit("/archive/{feature}/delete", &scope),
        )
    };
    let any_action = list.iter().any(|flag| may(flag) != (false, false));
    let markup = shell.render(
        "Archive",
        html! {
            div.page-head {
                div {
                    h1 { "Archive" }
                    p.subtitle { "Archived flags: out of every SDK's answers, their names still taken." }
                }
            }
            (query.form(&who, "/archive", "Search archived flags", "Name or description"))
            @if list.is_empty() {
                (query.empty(&who, "/archive", "No archived flags.", "archived flag"))
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Project" }
                            th.hide-narrow scope="col" { "Archived" }
                            @if any_action { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for flag in &list {
                                tr {
                                    td.flag-name {
                                        strong { (flag.name) }
                                        @if let Some(description) = flag.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td.hide-narrow { (flag.project) }
                                    td.hide-narrow { (flag.archived_at.as_deref().map(when).unwrap_or_default()) }
                                    @if any_action {
                                        @let (may_revive, may_delete) = may(flag);
                                        td {
                                            div.row-actions {
                                                @if may_revive {
                                                    form.inline method="post" action=(who.link(&format!("/archive/{}/revive", flag.name))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button type="submit" aria-label=(format!("Revive {}", flag.name)) { "Revive" }
                                                    }
                                                }
                                                @if may_delete {
                                                    form.inline method="post" action=(who.link(&format!("/archive/{}/delete", flag.name))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button.danger type="submit" aria-label=(format!("Delete for good: {}", flag.name)) { "Delete for good" }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| query.page_link(&who, "/archive", page)))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /archive/<flag>/revive`: back, off everywhere, on its page.
pub async fn revive(
    State(state): State<Arc<AppState>>,
    Path(feature): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    features::revive(&mut tx, &feature, &state.limits).await?;
    let project = feature_lookup::project_of(tx.conn(), &feature).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&format!("/projects/{project}/features/{feature}")),
        format!("Flag {feature} revived: it is back, off in every environment."),
    )
    .into_response())
}

/// `POST /archive/<flag>/delete`: gone for good.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(feature): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    features::delete_archived(&mut tx, &feature).await?;
    state.commit(tx).await?;
    let done = Done::to(
        who.link("/archive"),
        format!("Flag {feature} deleted for good."),
    );
    Ok(done.into_response())
}
