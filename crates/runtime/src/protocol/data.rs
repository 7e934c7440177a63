//! The data plane's bytes, beside the codec so that bytes live in one place.
//!
//! A request is one frame `bincode((TaskId, Vec<ChunkIdx>))`; the answer is one frame: a
//! status byte ([`OK`]) then the codec's raw chunk encoding, or [`ERROR`] then the error text.
//! A request listing a chunk twice gets it once: answers are bounded by the distinct chunks
//! held, never by how often a peer repeats itself (a 106-byte request once cost 800 MB).

use super::codec::{self, CodecError};
use crate::array::ArrayData;
use crate::ids::{ChunkIdx, TaskId};
use rustc_hash::FxHashSet;

pub const OK: u8 = 0;
pub const ERROR: u8 = 1;

/// Bytes an answer may need beyond the chunks' own data, per chunk (its header).
pub const HEADER_BYTES_PER_CHUNK: usize = 128;

pub fn encode_request(task: TaskId, chunks: &[ChunkIdx]) -> Result<Vec<u8>, CodecError> {
    codec::encode(&(task, chunks))
}

/// The task and its distinct chunks, in the order first asked for.
pub fn decode_request(bytes: &[u8]) -> Result<(TaskId, Vec<ChunkIdx>), CodecError> {
    let (task, mut chunks): (TaskId, Vec<ChunkIdx>) = codec::decode(bytes)?;
    let mut seen = FxHashSet::default();
    chunks.retain(|c| seen.insert(*c));
    Ok((task, chunks))
}

pub fn ok_answer(chunks: &[(ChunkIdx, &ArrayData)]) -> Result<Vec<u8>, CodecError> {
    let mut bytes = codec::encode_chunks(chunks)?;
    bytes.insert(0, OK);
    Ok(bytes)
}

pub fn error_answer(message: &str) -> Vec<u8> {
    let mut out = vec![ERROR];
    out.extend_from_slice(message.as_bytes());
    out
}

pub fn decode_answer(bytes: &[u8]) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    match bytes.split_first() {
        Some((&OK, body)) => codec::decode_chunks(body),
        Some((_, msg)) => Err(CodecError::Corrupt(
            String::from_utf8_lossy(msg).into_owned(),
        )),
        None => Err(CodecError::Corrupt("empty answer".into())),
    }
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
            (TaskId(1), vec![ChunkIdx(3), ChunkIdx(1)])
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
