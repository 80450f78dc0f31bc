//! What the access pages (API tokens, users, groups, profile) share: the root-role choice, and the pages of a
//! long list ([`Paged`]).

use crate::domain::roles::RootRole;
use maud::{html, Markup};

/// Rows per page of the access lists.
pub const PAGE_SIZE: usize = 25;

/// The options of a root-role select, `current` selected (by id).
pub fn role_options(current: Option<i64>) -> Markup {
    html! {
        @for role in RootRole::ALL {
            option value=(role.id()) selected[current == Some(role.id())] { (role.name()) }
        }
    }
}

/// The root role's name of an id as stored.
pub fn role_name(id: i64) -> &'static str {
    RootRole::from_id(id)
        .map(RootRole::name)
        .unwrap_or("Unknown")
}

/// One page of a list: which rows show and the pager under them.
pub struct Paged {
    pub page: usize,
    pub pages: usize,
    pub total: usize,
}

impl Paged {
    /// Page `asked` (from 1; past the end shows the last) of `total` rows.
    pub fn new(asked: Option<usize>, total: usize) -> Paged {
        let pages = total.div_ceil(PAGE_SIZE).max(1);
        Paged {
            page: asked.unwrap_or(1).clamp(1, pages),
            pages,
            total,
        }
    }

    /// This page's rows of `rows`.
    pub fn slice<'a, T>(&self, rows: &'a [T]) -> &'a [T] {
        let start = ((self.page - 1) * PAGE_SIZE).min(rows.len());
        let end = (start + PAGE_SIZE).min(rows.len());
        &rows[start..end]
    }

    /// The pager (nothing for a single page); `link` gives a page's URL.
    pub fn pager(&self, link: impl Fn(usize) -> String) -> Markup {
        let first = (self.page - 1) * PAGE_SIZE + 1;
        let last = (self.page * PAGE_SIZE).min(self.total);
        html! {
            @if self.pages > 1 {
                div.pager {
                    span { "Showing " (first) "–" (last) " of " (self.total) }
                    nav aria-label="Pages" {
                        @if self.page > 1 {
                            a.button href=(link(self.page - 1)) { "Previous page" }
                        }
                        span.muted { "Page " (self.page) " of " (self.pages) }
                        @if self.page < self.pages {
                            a.button href=(link(self.page + 1)) { "Next page" }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_the_rows() {
        let rows: Vec<usize> = (0..60).collect();
        let paged = Paged::new(Some(3), rows.len());
        assert_eq!(paged.pages, 3);
        assert_eq!(paged.slice(&rows), &rows[50..60]);
        assert_eq!(Paged::new(Some(9), rows.len()).page, 3);
        assert_eq!(Paged::new(None, 0).slice::<usize>(&[]).len(), 0);
        assert!(Paged::new(None, 3)
            .pager(|page| page.to_string())
            .into_string()
            .is_empty());
    }
}
