//! Chunks cut into pieces across the frames of one data-plane answer.
//!
//! An answer used to be one frame holding every chunk asked for: a chunk larger than the
//! frame limit (`cluster.max_frame_bytes`) could not travel at all, and an answer of many
//! chunks held their bytes twice on the serving side (the chunks and the encoded frame) and
//! twice again on the fetching side (the frame and the decoded chunks), none of it reserved
//! under `worker.memory_limit`. Now the server packs pieces (a run of a chunk's raw
//! little-endian bytes, cut at element boundaries) into frames of at most a part's bytes and
//! sends each as soon as it is full; the receiver appends each piece to its chunk as it
//! arrives. Either side holds one part beyond the chunks themselves. A chunk of at least half
//! a part is not packed: its frames carry one piece each and are written from the chunk
//! itself ([`piece_frame_head`]), so the server holds nothing beyond it.
//!
//! A frame is `u64 LE header length | codec(Vec<PieceHeader>) | raw bytes of each piece`.
//! The receiver never sizes a buffer by a number the peer sent: a chunk's buffer grows with the
//! bytes that arrived, and a piece must continue its chunk exactly where the last one ended.

use super::codec::{self, CodecError};
use ares_core::array::{ArrayData, DType};
use ares_core::ids::ChunkIdx;
use ndarray::{ArrayD, IxDyn};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Bytes a piece's header may take in a frame (bincode of a chunk id, dtype, shape, offsets).
pub const HEADER_BYTES: usize = 128;
/// The smallest part: room for a header and a few elements.
const MIN_PART: usize = 4 * HEADER_BYTES;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct PieceHeader {
    chunk: ChunkIdx,
    dtype: DType,
    shape: Vec<u64>,
    /// Where the piece starts in the chunk's raw bytes, and its length.
    offset: u64,
    bytes: u64,
}

/// The part size of a connection whose frames may carry `max_frame` bytes: half of it (room
/// for status and headers), at most `cap`.
pub fn part_bytes(max_frame: usize, cap: usize) -> usize {
    (max_frame / 2).min(cap).max(MIN_PART)
}

/// A chunk's elements as raw little-endian bytes (borrowed unless it is bool or not in
/// standard layout).
pub fn raw_bytes(data: &ArrayData) -> Cow<'_, [u8]> {
    fn pod<T: bytemuck::Pod>(a: &ArrayD<T>) -> Cow<'_, [u8]> {
        match a.as_slice() {
            Some(s) => Cow::Borrowed(bytemuck::cast_slice(s)),
            None => {
                Cow::Owned(bytemuck::cast_slice(&a.iter().copied().collect::<Vec<T>>()).to_vec())
            }
        }
    }
    match data {
        ArrayData::F64(a) => pod(a),
        ArrayData::I64(a) => pod(a),
        ArrayData::F32(a) => pod(a),
        ArrayData::I32(a) => pod(a),
        ArrayData::Bool(a) => Cow::Owned(a.iter().map(|b| *b as u8).collect()),
        ArrayData::C64(a) => pod(a),
        ArrayData::C128(a) => pod(a),
        ArrayData::I8(a) => pod(a),
        ArrayData::I16(a) => pod(a),
        ArrayData::U8(a) => pod(a),
        ArrayData::U16(a) => pod(a),
        ArrayData::U32(a) => pod(a),
        ArrayData::U64(a) => pod(a),
    }
}

/// Appends the little-endian elements of `raw` to `v`, first growing it to `room` elements.
fn extend_le<T: bytemuck::Pod>(v: &mut Vec<T>, raw: &[u8], room: usize) {
    v.reserve_exact(room.saturating_sub(v.len()));
    v.extend(
        raw.chunks_exact(std::mem::size_of::<T>())
            .map(bytemuck::pod_read_unaligned::<T>),
    );
}

/// Packs pieces into frames of at most `part` bytes of raw data and headers.
pub struct Packer {
    part: usize,
    headers: Vec<PieceHeader>,
    body: Vec<u8>,
}

