//! Projected chunk counts: how many chunks tiling a graph would create, computed from shapes
//! and chunk specs alone, before anything sized by them is allocated.
//!
//! `sum(ones(10**9, chunk=1))` is a one-node graph of a few bytes that tiles into 2·10^9
//! chunks; the supervisor grew past 5 GB on it before this check. The projection is an upper
//! bound that counts every chunk of the chunk graph: leaves, rechunk pieces, reduction and
//! matmul trees. Each dimension is either evenly chunked (exact count) or known only by a
//! bound; arithmetic saturates, so no input can overflow it. Cost: O(nodes × ndim).

use crate::graph::TileableGraph;
use crate::ops::{ChunkSpec, DimIndex, Family, OpArgs};
use smallvec::SmallVec;

/// How one dimension of a tileable is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    /// `len` in chunks of `chunk` (the last one shorter).
    Even { len: u64, chunk: u64 },
    /// At most this many chunks.
    AtMost(u64),
}

impl Dim {
    fn count(self) -> u64 {
        match self {
            Dim::Even { len, chunk } => len.div_ceil(chunk.max(1)).max(1),
            Dim::AtMost(n) => n.max(1),
        }
    }

    /// The split of an elementwise result of two dims (the union of their boundaries).
    /// Only two equal even splits are known to share their boundaries; two bounds may not
    /// (`AtMost(2)` cut at 4 and at 3 make 3 chunks together).
    fn union(self, other: Dim) -> Dim {
        match (self, other) {
            (Dim::Even { .. }, Dim::Even { .. }) if self == other => self,
            _ => Dim::AtMost((self.count() + other.count()).saturating_sub(1)),
        }
    }

    fn whole(len: usize) -> Dim {
        Dim::Even {
            len: len as u64,
            chunk: (len as u64).max(1),
        }
    }
}

type Grid = SmallVec<[Dim; 4]>;

/// The grid a chunk spec gives a shape.
fn spec_grid(shape: &[usize], spec: &ChunkSpec) -> Grid {
    (0..shape.len())
        .map(|d| match spec {
            ChunkSpec::Uniform(c) => Dim::Even {
                len: shape[d] as u64,
                chunk: *c as u64,
            },
            ChunkSpec::PerDim(v) => Dim::Even {
                len: shape[d] as u64,
                chunk: v.get(d).copied().unwrap_or(1) as u64,
            },
            ChunkSpec::Explicit(dims) => {
                Dim::AtMost(dims.get(d).map_or(1, |l| l.len().max(1)) as u64)
            }
        })
        .collect()
}

/// A reduction over `axes` of `input`: the output grid, and the chunks created (a partial per
/// input chunk, a combine tree of fan-in >= 2 with fewer nodes, a finishing step per output).
fn reduced(input: &[Dim], axes: &[usize], keepdims: bool) -> (Grid, u64) {
    let g: Grid = input
        .iter()
        .enumerate()
        .filter(|(d, _)| keepdims || !axes.contains(d))
        .map(|(d, dim)| {
            if axes.contains(&d) {
                Dim::whole(1)
            } else {
                *dim
            }
        })
        .collect();
    let n = total(&g);
    (
        g,
        total(input)
            .saturating_mul(2)
            .saturating_add(n.saturating_mul(2)),
    )
}

