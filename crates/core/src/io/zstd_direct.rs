//! Reading a whole store chunk of the most common Zarr layout (`bytes` little endian, then
//! `zstd`: what zarr-python writes with a `ZstdCodec`) straight into the chunk's buffer.
//!
//! Through `zarrs`, a chunk's bytes went from the file into a buffer, from zstd into a second
//! buffer, then were copied into a zero-filled element vector: a profile of `sum(from_zarr(p))`
//! spent about 8 % of its time in that copy and that zero fill, beside 6 % reading the file and
//! most of the rest in zstd. Here zstd decodes into the uninitialised capacity of the element
//! vector that becomes the chunk, and the vector's length is set to what zstd wrote. Every
//! other layout, a region that is not exactly one store chunk, a missing chunk (fill value)
//! and bool arrays take `zarrs`' own path.
//!
//! `bytes` then `gzip` takes the same road ([`read_chunk`] with [`Compressor::Gzip`]): decoded straight into a
//! buffer of the chunk's size, so it is bounded by construction (a stream longer than the
//! chunk fails after one more byte) and decoded once. Through `zarrs` a gzip chunk is first
//! counted ([`super::inflation`]), then decoded: twice the work.

use super::zarr::ZArray;
use zarrs::metadata::v3::MetadataV3;
use zstd::zstd_safe::{self, WriteBuf};

/// An element vector as zstd's output: bytes land in its capacity.
struct Elements<'a, T>(&'a mut Vec<T>);

// SAFETY: the pointer and capacity describe the vector's allocation; `filled_until` is called
// by zstd with the number of bytes it wrote from the start, all initialised, and only whole
// elements are kept (any `Pod` bit pattern is a valid element).
unsafe impl<T: bytemuck::Pod> WriteBuf for Elements<'_, T> {
    fn as_slice(&self) -> &[u8] {
        bytemuck::cast_slice(self.0.as_slice())
    }
    fn capacity(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<T>()
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: the caller wrote the first `n` bytes (zstd reports them), within capacity.
        unsafe { self.0.set_len(n / std::mem::size_of::<T>()) };
    }
}

/// Whether chunks are `bytes` (little endian, on a little-endian host) then `zstd`, with no
/// storage transformer.
pub fn plain_zstd(a: &ZArray) -> bool {
    plain(a, "zstd")
}

/// The compressor when chunks are `bytes` (little endian) then `zstd` or `gzip` alone.
pub fn plain_compressor(a: &ZArray) -> Option<Compressor> {
    if plain(a, "zstd") {
        Some(Compressor::Zstd)
    } else if plain(a, "gzip") {
        Some(Compressor::Gzip)
    } else {
        None
    }
}

fn plain(a: &ZArray, compressor: &str) -> bool {
    let zarrs::metadata::ArrayMetadata::V3(m) = a.metadata() else {
        return false;
    };
    let little = |c: &MetadataV3| {
        c.configuration()
            .and_then(|c| c.get("endian"))
            .is_none_or(|e| e == "little")
    };
    cfg!(target_endian = "little")
        && m.storage_transformers.is_empty()
        && m.codecs.len() == 2
        && m.codecs[0].name() == "bytes"
        && little(&m.codecs[0])
        && m.codecs[1].name() == compressor
}

/// Why a chunk did not take the direct path's read or write.
#[derive(Debug, thiserror::Error)]
pub enum DirectError {
    #[error("not a Zarr v3 array")]
    NotV3,
    #[error("zstd: {0}")]
    Zstd(&'static str),
    #[error("gzip: {0}")]
    Gzip(std::io::Error),
    #[error("the gzip stream decompresses to more than {0} bytes, the most its chunk shape holds: refusing to decode it")]
    GzipBomb(usize),
    #[error("{0}")]
    Store(String),
    #[error("the chunk decodes to {written} bytes, its shape holds {holds}")]
    Size { written: usize, holds: usize },
}

/// Writes a whole store chunk from the elements' own memory: zstd compresses them straight
/// into the bytes stored, with the array's level and checksum flag (zarrs copied the elements
/// into its own buffer first: one more copy of a 64 MiB column band than the worker reserved).
pub fn write_chunk<T: bytemuck::Pod>(
    a: &ZArray,
    indices: &[u64],
    elements: &[T],
) -> Result<(), DirectError> {
    let zarrs::metadata::ArrayMetadata::V3(m) = a.metadata() else {
        return Err(DirectError::NotV3);
    };
    let config = m.codecs.get(1).and_then(|c| c.configuration());
    let level = config
        .and_then(|c| c.get("level"))
        .and_then(|l| l.as_i64())
        .unwrap_or(0) as i32;
    let checksum = config
        .and_then(|c| c.get("checksum"))
        .and_then(|c| c.as_bool())
        .unwrap_or(false);
    let zstd_err = |code| DirectError::Zstd(zstd_safe::get_error_name(code));
    let src: &[u8] = bytemuck::cast_slice(elements);
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
        .map_err(zstd_err)?;
    cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(checksum))
        .map_err(zstd_err)?;
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(src.len()));
    cctx.compress2(&mut out, src).map_err(zstd_err)?;
    // SAFETY: `out` is the chunk encoded with the array's own codecs (bytes little endian,
    // then zstd), which is what zarrs requires of an encoded chunk.
    unsafe { a.store_encoded_chunk(indices, out.into()) }
        .map_err(|e| DirectError::Store(e.to_string()))
}

