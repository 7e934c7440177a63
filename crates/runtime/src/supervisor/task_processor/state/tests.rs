//! State-machine tests of one task: recorded outboxes, no actors or sockets.
use super::*;
use crate::config::TaskConfig;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::{self, Tensor};

/// `sum(rand(4, chunk=1))` without fusion:
///   s0..s3 rand ─► s4..s7 sum ─► s8 combine        (9 subtasks, one chunk each)
fn state(retries: u32) -> TaskState {
    let t = tensor::rand(&[4], 1, Some(1))
        .unwrap()
        .sum(None, false)
        .unwrap();
    let config = TaskConfig {
        fuse_enabled: false,
        ..TaskConfig::default()
    };
    let p = prepare(
        &Tensor::graph(&[&t]),
        &config,
        &uniform_cluster(2, 1),
        TaskId(7),
    )
    .unwrap();
    TaskState::new(Arc::new(p.subtasks), retries)
}

pub(super) fn submitted(out: &mut Vec<TaskOut>) -> Vec<u32> {
    let mut ids: Vec<u32> = out
        .iter()
        .flat_map(|o| {
            if let TaskOut::Submit(v) = o {
                v.iter().map(|r| r.subtask.0).collect()
            } else {
                vec![]
            }
        })
        .collect();
    ids.sort_unstable();
    out.retain(|o| !matches!(o, TaskOut::Submit(_)));
    ids
}

pub(super) fn ok(st: &TaskState, s: u32) -> SubtaskReport {
    let outputs = st
        .graph
        .outputs
        .row(s as usize)
        .iter()
        .map(|c| (ChunkIdx(*c), 8))
        .collect();
    SubtaskReport {
        subtask: SubtaskIdx(s),
        outcome: Ok(outputs),
    }
}

#[test]
fn runs_in_dependency_order_and_releases_consumed_chunks() {
    let mut st = state(3);
    st.start();
    assert_eq!(submitted(&mut st.outbox), vec![0, 1, 2, 3]);
    let reports = (0..4).map(|s| ok(&st, s)).collect();
    st.on_reports(WorkerId(0), reports);
    assert_eq!(submitted(&mut st.outbox), vec![4, 5, 6, 7]);
    let reports = (4..8).map(|s| ok(&st, s)).collect();
    st.on_reports(WorkerId(1), reports);
    assert_eq!(submitted(&mut st.outbox), vec![8]);
    // The four `rand` chunks were consumed: released on w0, in one message.
    assert_eq!(st.outbox.len(), 1);
    assert!(matches!(&st.outbox[0], TaskOut::Release(r) if r[&WorkerId(0)].len() == 4));
    st.outbox.clear();
    st.on_reports(WorkerId(1), vec![ok(&st, 8)]);
    assert!(st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)));
    assert_eq!(st.progress(), 1.0);
    assert_eq!(st.result_locations().len(), 1);
}

#[test]
fn lost_worker_reruns_producers_of_lost_chunks() {
    let mut st = state(3);
    st.start();
    st.outbox.clear();
    // s0, s1 finished on w0; s2, s3 on w1; then s4 (reading s0's chunk) is running on w1.
    st.on_reports(WorkerId(0), vec![ok(&st, 0), ok(&st, 1)]);
    st.on_reports(WorkerId(1), vec![ok(&st, 2), ok(&st, 3)]);
    assert_eq!(submitted(&mut st.outbox), vec![4, 5, 6, 7]);
    // w0 dies while running s4 and s5: its chunks (outputs of s0, s1) are lost.
    st.on_worker_lost(
        WorkerId(0),
        &[SubtaskIdx(4), SubtaskIdx(5)],
        "connection closed",
    );
    assert_eq!(
        submitted(&mut st.outbox),
        vec![0, 1],
        "producers of lost inputs run again"
    );
    assert_eq!(st.state_of(SubtaskIdx(4)), SubState::Waiting);
    st.on_reports(WorkerId(1), vec![ok(&st, 0), ok(&st, 1)]);
    assert_eq!(submitted(&mut st.outbox), vec![4, 5]);
    // A late report from the dead worker for s6 (still submitted elsewhere) is applied once.
    let reports = (4..8).map(|s| ok(&st, s)).collect();
    st.on_reports(WorkerId(1), reports);
    st.on_reports(WorkerId(1), vec![ok(&st, 8)]);
    assert!(st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)));
}