/// Reshape (`prepare::tile` regrids into whole rows, flattens, and regrids into whole output
/// rows when chunks do not line up): an upper bound of both ways.
fn reshaped(input: &[Dim], in_shape: &[usize], target: &[usize]) -> (Grid, u64) {
    let in_total = total(input);
    let whole: Grid = target.iter().map(|l| Dim::whole(*l)).collect();
    if in_total <= 1 {
        return (whole, 1);
    }
    let n: u64 = in_shape
        .iter()
        .fold(1u64, |a, l| a.saturating_mul(*l as u64));
    // A lower bound of the largest chunk's elements: fewer elements mean more chunks below.
    let elems = input
        .iter()
        .zip(in_shape)
        .fold(1u64, |a, (d, l)| {
            a.saturating_mul((*l as u64).div_ceil(d.count()))
        })
        .max(1);
    let row_of = |shape: &[usize]| -> (usize, u64) {
        let first = shape.iter().position(|d| *d != 1).unwrap_or(0);
        let row = shape
            .iter()
            .skip(first + 1)
            .fold(1u64, |a, l| a.saturating_mul(*l as u64));
        (first, row.max(1))
    };
    let (first, row) = row_of(in_shape);
    let by_rows: Grid = in_shape
        .iter()
        .enumerate()
        .map(|(d, len)| {
            if d == first {
                Dim::Even {
                    len: *len as u64,
                    chunk: (elems / row).max(1),
                }
            } else {
                Dim::whole(*len)
            }
        })
        .collect();
    let rows = total(&by_rows);
    let pieces = input.iter().zip(&by_rows).fold(1u64, |a, (o, r)| {
        a.saturating_mul(o.count().saturating_add(r.count()))
    });
    let (out_first, out_row) = row_of(target);
    let run = (elems / out_row).max(1).saturating_mul(out_row).max(1);
    let runs = n.div_ceil(run).max(1);
    let created = [
        in_total,
        pieces,
        rows,
        rows,
        rows.saturating_add(runs),
        runs,
        runs,
    ]
    .iter()
    .fold(0u64, |a, b| a.saturating_add(*b));
    let g: Grid = target
        .iter()
        .enumerate()
        .map(|(d, len)| {
            let bound = if d == out_first {
                runs.max(in_total)
            } else {
                in_total
            };
            Dim::AtMost(bound.min((*len as u64).max(1)))
        })
        .collect();
    (g, created)
}

fn total(grid: &[Dim]) -> u64 {
    grid.iter().fold(1u64, |n, d| n.saturating_mul(d.count()))
}

