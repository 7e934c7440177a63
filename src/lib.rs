//! ares: a distributed tensor-computing runtime.
//!
//! ```text
//!  tensor API / expression language
//!        │  TileableGraph (one node per operation)
//!        ▼
//!  prepare::optimize_tileable ─► tile ─► optimize_chunk ─► fuse ─► color ─► assign
//!        │  SubtaskGraph (groups of chunks, initial ones placed on workers)
//!        ▼
//!  executor (local: slot threads in process)  ── kernels compute chunks with ndarray
//!        or, distributed:
//!  supervisor: TaskManager → TaskProcessor per task → Scheduler → Link per connection
//!        │  batched frames of mixed messages (protocol)
//!  workers: compute pool, chunk storage, peer-to-peer data plane
//! ```
//!
//! Modules: [`ids`] (newtype ids, MEP-0002 subtask ids), [`array`](mod@array) (dtypes and chunk data),
//! [`ops`] (the op registry), [`graph`] (tileable, chunk, subtask arenas), [`tensor`] (the
//! numpy-like API), [`prepare`] (the pure preparation passes), [`kernels`], [`executor`],
//! [`expr`] (the expression language of the CLI), [`explain`], [`config`], [`protocol`] (messages
//! and the codec), [`supervisor`], [`worker`], [`api`] (the `TaskApi` client), [`node`] (node
//! startup and the embedded cluster).

pub mod api;
pub mod array;
pub mod bench;
pub mod bench_shuffle;
pub mod bench_tps;
pub mod cli;
pub mod config;
pub mod depth_queue;
pub mod error;
pub mod executor;
pub mod explain;
pub mod expr;
pub mod graph;
pub mod ids;
pub mod io;
pub mod kernels;
pub mod net;
pub mod node;
pub mod ops;
pub mod prepare;
pub mod protocol;
pub mod runner;
pub mod summary;
pub mod supervisor;
pub mod telemetry;
pub mod tensor;
pub mod web;
pub mod worker;

pub use error::{AresError, Result};
