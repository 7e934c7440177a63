//! The data plane's bytes, beside the codec so that bytes live in one place.
//!
//! A request is one frame `bincode((TaskId, Vec<ChunkIdx>, Option<(u64, u64)>))` (the last:
//! rows of the one chunk asked for, see [`Rows`]); the answer is one or more
//! frames, each a status byte then the chunks' pieces ([`super::pieces`]): [`MORE`] while
//! frames follow, [`OK`] on the last one; or [`ERROR`] then the error text, which ends the
//! answer. A chunk of any size travels, cut across frames; each side holds one frame's part.
//! A request listing a chunk twice gets it once: answers are bounded by the distinct chunks
//! held, never by how often a peer repeats itself (a 106-byte request once cost 800 MB).

use super::codec::{self, CodecError};
pub use super::pieces::Packer;
use super::pieces::{self, Assembler};
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use rustc_hash::FxHashSet;

pub const OK: u8 = 0;
pub const ERROR: u8 = 1;
pub const MORE: u8 = 2;

/// Raw bytes per answer frame at most (less when the frame limit is smaller): a serving
/// worker holds one such part per connection, a fetching one per fetch.
pub const PART_CAP: usize = 4 << 20;

/// Rows `start..end` along the first axis of the one chunk asked for: a result chunk larger
/// than a result part travels to the client in row ranges.
pub type Rows = Option<(u64, u64)>;

pub fn encode_request(task: TaskId, chunks: &[ChunkIdx]) -> Result<Vec<u8>, CodecError> {
    codec::encode(&(task, chunks, None::<(u64, u64)>))
}

/// A request for rows `start..end` of one chunk (sent as a chunk of that many rows).
pub fn encode_rows_request(
    task: TaskId,
    chunk: ChunkIdx,
    rows: (u64, u64),
) -> Result<Vec<u8>, CodecError> {
    codec::encode(&(task, &[chunk][..], Some(rows)))
}

/// The task, its distinct chunks in the order first asked for, and the rows asked for.
pub fn decode_request(bytes: &[u8]) -> Result<(TaskId, Vec<ChunkIdx>, Rows), CodecError> {
    let (task, mut chunks, rows): (TaskId, Vec<ChunkIdx>, Rows) = codec::decode(bytes)?;
    let mut seen = FxHashSet::default();
    chunks.retain(|c| seen.insert(*c));
    Ok((task, chunks, rows))
}

/// The whole answer for `chunks` as one frame (tests and small answers).
pub fn ok_answer(chunks: &[(ChunkIdx, &ArrayData)]) -> Result<Vec<u8>, CodecError> {
    let mut packer = Packer::new(usize::MAX / 2);
    for (c, d) in chunks {
        let raw = pieces::raw_bytes(d);
        packer.fill(*c, (d.dtype(), d.shape()), &raw, 0);
    }
    packer.frame(OK)
}

pub fn error_answer(message: &str) -> Vec<u8> {
    let mut out = vec![ERROR];
    out.extend_from_slice(message.as_bytes());
    out
}

/// Adds one frame of an answer to `into`; true when it was the last.
pub fn add_answer_frame(into: &mut Assembler, bytes: &[u8]) -> Result<bool, CodecError> {
    match bytes.split_first() {
        Some((&OK, body)) => into.add(body).map(|_| true),
        Some((&MORE, body)) => into.add(body).map(|_| false),
        Some((_, msg)) => Err(CodecError::Corrupt(
            String::from_utf8_lossy(msg).into_owned(),
        )),
        None => Err(CodecError::Corrupt("empty answer".into())),
    }
}

/// An answer of one frame.
pub fn decode_answer(bytes: &[u8]) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    let mut chunks = Assembler::default();
    if !add_answer_frame(&mut chunks, bytes)? {
        return Err(CodecError::Corrupt(
            "an answer cut after its first frame".into(),
        ));
    }
    chunks.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn repeated_chunks_are_asked_for_once() {
        let req = encode_request(
            TaskId(1),
            &[ChunkIdx(3), ChunkIdx(3), ChunkIdx(1), ChunkIdx(3)],
        )
        .unwrap();
        assert_eq!(
            decode_request(&req).unwrap(),
            (TaskId(1), vec![ChunkIdx(3), ChunkIdx(1)], None)
        );
        assert!(decode_request(&req[..req.len() - 1]).is_err());
    }

    #[test]
    fn answers_round_trip_and_errors_carry_their_text() {
        let a = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[2]), vec![4, 5]).unwrap());
        let bytes = ok_answer(&[(ChunkIdx(2), &a)]).unwrap();
        assert_eq!(decode_answer(&bytes).unwrap(), vec![(ChunkIdx(2), a)]);
        let err = decode_answer(&error_answer("chunk 9 is not here")).unwrap_err();
        assert!(err.to_string().contains("chunk 9"), "{err}");
        assert!(decode_answer(&[]).is_err());
    }
}
