//! Heap allocations per evaluation, counted by a global allocator. Not a timing benchmark: it prints counts.
//!
//! - `evaluate_all_into` with a reused buffer, per context, on the generated documents (and yggdrasil's
//!   `resolve_all` for comparison);
//! - `evaluate` flag by flag, split by whether the flag came out on or off, with the flags that allocated;
//! - a document in which no flag matches any context.
//!
//! Run with `cargo bench -p vexil-shared --bench allocations`.

mod generate;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use vexil_shared::model::{Constraint, Feature, FeatureStrategy};
use vexil_shared::{Context, FeaturesDocument, Projects, Snapshot};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes requested while `f` runs.
fn count<R>(f: impl FnOnce() -> R) -> (u64, u64, R) {
    let a = ALLOCATIONS.load(Ordering::Relaxed);
    let b = BYTES.load(Ordering::Relaxed);
    let r = f();
    (
        ALLOCATIONS.load(Ordering::Relaxed) - a,
        BYTES.load(Ordering::Relaxed) - b,
        r,
    )
}

const CONTEXTS: usize = 10_000;
/// Contexts for the flag-by-flag count (flags × contexts evaluations).
const PER_FLAG_CONTEXTS: usize = 2_000;

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would run this too: keep it cheap there.
    let quick =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let contexts_n = if quick { 500 } else { CONTEXTS };
    let per_flag_n = if quick { 100 } else { PER_FLAG_CONTEXTS };

    let contexts = generate::contexts(contexts_n, generate::CONTEXT_SEED);
    let ygg_contexts: Vec<unleash_yggdrasil::Context> = contexts
        .iter()
        .map(generate::to_yggdrasil_context)
        .collect();

    for flags in [200, 2_000] {
        let doc = generate::document(flags, generate::DOCUMENT_SEED);
        let snapshot = generate::vexil_snapshot(&doc);
        let engine = generate::yggdrasil_engine(&doc);
        println!("== {flags} flags");

        // evaluate_all_into, reused buffer. One pass first, so that the buffer reaches its largest size and
        // one-time lazy state (regex caches) is built; then count a second pass.
        let mut out = Vec::new();
        for ctx in &contexts {
            snapshot.evaluate_all_into(ctx, &Projects::All, &mut out);
        }
        let (allocs, bytes, ()) = count(|| {
            for ctx in &contexts {
                snapshot.evaluate_all_into(black_box(ctx), &Projects::All, &mut out);
                black_box(out.len());
            }
        });
        report(
            "vexil evaluate_all_into (reused Vec, Projects::All)",
            allocs,
            bytes,
            contexts.len(),
        );

        let only = Projects::Only(["default".to_owned(), "payments".to_owned()].into());
        let (allocs, bytes, ()) = count(|| {
            for ctx in &contexts {
                snapshot.evaluate_all_into(black_box(ctx), &only, &mut out);
                black_box(out.len());
            }
        });
        report(
            "vexil evaluate_all_into (reused Vec, Projects::Only)",
            allocs,
            bytes,
            contexts.len(),
        );

        let (allocs, bytes, ()) = count(|| {
            for ctx in &contexts {
                black_box(snapshot.evaluate_all(black_box(ctx), &Projects::All));
            }
        });
        report(
            "vexil evaluate_all (new Vec each time)",
            allocs,
            bytes,
            contexts.len(),
        );

        let (allocs, bytes, ()) = count(|| {
            for ctx in &ygg_contexts {
                black_box(engine.resolve_all(black_box(ctx), &None));
            }
        });
        report("yggdrasil resolve_all", allocs, bytes, contexts.len());

        per_flag(&doc, &snapshot, &contexts[..per_flag_n]);
        by_construct(&doc, &contexts[..per_flag_n]);

        // The same flags, none of which can match: every strategy gets a constraint no context meets. (The
        // engine may try that constraint first, so this shows what an evaluation costs beyond the flags
        // themselves; `per_flag` above shows what flags that do not match cost.)
        let mut none = doc.clone();
        for f in &mut none.features {
            if f.strategies.is_empty() {
                f.enabled = false;
            }
            for s in &mut f.strategies {
                s.constraints.push(Constraint {
                    context_name: "appName".into(),
                    operator: "IN".into(),
                    case_insensitive: false,
                    inverted: false,
                    values: vec!["no-such-app".into()],
                    value: None,
                });
            }
        }
        let none_snapshot = generate::vexil_snapshot(&none);
        for ctx in &contexts {
            none_snapshot.evaluate_all_into(ctx, &Projects::All, &mut out);
        }
        let (allocs, bytes, ()) = count(|| {
            for ctx in &contexts {
                none_snapshot.evaluate_all_into(black_box(ctx), &Projects::All, &mut out);
                assert!(out.is_empty(), "a flag matched in the no-match document");
            }
        });
        report(
            "vexil evaluate_all_into, no flag matches",
            allocs,
            bytes,
            contexts.len(),
        );
        println!();
    }
}

fn report(what: &str, allocs: u64, bytes: u64, contexts: usize) {
    println!(
        "{what}: {:.3} allocations and {:.0} bytes per context ({allocs} allocations over {contexts} contexts)",
        allocs as f64 / contexts as f64,
        bytes as f64 / contexts as f64,
    );
}

