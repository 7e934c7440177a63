//! Chunk-grid arithmetic: splits from chunk sizes, multi-index iteration, and rechunking
//! (the slice-and-assemble step that several tiling rules share).
//!
//! Rechunking slices every source chunk that overlaps a target chunk, so a change of grid
//! that crosses it (row bands to column bands) makes sources × targets slice nodes. Past
//! [`SHUFFLE_PAIRS`] such pairs, and when they outnumber the chunks several times over, it
//! goes through the shuffle instead (`kernels::regrid`): N + M + 1 nodes, the pairs only
//! as pieces at run time.

use super::{Tiled, Tiler};
use crate::array::{DType, Shape};
use crate::ops::family::shuffle::tile::ReducerSpec;
use crate::ops::{ChunkSpec, DimIndex, MapKind, Op, OpArgs, ReduceKind};
use smallvec::SmallVec;

/// Overlapping (source, target) chunk pairs above which a rechunk may take the shuffle.
pub const SHUFFLE_PAIRS: u64 = 4096;

/// Chunk lengths of one dimension: full chunks then the remainder; `[0]` for an empty one.
pub fn split_dim(len: usize, chunk: usize) -> Vec<usize> {
    if len == 0 {
        return vec![0];
    }
    let chunk = chunk.clamp(1, len);
    let mut out = vec![chunk; len / chunk];
    if !len.is_multiple_of(chunk) {
        out.push(len % chunk);
    }
    out
}

/// The chunk lengths of every dimension (`spec` was checked against `shape`).
pub fn splits_for(shape: &[usize], spec: &ChunkSpec) -> Vec<Vec<usize>> {
    match spec {
        ChunkSpec::Uniform(c) => shape.iter().map(|len| split_dim(*len, *c)).collect(),
        ChunkSpec::PerDim(v) => shape
            .iter()
            .zip(v)
            .map(|(len, c)| split_dim(*len, *c))
            .collect(),
        ChunkSpec::Explicit(dims) => dims
            .iter()
            .map(|d| if d.is_empty() { vec![0] } else { d.clone() })
            .collect(),
    }
}

/// Linear C-order position of a multi-index in a grid.
pub fn linear(grid: &[usize], idx: &[usize]) -> usize {
    grid.iter().zip(idx).fold(0, |acc, (g, i)| acc * g + i)
}

/// Iterates the multi-indices of a grid in C order.
pub struct Odometer {
    grid: Shape,
    idx: Shape,
    done: bool,
}

impl Odometer {
    pub fn new(grid: &[usize]) -> Self {
        Self {
            grid: grid.into(),
            idx: grid.iter().map(|_| 0).collect(),
            done: grid.contains(&0),
        }
    }

    /// The current index, then advances; `None` when exhausted.
    pub fn next_index(&mut self) -> Option<&Shape> {
        if self.done {
            return None;
        }
        Some(&self.idx)
    }

    pub fn advance(&mut self) {
        for d in (0..self.grid.len()).rev() {
            self.idx[d] += 1;
            if self.idx[d] < self.grid[d] {
                return;
            }
            self.idx[d] = 0;
        }
        self.done = true;
    }

    /// Calls `f` for every multi-index.
    pub fn for_each(grid: &[usize], mut f: impl FnMut(&[usize])) {
        let mut od = Odometer::new(grid);
        while let Some(idx) = od.next_index() {
            f(idx);
            od.advance();
        }
    }
}

/// Element offsets where chunks start, plus the total at the end.
pub fn offsets(splits: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(splits.len() + 1);
    let mut acc = 0;
    out.push(0);
    for s in splits {
        acc += s;
        out.push(acc);
    }
    out
}

/// The common refinement of several splittings of one dimension (union of boundaries).
pub fn unify(splittings: &[&[usize]]) -> Vec<usize> {
    if splittings.windows(2).all(|w| w[0] == w[1]) {
        return splittings[0].to_vec();
    }
    let mut bounds: Vec<usize> = splittings.iter().flat_map(|s| offsets(s)).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let out: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
    if out.is_empty() {
        vec![0]
    } else {
        out
    }
}

/// For each target chunk of one dimension: the source chunks it overlaps, with the local
/// start and length inside each.
fn pieces(src: &[usize], dst: &[usize]) -> Vec<SmallVec<[(usize, usize, usize); 2]>> {
    let (so, dofs) = (offsets(src), offsets(dst));
    let mut out = Vec::with_capacity(dst.len());
    let mut s = 0;
    for j in 0..dst.len() {
        let (lo, hi) = (dofs[j], dofs[j + 1]);
        let mut row = SmallVec::new();
        if lo == hi {
            // Only an empty dimension has an empty chunk.
            row.push((s.min(src.len() - 1), 0, 0));
        }
        let mut k = s;
        while k < src.len() && so[k] < hi {
            let a = lo.max(so[k]);
            let b = hi.min(so[k + 1]);
            if b > a {
                row.push((k, a - so[k], b - a));
            }
            if so[k + 1] <= hi {
                s = k + 1;
            }
            k += 1;
        }
        out.push(row);
    }
    out
}

