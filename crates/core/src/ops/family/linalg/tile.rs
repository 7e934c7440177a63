//! Tiling of `matmul`, stacks of matrices included.
//!
//! `(..., n, k) @ (..., k, m)`: the shared axis `k` is cut the same way on both sides, each
//! batch dimension the result shares with an operand is cut the same way on every operand
//! that has it at full length (an operand broadcast along it, length 1 or missing, reuses
//! its one chunk there). Each output block multiplies the block pairs along `k` (a chunk-level
//! `matmul` of two stacks of blocks) and sums the partial products in a tree of `tree_add`,
//! like a reduction's combines. So a stack of 10^5 small matrices is a handful of chunks,
//! not 10^5 graph nodes.

use super::shape::batch_dims;
use crate::array::{DType, Shape};
use crate::ids::ChunkIdx;
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{unify, Odometer, Tiled, Tiler};

impl Tiler {
    pub(crate) fn tile_matmul(
        &mut self,
        dtype: DType,
        out_shape: &[usize],
        (a, a_shape): (&Tiled, &[usize]),
        (b, b_shape): (&Tiled, &[usize]),
    ) -> Tiled {
        let batch_shape = &out_shape[..out_shape.len() - 2];
        let (a_batch, b_batch) = (
            batch_dims(a_shape, batch_shape),
            batch_dims(b_shape, batch_shape),
        );
        let (na, nb) = (a_shape.len(), b_shape.len());
        // The cut of each batch dimension: every operand that has it at full length agrees.
        let batch: Vec<Vec<usize>> = (0..batch_shape.len())
            .map(|d| {
                let own: Vec<&[usize]> = [(a, a_batch[d]), (b, b_batch[d])]
                    .iter()
                    .filter_map(|(t, at)| at.map(|at| t.splits[at].as_slice()))
                    .collect();
                if own.is_empty() {
                    vec![batch_shape[d]]
                } else {
                    unify(&own)
                }
            })
            .collect();
        let k = unify(&[&a.splits[na - 1], &b.splits[nb - 2]]);
        // Each operand's target: the shared batch cuts where it has the dimension (its own
        // single chunk where it is broadcast), its own rows or columns, the shared `k`.
        let target = |t: &Tiled, dims: &[Option<usize>], shape: &[usize], core: [Vec<usize>; 2]| {
            let mut out: Vec<Vec<usize>> = vec![Vec::new(); shape.len()];
            let skip = batch.len() - (shape.len() - 2);
            for (d, cut) in out.iter_mut().take(shape.len() - 2).enumerate() {
                *cut = match dims[d + skip] {
                    Some(_) => batch[d + skip].clone(),
                    None => t.splits[d].clone(),
                };
            }
            let [x, y] = core;
            out[shape.len() - 2] = x;
            out[shape.len() - 1] = y;
            out
        };
        let a_target = target(a, &a_batch, a_shape, [a.splits[na - 2].clone(), k.clone()]);
        let b_target = target(b, &b_batch, b_shape, [k.clone(), b.splits[nb - 1].clone()]);
        let a = self.rechunk_to(a, &a_target, self.graph.node(a.chunks[0]).dtype);
        let b = self.rechunk_to(b, &b_target, self.graph.node(b.chunks[0]).dtype);
        let (rows, cols) = (a.splits[na - 2].clone(), b.splits[nb - 1].clone());
        let none = self.graph.intern_args(OpArgs::None);
        let key = self.key();
        let mut level_keys = Vec::new();
        let batch_grid: Shape = batch.iter().map(|s| s.len()).collect();
        let mut chunks = Vec::new();
        // The operand's chunk index at batch position `bi`, block (x, y).
        let index = |dims: &[Option<usize>], nd: usize, bi: &[usize], x: usize, y: usize| {
            let skip = bi.len() - (nd - 2);
            let mut idx: Shape = (0..nd - 2)
                .map(|d| dims[d + skip].map_or(0, |_| bi[d + skip]))
                .collect();
            idx.extend([x, y]);
            idx
        };
        Odometer::for_each(&batch_grid, |bi| {
            for (i, n) in rows.iter().enumerate() {
                for (j, m) in cols.iter().enumerate() {
                    let mut shape: Shape = (0..bi.len()).map(|d| batch[d][bi[d]]).collect();
                    shape.extend([*n, *m]);
                    let partials: Vec<ChunkIdx> = (0..k.len())
                        .map(|p| {
                            let ins = [
                                a.at(&index(&a_batch, na, bi, i, p)),
                                b.at(&index(&b_batch, nb, bi, p, j)),
                            ];
                            self.push(key, Op::Matmul, none, shape.clone(), dtype, &ins)
                        })
                        .collect();
                    chunks.push(self.tree(
                        Op::TreeAdd,
                        partials,
                        &mut level_keys,
                        (none, shape.clone()),
                        (none, shape),
                        dtype,
                    ));
                }
            }
        });
        let mut splits = batch;
        splits.extend([rows, cols]);
        Tiled { splits, chunks }
    }
}
