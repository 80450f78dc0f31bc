//! The pages of a long list shown whole from memory (the access and configuration lists): which rows a page
//! shows ([`Paged`]), the `?page=` query ([`PageQuery`]) and the pager under the table ("Previous page",
//! "Page X of Y", "Next page"); and the searched lists' query ([`ListQuery`]: the search text and the page).

use super::session::SignedIn;
use maud::{html, Markup};
use serde::Deserialize;

/// Rows per page.
pub const PAGE_SIZE: usize = 25;

/// A list page's query: the page (from 1).
#[derive(Debug, Default, Deserialize)]
pub struct PageQuery {
    pub page: Option<usize>,
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

/// The archive's and the segments' query string: the search text and the page.
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    pub query: String,
    pub page: Option<usize>,
}

impl ListQuery {
    /// The link to page `page` of the list at `path`, keeping the search.
    pub fn page_link(&self, who: &SignedIn, path: &str, page: usize) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if !self.query.trim().is_empty() {
            query.append_pair("query", self.query.trim());
        }
        query.append_pair("page", &page.to_string());
        who.link(&format!("{path}?{}", query.finish()))
    }

    /// The search form of a list.
    pub fn form(&self, who: &SignedIn, path: &str, label: &str, placeholder: &str) -> Markup {
        html! {
            form.filters method="get" action=(who.link(path)) role="search" {
                div.field {
                    label for="search" { (label) }
                    input #search type="search" name="query" value=(self.query) placeholder=(placeholder);
                }
                button type="submit" { "Search" }
            }
        }
    }

    /// The empty state of a list: nothing at all, or nothing matching the search.
    pub fn empty(&self, who: &SignedIn, path: &str, none: &str, what: &str) -> Markup {
        html! {
            div.empty {
                @if self.query.trim().is_empty() {
                    p { (none) }
                } @else {
                    p { "No " (what) " matches \u{201c}" (self.query.trim()) "\u{201d}." }
                    a href=(who.link(path)) { "Clear the search" }
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
