//! An independent evaluation of a tileable graph on whole arrays with ndarray, in float64.
//!
//! It shares nothing with tiling or kernels except the documented random contract: chunk `i`
//! (C order) of a random tensor is Xoshiro256++ seeded with `chunk_seed(seed, i)`: `randn` one
//! generator seeded from it, `rand` eight, element `k` drawn from generator `k % 8`, each
//! generator's state the next 32 bytes of SplitMix64 seeded with it.

use ares_core::array::{DType, Scalar};
use ares_core::graph::TileableGraph;
use ares_core::ops::{DimIndex, Fill, Op, OpArgs};
use ares_core::prepare::tile::{chunk_seed, splits_for, Odometer};
use ndarray::{concatenate, ArrayD, Axis, IxDyn, Slice};
use rand::{RngCore, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

fn random(fill: &Fill, shape: &[usize], spec: &ares_core::ops::ChunkSpec) -> ArrayD<f64> {
    let splits = splits_for(shape, spec);
    let grid: Vec<usize> = splits.iter().map(|s| s.len()).collect();
    let mut out = ArrayD::zeros(IxDyn(shape));
    let mut linear = 0u64;
    Odometer::for_each(&grid, |idx| {
        let (seed, normal) = match fill {
            Fill::Uniform { seed } => (*seed, false),
            Fill::Normal { seed } => (*seed, true),
            _ => unreachable!(),
        };
        let seed = chunk_seed(seed, linear);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut splitmix = SplitMix64::seed_from_u64(seed);
        let mut lanes: Vec<Xoshiro256PlusPlus> = (0..8)
            .map(|_| Xoshiro256PlusPlus::from_rng(&mut splitmix).expect("seeded"))
            .collect();
        let mut view = out.slice_each_axis_mut(|ax| {
            let d = ax.axis.index();
            let start: usize = splits[d][..idx[d]].iter().sum();
            Slice::from(start..start + splits[d][idx[d]])
        });
        for (k, v) in view.iter_mut().enumerate() {
            *v = if normal {
                StandardNormal.sample(&mut rng)
            } else {
                (lanes[k % 8].next_u64() >> 11) as f64 / (1u64 << 53) as f64
            };
        }
        linear += 1;
    });
    out
}

fn round_to(x: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F64 => x,
        DType::F32 => x as f32 as f64,
        DType::I64 | DType::I32 => x.trunc(),
        DType::Bool => (x != 0.0) as u8 as f64,
        // This reference is real-valued; complex dtypes are checked against NumPy
        // (python/tests/test_complex.py).
        DType::C64 | DType::C128 => panic!("the real reference has no complex values"),
        // Nor narrow integers (their wrapping is checked against NumPy in
        // python/tests/test_int_dtypes.py and the core's numpy_cases).
        d => panic!("the reference has no {d} values"),
    }
}

fn zip(a: &ArrayD<f64>, b: &ArrayD<f64>, f: impl Fn(f64, f64) -> f64) -> ArrayD<f64> {
    let shape = ares_core::ops::infer::broadcast("ref", a.shape(), b.shape()).unwrap();
    let (x, y) = (
        a.broadcast(IxDyn(&shape)).unwrap(),
        b.broadcast(IxDyn(&shape)).unwrap(),
    );
    ndarray::Zip::from(&x).and(&y).map_collect(|p, q| f(*p, *q))
}

fn binary(op: Op, a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    let bit = |c: bool| c as u8 as f64;
    match op {
        Op::Add => zip(a, b, |x, y| x + y),
        Op::Sub => zip(a, b, |x, y| x - y),
        Op::Mul => zip(a, b, |x, y| x * y),
        Op::Div => zip(a, b, |x, y| x / y),
        Op::Pow => zip(a, b, f64::powf),
        Op::Maximum => zip(a, b, |x, y| {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.max(y)
            }
        }),
        Op::Minimum => zip(a, b, |x, y| {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.min(y)
            }
        }),
        Op::Eq => zip(a, b, |x, y| bit(x == y)),
        Op::Ne => zip(a, b, |x, y| bit(x != y)),
        Op::Lt => zip(a, b, |x, y| bit(x < y)),
        Op::Le => zip(a, b, |x, y| bit(x <= y)),
        Op::Gt => zip(a, b, |x, y| bit(x > y)),
        Op::Ge => zip(a, b, |x, y| bit(x >= y)),
        // Bitwise ops see bool and int64 operands (exact in f64 below 2^53).
        Op::BitAnd => zip(a, b, |x, y| (x as i64 & y as i64) as f64),
        Op::BitOr => zip(a, b, |x, y| (x as i64 | y as i64) as f64),
        Op::BitXor => zip(a, b, |x, y| (x as i64 ^ y as i64) as f64),
        _ => unreachable!("{op}"),
    }
}

