//! The worker actor's side of [`super::state::WorkerCore`]: which inputs of a subtask are
//! remote, the fetches carried out as futures on the actor's runtime (cancelled by dropping
//! them), and subtasks handed to the compute pool with what was fetched for them.

use super::cancelled::Cancelled;
use super::state::{CoreOut, FetchId, Need, Room};
use super::{execute, pool, spans, Flush, Worker};
use crate::data_plane::FetchError;
use crate::guard::guard;
use crate::protocol::{FromWorker, RunSubtask, SubtaskError, SubtaskReport};
use actix::prelude::*;
use ares_core::graph::WorkerGraph;
use ares_core::ids::{ChunkIdx, TaskId, WorkerId};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Collects what the compute threads finished since the last drain.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Drain;

impl Handler<Drain> for Worker {
    type Result = ();
    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        guard(self, ctx, "Drain", |act, ctx| {
            act.shared.drain_pending.store(false, Ordering::Release);
            let finished = std::mem::take(
                &mut *act
                    .shared
                    .finished
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()),
            );
            if finished.is_empty() {
                return;
            }
            if act.reports.is_empty() {
                ctx.notify(Flush);
            }
            for (task, report) in finished {
                act.core.reported(task, report.subtask);
                act.reports.entry(task).or_default().push(report);
            }
            let piece = (act.shared.spans.lock())
                .unwrap_or_else(|p| p.into_inner())
                .piece();
            if let Some(stream) = piece {
                act.out.push(FromWorker::Spans { stream }, ctx);
            }
            act.carry_out(ctx);
        });
    }
}

/// Most subtasks one compute job runs (see [`Worker::submit`]).
const MAX_GROUP: usize = 16;
/// Projected bytes up to which a subtask counts as trivial and may share a compute job.
const TRIVIAL_BYTES: u64 = 64 << 10;

/// Subtasks of one task and depth that run as one compute job, one after the other.
struct Group {
    task: TaskId,
    depth: u32,
    graph: Arc<WorkerGraph>,
    /// What the task's subtasks check before and after they run.
    cancelled: Arc<Cancelled>,
    trivial: bool,
    /// Each subtask with what was fetched for it and its projected bytes.
    runs: Vec<Run>,
}

/// A subtask on the pool: what was fetched for it (and the bytes counted for that), its
/// projected bytes, and the microseconds it waited for its fetches (the task stream's).
type Run = (RunSubtask, (execute::Fetched, u64), u64, u64);

/// The subtasks of a compute job not run yet. A job dropped before it ran them all (its task
/// ended and the pool discarded it, or the pool closed) gives back what each one held: the
/// fetched bytes counted for it, its claim on its local inputs, its place in the pool's count.
struct Unrun {
    task: TaskId,
    me: WorkerId,
    runs: std::vec::IntoIter<Run>,
    shared: Arc<super::Shared>,
    count: usize,
}

impl Drop for Unrun {
    fn drop(&mut self) {
        for (run, (_, transit), _, _) in self.runs.by_ref() {
            self.shared.storage.release_transit(transit);
            let local = super::memory::local_inputs(&run.inputs, self.me);
            self.shared.storage.want(self.task, &local, false);
        }
        self.shared.in_pool.fetch_sub(self.count, Ordering::AcqRel);
    }
}

