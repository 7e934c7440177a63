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
        siblings: None,
        memory: 0,
        needs_code: false,
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

#[test]
fn a_silent_worker_is_suspect_once_and_its_work_is_handed_back() {
    let mut s = SchedulerState::new(100, 1);
    let (a, b) = (s.add_worker(1, 0), s.add_worker(1, 0));
    s.enqueue(vec![ready(0, 0, Some(0), &[]), ready(1, 0, Some(1), &[])]);
    s.dispatch();
    s.outbox.clear();
    // Everyone silent: the supervisor's own pause, not a suspect worker.
    assert!(s.suspects(5000, 1000).is_empty());
    s.heartbeat(b, 4500);
    let back = s.suspects(5000, 1000);
    assert_eq!(back.get(&TaskId(1)), Some(&vec![SubtaskIdx(0)]));
    assert!(s.suspects(6000, 1000).is_empty(), "once per silence");
    // Its late report changes nothing; a heartbeat makes it usable again.
    s.finished(a, TaskId(1), [SubtaskIdx(0)]);
    s.heartbeat(a, 6000);
    assert_eq!(s.load(), vec![(a, 0, 0), (b, 1, 0)]);
}

#[test]
fn a_draining_worker_gets_no_work_and_hands_back_its_queue() {
    let mut s = SchedulerState::new(100, 1);
    let (a, b) = (s.add_worker(1, 0), s.add_worker(1, 0));
    s.enqueue(vec![ready(0, 0, Some(0), &[]), ready(1, 0, Some(0), &[])]);
    s.dispatch();
    s.outbox.clear();
    let back = s.set_draining(a);
    assert_eq!(back.get(&TaskId(1)), Some(&vec![SubtaskIdx(1)]));
    // Preferred or holding the inputs, it is still never chosen.
    s.enqueue(vec![ready(1, 0, Some(0), &[(5, 0, 1 << 20)])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(b.0, vec![1])]);
}

#[test]
fn a_restart_keeps_the_workers_and_forgets_the_queues() {
    let mut s = SchedulerState::new(100, 1);
    let (a, b) = (s.add_worker(1, 0), s.add_worker(2, 0));
    s.enqueue((0..6).map(|i| ready(i, 0, None, &[])).collect());
    s.dispatch();
    s.restart(&[(a, 1), (b, 2)], 10);
    assert_eq!(s.load(), vec![(a, 0, 0), (b, 0, 0)]);
    assert!(s.outbox.is_empty());
    assert_eq!(s.add_worker(1, 10), WorkerId(2), "ids keep counting");
}

const MB8: u64 = 8 << 20;

#[test]
fn a_chain_stays_on_the_worker_holding_its_inputs() {
    //   w0 (2 slots)                                  w1 (2 slots, idle throughout)
    //   s0 ─8 MB─► s1 ─8 MB─► s2 ─8 MB─► s3
    //                  ▲ 8 B from w1 (a scalar) does not pull it over
    let mut s = SchedulerState::new(100, 1);
    s.add_worker(2, 0);
    s.add_worker(2, 0);
    s.enqueue(vec![ready(0, 0, Some(0), &[])]);
    for step in 1..4u32 {
        s.dispatch();
        assert_eq!(runs(&s.outbox), vec![(0, vec![step - 1])]);
        s.outbox.clear();
        s.finished(WorkerId(0), TaskId(1), [SubtaskIdx(step - 1)]);
        let scalar = (100 + step, 1, 8);
        s.enqueue(vec![ready(step, step, None, &[(step - 1, 0, MB8), scalar])]);
    }
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(0, vec![3])]);
    assert_eq!(s.load(), vec![(WorkerId(0), 1, 0), (WorkerId(1), 0, 0)]);
}

fn with_siblings(mut r: ReadySubtask, on: u32) -> ReadySubtask {
    r.siblings = Some(WorkerId(on));
    r
}

#[test]
fn equal_input_bytes_follow_the_siblings_then_the_load() {
    //   a0@w0  b0@w1        a1@w0  b1@w1        a2@w0 (16 MB)  b2@w1
    //      \   /               \   /                 \        /
    //       p0                  p1                       p2
    //         \_________________|________________________/
    //                          sum (reads p0, p1, p2)
    // p0: equal bytes, no sibling done: the less loaded worker (w1; w0 runs x).
    // p1: equal bytes, both workers idle (x and p0 done), p0's output on w1: w1, where the
    //     lower id would have won without it.
    // p2: more bytes on w0: w0, wherever its siblings are.
    let mut s = SchedulerState::new(100, 2);
    s.add_worker(1, 0);
    s.add_worker(1, 0);
    s.enqueue(vec![ready(9, 0, Some(0), &[])]); // x
    s.dispatch();
    s.outbox.clear();
    s.enqueue(vec![ready(0, 1, None, &[(10, 0, MB8), (20, 1, MB8)])]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(1, vec![0])]);
    s.outbox.clear();
    s.finished(WorkerId(0), TaskId(1), [SubtaskIdx(9)]);
    s.finished(WorkerId(1), TaskId(1), [SubtaskIdx(0)]);
    let p1 = ready(1, 1, None, &[(11, 0, MB8), (21, 1, MB8)]);
    s.enqueue(vec![with_siblings(p1, 1)]);
    let p2 = ready(2, 1, None, &[(12, 0, 2 * MB8), (22, 1, MB8)]);
    s.enqueue(vec![with_siblings(p2, 1)]);
    s.dispatch();
    assert_eq!(runs(&s.outbox), vec![(0, vec![2]), (1, vec![1])]);
}

/// A subtask calling a client's function goes only to a worker that runs code, even when
/// initial assignment preferred another or another holds its inputs; with no such worker,
/// to any (where it fails at once, naming `python -m ares worker`).
#[test]
fn code_goes_only_where_code_runs() {
    let mut s = SchedulerState::new(16, 4);
    let native = s.add_worker(1, 0);
    let python = s.add_worker(1, 0);
    s.set_runs_code(python, true);
    let mut item = ready(0, 0, Some(native.0), &[(1, native.0, 1000)]);
    item.needs_code = true;
    let plain = ready(1, 0, Some(native.0), &[(1, native.0, 1000)]);
    s.enqueue(vec![item, plain]);
    s.dispatch();
    let mut placed: Vec<(u32, u32)> = Vec::new();
    for out in std::mem::take(&mut s.outbox) {
        if let SchedOut::Run {
            worker, subtasks, ..
        } = out
        {
            placed.extend(subtasks.iter().map(|r| (r.subtask.0, worker.0)));
        }
    }
    placed.sort();
    assert_eq!(placed, vec![(0, python.0), (1, native.0)]);

    let mut only_native = SchedulerState::new(16, 4);
    let w = only_native.add_worker(1, 0);
    let mut item = ready(0, 0, None, &[]);
    item.needs_code = true;
    only_native.enqueue(vec![item]);
    only_native.dispatch();
    assert!(matches!(
        only_native.outbox.as_slice(),
        [SchedOut::Run { worker, .. }] if *worker == w
    ));
}
