//! Favourites in the UI: the star that marks a flag or a project as the signed-in user's favourite (on the
//! flag list, the flag's page and the project list; favourites are listed first), and its two form posts
//! (`POST /projects/<p>/features/<f>/favorite`, `POST /projects/<p>/favorite`) through
//! `domain::favorites`, as the admin API's favorites routes. A caller with no user (signed in with an admin
//! token) has no favourites: no star is drawn.

use super::controls::local_path;
use super::page::UiError;
use super::scope::Done;
use super::session::{InOwnAccount, SignedIn, UiWrite};
use crate::domain::favorites;
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// This module's form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/projects/{project}/features/{feature}/favorite",
            post(set_flag),
        )
        .route("/projects/{project}/favorite", post(set_project))
}

/// The star of `name` (a flag or project): a toggle button (`aria-pressed`) named "Favourite <name>", in a
/// form posting to `action` that comes back to `back` (whose `#fragment` is the button's id, so the page
/// lands on it again). Nothing for a caller without a user.
pub fn star(who: &SignedIn, name: &str, favorite: bool, action: &str, back: &str) -> Markup {
    let id = back.split_once('#').map(|(_, fragment)| fragment);
    let title = if favorite {
        format!("{name} is one of your favourites: press to unmark it")
    } else {
        format!("Mark {name} as one of your favourites")
    };
    html! {
        @if who.actor.user_id >= 0 {
            form.favorite-form method="post" action=(action) {
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="favorite" value=(if favorite { "false" } else { "true" });
                input type="hidden" name="back" value=(back);
                button.star type="submit" id=[id] aria-pressed=(if favorite { "true" } else { "false" })
                    aria-label=(format!("Favourite {name}")) title=(title) {
                    (if favorite { "★" } else { "☆" })
                }
            }
        }
    }
}

/// The id of a flag's star on a page (the fragment its form comes back to).
pub fn star_id(flag: &str) -> String {
    format!("favorite--{flag}")
}

/// `POST /projects/<p>/features/<f>/favorite` (`favorite=true|false`, `back`).
async fn set_flag(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite<InOwnAccount>,
) -> Result<Response, UiError> {
    let favorite = form.get("favorite") == Some("true");
    let back = local_path(&who.base, form.get("back"));
    let mut tx = state.store.begin_write(&who.actor).await?;
    favorites::set_feature(&mut tx, &project, &feature, favorite).await?;
    state.commit(tx).await?;
    let notice = if favorite {
        format!("{feature} is one of your favourites: it is listed first.")
    } else {
        format!("{feature} is no longer one of your favourites.")
    };
    Ok(Done::to(back, notice).into_response())
}

/// `POST /projects/<p>/favorite` (`favorite=true|false`, `back`).
async fn set_project(
    State(state): State<Arc<AppState>>,
    Path(project): Path<String>,
    UiWrite { who, form, .. }: UiWrite<InOwnAccount>,
) -> Result<Response, UiError> {
    let favorite = form.get("favorite") == Some("true");
    let back = local_path(&who.base, form.get("back"));
    let mut tx = state.store.begin_write(&who.actor).await?;
    favorites::set_project(&mut tx, &project, favorite).await?;
    state.commit(tx).await?;
    let notice = if favorite {
        format!("Project {project} is one of your favourites: it is listed first.")
    } else {
        format!("Project {project} is no longer one of your favourites.")
    };
    Ok(Done::to(back, notice).into_response())
}
