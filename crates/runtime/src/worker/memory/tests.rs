//! The ledger's decisions, step by step, without files or threads.

use super::*;

fn k(c: u32) -> Key {
    (TaskId(1), ChunkIdx(c))
}

const MB: u64 = 1 << 20;

fn go(a: Admit) -> LeaseId {
    match a {
        Admit::Go(l) => l,
        other => panic!("expected to start, got {other:?}"),
    }
}

/// Writes every planned spill and commits it, as the storage shell does.
fn spill_all(l: &mut Ledger, planned: Vec<(Key, u64)>) -> Vec<u32> {
    planned
        .into_iter()
        .map(|(key, _)| {
            assert_eq!(l.commit_spill(key, true), Committed::OnDisk);
            key.1 .0
        })
        .collect()
}

#[test]
fn spills_least_recently_used_unwanted_chunks_first_above_the_threshold() {
    let mut l = Ledger::new(100 * MB, 0.6, 0.8);
    for c in 0..5 {
        l.stored(k(c), 20 * MB, None);
    }
    assert_eq!(l.stats().memory_bytes, 100 * MB);
    l.touch(k(0)); // now the most recent
    l.want(&[k(1)], true); // a queued subtask reads 1: spilled last
    let planned = l.spill_over_threshold();
    assert_eq!(spill_all(&mut l, planned), vec![2, 3]);
    let s = l.stats();
    assert_eq!(
        (s.memory_bytes, s.spilled_bytes, s.spilled_chunks),
        (60 * MB, 40 * MB, 2)
    );
    assert!(
        l.spill_over_threshold().is_empty(),
        "at the threshold, nothing more"
    );
    assert_eq!(s.peak_bytes, 100 * MB);
}

#[test]
fn pinned_chunks_stay_and_a_pin_during_the_write_keeps_the_chunk() {
    let mut l = Ledger::new(100 * MB, 0.5, 0.8);
    for c in 0..3 {
        l.stored(k(c), 30 * MB, None);
    }
    l.pin(&[k(0)]);
    let planned = l.spill_over_threshold();
    let keys: Vec<u32> = planned.iter().map(|(k, _)| k.1 .0).collect();
    assert_eq!(keys, vec![1, 2], "0 is pinned");
    l.pin(&[k(1)]); // a subtask started reading 1 while it was being written
    assert_eq!(l.commit_spill(k(1), true), Committed::Discard);
    assert_eq!(l.commit_spill(k(2), true), Committed::OnDisk);
    assert_eq!(
        l.commit_spill(k(2), false),
        Committed::Discard,
        "not spilling any more"
    );
    assert_eq!(l.stats().memory_bytes, 60 * MB);
}

#[test]
fn admission_spills_to_make_room_then_waits_then_goes_alone() {
    let mut l = Ledger::new(100 * MB, 0.6, 0.8);
    l.stored(k(0), 40 * MB, None);
    l.stored(k(1), 30 * MB, None);
    // 70 used + 40 needed > 100: spill the unpinned chunk 1, not the pinned input 0.
    l.pin(&[k(0)]);
    let Admit::Spill(planned) = l.admit(&[k(0)], 40 * MB, 0) else {
        panic!("expected a spill")
    };
    assert_eq!(spill_all(&mut l, planned), vec![1]);
    let first = go(l.admit(&[k(0)], 40 * MB, 0));
    assert_eq!(l.stats().reserved_bytes, 40 * MB);
    assert_eq!(l.stats().peak_bytes, 80 * MB);
    // A second subtask cannot fit while the first runs: it waits, and that is a pause.
    l.pin(&[k(0)]);
    assert_eq!(l.admit(&[k(0)], 30 * MB, 0), Admit::Wait);
    assert_eq!(
        l.stats().pauses,
        0,
        "at 80 % the worker is not above pause yet"
    );
    l.stored(k(2), 10 * MB, Some(first)); // an output of the first, from its reservation
    assert_eq!(l.stats().reserved_bytes, 30 * MB);
    l.finished(first, &[k(0)]);
    assert_eq!(l.stats().reserved_bytes, 0);
    go(l.admit(&[k(0)], 30 * MB, 0));
    assert!(l.stats().peak_bytes <= 100 * MB);
}

#[test]
fn pauses_above_the_pause_threshold_until_back_under() {
    let mut l = Ledger::new(100 * MB, 0.5, 0.8);
    l.stored(k(0), 50 * MB, None);
    l.pin(&[k(0)]);
    let first = go(l.admit(&[k(0)], 35 * MB, 0)); // 85 used now
    assert_eq!(l.admit(&[], 5 * MB, 0), Admit::Wait);
    assert_eq!(l.admit(&[], 5 * MB, 0), Admit::Wait);
    assert_eq!(l.stats().pauses, 1, "one pause, however often asked");
    l.finished(first, &[k(0)]);
    go(l.admit(&[], 5 * MB, 0));
}

