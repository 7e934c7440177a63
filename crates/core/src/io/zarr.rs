//! Zarr arrays through `zarrs` on the local file system: v3 read and write, v2 read. Every
//! store object is opened through [`super::zarr_store::ConfinedStore`] (no link below the
//! checked store directory, regular files only, metadata size capped).
//!
//! A read decodes the store chunks a region overlaps (all of them only when the region is the
//! whole array). `to_zarr` writes one store chunk per ares chunk: tiling makes the two grids
//! the same, so no two writers ever touch the same store object. The supervisor creates the
//! array metadata (`zarr.json`) before any writer runs; an existing Zarr array at the path is
//! replaced, anything else there is refused.

use super::inflation;
use super::zarr_store::ConfinedStore;
use super::IoError;
use crate::array::{ArrayData, DType, Shape};
use ndarray::{ArrayD, IxDyn};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use zarrs::array::{data_type, Array, ArrayBuilder};

pub(super) type ZArray = Array<ConfinedStore>;

/// What the array metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZarrMeta {
    pub shape: Shape,
    pub dtype: DType,
    /// The shape of the store's first chunk (its chunk grid, for a regular grid).
    pub chunk: Shape,
}

/// Zarr stores of complex elements are not written or read yet (`to_zarr` refuses them).
const NO_COMPLEX: &str = "complex dtypes are not supported in Zarr stores yet";

fn shown(p: &Path) -> String {
    p.display().to_string()
}

fn open(path: &Path) -> Result<ZArray, IoError> {
    let bad = |d: String| IoError::bad(shown(path), d);
    if !path.is_dir() {
        return Err(IoError::Missing {
            path: shown(path),
            detail: "no Zarr array (not a directory)".into(),
        });
    }
    let store = Arc::new(ConfinedStore::new(path));
    let a = Array::open(store.clone(), "/").map_err(|e| {
        let e = e.to_string();
        // zarrs names the codec ("codec blosc is not supported"); say which ones are built in.
        let hint = if e.contains("not supported") {
            " (this build decodes the bytes, zstd, gzip, crc32c and sharding_indexed codecs; blosc is not built in)"
        } else {
            ""
        };
        bad(format!("not a readable Zarr array: {e}{hint}"))
    })?;
    // Every chunk of a regular grid has the first one's shape (edge chunks are stored whole).
    let element = a.data_type().fixed_size().unwrap_or(1) as u64;
    let first = vec![0; a.dimensionality()];
    if let Some((bytes, elements)) = inflation::chunk_bytes(&a, &first, element) {
        store.set_max_object(inflation::object_cap(
            bytes,
            elements,
            inflation::sharded(&a),
        ));
    }
    Ok(a)
}

fn dtype_of(path: &Path, a: &ZArray) -> Result<DType, IoError> {
    let dt = a.data_type();
    if *dt == data_type::float64() {
        Ok(DType::F64)
    } else if *dt == data_type::float32() {
        Ok(DType::F32)
    } else if *dt == data_type::int64() {
        Ok(DType::I64)
    } else if *dt == data_type::int32() {
        Ok(DType::I32)
    } else if *dt == data_type::int16() {
        Ok(DType::I16)
    } else if *dt == data_type::int8() {
        Ok(DType::I8)
    } else if *dt == data_type::uint64() {
        Ok(DType::U64)
    } else if *dt == data_type::uint32() {
        Ok(DType::U32)
    } else if *dt == data_type::uint16() {
        Ok(DType::U16)
    } else if *dt == data_type::uint8() {
        Ok(DType::U8)
    } else if *dt == data_type::bool() {
        Ok(DType::Bool)
    } else {
        Err(IoError::bad(
            shown(path),
            format!("unsupported data type {dt} (ares reads float64, float32, int8 to int64, uint8 to uint64, bool)"),
        ))
    }
}

fn usize_shape(path: &Path, dims: &[u64]) -> Result<Shape, IoError> {
    dims.iter()
        .map(|d| {
            usize::try_from(*d)
                .map_err(|_| IoError::bad(shown(path), format!("dimension {d} is too large")))
        })
        .collect()
}

