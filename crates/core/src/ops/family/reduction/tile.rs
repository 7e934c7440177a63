//! Tiling of the folds (the table's reductions over axes, and its scans).
//!
//! A reduction maps every input chunk to a partial result (reduced axes kept as length 1),
//! then combines the partials of each output chunk in a tree of fan-in `combine_size`
//! (`Tiler::tree`, which matmul's partial products share); only the last level drops the
//! reduced axes when `keepdims` is false. A single partial needs no tree. It lives with the
//! family, not in `prepare::tile`, so a new reduction touches one folder; it reaches the
//! tiler through its small crate-wide API (`key`, `push`, `shape_of`, `tree`, `graph`).

use crate::array::{DType, Shape};
use crate::ids::ChunkIdx;
use crate::ops::infer::reduced_shape;
use crate::ops::{DimIndex, Op, OpArgs};
use crate::prepare::tile::{linear, Odometer, Tiled, Tiler};
use smallvec::SmallVec;

/// The input chunks each output chunk of a reduction over `axes` reads, group after group
/// (output positions in C order over the kept axes; inside a group, C order over the
/// reduced axes), and the group size.
pub(crate) fn reduction_groups(input: &Tiled, axes: &[usize]) -> (Vec<ChunkIdx>, usize) {
    let in_grid = input.grid();
    let ndim = in_grid.len();
    let kept: Vec<usize> = (0..ndim).filter(|d| !axes.contains(d)).collect();
    let group_grid: Shape = axes.iter().map(|a| in_grid[*a]).collect();
    let out_grid: Shape = kept.iter().map(|d| in_grid[*d]).collect();
    let group = group_grid.iter().product::<usize>();
    let mut sources = Vec::with_capacity(input.chunks.len());
    Odometer::for_each(&out_grid, |o| {
        Odometer::for_each(&group_grid, |g| {
            let mut idx: Shape = Shape::from_elem(0, ndim);
            for (k, d) in kept.iter().enumerate() {
                idx[*d] = o[k];
            }
            for (k, a) in axes.iter().enumerate() {
                idx[*a] = g[k];
            }
            sources.push(input.at(&idx));
        });
    });
    (sources, group)
}

/// The splits of a reduction's result: reduced axes vanish, or stay as one chunk of 1.
pub(crate) fn reduced_splits(input: &Tiled, axes: &[usize], keepdims: bool) -> Vec<Vec<usize>> {
    (0..input.splits.len())
        .filter_map(|d| match (axes.contains(&d), keepdims) {
            (false, _) => Some(input.splits[d].clone()),
            (true, true) => Some(vec![1]),
            (true, false) => None,
        })
        .collect()
}

impl Tiler {
    pub(crate) fn tile_reduction(
        &mut self,
        op: Op,
        axes: &[usize],
        keepdims: bool,
        dtype: DType,
        input: &Tiled,
    ) -> Tiled {
        let axes_sv: SmallVec<[usize; 4]> = axes.iter().copied().collect();
        let (sources, group) = reduction_groups(input, axes);
        let single = group == 1;
        let map_keep = self.graph.intern_args(OpArgs::Reduce {
            axes: axes_sv.clone(),
            keepdims: keepdims || !single,
        });
        let mid = self.graph.intern_args(OpArgs::Combine {
            op,
            axes: axes_sv.clone(),
            keepdims: true,
        });
        let last = self.graph.intern_args(OpArgs::Combine {
            op,
            axes: axes_sv,
            keepdims,
        });
        let map_key = self.key();
        let mut level_keys = Vec::new();
        let mut chunks = Vec::with_capacity(sources.len() / group.max(1));
        for srcs in sources.chunks(group.max(1)) {
            let partials: Vec<ChunkIdx> = srcs
                .iter()
                .map(|src| {
                    let shape = reduced_shape(self.shape_of(*src), axes, keepdims || !single);
                    self.push(map_key, op, map_keep, shape, dtype, &[*src])
                })
                .collect();
            if single {
                chunks.push(partials[0]);
            } else {
                let shape = self.shape_of(partials[0]).clone();
                let final_shape = reduced_shape(&shape, axes, keepdims);
                chunks.push(self.tree(
                    Op::Combine,
                    partials,
                    &mut level_keys,
                    (mid, shape),
                    (last, final_shape),
                    dtype,
                ));
            }
        }
        Tiled {
            splits: reduced_splits(input, axes, keepdims),
            chunks,
        }
    }