#[test]
fn spilled_inputs_are_reserved_and_their_load_moves_into_memory() {
    let mut l = Ledger::new(100 * MB, 0.6, 0.8);
    l.stored(k(0), 20 * MB, None);
    let planned = l.plan_spill(0, 0);
    spill_all(&mut l, planned);
    assert!(l.spilled_size(k(0)).is_some());
    l.pin(&[k(0)]);
    let lease = go(l.admit(&[k(0)], 10 * MB, 0));
    assert_eq!(
        l.stats().reserved_bytes,
        30 * MB,
        "the load is reserved too"
    );
    assert!(l.loaded(k(0)));
    let s = l.stats();
    assert_eq!(
        (s.memory_bytes, s.reserved_bytes, s.spilled_bytes),
        (20 * MB, 10 * MB, 0)
    );
    assert_eq!((s.spills, s.unspills), (1, 1));
    assert!(!l.loaded(k(0)), "already in memory");
    l.finished(lease, &[k(0)]);
    assert_eq!(l.stats().reserved_bytes, 0);
    assert!(!l.removed(k(2)) && !l.removed(k(0)));
    assert_eq!(l.stats().memory_bytes, 0);
}

#[test]
fn released_chunks_leave_memory_or_disk_and_no_limit_never_spills() {
    let mut l = Ledger::new(0, 0.6, 0.8);
    l.stored(k(0), 500 * MB, None);
    assert!(l.spill_over_threshold().is_empty());
    go(l.admit(&[], 900 * MB, 0));
    let mut l = Ledger::new(10 * MB, 0.5, 0.8);
    l.stored(k(0), 8 * MB, None);
    let planned = l.spill_over_threshold();
    spill_all(&mut l, planned);
    assert!(l.removed(k(0)), "its file must be deleted");
    let s = l.stats();
    assert_eq!(
        (s.memory_bytes, s.spilled_bytes, s.spilled_chunks),
        (0, 0, 0)
    );
}

/// The first subtask's projection and the bytes of its member chunks.
fn first_subtask(fuse: bool) -> (u64, u64) {
    let t = ares_core::tensor::rand(&[1000], 100, Some(1)).unwrap();
    projection_of(&t.sum(None, false).unwrap(), fuse)
}

fn projection_of(s: &ares_core::tensor::Tensor, fuse: bool) -> (u64, u64) {
    let graph = ares_core::tensor::Tensor::graph(&[s]);
    let config = crate::config::TaskConfig {
        fuse_enabled: fuse,
        ..Default::default()
    };
    let workers = ares_core::prepare::uniform_cluster(1, 1);
    let p = ares_core::prepare::prepare(&graph, &config, &workers, TaskId(1)).unwrap();
    let g = &p.subtasks;
    let first = g.members.row(0);
    let inputs = g.inputs.row(0).iter().map(|c| ChunkIdx(*c));
    let bytes = projected_bytes(&g.chunks, first, inputs);
    let members = first.iter().map(|m| chunk_bytes(&g.chunks, ChunkIdx(*m)));
    (bytes, members.sum())
}

#[test]
fn projection_counts_inputs_members_and_scratch() {
    let (bytes, members) = first_subtask(false);
    assert!(members >= 800, "a 100-element float chunk at least");
    assert_eq!(bytes, members + 800, "plus one largest chunk of scratch");
    // Fused, the filled chunk exists only inside the FUSE node: still counted, twice.
    let (bytes, members) = first_subtask(true);
    assert!(members < 800, "only partial sums are members");
    assert_eq!(bytes, members + 1600);
}