/// An upper bound on the chunks `prepare::tile` creates for `graph` (with any combine size).
pub fn projected_chunks(graph: &TileableGraph) -> u64 {
    let mut grids: Vec<Grid> = Vec::with_capacity(graph.nodes.len());
    let mut chunks = 0u64;
    for node in &graph.nodes {
        let ins: Vec<&Grid> = node.inputs.iter().map(|i| &grids[i.index()]).collect();
        let in_shapes: Vec<&[usize]> = node
            .inputs
            .iter()
            .map(|i| graph.nodes[i.index()].shape.as_slice())
            .collect();
        let shape = &node.shape;
        let (grid, created): (Grid, u64) = match (&node.args, node.op.family()) {
            (OpArgs::Create { shape, chunk, .. }, _) => {
                let g = spec_grid(shape, chunk);
                let n = total(&g);
                (g, n)
            }
            (OpArgs::Source { data, chunk }, _) => {
                let g = spec_grid(&data.shape, chunk);
                let n = total(&g);
                (g, n)
            }
            (OpArgs::Sink { .. }, _) if !ins.is_empty() => {
                // Writes, a regularizing rechunk (Zarr) and the tree summing the byte counts.
                let pieces = ins[0]
                    .iter()
                    .fold(1u64, |n, d| n.saturating_mul(d.count().saturating_mul(2)));
                (
                    Grid::new(),
                    pieces.saturating_add(total(ins[0]).saturating_mul(3)),
                )
            }
            (OpArgs::FetchResult { splits, chunks, .. }, _) => (
                splits.iter().map(|s| Dim::AtMost(s.len() as u64)).collect(),
                chunks.len() as u64,
            ),
            (OpArgs::Reduce { axes, keepdims } | OpArgs::Moments { axes, keepdims, .. }, _)
                if !ins.is_empty() =>
            {
                reduced(ins[0], axes, *keepdims)
            }
            (OpArgs::Arg { axis, keepdims, .. }, _) if !ins.is_empty() => {
                reduced(ins[0], &[*axis], *keepdims)
            }
            // Shuffle (issue 11): mappers, proxy, reducers; sort: two shuffles and samples.
            (
                OpArgs::ShuffleBench {
                    in_parts,
                    out_parts,
                    ..
                },
                _,
            ) => (
                [Dim::AtMost(*out_parts as u64), Dim::whole(3)]
                    .into_iter()
                    .collect(),
                (*in_parts as u64)
                    .saturating_add(*out_parts as u64)
                    .saturating_add(1),
            ),
            (OpArgs::Sort { .. }, _) if !ins.is_empty() => {
                let g: Grid = ins[0].iter().map(|d| Dim::AtMost(d.count())).collect();
                let n = total(ins[0]);
                (g, n.saturating_mul(7).saturating_add(4))
            }
            (OpArgs::Scan { .. }, _) if !ins.is_empty() => {
                // Per chunk: its scan, its total (a slice), the running carry, the combine.
                let g = ins[0].clone();
                let n = total(&g);
                (g, n.saturating_mul(4))
            }
            (OpArgs::Reshape(target), _) if !ins.is_empty() => {
                reshaped(ins[0], in_shapes[0], target)
            }
            (OpArgs::Transpose(perm), _) if !ins.is_empty() => {
                let g: Grid = perm
                    .iter()
                    .filter_map(|p| ins[0].get(*p).copied())
                    .collect();
                let n = total(&g);
                (g, n)
            }
            (OpArgs::Slice(dims), _) if !ins.is_empty() => {
                let g: Grid = dims
                    .iter()
                    .zip(ins[0].iter())
                    .filter_map(|(idx, dim)| match idx {
                        DimIndex::Range { len, .. } => {
                            Some(Dim::AtMost(dim.count().min((*len as u64).max(1))))
                        }
                        DimIndex::Index(_) => None,
                    })
                    .collect();
                let n = total(&g);
                (g, n)
            }
            (OpArgs::Rechunk(spec), _) if !ins.is_empty() => {
                let g = spec_grid(shape, spec);
                let pieces = ins[0].iter().zip(&g).fold(1u64, |n, (a, b)| {
                    n.saturating_mul(a.count().saturating_add(b.count()))
                });
                let n = total(&g);
                (g, pieces.saturating_add(n))
            }
            (OpArgs::MapBlocks(call), _) => {
                // One chunk per output block, after rechunks of the inputs (at most their
                // chunks and as many pieces again).
                let g: Grid = call
                    .out_splits
                    .iter()
                    .map(|s| Dim::AtMost(s.len() as u64))
                    .collect();
                let rechunks = ins
                    .iter()
                    .fold(0u64, |n, g| n.saturating_add(total(g).saturating_mul(2)));
                let n = total(&g);
                (g, n.saturating_add(rechunks))
            }
            (OpArgs::Concat { axis }, _) => {
                let mut g: Grid = SmallVec::new();
                for d in 0..shape.len() {
                    let dims = ins.iter().filter_map(|i| i.get(d).copied());
                    g.push(if d == *axis {
                        Dim::AtMost(dims.map(Dim::count).fold(0u64, u64::saturating_add))
                    } else {
                        dims.reduce(Dim::union).unwrap_or(Dim::whole(shape[d]))
                    });
                }
                let n = total(&g);
                (g, n.saturating_mul(2))
            }
            (_, Family::Linalg) if node.op != crate::ops::Op::Matmul && !ins.is_empty() => {
                // TSQR: a rechunk to whole rows, a block, an apply and a tree node per row
                // chunk, and R; a one-chunk factorization: its rechunk and itself.
                let most = ins.iter().map(|g| total(g)).max().unwrap_or(1);
                let g: Grid = shape
                    .iter()
                    .map(|len| Dim::AtMost(most.saturating_add(1).min((*len as u64).max(1))))
                    .collect();
                (g, most.saturating_mul(6).saturating_add(4))
            }
            (_, Family::Linalg) if ins.len() == 2 && ins[0].len() >= 2 && ins[1].len() >= 2 => {
                // Stacks of matrices: each batch dimension cut as the operands that have it
                // at full length agree; then rows × k × columns blocks per batch block.
                let (a, b, bl) = (ins[0], ins[1], shape.len() - 2);
                let mut g: Grid = SmallVec::new();
                for d in 0..bl {
                    let dims = [(a, in_shapes[0]), (b, in_shapes[1])]
                        .into_iter()
                        .filter_map(|(grid, s)| {
                            let at = (d + s.len()).checked_sub(bl + 2)?;
                            (s[at] == shape[d]).then(|| grid[at])
                        });
                    g.push(dims.reduce(Dim::union).unwrap_or(Dim::whole(shape[d])));
                }
                let (m, n) = (a[a.len() - 2], b[b.len() - 1]);
                let k = a[a.len() - 1].union(b[b.len() - 2]).count();
                let batch = total(&g);
                let (mc, nc) = (m.count(), n.count());
                let blocks = batch.saturating_mul(mc).saturating_mul(nc);
                let partials = blocks.saturating_mul(k);
                let rechunks =
                    batch.saturating_mul(mc.saturating_mul(k).saturating_add(k.saturating_mul(nc)));
                g.extend([m, n]);
                let created = partials.saturating_mul(2).saturating_add(rechunks);
                (g, created.saturating_add(blocks))
            }
            (_, Family::Unary | Family::Binary | Family::Ternary) if !ins.is_empty() => {
                // Broadcasting, aligned on the right; a length-1 input dim adds no split.
                let mut g: Grid = SmallVec::new();
                for d in 0..shape.len() {
                    let from_end = shape.len() - d;
                    let dims = ins.iter().zip(&in_shapes).filter_map(|(grid, s)| {
                        let at = s.len().checked_sub(from_end)?;
                        (s[at] != 1).then(|| grid[at])
                    });
                    g.push(dims.reduce(Dim::union).unwrap_or(Dim::whole(shape[d])));
                }
                let n = total(&g);
                let rechunked = ins.iter().filter(|i| ***i != g).count() as u64;
                (g, n.saturating_mul(1 + rechunked))
            }
            _ => {
                // Chunk-level ops (not submitted by clients; refused when tiled): no more
                // chunks than the largest input has, per dimension at most its length.
                let most = ins.iter().map(|g| total(g)).max().unwrap_or(1);
                let g: Grid = shape
                    .iter()
                    .map(|len| Dim::AtMost(most.min((*len as u64).max(1))))
                    .collect();
                (g, most)
            }
        };
        chunks = chunks.saturating_add(created);
        grids.push(grid);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;

    fn graph(expr: &str) -> TileableGraph {
        crate::tensor::Tensor::graph(&[&crate::expr::evaluate(expr).unwrap()])
    }

    /// The projection bounds what tiling really creates, and not by orders of magnitude.
    #[test]
    fn projection_bounds_tiling_closely() {
        for expr in [
            "sum(ones(1000, chunk=10))",
            "x = rand(300, 200, chunk=(30, 70), seed=1); (x + x.T.T * 2).sum(axis=0)",
            "a = rand(40, 30, chunk=(9, 7), seed=2); b = rand(30, 20, chunk=(8, 6), seed=3); a @ b",
            "x = arange(100, chunk=7); concatenate((x, x[3:50])).sum()",
            "rand(60, 60, chunk=7, seed=1) + rand(60, chunk=11, seed=2)",
            "rechunk(rand(100, 100, chunk=10, seed=4), 33).max(axis=1)",
            "x = rand(30, 40, chunk=(7, 9), seed=5); reshape(x, (40, 30)).sum()",
            "x = rand(30, 40, chunk=(30, 1), seed=5); reshape(x, (1200,))",
            "x = rand(20, 30, chunk=(6, 7), seed=6); cumsum(x, axis=1) + argmax(x, axis=0)",
            "x = rand(50, chunk=((10, 15, 25),), seed=7); var(x) + where(x > 0.5, x, 0).sum()",
            "a = rand(6, 1, 9, 8, chunk=(4, 1, 5, 3), seed=8); b = rand(5, 8, 7, chunk=2, seed=9); a @ b",
            "a = rand(3, 4, 5, chunk=(1, 3, 2), seed=8); a @ rand(5, chunk=2, seed=9)",
        ] {
            let g = graph(expr);
            let tiled = crate::prepare::tile::tile(&g, &TaskConfig::default())
                .unwrap()
                .len() as u64;
            let projected = projected_chunks(&g);
            assert!(
                projected >= tiled && projected <= 8 * tiled.max(8),
                "{expr}: projected {projected}, tiled {tiled}"
            );
        }
    }

    #[test]
    fn huge_and_overflowing_jobs_are_projected_without_allocating() {
        assert!(projected_chunks(&graph("sum(ones(10**9, chunk=1))")) >= 2_000_000_000);
        let p = projected_chunks(&graph(
            "x = ones(10**14, chunk=1); y = ones(10**14, chunk=1); sum(x * y + x)",
        ));
        assert!(p >= 10u64.pow(14), "{p}");
    }
}
