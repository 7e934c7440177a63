//! Data in and out: `.npy` files and Zarr arrays as sources and sinks of the tensor graph.
//!
//! A source (`from_npy`, `from_zarr`) is lazy: the expression reads only the file's metadata
//! (shape, dtype, chunk grid) to build the tensor, tiling reads it again on the supervisor to
//! check it still matches, and each worker reads only the region of its own chunk (`pread` of
//! C-order runs for `.npy`, the overlapping store chunks for Zarr). A sink (`to_npy`,
//! `to_zarr`) is written in place by the workers that hold the chunks: the supervisor creates
//! the file (the `.npy` header and its full size, or the Zarr array metadata) when it tiles
//! the sink, before any writer runs; each writer re-reads that header and writes only its
//! region. Nothing goes through the supervisor.
//!
//! Every path goes through [`roots`]: only files under the configured `data.roots` are read
//! or written, on the supervisor and again on the worker. Every file is then opened through
//! [`confined`] (no link on the way, regular files only, checked on the descriptor), Zarr
//! store objects too ([`zarr_store`]), and `.npy` headers are parsed by [`npy_header`]. The one exception is
//! [`Format::Spool`], the supervisor's own upload spool file (see [`roots::resolve_spool`]):
//! only the supervisor builds it (`ares::supervisor::upload`), its graph validation refuses
//! it in every graph a client submits, and a worker gets graphs from its authenticated
//! supervisor alone, so no client can name the path it reads.

pub mod confined;
pub mod inflation;
pub mod npy;
pub mod npy_header;
pub mod region;
pub mod roots;
pub mod zarr;
pub mod zarr_store;
mod zstd_direct;

use crate::array::{fmt_shape, DType, Shape};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A failure reading or writing data; every variant names the path.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IoError {
    /// The path is outside every data root (or no root is configured).
    #[error("{path}: {detail}")]
    Denied { path: String, detail: String },
    /// The file or directory does not exist or cannot be opened.
    #[error("{path}: {detail}")]
    Missing { path: String, detail: String },
    /// The file is not what its metadata says (truncated, corrupt, unsupported).
    #[error("{path}: {detail}")]
    Bad { path: String, detail: String },
}

impl IoError {
    pub fn bad(path: impl std::fmt::Display, detail: impl Into<String>) -> Self {
        IoError::Bad {
            path: path.to_string(),
            detail: detail.into(),
        }
    }
}

impl From<IoError> for crate::AresError {
    fn from(e: IoError) -> Self {
        crate::AresError::arg("io", e.to_string())
    }
}

/// Compression of a Zarr array written by `to_zarr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Codec {
    None,
    Zstd { level: i32 },
    Gzip { level: u32 },
}

/// Why a codec name does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecParseError {
    #[error("codec level {0:?} is not an integer")]
    Level(String),
    #[error("unsupported codec {0:?} (zstd, zstd:LEVEL, gzip, gzip:LEVEL, none)")]
    Unsupported(String),
}

impl Codec {
    /// `zstd`, `zstd:3`, `gzip`, `gzip:6`, `none`.
    pub fn parse(s: &str) -> Result<Codec, CodecParseError> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (s, None),
        };
        let level_of = |default: i64| -> Result<i64, CodecParseError> {
            level.map_or(Ok(default), |l| {
                l.parse().map_err(|_| CodecParseError::Level(l.into()))
            })
        };
        match name {
            "none" => Ok(Codec::None),
            "zstd" => Ok(Codec::Zstd {
                level: level_of(1)?.clamp(-7, 22) as i32,
            }),
            "gzip" => Ok(Codec::Gzip {
                level: level_of(6)?.clamp(0, 9) as u32,
            }),
            other => Err(CodecParseError::Unsupported(other.into())),
        }
    }
}

/// The file format of a source or sink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Npy,
    /// A Zarr array (v3; v2 is read too); `codec` is used when writing.
    Zarr {
        codec: Codec,
    },
    /// A `.npy` upload spooled by the supervisor (`ares::supervisor::upload`), read outside
    /// the data roots: internal to the supervisor, refused in any graph a client submits, and
    /// never written.
    Spool,
}

impl Format {
    /// Whether only the supervisor may put this format in a graph ([`Format::Spool`]).
    pub fn is_internal(self) -> bool {
        matches!(self, Format::Spool)
    }
}

/// A file or store as the graph refers to it: its canonical path (inside a data root when it
/// was resolved) and the shape and dtype its metadata had when the expression was built.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataRef {
    pub format: Format,
    pub path: String,
    pub shape: Shape,
    pub dtype: DType,
}