impl Packer {
    pub fn new(part: usize) -> Self {
        Self {
            part: part.max(MIN_PART),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    fn size(&self) -> usize {
        self.body.len() + (self.headers.len() + 1) * HEADER_BYTES
    }

    /// No room for another piece: send [`Packer::frame`] first.
    pub fn full(&self) -> bool {
        self.size() + 8 > self.part
    }

    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }

    /// Adds the longest piece of `raw[offset..]` (the raw bytes of chunk `chunk`, of `dtype`
    /// and `shape`) that fits, at least one element unless [`Packer::full`]; returns the
    /// bytes taken.
    pub fn fill(
        &mut self,
        chunk: ChunkIdx,
        (dtype, shape): (DType, &[usize]),
        raw: &[u8],
        offset: usize,
    ) -> usize {
        if self.full() {
            return 0;
        }
        let item = dtype.itemsize().max(1);
        let room = (self.part - self.size()) / item * item;
        let take = (raw.len() - offset.min(raw.len())).min(room);
        self.headers.push(PieceHeader {
            chunk,
            dtype,
            shape: shape.iter().map(|d| *d as u64).collect(),
            offset: offset as u64,
            bytes: take as u64,
        });
        self.body.extend_from_slice(&raw[offset..offset + take]);
        take
    }

    /// The frame of the pieces added so far, after a status byte; the packer is empty again.
    pub fn frame(&mut self, status: u8) -> Result<Vec<u8>, CodecError> {
        let head = codec::encode(&std::mem::take(&mut self.headers))?;
        let mut out = Vec::with_capacity(9 + head.len() + self.body.len());
        out.push(status);
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&self.body);
        self.body.clear();
        Ok(out)
    }
}

/// The head of a frame that carries one piece of a large chunk and nothing else:
/// `u32 BE frame length | status | u64 LE header length | header`. The piece's raw bytes
/// follow it on the wire as they lie in the chunk, so the serving side copies nothing into
/// frames (what [`Packer`] does for small chunks, many to a frame). The receiver cannot tell
/// the two apart.
pub fn piece_frame_head(
    status: u8,
    chunk: ChunkIdx,
    (dtype, shape): (DType, &[usize]),
    offset: usize,
    bytes: usize,
) -> Result<Vec<u8>, CodecError> {
    let head = codec::encode(&vec![PieceHeader {
        chunk,
        dtype,
        shape: shape.iter().map(|d| *d as u64).collect(),
        offset: offset as u64,
        bytes: bytes as u64,
    }])?;
    let frame = 1 + 8 + head.len() + bytes;
    let frame = u32::try_from(frame).map_err(|_| CodecError::TooLarge {
        size: frame,
        limit: u32::MAX as usize,
    })?;
    let mut out = Vec::with_capacity(4 + 1 + 8 + head.len());
    out.extend_from_slice(&frame.to_be_bytes());
    out.push(status);
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    Ok(out)
}