/// `Snapshot::evaluate` flag by flag: allocations while a flag comes out off, and while it comes out on.
fn per_flag(doc: &FeaturesDocument, snapshot: &Snapshot, contexts: &[Context]) {
    // Warm up lazy per-regex state.
    for ctx in contexts {
        for f in &doc.features {
            black_box(snapshot.evaluate(&f.name, ctx));
        }
    }
    let mut off = (0u64, 0u64); // (evaluations, allocations)
    let mut on = (0u64, 0u64);
    let mut by_flag: BTreeMap<&str, (u64, u64)> = BTreeMap::new(); // name -> (allocations off, on)
    let mut example: BTreeMap<&str, &Context> = BTreeMap::new();
    for ctx in contexts {
        for f in &doc.features {
            let (allocs, _, t) = count(|| snapshot.evaluate(black_box(&f.name), black_box(ctx)));
            let enabled = t.expect("known flag").enabled;
            let slot = if enabled { &mut on } else { &mut off };
            slot.0 += 1;
            slot.1 += allocs;
            if allocs > 0 {
                let e = by_flag.entry(&f.name).or_default();
                if enabled {
                    e.1 += allocs;
                } else {
                    e.0 += allocs;
                }
                example.entry(&f.name).or_insert(ctx);
            }
        }
    }
    println!(
        "vexil evaluate, flag by flag over {} contexts: {} evaluations off with {} allocations; {} evaluations on with {} allocations",
        contexts.len(),
        off.0,
        off.1,
        on.0,
        on.1
    );
    let mut worst: Vec<_> = by_flag.iter().collect();
    worst.sort_by_key(|(_, (a, b))| std::cmp::Reverse(a + b));
    for (name, (a_off, a_on)) in worst.iter().take(5) {
        let f = doc
            .features
            .iter()
            .find(|f| f.name == **name)
            .expect("flag in document");
        println!(
            "  {name}: {a_off} allocations while off, {a_on} while on\n    flag: {}\n    e.g. context: {}",
            serde_json::to_string(f).unwrap_or_default(),
            serde_json::to_string(example[*name]).unwrap_or_default()
        );
    }
}

/// Every constraint, strategy rule and variant set of the document alone in a one-flag document, evaluated
/// over the contexts: allocations per evaluation, grouped by kind. Shows which constructs allocate.
fn by_construct(doc: &FeaturesDocument, contexts: &[Context]) {
    let probe = |strategy: FeatureStrategy, variants| FeaturesDocument {
        version: 2,
        features: vec![Feature {
            name: "probe".into(),
            feature_type: None,
            description: None,
            project: "default".into(),
            enabled: true,
            stale: false,
            impression_data: false,
            strategies: vec![strategy],
            variants,
            dependencies: Vec::new(),
            tags: Vec::new(),
        }],
        segments: Vec::new(),
    };
    let bare = |name: &str| FeatureStrategy {
        id: None,
        name: name.into(),
        title: None,
        disabled: false,
        sort_order: None,
        parameters: BTreeMap::new(),
        constraints: Vec::new(),
        segments: Vec::new(),
        variants: Vec::new(),
    };
    let mut table: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut measure = |key: String, doc: FeaturesDocument| {
        let snapshot = generate::vexil_snapshot(&doc);
        for ctx in contexts {
            black_box(snapshot.evaluate("probe", ctx));
        }
        let (allocs, _, ()) = count(|| {
            for ctx in contexts {
                black_box(snapshot.evaluate("probe", black_box(ctx)));
            }
        });
        let e = table.entry(key).or_default();
        e.0 += contexts.len() as u64;
        e.1 += allocs;
    };

    let constraints = doc
        .features
        .iter()
        .flat_map(|f| f.strategies.iter().flat_map(|s| s.constraints.iter()))
        .chain(doc.segments.iter().flat_map(|s| s.constraints.iter()));
    for c in constraints {
        let mut key = format!("constraint {} {}", c.operator, c.context_name);
        if c.case_insensitive {
            key.push_str(" caseInsensitive");
        }
        if c.values.iter().chain(c.value.iter()).any(|v| !v.is_ascii()) {
            key.push_str(" (non-ASCII values)");
        }
        let mut s = bare("default");
        s.constraints.push(c.clone());
        measure(key, probe(s, Vec::new()));
    }
    for f in &doc.features {
        for s in &f.strategies {
            let mut rule = s.clone();
            rule.constraints.clear();
            rule.segments.clear();
            rule.variants.clear();
            let stickiness = s
                .parameters
                .get("stickiness")
                .map_or(String::new(), |v| format!(" stickiness={v}"));
            measure(
                format!("strategy {}{stickiness}", s.name),
                probe(rule, Vec::new()),
            );
            if !s.variants.is_empty() {
                let mut with_variants = bare("default");
                with_variants.parameters = s.parameters.clone();
                with_variants
                    .parameters
                    .retain(|k, _| k == "stickiness" || k == "groupId");
                with_variants.variants = s.variants.clone();
                measure(
                    format!("strategy variants{stickiness}"),
                    probe(with_variants, Vec::new()),
                );
            }
        }
        if !f.variants.is_empty() {
            let stickiness = f.variants[0].stickiness.clone().unwrap_or_default();
            let overrides = if f.variants.iter().any(|v| !v.overrides.is_empty()) {
                " with overrides"
            } else {
                ""
            };
            measure(
                format!("flag variants stickiness={stickiness}{overrides}"),
                probe(bare("default"), f.variants.clone()),
            );
        }
    }
    println!("vexil evaluate of one construct alone, allocations per evaluation (kinds that allocate first):");
    let mut rows: Vec<_> = table.into_iter().collect();
    rows.sort_by(|a, b| {
        (b.1 .1 * a.1 .0)
            .cmp(&(a.1 .1 * b.1 .0))
            .then(a.0.cmp(&b.0))
    });
    for (key, (evals, allocs)) in rows {
        if allocs > 0 {
            println!(
                "  {:.4}  {key}  ({allocs} over {evals})",
                allocs as f64 / evals as f64
            );
        }
    }
    println!("  every other kind: 0");
}
