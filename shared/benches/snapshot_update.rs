//! The cost of bringing a compiled snapshot to the next revision when one flag changed, at 200, 2,000 and
//! 10,000 generated flags: compiling the whole document again (`compile`) against recompiling only the
//! changed flag (`update_one`). The generated documents' dependencies are removed first: `Snapshot::update`
//! declines documents that have any. Every edge and the control plane pay this once per revision, so it bounds
//! how fast a change propagates (BENCHMARKS.md, "Propagation").
//!
//! Run with `cargo bench -p vexil-shared --bench snapshot_update`.

mod generate;

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use vexil_shared::model::Feature;
use vexil_shared::{CompileOptions, Snapshot};

const SIZES: [usize; 3] = [200, 2_000, 10_000];

fn snapshot_update(c: &mut Criterion) {
    let options = CompileOptions {
        hostname: Some("bench".to_owned()),
    };
    for flags in SIZES {
        let mut doc = generate::document(flags, generate::DOCUMENT_SEED);
        // `Snapshot::update` declines documents with dependencies (a change to a parent can change its
        // children); both measurements are made without them.
        for f in &mut doc.features {
            f.dependencies.clear();
        }
        let mut group = c.benchmark_group(format!("snapshot_update/{flags}"));
        group.bench_function("compile", |b| {
            b.iter(|| black_box(Snapshot::compile_with(black_box(&doc), &options)))
        });
        // The flag in the middle switched, as the admin API's toggle does.
        let snapshot = Snapshot::compile_with(&doc, &options);
        let mut toggled = doc.features[flags / 2].clone();
        toggled.enabled = !toggled.enabled;
        let mut by_name: HashMap<&str, &Feature> =
            doc.features.iter().map(|f| (f.name.as_str(), f)).collect();
        by_name.insert(toggled.name.as_str(), &toggled);
        let changed = [toggled.name.as_str()];
        group.bench_function("update_one", |b| {
            b.iter(|| {
                black_box(
                    snapshot
                        .update(
                            &changed,
                            |n| by_name.get(n).copied(),
                            &doc.segments,
                            &options,
                        )
                        .expect("no dependencies"),
                )
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = snapshot_update
}
criterion_main!(benches);
