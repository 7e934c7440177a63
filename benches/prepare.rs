//! Preparation throughput per pass and in total, for graphs of 10^3..10^6 chunks.
//! `cargo bench --bench prepare`; the workload is `ares bench prepare`'s.

use ares::config::TaskConfig;
use ares_core::ids::{StageId, TaskId};
use ares_core::prepare::{assign, color, fuse, optimize_chunk, prepare, tile, uniform_cluster};
use ares_core::tensor::Tensor;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};

fn passes(c: &mut Criterion) {
    let config = TaskConfig::default();
    let workers = uniform_cluster(2, 2);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let t = ares_core::expr::prepare_workload(n).unwrap();
        let graph = Tensor::graph(&[&t]);
        let tiled = tile::tile(&graph, &config).unwrap();
        let chunks = tiled.len() as u64;
        let mut group = c.benchmark_group("prepare");
        group.throughput(Throughput::Elements(chunks));
        if n >= 100_000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::new("total", n), &graph, |b, g| {
            b.iter(|| prepare(g, &config, &workers, TaskId(1)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("tile", n), &graph, |b, g| {
            b.iter(|| tile::tile(g, &config).unwrap())
        });
        group.bench_function(BenchmarkId::new("optimize_chunk_graph", n), |b| {
            b.iter_batched(
                || tiled.clone(),
                optimize_chunk::optimize_chunk_graph,
                BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("fuse", n), |b| {
            b.iter_batched(
                || tiled.clone(),
                |g| fuse::fuse(g, config.fuse_generated_operands),
                BatchSize::LargeInput,
            )
        });
        let fused = fuse::fuse(tiled.clone(), config.fuse_generated_operands);
        group.bench_function(BenchmarkId::new("color", n), |b| {
            b.iter_batched(
                || fused.clone(),
                |g| color::group_subtasks(g, &config, 4, TaskId(1), StageId(0)).unwrap(),
                BatchSize::LargeInput,
            )
        });
        let subtasks =
            color::group_subtasks(fused.clone(), &config, 4, TaskId(1), StageId(0)).unwrap();
        group.bench_function(BenchmarkId::new("assign", n), |b| {
            b.iter_batched(
                || subtasks.clone(),
                |mut s| assign::assign_initial(&mut s, &workers).unwrap(),
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, passes);
criterion_main!(benches);