#[test]
fn results_lost_after_success_are_recomputed_from_lineage() {
    let mut st = state(3);
    st.start();
    st.outbox.clear();
    // Everything ran on w0 but the final combine (s8), whose result w1 holds; what s0..s7
    // made was consumed and released.
    st.on_reports(WorkerId(0), (0..4).map(|s| ok(&st, s)).collect());
    st.on_reports(WorkerId(0), (4..8).map(|s| ok(&st, s)).collect());
    st.on_reports(WorkerId(1), vec![ok(&st, 8)]);
    assert!(st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)));
    st.outbox.clear();
    // Losing w0 loses no result: nothing runs.
    st.on_worker_lost(WorkerId(0), &[], "connection closed");
    assert!(!st.reopen_for_lost_results());
    assert!(st.outbox.is_empty());
    // Losing w1 loses the result: its whole lineage runs again, leaves first.
    st.on_worker_lost(WorkerId(1), &[], "connection closed");
    assert!(st.reopen_for_lost_results());
    assert!(!st.is_ended());
    assert_eq!(submitted(&mut st.outbox), vec![0, 1, 2, 3]);
    assert_eq!(st.progress(), 0.0);
    st.on_reports(WorkerId(2), (0..4).map(|s| ok(&st, s)).collect());
    assert_eq!(submitted(&mut st.outbox), vec![4, 5, 6, 7]);
    st.on_reports(WorkerId(2), (4..8).map(|s| ok(&st, s)).collect());
    assert_eq!(submitted(&mut st.outbox), vec![8]);
    st.on_reports(WorkerId(2), vec![ok(&st, 8)]);
    assert!(st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)));
    assert!(st
        .result_locations()
        .iter()
        .all(|(_, w)| *w == Some(WorkerId(2))));
    assert_eq!(st.retries(), 9, "each subtask ran once more");
}

#[test]
fn kernel_error_fails_the_task_with_its_message() {
    let mut st = state(3);
    st.start();
    st.on_reports(
        WorkerId(0),
        vec![SubtaskReport {
            subtask: SubtaskIdx(2),
            outcome: Err(SubtaskError::Failed(
                "kernel rand failed: disk on fire".into(),
            )),
        }],
    );
    let Some(TaskOut::Finished(TaskEnd::Failed(msg))) = st.outbox.last() else {
        panic!("{:?}", st.outbox)
    };
    assert!(
        msg.contains("disk on fire") && msg.contains("0700000000000200"),
        "{msg}"
    );
    st.outbox.clear();
    st.on_reports(WorkerId(0), vec![ok(&st, 0)]);
    assert!(
        st.outbox.iter().all(|o| !matches!(o, TaskOut::Submit(_))),
        "an ended task submits nothing"
    );
}

#[test]
fn retries_are_bounded() {
    let mut st = state(1);
    st.start();
    st.outbox.clear();
    st.on_worker_lost(WorkerId(0), &[SubtaskIdx(0)], "connection closed");
    assert_eq!(submitted(&mut st.outbox), vec![0]);
    st.on_worker_lost(WorkerId(1), &[SubtaskIdx(0)], "connection closed");
    let Some(TaskOut::Finished(TaskEnd::Failed(msg))) = st.outbox.last() else {
        panic!("{:?}", st.outbox)
    };
    assert!(msg.contains("subtask_max_retries = 1"), "{msg}");
    // It names the subtask, its operations and the last cause.
    let id = st.graph.subtasks[0].id;
    assert!(msg.starts_with(&format!("subtask {id} (rand)")), "{msg}");
    assert!(
        msg.ends_with("last cause: w1 was lost while it had the subtask (connection closed)"),
        "{msg}"
    );
}

#[test]
fn fetch_failures_requeue_instead_of_failing() {
    let mut st = state(3);
    st.start();
    st.outbox.clear();
    st.on_reports(
        WorkerId(0),
        vec![SubtaskReport {
            subtask: SubtaskIdx(1),
            outcome: Err(SubtaskError::Fetch("peer gone".into())),
        }],
    );
    assert_eq!(submitted(&mut st.outbox), vec![1]);
    assert!(!st.is_ended());
}

#[test]
fn a_redrive_resubmits_what_was_in_flight_without_counting_retries() {
    let mut st = state(0);
    st.start();
    assert_eq!(submitted(&mut st.outbox), vec![0, 1, 2, 3]);
    st.on_reports(WorkerId(0), vec![ok(&st, 0)]);
    assert_eq!(submitted(&mut st.outbox), vec![4]);
    // The scheduler restarted: everything submitted and unreported goes again.
    st.redrive(None);
    assert_eq!(submitted(&mut st.outbox), vec![1, 2, 3, 4]);
    assert_eq!(st.retries(), 0);
    // A report of the earlier dispatch still counts; its duplicate is stale.
    st.on_reports(WorkerId(1), vec![ok(&st, 1)]);
    st.on_reports(WorkerId(0), vec![ok(&st, 1)]);
    assert_eq!(submitted(&mut st.outbox), vec![5]);
    assert!((st.progress() - 2.0 / 9.0).abs() < 1e-9);
}

/// Ids of the subtasks submitted, in the order they were handed over.
fn handed_over(out: &mut Vec<TaskOut>) -> Vec<u32> {
    let ids = out
        .iter()
        .flat_map(|o| match o {
            TaskOut::Submit(v) => v.iter().map(|r| r.subtask.0).collect(),
            _ => vec![],
        })
        .collect();
    out.retain(|o| !matches!(o, TaskOut::Submit(_)));
    ids
}

