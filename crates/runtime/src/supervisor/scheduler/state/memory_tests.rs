//! Memory-aware dispatch: a worker gets no subtask whose projected memory would take what it
//! has in flight over its `worker.memory_limit`, unless it has nothing in flight.
use super::*;

fn item(s: u32, memory: u64) -> ReadySubtask {
    ReadySubtask {
        task: TaskId(1),
        subtask: SubtaskIdx(s),
        depth: 0,
        preferred: Some(WorkerId(0)),
        inputs: Vec::new(),
        siblings: None,
        memory,
        needs_code: false,
    }
}

fn started(st: &mut SchedulerState) -> Vec<u32> {
    st.dispatch();
    std::mem::take(&mut st.outbox)
        .into_iter()
        .flat_map(|o| match o {
            SchedOut::Run { subtasks, .. } => subtasks.into_iter().map(|r| r.subtask.0).collect(),
            SchedOut::Cancel { .. } => Vec::new(),
        })
        .collect()
}

#[test]
fn in_flight_memory_stays_under_the_limit() {
    let mut st = SchedulerState::new(100, 8);
    let w = st.add_worker(2, 0);
    st.set_memory_limit(w, 100);
    assert_eq!(st.memory_limits(), vec![100]);
    st.enqueue((0..4).map(|s| item(s, 40)).collect());
    assert_eq!(
        started(&mut st),
        vec![0, 1],
        "80 in flight; a third would make 120"
    );
    st.finished(w, TaskId(1), [SubtaskIdx(0)]);
    assert_eq!(started(&mut st), vec![2]);
    // Alone, a subtask over the limit still runs (submission refused the ones that cannot fit).
    st.finished(w, TaskId(1), [SubtaskIdx(1), SubtaskIdx(2)]);
    st.enqueue(vec![item(9, 500)]);
    assert_eq!(started(&mut st), vec![3]);
    assert!(started(&mut st).is_empty(), "9 waits for 3");
    st.finished(w, TaskId(1), [SubtaskIdx(3)]);
    assert_eq!(started(&mut st), vec![9]);
}

#[test]
fn no_limit_means_only_slots_and_prefetch_count() {
    let mut st = SchedulerState::new(100, 2);
    st.add_worker(2, 0);
    st.enqueue((0..6).map(|s| item(s, 1 << 40)).collect());
    assert_eq!(started(&mut st).len(), 4);
}
