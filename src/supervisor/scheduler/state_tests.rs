//! Scheduler state-machine tests: placement, queueing, silence; no actors or clocks.
use super::*;

fn ready(s: u32, depth: u32, preferred: Option<u32>, inputs: &[(u32, u32, u64)]) -> ReadySubtask {
    ReadySubtask {
        task: TaskId(1),
        subtask: SubtaskIdx(s),
        depth,
        preferred: preferred.map(WorkerId),
        inputs: inputs
            .iter()
            .map(|(c, w, b)| (ChunkIdx(*c), WorkerId(*w), *b))
            .collect(),
        memory: 0,
    }
}

fn runs(out: &[SchedOut]) -> Vec<(u32, Vec<u32>)> {
    out.iter()
        .filter_map(|o| match o {
            SchedOut::Run {
                worker, subtasks, ..
            } => Some((worker.0, subtasks.iter().map(|r| r.subtask.0).collect())),
            _ => None,
        })
        .collect()
}

#[test]
fn never_more_running_than_slots_and_deepest_first() {
    let mut s = SchedulerState::new(100, 1);
    s.add_worker(2, 0);
    s.enqueue(vec![
        ready(0, 0, None, &[]),
        ready(1, 2, None, &[]),
        ready(2, 1, None, &[]),
        ready(3, 0, None, &[]),
    ]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(0, vec![1, 2])]);
    s.outbox.clear();
    s.dispatch();
    assert!(s.outbox.is_empty(), "no free slot");
    s.finished(WorkerId(0), TaskId(1), [SubtaskIdx(1)]);
    s.dispatch();
    assert_eq!(
        runs(&s.outbox),
        vec![(0, vec![0])],
        "equal depth: earlier enqueued first"
    );
}

#[test]
fn placement_prefers_assignment_then_input_bytes_then_idle() {
    let mut s = SchedulerState::new(100, 1);
    s.add_worker(1, 0);
    s.add_worker(1, 0);
    s.enqueue(vec![ready(0, 0, Some(1), &[])]);
    s.enqueue(vec![ready(1, 1, None, &[(5, 0, 100), (6, 1, 10)])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(0, vec![1]), (1, vec![0])]);
    s.outbox.clear();
    // w0 holds the bytes but is saturated with a queue; w1 frees up and is idle.
    s.enqueue(vec![ready(2, 1, None, &[(7, 0, 100)])]);
    s.finished(WorkerId(1), TaskId(1), [SubtaskIdx(0)]);
    s.enqueue(vec![ready(3, 1, None, &[(8, 0, 100)])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(1, vec![3])]);
}

#[test]
fn dead_worker_returns_running_and_queued_work() {
    let mut s = SchedulerState::new(100, 1);
    let w = s.add_worker(1, 0);
    s.enqueue(vec![ready(0, 0, None, &[]), ready(1, 0, None, &[])]);
    s.dispatch();
    assert_eq!(s.expired(5_000, 10_000), vec![]);
    s.heartbeat(w, 1_000);
    assert_eq!(s.expired(12_000, 10_000), vec![w]);
    let lost = s.remove_worker(w);
    assert_eq!(lost[&TaskId(1)], vec![SubtaskIdx(0), SubtaskIdx(1)]);
    // With no worker left, new work waits and goes to the next worker that registers.
    s.outbox.clear();
    s.enqueue(vec![ready(2, 0, None, &[])]);
    s.dispatch();
    assert!(s.outbox.is_empty());
    s.add_worker(1, 0);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(1, vec![2])]);
}

#[test]
fn cancel_drops_queued_and_cancels_running() {
    let mut s = SchedulerState::new(1, 1);
    s.add_worker(1, 0);
    s.enqueue(vec![ready(0, 0, None, &[]), ready(1, 0, None, &[])]);
    s.dispatch();
    s.outbox.clear();
    s.cancel_task(TaskId(1));
    assert_eq!(
        s.outbox,
        vec![SchedOut::Cancel {
            worker: WorkerId(0),
            task: TaskId(1),
            subtasks: vec![SubtaskIdx(0)]
        }]
    );
    assert_eq!(s.load(), vec![(WorkerId(0), 0, 0)]);
}

#[test]
fn prefetch_keeps_more_in_flight_per_slot() {
    let mut s = SchedulerState::new(100, 3);
    s.add_worker(2, 0);
    s.enqueue((0..10).map(|i| ready(i, 0, None, &[])).collect());
    s.dispatch();
    assert_eq!(runs(&s.outbox)[0].1.len(), 6, "2 slots x 3");
    assert_eq!(s.load(), vec![(WorkerId(0), 6, 4)]);
}

#[test]
fn batches_are_split_at_max_batch() {
    let mut s = SchedulerState::new(2, 1);
    s.add_worker(5, 0);
    s.enqueue((0..5).map(|i| ready(i, 0, None, &[])).collect());
    s.dispatch();
    let sizes: Vec<usize> = runs(&s.outbox).iter().map(|(_, v)| v.len()).collect();
    assert_eq!(sizes, vec![2, 2, 1]);
}

#[test]
fn silent_workers_get_no_new_work_while_another_answers() {
    let mut s = SchedulerState::new(100, 1);
    s.add_worker(1, 0);
    s.add_worker(1, 0);
    s.heartbeat(WorkerId(1), 1000);
    s.mark_silent(1000, 300); // w0 last heard at 0: silent
    s.enqueue(vec![ready(0, 0, Some(0), &[(5, 0, 100)])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(1, vec![0])]);
    s.outbox.clear();
    s.heartbeat(WorkerId(0), 1100); // it answers again
    s.enqueue(vec![ready(1, 0, Some(0), &[])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(0, vec![1])]);
}