impl Group {
    /// The job: each subtask run (or refused while the worker drains, or skipped when
    /// cancelled), the reports handed back together, the actor woken once.
    fn into_job(self, me: WorkerId, shared: Arc<super::Shared>, addr: Addr<Worker>) -> pool::Work {
        let Group {
            task,
            graph,
            cancelled,
            runs,
            ..
        } = self;
        let count = runs.len();
        shared.in_pool.fetch_add(count, Ordering::AcqRel);
        let mut unrun = Unrun {
            task,
            me,
            runs: runs.into_iter(),
            shared,
            count,
        };
        Box::new(move || {
            let shared = unrun.shared.clone();
            let of = execute::OfTask {
                task,
                graph: &graph,
                cancelled: &cancelled,
            };
            let mut reports = Vec::with_capacity(count);
            // The task stream: one clock read and one record per subtask, one lock per job.
            let mut recorder = (shared.span_clock.as_ref())
                .map(|clock| spans::JobRecorder::start(clock, task, pool::current_slot()));
            for (run, fetched, run_bytes, fetch_us) in unrun.runs.by_ref() {
                if shared.draining.load(Ordering::Acquire) {
                    shared.storage.release_transit(fetched.1);
                    reports.push(SubtaskReport {
                        subtask: run.subtask,
                        outcome: Err(SubtaskError::NotRun("the worker is draining".into())),
                    });
                    continue;
                }
                let (subtask, depth) = (run.subtask, run.depth);
                let done = execute::execute_one(&of, run, me, &shared, fetched, run_bytes);
                if let Some(recorder) = recorder.as_mut() {
                    let report = done.as_ref().map(|(report, bytes_in)| (report, *bytes_in));
                    let op = || spans::subtask_op(&graph, subtask);
                    recorder.ran(subtask, depth, op, report, fetch_us);
                }
                if let Some((report, _)) = done {
                    reports.push(report);
                }
            }
            if let Some(recorder) = recorder {
                recorder.finish(&shared.spans);
            }
            if !reports.is_empty() {
                let mut finished = shared.finished.lock().unwrap_or_else(|p| p.into_inner());
                finished.extend(reports.into_iter().map(|r| (task, r)));
                drop(finished);
                if !shared.drain_pending.swap(true, Ordering::AcqRel) {
                    addr.do_send(Drain);
                }
            }
            drop(unrun); // leaves the pool's count
        })
    }
}

/// How long a subtask refused room for its fetches waits before the worker asks again
/// (subtasks ending ask at once).
const ROOM_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// The worker's ledger as the core's [`Room`]: fetched bytes count against the limit.
pub(super) struct StorageRoom(pub Arc<super::storage::Storage>);

impl Room for StorageRoom {
    fn reserve(&mut self, bytes: u64, alone: bool) -> bool {
        self.0.reserve_transit(bytes, alone)
    }
    fn grow(&mut self, bytes: u64) {
        self.0.transit_grew(bytes);
    }
    fn release(&mut self, bytes: u64) {
        self.0.release_transit(bytes);
    }
}

/// A fetch in flight: its future's handle, and what an error means.
pub(super) struct InFlight {
    handle: SpawnHandle,
    worker: WorkerId,
    /// The task whose store holds the chunks (another task's result when not `task`).
    from: TaskId,
    task: TaskId,
}

impl Worker {
    /// Subtasks sent by the supervisor: those with every input here go to the pool, the
    /// others fetch first.
    pub(super) fn run(&mut self, task: TaskId, subtasks: Vec<RunSubtask>, ctx: &mut Context<Self>) {
        let Some(graph) = self.graphs.get(&task).cloned() else {
            for r in subtasks {
                let error = SubtaskError::Fetch(format!("graph of {task} not registered"));
                self.report(task, r.subtask, Err(error), ctx);
            }
            return;
        };
        let subtasks = self.hold_until_added(task, subtasks);
        let me = self.me.unwrap_or(WorkerId(u32::MAX));
        for run in subtasks {
            if run.subtask.index() >= graph.members.rows() {
                let error = format!("{} is not in the graph of {task}", run.subtask);
                self.report(task, run.subtask, Err(SubtaskError::Failed(error)), ctx);
                continue;
            }
            let local = super::memory::local_inputs(&run.inputs, me);
            self.shared.storage.want(task, &local, true);
            let needs = self.needs(&graph, task, &run, me);
            self.core.accept(task, run, needs);
        }
        self.carry_out(ctx);
    }

