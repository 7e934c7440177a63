//! Bounds on what a Zarr chunk may cost to read: a chunk file is as hostile as a frame from
//! the network, and its array's metadata says how large it can honestly be.
//!
//! Two attacks made one small read cost gigabytes (issue "Hostile data files", row 5):
//! - a sparse chunk file of 1 TB: `zarrs` reads an object whole before decoding it. The
//!   store now refuses, before reading, any object larger than [`object_cap`]: what the
//!   array's largest chunk (or shard) can encode to, with room for compressors' worst case,
//!   checksums and shard indexes.
//! - a 1 MB gzip chunk that inflates to 1 GiB: `zarrs`' gzip decoder reads to the end of the
//!   stream into a growing buffer, and its zstd decoder sizes its buffer by the content size
//!   the frame's header claims. [`check_chunks`] decodes each compressed chunk a read touches
//!   into a counting sink first, stopping one byte past what the chunk's shape holds: a bomb
//!   costs a fixed buffer and fails naming the chunk, and only chunks that fit are decoded
//!   for real. (The whole-chunk zstd path, [`super::zstd_direct`], decodes into a buffer of
//!   exactly the chunk's size and needs no check.)
//!
//! Chunks inside a shard are decoded by `zarrs` within the shard's bound only; their own
//! inflation is not checked here (RELIABILITY.md lists it as open).

use super::zarr::ZArray;
use std::io::Read;

/// Slack over the decoded size that a compressed stream may decode to: checksums the chain
/// appends before compressing (crc32c: 4 bytes per codec).
const DECODED_SLACK: u64 = 64;

/// Largest object (chunk or shard file) the store reads for an array whose largest chunk
/// holds `chunk_bytes` decoded: twice that (gzip's and zstd's worst expansion is under 1 %),
/// plus 20 bytes per element for a shard's index entries and checksums (a shard of
/// one-element inner chunks), plus 1 MiB.
pub fn object_cap(chunk_bytes: u64, elements: u64, sharded: bool) -> u64 {
    let index = if sharded {
        elements.saturating_mul(20)
    } else {
        0
    };
    chunk_bytes
        .saturating_mul(2)
        .saturating_add(index)
        .saturating_add(1 << 20)
}

/// Decoded bytes of a chunk of `a` at `indices`: its elements times the element size.
pub fn chunk_bytes(a: &ZArray, indices: &[u64], element_bytes: u64) -> Option<(u64, u64)> {
    let shape = a.chunk_shape(indices).ok()?;
    let elements = shape.iter().try_fold(1u64, |n, d| n.checked_mul(d.get()))?;
    Some((elements.checked_mul(element_bytes)?, elements))
}

/// Whether the array's chunks are shards (their objects hold inner chunks and an index).
pub fn sharded(a: &ZArray) -> bool {
    match a.metadata() {
        zarrs::metadata::ArrayMetadata::V3(m) => {
            m.codecs.iter().any(|c| c.name() == "sharding_indexed")
        }
        zarrs::metadata::ArrayMetadata::V2(_) => false,
    }
}

/// What a compressed stream starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressed {
    Gzip,
    Zstd,
}

impl std::fmt::Display for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Compressed::Gzip => "gzip",
            Compressed::Zstd => "zstd",
        })
    }
}

/// Why a stored chunk is refused before it is decoded.
#[derive(Debug, thiserror::Error)]
pub enum InflationError {
    #[error("the {kind} stream does not decode: {detail}")]
    Corrupt { kind: Compressed, detail: String },
    #[error("the {kind} stream decompresses to more than {limit} bytes, the most its chunk shape holds: refusing to decode it")]
    Bomb { kind: Compressed, limit: u64 },
    #[error("chunk {indices:?}: {source}")]
    Chunk {
        indices: Vec<u64>,
        source: Box<InflationError>,
    },
    #[error("chunk {indices:?}: {detail}")]
    Unreadable { indices: Vec<u64>, detail: String },
}