/// Reads the metadata of the array at `path` (resolved inside a data root).
pub fn read_meta(path: &Path) -> Result<ZarrMeta, IoError> {
    let a = open(path)?;
    let dtype = dtype_of(path, &a)?;
    let shape = usize_shape(path, a.shape())?;
    let chunk = if shape.is_empty() {
        Shape::new()
    } else {
        let origin = vec![0u64; shape.len()];
        let c = a
            .chunk_shape(&origin)
            .map_err(|e| IoError::bad(shown(path), format!("chunk grid: {e}")))?;
        c.iter()
            .zip(&shape)
            .map(|(c, d)| (c.get() as usize).min((*d).max(1)))
            .collect()
    };
    Ok(ZarrMeta {
        shape,
        dtype,
        chunk,
    })
}

fn ranges(offset: &[usize], shape: &[usize]) -> Vec<Range<u64>> {
    offset
        .iter()
        .zip(shape)
        .map(|(o, s)| *o as u64..(o + s) as u64)
        .collect()
}

/// Reads region `offset..offset+shape` (checked against `dtype`).
pub fn read_region(
    path: &Path,
    dtype: DType,
    offset: &[usize],
    shape: &[usize],
) -> Result<ArrayData, IoError> {
    let a = open(path)?;
    let have = dtype_of(path, &a)?;
    if have != dtype {
        return Err(IoError::bad(
            shown(path),
            format!("holds {have}, expected {dtype}"),
        ));
    }
    let subset = ranges(offset, shape);
    if let Some(data) = read_direct(path, &a, dtype, &subset, shape)? {
        return Ok(data);
    }
    let bad = |e: zarrs::array::ArrayError| {
        IoError::bad(shown(path), format!("reading region {subset:?}: {e}"))
    };
    // Each compressed chunk the region touches is first decoded into a counting sink: one
    // inflating past its shape's size fails here, before zarrs decodes it whole.
    if let Ok(Some(touched)) = a.chunks_in_array_subset(&subset.as_slice()) {
        let chunks = touched.indices().into_iter().map(|i| i.to_vec());
        inflation::check_chunks(&a, chunks, dtype.itemsize() as u64)
            .map_err(|e| IoError::bad(shown(path), format!("reading region {subset:?}: {e}")))?;
    }
    let dims = IxDyn(shape);
    let wrap = |e: ndarray::ShapeError| IoError::bad(shown(path), e.to_string());
    macro_rules! retrieve {
        ($($v:ident: $t:ty),*) => {
            match dtype {
                $(DType::$v => {
                    let v: Vec<$t> = a.retrieve_array_subset(&subset.as_slice()).map_err(bad)?;
                    ArrayData::$v(ArrayD::from_shape_vec(dims, v).map_err(wrap)?)
                })*
                DType::C64 | DType::C128 => return Err(IoError::bad(shown(path), NO_COMPLEX)),
            }
        };
    }
    Ok(retrieve!(
        F64: f64, I64: i64, F32: f32, I32: i32, Bool: bool, I16: i16, I8: i8, U64: u64,
        U32: u32, U16: u16, U8: u8
    ))
}

#[cfg(test)]
pub(super) fn open_for_tests(path: &Path) -> ZArray {
    open(path).unwrap()
}

/// The indices of the store chunk that `subset` is exactly, if it is one.
fn whole_chunk(a: &ZArray, subset: &[Range<u64>]) -> Option<Vec<u64>> {
    let chunks = a.chunks_in_array_subset(&subset).ok()??;
    if chunks.num_elements_usize() != 1 {
        return None;
    }
    let indices = chunks.start().to_vec();
    let whole = a.chunk_subset(&indices).ok()?;
    (whole.to_ranges() == subset).then_some(indices)
}

