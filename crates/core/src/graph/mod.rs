//! The three graph levels of Mars, as arenas.
//!
//! `TileableGraph` (user operations, O(#ops)) → `ChunkGraph` (tiled, per stage) →
//! `SubtaskGraph` (groups of chunks). Nodes live in `Vec`s, edges are index lists, ids are
//! indices; nodes are stored in topological order (every input has a smaller index), an
//! invariant checked when a graph comes from outside.

pub mod chunk;
pub mod csr;
pub mod delta;
pub mod packed;
pub mod shuffle;
pub mod subtask;
pub mod tileable;

pub use chunk::{ChunkGraph, ChunkNode, ResultTensor};
pub use csr::Csr;
pub use delta::{DeltaBase, GraphDelta, WorkerDelta};
pub use subtask::{Subtask, SubtaskGraph, WorkerGraph, WorkerView};
pub use tileable::{TileableGraph, TileableNode};