enum Buf {
    F64(Vec<f64>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
    C64(Vec<ares_core::array::Complex32>),
    C128(Vec<ares_core::array::Complex64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

struct Partial {
    dtype: DType,
    shape: Vec<usize>,
    /// Raw bytes of the whole chunk, checked against the shape.
    total: usize,
    received: usize,
    buf: Buf,
}

/// Puts chunks back together from the frames of one answer.
#[derive(Default)]
pub struct Assembler {
    partial: FxHashMap<ChunkIdx, Partial>,
    done: Vec<(ChunkIdx, ArrayData)>,
    finished: rustc_hash::FxHashSet<ChunkIdx>,
    /// Raw bytes received so far (what the fetching side holds).
    pub received: u64,
}

fn corrupt(m: String) -> CodecError {
    CodecError::Corrupt(format!("chunk data: {m}"))
}

impl Assembler {
    /// Adds the pieces of one frame body (after its status byte).
    pub fn add(&mut self, frame: &[u8]) -> Result<(), CodecError> {
        let head_len = frame
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
            .ok_or_else(|| corrupt("short header".into()))?;
        let head_end = 8usize
            .checked_add(head_len)
            .filter(|e| *e <= frame.len())
            .ok_or_else(|| corrupt("header past the end".into()))?;
        let headers: Vec<PieceHeader> = codec::decode(&frame[8..head_end])?;
        let mut pos = head_end;
        for h in headers {
            let end = usize::try_from(h.bytes)
                .ok()
                .and_then(|b| pos.checked_add(b))
                .filter(|e| *e <= frame.len())
                .ok_or_else(|| corrupt("body past the end".into()))?;
            self.piece(h, &frame[pos..end])?;
            pos = end;
        }
        if pos != frame.len() {
            return Err(corrupt(format!("{} trailing bytes", frame.len() - pos)));
        }
        Ok(())
    }

    fn piece(&mut self, h: PieceHeader, raw: &[u8]) -> Result<(), CodecError> {
        let c = h.chunk;
        if self.finished.contains(&c) {
            return Err(corrupt(format!("chunk {c} sent twice")));
        }
        let shape: Vec<usize> = h
            .shape
            .iter()
            .map(|d| usize::try_from(*d).map_err(|_| corrupt(format!("chunk {c}: shape"))))
            .collect::<Result<_, _>>()?;
        let total = shape
            .iter()
            .try_fold(h.dtype.itemsize(), |n, d| n.checked_mul(*d))
            .ok_or_else(|| corrupt(format!("chunk {c}: shape overflows")))?;
        let p = self.partial.entry(c).or_insert_with(|| Partial {
            dtype: h.dtype,
            shape: shape.clone(),
            total,
            received: 0,
            buf: match h.dtype {
                DType::F64 => Buf::F64(Vec::new()),
                DType::I64 => Buf::I64(Vec::new()),
                DType::F32 => Buf::F32(Vec::new()),
                DType::I32 => Buf::I32(Vec::new()),
                DType::Bool => Buf::Bool(Vec::new()),
                DType::C64 => Buf::C64(Vec::new()),
                DType::C128 => Buf::C128(Vec::new()),
                DType::I8 => Buf::I8(Vec::new()),
                DType::I16 => Buf::I16(Vec::new()),
                DType::U8 => Buf::U8(Vec::new()),
                DType::U16 => Buf::U16(Vec::new()),
                DType::U32 => Buf::U32(Vec::new()),
                DType::U64 => Buf::U64(Vec::new()),
            },
        });
        let fits = p.dtype == h.dtype
            && p.shape == shape
            && h.offset == p.received as u64
            && p.received + raw.len() <= p.total
            && raw.len().is_multiple_of(h.dtype.itemsize().max(1));
        if !fits {
            return Err(corrupt(format!(
                "chunk {c}: a piece at {} of {} bytes does not continue it",
                h.offset,
                raw.len()
            )));
        }
        // The buffer grows to the whole chunk at once when that is at most twice what
        // arrived (a chunk in two pieces is never copied to grow), by what arrived otherwise.
        let room = p.total.min(p.received + 2 * raw.len()) / h.dtype.itemsize().max(1);
        match &mut p.buf {
            Buf::F64(v) => extend_le(v, raw, room),
            Buf::I64(v) => extend_le(v, raw, room),
            Buf::F32(v) => extend_le(v, raw, room),
            Buf::I32(v) => extend_le(v, raw, room),
            Buf::C64(v) => extend_le(v, raw, room),
            Buf::C128(v) => extend_le(v, raw, room),
            Buf::I8(v) => extend_le(v, raw, room),
            Buf::I16(v) => extend_le(v, raw, room),
            Buf::U8(v) => extend_le(v, raw, room),
            Buf::U16(v) => extend_le(v, raw, room),
            Buf::U32(v) => extend_le(v, raw, room),
            Buf::U64(v) => extend_le(v, raw, room),
            Buf::Bool(v) => {
                v.reserve_exact(room.saturating_sub(v.len()));
                v.extend(raw.iter().map(|b| *b != 0));
            }
        }
        p.received += raw.len();
        self.received += raw.len() as u64;
        if p.received == p.total {
            let p = self.partial.remove(&c).expect("present above");
            let dim = IxDyn(&p.shape);
            let shaped = |e: ndarray::ShapeError| corrupt(format!("chunk {c}: {e}"));
            macro_rules! whole {
                ($($v:ident),*) => {
                    match p.buf {
                        $(Buf::$v(mut v) => {
                            v.shrink_to_fit();
                            ArrayData::$v(ArrayD::from_shape_vec(dim, v).map_err(shaped)?)
                        })*
                    }
                };
            }
            let data = whole!(F64, I64, F32, I32, Bool, C64, C128, I8, I16, U8, U16, U32, U64);
            self.finished.insert(c);
            self.done.push((c, data));
        }
        Ok(())
    }

    /// The chunks, once the last frame was added; a chunk still partial is an error.
    pub fn finish(self) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
        if let Some((c, p)) = self.partial.iter().next() {
            return Err(corrupt(format!(
                "chunk {c} cut after {} of {} bytes",
                p.received, p.total
            )));
        }
        Ok(self.done)
    }
}

#[cfg(test)]
mod tests;
