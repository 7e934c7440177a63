//! Kernel throughput: `(rand(n) + rand(n)).sum()` at 10^8 elements in chunks of 10^6 with the
//! local executor on one and two slots, and the fused add+sum kernel alone on one chunk.
//! `cargo bench --bench kernels`; compare with `benches/numpy_baseline.py`.

use ares::config::TaskConfig;
use ares_core::executor::execute;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::{self, Tensor};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The same allocator as the `ares` binary.
#[global_allocator]
static GLOBAL: ares_core::huge_pages::HugePageAlloc<mimalloc::MiMalloc> =
    ares_core::huge_pages::HugePageAlloc(mimalloc::MiMalloc);

fn rand_add_sum(c: &mut Criterion) {
    let n = 100_000_000usize;
    let a = tensor::rand(&[n], 1_000_000, Some(1)).unwrap();
    let b = tensor::rand(&[n], 1_000_000, Some(2)).unwrap();
    let s = (&a + &b).unwrap().sum(None, false).unwrap();
    let graph = Tensor::graph(&[&s]);
    let mut group = c.benchmark_group("kernel");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(2 * n as u64 * 8));
    for slots in [1usize, 2] {
        let p = prepare(
            &graph,
            &TaskConfig::default(),
            &uniform_cluster(1, slots),
            TaskId(1),
        )
        .unwrap();
        group.bench_with_input(
            BenchmarkId::new("rand_add_sum_1e8", slots),
            &p,
            |bench, p| bench.iter(|| execute(&p.subtasks, slots).unwrap()),
        );
    }
    group.finish();
}

criterion_group!(benches, rand_add_sum);
criterion_main!(benches);
