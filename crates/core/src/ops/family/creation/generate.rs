//! Creation as a stream of float64 blocks, for FUSE nodes that start with a creation step.
//!
//! Why: `mean(rand((20000, 5000), chunk=(2000, 5000)), axis=0)` fuses into
//! `FUSE[rand, sum]` per chunk. Generating the whole 80 MB chunk and then folding it costs
//! 80 MB per busy slot (plus the allocator's retention of freed chunks: a third chunk at
//! the peak) and a pass over fresh memory; generating 2,048 values at a time into an L1
//! buffer and folding them at once costs 16 KB and no memory traffic. The values are the
//! ones [`super::kernels::fill`] produces, in the same C order and from the same per-chunk
//! seed, so streaming changes no result: the unit tests compare both, block boundaries
//! falling anywhere.
//!
//! Only fills whose values ride as float64 lanes stream: uniform and normal random, float64
//! and bool constants, float ranges. int64 constants and ranges are made whole as before.

use super::uniform::Uniform;
use crate::array::{DType, Scalar};
use crate::ops::Fill;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A creation step's values, produced block after block in C order.
pub enum Stream {
    Uniform(Box<Uniform>),
    Normal(Box<Xoshiro256PlusPlus>),
    Const(f64),
    Range {
        start: f64,
        step: f64,
        /// Position of the next value in the whole range (the chunk's offset, then on).
        next: u64,
        end: Option<(u64, f64)>,
    },
}

impl Stream {
    /// The stream of `fill` and the dtype of its values, or `None` when the values are not
    /// float64 lanes (int64 constants and ranges).
    pub fn new(fill: &Fill) -> Option<(Stream, DType)> {
        Some(match *fill {
            Fill::Uniform { seed } => (Stream::Uniform(Box::new(Uniform::new(seed))), DType::F64),
            Fill::Normal { seed } => (
                Stream::Normal(Box::new(Xoshiro256PlusPlus::seed_from_u64(seed))),
                DType::F64,
            ),
            Fill::Const {
                value: Scalar::F64(x),
            } => (Stream::Const(x), DType::F64),
            Fill::Const {
                value: Scalar::Bool(b),
            } => (Stream::Const(b as u8 as f64), DType::Bool),
            Fill::Const { .. } => return None,
            Fill::Range {
                start,
                step,
                offset,
                end,
            } => match (start, step) {
                (Scalar::F64(_), _) | (_, Scalar::F64(_)) => (
                    Stream::Range {
                        start: start.as_f64(),
                        step: step.as_f64(),
                        next: offset,
                        end: end.map(|(at, v)| (at, v.as_f64())),
                    },
                    DType::F64,
                ),
                _ => return None,
            },
        })
    }

    /// Writes the next `dst.len()` values.
    pub fn fill(&mut self, dst: &mut [f64]) {
        match self {
            Stream::Uniform(values) => values.fill(dst),
            Stream::Normal(rng) => fill_normal(rng, dst),
            Stream::Const(x) => dst.fill(*x),
            Stream::Range {
                start,
                step,
                next,
                end,
            } => {
                let first = *next;
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = *start + *step * (first + i as u64) as f64;
                }
                if let Some((at, value)) = end {
                    if let Some(j) = at.checked_sub(first).filter(|j| *j < dst.len() as u64) {
                        dst[j as usize] = *value;
                    }
                }
                *next += dst.len() as u64;
            }
        }
    }
}