/// `cumsum` has no float32 loop: it reads a float64 copy of its float32 chunk (800 bytes for
/// 100 elements) and makes a float64 result before the cast back; both are kernel scratch.
/// `max` streams the float32 chunk: no scratch.
#[test]
fn scratch_counts_the_wide_copies_of_float32_inputs() {
    let x = ares_core::tensor::rand(&[1000], 100, Some(1)).unwrap();
    let x = x.astype(ares_core::array::DType::F32).unwrap();
    let scan = x.scan(ares_core::ops::Op::CumSum, Some(0)).unwrap();
    let max = x.max(Some(&[0]), true).unwrap();
    let graph = ares_core::tensor::Tensor::graph(&[&scan, &max]);
    let config = crate::config::TaskConfig {
        fuse_enabled: false,
        ..Default::default()
    };
    let workers = ares_core::prepare::uniform_cluster(1, 1);
    let p = ares_core::prepare::prepare(&graph, &config, &workers, TaskId(1)).unwrap();
    let chunks = &p.subtasks.chunks;
    let on_chunks = |op: ares_core::ops::Op| -> Vec<ChunkIdx> {
        (0..chunks.nodes.len() as u32)
            .map(ChunkIdx)
            .filter(|c| chunks.node(*c).op == op)
            .filter(|c| chunks.inputs(*c).iter().any(|i| chunks.shape(*i)[0] == 100))
            .collect()
    };
    let (scans, maxes) = (
        on_chunks(ares_core::ops::Op::CumSum),
        on_chunks(ares_core::ops::Op::Max),
    );
    assert_eq!(
        (scans.len(), maxes.len()),
        (10, 10),
        "one of each per float32 chunk"
    );
    let scratch = |c| crate::footprint::scratch(chunks, c);
    for c in scans {
        assert_eq!(
            scratch(c),
            2 * 400 + 2 * 400,
            "a float64 copy in, a float64 result out"
        );
    }
    for c in maxes {
        assert_eq!(scratch(c), 0, "streamed");
    }
}

/// Fetched bytes count before the fetch: refused over the limit while something runs,
/// granted after spilling when nothing does, and taken into the subtask's lease at its start.
#[test]
fn transit_bytes_are_reserved_before_fetching_and_move_into_the_lease() {
    let mut l = Ledger::new(100 * MB, 0.6, 0.8);
    l.stored(k(0), 50 * MB, None);
    let running = go(l.admit(&[], 20 * MB, 0));
    assert_eq!(l.reserve_transit(45 * MB, true), FetchRoom::Wait);
    assert_eq!(l.reserve_transit(10 * MB, false), FetchRoom::Granted);
    assert_eq!(l.stats().transit_bytes, 10 * MB);
    l.finished(running, &[]);
    // Nothing runs: the unpinned chunk goes to disk to make room for the fetch.
    let FetchRoom::Spill(planned) = l.reserve_transit(45 * MB, true) else {
        panic!("expected a spill")
    };
    assert_eq!(planned, vec![(k(0), 50 * MB)]);
    l.commit_spill(k(0), true);
    assert_eq!(l.reserve_transit(45 * MB, true), FetchRoom::Granted);
    // Its subtask starts: 45 MB of its 60 MB projection are its fetched inputs.
    let lease = go(l.admit(&[], 60 * MB, 45 * MB));
    let s = l.stats();
    assert_eq!((s.transit_bytes, s.reserved_bytes), (10 * MB, 60 * MB));
    assert!(s.peak_bytes <= 100 * MB, "{s:?}");
    l.finished(lease, &[]);
    l.transit_released(10 * MB);
    assert_eq!(l.stats().transit_bytes, 0);
}

#[test]
fn unmanaged_bytes_count_toward_spilling_and_pausing_but_not_the_peak() {
    let mut l = Ledger::new(100 * MB, 0.6, 0.8);
    l.stored(k(0), 20 * MB, None);
    l.stored(k(1), 20 * MB, None);
    // 40 accounted + 30 the accounting does not see: above the 60 threshold, spill 10.
    let planned = l.observed_unmanaged(30 * MB);
    assert_eq!(spill_all(&mut l, planned), vec![0]);
    assert_eq!(l.stats().unmanaged_bytes, 30 * MB);
    // 20 + 30 + 5 resident: a subtask needing 50 more would pass the limit, it waits.
    let first = go(l.admit(&[], 5 * MB, 0));
    assert_eq!(l.admit(&[], 50 * MB, 0), Admit::Wait);
    l.finished(first, &[]);
    // Alone, one needing 60 spills what it must (chunk 1) to fit.
    let Admit::Spill(planned) = l.admit(&[], 60 * MB, 0) else {
        panic!("expected a spill")
    };
    assert_eq!(spill_all(&mut l, planned), vec![1]);
    // Unmanaged bytes alone above the threshold: nothing left to spill, and with nothing
    // running nothing to wait for, so it starts.
    assert!(l.observed_unmanaged(75 * MB).is_empty());
    go(l.admit(&[], 60 * MB, 0));
    assert_eq!(
        l.stats().peak_bytes,
        60 * MB,
        "the peak counts accounted bytes only"
    );
    // The allocator returned its pages: at the threshold again, nothing to spill.
    assert!(l.observed_unmanaged(0).is_empty());
}