/// A region that is one whole store chunk of `bytes` + `zstd` or `bytes` + `gzip`, decoded
/// straight into its buffer ([`super::zstd_direct`]); `None`: take `zarrs`' path.
fn read_direct(
    path: &Path,
    a: &ZArray,
    dtype: DType,
    subset: &[Range<u64>],
    shape: &[usize],
) -> Result<Option<ArrayData>, IoError> {
    let Some(compressor) = super::zstd_direct::plain_compressor(a) else {
        return Ok(None);
    };
    if dtype == DType::Bool {
        return Ok(None);
    }
    let Some(indices) = whole_chunk(a, subset) else {
        return Ok(None);
    };
    let n = shape.iter().product();
    let bad = |e: super::zstd_direct::DirectError| {
        IoError::bad(shown(path), format!("reading chunk {indices:?}: {e}"))
    };
    let dims = IxDyn(shape);
    let wrap = |e: ndarray::ShapeError| IoError::bad(shown(path), e.to_string());
    macro_rules! direct {
        ($($v:ident: $t:ty),*) => {
            match dtype {
                $(DType::$v => super::zstd_direct::read_chunk::<$t>(a, &indices, n, compressor)
                    .map_err(bad)?
                    .map(|v| ArrayD::from_shape_vec(dims, v).map(ArrayData::$v))
                    .transpose()
                    .map_err(wrap)?,)*
                DType::Bool | DType::C64 | DType::C128 => None,
            }
        };
    }
    Ok(direct!(
        F64: f64, I64: i64, F32: f32, I32: i32, I16: i16, I8: i8, U64: u64, U32: u32,
        U16: u16, U8: u8
    ))
}

/// Refuses to replace anything at `path` but a Zarr array (or nothing).
pub fn check_replaceable(path: &Path) -> Result<(), IoError> {
    if !path.exists() {
        return Ok(());
    }
    let is_zarr = path.join("zarr.json").is_file() || path.join(".zarray").is_file();
    if path.is_dir() && is_zarr {
        Ok(())
    } else {
        Err(IoError::bad(
            shown(path),
            "exists and is not a Zarr array: refusing to replace it",
        ))
    }
}

/// Creates the array metadata at `path` (replacing a Zarr array there): `shape`, `dtype`,
/// a regular grid of `chunk`, compressed with `codec`.
pub fn create(
    path: &Path,
    shape: &[usize],
    dtype: DType,
    chunk: &[usize],
    codec: super::Codec,
) -> Result<(), IoError> {
    let bad = |d: String| IoError::bad(shown(path), d);
    match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(IoError::Denied {
                path: shown(path),
                detail: "is a symbolic link: refusing to write through it or replace it".into(),
            })
        }
        Ok(_) => {
            check_replaceable(path)?;
            std::fs::remove_dir_all(path).map_err(|e| bad(format!("cannot replace: {e}")))?;
        }
        Err(_) => {}
    }
    std::fs::create_dir(path).map_err(|e| bad(format!("cannot create: {e}")))?;
    let store = ConfinedStore::new(path);
    let dims: Vec<u64> = shape.iter().map(|d| *d as u64).collect();
    let grid: Vec<u64> = chunk.iter().map(|c| (*c).max(1) as u64).collect();
    let mut builder = match dtype {
        DType::F64 => ArrayBuilder::new(dims, grid, data_type::float64(), 0.0f64),
        DType::I64 => ArrayBuilder::new(dims, grid, data_type::int64(), 0i64),
        DType::F32 => ArrayBuilder::new(dims, grid, data_type::float32(), 0.0f32),
        DType::I32 => ArrayBuilder::new(dims, grid, data_type::int32(), 0i32),
        DType::I16 => ArrayBuilder::new(dims, grid, data_type::int16(), 0i16),
        DType::I8 => ArrayBuilder::new(dims, grid, data_type::int8(), 0i8),
        DType::U64 => ArrayBuilder::new(dims, grid, data_type::uint64(), 0u64),
        DType::U32 => ArrayBuilder::new(dims, grid, data_type::uint32(), 0u32),
        DType::U16 => ArrayBuilder::new(dims, grid, data_type::uint16(), 0u16),
        DType::U8 => ArrayBuilder::new(dims, grid, data_type::uint8(), 0u8),
        DType::Bool => ArrayBuilder::new(
            dims,
            grid,
            data_type::bool(),
            zarrs::array::FillValue::from(false),
        ),
        DType::C64 | DType::C128 => return Err(bad(NO_COMPLEX.to_string())),
    };
    let codecs: Vec<Arc<dyn zarrs::array::BytesToBytesCodecTraits>> = match codec {
        super::Codec::None => vec![],
        super::Codec::Zstd { level } => {
            vec![Arc::new(zarrs::array::codec::ZstdCodec::new(level, false))]
        }
        super::Codec::Gzip { level } => vec![Arc::new(
            zarrs::array::codec::GzipCodec::new(level)
                .map_err(|e| bad(format!("gzip level: {e}")))?,
        )],
    };
    builder.bytes_to_bytes_codecs(codecs);
    let array = builder
        .build(Arc::new(store), "/")
        .map_err(|e| bad(format!("cannot build the array: {e}")))?;
    array
        .store_metadata()
        .map_err(|e| bad(format!("cannot write metadata: {e}")))
}