/// The compressor of a chunk layout the direct path decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressor {
    Zstd,
    Gzip,
}

/// The `n` elements of the store chunk at `indices`, decoded straight into a buffer of their
/// size; `Ok(None)` when the chunk is not stored (the caller fills it). A stream that
/// decodes to another size is refused; neither decoder writes past the buffer.
pub fn read_chunk<T: bytemuck::Pod>(
    a: &ZArray,
    indices: &[u64],
    n: usize,
    compressor: Compressor,
) -> Result<Option<Vec<T>>, DirectError> {
    let Some(encoded) = a
        .retrieve_encoded_chunk(indices)
        .map_err(|e| DirectError::Store(e.to_string()))?
    else {
        return Ok(None);
    };
    match compressor {
        Compressor::Zstd => zstd_elements(&encoded, n),
        Compressor::Gzip => gzip_elements(&encoded, n),
    }
    .map(Some)
}

/// zstd decodes into the uninitialised capacity of the element vector.
fn zstd_elements<T: bytemuck::Pod>(encoded: &[u8], n: usize) -> Result<Vec<T>, DirectError> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let written = zstd_safe::decompress(&mut Elements(&mut out), encoded)
        .map_err(|code| DirectError::Zstd(zstd_safe::get_error_name(code)))?;
    if written != n * std::mem::size_of::<T>() {
        return Err(DirectError::Size {
            written,
            holds: n * std::mem::size_of::<T>(),
        });
    }
    Ok(out)
}

/// gzip fills a zeroed vector exactly; one more byte in the stream is a refusal.
fn gzip_elements<T: bytemuck::Pod>(encoded: &[u8], n: usize) -> Result<Vec<T>, DirectError> {
    use std::io::Read;
    let mut out: Vec<T> = vec![T::zeroed(); n];
    let mut stream = flate2::read::GzDecoder::new(encoded);
    stream
        .read_exact(bytemuck::cast_slice_mut(&mut out))
        .map_err(DirectError::Gzip)?;
    let mut more = [0u8; 1];
    if stream.read(&mut more).map_err(DirectError::Gzip)? != 0 {
        return Err(DirectError::GzipBomb(n * std::mem::size_of::<T>()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{zarr, Codec};
    use crate::array::{ArrayData, DType};
    use ndarray::{ArrayD, IxDyn};

    /// Whole chunks take the direct path, edge chunks, regions across chunks and a missing
    /// chunk take zarrs' path: all read back what was written, bit for bit.
    #[test]
    fn direct_and_zarrs_reads_agree() {
        for (codec, compressor) in [
            (Codec::Zstd { level: 1 }, super::Compressor::Zstd),
            (Codec::Gzip { level: 6 }, super::Compressor::Gzip),
        ] {
            agree(codec, compressor);
        }
    }

    fn agree(codec: Codec, compressor: super::Compressor) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("z.zarr");
        let full = ArrayD::from_shape_fn(IxDyn(&[10, 6]), |i| (i[0] * 6 + i[1]) as f64 - 7.5);
        zarr::create(&p, &[10, 6], DType::F64, &[4, 6], codec).unwrap();
        let a = zarr::open_for_tests(&p);
        assert_eq!(super::plain_compressor(&a), Some(compressor));
        for (i, rows) in [(0u64, 0..4), (1, 4..8)] {
            let part = full.slice(ndarray::s![rows, ..]).to_owned().into_dyn();
            zarr::write_chunk(&p, &[i, 0], &ArrayData::F64(part)).unwrap();
        }
        let read = |offset: &[usize], shape: &[usize]| {
            zarr::read_region(&p, DType::F64, offset, shape).unwrap()
        };
        let want = |r: std::ops::Range<usize>| {
            ArrayData::F64(full.slice(ndarray::s![r, ..]).to_owned().into_dyn())
        };
        let direct = super::read_chunk::<f64>(&a, &[1, 0], 24, compressor)
            .unwrap()
            .unwrap();
        assert_eq!(
            ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[4, 6]), direct).unwrap()),
            want(4..8)
        );
        assert_eq!(read(&[4, 0], &[4, 6]), want(4..8));
        assert_eq!(read(&[2, 0], &[4, 6]), want(2..6));
        // Chunk 2 (rows 8..10, an edge chunk) was never written: the fill value, 0.
        assert!(super::read_chunk::<f64>(&a, &[2, 0], 24, compressor)
            .unwrap()
            .is_none());
        let edge = read(&[8, 0], &[2, 6]);
        assert!(edge.iter_f64().all(|v| v == 0.0), "{edge:?}");
        // Written directly, read by zarrs' own path (a region across two chunks).
        let a = zarr::open_for_tests(&p);
        let mut decoded: Vec<f64> = a
            .retrieve_array_subset(&[0u64..8, 0..6].as_slice())
            .unwrap();
        decoded.truncate(48);
        assert_eq!(decoded, full.iter().take(48).copied().collect::<Vec<f64>>());
        // A chunk of the wrong size is an error, not a short chunk.
        assert!(super::read_chunk::<f64>(&a, &[0, 0], 12, compressor).is_err());
    }
}