/// `a @ b` of shape `out` (stacks of matrices, batch dimensions broadcast), element by
/// element from the definition.
fn matmul(a: &ArrayD<f64>, b: &ArrayD<f64>, out: &[usize]) -> ArrayD<f64> {
    let no = out.len();
    let k = a.shape()[a.ndim() - 1];
    let at = |x: &ArrayD<f64>, i: &[usize], r: usize, c: usize| {
        let nd = x.ndim();
        let mut idx: Vec<usize> = (0..nd - 2)
            .map(|d| {
                if x.shape()[d] == 1 {
                    0
                } else {
                    i[no - 2 - (nd - 2) + d]
                }
            })
            .collect();
        idx.extend([r, c]);
        x[IxDyn(&idx)]
    };
    ArrayD::from_shape_fn(IxDyn(out), |i| {
        let i: Vec<usize> = (0..no).map(|d| i[d]).collect();
        let i = i.as_slice();
        (0..k)
            .map(|t| at(a, i, i[no - 2], t) * at(b, i, t, i[no - 1]))
            .sum()
    })
}

fn reduce(op: Op, a: &ArrayD<f64>, axes: &[usize], keepdims: bool) -> ArrayD<f64> {
    let mut out = a.clone();
    for ax in axes.iter().rev() {
        out = match op {
            Op::Sum => out.sum_axis(Axis(*ax)),
            Op::Prod => out.fold_axis(Axis(*ax), 1.0, |x, y| x * y),
            Op::Min => out.fold_axis(Axis(*ax), f64::INFINITY, |x, y| {
                if x.is_nan() || y.is_nan() {
                    f64::NAN
                } else {
                    x.min(*y)
                }
            }),
            _ => out.fold_axis(Axis(*ax), f64::NEG_INFINITY, |x, y| {
                if x.is_nan() || y.is_nan() {
                    f64::NAN
                } else {
                    x.max(*y)
                }
            }),
        };
    }
    if keepdims {
        for ax in axes {
            out.insert_axis_inplace(Axis(*ax));
        }
    }
    out
}

