//! Bytes on the wire: the only module that knows bincode.
//!
//! Control frames are `u32 BE length | direction tag | bincode(Vec<M>)`, read and written by
//! [`super::framing`] (async or blocking). A frame longer than the connection's limit is
//! refused on its header; a frame that does not decode is an error for that connection only.
//! Decoding never allocates more than a small multiple of the bytes present ([`decode`]). Chunk data travels as a small
//! bincode header followed by the raw little-endian element bytes: no per-element encoding.

use super::Direction;
use ares_core::array::{ArrayData, DType};
use ares_core::ids::ChunkIdx;
use ndarray::{ArrayD, IxDyn};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use thiserror::Error;

pub use super::framing::{read_frame, write_frame, FrameLimit, Framing};

#[derive(Debug, Error)]
pub enum CodecError {
    #[error("frame of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("corrupt frame: {0}")]
    Corrupt(String),
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes into a buffer of exactly the right size (measured first: no regrowing copies).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    encode_after(&[], value)
}

/// `prefix` then the encoding of `value`, in one buffer of the right size. The buffer is
/// reserved, not zeroed: zero-filling a task graph's tens of megabytes before writing them
/// cost a quarter of the encoding.
fn encode_after<T: Serialize>(prefix: &[u8], value: &T) -> Result<Vec<u8>, CodecError> {
    let mut buf = Vec::with_capacity(prefix.len() + encoded_size(value)?);
    buf.extend_from_slice(prefix);
    Ok(encode_into(value, buf, Vec::new())?.current)
}

fn corrupt(e: bincode::error::EncodeError) -> CodecError {
    CodecError::Corrupt(e.to_string())
}

/// How many bytes `value` encodes to (a sizing pass, so buffers are reserved once).
fn encoded_size<T: Serialize>(value: &T) -> Result<usize, CodecError> {
    let mut sizer = bincode::enc::write::SizeWriter::default();
    bincode::serde::encode_into_writer(value, &mut sizer, config()).map_err(corrupt)?;
    Ok(sizer.bytes_written)
}

/// Encodes `value` after the bytes `head` holds, splicing in the `shared` byte strings.
fn encode_into<'a, T: Serialize>(
    value: &T,
    head: Vec<u8>,
    shared: Vec<&'a bytes::Bytes>,
) -> Result<Splicer<'a>, CodecError> {
    let mut writer = Splicer {
        shared,
        current: head,
        pieces: Vec::new(),
    };
    bincode::serde::encode_into_writer(value, &mut writer, config()).map_err(corrupt)?;
    Ok(writer)
}

fn decode_limited<T: DeserializeOwned, const LIMIT: usize>(
    bytes: &[u8],
) -> Result<(T, usize), bincode::error::DecodeError> {
    bincode::serde::decode_from_slice(bytes, config().with_limit::<LIMIT>())
}

/// Decodes one value that must fill `bytes` exactly.
///
/// bincode allocates a string or byte buffer as long as its length prefix says before reading
/// it (a 15-byte frame claiming 2^56 bytes aborted the process). Its limit counts the bytes
/// every primitive and length prefix claims in memory; a valid value claims at most 16 per
/// byte on the wire (a one-byte varint may be a u128), so the limit here is 16 times the
/// input's length rounded up to a power of four (at least 64 KiB): no claim can allocate
/// more than a small multiple of the bytes actually present.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let size = bytes
        .len()
        .saturating_mul(16)
        .max(1)
        .checked_next_power_of_two()
        .map_or(usize::BITS, usize::trailing_zeros);
    let decoded = match size {
        0..=16 => decode_limited::<T, { 1 << 16 }>(bytes),
        17..=18 => decode_limited::<T, { 1 << 18 }>(bytes),
        19..=20 => decode_limited::<T, { 1 << 20 }>(bytes),
        21..=22 => decode_limited::<T, { 1 << 22 }>(bytes),
        23..=24 => decode_limited::<T, { 1 << 24 }>(bytes),
        25..=26 => decode_limited::<T, { 1 << 26 }>(bytes),
        27..=28 => decode_limited::<T, { 1 << 28 }>(bytes),
        29..=30 => decode_limited::<T, { 1 << 30 }>(bytes),
        31..=32 => decode_limited::<T, { 1 << 32 }>(bytes),
        33..=34 => decode_limited::<T, { 1 << 34 }>(bytes),
        _ => decode_limited::<T, { 1 << 36 }>(bytes),
    };
    let (value, used) = decoded.map_err(|e| CodecError::Corrupt(e.to_string()))?;
    if used != bytes.len() {
        return Err(CodecError::Corrupt(format!(
            "{} trailing bytes",
            bytes.len() - used
        )));
    }
    Ok(value)
}

