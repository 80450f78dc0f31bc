//! Evaluating a snapshot for a context: the walk over its flags (a flag without parents or children decided
//! inline by its strategies), dependency resolution with parents' resolutions remembered, and the variant of
//! an enabled flag.

use std::sync::Arc;

use super::eval::{with_eval, Eval};
use super::snapshot::{Chunk, CompiledFeature, Dependency, Snapshot};
use super::strategy::CompiledStrategy;
use super::variant::{CompiledVariant, VariantView};
use crate::context::Context;

/// Which projects' flags an evaluation may see. Cloned with every request's scope: the list is shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projects {
    All,
    Only(Arc<[String]>),
}

impl Projects {
    /// A token's project list: `*` anywhere (or an empty list) means every project.
    pub fn from_list<S: AsRef<str>>(list: &[S]) -> Self {
        if list.is_empty() || list.iter().any(|p| p.as_ref() == "*") {
            Projects::All
        } else {
            Projects::Only(list.iter().map(|p| p.as_ref().to_owned()).collect())
        }
    }

    /// The list [`Projects::from_list`] reads back to this: `["*"]` for every project.
    pub fn to_list(&self) -> Vec<String> {
        match self {
            Projects::All => vec!["*".to_owned()],
            Projects::Only(list) => list.to_vec(),
        }
    }

    /// Whether flags of `project` may be seen.
    pub fn includes(&self, project: &str) -> bool {
        match self {
            Projects::All => true,
            Projects::Only(list) => list.iter().any(|p| p == project),
        }
    }
}

/// One flag's result, in the shape of an entry of the frontend API's `toggles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvaluatedToggle<'s> {
    pub name: &'s str,
    pub enabled: bool,
    pub impression_data: bool,
    pub variant: VariantView<'s>,
}

/// How a flag came out for a context.
#[derive(Debug, Clone, Copy)]
pub(super) enum Resolution {
    Off,
    /// On, decided by the strategy at this index, or by having no strategy at all.
    On(Option<usize>),
}

impl Resolution {
    /// As a memo cell: 0 is "not worked out yet".
    fn encode(self) -> u32 {
        match self {
            Resolution::Off => 1,
            Resolution::On(None) => 2,
            Resolution::On(Some(i)) => 3 + i as u32,
        }
    }

    fn decode(cell: u32) -> Option<Self> {
        match cell {
            0 => None,
            1 => Some(Resolution::Off),
            2 => Some(Resolution::On(None)),
            n => Some(Resolution::On(Some((n - 3) as usize))),
        }
    }
}

impl Chunk {
    fn strategies_of(&self, f: &CompiledFeature) -> &[CompiledStrategy] {
        &self.strategies[f.strategies.start as usize..f.strategies.end as usize]
    }

    /// What `f`'s strategies make of the context: on by the first that is on, or by having none; off
    /// otherwise. Its switch and dependencies are the caller's.
    #[inline(always)]
    fn strategies_decide(&self, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        let strategies = self.strategies_of(f);
        if strategies.is_empty() {
            return Resolution::On(None);
        }
        match strategies
            .iter()
            .position(|s| s.is_on(e, &self.constraints, &self.constraint_slots))
        {
            Some(i) => Resolution::On(Some(i)),
            None => Resolution::Off,
        }
    }

    /// The variant of an enabled flag of this chunk: the deciding strategy's variants if it has any, else
    /// the flag's; `None` when there is none to give. Most flags have no variants anywhere: they are
    /// answered inline.
    #[inline(always)]
    pub(super) fn variant_of<'s>(
        &'s self,
        f: &'s CompiledFeature,
        by: Option<usize>,
        e: &Eval<'_>,
    ) -> Option<&'s CompiledVariant> {
        if f.has_variants {
            self.select_variant(f, by, e)
        } else {
            None
        }
    }

    fn select_variant<'s>(
        &'s self,
        f: &'s CompiledFeature,
        by: Option<usize>,
        e: &Eval<'_>,
    ) -> Option<&'s CompiledVariant> {
        by.and_then(|i| self.strategies_of(f)[i].variants.as_deref())
            .or(f.variants.as_deref())
            .and_then(|s| s.select(e))
    }
}