    /// A running total along `axis`, as dask and Mars tile it: every chunk scans locally (in
    /// parallel), the chunk totals (the last slice of each local scan, length 1 on the axis)
    /// are chained into running carries, and each chunk adds (or multiplies by) the carry
    /// of the chunks before it. The serial part is the chain of `k` slice-sized combines for
    /// `k` chunks on the axis; every full-chunk step runs in parallel. Values equal a
    /// sequential scan's: the carry after chunk `j` is the last element of its output.
    pub(crate) fn tile_scan(&mut self, op: Op, axis: usize, dtype: DType, input: &Tiled) -> Tiled {
        let grid = input.grid();
        let scan_args = self.graph.intern_args(OpArgs::Scan { axis });
        let none = self.graph.intern_args(OpArgs::None);
        let combine = super::scan(op)
            .expect("tile_scan is called for the table's scans")
            .monoid
            .elementwise();
        let (scan_key, total_key) = (self.key(), self.key());
        let (prefix_key, combine_key) = (self.key(), self.key());
        let mut chunks = vec![ChunkIdx(0); grid.iter().product()];
        let mut lines = grid.clone();
        lines[axis] = 1;
        Odometer::for_each(&lines, |o| {
            // The running total of the chunks so far on this line (slice-shaped).
            let mut carry: Option<ChunkIdx> = None;
            for j in 0..grid[axis] {
                let mut idx: Shape = o.into();
                idx[axis] = j;
                let src = input.at(&idx);
                let shape = self.shape_of(src).clone();
                let local = self.push(scan_key, op, scan_args, shape.clone(), dtype, &[src]);
                let at = linear(&grid, &idx);
                // An empty chunk (a zero-length piece of a concatenation) carries nothing.
                if shape[axis] == 0 {
                    chunks[at] = local;
                    continue;
                }
                chunks[at] = match carry {
                    None => local,
                    Some(c) => self.push(
                        combine_key,
                        combine,
                        none,
                        shape.clone(),
                        dtype,
                        &[local, c],
                    ),
                };
                if j + 1 == grid[axis] {
                    continue;
                }
                let last: SmallVec<[DimIndex; 4]> = shape
                    .iter()
                    .enumerate()
                    .map(|(d, n)| DimIndex::Range {
                        start: if d == axis { n - 1 } else { 0 },
                        step: 1,
                        len: if d == axis { 1 } else { *n },
                    })
                    .collect();
                let mut total_shape = shape;
                total_shape[axis] = 1;
                let args = self.graph.intern_args(OpArgs::Slice(last.into()));
                let total = self.push(
                    total_key,
                    Op::Slice,
                    args,
                    total_shape.clone(),
                    dtype,
                    &[local],
                );
                carry = Some(match carry {
                    None => total,
                    Some(c) => {
                        self.push(prefix_key, combine, none, total_shape, dtype, &[c, total])
                    }
                });
            }
        });
        Tiled {
            splits: input.splits.clone(),
            chunks,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TaskConfig;
    use crate::ops::Op;
    use crate::tensor::{self, Tensor};

    /// The longest chain of full-chunk nodes (slice-shaped carries do not count) in the
    /// tiled `cumsum` of `k` chunks: constant, not growing with `k`, so the chunks of a
    /// line scan and combine in parallel.
    #[test]
    fn scan_chains_only_the_chunk_totals() {
        for k in [1usize, 2, 6, 40] {
            let x = tensor::ones(&[3 * k, 2], 3).unwrap();
            let t = x.scan(Op::CumSum, Some(0)).unwrap();
            let graph =
                crate::prepare::tile::tile(&Tensor::graph(&[&t]), &TaskConfig::default()).unwrap();
            let mut depth = vec![0usize; graph.nodes.len()];
            for i in 0..graph.nodes.len() {
                let below = graph
                    .inputs(crate::ids::ChunkIdx(i as u32))
                    .iter()
                    .map(|c| depth[c.index()])
                    .max()
                    .unwrap_or(0);
                let shape = graph.shape(crate::ids::ChunkIdx(i as u32));
                depth[i] = below + usize::from(shape[0] > 1);
            }
            let longest = depth.iter().max().copied().unwrap_or(0);
            // ones, the local scan, the combine with the carry.
            assert!(longest <= 3, "{k} chunks: a chain of {longest} full chunks");
            let combines = graph.nodes.iter().filter(|n| n.op == Op::Add).count();
            // (k - 1) combines of chunks, (k - 2) of carries, per column chunk (1 here).
            assert_eq!(combines, (k - 1) + k.saturating_sub(2), "{k} chunks");
        }
    }
}
