//! The supervisor's shuffle bookkeeping on `TaskState` alone: the virtual proxy, pieces released after the last reducer, and lineage recovery of only the lost mapper (or of every mapper once pieces were released).

use crate::*;
use ares_core::graph::shuffle;

fn ok(st: &TaskState, s: u32) -> SubtaskReport {
    // What a worker reports: the kept chunks, and a mapper's pieces.
    let g = &st.graph;
    let mut outputs: Vec<(ChunkIdx, u64)> = g
        .outputs
        .row(s as usize)
        .iter()
        .map(|c| (ChunkIdx(*c), 8))
        .collect();
    for &c in g.members.row(s as usize) {
        outputs.extend(shuffle::mapper_pieces(&g.chunks, ChunkIdx(c)).map(|k| (k, 8)));
    }
    SubtaskReport {
        subtask: SubtaskIdx(s),
        outcome: Ok(outputs),
    }
}

fn submitted(out: &mut Vec<TaskOut>) -> Vec<ares::supervisor::scheduler::state::ReadySubtask> {
    let mut items = Vec::new();
    for o in out.drain(..) {
        if let TaskOut::Submit(v) = o {
            items.extend(v);
        }
    }
    items.sort_by_key(|r| r.subtask);
    items
}

fn released(out: &[TaskOut]) -> Vec<ChunkIdx> {
    out.iter()
        .flat_map(|o| match o {
            TaskOut::Release(m) => m.values().flatten().copied().collect(),
            _ => vec![],
        })
        .collect()
}

#[test]
fn the_supervisor_completes_the_proxy_releases_pieces_and_reruns_only_the_lost_mapper() {
    // 4 mappers, 3 reducers, one chunk per subtask.
    let t = tensor::shuffle_bench(4, 3, 10).unwrap();
    let config = TaskConfig {
        initial_same_color_num: Some(1),
        ..TaskConfig::default()
    };
    let p = prepare(
        &Tensor::graph(&[&t]),
        &config,
        &uniform_cluster(2, 2),
        TaskId(3),
    )
    .unwrap();
    let mut st = TaskState::new(Arc::new(p.subtasks), 3);
    let g = st.graph.clone();
    let is_op = |s: u32, op: Op| {
        g.members
            .row(s as usize)
            .iter()
            .all(|c| g.chunks.node(ChunkIdx(*c)).op == op)
    };
    st.start();
    let mappers = submitted(&mut st.outbox);
    assert_eq!(mappers.len(), 4);
    assert!(mappers.iter().all(|r| is_op(r.subtask.0, Op::ShuffleMap)));
    // Mappers 0, 1 on w0; 2, 3 on w1. The proxy completes without a worker.
    for (i, r) in mappers.iter().enumerate() {
        let report = ok(&st, r.subtask.0);
        st.on_reports(WorkerId(i as u32 / 2), vec![report]);
    }
    let reducers = submitted(&mut st.outbox);
    assert_eq!(
        reducers.len(),
        3,
        "the proxy completed and its reducers are ready"
    );
    for r in &reducers {
        assert!(is_op(r.subtask.0, Op::ShuffleReduce));
        assert_eq!(r.inputs.len(), 4, "one piece per mapper");
        assert!(r.inputs.iter().all(|(c, _, _)| shuffle::is_piece(*c)));
        let on_w0 = r.inputs.iter().filter(|i| i.1 == WorkerId(0)).count();
        assert_eq!(on_w0, 2, "pieces are where their mappers ran");
    }
    // Reducer 0 finishes: nothing is released yet.
    let r0 = ok(&st, reducers[0].subtask.0);
    st.on_reports(WorkerId(0), vec![r0]);
    assert!(released(&st.outbox).is_empty());
    // w1 dies while reducers 1 and 2 are running: only mappers 2 and 3 run again.
    let running = [reducers[1].subtask, reducers[2].subtask];
    st.on_worker_lost(WorkerId(1), &running, "killed");
    let again = submitted(&mut st.outbox);
    let again: Vec<u32> = again.iter().map(|r| r.subtask.0).collect();
    assert_eq!(again, vec![mappers[2].subtask.0, mappers[3].subtask.0]);
    for s in again {
        let report = ok(&st, s);
        st.on_reports(WorkerId(0), vec![report]);
    }
    let reducers_again = submitted(&mut st.outbox);
    assert_eq!(reducers_again.len(), 2, "the two unfinished reducers");
    assert!(reducers_again
        .iter()
        .all(|r| r.inputs.iter().all(|i| i.1 == WorkerId(0))));
    for r in &reducers_again {
        let report = ok(&st, r.subtask.0);
        st.on_reports(WorkerId(0), vec![report]);
    }
    // The last reducer released every mapper's pieces and the mappers' chunks.
    let gone = released(&st.outbox);
    assert_eq!(gone.iter().filter(|c| shuffle::is_piece(**c)).count(), 12);
    assert!(st.outbox.iter().any(|o| matches!(o, TaskOut::Finished(_))));
}

