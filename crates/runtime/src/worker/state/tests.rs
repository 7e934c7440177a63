//! The worker core without sockets: subtasks, fetches and reports as plain values.

use super::*;

const T: TaskId = TaskId(1);
const W1: WorkerId = WorkerId(1);
const W2: WorkerId = WorkerId(2);

fn run(s: u32, depth: u32) -> RunSubtask {
    RunSubtask {
        subtask: SubtaskIdx(s),
        depth,
        inputs: Vec::new(),
    }
}

fn need(worker: WorkerId, c: u32) -> Need {
    Need {
        worker,
        from: T,
        source: ChunkIdx(c),
        member: ChunkIdx(c),
        bytes: 0,
    }
}

impl Held for &'static str {
    fn held_bytes(&self) -> u64 {
        self.len() as u64
    }
}

fn take<R>(core: &mut WorkerCore<&'static str, R>) -> Vec<CoreOut<&'static str>> {
    std::mem::take(&mut core.outbox)
}

fn fetches(out: &[CoreOut<&'static str>]) -> Vec<(FetchId, WorkerId, Vec<ChunkIdx>)> {
    out.iter()
        .filter_map(|o| match o {
            CoreOut::Fetch {
                id, worker, chunks, ..
            } => Some((*id, *worker, chunks.clone())),
            _ => None,
        })
        .collect()
}

fn started(out: &[CoreOut<&'static str>]) -> Vec<u32> {
    out.iter()
        .filter_map(|o| match o {
            CoreOut::Start { run, .. } => Some(run.subtask.0),
            _ => None,
        })
        .collect()
}

#[test]
fn a_subtask_with_everything_here_starts_at_once() {
    let mut core = WorkerCore::new(2);
    core.accept(T, run(0, 0), vec![]);
    assert_eq!(started(&take(&mut core)), vec![0]);
    assert_eq!(core.load(), (0, 0));
}

///   W1: c1 c2    W2: c3
///        \  |   /
///        subtask 0  → one fetch per peer; starts when both have landed
#[test]
fn one_fetch_per_peer_then_start_with_every_chunk() {
    let mut core = WorkerCore::new(2);
    core.accept(T, run(0, 0), vec![need(W1, 1), need(W1, 2), need(W2, 3)]);
    let f = fetches(&take(&mut core));
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].1, f[0].2.clone()),
        (W1, vec![ChunkIdx(1), ChunkIdx(2)])
    );
    assert_eq!((f[1].1, f[1].2.clone()), (W2, vec![ChunkIdx(3)]));
    core.fetched(f[1].0, Ok(vec![(ChunkIdx(3), "c3")]));
    assert!(take(&mut core).is_empty(), "waits for the other peer");
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(1), "c1"), (ChunkIdx(2), "c2")]));
    let out = take(&mut core);
    let CoreOut::Start { fetched, .. } = &out[0] else {
        panic!("{out:?}")
    };
    let mut got: Vec<_> = fetched.iter().map(|(c, d)| (c.0, *d)).collect();
    got.sort();
    assert_eq!(got, vec![(1, "c1"), (2, "c2"), (3, "c3")]);
}

#[test]
fn another_tasks_result_lands_under_its_member() {
    let mut core = WorkerCore::new(1);
    let n = Need {
        worker: W1,
        from: TaskId(9),
        source: ChunkIdx(4),
        member: ChunkIdx(0),
        bytes: 0,
    };
    core.accept(T, run(0, 0), vec![n]);
    let out = take(&mut core);
    let CoreOut::Fetch { id, from, .. } = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(*from, TaskId(9));
    core.fetched(*id, Ok(vec![(ChunkIdx(4), "r")]));
    let out = take(&mut core);
    let CoreOut::Start { fetched, .. } = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(fetched.get(&ChunkIdx(0)), Some(&"r"));
}