    /// The chunks a subtask reads that are not on this worker.
    fn needs(
        &self,
        graph: &WorkerGraph,
        task: TaskId,
        run: &RunSubtask,
        me: WorkerId,
    ) -> Vec<Need> {
        let storage = &self.shared.storage;
        let mut needs: Vec<Need> = run
            .inputs
            .iter()
            .filter(|(c, w)| *w != me && !storage.holds(task, *c))
            .map(|(c, w)| Need {
                worker: *w,
                from: task,
                source: *c,
                member: *c,
                bytes: crate::footprint::chunk_bytes(&graph.chunks, *c),
            })
            .collect();
        for &m in graph.members.row(run.subtask.index()) {
            if let ares_core::ops::OpArgs::FetchChunk {
                task: src,
                chunk,
                worker,
            } = graph.chunks.args_of(ChunkIdx(m))
            {
                if !storage.holds(*src, ChunkIdx(*chunk)) {
                    needs.push(Need {
                        worker: WorkerId(*worker),
                        from: *src,
                        source: ChunkIdx(*chunk),
                        member: ChunkIdx(m),
                        bytes: crate::footprint::chunk_bytes(&graph.chunks, ChunkIdx(m)),
                    });
                }
            }
        }
        needs
    }

    /// Carries out what the core decided.
    pub(super) fn carry_out(&mut self, ctx: &mut Context<Self>) {
        let mut starts = Vec::new();
        for out in std::mem::take(&mut self.core.outbox) {
            match out {
                CoreOut::Start {
                    task,
                    run,
                    fetched,
                    transit,
                    fetch_us,
                } => starts.push((task, run, (fetched, transit), fetch_us)),
                CoreOut::Fetch {
                    id,
                    task,
                    worker,
                    from,
                    chunks,
                } => self.start_fetch(id, task, worker, from, chunks, ctx),
                CoreOut::CancelFetch(id) => {
                    if let Some(f) = self.fetches.remove(&id) {
                        ctx.cancel_future(f.handle);
                    }
                }
                CoreOut::Fail {
                    task,
                    subtask,
                    error,
                } => self.report(task, subtask, Err(error), ctx),
            }
        }
        if !starts.is_empty() {
            self.submit(starts, ctx);
        }
        if self.core.blocked() && !self.room_retry {
            self.room_retry = true;
            ctx.run_later(ROOM_RETRY, |act, ctx| {
                guard(act, ctx, "room", |act, ctx| {
                    act.room_retry = false;
                    act.core.retry();
                    act.carry_out(ctx);
                });
            });
        }
    }

    fn start_fetch(
        &mut self,
        id: FetchId,
        task: TaskId,
        worker: WorkerId,
        from: TaskId,
        chunks: Vec<ChunkIdx>,
        ctx: &mut Context<Self>,
    ) {
        let Some(addr) = self.peers.get(&worker).cloned() else {
            let error = if from == task {
                SubtaskError::Fetch(format!("no address for {worker}"))
            } else {
                SubtaskError::Failed(format!("result of {from} was on {worker}, which is gone"))
            };
            self.core.fetched(id, Err(error));
            return self.carry_out(ctx);
        };
        let fetch = self.fetcher.fetch(addr.clone(), from, chunks);
        let handle = ctx.spawn(fetch.into_actor(self).map(move |result, act, ctx| {
            guard(act, ctx, "Fetched", |act, ctx| {
                let Some(f) = act.fetches.remove(&id) else {
                    return; // cancelled
                };
                if let Ok(data) = &result {
                    let bytes = data.iter().map(|(_, d)| d.nbytes() as u64).sum();
                    act.shared.storage.note_fetched(data.len() as u64, bytes);
                }
                let result = result
                    .map(|data| data.into_iter().map(|(c, d)| (c, Arc::new(d))).collect())
                    .map_err(|e| fetch_error(&f, &addr, e));
                act.core.fetched(id, result);
                act.carry_out(ctx);
            });
        }));
        let f = InFlight {
            handle,
            worker,
            from,
            task,
        };
        self.fetches.insert(id, f);
    }

