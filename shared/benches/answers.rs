//! The bodies the two browser APIs write for one context, as their handlers write them (a buffer of the
//! snapshot's bound, allocated per answer): the frontend API's `toggles` (`Snapshot::write_toggles_json`)
//! and OFREP's bulk `flags` (`Snapshot::write_ofrep_flags_json`), on the generated documents of 200 and
//! 2,000 flags, rotating through 10,000 generated contexts. Times are per context: the user-space part of a
//! request that grows with the flags (issue 36: OFREP bulk within 1.15× of `/api/frontend`).
//!
//! Run with `cargo bench -p vexil-shared --bench answers`.

mod generate;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use vexil_shared::{Context, Projects, Snapshot};

const CONTEXTS: usize = 10_000;
const SIZES: [usize; 2] = [200, 2_000];

fn answers(c: &mut Criterion) {
    let contexts = generate::contexts(CONTEXTS, generate::CONTEXT_SEED);
    for flags in SIZES {
        let doc = generate::document(flags, generate::DOCUMENT_SEED);
        let snapshot: Snapshot = generate::vexil_snapshot(&doc);
        let bytes = |write: &dyn Fn(&Context, &mut Vec<u8>)| {
            let mut body = Vec::new();
            let total: usize = contexts[..1_000]
                .iter()
                .map(|ctx| {
                    body.clear();
                    write(ctx, &mut body);
                    body.len()
                })
                .sum();
            total / 1_000
        };
        eprintln!(
            "{flags} flags: frontend {} B, OFREP {} B per answer (mean of 1,000 contexts)",
            bytes(&|ctx, body| {
                snapshot.write_toggles_json(ctx, &Projects::All, body);
            }),
            bytes(&|ctx, body| {
                snapshot.write_ofrep_flags_json(ctx, &Projects::All, body, |_, _| {});
            }),
        );
        let mut group = c.benchmark_group(format!("answers/{flags}"));
        group.bench_function("frontend", |b| {
            let mut i = 0;
            b.iter(|| {
                let ctx = &contexts[i];
                i = (i + 1) % CONTEXTS;
                let mut body = Vec::with_capacity(snapshot.toggles_json_bound());
                black_box(snapshot.write_toggles_json(black_box(ctx), &Projects::All, &mut body));
                black_box(body)
            })
        });
        group.bench_function("ofrep", |b| {
            let mut i = 0;
            b.iter(|| {
                let ctx = &contexts[i];
                i = (i + 1) % CONTEXTS;
                let mut body = Vec::with_capacity(snapshot.ofrep_json_bound());
                black_box(snapshot.write_ofrep_flags_json(
                    black_box(ctx),
                    &Projects::All,
                    &mut body,
                    |_, _| {},
                ));
                black_box(body)
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = answers
}
criterion_main!(benches);
