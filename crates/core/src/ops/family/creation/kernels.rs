//! Creation kernels. Random chunks use Xoshiro256++ seeded with the chunk's own seed (uniform
//! values from eight interleaved generators, [`super::uniform`]): fast, and stable across
//! platforms and versions, so a seed always gives the same numbers.

use super::uniform::Uniform;
use crate::array::{numel, ArrayData, Scalar};
use crate::kernels::{kerr, KResult};
use crate::ops::Fill;
use ndarray::{ArrayD, IxDyn};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn from_vec<T>(shape: &[usize], v: Vec<T>) -> KResult<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(shape), v).or_else(|e| kerr(format!("bad chunk shape: {e}")))
}

pub fn fill(fill: &Fill, shape: &[usize]) -> KResult<ArrayData> {
    let n = numel(shape);
    Ok(match *fill {
        Fill::Uniform { seed } => {
            let mut values = vec![0.0; n];
            Uniform::for_values(seed, n).fill(&mut values);
            ArrayData::F64(from_vec(shape, values)?)
        }
        Fill::Normal { seed } => {
            let mut values = vec![0.0; n];
            super::generate::fill_normal(&mut Xoshiro256PlusPlus::seed_from_u64(seed), &mut values);
            ArrayData::F64(from_vec(shape, values)?)
        }
        Fill::Const { value } => match value {
            Scalar::Bool(b) => ArrayData::Bool(ArrayD::from_elem(IxDyn(shape), b)),
            Scalar::I64(i) => ArrayData::I64(ArrayD::from_elem(IxDyn(shape), i)),
            Scalar::F64(x) => ArrayData::F64(ArrayD::from_elem(IxDyn(shape), x)),
        },
        Fill::Range {
            start,
            step,
            offset,
            end,
        } => match (start, step) {
            (Scalar::F64(_), _) | (_, Scalar::F64(_)) => {
                let (a, s) = (start.as_f64(), step.as_f64());
                let mut v: Vec<f64> = (0..n as u64).map(|i| a + s * (offset + i) as f64).collect();
                if let Some((at, value)) = end {
                    if let Some(x) = at.checked_sub(offset).and_then(|j| v.get_mut(j as usize)) {
                        *x = value.as_f64();
                    }
                }
                ArrayData::F64(from_vec(shape, v)?)
            }
            _ => {
                let (a, s) = (start.as_i64(), step.as_i64());
                let first = a.wrapping_add(s.wrapping_mul(offset as i64));
                let v = (0..n as i64).map(|i| first.wrapping_add(s.wrapping_mul(i)));
                ArrayData::I64(from_vec(shape, v.collect())?)
            }
        },
    })
}