    /// Fails at once the fetches from peers the supervisor no longer lists: it declared them
    /// dead (missed heartbeats), so their chunks are being recomputed elsewhere. Without this
    /// a fetch from a partitioned or frozen peer waited out `worker.fetch_timeout_ms` twice
    /// after the supervisor had already given up on the peer, and the job with it.
    pub(super) fn fail_fetches_from_gone_peers(&mut self, ctx: &mut Context<Self>) {
        let peers = &self.peers;
        let gone: Vec<(FetchId, InFlight)> = (self.fetches)
            .extract_if(|_, f| !peers.contains_key(&f.worker))
            .collect();
        if gone.is_empty() {
            return;
        }
        tracing::warn!(
            fetches = gone.len(),
            "failing fetches from peers the supervisor declared dead"
        );
        for (id, f) in gone {
            ctx.cancel_future(f.handle);
            let why = FetchError::Unreachable(format!(
                "the supervisor declared {} dead during the fetch",
                f.worker
            ));
            self.core.fetched(id, Err(fetch_error(&f, "", why)));
        }
        self.carry_out(ctx);
    }

    /// Hands subtasks to the compute pool with what was fetched for them. Trivial ones (a
    /// projection of at most [`TRIVIAL_BYTES`]) go in groups of one task and depth: the
    /// pool's lock and heap, a job's allocation and handles, and the hand-back of reports
    /// are then paid per group, which on one-element chunks cost as much as the work.
    /// Groups stay small against the batch, so every slot gets some; any other subtask is a
    /// job of its own, its report sent back the moment it ends.
    fn submit(
        &mut self,
        starts: Vec<(TaskId, RunSubtask, (execute::Fetched, u64), u64)>,
        ctx: &mut Context<Self>,
    ) {
        let me = self.me.unwrap_or(WorkerId(u32::MAX));
        let size = (starts.len() / (4 * self.slots.max(1))).clamp(1, MAX_GROUP);
        let mut groups: Vec<Group> = Vec::new();
        for (task, run, fetched, fetch_us) in starts {
            let (graph, cancelled) = match groups.last() {
                Some(g) if g.task == task => (g.graph.clone(), g.cancelled.clone()),
                _ => match self.graphs.get(&task) {
                    Some(g) => (g.clone(), self.cancelled.entry(task).or_default().clone()),
                    None => {
                        self.shared.storage.release_transit(fetched.1);
                        continue;
                    }
                },
            };
            let run_bytes = super::memory::run_bytes(&graph, &run, me);
            let trivial = run_bytes <= TRIVIAL_BYTES;
            match groups.last_mut() {
                Some(g)
                    if trivial
                        && g.trivial
                        && g.task == task
                        && g.depth == run.depth
                        && g.runs.len() < size =>
                {
                    g.runs.push((run, fetched, run_bytes, fetch_us))
                }
                _ => groups.push(Group {
                    task,
                    depth: run.depth,
                    graph,
                    cancelled,
                    trivial,
                    runs: vec![(run, fetched, run_bytes, fetch_us)],
                }),
            }
        }
        let addr = ctx.address();
        let jobs: Vec<(u32, TaskId, pool::Work)> = groups
            .into_iter()
            .map(|g| {
                let (depth, task) = (g.depth, g.task);
                (
                    depth,
                    task,
                    g.into_job(me, self.shared.clone(), addr.clone()),
                )
            })
            .collect();
        self.pool.submit_all(jobs);
    }

    /// Queues a report for the supervisor.
    fn report(
        &mut self,
        task: TaskId,
        subtask: ares_core::ids::SubtaskIdx,
        outcome: Result<Vec<(ChunkIdx, u64)>, SubtaskError>,
        ctx: &mut Context<Self>,
    ) {
        if self.reports.is_empty() {
            ctx.notify(Flush);
        }
        let report = SubtaskReport { subtask, outcome };
        self.reports.entry(task).or_default().push(report);
    }
}

/// What a failed fetch means for the subtask: an unreachable peer holding the task's own
/// chunks is reported as such (the supervisor suspects it and recomputes from lineage).
fn fetch_error(f: &InFlight, addr: &str, e: FetchError) -> SubtaskError {
    let w = f.worker;
    if f.from != f.task {
        return SubtaskError::Failed(format!(
            "cannot read the result of {} from {w}: {e}",
            f.from
        ));
    }
    match e {
        FetchError::Unreachable(message) => SubtaskError::PeerUnreachable { worker: w, message },
        e => SubtaskError::Fetch(format!("{w} at {addr}: {e}")),
    }
}