impl DataRef {
    /// Checks that metadata read now still says what the graph was built with.
    pub fn check(&self, shape: &[usize], dtype: DType) -> Result<(), IoError> {
        if shape != self.shape.as_slice() || dtype != self.dtype {
            return Err(IoError::bad(
                &self.path,
                format!(
                    "now holds {} {dtype}, but the expression was built for {} {}",
                    fmt_shape(shape),
                    fmt_shape(&self.shape),
                    self.dtype
                ),
            ));
        }
        Ok(())
    }
}

/// Elements per chunk that `from_npy` aims at by default (8 MiB of float64).
const NPY_CHUNK_ELEMENTS: usize = 1 << 20;

/// What a source's metadata says: shape, dtype and its own chunk shape (the store's chunk
/// grid for Zarr; whole rows of about 2^20 elements for `.npy`, each one contiguous run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceMeta {
    pub shape: Shape,
    pub dtype: DType,
    pub chunk: Shape,
}

fn npy_chunk(shape: &[usize]) -> Shape {
    if shape.is_empty() {
        return Shape::new();
    }
    let row: usize = shape[1..].iter().product::<usize>().max(1);
    if row <= NPY_CHUNK_ELEMENTS {
        let mut c: Shape = shape.into();
        c[0] = (NPY_CHUNK_ELEMENTS / row).clamp(1, shape[0].max(1));
        c
    } else {
        // Rows larger than the target: split the trailing dimensions too.
        let per = (NPY_CHUNK_ELEMENTS as f64)
            .powf(1.0 / shape.len() as f64)
            .max(1.0) as usize;
        shape.iter().map(|d| per.min((*d).max(1))).collect()
    }
}

/// Resolves `path` inside the data roots and reads its metadata.
pub fn source_meta(
    format: Format,
    path: &str,
) -> Result<(std::path::PathBuf, SourceMeta), IoError> {
    let p = resolve_source(format, path)?;
    let meta = match format {
        Format::Npy | Format::Spool => {
            let m = npy::read_meta(&p)?;
            SourceMeta {
                chunk: npy_chunk(&m.shape),
                shape: m.shape,
                dtype: m.dtype,
            }
        }
        Format::Zarr { .. } => {
            let m = zarr::read_meta(&p)?;
            SourceMeta {
                shape: m.shape,
                dtype: m.dtype,
                chunk: m.chunk,
            }
        }
    };
    Ok((p, meta))
}

fn check_region(data: &DataRef, offset: &[usize], shape: &[usize]) -> Result<(), IoError> {
    let inside = offset.len() == data.shape.len()
        && shape.len() == data.shape.len()
        && (0..shape.len()).all(|d| offset[d].saturating_add(shape[d]) <= data.shape[d]);
    if inside {
        Ok(())
    } else {
        Err(IoError::bad(
            &data.path,
            format!(
                "region at {} of shape {} is outside the array of shape {}",
                fmt_shape(offset),
                fmt_shape(shape),
                fmt_shape(&data.shape)
            ),
        ))
    }
}

/// Where a source's file is: inside the data roots, or for [`Format::Spool`] the spool file.
fn resolve_source(format: Format, path: &str) -> Result<std::path::PathBuf, IoError> {
    match format {
        Format::Spool => roots::resolve_spool(path),
        Format::Npy | Format::Zarr { .. } => roots::global().resolve_read(path),
    }
}

/// A sink's format must be one that is written.
fn check_writable(data: &DataRef) -> Result<(), IoError> {
    if data.format == Format::Spool {
        return Err(IoError::Denied {
            path: data.path.clone(),
            detail: "an upload spool file is never written".into(),
        });
    }
    Ok(())
}

/// Worker side of a source: checks the path and metadata again, reads one region.
pub fn read_chunk(
    data: &DataRef,
    offset: &[usize],
    shape: &[usize],
) -> Result<crate::array::ArrayData, IoError> {
    check_region(data, offset, shape)?;
    let p = resolve_source(data.format, &data.path)?;
    if shape.contains(&0) {
        let dims = ndarray::IxDyn(shape);
        let empty = crate::array::ArrayData::Bool(ndarray::ArrayD::from_elem(dims, false));
        return Ok(empty.cast(data.dtype));
    }
    match data.format {
        Format::Npy | Format::Spool => {
            let meta = npy::read_meta(&p)?;
            data.check(&meta.shape, meta.dtype)?;
            npy::read_region(&p, &meta, offset, shape)
        }
        Format::Zarr { .. } => {
            let meta = zarr::read_meta(&p)?;
            data.check(&meta.shape, meta.dtype)?;
            zarr::read_region(&p, data.dtype, offset, shape)
        }
    }
}

/// Resolves a path to be written inside the data roots (canonical, as a string).
pub fn sink_path(path: &str) -> Result<String, IoError> {
    let p = roots::global().resolve_write(path)?;
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| IoError::Denied {
            path: path.into(),
            detail: "not valid UTF-8".into(),
        })
}

static PLAN_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