fn sniff(bytes: &[u8]) -> Option<Compressed> {
    match bytes {
        [0x1f, 0x8b, ..] => Some(Compressed::Gzip),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compressed::Zstd),
        _ => None,
    }
}

/// Bytes `encoded` decodes to, counted up to `limit + 1` without holding them: `Ok(n)` with
/// `n <= limit`, or `Err` saying it inflates beyond `limit` (or is corrupt).
fn inflated(encoded: &[u8], limit: u64) -> Result<u64, InflationError> {
    let Some(kind) = sniff(encoded) else {
        return Ok(0);
    };
    let mut sink = std::io::sink();
    let counted = match kind {
        Compressed::Gzip => std::io::copy(
            &mut flate2::read::GzDecoder::new(encoded).take(limit + 1),
            &mut sink,
        ),
        Compressed::Zstd => zstd::stream::read::Decoder::with_buffer(encoded)
            .map(|d| d.single_frame())
            .and_then(|d| std::io::copy(&mut d.take(limit + 1), &mut sink)),
    }
    .map_err(|e| InflationError::Corrupt {
        kind,
        detail: e.to_string(),
    })?;
    if counted > limit {
        return Err(InflationError::Bomb { kind, limit });
    }
    Ok(counted)
}

/// Checks every chunk `chunks` (store chunk indices) of `a` that is stored compressed (not
/// in a shard) against its decoded size before `zarrs` decodes it; the error names the chunk.
pub fn check_chunks(
    a: &ZArray,
    chunks: impl IntoIterator<Item = Vec<u64>>,
    element_bytes: u64,
) -> Result<(), InflationError> {
    if sharded(a) {
        return Ok(());
    }
    for indices in chunks {
        let unreadable = |detail: String| InflationError::Unreadable {
            indices: indices.clone(),
            detail,
        };
        let Some(encoded) = a
            .retrieve_encoded_chunk(&indices)
            .map_err(|e| unreadable(e.to_string()))?
        else {
            continue; // not stored: the fill value
        };
        let (bytes, _) = chunk_bytes(a, &indices, element_bytes)
            .ok_or_else(|| unreadable("its shape has no size".into()))?;
        inflated(&encoded, bytes + DECODED_SLACK).map_err(|e| InflationError::Chunk {
            indices: indices.clone(),
            source: Box::new(e),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn honest_streams_count_their_bytes() {
        let data = vec![7u8; 10_000];
        assert_eq!(inflated(&gzip(&data), 10_000).unwrap(), 10_000);
        let z = zstd::encode_all(&data[..], 3).unwrap();
        assert_eq!(inflated(&z, 10_000).unwrap(), 10_000);
        let raw = inflated(b"raw bytes", 3).unwrap();
        assert_eq!(raw, 0, "uncompressed: not counted");
    }

    #[test]
    fn a_bomb_stops_one_byte_past_the_limit() {
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 100_000, "{}", bomb.len());
        let e = inflated(&bomb, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("more than 1048576 bytes"), "{e}");
        let z = zstd::encode_all(&vec![0u8; 64 << 20][..], 3).unwrap();
        assert!(inflated(&z, 1 << 20)
            .unwrap_err()
            .to_string()
            .contains("zstd"));
    }

    #[test]
    fn corrupt_streams_are_errors() {
        let mut g = gzip(&[1u8; 1000]);
        let n = g.len();
        g[n / 2] ^= 0xff;
        g.truncate(n - 4);
        assert!(inflated(&g, 1000).is_err());
    }

    #[test]
    fn the_object_cap_grows_with_the_chunk() {
        assert_eq!(object_cap(8 << 20, 1 << 20, false), (16 << 20) + (1 << 20));
        assert!(object_cap(8 << 20, 1 << 20, true) > object_cap(8 << 20, 1 << 20, false));
        assert_eq!(object_cap(u64::MAX, u64::MAX, true), u64::MAX);
    }
}
