//! ares: a distributed tensor-computing runtime.
//!
//! ```text
//!  ares-core: tensor API ─► prepare (tile, fuse, assign) ─► SubtaskGraph ─► kernels
//!        │
//!  supervisor: TaskManager → TaskProcessor per task → Scheduler → Link per connection
//!        │  batched frames of mixed messages (protocol)
//!  workers: compute pool, chunk storage, peer-to-peer data plane
//! ```
//!
//! This crate is the runtime over the pure core (`ares_core`, named by that path everywhere,
//! never re-exported): [`protocol`] (messages and the codec),
//! [`net`] (framed connections), [`supervisor`], [`worker`], [`api`] (the `TaskApi` client,
//! native and HTTP), [`web`] (the HTTP API), [`node`] (node startup and the embedded cluster),
//! [`result_stream`] (results streamed band by band), [`telemetry`].

pub mod allocator;
pub mod api;
pub mod config;
pub mod data_plane;
pub mod depth_queue;
pub mod footprint;
pub mod guard;
pub mod metrics;
pub mod net;
pub mod node;
pub mod protocol;
pub mod result_stream;
pub mod shutdown;
pub mod supervisor;
pub mod telemetry;
pub mod web;
pub mod worker;
