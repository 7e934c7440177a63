//! What a worker tells the supervisor about each subtask it ran, for the dashboard's task
//! stream: carried by the heartbeat it sends anyway, or at high rates in pieces of
//! [`SPAN_PIECE`] in the frames of its reports (`FromWorker::Spans`): no round trip, and no
//! frame of megabytes holding up the reports behind it.
//!
//! The spans travel as one byte string of fixed [`SPAN_BYTES`]-byte little-endian records
//! ([`PackedSpans`]), as the graph arenas do (`ares_core::graph::packed`): a compute slot
//! appends a record per subtask, the frame is written from the worker's own buffer
//! ([`SpanRecords::split`]), and the supervisor keeps the string undecoded until the
//! dashboard asks. Decoding field by field on the supervisor's thread, which also
//! schedules, cost `ares bench tps` a few percent.
//!
//! Times are microseconds on the worker's own clock (since the worker started); each
//! heartbeat or piece carries that clock's reading when it was sent, so the supervisor places
//! each span relative to its arrival without trusting the worker's clock. The worker sends
//! at most its share of `web.task_stream_capacity` spans per heartbeat period and counts the
//! ones it had to drop; the supervisor never sizes anything by what a worker sent (its ring
//! keeps the newest capacity spans, however many arrive: see `supervisor::history`), and a
//! record that does not decode (unknown op or status) is skipped, not trusted.

use ares_core::ids::{SubtaskIdx, TaskId};
use ares_core::ops::{Op, OpId};
use bytes::{Buf, Bytes};
use serde::de::{Error, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::{Arc, Mutex};

/// How a subtask's run ended, as the task stream colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SpanStatus {
    Succeeded = 0,
    /// The kernel failed or panicked.
    Failed = 1,
    /// An input could not be fetched (lost, or its holder unreachable): it runs again.
    FetchFailed = 2,
}

impl SpanStatus {
    pub fn name(self) -> &'static str {
        match self {
            SpanStatus::Succeeded => "succeeded",
            SpanStatus::Failed => "failed",
            SpanStatus::FetchFailed => "fetch_failed",
        }
    }

    fn of_code(code: u8) -> Option<Self> {
        [Self::Succeeded, Self::Failed, Self::FetchFailed]
            .into_iter()
            .find(|s| *s as u8 == code)
    }
}

/// One subtask's run on a compute slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubtaskSpan {
    pub task: TaskId,
    pub subtask: SubtaskIdx,
    /// The slot (compute thread) that ran it, `0..slots`.
    pub slot: u16,
    /// Its depth in the subtask graph.
    pub depth: u32,
    /// The op of its last chunk (the last step of a fused chunk).
    pub op: Op,
    pub status: SpanStatus,
    /// When it started, in microseconds on the worker's clock.
    pub start_us: u64,
    /// Microseconds it ran on the slot.
    pub run_us: u64,
    /// Microseconds it waited for inputs fetched from peers before it reached the pool (0:
    /// every input was here).
    pub fetch_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// Spans a worker sends as soon as it holds them, between heartbeats (256 KB of records).
pub const SPAN_PIECE: usize = 4096;

/// task u64, subtask u32, depth u32, op id u32, slot u16, status u8, one byte of padding,
/// then start, run, fetch, bytes in and bytes out as u64.
pub const SPAN_BYTES: usize = 8 + 4 + 4 + 4 + 2 + 1 + 1 + 5 * 8;

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

