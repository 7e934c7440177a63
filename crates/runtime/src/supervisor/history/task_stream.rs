//! The task stream's ring: the newest `web.task_stream_capacity` subtask runs, in the order
//! their heartbeats arrived. Its memory is bounded by the capacity alone, however many
//! subtasks run (10^7 runs cost what 10^5 do), and `since` finds the runs that arrived
//! after a time by binary search: arrival times only grow along the ring.

use crate::protocol::task_stream::SpanStatus;
use ares_core::ids::{SubtaskIdx, TaskId, WorkerId};
use ares_core::ops::Op;

/// One subtask run on the supervisor's clock (microseconds since the history began).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    /// When the heartbeat carrying it arrived: what `since` compares.
    pub received_us: u64,
    pub start_us: u64,
    pub end_us: u64,
    pub fetch_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub worker: WorkerId,
    pub slot: u32,
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    pub depth: u32,
    pub op: Op,
    pub status: SpanStatus,
}

/// A ring of at most `capacity` entries; the oldest are overwritten.
#[derive(Debug)]
pub struct TaskStreamRing {
    entries: Vec<StreamEntry>,
    /// Where the oldest entry is once the ring is full (the next to be overwritten).
    head: usize,
    capacity: usize,
    /// Entries ever pushed, and those overwritten since.
    pub recorded: u64,
    pub overwritten: u64,
}

impl TaskStreamRing {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::new(),
            head: 0,
            capacity,
            recorded: 0,
            overwritten: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds an entry (arriving no earlier than the last one), overwriting the oldest when
    /// full; a ring of capacity 0 keeps nothing.
    pub fn push(&mut self, e: StreamEntry) {
        if self.capacity == 0 {
            return;
        }
        self.recorded += 1;
        if self.entries.len() < self.capacity {
            // Grows by doubling up to the capacity, never past it.
            if self.entries.len() == self.entries.capacity() {
                let want = (self.entries.len() * 2).max(1024).min(self.capacity);
                self.entries.reserve_exact(want - self.entries.len());
            }
            self.entries.push(e);
        } else {
            self.entries[self.head] = e;
            self.head = (self.head + 1) % self.capacity;
            self.overwritten += 1;
        }
    }

    /// The entries oldest first, as two slices.
    fn halves(&self) -> (&[StreamEntry], &[StreamEntry]) {
        let (newer, older) = self.entries.split_at(self.head);
        (older, newer)
    }

    /// The entries that arrived after `since_us` (all with `None`), oldest first; at most
    /// `limit`, the newest of them.
    pub fn since(&self, since_us: Option<u64>, limit: usize) -> Vec<StreamEntry> {
        let (older, newer) = self.halves();
        let after = |half: &[StreamEntry]| -> usize {
            since_us.map_or(0, |t| half.partition_point(|e| e.received_us <= t))
        };
        let (a, b) = (&older[after(older)..], &newer[after(newer)..]);
        let skip = (a.len() + b.len()).saturating_sub(limit);
        a.iter().chain(b).skip(skip).copied().collect()
    }

    /// Bytes the ring holds (its allocation), for the bound's test.
    pub fn allocated_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<StreamEntry>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(received_us: u64, subtask: u32) -> StreamEntry {
        StreamEntry {
            received_us,
            start_us: received_us.saturating_sub(10),
            end_us: received_us,
            fetch_us: 0,
            bytes_in: 0,
            bytes_out: 8,
            worker: WorkerId(0),
            slot: 0,
            task: TaskId(1),
            subtask: SubtaskIdx(subtask),
            depth: 0,
            op: Op::Rand,
            status: SpanStatus::Succeeded,
        }
    }

    fn subtasks(v: &[StreamEntry]) -> Vec<u32> {
        v.iter().map(|e| e.subtask.0).collect()
    }

    #[test]
    fn keeps_the_newest_capacity_entries_oldest_first() {
        let mut r = TaskStreamRing::new(3);
        for i in 0..5 {
            r.push(entry(i * 100, i as u32));
        }
        assert_eq!(subtasks(&r.since(None, usize::MAX)), vec![2, 3, 4]);
        assert_eq!((r.recorded, r.overwritten, r.len()), (5, 2, 3));
    }

    #[test]
    fn since_returns_what_arrived_after_across_the_wrap() {
        let mut r = TaskStreamRing::new(4);
        for i in 0..7 {
            r.push(entry(i * 100, i as u32));
        }
        // Holds 3,4,5,6 (received 300..600), wrapped at index 3.
        assert_eq!(subtasks(&r.since(Some(400), usize::MAX)), vec![5, 6]);
        assert_eq!(subtasks(&r.since(Some(250), usize::MAX)), vec![3, 4, 5, 6]);
        assert_eq!(subtasks(&r.since(Some(600), usize::MAX)), Vec::<u32>::new());
        assert_eq!(
            subtasks(&r.since(None, 2)),
            vec![5, 6],
            "the newest within limit"
        );
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let mut r = TaskStreamRing::new(0);
        r.push(entry(1, 1));
        assert!(r.is_empty());
        assert_eq!(r.recorded, 0);
    }

    /// 10^7 runs through a ring of 10^5: its allocation never passes the capacity's.
    #[test]
    fn memory_stays_within_the_capacity_at_ten_million_runs() {
        let cap = 100_000;
        let mut r = TaskStreamRing::new(cap);
        for i in 0..10_000_000u64 {
            r.push(entry(i, i as u32));
        }
        assert_eq!(r.len(), cap);
        assert_eq!(
            r.allocated_bytes(),
            cap * std::mem::size_of::<StreamEntry>()
        );
        assert!(
            std::mem::size_of::<StreamEntry>() <= 80,
            "{}",
            std::mem::size_of::<StreamEntry>()
        );
        assert_eq!(r.since(Some(9_999_997), usize::MAX).len(), 2);
    }
}