/// `tag | bincode(messages)`: the tag says which way the frame goes.
pub fn encode_frame<M: Direction>(messages: &[M]) -> Result<Vec<u8>, CodecError> {
    encode_after(&[M::TAG], &messages)
}

/// Byte strings at least this long that a message shares ([`Direction::shared_bytes`]) are
/// spliced into a frame rather than copied.
pub const SPLICE_MIN: usize = 64 << 10;

/// One whole frame, `u32 BE length | tag | bincode(messages)`, as pieces to write in order:
/// the bytes encoded here, and each large byte string the messages share
/// ([`Direction::shared_bytes`]: a task's graph, result data) as the same reference-counted
/// buffer, not a copy. A task graph of a hundred megabytes sent to every worker once held a
/// copy per connection, then a second one in the connection's write buffer.
pub fn encode_frame_pieces<M: Direction>(
    messages: &[M],
    limit: usize,
) -> Result<Vec<bytes::Bytes>, CodecError> {
    let body = encoded_size(&messages)?;
    let size = 1 + body;
    if size > limit.min(u32::MAX as usize) {
        return Err(CodecError::TooLarge { size, limit });
    }
    let shared: Vec<&bytes::Bytes> = messages
        .iter()
        .filter_map(M::shared_bytes)
        .filter(|b| b.len() >= SPLICE_MIN)
        .collect();
    let spliced: usize = shared.iter().map(|b| b.len()).sum();
    let mut head = Vec::with_capacity(5 + body.saturating_sub(spliced));
    head.extend_from_slice(&(size as u32).to_be_bytes());
    head.push(M::TAG);
    let writer = encode_into(&messages, head, shared)?;
    let mut pieces = writer.pieces;
    if !writer.current.is_empty() {
        pieces.push(writer.current.into());
    }
    Ok(pieces)
}

/// Appends what it is given to `current` (reserved beforehand for all but the spliced bytes),
/// except a slice that *is* one of `shared` (same address and length): that one becomes its own piece,
/// a new reference to the same buffer.
struct Splicer<'a> {
    shared: Vec<&'a bytes::Bytes>,
    current: Vec<u8>,
    pieces: Vec<bytes::Bytes>,
}

impl bincode::enc::write::Writer for Splicer<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
        if bytes.len() >= SPLICE_MIN {
            let same = |b: &&&bytes::Bytes| b.as_ptr() == bytes.as_ptr() && b.len() == bytes.len();
            if let Some(b) = self.shared.iter().find(same) {
                let done = std::mem::take(&mut self.current);
                if !done.is_empty() {
                    self.pieces.push(done.into());
                }
                self.pieces.push((*b).clone());
                return Ok(());
            }
        }
        self.current.extend_from_slice(bytes);
        Ok(())
    }
}

/// Decodes a frame of `M`s; a frame of another direction is refused before any decoding.
pub fn decode_frame<M: Direction>(bytes: &[u8]) -> Result<Vec<M>, CodecError> {
    match bytes.split_first() {
        Some((tag, body)) if *tag == M::TAG => decode(body),
        Some((tag, _)) => Err(CodecError::Corrupt(format!(
            "frame tag {tag:#04x} where a {} frame was expected",
            M::NAME
        ))),
        None => Err(CodecError::Corrupt("empty frame".into())),
    }
}

/// The async frame codec with a fixed limit (see [`super::framing`]).
pub fn framing(max_frame: usize) -> Framing {
    Framing::new(FrameLimit::new(max_frame))
}

#[derive(Serialize, Deserialize)]
struct ChunkHeader {
    chunk: ChunkIdx,
    dtype: DType,
    shape: Vec<u64>,
    bytes: u64,
}