impl SubtaskSpan {
    /// Its record, laid out on the stack (a compute slot writes one per subtask).
    fn record(&self) -> [u8; SPAN_BYTES] {
        let mut r = [0u8; SPAN_BYTES];
        r[0..8].copy_from_slice(&u64::from(self.task.0).to_le_bytes());
        r[8..12].copy_from_slice(&self.subtask.0.to_le_bytes());
        r[12..16].copy_from_slice(&self.depth.to_le_bytes());
        r[16..20].copy_from_slice(&self.op.id().0.to_le_bytes());
        r[20..22].copy_from_slice(&self.slot.to_le_bytes());
        r[22] = self.status as u8;
        let times = [
            self.start_us,
            self.run_us,
            self.fetch_us,
            self.bytes_in,
            self.bytes_out,
        ];
        for (i, v) in times.iter().enumerate() {
            r[24 + 8 * i..32 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        r
    }

    /// The span of one record, `None` if its op or status is unknown (or its task id is out
    /// of range).
    fn read(r: &[u8]) -> Option<Self> {
        Some(SubtaskSpan {
            task: TaskId(u32::try_from(u64_at(r, 0)).ok()?),
            subtask: SubtaskIdx(u32_at(r, 8)),
            depth: u32_at(r, 12),
            op: Op::from_id(OpId(u32_at(r, 16)))?,
            slot: u16::from_le_bytes([r[20], r[21]]),
            status: SpanStatus::of_code(r[22])?,
            start_us: u64_at(r, 24),
            run_us: u64_at(r, 32),
            fetch_us: u64_at(r, 40),
            bytes_in: u64_at(r, 48),
            bytes_out: u64_at(r, 56),
        })
    }
}

/// Spans as one byte string of whole records, read-only and shared: what a heartbeat
/// carries (spliced into its frame from the worker's buffer, not copied:
/// [`crate::protocol::Direction::shared_bytes`]) and what the supervisor's ring keeps.
#[derive(Clone, Debug, Default)]
pub struct PackedSpans {
    bytes: Bytes,
    /// Bytes of the allocation `bytes` is a part of, as far as known (for the ring's bound).
    allocated: usize,
}

impl PartialEq for PackedSpans {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for PackedSpans {}

impl PackedSpans {
    fn new(bytes: Bytes) -> Self {
        let allocated = bytes.len();
        Self { bytes, allocated }
    }

    /// The records of `spans`, in order.
    pub fn of<'a>(spans: impl IntoIterator<Item = &'a SubtaskSpan>) -> Self {
        let mut records = SpanRecords::default();
        spans.into_iter().for_each(|s| records.push(s));
        records.freeze()
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / SPAN_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The byte string, to splice into a frame.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Drops the oldest `n` spans; once most of the allocation is unused, what is left is
    /// copied out and the allocation freed.
    pub fn drop_front(&mut self, n: usize) {
        self.bytes.advance(n.min(self.len()) * SPAN_BYTES);
        if self.bytes.len() < self.allocated / 2 {
            *self = Self::new(Bytes::copy_from_slice(&self.bytes));
        }
    }

    /// The span at `i` (`None` if it does not decode).
    pub fn get(&self, i: usize) -> Option<SubtaskSpan> {
        self.bytes
            .get(i * SPAN_BYTES..(i + 1) * SPAN_BYTES)
            .and_then(SubtaskSpan::read)
    }

    /// The spans in order, those that do not decode skipped.
    pub fn iter(&self) -> impl Iterator<Item = SubtaskSpan> + '_ {
        self.bytes
            .chunks_exact(SPAN_BYTES)
            .filter_map(SubtaskSpan::read)
    }

    /// Bytes allocated (for the supervisor's bound).
    pub fn allocated_bytes(&self) -> usize {
        self.allocated
    }
}

/// Records being appended, by a compute slot for its job and by the worker's buffer between
/// two heartbeats.
///
/// [`SpanRecords::split`] hands the records out without a copy and continues in a second
/// allocation; the first one comes back, emptied, once every copy of what was handed out is
/// dropped (the heartbeat's frame written), and the next split continues in it. Two
/// allocations take turns: their pages are faulted in once, not at every heartbeat.
#[derive(Debug, Default)]
pub struct SpanRecords {
    bytes: Vec<u8>,
    /// Where the allocation handed out comes back to.
    returned: Arc<Mutex<Option<Vec<u8>>>>,
}

/// An allocation handed out by [`SpanRecords::split`], returned to it when dropped.
struct Lent {
    bytes: Vec<u8>,
    home: Arc<Mutex<Option<Vec<u8>>>>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Lent {
    /// Goes home emptied, unless a fresh allocation took its place ([`SpanRecords::prefault`]).
    fn drop(&mut self) {
        let mut home = self.home.lock().unwrap_or_else(|p| p.into_inner());
        if home.is_none() {
            let mut bytes = std::mem::take(&mut self.bytes);
            bytes.clear();
            *home = Some(bytes);
        }
    }
}

impl SpanRecords {
    /// Gives both allocations room for `spans` records, their memory written now so that
    /// filling them later takes no page faults (the compute slots would pay about 20 ns a
    /// span). What it holds stays; an allocation handed out is freed when it comes back.
    pub fn prefault(&mut self, spans: usize) {
        let fresh = || {
            let mut bytes = Vec::with_capacity(spans.saturating_mul(SPAN_BYTES));
            // Written, not zero-allocated: zeroed memory is untouched pages from the OS.
            (bytes.spare_capacity_mut()).fill(std::mem::MaybeUninit::new(0));
            bytes
        };
        if self.bytes.is_empty() {
            self.bytes = fresh();
        }
        *self.returned.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh());
    }

    pub fn push(&mut self, s: &SubtaskSpan) {
        self.bytes.extend_from_slice(&s.record());
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / SPAN_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Empties it, keeping its capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Appends at most `room` of `other`'s spans; returns how many did not fit.
    pub fn append_up_to(&mut self, other: &SpanRecords, room: usize) -> usize {
        let kept = other.len().min(room);
        self.bytes
            .extend_from_slice(&other.bytes[..kept * SPAN_BYTES]);
        other.len() - kept
    }

    /// Takes out the records as a shared string (no copy), leaving this empty, in the
    /// allocation the last split handed out if it came back, else in a new one.
    pub fn split(&mut self) -> PackedSpans {
        let back = (self.returned.lock().unwrap_or_else(|p| p.into_inner())).take();
        let bytes = std::mem::replace(&mut self.bytes, back.unwrap_or_default());
        PackedSpans::new(Bytes::from_owner(Lent {
            bytes,
            home: self.returned.clone(),
        }))
    }

    /// The records as a shared string, leaving the memory to the string.
    pub fn freeze(self) -> PackedSpans {
        PackedSpans::new(Bytes::from(self.bytes))
    }
}

impl Serialize for PackedSpans {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.bytes)
    }
}

struct PackedVisitor;

impl<'de> Visitor<'de> for PackedVisitor {
    type Value = PackedSpans;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "packed subtask spans")
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<PackedSpans, E> {
        self.visit_byte_buf(v.to_vec())
    }
    fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<PackedSpans, E> {
        if !v.len().is_multiple_of(SPAN_BYTES) {
            return Err(E::custom(format!(
                "{} bytes of subtask spans are not a whole number of {SPAN_BYTES}-byte records",
                v.len()
            )));
        }
        Ok(PackedSpans::new(Bytes::from(v)))
    }
}