impl Snapshot {
    /// Whether the named flag is enabled for the context; an unknown flag is not.
    pub fn is_enabled(&self, name: &str, ctx: &Context) -> bool {
        self.evaluate(name, ctx).is_some_and(|t| t.enabled)
    }

    /// The variant the context gets for the named flag; `disabled` (flag not enabled) for an unknown flag.
    pub fn variant(&self, name: &str, ctx: &Context) -> VariantView<'_> {
        self.evaluate(name, ctx)
            .map_or(VariantView::disabled(false), |t| t.variant)
    }

    /// One flag, enabled or not; `None` for an unknown flag.
    pub fn evaluate(&self, name: &str, ctx: &Context) -> Option<EvaluatedToggle<'_>> {
        let &i = self.by_name.get(name)?;
        let (chunk, f) = self.locate(i);
        let (enabled, variant) = self.with_evaluation(ctx, |e| match self.resolved(chunk, f, e) {
            Resolution::Off => (false, VariantView::disabled(false)),
            Resolution::On(by) => (true, VariantView::of(chunk.variant_of(f, by, e))),
        });
        Some(EvaluatedToggle {
            name: &f.name,
            enabled,
            impression_data: f.impression_data,
            variant,
        })
    }

    /// The enabled flags of the projects in scope, sorted by name, in the shape of the frontend API's
    /// `toggles`.
    pub fn evaluate_all(&self, ctx: &Context, projects: &Projects) -> Vec<EvaluatedToggle<'_>> {
        let mut out = Vec::new();
        self.evaluate_all_into(ctx, projects, &mut out);
        out
    }

    /// [`Snapshot::evaluate_all`] into a caller's buffer (cleared first), so that a loop can reuse it.
    pub fn evaluate_all_into<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        out: &mut Vec<EvaluatedToggle<'s>>,
    ) {
        out.clear();
        self.for_each_enabled(ctx, projects, |_, f, variant| {
            out.push(EvaluatedToggle {
                name: &f.name,
                enabled: true,
                impression_data: f.impression_data,
                variant: VariantView::of(variant),
            })
        });
    }

    /// Calls `visit` with each chunk, in name order: the index of its first flag, the chunk, which projects
    /// are in scope (a visitor passes over the flags [`in_scope`] refuses) and the evaluation of `ctx` they
    /// all share.
    #[inline(always)]
    pub(super) fn for_each_chunk<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        mut visit: impl FnMut(usize, &'s Chunk, &ProjectMask, &Eval<'_>),
    ) {
        let mask = self.project_mask(projects);
        with_eval(ctx, &self.properties, self.parent_count, |e| {
            for (chunk, &start) in self.chunks.iter().zip(self.starts.iter()) {
                visit(start as usize, chunk, &mask, e);
            }
        });
    }

    /// Runs `run` with an evaluation of `ctx` prepared for this snapshot.
    pub(super) fn with_evaluation<R>(&self, ctx: &Context, run: impl FnOnce(&Eval<'_>) -> R) -> R {
        with_eval(ctx, &self.properties, self.parent_count, run)
    }

    /// Which projects are in scope, by project index ([`in_scope`]).
    fn project_mask(&self, projects: &Projects) -> ProjectMask {
        let included = || self.projects.iter().map(|p| projects.includes(p));
        match projects {
            Projects::All => ProjectMask::All,
            Projects::Only(_) if self.projects.len() <= 64 => ProjectMask::Bits(
                included()
                    .enumerate()
                    .fold(0, |bits, (i, yes)| bits | (u64::from(yes) << i)),
            ),
            Projects::Only(_) => ProjectMask::Listed(included().collect()),
        }
    }

    /// Calls `found` with each enabled flag of the projects in scope, in name order, and its variant.
    pub(super) fn for_each_enabled<'s>(
        &'s self,
        ctx: &Context,
        projects: &Projects,
        mut found: impl FnMut(usize, &'s CompiledFeature, Option<&'s CompiledVariant>),
    ) {
        self.for_each_chunk(ctx, projects, |start, chunk, mask, e| {
            for (offset, f) in chunk.features.iter().enumerate() {
                if !f.switched_on || !in_scope(mask, f) {
                    continue;
                }
                if let Resolution::On(by) = self.decided(chunk, f, e) {
                    found(start + offset, f, chunk.variant_of(f, by, e));
                }
            }
        });
    }

    /// [`Snapshot::resolved`], with most flags (no parents, no children) decided inline by their switch and
    /// strategies alone.
    #[inline(always)]
    pub(super) fn decided(&self, chunk: &Chunk, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        if f.dependencies.is_empty() && f.memo_slot.is_none() {
            if f.switched_on {
                chunk.strategies_decide(f, e)
            } else {
                Resolution::Off
            }
        } else {
            self.resolved(chunk, f, e)
        }
    }

    /// [`Snapshot::resolve`], remembered for the rest of the evaluation when other flags depend on `f`.
    pub(super) fn resolved(&self, chunk: &Chunk, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        let Some(cell) = f.memo_slot.and_then(|slot| e.parents.get(slot as usize)) else {
            return self.resolve(chunk, f, e);
        };
        if let Some(known) = Resolution::decode(cell.get()) {
            return known;
        }
        let resolution = self.resolve(chunk, f, e);
        cell.set(resolution.encode());
        resolution
    }

    fn resolve(&self, chunk: &Chunk, f: &CompiledFeature, e: &Eval<'_>) -> Resolution {
        if !f.switched_on {
            return Resolution::Off;
        }
        for d in f.dependencies.iter() {
            if !self.dependency_met(d, e) {
                return Resolution::Off;
            }
        }
        chunk.strategies_decide(f, e)
    }

    fn dependency_met(&self, d: &Dependency, e: &Eval<'_>) -> bool {
        let Some(p) = d.parent else {
            return false;
        };
        let (chunk, parent) = self.locate(p);
        match self.resolved(chunk, parent, e) {
            Resolution::Off => !d.expect_enabled,
            Resolution::On(by) => {
                d.expect_enabled
                    && (d.variants.is_empty() || {
                        let chosen = VariantView::of(chunk.variant_of(parent, by, e));
                        d.variants.iter().any(|v| **v == *chosen.name)
                    })
            }
        }
    }
}

/// Which of a snapshot's projects a request may see, by project index: a bit each when they are few (no
/// allocation per request), else a list.
pub(super) enum ProjectMask {
    All,
    Bits(u64),
    Listed(Vec<bool>),
}

/// Whether `f` is of a project in scope (`mask`: [`Snapshot::for_each_chunk`]'s).
#[inline(always)]
pub(super) fn in_scope(mask: &ProjectMask, f: &CompiledFeature) -> bool {
    match mask {
        ProjectMask::All => true,
        ProjectMask::Bits(bits) => bits >> f.project & 1 == 1,
        ProjectMask::Listed(listed) => listed.get(f.project as usize) == Some(&true),
    }
}

#[cfg(test)]
mod tests {
    use super::Projects;

    #[test]
    fn a_project_list_reads_back_to_itself() {
        for list in [vec!["*"], vec!["default", "payments"]] {
            let projects = Projects::from_list(&list);
            assert_eq!(projects.to_list(), list);
            assert_eq!(Projects::from_list(&projects.to_list()), projects);
        }
        assert_eq!(Projects::from_list::<&str>(&[]).to_list(), ["*"]);
    }
}