/// Chunks as `bincode(headers) | raw bytes of each chunk in order`, prefixed by the header length.
pub fn encode_chunks(chunks: &[(ChunkIdx, &ArrayData)]) -> Result<Vec<u8>, CodecError> {
    let mut headers = Vec::with_capacity(chunks.len());
    let mut body: Vec<u8> = Vec::with_capacity(chunks.iter().map(|(_, a)| a.nbytes()).sum());
    for (chunk, data) in chunks {
        let start = body.len();
        match data {
            ArrayData::F64(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::I64(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::F32(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::I32(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::Bool(a) => body.extend(a.iter().map(|b| *b as u8)),
            // num-complex's `Complex<T>` is `repr(C)` (re, im): NumPy's layout.
            ArrayData::C64(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::C128(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            // The narrow integers, as the pieces' raw little-endian bytes.
            other => body.extend_from_slice(&super::pieces::raw_bytes(other)),
        }
        headers.push(ChunkHeader {
            chunk: *chunk,
            dtype: data.dtype(),
            shape: data.shape().iter().map(|d| *d as u64).collect(),
            bytes: (body.len() - start) as u64,
        });
    }
    let head = encode(&headers)?;
    let mut out = Vec::with_capacity(8 + head.len() + body.len());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    Ok(out)
}

pub fn decode_chunks(bytes: &[u8]) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    let corrupt = |m: &str| CodecError::Corrupt(format!("chunk data: {m}"));
    let head_len = u64::from_le_bytes(
        bytes
            .get(..8)
            .ok_or_else(|| corrupt("short header"))?
            .try_into()
            .expect("8 bytes"),
    ) as usize;
    let head_end = 8usize
        .checked_add(head_len)
        .filter(|e| *e <= bytes.len())
        .ok_or_else(|| corrupt("header past the end"))?;
    let headers: Vec<ChunkHeader> = decode(&bytes[8..head_end])?;
    let mut pos = head_end;
    let mut out = Vec::with_capacity(headers.len());
    for h in headers {
        let end = pos
            .checked_add(h.bytes as usize)
            .filter(|e| *e <= bytes.len())
            .ok_or_else(|| corrupt("body past the end"))?;
        let raw = &bytes[pos..end];
        pos = end;
        let shape: Vec<usize> = h.shape.iter().map(|d| *d as usize).collect();
        let n = shape
            .iter()
            .try_fold(h.dtype.itemsize(), |n, d| n.checked_mul(*d));
        if n != Some(raw.len()) {
            return Err(corrupt("size does not match shape"));
        }
        let shaped = |e: ndarray::ShapeError| CodecError::Corrupt(e.to_string());
        let data = match h.dtype {
            DType::F64 => ArrayData::F64(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, f64>(raw))
                    .map_err(shaped)?,
            ),
            DType::I64 => ArrayData::I64(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, i64>(raw))
                    .map_err(shaped)?,
            ),
            DType::F32 => ArrayData::F32(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, f32>(raw))
                    .map_err(shaped)?,
            ),
            DType::I32 => ArrayData::I32(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, i32>(raw))
                    .map_err(shaped)?,
            ),
            DType::Bool => ArrayData::Bool(
                ArrayD::from_shape_vec(IxDyn(&shape), raw.iter().map(|b| *b != 0).collect())
                    .map_err(shaped)?,
            ),
            DType::C64 => ArrayData::C64(
                ArrayD::from_shape_vec(
                    IxDyn(&shape),
                    bytemuck::pod_collect_to_vec::<u8, ares_core::array::Complex32>(raw),
                )
                .map_err(shaped)?,
            ),
            DType::C128 => ArrayData::C128(
                ArrayD::from_shape_vec(
                    IxDyn(&shape),
                    bytemuck::pod_collect_to_vec::<u8, ares_core::array::Complex64>(raw),
                )
                .map_err(shaped)?,
            ),
            DType::I8 => ArrayData::I8(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, i8>(raw))
                    .map_err(shaped)?,
            ),
            DType::I16 => ArrayData::I16(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, i16>(raw))
                    .map_err(shaped)?,
            ),
            DType::U8 => ArrayData::U8(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, u8>(raw))
                    .map_err(shaped)?,
            ),
            DType::U16 => ArrayData::U16(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, u16>(raw))
                    .map_err(shaped)?,
            ),
            DType::U32 => ArrayData::U32(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, u32>(raw))
                    .map_err(shaped)?,
            ),
            DType::U64 => ArrayData::U64(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, u64>(raw))
                    .map_err(shaped)?,
            ),
        };
        out.push((h.chunk, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
