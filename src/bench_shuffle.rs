//! `ares bench shuffle`: dask#3872's all-to-all shuffle, end to end, on the cluster of
//! `ares bench tps` (a supervisor and workers as separate processes on loopback).
//!
//! `in_parts` mappers each draw `rows` random int64 (seed = mapper index) and split them by
//! `value % out_parts`; each of the `out_parts` reducers concatenates its pieces, sorts them
//! and returns `(count, sum, Σ i·sorted[i] mod 2^61)`, so every value moves. The client
//! sends one tileable node whatever the partition counts (`request_bytes`); the supervisor
//! expands it. The result is checked against an independent computation over the same
//! values (all of them sorted by `(value % out_parts, value)` in this process).

use crate::bench_tps::{BenchCluster, NodeSpec};
use anyhow::{bail, Context, Result};
use ares::api::TaskApi;
use ares::protocol::{codec, ClientRequest, TaskStatus};
use ares_core::ops::family::shuffle::kernels::bench_expected as expected;
use ares_core::tensor::{self, Tensor};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// What the bench measures (the flags of `ares bench shuffle`).
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct ShuffleBench {
    #[arg(long, default_value_t = 300)]
    pub in_parts: u32,
    #[arg(long, default_value_t = 300)]
    pub out_parts: u32,
    #[arg(long, default_value_t = 1000)]
    pub rows: u64,
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Slots per worker.
    #[arg(long, default_value_t = 1)]
    pub slots: usize,
    /// Measured runs on the same cluster; the median is reported.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Seals every link (`cluster.encrypt: true`), for the cost of encryption.
    #[arg(long)]
    pub encrypt: bool,
}

pub fn bench_shuffle(b: ShuffleBench) -> Result<Value> {
    let graph = Tensor::graph(&[&tensor::shuffle_bench(b.in_parts, b.out_parts, b.rows)?]);
    let request_bytes = codec::encode(&ClientRequest::Submit {
        request: 1,
        graph: graph.clone(),
        fuse_enabled: None,
        config: None,
    })?
    .len();
    let want = expected(b.in_parts, b.out_parts, b.rows);
    let mut cluster = BenchCluster::start(NodeSpec {
        workers: b.workers,
        slots: b.slots,
        prefetch: 1,
        encrypt: b.encrypt,
        task_stream: true,
    })?;
    let mut runs = Vec::new();
    let mut correct = true;
    let mut subtasks = 0;
    for _ in 0..b.repeat.max(1) {
        let start = Instant::now();
        let client = &mut cluster.client;
        let task = client.submit_tileable_graph(&graph, None)?;
        let info = loop {
            let info = client.wait_task(task, Duration::from_secs(1))?;
            if info.status.is_terminal() {
                break info;
            }
        };
        if info.status != TaskStatus::Succeeded {
            bail!(
                "shuffle task ended {:?}: {}",
                info.status,
                info.error.unwrap_or_default()
            );
        }
        let result = client.fetch(task)?;
        let seconds = start.elapsed().as_secs_f64();
        client.cancel_task(task)?;
        let got: Vec<i64> = match result.first() {
            Some(ares_core::array::ArrayData::I64(a)) => a.iter().copied().collect(),
            other => bail!("unexpected result {other:?}"),
        };
        correct &= got == want.iter().flatten().copied().collect::<Vec<_>>();
        subtasks = info.subtasks;
        let first = info.prepare_seconds.context("no preparation time")?;
        runs.push((seconds, first));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (seconds, first_subtask_s) = runs[runs.len() / 2];
    Ok(json!({
        "bench": "shuffle",
        "in_parts": b.in_parts,
        "out_parts": b.out_parts,
        "rows": b.rows,
        "seconds": seconds,
        "seconds_range": [runs[0].0, runs[runs.len() - 1].0],
        "runs": runs.len(),
        "correct": correct,
        "request_bytes": request_bytes,
        "first_subtask_s": first_subtask_s,
        "subtasks": subtasks,
        "workers": b.workers,
        "encrypt": b.encrypt,
        "slots_per_worker": b.slots,
        "peak_rss_kb": cluster.peak_rss(),
    }))
}
