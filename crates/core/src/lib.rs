//! ares-core: the pure part of ares, with no sockets, actors or threads of its own.
//!
//! ```text
//!  tensor API / expression language
//!        │  TileableGraph (one node per operation)
//!        ▼
//!  prepare::optimize_tileable ─► tile ─► optimize_chunk ─► fuse ─► color ─► assign
//!        │  SubtaskGraph (groups of chunks, initial ones placed on workers)
//!        ▼
//!  kernels compute chunks with ndarray; executor runs a subtask graph on local slot threads
//! ```
//!
//! Layers, each using only those above it: [`ids`] (newtype ids, MEP-0002 subtask ids),
//! [`array`](mod@array) (dtypes and chunk data), [`error`], [`ops`] (the op registry, shape and
//! dtype inference), [`graph`] (tileable, chunk, subtask arenas), [`huge_pages`] (the
//! advice under large buffers), [`io`] (.npy and Zarr
//! sources and sinks), [`tensor`] (the numpy-like API), [`prepare`] (the pure preparation
//! passes), [`kernels`], [`executor`], [`expr`] (the expression language of the CLI),
//! [`explain`], [`summary`] (results as text and JSON), [`config`]. The runtime (the `ares`
//! crate) adds the protocol, the supervisor and worker actors, the web API and the client.

pub mod array;
pub mod config;
pub mod error;
pub mod executor;
pub mod explain;
pub mod expr;
pub mod float_text;
pub mod graph;
pub mod huge_pages;
pub mod ids;
pub mod io;
pub mod kernels;
pub mod ops;
pub mod prepare;
pub mod summary;
pub mod tensor;

pub use error::{AresError, Result};
