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
//! never re-exported). Its layers, each using only those below (ARCHITECTURE.md draws them;
//! `tests/layering.rs` checks them):
//! - [`node`] starts a role, and for a supervisor the [`web`] API over its handle; [`api`]
//!   holds the clients (native and HTTP);
//! - the roles, [`supervisor`] and [`worker`], which never import each other nor the web;
//! - what both roles use: [`protocol`] (messages, codec, handshake), [`net`] (accepting
//!   connections), [`data_plane`] (fetching chunks), [`footprint`] (memory projection),
//!   [`guard`] (actor restarts), [`metrics`], [`shutdown`], [`config`], [`telemetry`],
//!   [`result_stream`] (results streamed band by band), [`depth_queue`], [`allocator`].

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
