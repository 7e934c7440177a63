//! The store with real spill files: chunks go to disk over the threshold, come back for
//! compute and for peers, and their files go when they are released.

use super::*;
use ndarray::{ArrayD, IxDyn};

fn chunk(v: f64) -> Arc<ArrayData> {
    Arc::new(ArrayData::F64(ArrayD::from_elem(IxDyn(&[1024]), v))) // 8 KiB
}

#[test]
fn spills_over_the_threshold_and_reads_back_for_compute_and_peers() {
    let root = tempfile::tempdir().unwrap();
    let dir = SpillDir::create(root.path()).unwrap();
    let path = dir.path().to_path_buf();
    let s = Storage::with_limit(40 << 10, 0.5, 0.8, Some(dir));
    let t = TaskId(7);
    for c in 0..4 {
        s.put(t, ChunkIdx(c), chunk(c as f64));
    }
    let st = s.stats();
    assert_eq!((st.memory_bytes, st.spilled_chunks), (16 << 10, 2));
    assert_eq!(std::fs::read_dir(&path).unwrap().count(), 2, "two files");
    assert_eq!(
        s.read(t, ChunkIdx(0)).unwrap(),
        chunk(0.0),
        "a peer reads it from disk"
    );
    assert_eq!(s.stats().spilled_chunks, 2, "and it stays there");
    let lease = s.begin(t, &[ChunkIdx(0)], 8 << 10, 0).unwrap();
    assert_eq!(
        s.get(t, ChunkIdx(0)).unwrap(),
        chunk(0.0),
        "loaded for compute"
    );
    lease.put(ChunkIdx(9), chunk(9.0));
    assert!(s.stats().peak_bytes <= 40 << 10);
    drop(lease);
    assert!(
        s.stats().memory_bytes <= 20 << 10,
        "back under the threshold"
    );
    s.remove_task(t);
    assert_eq!(
        std::fs::read_dir(&path).unwrap().count(),
        0,
        "released: no files left"
    );
    assert!(s.is_empty());
    drop(s);
    assert!(!path.exists());
}

#[test]
fn a_failed_spill_fails_the_subtask_that_needed_the_room() {
    let root = tempfile::tempdir().unwrap();
    let dir = SpillDir::create(root.path()).unwrap();
    let path = dir.path().to_path_buf();
    let s = Storage::with_limit(40 << 10, 0.9, 0.9, Some(dir));
    s.put(TaskId(1), ChunkIdx(0), chunk(1.0));
    s.put(TaskId(1), ChunkIdx(1), chunk(1.0));
    std::fs::remove_dir_all(&path).unwrap(); // writes now fail
    let err = s.begin(TaskId(1), &[], 30 << 10, 0).err().expect("no room");
    assert!(
        err.contains("cannot spill chunk") && err.contains(path.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(
        s.stats().memory_bytes,
        16 << 10,
        "the chunks stay in memory"
    );
    assert!(s.get(TaskId(1), ChunkIdx(0)).is_some());
}