/// The next `dst.len()` standard normal values of `rng`. A function of its own, not inlined:
/// the loop's code is then the same in every build (inlined into [`Stream::fill`]'s match,
/// two builds of the same source drew 22 % apart), and the state stays in registers (a
/// copy, not the box: 12 % faster).
#[inline(never)]
pub fn fill_normal(rng: &mut Xoshiro256PlusPlus, dst: &mut [f64]) {
    let mut local = rng.clone();
    for d in dst.iter_mut() {
        *d = StandardNormal.sample(&mut local);
    }
    *rng = local;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::ArrayData;

    /// Every streamable fill, in blocks of awkward sizes, equals the whole-chunk kernel.
    #[test]
    fn streamed_values_equal_the_creation_kernel_bit_for_bit() {
        let fills = [
            Fill::Uniform { seed: 7 },
            Fill::Normal { seed: 9 },
            Fill::Const {
                value: Scalar::F64(-2.5),
            },
            Fill::Const {
                value: Scalar::Bool(true),
            },
            Fill::Range {
                start: Scalar::F64(0.5),
                step: Scalar::F64(0.1),
                offset: 1000,
                end: Some((1500, Scalar::F64(3.0))),
            },
        ];
        for fill in &fills {
            let whole: Vec<f64> = super::super::kernels::fill(fill, &[37, 29])
                .unwrap()
                .iter_f64()
                .collect();
            for block in [1, 7, 64, 2048] {
                let (mut stream, _) = Stream::new(fill).expect("streamable");
                let mut got = vec![0.0; whole.len()];
                for part in got.chunks_mut(block) {
                    stream.fill(part);
                }
                let same = got
                    .iter()
                    .zip(&whole)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{fill:?} in blocks of {block}");
            }
        }
    }

    /// `FUSE[rand, (x * 2 - 1), reduce]` streamed equals the creation kernel, the lanes and the
    /// reduction kernel run one after the other, for every op and every set of axes (sums
    /// are grouped differently on the two paths, so the tolerance).
    #[test]
    fn streamed_fuse_nodes_equal_the_step_by_step_kernels() {
        use crate::ids::ArgsIdx;
        use crate::ops::{FuseStep, Op, OpArgs};
        use smallvec::SmallVec;
        let shape: crate::array::Shape = [3, 5, 4].into_iter().collect();
        let fill = Fill::Uniform { seed: 3 };
        for op in crate::ops::family::reduction::FOLDS
            .iter()
            .map(|row| row.op)
        {
            for axes in [
                vec![0],
                vec![1],
                vec![2],
                vec![0, 2],
                vec![1, 2],
                vec![0, 1, 2],
            ] {
                for keepdims in [false, true] {
                    let axes: SmallVec<[usize; 4]> = axes.iter().copied().collect();
                    let table = vec![
                        OpArgs::Fill {
                            fill,
                            shape: shape.clone(),
                        },
                        OpArgs::Scalar {
                            value: Scalar::F64(2.0),
                            scalar_left: false,
                        },
                        OpArgs::Scalar {
                            value: Scalar::F64(1.0),
                            scalar_left: false,
                        },
                        OpArgs::Reduce {
                            axes: axes.clone(),
                            keepdims,
                        },
                    ];
                    // Chunk 5 of its op: generated with that chunk's seed.
                    let step = |op, i| FuseStep {
                        op,
                        args: ArgsIdx(i),
                        position: if i == 0 { 5 } else { 0 },
                    };
                    let steps = [
                        step(Op::Rand, 0),
                        step(Op::Mul, 1),
                        step(Op::Sub, 2),
                        step(op, 3),
                    ];
                    let got = crate::kernels::fused::run_fused(&steps, &table, &[]).unwrap();
                    let chunk_fill = Fill::Uniform {
                        seed: crate::ops::chunk_seed(3, 5),
                    };
                    let x = super::super::kernels::fill(&chunk_fill, &shape).unwrap();
                    let ArrayData::F64(x) = x else { unreachable!() };
                    let y = ArrayData::F64(x.mapv(|v| v * 2.0 - 1.0));
                    let want =
                        crate::ops::family::reduction::kernels::reduce(op, &y, &axes, keepdims)
                            .unwrap();
                    assert_eq!(got.shape(), want.shape(), "{op} {axes:?}");
                    for (g, w) in got.iter_f64().zip(want.iter_f64()) {
                        assert!(
                            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                            "{op} {axes:?}: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn integer_fills_are_made_whole() {
        let int = Fill::Const {
            value: Scalar::I64(3),
        };
        assert!(Stream::new(&int).is_none());
        let range = Fill::Range {
            start: Scalar::I64(0),
            step: Scalar::I64(2),
            offset: 0,
            end: None,
        };
        assert!(Stream::new(&range).is_none());
        let ArrayData::Bool(_) = super::super::kernels::fill(
            &Fill::Const {
                value: Scalar::Bool(true),
            },
            &[2],
        )
        .unwrap() else {
            panic!("bool constants are bool chunks")
        };
    }
}
