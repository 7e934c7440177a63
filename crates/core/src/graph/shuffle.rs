//! The shuffle in the chunk graph (MEP-0002): N mapper chunks → one `ShuffleProxy` → M
//! reducer chunks, with N + M edges, never N × M.
//!
//! Each mapper keeps one piece per reducer. A piece is addressed like any chunk, by a
//! [`ChunkIdx`] of its task, so the worker's store and the data plane's batched fetch serve
//! pieces unchanged: piece `(mapper ordinal i, reducer r)` of a shuffle whose pieces start at
//! `base` is `PIECE_KEY_START + base + i·M + r`. Piece keys live above every real chunk index
//! (a graph has far fewer than 2^31 chunks), and tiling refuses a graph whose shuffles need
//! more than 2^31 pieces in total. The mapper's own chunk holds the length of each of its
//! pieces (int64, one per reducer), so the supervisor tracks one location per mapper.
//!
//! The proxy is virtual: the supervisor completes it as soon as every mapper is done, a
//! reducer's inputs are its pieces (one batched fetch per worker holding mappers), and a
//! mapper's pieces are released once every reducer has finished (the proxy's reference count
//! is the number of reducers, as Mars' `n_reducers`).

use crate::graph::ChunkGraph;
use crate::ids::ChunkIdx;
use crate::ops::{Op, OpArgs};

/// The first piece key.
pub const PIECE_KEY_START: u32 = 1 << 31;
/// Most pieces all shuffles of one graph may have together.
pub const MAX_PIECES: u64 = (1 << 31) - 1;

/// The key of the piece for reducer `r` of the mapper at `ordinal`.
#[inline]
pub fn piece_key(base: u32, ordinal: u32, reducers: u32, r: u32) -> ChunkIdx {
    ChunkIdx(PIECE_KEY_START + base + ordinal * reducers + r)
}

/// Whether a key names a mapper's piece rather than a chunk.
#[inline]
pub fn is_piece(c: ChunkIdx) -> bool {
    c.0 >= PIECE_KEY_START
}

/// Whether chunk `c` is a shuffle proxy.
pub fn is_proxy(graph: &ChunkGraph, c: ChunkIdx) -> bool {
    graph.node(c).op == Op::ShuffleProxy
}

/// The piece keys mapper `c` writes, in reducer order (empty for any other chunk).
pub fn mapper_pieces(graph: &ChunkGraph, c: ChunkIdx) -> impl Iterator<Item = ChunkIdx> {
    let (base, ordinal, reducers) = match graph.args_of(c) {
        OpArgs::ShuffleMap {
            base,
            ordinal,
            reducers,
            ..
        } => (*base, *ordinal, *reducers),
        _ => (0, 0, 0),
    };
    (0..reducers).map(move |r| piece_key(base, ordinal, reducers, r))
}

/// The pieces reducer `r` of `proxy` reads: `(piece key, mapper chunk)` in mapper order.
pub fn reducer_pieces(
    graph: &ChunkGraph,
    proxy: ChunkIdx,
    r: u32,
) -> impl Iterator<Item = (ChunkIdx, ChunkIdx)> + '_ {
    let (base, reducers) = match graph.args_of(proxy) {
        OpArgs::ShuffleProxy { base, reducers } => (*base, *reducers),
        _ => (0, 0),
    };
    let valid = r < reducers;
    graph
        .inputs(proxy)
        .iter()
        .enumerate()
        .filter(move |_| valid)
        .map(move |(i, m)| (piece_key(base, i as u32, reducers, r), *m))
}

/// The reducer index of chunk `c` if it is a reducer.
pub fn reducer_index(graph: &ChunkGraph, c: ChunkIdx) -> Option<u32> {
    match graph.args_of(c) {
        OpArgs::ShuffleReduce { index, .. } => Some(*index),
        _ => None,
    }
}

/// The reducer among `members` reading `proxy`, and its index.
pub fn reducer_of(graph: &ChunkGraph, members: &[u32], proxy: ChunkIdx) -> Option<u32> {
    members
        .iter()
        .map(|m| ChunkIdx(*m))
        .filter(|m| graph.inputs(*m).contains(&proxy))
        .find_map(|m| reducer_index(graph, m))
}

/// Every proxy chunk of the graph.
pub fn proxies(graph: &ChunkGraph) -> Vec<ChunkIdx> {
    (0..graph.len() as u32)
        .map(ChunkIdx)
        .filter(|c| is_proxy(graph, *c))
        .collect()
}

/// Whether a subtask with these members is a proxy alone (completed by the supervisor, never
/// run).
pub fn is_proxy_subtask(graph: &ChunkGraph, members: &[u32]) -> bool {
    !members.is_empty() && members.iter().all(|m| is_proxy(graph, ChunkIdx(*m)))
}
