//! A streamed task's state: parts run as they come, what later parts read is held until the
//! seal, and the task succeeds only once the seal's subtasks are done.
use super::tests::{ok, submitted};
use super::*;
use crate::config::TaskConfig;
use ares_core::graph::GraphDelta;
use ares_core::ids::TaskId;
use ares_core::prepare::stream::{prepare_streamed, stream_plan};
use ares_core::prepare::uniform_cluster;
use ares_core::tensor::{self, Tensor};

/// `sum(ones(64, chunk=1))`, fan-in 4, streamed from a first part of 16 chunks:
///
/// ```text
///   part 0: positions 0..8    FUSE[ones, sum] ×8 ─► 2 combines (region roots, held) ─┐
///   part 1: positions 8..40   ×32 ─► 8 roots                                          ├► 16 roots
///   part 2: positions 40..64  ×24 ─► 6 roots, and the seal:                           ┘  ─► 4 ─► 1
/// ```
fn parts() -> Vec<GraphDelta> {
    let t = tensor::ones(&[64], 1).unwrap().sum(None, false).unwrap();
    let config = TaskConfig {
        stream_from_chunks: Some(0),
        stream_first_chunks: 16,
        ..TaskConfig::default()
    };
    let plan = stream_plan(&Tensor::graph(&[&t]), &config)
        .unwrap()
        .unwrap();
    let mut parts = Vec::new();
    let workers = uniform_cluster(2, 1);
    prepare_streamed(
        &plan,
        &config,
        &workers,
        (TaskId(7), ares_core::ids::StageId(0)),
        |_| Ok(()),
        |d| {
            parts.push(d);
            Ok(true)
        },
    )
    .unwrap();
    parts
}

/// Reports every submitted subtask done until none is left; returns the released chunks.
fn run_all(st: &mut TaskState) -> Vec<u32> {
    let mut released = Vec::new();
    loop {
        let ids = submitted(&mut st.outbox);
        for out in st.outbox.drain(..) {
            if let TaskOut::Release(r) = out {
                released.extend(r.values().flatten().map(|c| c.0));
            }
        }
        if ids.is_empty() {
            return released;
        }
        let reports = ids.iter().map(|s| ok(st, *s)).collect();
        st.on_reports(WorkerId(0), reports);
    }
}

#[test]
fn parts_run_as_they_come_and_the_task_ends_after_the_seal() {
    let mut parts = parts().into_iter();
    let first = parts.next().unwrap();
    let held: Vec<u32> = first.held.iter().map(|c| c.0).collect();
    assert_eq!(held.len(), 2, "two region roots");
    let mut st = TaskState::streamed(first, 3).unwrap();
    st.start();
    let released = run_all(&mut st);
    assert!(!st.is_ended(), "the graph is not complete");
    assert!(
        released.iter().all(|c| !held.contains(c)),
        "roots held: {released:?}"
    );
    assert!(st.result_locations().is_empty());

    let rest: Vec<GraphDelta> = parts.collect();
    assert_eq!(rest.len(), 2, "one more part, and the last with the seal");
    let mut all_held = held.clone();
    for part in rest {
        let sealed = part.sealed;
        all_held.extend(part.held.iter().map(|c| c.0));
        st.extend(part).unwrap();
        let released = run_all(&mut st);
        if !sealed {
            assert!(!st.is_ended());
            assert!(
                released.iter().all(|c| !all_held.contains(c)),
                "held until the seal"
            );
        } else {
            // The seal's combines read every root: all released, the result kept.
            let mut roots: Vec<u32> = released
                .iter()
                .copied()
                .filter(|c| all_held.contains(c))
                .collect();
            roots.sort_unstable();
            assert_eq!(roots, all_held, "every root released once read");
        }
    }
    assert!(st.is_ended() && st.is_sealed());
    assert_eq!(st.progress(), 1.0);
    let results = st.result_locations();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, Some(WorkerId(0)));
    assert!(
        st.extend(parts_seal()).is_err(),
        "a part after the seal is refused"
    );
}

fn parts_seal() -> GraphDelta {
    parts().pop().unwrap()
}

#[test]
fn the_first_part_alone_never_succeeds_even_when_all_of_it_is_done() {
    let first = parts().remove(0);
    let n = first.len();
    let mut st = TaskState::streamed(first, 3).unwrap();
    st.start();
    run_all(&mut st);
    let progress = st.progress();
    assert!(
        progress > 0.0 && progress < 0.5,
        "{n} done: {progress} of the expected whole"
    );
    assert!(!st.is_ended());
}

/// A held chunk lost with its worker before the part that reads it came is recomputed at
/// once, as a lost result is: the seal then finds every root where it can read it.
#[test]
fn held_chunks_lost_with_a_worker_are_recomputed_before_their_readers_come() {
    let mut parts = parts().into_iter();
    let first = parts.next().unwrap();
    let mut st = TaskState::streamed(first, 5).unwrap();
    st.start();
    run_all(&mut st);
    st.on_worker_lost(WorkerId(0), &[], "killed");
    let again = submitted(&mut st.outbox);
    assert!(!again.is_empty(), "the roots' producers run again at once");
    let reports = again.iter().map(|s| ok(&st, *s)).collect();
    st.on_reports(WorkerId(1), reports);
    run_all(&mut st);
    for part in parts {
        st.extend(part).unwrap();
        run_all(&mut st);
    }
    assert!(st.is_ended(), "ended after the seal");
    assert!(st.retries() > 0);
    let results = st.result_locations();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, Some(WorkerId(0)), "the result was computed");
}
