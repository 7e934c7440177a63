//! Streamed result fetch (branch io): a part of one result, a few chunks at a time, read
//! from the workers that hold them and passed on without assembling the whole result here.
//! A part holds at most half a frame of chunk data, so nothing the supervisor holds for a fetch
//! grows with the result's size.

use super::result_error::ResultError;
use super::whole_result::{read_chunks, worker_addrs};
use super::TaskProcessor;
use crate::data_plane;
use crate::guard::guard;
use crate::protocol::{codec, ResultPart, TaskStatus};
use crate::supervisor::messages::FetchPart;
use actix::prelude::*;
use ares_core::array::numel;
use ares_core::ids::{ChunkIdx, WorkerId};

/// Most chunk bytes in one part: half a frame, leaving room for the rest.
pub fn part_budget(max_frame_bytes: usize) -> u64 {
    (max_frame_bytes / 2) as u64
}

impl Handler<FetchPart> for TaskProcessor {
    type Result = ResponseActFuture<Self, Result<ResultPart, ResultError>>;
    fn handle(&mut self, m: FetchPart, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "FetchPart", |act, ctx| -> Self::Result {
            if let Some(later) = act.after_recompute(ctx, m.clone(), |e| Err(e.into())) {
                return later;
            }
            let budget = part_budget(act.data.max_frame);
            let plan = match (act.life.status(), act.life.state()) {
                (TaskStatus::Succeeded, Some(s)) => plan(s, &m, budget, act.task),
                (status, _) => Err(ResultError::NotSucceeded {
                    task: act.task,
                    status,
                }),
            };
            let scheduler = act.scheduler.workers.clone();
            let rows = m.rows;
            let (task, data) = (act.task, act.data.clone());
            let read = async move {
                let (mut part, wanted) = plan?;
                if wanted.is_empty() {
                    part.chunks = codec::encode_chunks(&[])?.into();
                    return Ok(part);
                }
                let addrs = worker_addrs(&scheduler).await;
                tokio::task::spawn_blocking(move || {
                    if let (Some(rows), [(pos, c, w)]) = (rows, wanted.as_slice()) {
                        let addr = addrs.get(w).ok_or(ResultError::HolderGone(*w))?;
                        let d = data_plane::fetch_rows(addr, &data, task, *c, rows)
                            .map_err(|source| ResultError::Reading { worker: *w, source })?;
                        part.chunks = codec::encode_chunks(&[(ChunkIdx(*pos), &d)])?.into();
                        return Ok(part);
                    }
                    let held = wanted.iter().map(|(_, c, w)| (*c, *w));
                    let got = read_chunks(&addrs, &data, task, held)?;
                    let refs = wanted
                        .iter()
                        .map(|(pos, c, _)| {
                            got.get(c)
                                .map(|d| (ChunkIdx(*pos), d))
                                .ok_or(ResultError::NotSent(*c))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    part.chunks = codec::encode_chunks(&refs)?.into();
                    Ok(part)
                })
                .await?
            };
            Box::pin(
                read.into_actor(act)
                    .then(move |read, act, ctx| act.after_read(read, ctx, m)),
            )
        })
        .unwrap_or_else(|| Box::pin(fut::ready(Err(ResultError::Restarting))))
    }
}

type Wanted = Vec<(u32, ChunkIdx, WorkerId)>;

/// The part's layout and, per requested position, the chunk and the worker holding it.
fn plan(
    s: &super::state::TaskState,
    m: &FetchPart,
    budget: u64,
    task: ares_core::ids::TaskId,
) -> Result<(ResultPart, Wanted), ResultError> {
    let results = &s.graph.chunks.results;
    let r = results
        .get(m.output as usize)
        .ok_or(ResultError::NoSuchOutput {
            task,
            count: results.len(),
            output: m.output,
        })?;
    // A 1-D result's chunks are as long as their workers found them (a length may depend on
    // the data: `unique`, `x[mask]`), so its layout comes from the reported sizes; a result
    // of one chunk too (`x[x > 1]` on a 4-element tensor was refused before).
    let mut splits: Vec<Vec<u64>> = r
        .splits
        .iter()
        .map(|s| s.iter().map(|x| *x as u64).collect())
        .collect();
    let mut shape: Vec<u64> = r.shape.iter().map(|d| *d as u64).collect();
    if r.shape.len() == 1 {
        let item = r.dtype.itemsize() as u64;
        splits[0] = r
            .chunks
            .iter()
            .map(|c| s.size_of(*c).map(|b| b / item))
            .collect::<Option<Vec<u64>>>()
            .ok_or(ResultError::LengthLost {
                task,
                output: m.output,
            })?;
        shape[0] = splits[0].iter().sum();
    }
    let mut wanted = Vec::with_capacity(m.positions.len().min(r.chunks.len()));
    let mut bytes = 0u64;
    for &pos in &m.positions {
        let c = *r.chunks.get(pos as usize).ok_or(ResultError::NoSuchChunk {
            task,
            output: m.output,
            count: r.chunks.len(),
            position: pos,
        })?;
        let size = s
            .size_of(c)
            .unwrap_or((numel(s.graph.chunks.shape(c)) * r.dtype.itemsize()) as u64);
        bytes += match m.rows {
            None => size,
            Some((start, end)) => {
                // Rows of the chunk's first axis (a 1-D chunk's length as reported).
                let item = r.dtype.itemsize() as u64;
                let n = match s.graph.chunks.shape(c).first() {
                    Some(_) if r.shape.len() == 1 => size / item.max(1),
                    Some(n) => *n as u64,
                    None => 1,
                };
                if m.positions.len() != 1 || start >= end || end > n {
                    return Err(ResultError::BadRows {
                        start,
                        end,
                        chunks: m.positions.len(),
                        rows: n,
                    });
                }
                (end - start) * (size / n.max(1))
            }
        };
        if bytes > budget {
            return Err(ResultError::OverBudget(budget));
        }
        let w = s.location_of(c).ok_or(ResultError::Lost(c))?;
        wanted.push((pos, c, w));
    }
    let part = ResultPart {
        shape,
        dtype: r.dtype,
        splits,
        outputs: results.len() as u32,
        budget,
        chunks: Default::default(),
    };
    Ok((part, wanted))
}
