//! Graph arenas on the wire as packed little-endian records instead of one serde value per
//! field.
//!
//! A task's graph goes to every worker: hundreds of thousands of 28-byte nodes and their
//! index lists. Field by field, bincode's serde path encoded and decoded each integer as a
//! varint through a visitor; that was a sixth of a worker's CPU in `ares bench tps` and a
//! quarter of the supervisor's preparation. Here each arena is one byte string, written and
//! read in a tight loop: a node is [`NODE_BYTES`] bytes, an index 4.
//!
//! Formats that are human-readable (JSON for `ares explain`) keep the field-by-field form.
//! Decoding checks every record (its length, operation id and dtype) and sizes what it
//! allocates by the bytes present, never by a count the sender claims.

use super::chunk::ChunkNode;
use crate::array::DType;
use crate::ids::{ArgsIdx, ChunkIdx, ChunkKey, OpKey, ShapeIdx};
use crate::ops::{Op, OpId};
use serde::de::{Error, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// key.op, key.index, op id, args, shape, inputs start, inputs length (u32 each), dtype (u8).
pub const NODE_BYTES: usize = 7 * 4 + 1;

/// Why a packed arena does not decode.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{bytes} bytes of {what} are not a whole number of {record}-byte records")]
    Ragged {
        what: &'static str,
        bytes: usize,
        record: usize,
    },
    #[error("chunk node {node}: unknown op id {id}")]
    UnknownOp { node: usize, id: OpId },
    #[error("chunk node {node}: dtype {code}")]
    UnknownDtype { node: usize, code: u8 },
    #[error("chunk length {0} out of range")]
    LengthOutOfRange(u64),
}

/// Reads a byte string however the deserializer hands it over.
struct BytesVisitor<F>(F, &'static str);

impl<'de, T, F: FnOnce(&[u8]) -> Result<T, PackError>> Visitor<'de> for BytesVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "packed {}", self.1)
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
    fn visit_borrowed_bytes<E: Error>(self, v: &'de [u8]) -> Result<T, E> {
        self.visit_bytes(v)
    }
    fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<T, E> {
        self.visit_bytes(&v)
    }
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn dtype_code(d: DType) -> u8 {
    d as u8
}

fn dtype_of(code: u8) -> Option<DType> {
    crate::array::DTYPES
        .iter()
        .copied()
        .find(|d| *d as u8 == code)
}

/// `#[serde(with = "packed::nodes")]` for the node arena.
pub mod nodes {
    use super::*;

