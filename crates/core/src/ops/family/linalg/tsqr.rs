//! Tiling of `qr` by TSQR (Demmel, Grigori, Hoemmen, Langou: communication-avoiding QR), as
//! dask's `tsqr`: no chunk ever holds more than one block of rows.
//!
//! The input, m × n with m ≥ n, is cut along rows only (its columns rechunked to one chunk,
//! its row chunks merged where one has fewer than n rows). Each block of rows is factored on
//! its own (`qr_leaf`: R_i, and Q_i in Householder form); the R factors are stacked and
//! factored again in a tree of fan-in `combine_size` (`qr_stack`, like a reduction's
//! combines), whose root holds the final R. The Q then comes back down the tree: a node's
//! factor is its slot of its parent's Q
//! times the parent's factor (`qr_down`), and a block's rows of the final Q are its own Q
//! times its factor (`qr_apply`). The chunks are packed Q-over-R (`tsqr_kernels`), and so
//! is the result: the tensor `qr` is `(m + k) × n`, Q's row blocks then R, which the tensor
//! API slices into the two results (whole chunks, so no copy).
//!
//! A matrix of one block (a short-and-fat one, m < n, among them) is one kernel on one chunk
//! (`qr_block`, its explicit Q over its R).

use super::SINGLE_CHUNK_BUDGET;
use crate::array::{DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::ops::{DimIndex, Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use smallvec::smallvec;

/// The row cuts of TSQR: the input's, each chunk of fewer than `n` rows merged into the
/// one before it (the first into the next), so every block's R is n × n.
pub(super) fn row_blocks(rows: &[usize], n: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(rows.len());
    let mut pending = 0;
    for r in rows {
        pending += r;
        if pending >= n.max(1) {
            out.push(pending);
            pending = 0;
        }
    }
    match out.last_mut() {
        Some(last) => *last += pending,
        None => out.push(pending),
    }
    out
}

/// Refuses a block (`rows` × `n` float64) above the single-chunk budget, naming its size.
pub(super) fn check_block(what: &'static str, rows: usize, n: usize) -> Result<()> {
    let bytes = rows as u64 * n as u64 * 8;
    if bytes > SINGLE_CHUNK_BUDGET {
        return Err(AresError::arg(
            what,
            format!(
                "a block of {rows} × {n} float64 is {} MiB, over the {} MiB one chunk may \
                 hold for a factorization: use smaller row chunks (TSQR needs whole rows of \
                 {n} columns, and at least {n} rows per chunk)",
                bytes >> 20,
                SINGLE_CHUNK_BUDGET >> 20
            ),
        ));
    }
    Ok(())
}

/// A node of the tree: its packed chunk and its (parent, slot).
struct Node {
    chunk: ChunkIdx,
    parent: Option<(usize, u32)>,
}

impl Tiler {
    pub(crate) fn tile_qr(&mut self, x: &Tiled, in_shape: &[usize]) -> Result<Tiled> {
        let (m, n) = (in_shape[0], in_shape[1]);
        let k = m.min(n);
        let rows = if m < n {
            vec![m]
        } else {
            row_blocks(&x.splits[0], n)
        };
        for r in &rows {
            check_block("linalg.qr", *r, n)?;
        }
        let x = self.rechunk_to(x, &[rows.clone(), vec![n]], DType::F64);
        let none = self.graph.intern_args(OpArgs::None);
        let leaf_key = self.key();
        if let [only] = rows[..] {
            let shape: Shape = smallvec![only + k, n];
            let chunk = self.push(leaf_key, Op::QrBlock, none, shape, DType::F64, &x.chunks);
            return Ok(Tiled {
                splits: vec![vec![m + k], vec![n]],
                chunks: vec![chunk],
            });
        }
        let leaves: Vec<ChunkIdx> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let shape: Shape = smallvec![r + 2 * n, n];
                self.push(
                    leaf_key,
                    Op::QrLeaf,
                    none,
                    shape,
                    DType::F64,
                    &[x.chunks[i]],
                )
            })
            .collect();
        let tree = self.tsqr_tree(&leaves, n);
        let apply_key = self.key();
        let mut chunks: Vec<ChunkIdx> = Vec::with_capacity(leaves.len() + 1);
        for (i, (leaf, (above, slot))) in leaves.iter().zip(&tree.leaves).enumerate() {
            let mut ins = vec![*leaf];
            ins.extend(above);
            let args = self.graph.intern_args(OpArgs::Tsqr { slot: *slot });
            let shape: Shape = smallvec![rows[i], n];
            chunks.push(self.push(apply_key, Op::QrApply, args, shape, DType::F64, &ins));
        }
        chunks.push(self.last_rows(tree.root, n, n));
        let mut splits = rows;
        splits.push(k);
        Ok(Tiled {
            splits: vec![splits, vec![n]],
            chunks,
        })
    }

    /// The tree of a TSQR over its leaves' packed chunks (each with its n × n R in its last
    /// n rows): the R factors stacked and factored `combine_size` at a time on the way up,
    /// whose root holds the final R; on the way down each inner node's factor (its slot of
    /// its parent's Q times the parent's factor; the root has none).
    pub(super) fn tsqr_tree(&mut self, leaves: &[ChunkIdx], n: usize) -> Tree {
        let none = self.graph.intern_args(OpArgs::None);
        let mut nodes: Vec<Node> = leaves
            .iter()
            .map(|c| Node {
                chunk: *c,
                parent: None,
            })
            .collect();
        let mut current: Vec<usize> = (0..nodes.len()).collect();
        while current.len() > 1 {
            let key = self.key();
            let mut next = Vec::new();
            for group in current.chunks(self.combine_size.max(2)) {
                if let [only] = group {
                    next.push(*only);
                    continue;
                }
                let ins: Vec<ChunkIdx> = group.iter().map(|g| nodes[*g].chunk).collect();
                let shape: Shape = smallvec![group.len() * n + n, n];
                let chunk = self.push(key, Op::QrStack, none, shape, DType::F64, &ins);
                let id = nodes.len();
                nodes.push(Node {
                    chunk,
                    parent: None,
                });
                for (slot, g) in group.iter().enumerate() {
                    nodes[*g].parent = Some((id, slot as u32));
                }
                next.push(id);
            }
            current = next;
        }
        let down_key = self.key();
        let mut factor: Vec<Option<ChunkIdx>> = vec![None; nodes.len()];
        for id in (leaves.len()..nodes.len()).rev() {
            let Some((parent, slot)) = nodes[id].parent else {
                continue;
            };
            let mut ins = vec![nodes[parent].chunk];
            ins.extend(factor[parent]);
            let args = self.graph.intern_args(OpArgs::Tsqr { slot });
            let shape: Shape = smallvec![n, n];
            factor[id] = Some(self.push(down_key, Op::QrDown, args, shape, DType::F64, &ins));
        }
        let leaves = (0..leaves.len())
            .map(|i| {
                let (parent, slot) = nodes[i].parent.expect("a tree of 2+ leaves");
                let mut above = vec![nodes[parent].chunk];
                above.extend(factor[parent]);
                (above, slot)
            })
            .collect();
        Tree {
            root: nodes[current[0]].chunk,
            leaves,
        }
    }

    /// The last `rows` rows of a packed chunk of `n` columns (a root's R, as a slice).
    pub(super) fn last_rows(&mut self, chunk: ChunkIdx, rows: usize, n: usize) -> ChunkIdx {
        let total = self.shape_of(chunk)[0];
        self.rows_of(chunk, total - rows, rows, n)
    }

    /// Rows `start..start + len` of a chunk of `n` columns, as a slice.
    pub(super) fn rows_of(
        &mut self,
        chunk: ChunkIdx,
        start: usize,
        len: usize,
        n: usize,
    ) -> ChunkIdx {
        let dims = smallvec![
            DimIndex::Range {
                start,
                step: 1,
                len
            },
            DimIndex::Range {
                start: 0,
                step: 1,
                len: n
            },
        ];
        let args = self.graph.intern_args(OpArgs::Slice(Box::new(dims)));
        let key = self.key();
        let shape: Shape = smallvec![len, n];
        self.push(key, Op::Slice, args, shape, DType::F64, &[chunk])
    }
}

/// A TSQR tree: its root (the final R in its last rows), and for each leaf the chunks that
/// carry it to the final Q besides itself (its parent, and the parent's factor below the
/// root) with its slot among the parent's children.
pub(super) struct Tree {
    pub root: ChunkIdx,
    pub leaves: Vec<(Vec<ChunkIdx>, u32)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_row_chunks_merge_into_their_neighbours() {
        assert_eq!(row_blocks(&[10, 10, 10], 3), vec![10, 10, 10]);
        assert_eq!(row_blocks(&[10, 10, 2], 3), vec![10, 12]);
        assert_eq!(row_blocks(&[2, 2, 2, 10], 5), vec![6, 10]);
        assert_eq!(row_blocks(&[2], 5), vec![2]);
        assert_eq!(row_blocks(&[0], 0), vec![0]);
        assert!(check_block("linalg.qr", 100_000, 100).is_ok());
        let e = check_block("linalg.qr", 10_000_000, 100)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("10000000 × 100") && e.contains("7629 MiB"),
            "{e}"
        );
    }
}
