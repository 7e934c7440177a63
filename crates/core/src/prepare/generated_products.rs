//! Products that make their creation operands (part of fusion, with
//! `fuse_generated_operands`): a chunk-level `matmul` one of whose operands is a random,
//! constant or float range chunk generates that operand itself, block by block in cache
//! ([`crate::ops::family::linalg::generated_product`]), and the creation chunk is dropped;
//! so does the leaf of a projected QR (`svd_compressed`), which reads its rows of x once.
//!
//! Why: such a chunk is a pure function of its seed and position, and making it again costs
//! about what first touching the memory to store it does. A product of a `randn` matrix
//! with a thin one, or `svd_compressed`'s one pass over it, then draws each block in cache,
//! and the matrix (1.6 GB for 200,000 × 1,000) never exists.
//!
//! A creation chunk is taken in only when every consumer is such a product (otherwise it is
//! made anyway and the products might as well read it) and there are few of them, each
//! making the values again ([`most_readers`]): on this project's VMs a stored value costs
//! 3–8 ns of page faults on first touch (BENCHMARKS.md), a normal one ~3–4 ns to draw
//! again, a uniform one 0.35 ns, a constant or a range less.

use crate::array::DType;
use crate::graph::ChunkGraph;
use crate::ids::{ArgsIdx, ChunkIdx};
use crate::ops::{Family, Fill, GeneratedOperand, Op, OpArgs};
use rustc_hash::FxHashMap;

/// The most products one creation chunk of `fill` is generated in: two for normal values
/// (one draw more than storing them), four for the cheap ones.
pub fn most_readers(fill: &Fill) -> usize {
    match fill {
        Fill::Normal { .. } => 2,
        _ => 4,
    }
}

/// Rewrites the products that take a creation operand in; drops the operands.
pub fn generate_product_operands(mut graph: ChunkGraph) -> ChunkGraph {
    let succ = graph.successors();
    let is_result = graph.result_mask();
    let mut dropped = vec![false; graph.len()];
    let mut products: FxHashMap<usize, ArgsIdx> = FxHashMap::default();
    for (c, drop) in dropped.iter_mut().enumerate() {
        let Some(fill) = generated_matrix(&graph, &is_result, c) else {
            continue;
        };
        let consumers = succ.row(c);
        if consumers.is_empty() || consumers.len() > most_readers(&fill) {
            continue;
        }
        let sides: Option<Vec<(usize, bool)>> = consumers
            .iter()
            .map(|&v| {
                let v = v as usize;
                (!products.contains_key(&v))
                    .then(|| generating_side(&graph, v, c))
                    .flatten()
                    .map(|left| (v, left))
            })
            .collect();
        let Some(sides) = sides else {
            continue;
        };
        let shape = graph.shape(ChunkIdx(c as u32)).clone();
        for (v, left) in sides {
            let args = graph.push_args(OpArgs::Generated(Box::new(GeneratedOperand {
                fill,
                shape: shape.clone(),
                left,
            })));
            products.insert(v, args);
        }
        *drop = true;
    }
    if products.is_empty() {
        return graph;
    }
    graph.compact_in_place(|v, node| {
        if dropped[v] {
            return None;
        }
        Some(products.get(&v).map(|&args| {
            let product =
                ChunkGraph::detached_node(node.key, node.op, args, node.shape, node.dtype);
            (product, v)
        }))
    });
    graph
}

/// The chunk's fill, as its kernel would see it, when chunk `c` is a float64 matrix made
/// by a creation op that streams, not a result.
fn generated_matrix(graph: &ChunkGraph, is_result: &[bool], c: usize) -> Option<Fill> {
    let idx = ChunkIdx(c as u32);
    let node = graph.node(idx);
    if node.op.family() != Family::Creation
        || node.dtype != DType::F64
        || is_result[c]
        || !graph.inputs(idx).is_empty()
        || graph.shape(idx).len() != 2
    {
        return None;
    }
    let OpArgs::Fill { fill, .. } = &*graph.args_of(idx).at(node.key.index) else {
        return None;
    };
    let stream = crate::ops::family::creation::generate::Stream::new(fill);
    matches!(stream, Some((_, DType::F64))).then_some(*fill)
}