impl Tiler {
    /// Re-splits a tiled tensor: slices of the overlapping source chunks, assembled when a
    /// target chunk spans several. Chunks that already match are reused as they are.
    pub fn rechunk_to(&mut self, t: &Tiled, target: &[Vec<usize>], dtype: DType) -> Tiled {
        if t.splits == target {
            return t.clone();
        }
        if let Some(shuffled) = self.rechunk_by_shuffle(t, target, dtype) {
            return shuffled;
        }
        let per_dim: Vec<_> = t
            .splits
            .iter()
            .zip(target)
            .map(|(s, d)| pieces(s, d))
            .collect();
        let src_grid = t.grid();
        let dst_grid: Shape = target.iter().map(|s| s.len()).collect();
        let (slice_key, assemble_key) = (self.key(), self.key());
        let mut chunks = Vec::with_capacity(dst_grid.iter().product());
        Odometer::for_each(&dst_grid, |o| {
            let block: Shape = o
                .iter()
                .enumerate()
                .map(|(d, j)| per_dim[d][*j].len())
                .collect();
            let mut parts = Vec::with_capacity(block.iter().product());
            Odometer::for_each(&block, |b| {
                let src_idx: Shape = b
                    .iter()
                    .enumerate()
                    .map(|(d, k)| per_dim[d][o[d]][*k].0)
                    .collect();
                let src = t.chunks[linear(&src_grid, &src_idx)];
                let src_shape = self.shape_of(src).clone();
                let ranges: SmallVec<[(usize, usize); 4]> = b
                    .iter()
                    .enumerate()
                    .map(|(d, k)| (per_dim[d][o[d]][*k].1, per_dim[d][o[d]][*k].2))
                    .collect();
                let whole = ranges
                    .iter()
                    .zip(&src_shape)
                    .all(|((start, len), full)| *start == 0 && len == full);
                if whole {
                    parts.push(src);
                } else {
                    let dims: SmallVec<[DimIndex; 4]> = ranges
                        .iter()
                        .map(|(start, len)| DimIndex::Range {
                            start: *start,
                            step: 1,
                            len: *len,
                        })
                        .collect();
                    let args = self.graph.intern_args(OpArgs::Slice(Box::new(dims)));
                    let shape = ranges.iter().map(|r| r.1).collect();
                    parts.push(self.push(slice_key, Op::Slice, args, shape, dtype, &[src]));
                }
            });
            if parts.len() == 1 {
                chunks.push(parts[0]);
            } else {
                let shape: Shape = o.iter().enumerate().map(|(d, j)| target[d][*j]).collect();
                let args = self.graph.intern_args(OpArgs::Assemble { grid: block });
                chunks.push(self.push(assemble_key, Op::Assemble, args, shape, dtype, &parts));
            }
        });
        Tiled {
            splits: target.to_vec(),
            chunks,
        }
    }
}

/// The (source, target) chunk pairs that overlap: the slice nodes of the grid method.
pub fn overlapping_pairs(src: &[Vec<usize>], dst: &[Vec<usize>]) -> u64 {
    src.iter()
        .zip(dst)
        .map(|(s, d)| pieces(s, d).iter().map(|r| r.len() as u64).sum::<u64>())
        .product()
}

impl Tiler {
    /// The rechunk as a shuffle when the grid method would make [`SHUFFLE_PAIRS`] slice
    /// nodes or more, over four per chunk of either grid; `None`: use the grid method (also
    /// when the graph has no room for the pieces).
    fn rechunk_by_shuffle(
        &mut self,
        t: &Tiled,
        target: &[Vec<usize>],
        dtype: DType,
    ) -> Option<Tiled> {
        let n = t.chunks.len() as u64;
        let m: u64 = target.iter().map(|s| s.len() as u64).product();
        let pairs = overlapping_pairs(&t.splits, target);
        if pairs < SHUFFLE_PAIRS || pairs <= 4 * (n + m) {
            return None;
        }
        let grid = |s: &[Vec<usize>]| OpArgs::Rechunk(ChunkSpec::Explicit(s.to_vec()));
        let source = self.graph.intern_args(grid(&t.splits));
        let target_args = self.graph.intern_args(grid(target));
        let split = MapKind::RechunkSplit {
            source,
            target: target_args,
        };
        let mappers = t.chunks.iter().map(|c| (split, vec![*c])).collect();
        let place = ReduceKind::RechunkPlace {
            source,
            target: target_args,
        };
        let dst_grid: Shape = target.iter().map(|s| s.len()).collect();
        let mut reducers = Vec::with_capacity(m as usize);
        Odometer::for_each(&dst_grid, |o| {
            reducers.push(ReducerSpec {
                kind: place,
                shape: o.iter().enumerate().map(|(d, j)| target[d][*j]).collect(),
                dtype,
            })
        });
        let (_, chunks) = self.push_shuffle(mappers, reducers).ok()?;
        Some(Tiled {
            splits: target.to_vec(),
            chunks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_dim_keeps_a_smaller_remainder() {
        assert_eq!(split_dim(10, 4), vec![4, 4, 2]);
        assert_eq!(split_dim(10, 20), vec![10]);
        assert_eq!(split_dim(0, 3), vec![0]);
    }

    #[test]
    fn unify_merges_boundaries() {
        assert_eq!(unify(&[&[2, 2], &[3, 1]]), vec![2, 1, 1]);
        assert_eq!(unify(&[&[4], &[4]]), vec![4]);
    }

    #[test]
    fn pieces_cover_each_target_chunk() {
        // src |--3--|--3--|-2-|   dst |-2-|----5----|-1-|
        let p = pieces(&[3, 3, 2], &[2, 5, 1]);
        assert_eq!(p[0].as_slice(), &[(0, 0, 2)]);
        assert_eq!(p[1].as_slice(), &[(0, 2, 1), (1, 0, 3), (2, 0, 1)]);
        assert_eq!(p[2].as_slice(), &[(2, 1, 1)]);
    }

    #[test]
    fn odometer_is_c_order() {
        let mut seen = vec![];
        Odometer::for_each(&[2, 3], |i| seen.push((i[0], i[1])));
        assert_eq!(seen, vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        assert_eq!(linear(&[2, 3], &[1, 2]), 5);
    }
}
