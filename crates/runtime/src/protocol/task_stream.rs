//! What a worker tells the supervisor about each subtask it ran, for the dashboard's task
//! stream: carried by the heartbeat it sends anyway (no message of its own, no round trip).
//!
//! The spans travel as one byte string of fixed [`SPAN_BYTES`]-byte little-endian records
//! ([`PackedSpans`]), as the graph arenas do (`ares_core::graph::packed`): a compute slot
//! appends a record per subtask, the heartbeat moves the string as it is, and the
//! supervisor keeps it undecoded until the dashboard asks. Decoding field by field on the
//! supervisor's thread, which also schedules, cost `ares bench tps` a few percent.
//!
//! Times are microseconds on the worker's own clock (since the worker started); the
//! heartbeat carries that clock's reading when it was sent, so the supervisor places each
//! span relative to the heartbeat's arrival without trusting the worker's clock. The worker
//! keeps at most `web.task_stream_capacity` spans between two heartbeats and counts the ones
//! it had to drop; the supervisor never sizes anything by what a worker sent (see
//! `supervisor::history`), and a record that does not decode (unknown op or status) is
//! skipped, not trusted.

use ares_core::ids::{SubtaskIdx, TaskId};
use ares_core::ops::{Op, OpId};
use serde::de::{Error, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

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
    /// Appends its record: laid out on the stack, then one copy (a compute slot writes one
    /// per subtask).
    fn write(&self, out: &mut Vec<u8>) {
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
        out.extend_from_slice(&r);
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

/// Spans as one byte string of whole records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedSpans(Vec<u8>);

impl PackedSpans {
    pub fn with_capacity(spans: usize) -> Self {
        Self(Vec::with_capacity(spans.saturating_mul(SPAN_BYTES)))
    }

    /// Empties it, keeping its capacity.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Room for `spans` records, its memory written once so that filling it later takes no
    /// page faults (the worker's buffer, refilled between every two heartbeats).
    pub fn prefaulted(spans: usize) -> Self {
        let mut bytes = Vec::with_capacity(spans.saturating_mul(SPAN_BYTES));
        // Written, not zero-allocated: `vec![0; n]` takes untouched zero pages from the OS.
        bytes
            .spare_capacity_mut()
            .fill(std::mem::MaybeUninit::new(0));
        Self(bytes)
    }

    /// An exact-size copy of its records.
    pub fn copied(&self) -> Self {
        Self(self.0.as_slice().to_vec())
    }

    pub fn push(&mut self, s: &SubtaskSpan) {
        s.write(&mut self.0);
    }

    pub fn len(&self) -> usize {
        self.0.len() / SPAN_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends at most `room` of `other`'s spans; returns how many did not fit.
    pub fn append_up_to(&mut self, other: &PackedSpans, room: usize) -> usize {
        let kept = other.len().min(room);
        self.0.extend_from_slice(&other.0[..kept * SPAN_BYTES]);
        other.len() - kept
    }

    /// Drops the oldest `n` spans (and the memory they held, once most of it is unused).
    pub fn drop_front(&mut self, n: usize) {
        self.0.drain(..n.min(self.len()) * SPAN_BYTES);
        if self.0.len() < self.0.capacity() / 2 {
            self.0.shrink_to_fit();
        }
    }

    /// The span at `i` (`None` if it does not decode).
    pub fn get(&self, i: usize) -> Option<SubtaskSpan> {
        self.0
            .get(i * SPAN_BYTES..(i + 1) * SPAN_BYTES)
            .and_then(SubtaskSpan::read)
    }

    /// The spans in order, those that do not decode skipped.
    pub fn iter(&self) -> impl Iterator<Item = SubtaskSpan> + '_ {
        self.0
            .chunks_exact(SPAN_BYTES)
            .filter_map(SubtaskSpan::read)
    }

    /// Bytes allocated (for the supervisor's bound).
    pub fn allocated_bytes(&self) -> usize {
        self.0.capacity()
    }
}

impl Serialize for PackedSpans {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
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
        Ok(PackedSpans(v))
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
        let mut p = PackedSpans::default();
        (0..3).for_each(|i| p.push(&span(i)));
        let report = StreamReport {
            spans: p,
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
        let ragged = codec::encode(&serde_bytes_of(&[0u8; SPAN_BYTES + 1])).unwrap();
        assert!(codec::decode::<PackedSpans>(&ragged).is_err());
        let mut p = PackedSpans::default();
        p.push(&span(0));
        p.push(&span(1));
        p.0[16..20].copy_from_slice(&0u32.to_le_bytes()); // op id 0: no op
        assert_eq!(p.iter().map(|s| s.subtask.0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(p.get(0), None);
    }

    #[test]
    fn append_up_to_keeps_the_oldest_that_fit() {
        let mut a = PackedSpans::default();
        let mut b = PackedSpans::default();
        (0..5).for_each(|i| b.push(&span(i)));
        assert_eq!(a.append_up_to(&b, 3), 2);
        a.drop_front(1);
        assert_eq!(
            a.iter().map(|s| s.subtask.0).collect::<Vec<_>>(),
            vec![1, 2]
        );
    }

    fn serde_bytes_of(b: &[u8]) -> PackedSpans {
        PackedSpans(b.to_vec())
    }
}