thread_local! {
    static PLAN_ONLY_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// In a process that only plans (`ares explain`), tiling a sink checks its path but creates
/// no file.
pub fn set_plan_only(on: bool) {
    PLAN_ONLY.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Runs `f` (a preparation on this thread) as [`set_plan_only`] would, for this thread
/// alone: a supervisor explaining a graph while it runs tasks creates no sink file for it.
pub fn plan_only<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            PLAN_ONLY_HERE.with(|p| p.set(self.0));
        }
    }
    let _reset = Reset(PLAN_ONLY_HERE.with(|p| p.replace(true)));
    f()
}

fn planning_only() -> bool {
    PLAN_ONLY.load(std::sync::atomic::Ordering::Relaxed) || PLAN_ONLY_HERE.with(|p| p.get())
}

/// The hidden name a sink is written under until its task succeeds: `.NAME.ares-partial`
/// beside `path`. A failed or cancelled task leaves only this name behind (replaced by the
/// next write to the same path), never a file at `path` that looks complete.
pub fn partial_path(path: &str) -> String {
    let p = std::path::Path::new(path);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let partial = format!(".{name}.ares-partial");
    match p.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(partial).display().to_string(),
        _ => partial,
    }
}

/// Supervisor side of a sink, before any writer runs: checks that `data.path` may be
/// written (an existing Zarr array is replaced, for Zarr anything else is refused), then
/// creates the file under its [`partial_path`] (the `.npy` header and file size, or the
/// Zarr array metadata with store chunks of `chunk`). Returns the reference the writers use.
pub fn create_sink(data: &DataRef, chunk: &[usize]) -> Result<DataRef, IoError> {
    check_writable(data)?;
    let target = roots::global().resolve_write(&data.path)?;
    let partial = DataRef {
        path: partial_path(&data.path),
        ..data.clone()
    };
    let p = roots::global().resolve_write(&partial.path)?;
    match data.format {
        Format::Npy if target.is_dir() => {
            return Err(IoError::bad(
                &data.path,
                "is a directory: refusing to replace it with a .npy file",
            ))
        }
        Format::Npy | Format::Spool => {}
        Format::Zarr { .. } => zarr::check_replaceable(&target)?,
    }
    if planning_only() {
        return Ok(partial);
    }
    match data.format {
        Format::Npy | Format::Spool => npy::create(&p, &data.shape, data.dtype).map(|_| ()),
        Format::Zarr { codec } => zarr::create(&p, &data.shape, data.dtype, chunk, codec),
    }?;
    Ok(partial)
}

/// Worker side of a sink once every chunk is written: moves the finished file or array from
/// `partial` to `data.path`, replacing what was there (a Zarr array is first moved aside,
/// then removed). Running it again after it succeeded (a retried subtask) finds `partial`
/// gone and `data.path` present, and does nothing.
pub fn commit_sink(data: &DataRef, partial: &str) -> Result<(), IoError> {
    check_writable(data)?;
    let target = roots::global().resolve_write(&data.path)?;
    let from = roots::global().resolve_write(partial)?;
    let bad = |what: &str, e: std::io::Error| IoError::bad(&data.path, format!("{what}: {e}"));
    if !from.exists() {
        if target.exists() {
            return Ok(());
        }
        return Err(IoError::bad(
            &data.path,
            format!("the written data ({partial}) is gone"),
        ));
    }
    if matches!(data.format, Format::Zarr { .. }) && target.exists() {
        zarr::check_replaceable(&target)?;
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
        let old = target.with_file_name(format!(".{}.ares-old", name.unwrap_or_default()));
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| bad("cannot remove a stale copy", e))?;
        }
        std::fs::rename(&target, &old).map_err(|e| bad("cannot move the old array aside", e))?;
        std::fs::rename(&from, &target).map_err(|e| bad("cannot move the array in place", e))?;
        return std::fs::remove_dir_all(&old).map_err(|e| bad("cannot remove the old array", e));
    }
    std::fs::rename(&from, &target).map_err(|e| bad("cannot move the file in place", e))
}

/// Worker side of a sink: writes one chunk in place; returns the bytes written.
pub fn write_chunk(
    data: &DataRef,
    offset: &[usize],
    index: &[usize],
    chunk: &crate::array::ArrayData,
) -> Result<u64, IoError> {
    check_region(data, offset, chunk.shape())?;
    check_writable(data)?;
    let p = roots::global().resolve_write(&data.path)?;
    if chunk.is_empty() {
        return Ok(0);
    }
    match data.format {
        Format::Npy | Format::Spool => {
            let meta = npy::read_meta(&p)?;
            data.check(&meta.shape, meta.dtype)?;
            npy::write_region(&p, &meta, offset, chunk)
        }
        Format::Zarr { .. } => {
            let index: Vec<u64> = index.iter().map(|i| *i as u64).collect();
            zarr::write_chunk(&p, &index, chunk)
        }
    }
}