/// Writes `data` as store chunk `index` of the array at `path`; returns its size in bytes
/// (uncompressed).
pub fn write_chunk(path: &Path, index: &[u64], data: &ArrayData) -> Result<u64, IoError> {
    let a = open(path)?;
    let have = dtype_of(path, &a)?;
    if have != data.dtype() {
        return Err(IoError::bad(
            shown(path),
            format!("chunk of {} for an array of {have}", data.dtype()),
        ));
    }
    // The region of store chunk `index` inside the array (an edge chunk is cut short).
    let region = a
        .chunk_grid()
        .subset(index)
        .ok()
        .flatten()
        .map(|s| s.to_ranges())
        .ok_or_else(|| IoError::bad(shown(path), format!("no store chunk {index:?}")))?;
    let want: Vec<usize> = region
        .iter()
        .zip(a.shape())
        .map(|(r, d)| (r.end.min(*d) - r.start) as usize)
        .collect();
    if want.as_slice() != data.shape() {
        return Err(IoError::bad(
            shown(path),
            format!(
                "chunk {index:?} is {want:?} in the store, the data is {:?}",
                data.shape()
            ),
        ));
    }
    let subset: Vec<Range<u64>> = region
        .iter()
        .zip(&want)
        .map(|(r, w)| r.start..r.start + *w as u64)
        .collect();
    let bad = |e: zarrs::array::ArrayError| {
        IoError::bad(shown(path), format!("writing chunk {index:?}: {e}"))
    };
    // A whole store chunk of bytes + zstd: compressed from the elements' own memory.
    let whole = region
        .iter()
        .zip(&want)
        .all(|(r, w)| r.end - r.start == *w as u64);
    if whole && super::zstd_direct::plain_zstd(&a) {
        let direct = match data {
            ArrayData::F64(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::I64(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::F32(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::I32(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::I16(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::I8(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::U64(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::U32(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::U16(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::U8(x) => x
                .as_slice()
                .map(|e| super::zstd_direct::write_chunk(&a, index, e)),
            ArrayData::Bool(_) | ArrayData::C64(_) | ArrayData::C128(_) => None,
        };
        if let Some(done) = direct {
            done.map_err(|e| IoError::bad(shown(path), format!("writing chunk {index:?}: {e}")))?;
            return Ok(data.nbytes() as u64);
        }
    }
    let subset = &subset.as_slice();
    // The chunk's own memory when it is C-contiguous, else a C-order copy.
    macro_rules! store {
        ($x:expr, $t:ty) => {
            match $x.as_slice() {
                Some(elements) => a.store_array_subset(subset, elements),
                None => a.store_array_subset(subset, $x.iter().copied().collect::<Vec<$t>>()),
            }
        };
    }
    match data {
        ArrayData::F64(x) => store!(x, f64),
        ArrayData::I64(x) => store!(x, i64),
        ArrayData::F32(x) => store!(x, f32),
        ArrayData::I32(x) => store!(x, i32),
        ArrayData::I16(x) => store!(x, i16),
        ArrayData::I8(x) => store!(x, i8),
        ArrayData::U64(x) => store!(x, u64),
        ArrayData::U32(x) => store!(x, u32),
        ArrayData::U16(x) => store!(x, u16),
        ArrayData::U8(x) => store!(x, u8),
        ArrayData::Bool(x) => store!(x, bool),
        ArrayData::C64(_) | ArrayData::C128(_) => {
            return Err(IoError::bad(shown(path), NO_COMPLEX))
        }
    }
    .map_err(bad)?;
    Ok(data.nbytes() as u64)
}