impl<'de> Deserialize<'de> for PackedSpans {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_byte_buf(PackedVisitor)
    }
}

/// The task-stream part of a heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamReport {
    /// Subtasks that ended since the previous heartbeat, oldest first.
    pub spans: PackedSpans,
    /// The worker's clock (microseconds since it started) when the heartbeat was sent.
    pub now_us: u64,
    /// Spans the worker did not keep since the previous heartbeat (over its capacity).
    pub dropped: u64,
    /// `worker.memory.spill` and `.pause` of the limit, in bytes (0 = no limit).
    pub spill_at: u64,
    pub pause_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codec;

    fn span(i: u32) -> SubtaskSpan {
        SubtaskSpan {
            task: TaskId(7),
            subtask: SubtaskIdx(i),
            slot: 3,
            depth: 2,
            op: Op::Add,
            status: SpanStatus::FetchFailed,
            start_us: 1 << 40,
            run_us: 12,
            fetch_us: 5,
            bytes_in: u64::MAX,
            bytes_out: 80,
        }
    }

    #[test]
    fn records_round_trip_through_the_codec() {
        let report = StreamReport {
            spans: PackedSpans::of(&(0..3).map(span).collect::<Vec<_>>()),
            now_us: 99,
            ..StreamReport::default()
        };
        let back: StreamReport = codec::decode(&codec::encode(&report).unwrap()).unwrap();
        assert_eq!(back, report);
        assert_eq!(
            back.spans.iter().collect::<Vec<_>>(),
            (0..3).map(span).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_ragged_string_does_not_decode_and_an_unknown_op_is_skipped() {
        let ragged = codec::encode(&PackedSpans::new(Bytes::from(vec![0u8; SPAN_BYTES + 1])));
        assert!(codec::decode::<PackedSpans>(&ragged.unwrap()).is_err());
        let mut bytes = PackedSpans::of(&[span(0), span(1)]).bytes.to_vec();
        bytes[16..20].copy_from_slice(&0u32.to_le_bytes()); // op id 0: no op
        let p = PackedSpans::new(bytes.into());
        assert_eq!(p.iter().map(|s| s.subtask.0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(p.get(0), None);
    }

    #[test]
    fn append_up_to_keeps_the_oldest_that_fit() {
        let mut a = SpanRecords::default();
        let mut b = SpanRecords::default();
        (0..5).for_each(|i| b.push(&span(i)));
        assert_eq!(a.append_up_to(&b, 3), 2);
        let mut p = a.freeze();
        p.drop_front(1);
        assert_eq!(
            p.iter().map(|s| s.subtask.0).collect::<Vec<_>>(),
            vec![1, 2]
        );
    }

    /// Dropping most of a batch frees its allocation: what is left is copied out.
    #[test]
    fn a_batch_mostly_dropped_gives_its_memory_back() {
        let mut p = PackedSpans::of(&(0..10).map(span).collect::<Vec<_>>());
        p.drop_front(4);
        assert_eq!(p.allocated_bytes(), 10 * SPAN_BYTES, "still most of it");
        p.drop_front(3);
        assert_eq!((p.len(), p.allocated_bytes()), (3, 3 * SPAN_BYTES));
        assert_eq!(p.get(0).unwrap().subtask.0, 7);
    }

    /// A heartbeat takes the buffer's records without a copy; once the frame holding them is
    /// dropped, their allocation comes back for the split after next.
    ///
    ///   A: [r0 r1 r2]  split -> frame 1 holds A; records go on in B
    ///   B: [r3]        split -> frame 2 holds B; A came back: records go on in A
    ///   A: [r4]        (frame 2 still held)   split -> B is not back: a new allocation
    #[test]
    fn two_allocations_take_turns_between_heartbeats() {
        let mut buf = SpanRecords::default();
        (0..3).for_each(|i| buf.push(&span(i)));
        let frame1 = buf.split();
        let a = frame1.bytes().as_ptr();
        buf.push(&span(3));
        drop(frame1);
        let frame2 = buf.split();
        assert_eq!((frame2.len(), frame2.get(0).unwrap().subtask.0), (1, 3));
        buf.push(&span(4));
        assert_eq!(buf.bytes.as_ptr(), a, "A came back, emptied");
        let frame3 = buf.split();
        assert_eq!((frame3.bytes().as_ptr(), frame3.len()), (a, 1));
        assert_eq!(buf.bytes.capacity(), 0, "B is still out");
        drop(frame2);
        assert!(buf.returned.lock().unwrap().is_some());
    }

    /// Prefaulted allocations replace whatever comes back later.
    #[test]
    fn a_prefaulted_spare_is_kept_over_one_coming_back() {
        let mut buf = SpanRecords::default();
        buf.push(&span(0));
        let frame = buf.split();
        buf.prefault(100);
        assert!(buf.bytes.capacity() >= 100 * SPAN_BYTES);
        drop(frame);
        let spare = buf.returned.lock().unwrap().take().unwrap();
        assert!(spare.capacity() >= 100 * SPAN_BYTES && spare.is_empty());
    }
}