#[test]
fn the_first_failure_fails_the_subtask_and_cancels_its_other_fetches() {
    let mut core = WorkerCore::new(2);
    core.accept(T, run(0, 0), vec![need(W1, 1), need(W2, 2)]);
    let f = fetches(&take(&mut core));
    let error = SubtaskError::PeerUnreachable {
        worker: W1,
        message: "timed out".into(),
    };
    core.fetched(f[0].0, Err(error.clone()));
    let out = take(&mut core);
    assert_eq!(
        out,
        vec![
            CoreOut::CancelFetch(f[1].0),
            CoreOut::Fail {
                task: T,
                subtask: SubtaskIdx(0),
                error
            }
        ]
    );
    core.fetched(f[1].0, Ok(vec![(ChunkIdx(2), "late")]));
    assert!(take(&mut core).is_empty(), "a late answer is ignored");
}

#[test]
fn a_peer_that_leaves_out_a_chunk_fails_the_subtask() {
    let mut core = WorkerCore::new(1);
    core.accept(T, run(0, 0), vec![need(W1, 1), need(W1, 2)]);
    let f = fetches(&take(&mut core));
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(1), "c1")]));
    let out = take(&mut core);
    assert!(
        matches!(&out[0], CoreOut::Fail { error: SubtaskError::Fetch(m), .. } if m.contains("chunk c2")),
        "{out:?}"
    );
}

/// window 1: subtasks 0 (depth 0), 1 (depth 2), 2 (depth 1) arrive while 0 fetches;
/// after 0 reports, the deepest waiting one (1) fetches next, then 2.
#[test]
fn the_window_bounds_fetching_and_admits_deepest_first() {
    let mut core = WorkerCore::new(1);
    core.accept(T, run(0, 0), vec![need(W1, 10)]);
    core.accept(T, run(1, 2), vec![need(W1, 11)]);
    core.accept(T, run(2, 1), vec![need(W1, 12)]);
    let f = fetches(&take(&mut core));
    assert_eq!(f.len(), 1);
    assert_eq!(core.load(), (2, 1));
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(10), "a")]));
    assert_eq!(started(&take(&mut core)), vec![0]);
    core.reported(T, SubtaskIdx(0));
    let f = fetches(&take(&mut core));
    assert_eq!(f[0].2, vec![ChunkIdx(11)], "the deepest waits least");
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(11), "b")]));
    core.reported(T, SubtaskIdx(1));
    assert_eq!(fetches(&take(&mut core))[0].2, vec![ChunkIdx(12)]);
}

#[test]
fn cancel_drops_waiting_and_fetching_subtasks_but_not_those_on_the_pool() {
    let mut core = WorkerCore::new(1);
    core.accept(T, run(0, 0), vec![need(W1, 1)]);
    core.accept(T, run(1, 0), vec![need(W1, 2)]);
    core.accept(T, run(2, 0), vec![]);
    let out = take(&mut core);
    let f = fetches(&out);
    assert_eq!(started(&out), vec![2]);
    assert!(core.cancel(T, SubtaskIdx(1)), "waiting");
    assert!(take(&mut core).is_empty());
    assert!(core.cancel(T, SubtaskIdx(0)), "fetching");
    assert_eq!(take(&mut core), vec![CoreOut::CancelFetch(f[0].0)]);
    assert!(
        !core.cancel(T, SubtaskIdx(2)),
        "on the pool: the pool cancels it"
    );
    assert_eq!(core.load(), (0, 0));
}

#[test]
fn drain_hands_back_what_has_not_started_and_fetches_nothing_more() {
    let mut core = WorkerCore::new(1);
    core.accept(T, run(0, 0), vec![need(W1, 1)]);
    core.accept(T, run(1, 0), vec![need(W1, 2)]);
    let f = fetches(&take(&mut core));
    core.drain();
    let out = take(&mut core);
    assert_eq!(out[0], CoreOut::CancelFetch(f[0].0));
    let back: Vec<u32> = out
        .iter()
        .filter_map(|o| match o {
            CoreOut::Fail {
                subtask,
                error: SubtaskError::NotRun(_),
                ..
            } => Some(subtask.0),
            _ => None,
        })
        .collect();
    assert_eq!(back, vec![0, 1]);
    core.accept(T, run(3, 0), vec![need(W1, 3)]);
    let out = take(&mut core);
    assert!(
        matches!(
            &out[..],
            [CoreOut::Fail {
                subtask: SubtaskIdx(3),
                error: SubtaskError::NotRun(_),
                ..
            }]
        ),
        "{out:?}"
    );
}

