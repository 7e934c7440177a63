//! The whole result of a succeeded task in one answer (`FetchResult`): its chunks read from
//! the workers' data planes on a blocking thread, assembled, and encoded. Results larger than
//! a frame go through the streamed parts instead (see `part.rs`).

use super::result_error::ResultError;
use super::TaskProcessor;
use crate::data_plane;
use crate::guard::guard;
use crate::protocol::{codec, TaskStatus};
use crate::supervisor::messages::{FetchResult, GetWorkers};
use actix::prelude::*;
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId, WorkerId};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Handler<FetchResult> for TaskProcessor {
    type Result = ResponseActFuture<Self, Result<bytes::Bytes, ResultError>>;
    fn handle(&mut self, _: FetchResult, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "FetchResult", |act, ctx| -> Self::Result {
            if let Some(later) = act.after_recompute(ctx, FetchResult, |e| Err(e.into())) {
                return later;
            }
            let ready = match (act.life.status(), act.life.state()) {
                (TaskStatus::Succeeded, Some(s)) => Ok((s.graph.clone(), s.result_locations())),
                (status, _) => Err(ResultError::NotSucceeded {
                    task: act.task,
                    status,
                }),
            };
            let scheduler = act.scheduler.workers.clone();
            let (task, data) = (act.task, act.data.clone());
            let read = async move {
                let (graph, locations) = ready?;
                let addrs = worker_addrs(&scheduler).await;
                tokio::task::spawn_blocking(move || {
                    let held = locations
                        .into_iter()
                        .map(|(c, w)| w.map(|w| (c, w)).ok_or(c))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(ResultError::Lost)?;
                    let mut store = vec![None; graph.chunks.len()];
                    for (c, data) in read_chunks(&addrs, &data, task, held)? {
                        store[c.index()] = Some(Arc::new(data));
                    }
                    let tensors = graph
                        .chunks
                        .results
                        .iter()
                        .map(|r| ares_core::executor::assemble(&graph.chunks, r, &store))
                        .collect::<Result<Vec<_>, _>>()?;
                    let refs: Vec<(ChunkIdx, &ares_core::array::ArrayData)> = tensors
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (ChunkIdx(i as u32), t))
                        .collect();
                    Ok(codec::encode_chunks(&refs).map(bytes::Bytes::from)?)
                })
                .await?
            };
            Box::pin(
                read.into_actor(act)
                    .then(|read, act, ctx| act.after_read(read, ctx, FetchResult)),
            )
        })
        .unwrap_or_else(|| Box::pin(fut::ready(Err(ResultError::Restarting))))
    }
}

/// Each live worker's data-plane address.
pub(super) async fn worker_addrs(scheduler: &Recipient<GetWorkers>) -> BTreeMap<WorkerId, String> {
    scheduler
        .send(GetWorkers)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(w, a)| (w.worker, a))
        .collect()
}

/// Reads result chunks from the workers holding them, one request per worker (blocking).
pub(super) fn read_chunks(
    addrs: &BTreeMap<WorkerId, String>,
    data: &data_plane::DataPlane,
    task: TaskId,
    held: impl IntoIterator<Item = (ChunkIdx, WorkerId)>,
) -> Result<BTreeMap<ChunkIdx, ArrayData>, ResultError> {
    let mut by_worker: BTreeMap<WorkerId, Vec<ChunkIdx>> = BTreeMap::new();
    for (c, w) in held {
        by_worker.entry(w).or_default().push(c);
    }
    let mut got = BTreeMap::new();
    for (w, chunks) in by_worker {
        let addr = addrs.get(&w).ok_or(ResultError::HolderGone(w))?;
        got.extend(
            data_plane::fetch(addr, data, task, &chunks)
                .map_err(|source| ResultError::Reading { worker: w, source })?,
        );
    }
    Ok(got)
}