#[test]
fn a_bucket_lost_after_its_pieces_were_released_reruns_every_mapper() {
    use ares::supervisor::task_processor::state::SubState;
    // sort of 8 chunks: sample, splitters, shuffle 1 (buckets), lengths, shuffle 2.
    let x = tensor::rand(&[40], 5, Some(1)).unwrap().sort().unwrap();
    let config = TaskConfig {
        fuse_enabled: false,
        ..TaskConfig::default()
    };
    let p = prepare(
        &Tensor::graph(&[&x]),
        &config,
        &uniform_cluster(2, 1),
        TaskId(4),
    )
    .unwrap();
    let mut st = TaskState::new(Arc::new(p.subtasks), 5);
    let g = st.graph.clone();
    let first = shuffle::proxies(&g.chunks)[0];
    let mappers: Vec<u32> = g
        .chunks
        .inputs(first)
        .iter()
        .map(|m| g.owner[m.index()].0)
        .collect();
    st.start();
    let mut queue: std::collections::VecDeque<_> = submitted(&mut st.outbox).into();
    let mut runs: std::collections::HashMap<u32, u32> = Default::default();
    let mut lost = None;
    while let Some(r) = queue.pop_front() {
        if st.state_of(r.subtask) != SubState::Submitted {
            continue;
        }
        // The bucket lengths read the first mappers' chunks: kept waiting until the pieces
        // are gone, those chunks stay held for it while the pieces are released.
        let lengths = g
            .members
            .row(r.subtask.index())
            .iter()
            .any(|c| g.chunks.node(ChunkIdx(*c)).op == Op::Combine);
        if lengths && lost.is_none() && !queue.is_empty() {
            queue.push_back(r);
            continue;
        }
        *runs.entry(r.subtask.0).or_default() += 1;
        let w = match lost {
            Some(WorkerId(dead)) => WorkerId(1 - dead),
            None => WorkerId(r.subtask.0 % 2),
        };
        let report = ok(&st, r.subtask.0);
        st.on_reports(w, vec![report]);
        let drained = released(&st.outbox).iter().any(|c| shuffle::is_piece(*c));
        queue.extend(submitted(&mut st.outbox));
        if drained && lost.is_none() {
            // The worker of the last bucket dies before that bucket is cut into chunks.
            lost = Some(w);
            let requeue: Vec<SubtaskIdx> = queue.iter().map(|r| r.subtask).collect();
            st.on_worker_lost(w, &requeue, "killed");
            queue.clear();
            queue.extend(submitted(&mut st.outbox));
        }
    }
    assert!(st.is_ended() && st.progress() == 1.0, "the task finished");
    assert!(lost.is_some());
    for m in mappers {
        assert_eq!(
            runs[&m], 2,
            "mapper subtask {m} ran again: its pieces were gone"
        );
    }
}