    pub fn serialize<S: Serializer>(nodes: &[ChunkNode], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return nodes.serialize(s);
        }
        let mut buf = Vec::with_capacity(nodes.len() * NODE_BYTES);
        for n in nodes {
            let (start, len) = n.input_range();
            for v in [
                n.key.op.0,
                n.key.index,
                n.op.id().0,
                n.args.0,
                n.shape.0,
                start,
                len,
            ] {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            buf.push(dtype_code(n.dtype));
        }
        s.serialize_bytes(&buf)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ChunkNode>, D::Error> {
        if d.is_human_readable() {
            return Vec::<ChunkNode>::deserialize(d);
        }
        d.deserialize_bytes(BytesVisitor(unpack, "chunk nodes"))
    }

    fn unpack(b: &[u8]) -> Result<Vec<ChunkNode>, PackError> {
        if !b.len().is_multiple_of(NODE_BYTES) {
            return Err(PackError::Ragged {
                what: "chunk nodes",
                bytes: b.len(),
                record: NODE_BYTES,
            });
        }
        let mut out = Vec::with_capacity(b.len() / NODE_BYTES);
        // Neighbouring nodes mostly share an operation: skip the id lookup for repeats.
        let mut last: Option<(u32, Op)> = None;
        for (i, r) in b.chunks_exact(NODE_BYTES).enumerate() {
            let id = u32_at(r, 8);
            let op = match last {
                Some((l, op)) if l == id => op,
                _ => {
                    let op = Op::from_id(OpId(id)).ok_or(PackError::UnknownOp {
                        node: i,
                        id: OpId(id),
                    })?;
                    last = Some((id, op));
                    op
                }
            };
            let dtype = dtype_of(r[28]).ok_or(PackError::UnknownDtype {
                node: i,
                code: r[28],
            })?;
            out.push(ChunkNode::from_parts(
                ChunkKey {
                    op: OpKey(u32_at(r, 0)),
                    index: u32_at(r, 4),
                },
                op,
                ArgsIdx(u32_at(r, 12)),
                ShapeIdx(u32_at(r, 16)),
                dtype,
                (u32_at(r, 20), u32_at(r, 24)),
            ));
        }
        Ok(out)
    }
}

/// `#[serde(with = "packed::u32s")]` for an index list of plain `u32`s.
pub mod u32s {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[u32], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return v.serialize(s);
        }
        s.serialize_bytes(&pack(v.iter().copied()))
    }

    /// Little-endian bytes of `v`.
    pub(super) fn pack(v: impl ExactSizeIterator<Item = u32>) -> Vec<u8> {
        let mut buf = Vec::with_capacity(v.len() * 4);
        for x in v {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        buf
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
        if d.is_human_readable() {
            return Vec::<u32>::deserialize(d);
        }
        d.deserialize_bytes(BytesVisitor(unpack, "indices"))
    }

    pub(super) fn unpack(b: &[u8]) -> Result<Vec<u32>, PackError> {
        if !b.len().is_multiple_of(4) {
            return Err(PackError::Ragged {
                what: "indices",
                bytes: b.len(),
                record: 4,
            });
        }
        Ok(b.chunks_exact(4).map(|c| u32_at(c, 0)).collect())
    }
}

/// `#[serde(with = "packed::chunk_ids")]` for a list of [`ChunkIdx`].
pub mod chunk_ids {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[ChunkIdx], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return v.serialize(s);
        }
        s.serialize_bytes(&u32s::pack(v.iter().map(|c| c.0)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ChunkIdx>, D::Error> {
        if d.is_human_readable() {
            return Vec::<ChunkIdx>::deserialize(d);
        }
        let unpack = |b: &[u8]| u32s::unpack(b).map(|v| v.into_iter().map(ChunkIdx).collect());
        d.deserialize_bytes(BytesVisitor(unpack, "chunk indices"))
    }
}

/// `#[serde(with = "packed::splits")]` for chunk lengths per dimension: one packed `u64`
/// list per dimension (a result of a million chunks has a million lengths).
pub mod splits {
    use super::*;
    use serde::ser::SerializeSeq;

    struct Packed<'a>(&'a [usize]);

    impl Serialize for Packed<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut buf = Vec::with_capacity(self.0.len() * 8);
            for x in self.0 {
                buf.extend_from_slice(&(*x as u64).to_le_bytes());
            }
            s.serialize_bytes(&buf)
        }
    }

    struct Unpacked(Vec<usize>);

    impl<'de> Deserialize<'de> for Unpacked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let unpack = |b: &[u8]| {
                if !b.len().is_multiple_of(8) {
                    return Err(PackError::Ragged {
                        what: "chunk lengths",
                        bytes: b.len(),
                        record: 8,
                    });
                }
                b.chunks_exact(8)
                    .map(|c| {
                        let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                        usize::try_from(v).map_err(|_| PackError::LengthOutOfRange(v))
                    })
                    .collect::<Result<Vec<usize>, PackError>>()
                    .map(Unpacked)
            };
            d.deserialize_bytes(BytesVisitor(unpack, "chunk lengths"))
        }
    }

    pub fn serialize<S: Serializer>(v: &[Vec<usize>], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return v.serialize(s);
        }
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for dim in v {
            seq.serialize_element(&Packed(dim))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<usize>>, D::Error> {
        if d.is_human_readable() {
            return Vec::<Vec<usize>>::deserialize(d);
        }
        Ok(Vec::<Unpacked>::deserialize(d)?
            .into_iter()
            .map(|u| u.0)
            .collect())
    }
}
