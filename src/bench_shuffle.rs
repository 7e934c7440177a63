//! `ares bench shuffle`: dask#3872's all-to-all shuffle, end to end, on the cluster of
//! `ares bench tps` (a supervisor and workers as separate processes on loopback).
//!
//! `in_parts` mappers each draw `rows` random int64 (seed = mapper index) and split them by
//! `value % out_parts`; each of the `out_parts` reducers concatenates its pieces, sorts them
//! and returns `(count, sum, Σ i·sorted[i] mod 2^61)`, so every value moves. The client
//! sends one tileable node whatever the partition counts (`request_bytes`); the supervisor
//! expands it. The result is checked against an independent computation over the same
//! values (all of them sorted by `(value % out_parts, value)` in this process).

use crate::api::TaskApi;
use crate::bench_tps::BenchCluster;
use crate::kernels::shuffle::{bench_values, BENCH_MOD};
use crate::protocol::{codec, ClientRequest, TaskStatus};
use crate::tensor::{self, Tensor};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// What the bench measures.
#[derive(Clone, Copy, Debug)]
pub struct ShuffleBench {
    pub in_parts: u32,
    pub out_parts: u32,
    pub rows: u64,
    pub workers: usize,
    pub slots: usize,
    pub repeat: usize,
}

/// Every reducer's `(count, sum, weighted)`, computed without the runtime's split or kernels.
pub fn expected(in_parts: u32, out_parts: u32, rows: u64) -> Vec<[i64; 3]> {
    let o = out_parts as i64;
    let mut all: Vec<i64> = (0..in_parts as u64)
        .flat_map(|seed| bench_values(rows, seed))
        .collect();
    all.sort_unstable_by_key(|v| (v.rem_euclid(o), *v));
    let mut out = vec![[0i64; 3]; out_parts as usize];
    let mut start = 0;
    while start < all.len() {
        let r = all[start].rem_euclid(o);
        let end = start + all[start..].partition_point(|v| v.rem_euclid(o) == r);
        let group = &all[start..end];
        let mut weighted = 0u128;
        for (i, v) in group.iter().enumerate() {
            weighted = (weighted + i as u128 * *v as u128) % BENCH_MOD;
        }
        out[r as usize] = [
            group.len() as i64,
            group.iter().fold(0i64, |a, v| a.wrapping_add(*v)),
            weighted as i64,
        ];
        start = end;
    }
    out
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
    let mut cluster = BenchCluster::start(b.workers, b.slots, 1)?;
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
            Some(crate::array::ArrayData::I64(a)) => a.iter().copied().collect(),
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
        "slots_per_worker": b.slots,
        "peak_rss_kb": cluster.peak_rss(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_counts_every_value_once() {
        let e = expected(3, 4, 50);
        assert_eq!(e.iter().map(|r| r[0]).sum::<i64>(), 150);
        let all: Vec<i64> = (0..3).flat_map(|s| bench_values(50, s)).collect();
        let sum = all.iter().fold(0i64, |a, v| a.wrapping_add(*v));
        assert_eq!(e.iter().fold(0i64, |a, r| a.wrapping_add(r[1])), sum);
    }
}