/// Evaluates every output of `graph`.
pub fn evaluate(graph: &TileableGraph) -> Vec<ArrayD<f64>> {
    let mut values: Vec<ArrayD<f64>> = Vec::new();
    for node in &graph.nodes {
        let ins: Vec<&ArrayD<f64>> = node.inputs.iter().map(|i| &values[i.index()]).collect();
        let v = match (&node.op, &node.args) {
            (Op::Rand | Op::Randn, OpArgs::Create { fill, shape, chunk }) => {
                random(fill, shape, chunk)
            }
            (
                _,
                OpArgs::Create {
                    fill: Fill::Const { value },
                    shape,
                    ..
                },
            ) => ArrayD::from_elem(IxDyn(shape), value.as_f64()),
            (
                _,
                OpArgs::Create {
                    fill:
                        Fill::Range {
                            start, step, end, ..
                        },
                    shape,
                    ..
                },
            ) => {
                let (a, s) = (start.as_f64(), step.as_f64());
                let mut out = ArrayD::from_shape_fn(IxDyn(shape), |i| a + s * i[0] as f64);
                if let Some((at, v)) = end {
                    out[[*at as usize].as_slice()] = v.as_f64();
                }
                out
            }
            (Op::AsType, OpArgs::Cast { dtype }) => ins[0].mapv(|x| round_to(x, *dtype)),
            (Op::Neg, _) => ins[0].mapv(|x| -x),
            (Op::Abs, _) => ins[0].mapv(f64::abs),
            (Op::Sqrt, _) => ins[0].mapv(f64::sqrt),
            (Op::Exp, _) => ins[0].mapv(f64::exp),
            (Op::Log, _) => ins[0].mapv(f64::ln),
            (Op::Sin, _) => ins[0].mapv(f64::sin),
            (Op::Cos, _) => ins[0].mapv(f64::cos),
            // `~`: logical not of a bool, two's complement not of an integer.
            (Op::Invert, _) if node.dtype == DType::Bool => {
                ins[0].mapv(|x| (x == 0.0) as u8 as f64)
            }
            (Op::Invert, _) => ins[0].mapv(|x| !(x as i64) as f64),
            (op, OpArgs::Scalar { value, scalar_left }) => {
                let s = ArrayD::from_elem(IxDyn(&[]), value.as_f64());
                if *scalar_left {
                    binary(*op, &s, ins[0])
                } else {
                    binary(*op, ins[0], &s)
                }
            }
            (op, OpArgs::None) if op.family() == ares_core::ops::Family::Binary => {
                binary(*op, ins[0], ins[1])
            }
            (op, OpArgs::Reduce { axes, keepdims }) => reduce(*op, ins[0], axes, *keepdims),
            (
                Op::Var,
                OpArgs::Moments {
                    axes,
                    keepdims,
                    ddof,
                },
            ) => {
                // The textbook two-pass formula on the whole array.
                let n: usize = axes.iter().map(|a| ins[0].shape()[*a]).product();
                let mean = reduce(Op::Sum, ins[0], axes, true) / n as f64;
                let dev = ins[0] - &mean;
                let squares = reduce(Op::Sum, &(&dev * &dev), axes, *keepdims);
                squares / (n as f64 - *ddof as f64).max(0.0)
            }
            (Op::Matmul, _) => matmul(ins[0], ins[1], &node.shape),
            (Op::Slice, OpArgs::Slice(dims)) => {
                // Gather element by element from the global indices.
                let axes: Vec<Vec<usize>> = dims
                    .iter()
                    .map(|d| match *d {
                        DimIndex::Index(i) => vec![i],
                        DimIndex::Range { start, step, len } => (0..len)
                            .map(|t| (start as isize + step * t as isize) as usize)
                            .collect(),
                    })
                    .collect();
                let shape: Vec<usize> = dims
                    .iter()
                    .zip(&axes)
                    .filter(|(d, _)| matches!(d, DimIndex::Range { .. }))
                    .map(|(_, a)| a.len())
                    .collect();
                let full: Vec<usize> = axes.iter().map(|a| a.len()).collect();
                let gathered = ArrayD::from_shape_fn(IxDyn(&full), |i| {
                    let src: Vec<usize> = (0..full.len()).map(|d| axes[d][i[d]]).collect();
                    ins[0][IxDyn(&src)]
                });
                gathered.into_shape_with_order(IxDyn(&shape)).unwrap()
            }
            (Op::Transpose, OpArgs::Transpose(perm)) => ins[0]
                .clone()
                .permuted_axes(IxDyn(perm))
                .as_standard_layout()
                .into_owned(),
            (Op::Concatenate, OpArgs::Concat { axis }) => {
                let views: Vec<_> = ins.iter().map(|a| a.view()).collect();
                concatenate(Axis(*axis), &views).unwrap()
            }
            (Op::Rechunk, _) => ins[0].clone(),
            (Op::Reshape, OpArgs::Reshape(shape)) => ins[0]
                .as_standard_layout()
                .into_owned()
                .into_shape_with_order(IxDyn(shape))
                .unwrap(),
            other => panic!("reference cannot evaluate {other:?}"),
        };
        // Integer and bool results are exact values of their dtype.
        let v = if node.dtype == DType::F64 {
            v
        } else {
            v.mapv(|x| round_to(x, node.dtype))
        };
        values.push(v);
    }
    graph
        .outputs
        .iter()
        .map(|o| values[o.index()].clone())
        .collect()
}

#[allow(dead_code)]
pub fn scalar(x: f64) -> Scalar {
    Scalar::F64(x)
}