/// The same graph through a window of two:
///   s0 s1 (w0)  s2 s3 (w1) rand ─► s4..s7 sum ─► s8 combine
/// The initial subtasks go interleaved across their workers, at most two at a time, and a
/// sum that becomes ready passes the rands still queued.
#[test]
fn a_window_hands_over_few_subtasks_interleaved_and_deepest_first() {
    let mut st = state(3).with_window(2);
    let bound: Vec<_> = (0..4).map(|s| st.graph.subtasks[s].worker).collect();
    assert_eq!(
        bound,
        [
            Some(WorkerId(0)),
            Some(WorkerId(0)),
            Some(WorkerId(1)),
            Some(WorkerId(1))
        ]
    );
    st.start();
    assert_eq!(
        handed_over(&mut st.outbox),
        vec![0, 2],
        "one per worker first"
    );
    assert_eq!(st.state_of(SubtaskIdx(1)), SubState::Ready);
    st.on_reports(WorkerId(0), vec![ok(&st, 0)]);
    assert_eq!(
        handed_over(&mut st.outbox),
        vec![4],
        "the sum of s0 goes before s1, s3"
    );
    st.on_reports(WorkerId(1), vec![ok(&st, 2), ok(&st, 4)]);
    assert_eq!(handed_over(&mut st.outbox), vec![6, 1]);
    let mut order = vec![];
    for s in [6, 1, 3, 5, 7, 8] {
        st.on_reports(WorkerId(0), vec![ok(&st, s)]);
        order.extend(handed_over(&mut st.outbox));
    }
    assert_eq!(order, vec![3, 5, 7, 8]);
    assert!(st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)));
}

/// A queued subtask whose input was on a lost worker is not handed over blind: it waits
/// again, its producer runs again, then it goes.
#[test]
fn a_queued_subtask_whose_input_was_lost_waits_for_its_producer_again() {
    let mut st = state(3).with_window(2);
    st.start();
    assert_eq!(handed_over(&mut st.outbox), vec![0, 2]);
    st.window = 1;
    // s0 and s2 finish on w1: s4 goes, s6 (reading s2's chunk on w1) stays queued.
    st.on_reports(WorkerId(1), vec![ok(&st, 0), ok(&st, 2)]);
    assert_eq!(handed_over(&mut st.outbox), vec![4]);
    assert_eq!(st.state_of(SubtaskIdx(6)), SubState::Ready);
    st.on_worker_lost(WorkerId(1), &[], "connection closed");
    assert_eq!(st.state_of(SubtaskIdx(6)), SubState::Waiting);
    assert_eq!(
        st.state_of(SubtaskIdx(2)),
        SubState::Ready,
        "its producer runs again"
    );
    // s4 cannot fetch s0's lost chunk; from there every handed-over subtask succeeds on w0.
    st.on_reports(
        WorkerId(0),
        vec![SubtaskReport {
            subtask: SubtaskIdx(4),
            outcome: Err(SubtaskError::Fetch("w1 is gone".into())),
        }],
    );
    let mut order = handed_over(&mut st.outbox);
    let mut next = 0;
    while next < order.len() {
        st.on_reports(WorkerId(0), vec![ok(&st, order[next])]);
        order.extend(handed_over(&mut st.outbox));
        next += 1;
    }
    assert!(
        st.outbox.contains(&TaskOut::Finished(TaskEnd::Succeeded)),
        "{order:?}"
    );
    let at = |s| order.iter().position(|x| *x == s).unwrap();
    assert!(at(2) < at(6) && at(0) < at(4), "{order:?}");
}

/// A subtask calling a user's function that keeps losing its worker (a crash in the
/// function) fails the task naming the function once the retries are spent.
#[test]
fn retries_exhausted_name_the_user_function() {
    use ares_core::ops::family::python_call::{map_blocks, BlockCall, UserFunction};
    let x = tensor::rand(&[2], 2, Some(1)).unwrap();
    let call = BlockCall {
        function: UserFunction::new("segfaulting_filter", b"pickled".to_vec()),
        out_splits: vec![vec![2]],
        dtype: ares_core::array::DType::F64,
        inputs: vec![vec![Some(0)]],
    };
    let y = map_blocks(call, vec![x]).unwrap();
    let p = prepare(
        &Tensor::graph(&[&y]),
        &TaskConfig::default(),
        &uniform_cluster(1, 1),
        TaskId(8),
    )
    .unwrap();
    let mut st = TaskState::new(Arc::new(p.subtasks), 0);
    st.start();
    let s = submitted(&mut st.outbox)[0];
    st.on_worker_lost(WorkerId(0), &[SubtaskIdx(s)], "connection closed");
    let Some(TaskOut::Finished(TaskEnd::Failed(msg))) = st.outbox.last() else {
        panic!("{:?}", st.outbox)
    };
    assert!(msg.contains("map_blocks of segfaulting_filter"), "{msg}");
}