/// `Some(left)` when chunk `v` can make `c` itself: a float64 product of two 2-D chunks
/// reading `c` once, as its left operand or its right one, or a projected QR's leaf reading
/// `c` as its rows of x (its left operand).
fn generating_side(graph: &ChunkGraph, v: usize, c: usize) -> Option<bool> {
    let idx = ChunkIdx(v as u32);
    let node = graph.node(idx);
    let ins = graph.inputs(idx);
    if node.op == Op::QrProjectLeaf {
        return (ins.len() == 2 && ins[0].index() == c && ins[1].index() != c).then_some(true);
    }
    let plain = node.op == Op::Matmul
        && matches!(graph.args_of(idx), OpArgs::None)
        && node.dtype == DType::F64
        && ins.len() == 2
        && ins[0] != ins[1];
    if !plain {
        return None;
    }
    let other = if ins[0].index() == c { ins[1] } else { ins[0] };
    let other_node = graph.node(other);
    (other_node.dtype == DType::F64 && graph.shape(other).len() == 2).then_some(ins[0].index() == c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskConfig;
    use crate::prepare::tile::tile;
    use crate::tensor::{self, Tensor};

    /// The chunks of `results` tiled and their generated operands taken in.
    fn generated(results: &[&Tensor]) -> ChunkGraph {
        generate_product_operands(tile(&Tensor::graph(results), &TaskConfig::default()).unwrap())
    }

    fn count(g: &ChunkGraph, f: impl Fn(&OpArgs) -> bool) -> usize {
        (0..g.len())
            .filter(|&i| f(g.args_of(ChunkIdx(i as u32))))
            .count()
    }

    #[test]
    fn the_leaves_of_svd_compressed_make_their_blocks_of_x() {
        //  randn x_i ── qr_project_leaf(x_i, Ω) ──…── TSQR tree ── Q_i, (Qᵀx)ᵀ
        //  →  qr_project_leaf[x_i generated](Ω): no x_i chunk left
        let x = tensor::randn(&[400, 30], [100, 30], Some(1)).unwrap();
        let [u, s, v] = x.svd_compressed(3, 0, Some(2)).unwrap();
        let g = generated(&[&u, &s, &v]);
        let x_chunks = |g: &ChunkGraph| {
            count(
                g,
                |a| matches!(a, OpArgs::Fill { shape, .. } if shape.as_slice() == [100, 30]),
            )
        };
        let sides = |left: bool| count(&g, |a| matches!(a, OpArgs::Generated(g) if g.left == left));
        assert_eq!(x_chunks(&g), 0);
        assert_eq!((sides(true), sides(false)), (4, 0));
        let leaves = (0..g.len())
            .filter(|&i| g.node(ChunkIdx(i as u32)).op == Op::QrProjectLeaf)
            .count();
        assert_eq!(leaves, 4, "the generated nodes are the leaves");
        // Without the pass, the four blocks of x are chunks of their own.
        let plain = tile(&Tensor::graph(&[&u, &s, &v]), &TaskConfig::default()).unwrap();
        assert_eq!(x_chunks(&plain), 4);
    }

    #[test]
    fn a_creation_chunk_read_by_anything_else_is_kept() {
        let x = tensor::randn(&[40, 30], [10, 30], Some(1)).unwrap();
        let w = tensor::ones(&[30, 5], 30).unwrap();
        let y = x.matmul_nd(&w).unwrap();
        let total = x.sum(None, false).unwrap();
        let g = generated(&[&y, &total]);
        let sides = |g: &ChunkGraph, left: bool| {
            count(g, |a| matches!(a, OpArgs::Generated(g) if g.left == left))
        };
        assert_eq!(
            sides(&g, true),
            0,
            "x is summed too: its chunks exist anyway"
        );
        // The ones chunk is read by four products only: each makes it.
        assert_eq!(sides(&g, false), 4);
        // A result is never taken in.
        let g = generated(&[&x, &y]);
        assert_eq!((sides(&g, true), sides(&g, false)), (0, 4));
        // A product of two creation chunks takes in one: x's blocks, read by one product
        // each, come first.
        let g = generated(&[&y]);
        assert_eq!((sides(&g, true), sides(&g, false)), (4, 0));
    }

    #[test]
    fn normal_values_read_by_more_than_two_products_are_stored() {
        // Each block of x read by three products.
        let readers = |x: &Tensor, n: usize| {
            let w = tensor::ones(&[30, 5], 30).unwrap();
            let ys: Vec<Tensor> = (0..n)
                .map(|k| x.matmul_nd(&(&w * (k as f64 + 1.0)).unwrap()).unwrap())
                .collect();
            let refs: Vec<&Tensor> = ys.iter().collect();
            generated(&refs)
        };
        let left = |g: &ChunkGraph| count(g, |a| matches!(a, OpArgs::Generated(g) if g.left));
        let normal = tensor::randn(&[40, 30], [10, 30], Some(1)).unwrap();
        assert_eq!(
            left(&readers(&normal, 2)),
            8,
            "two draws: made in each product"
        );
        assert_eq!(
            left(&readers(&normal, 3)),
            0,
            "three draws cost more than storing"
        );
        // Uniform values are cheap to make again: up to four products each make them.
        let uniform = tensor::rand(&[40, 30], [10, 30], Some(1)).unwrap();
        assert_eq!(left(&readers(&uniform, 4)), 16);
        assert_eq!(left(&readers(&uniform, 5)), 0);
    }

    #[test]
    fn more_readers_than_the_limit_read_a_chunk() {
        // One 30 × 5 chunk read by six row blocks of x.
        let x = tensor::rand(&[60, 30], [10, 30], Some(1)).unwrap();
        let w = tensor::randn(&[30, 5], 30, Some(2)).unwrap();
        let g = generated(&[&x.matmul_nd(&w).unwrap()]);
        let taken = count(&g, |a| matches!(a, OpArgs::Generated(g) if g.left));
        assert_eq!(
            taken, 6,
            "each block of x is made in its product; w is read"
        );
        assert_eq!(
            count(
                &g,
                |a| matches!(a, OpArgs::Fill { shape, .. } if shape.as_slice() == [30, 5])
            ),
            1
        );
    }

    /// The rewritten graph computes what the chunks did (the local executor, both configs).
    #[test]
    fn products_with_generated_operands_compute_the_same_values() {
        let x = tensor::randn(&[300, 40], [70, 40], Some(1)).unwrap();
        let w = tensor::rand(&[40, 7], [40, 3], Some(2)).unwrap();
        let y = x.matmul_nd(&w).unwrap();
        let z = x.transpose(None).unwrap().matmul_nd(&y).unwrap();
        // And svd_compressed's leaves, which generate their rows of x (150 × 1000: three
        // blocks of 64 K values each).
        let big = tensor::randn(&[600, 1000], [150, 1000], Some(3)).unwrap();
        let [u, s, v] = big.svd_compressed(4, 0, Some(4)).unwrap();
        let run = |generated: bool| {
            let config = TaskConfig {
                fuse_generated_operands: generated,
                ..TaskConfig::default()
            };
            crate::executor::compute(&[&y, &z, &u, &s, &v], &config, 2).unwrap()
        };
        let (on, off) = (run(true), run(false));
        for (a, b) in on.iter().zip(&off) {
            assert_eq!(a.shape(), b.shape());
            for (p, q) in a.iter_f64().zip(b.iter_f64()) {
                assert!((p - q).abs() <= 1e-12 * q.abs().max(1.0), "{p} vs {q}");
            }
        }
    }
}
