//! Evaluating every flag for one context: Vexil's `Snapshot::evaluate_all_into` against yggdrasil 0.21.7's
//! `EngineState::resolve_all`, on generated documents of 200 and 2,000 flags, rotating through 10,000
//! generated contexts. Each iteration evaluates one context, so criterion's times are per context.
//!
//! Before timing, the two engines must agree on a sample of contexts (see `generate::assert_engines_agree`).
//!
//! Run with `cargo bench -p vexil-shared --bench evaluate`.

mod generate;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use vexil_shared::{Projects, Snapshot};

const CONTEXTS: usize = 10_000;
/// Contexts on which the engines' answers are compared before timing.
const CHECKED_CONTEXTS: usize = 2_000;
const SIZES: [usize; 2] = [200, 2_000];

fn evaluate_all(c: &mut Criterion) {
    let contexts = generate::contexts(CONTEXTS, generate::CONTEXT_SEED);
    // Converted once, outside the timed loop.
    let ygg_contexts: Vec<unleash_yggdrasil::Context> = contexts
        .iter()
        .map(generate::to_yggdrasil_context)
        .collect();

    for flags in SIZES {
        let doc = generate::document(flags, generate::DOCUMENT_SEED);
        let snapshot: Snapshot = generate::vexil_snapshot(&doc);
        let engine = generate::yggdrasil_engine(&doc);
        let agreement =
            generate::assert_engines_agree(&doc, &snapshot, &engine, &contexts[..CHECKED_CONTEXTS]);

        let mut out = Vec::new();
        let enabled: usize = contexts
            .iter()
            .map(|ctx| {
                snapshot.evaluate_all_into(ctx, &Projects::All, &mut out);
                out.len()
            })
            .sum();
        eprintln!(
            "document: {}\n  enabled per context (Vexil, mean over {CONTEXTS}): {:.1} of {flags}\n  \
             engines agree: {agreement:?}",
            generate::describe(&doc),
            enabled as f64 / CONTEXTS as f64,
        );

        let mut group = c.benchmark_group(format!("evaluate_all/{flags}"));
        group.bench_function("vexil", |b| {
            let mut out = Vec::new();
            let mut i = 0;
            b.iter(|| {
                let ctx = &contexts[i];
                i = (i + 1) % CONTEXTS;
                snapshot.evaluate_all_into(black_box(ctx), &Projects::All, &mut out);
                black_box(out.len())
            })
        });
        group.bench_function("yggdrasil", |b| {
            let mut i = 0;
            b.iter(|| {
                let ctx = &ygg_contexts[i];
                i = (i + 1) % CONTEXTS;
                // The result map is dropped inside the timed loop: building and freeing it is part of the API.
                black_box(engine.resolve_all(black_box(ctx), &None))
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    targets = evaluate_all
}
criterion_main!(benches);