#[test]
fn forgetting_a_task_frees_its_places_for_others() {
    let mut core = WorkerCore::new(1);
    core.accept(T, run(0, 0), vec![need(W1, 1)]);
    let f = fetches(&take(&mut core));
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(1), "x")]));
    assert_eq!(started(&take(&mut core)), vec![0]);
    core.accept(TaskId(2), run(0, 0), vec![need(W2, 5)]);
    assert!(fetches(&take(&mut core)).is_empty(), "window full");
    core.forget(T);
    assert_eq!(fetches(&take(&mut core))[0].2, vec![ChunkIdx(5)]);
}

/// A budget of bytes, as the worker's ledger with nothing else in it.
#[derive(Debug, Default)]
struct Budget {
    limit: u64,
    used: u64,
    peak: u64,
}

impl Room for Budget {
    fn reserve(&mut self, bytes: u64, alone: bool) -> bool {
        if self.used + bytes > self.limit && !alone {
            return false;
        }
        self.grow(bytes);
        true
    }
    fn grow(&mut self, bytes: u64) {
        self.used += bytes;
        self.peak = self.peak.max(self.used);
    }
    fn release(&mut self, bytes: u64) {
        self.used -= bytes;
    }
}

fn sized(worker: WorkerId, c: u32, bytes: u64) -> Need {
    Need {
        bytes,
        ..need(worker, c)
    }
}

///   subtask 0 needs 6 bytes, subtask 1 needs 6: a budget of 10 fetches one at a time, though
///   the window has room for both; the first's bytes go with it into its start.
#[test]
fn a_subtask_fetches_only_once_its_bytes_are_reserved() {
    let budget = Budget {
        limit: 10,
        ..Budget::default()
    };
    let mut core: WorkerCore<&'static str, Budget> = WorkerCore::with_room(2, budget);
    core.accept(T, run(0, 0), vec![sized(W1, 1, 6)]);
    core.accept(T, run(1, 0), vec![sized(W2, 2, 6)]);
    let f = fetches(&take(&mut core));
    assert_eq!(f.len(), 1, "the second waits for room: {f:?}");
    assert!(core.blocked());
    assert_eq!(core.room().used, 6);
    core.retry();
    assert!(take(&mut core).is_empty(), "still no room");
    // It lands with more than projected (8 bytes): counted as it lands, passed to the start.
    core.fetched(f[0].0, Ok(vec![(ChunkIdx(1), "eightbyt")]));
    let out = take(&mut core);
    let Some(CoreOut::Start { transit, .. }) = out.first() else {
        panic!("{out:?}")
    };
    assert_eq!((*transit, core.room().used), (8, 8));
    // The subtask took its bytes into its lease and ended: the second one may fetch.
    core.room.release(8);
    core.reported(T, SubtaskIdx(0));
    let f = fetches(&take(&mut core));
    assert_eq!(f.len(), 1);
    assert_eq!(core.room().used, 6);
    // It fails: its reservation goes back.
    let error = SubtaskError::Fetch("gone".into());
    core.fetched(f[0].0, Err(error));
    assert_eq!(core.room().used, 0);
    assert!(core.room().peak <= 10, "{:?}", core.room());
}

/// Alone in the window, a subtask is granted room it does not fit in (nothing else would free it).
#[test]
fn a_subtask_alone_is_never_refused() {
    let mut core: WorkerCore<&'static str, Budget> = WorkerCore::with_room(2, Budget::default());
    core.accept(T, run(0, 0), vec![sized(W1, 1, 6)]);
    assert_eq!(fetches(&take(&mut core)).len(), 1);
    core.accept(T, run(1, 0), vec![sized(W1, 2, 6)]);
    assert!(fetches(&take(&mut core)).is_empty());
    core.forget(T);
    assert_eq!(core.room().used, 0, "forgetting gives the bytes back");
}
