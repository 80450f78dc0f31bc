//! Evaluating every flag for one context: Vexil's `Snapshot::evaluate_all_into` against yggdrasil 0.21.7's
//! `EngineState::resolve_all`, on generated documents of 200 and 2,000 flags, rotating through 10,000
//! generated contexts. Each iteration evaluates one context, so criterion's times are per context.
//!
//! Before timing, the two engines must agree on a sample of contexts (see `generate::assert_engines_agree`).
//!
//! Run with `cargo bench -p vexil-shared --bench evaluate`.

mod generate;

use std::hint::black_box;
use std::time::{Duration, Instant};

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
        interleaved(&snapshot, &engine, &contexts, &ygg_contexts, flags);
    }
}

/// A cross-check of the ratio that a shared machine skews less: the two engines take turns on the same short
/// chunks of contexts (about 2 ms of Vexil each: 100 contexts at 200 flags, 10 at 2,000), so that load from
/// other processes slows both alike, while each engine still runs warm within its chunk. Prints ns per context.
fn interleaved(
    snapshot: &Snapshot,
    engine: &unleash_yggdrasil::EngineState,
    contexts: &[vexil_shared::Context],
    ygg_contexts: &[unleash_yggdrasil::Context],
    flags: usize,
) {
    let chunk = (20_000 / flags).clamp(1, 100);
    // About five seconds of yggdrasil at either size.
    let n = if flags <= 200 {
        CONTEXTS
    } else {
        CONTEXTS / 10
    };
    let (mut vexil, mut ygg) = (Duration::ZERO, Duration::ZERO);
    let mut out = Vec::new();
    for start in (0..n).step_by(chunk) {
        let end = (start + chunk).min(n);
        let t = Instant::now();
        for ctx in &contexts[start..end] {
            snapshot.evaluate_all_into(black_box(ctx), &Projects::All, &mut out);
            black_box(out.len());
        }
        vexil += t.elapsed();
        let t = Instant::now();
        for ctx in &ygg_contexts[start..end] {
            black_box(engine.resolve_all(black_box(ctx), &None));
        }
        ygg += t.elapsed();
    }
    let per = |d: Duration| d.as_nanos() as f64 / n as f64;
    eprintln!(
        "interleaved/{flags}: {n} contexts each, alternating chunks of {chunk}: vexil {:.0} ns/context, \
         yggdrasil {:.0} ns/context, ratio {:.1}",
        per(vexil),
        per(ygg),
        per(ygg) / per(vexil),
    );
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
