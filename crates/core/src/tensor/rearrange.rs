//! The array API's rearranging functions (and NumPy's), composed of primitive ops: `flip` is
//! a slice with step -1, `roll` two slices joined the other way round, `moveaxis` a
//! transpose, `tile` joins copies, `repeat` broadcasts a new axis and merges it, `diff`
//! subtracts two slices, `unstack` slices, `broadcast_arrays` and `meshgrid` broadcast,
//! `tril`/`triu`/`eye` compare two ranges, `take_along_axis` gathers flat positions.
//!
//! None of them needs a tiling rule or a kernel of its own, so fusion, the reference tests
//! and every executor already know them; each follows NumPy's rules for the result's shape
//! and dtype, and refuses what NumPy refuses with an error naming the argument.

use super::{concatenate, full, SliceArg, Tensor};
use crate::array::{fmt_shape, DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::infer::broadcast;
use crate::ops::{ChunkSpec, Op};

/// Most copies `tile` joins along one axis (each is an input of one concatenation).
const MAX_TILE_COPIES: i64 = 1 << 16;

/// One axis against a tensor of `ndim` dimensions (negative counts from the end).
fn axis_of(op: &'static str, axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(AresError::arg(
            op,
            format!("axis {axis} is out of bounds for a tensor of dimension {ndim}"),
        ));
    }
    Ok(a as usize)
}

/// `start:stop` along `axis` (full slices elsewhere).
fn range_along(axis: usize, start: Option<i64>, stop: Option<i64>) -> Vec<SliceArg> {
    let mut index = vec![SliceArg::FULL; axis + 1];
    index[axis] = SliceArg::Range {
        start,
        stop,
        step: None,
    };
    index
}

fn shape_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|d| *d as i64).collect()
}

/// `arange(n)` as int64, shaped to lie along `axis` of `ndim` dimensions.
fn positions(n: usize, axis: usize, ndim: usize) -> Result<Tensor> {
    let mut shape = vec![1i64; ndim];
    shape[axis] = n as i64;
    super::arange(
        Scalar::I64(0),
        Scalar::I64(n as i64),
        Scalar::I64(1),
        super::auto_chunk(&[n]),
    )?
    .reshape(&shape)
}

/// `col - row` for an `n` by `m` grid of int64 (the diagonal offset of every position).
fn diagonal_offsets(n: usize, m: usize) -> Result<Tensor> {
    let rows = positions(n, 0, 2)?;
    let cols = positions(m, 1, 2)?;
    cols.elementwise(Op::Sub, &rows)
}

impl Tensor {
    /// The elements in reverse order along `axes` (all of them with `None`).
    pub fn flip(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        let axes = self.normalize_axes("flip", axes)?;
        let index: Vec<SliceArg> = (0..self.ndim())
            .map(|d| match axes.contains(&d) {
                true => SliceArg::Range {
                    start: None,
                    stop: None,
                    step: Some(-1),
                },
                false => SliceArg::FULL,
            })
            .collect();
        self.slice(&index)
    }

    /// Elements shifted by `shifts` along `axes`, those past the end coming back at the
    /// start; without axes, of the flattened tensor (shape kept). One shift applies to every
    /// axis; an axis given twice is shifted twice, as NumPy does.
    pub fn roll(&self, shifts: &[i64], axes: Option<&[i64]>) -> Result<Tensor> {
        let Some(axes) = axes else {
            let [shift] = shifts else {
                return Err(AresError::arg(
                    "roll",
                    "without an axis, shift must be one integer",
                ));
            };
            let flat = self.reshape(&[-1])?;
            return flat.roll_axis(*shift, 0)?.reshape(&shape_i64(self.shape()));
        };
        let shifts: Vec<i64> = match shifts {
            [one] => vec![*one; axes.len()],
            many if many.len() == axes.len() => many.to_vec(),
            _ => {
                return Err(AresError::arg(
                    "roll",
                    format!(
                        "shift and axis must have the same length ({} and {})",
                        shifts.len(),
                        axes.len()
                    ),
                ))
            }
        };
        let mut out = self.clone();
        for (shift, axis) in shifts.iter().zip(axes) {
            let axis = axis_of("roll", *axis, self.ndim())?;
            out = out.roll_axis(*shift, axis)?;
        }
        Ok(out)
    }

    /// One axis rolled: `x[n-s:]` then `x[:n-s]` (`fftshift` shares it).
    pub(crate) fn roll_axis(&self, shift: i64, axis: usize) -> Result<Tensor> {
        let n = self.shape()[axis] as i64;
        let s = if n == 0 { 0 } else { shift.rem_euclid(n) };
        if s == 0 {
            return Ok(self.clone());
        }
        let tail = self.slice(&range_along(axis, Some(n - s), None))?;
        let head = self.slice(&range_along(axis, None, Some(n - s)))?;
        concatenate(&[tail, head], axis as i64)
    }

    /// The axes `source` moved to positions `destination`, the others kept in their order.
    pub fn moveaxis(&self, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        if source.len() != destination.len() {
            return Err(AresError::arg(
                "moveaxis",
                "source and destination must have the same number of elements",
            ));
        }
        let nd = self.ndim();
        let norm = |list: &[i64]| -> Result<Vec<usize>> {
            let axes: Vec<usize> = list
                .iter()
                .map(|a| axis_of("moveaxis", *a, nd))
                .collect::<Result<_>>()?;
            let mut sorted = axes.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(AresError::arg("moveaxis", "repeated axis"));
            }
            Ok(axes)
        };
        let (src, dst) = (norm(source)?, norm(destination)?);
        let mut order: Vec<usize> = (0..nd).filter(|d| !src.contains(d)).collect();
        let mut pairs: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
        pairs.sort_unstable();
        for (d, s) in pairs {
            order.insert(d, s);
        }
        self.transpose(Some(&order))
    }

    /// `reps` copies along each axis (axes of length 1 added in front to match `reps`, or
    /// ones in front of `reps` to match the tensor), as NumPy's `tile`.
    pub fn tile(&self, reps: &[i64]) -> Result<Tensor> {
        if let Some(r) = reps.iter().find(|r| **r < 0 || **r > MAX_TILE_COPIES) {
            return Err(AresError::arg(
                "tile",
                format!("repetitions must be in 0..={MAX_TILE_COPIES}, got {r}"),
            ));
        }
        let nd = self.ndim().max(reps.len());
        let mut shape = vec![1i64; nd - self.ndim()];
        shape.extend(shape_i64(self.shape()));
        let mut reps_full = vec![1i64; nd - reps.len()];
        reps_full.extend_from_slice(reps);
        let mut out = self.reshape(&shape)?;
        for (axis, r) in reps_full.into_iter().enumerate() {
            out = match r {
                1 => out,
                0 => out.slice(&range_along(axis, None, Some(0)))?,
                r => concatenate(&vec![out; r as usize], axis as i64)?,
            };
        }
        Ok(out)
    }

    /// Each element `repeats` times along `axis` (of the flattened tensor with `None`).
    pub fn repeat(&self, repeats: i64, axis: Option<i64>) -> Result<Tensor> {
        if repeats < 0 {
            return Err(AresError::arg(
                "repeat",
                format!("repeats may not contain negative values, got {repeats}"),
            ));
        }
        let (x, axis) = match axis {
            None => (self.reshape(&[-1])?, 0),
            Some(a) => (self.clone(), axis_of("repeat", a, self.ndim())?),
        };
        let mut wide: Vec<usize> = x.shape().to_vec();
        wide.insert(axis + 1, repeats as usize);
        let mut merged = shape_i64(x.shape());
        merged[axis] *= repeats;
        x.expand_dims(&[axis as i64 + 1])?
            .broadcast_to(&wide)?
            .reshape(&merged)
    }

    /// The `n`-th discrete difference along `axis`, after joining `prepend` before and
    /// `append` after it (`not_equal` for bools, as NumPy).
    pub fn diff(
        &self,
        n: i64,
        axis: i64,
        prepend: Option<&Tensor>,
        append: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.ndim() == 0 {
            return Err(AresError::arg(
                "diff",
                "diff requires input that is at least one dimensional",
            ));
        }
        if n < 0 {
            return Err(AresError::arg(
                "diff",
                format!("order must be non-negative but got {n}"),
            ));
        }
        let axis = axis_of("diff", axis, self.ndim())?;
        if n == 0 {
            // NumPy returns the input as it is, without prepend or append.
            return Ok(self.clone());
        }
        // A 0-d prepend/append is broadcast to one slice of the axis (NumPy's rule).
        let edge = |t: &Tensor| -> Result<Tensor> {
            if t.ndim() > 0 {
                return Ok(t.clone());
            }
            let mut shape = self.shape().to_vec();
            shape[axis] = 1;
            t.broadcast_to(&shape)
        };
        let mut parts = Vec::with_capacity(3);
        if let Some(p) = prepend {
            parts.push(edge(p)?);
        }
        parts.push(self.clone());
        if let Some(a) = append {
            parts.push(edge(a)?);
        }
        let mut out = match parts.len() {
            1 => self.clone(),
            _ => concatenate(&parts, axis as i64)?,
        };
        let op = match out.dtype() {
            DType::Bool => Op::Ne,
            _ => Op::Sub,
        };
        for _ in 0..n {
            if out.shape()[axis] == 0 {
                break;
            }
            let later = out.slice(&range_along(axis, Some(1), None))?;
            let earlier = out.slice(&range_along(axis, None, Some(-1)))?;
            out = later.elementwise(op, &earlier)?;
        }
        Ok(out)
    }

    /// The slices along `axis`, each without that axis.
    pub fn unstack(&self, axis: i64) -> Result<Vec<Tensor>> {
        let axis = axis_of("unstack", axis, self.ndim())?;
        (0..self.shape()[axis])
            .map(|i| {
                let mut index = vec![SliceArg::FULL; axis + 1];
                index[axis] = SliceArg::Index(i as i64);
                self.slice(&index)
            })
            .collect()
    }

    /// The lower (`upper` false: elements on and below diagonal `k`) or upper triangle (on
    /// and above it) of the last two axes, zeros elsewhere.
    pub fn triangle(&self, k: i64, upper: bool) -> Result<Tensor> {
        let name = if upper { "triu" } else { "tril" };
        if self.ndim() < 2 {
            return Err(AresError::arg(
                name,
                format!(
                    "needs at least 2 dimensions, got shape {}",
                    fmt_shape(self.shape())
                ),
            ));
        }
        let nd = self.ndim();
        let offsets = diagonal_offsets(self.shape()[nd - 2], self.shape()[nd - 1])?;
        let op = if upper { Op::Ge } else { Op::Le };
        let keep = offsets.binary_scalar(op, Scalar::I64(k), false)?;
        // A bool zero promotes to every dtype, so the dtype stays.
        let zero = full(&[], Scalar::Bool(false), 1)?;
        super::select(&keep, self, &zero)
    }

    /// `np.take_along_axis(self, indices, axis)`: the elements at `indices` (integers,
    /// negative ones from the end) along `axis`, the other axes broadcast together.
    pub fn take_along_axis(&self, indices: &Tensor, axis: i64) -> Result<Tensor> {
        let nd = self.ndim();
        if indices.ndim() != nd {
            return Err(AresError::arg(
                "take_along_axis",
                format!(
                    "indices and arr must have the same number of dimensions ({} and {nd})",
                    indices.ndim()
                ),
            ));
        }
        if !matches!(indices.dtype(), DType::I32 | DType::I64) {
            return Err(AresError::arg(
                "take_along_axis",
                format!("indices must be integers, got {}", indices.dtype()),
            ));
        }
        let axis = axis_of("take_along_axis", axis, nd)?;
        let mut base = self.shape().to_vec();
        base[axis] = 1;
        let mut want = indices.shape().to_vec();
        want[axis] = 1;
        let mut out_shape = broadcast("take_along_axis", &base, &want)?.to_vec();
        out_shape[axis] = indices.shape()[axis];
        let n = self.shape()[axis] as i64;
        let size = self.size() as i64;
        // Negative positions from the end; one out of range becomes a flat position past
        // the end, so the gather refuses it rather than read another row.
        let idx = indices.astype(DType::I64)?.broadcast_to(&out_shape)?;
        let wrapped = super::select(
            &idx.binary_scalar(Op::Lt, Scalar::I64(0), false)?,
            &idx.binary_scalar(Op::Add, Scalar::I64(n), false)?,
            &idx,
        )?;
        let bad = wrapped
            .binary_scalar(Op::Lt, Scalar::I64(0), false)?
            .logical_or(&wrapped.binary_scalar(Op::Ge, Scalar::I64(n), false)?)?;
        let past_end = full(&[], Scalar::I64(size), 1)?;
        let mut stride = 1i64;
        let mut flat: Option<Tensor> = None;
        for d in (0..nd).rev() {
            let term = if d == axis {
                let at = super::select(&bad, &past_end, &wrapped)?;
                Some(at.binary_scalar(Op::Mul, Scalar::I64(stride), false)?)
            } else if self.shape()[d] > 1 {
                let at = positions(out_shape[d], d, nd)?;
                Some(at.binary_scalar(Op::Mul, Scalar::I64(stride), false)?)
            } else {
                None
            };
            if let Some(term) = term {
                flat = Some(match flat {
                    None => term,
                    Some(f) => f.elementwise(Op::Add, &term)?,
                });
            }
            stride *= self.shape()[d] as i64;
        }
        let flat = flat
            .expect("the axis itself gives a term")
            .broadcast_to(&out_shape)?;
        self.take(&flat, None)
    }
}

/// Every tensor broadcast to their common shape.
pub fn broadcast_arrays(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut shape: Vec<usize> = Vec::new();
    for t in tensors {
        shape = broadcast("broadcast_arrays", &shape, t.shape())?.to_vec();
    }
    tensors.iter().map(|t| t.broadcast_to(&shape)).collect()
}

/// Coordinate grids from 1-D coordinate vectors (N-D ones are flattened, as NumPy):
/// `indexing` "xy" (Cartesian: the first two axes swapped) or "ij" (matrix).
pub fn meshgrid(tensors: &[Tensor], indexing: &str) -> Result<Vec<Tensor>> {
    let xy = match indexing {
        "xy" => true,
        "ij" => false,
        other => {
            return Err(AresError::arg(
                "meshgrid",
                format!("indexing must be 'xy' or 'ij', got {other:?}"),
            ))
        }
    };
    let n = tensors.len();
    let place = |i: usize| match (xy && n >= 2, i) {
        (true, 0) => 1,
        (true, 1) => 0,
        _ => i,
    };
    let mut shape = vec![0usize; n];
    for (i, t) in tensors.iter().enumerate() {
        shape[place(i)] = t.size();
    }
    tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut along = vec![1i64; n];
            along[place(i)] = t.size() as i64;
            t.reshape(&along)?.broadcast_to(&shape)
        })
        .collect()
}

/// An `n` by `m` matrix of `dtype` with ones on diagonal `k` and zeros elsewhere.
pub fn eye(n: usize, m: usize, k: i64, dtype: DType, chunk: ChunkSpec) -> Result<Tensor> {
    let ones = diagonal_offsets(n, m)?
        .binary_scalar(Op::Eq, Scalar::I64(k), false)?
        .astype(dtype)?;
    ones.rechunk(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tensor computed by the local executor, or its error.
    fn run(t: &Tensor) -> Result<Vec<f64>> {
        let results = crate::executor::compute(&[t], &Default::default(), 2)?;
        Ok(results[0].clone().to_f64().iter().copied().collect())
    }

    fn values(t: &Tensor) -> Vec<f64> {
        run(t).expect("runs")
    }

    fn ramp(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        super::super::arange(Scalar::I64(0), Scalar::I64(n as i64), Scalar::I64(1), 2)
            .and_then(|t| t.reshape(&shape_i64(shape)))
            .expect("a ramp")
    }

    #[test]
    fn flip_roll_and_moveaxis_rearrange() {
        let x = ramp(&[2, 3]);
        assert_eq!(values(&x.flip(None).unwrap()), [5., 4., 3., 2., 1., 0.]);
        assert_eq!(
            values(&x.flip(Some(&[1])).unwrap()),
            [2., 1., 0., 5., 4., 3.]
        );
        assert_eq!(
            values(&x.roll(&[1], None).unwrap()),
            [5., 0., 1., 2., 3., 4.]
        );
        assert_eq!(
            values(&x.roll(&[-1, 1], Some(&[1, 1])).unwrap()),
            [0., 1., 2., 3., 4., 5.]
        );
        assert_eq!(
            values(&x.roll(&[4], Some(&[-1])).unwrap()),
            [2., 0., 1., 5., 3., 4.]
        );
        let y = ramp(&[2, 3, 4]);
        assert_eq!(y.moveaxis(&[0], &[-1]).unwrap().shape(), &[3, 4, 2]);
        assert_eq!(y.moveaxis(&[0, 1], &[2, 0]).unwrap().shape(), &[3, 4, 2]);
        assert!(y.moveaxis(&[0, 0], &[1, 2]).is_err());
        assert!(x.roll(&[1, 2], Some(&[0])).is_err());
    }

    #[test]
    fn tile_repeat_and_diff_match_numpy() {
        let x = ramp(&[2, 2]);
        let t = x.tile(&[2]).unwrap();
        assert_eq!(t.shape(), &[2, 4]);
        assert_eq!(values(&t), [0., 1., 0., 1., 2., 3., 2., 3.]);
        assert_eq!(x.tile(&[2, 1, 0]).unwrap().shape(), &[2, 2, 0]);
        let r = x.repeat(2, Some(0)).unwrap();
        assert_eq!(values(&r), [0., 1., 0., 1., 2., 3., 2., 3.]);
        assert_eq!(
            values(&x.repeat(2, None).unwrap()),
            [0., 0., 1., 1., 2., 2., 3., 3.]
        );
        assert!(x.repeat(-1, None).is_err());
        let v = ramp(&[5]).elementwise(Op::Mul, &ramp(&[5])).unwrap();
        assert_eq!(
            values(&v.diff(1, -1, None, None).unwrap()),
            [1., 3., 5., 7.]
        );
        assert_eq!(values(&v.diff(2, 0, None, None).unwrap()), [2., 2., 2.]);
        let zero = full(&[], Scalar::I64(0), 1).unwrap();
        assert_eq!(
            values(&v.diff(1, 0, Some(&zero), None).unwrap()),
            [0., 1., 3., 5., 7.]
        );
        assert_eq!(v.diff(9, 0, None, None).unwrap().shape(), &[0]);
    }

    #[test]
    fn triangles_eye_and_grids() {
        let x = ramp(&[3, 3]).elementwise(Op::Add, &ramp(&[3, 3])).unwrap();
        let x = x.binary_scalar(Op::Add, Scalar::I64(1), false).unwrap();
        assert_eq!(
            values(&x.triangle(0, false).unwrap()),
            [1., 0., 0., 7., 9., 0., 13., 15., 17.]
        );
        assert_eq!(
            values(&x.triangle(1, true).unwrap()),
            [0., 3., 5., 0., 0., 11., 0., 0., 0.]
        );
        let e = eye(2, 3, 1, DType::F32, ChunkSpec::Uniform(2)).unwrap();
        assert_eq!(e.dtype(), DType::F32);
        assert_eq!(values(&e), [0., 1., 0., 0., 0., 1.]);
        let g = meshgrid(&[ramp(&[2]), ramp(&[3])], "xy").unwrap();
        assert_eq!(g[0].shape(), &[3, 2]);
        assert_eq!(values(&g[0]), [0., 1., 0., 1., 0., 1.]);
        assert_eq!(values(&g[1]), [0., 0., 1., 1., 2., 2.]);
        let b = broadcast_arrays(&[ramp(&[2, 1]), ramp(&[3])]).unwrap();
        assert_eq!(b[0].shape(), &[2, 3]);
        assert_eq!(values(&b[1]), [0., 1., 2., 0., 1., 2.]);
        let parts = ramp(&[2, 3]).unstack(1).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(values(&parts[2]), [2., 5.]);
    }

    #[test]
    fn take_along_axis_gathers_and_refuses_out_of_range() {
        let x = ramp(&[2, 3]);
        let idx = full(&[2, 1], Scalar::I64(-1), 1).unwrap();
        assert_eq!(values(&x.take_along_axis(&idx, 1).unwrap()), [2., 5.]);
        let order = x
            .binary_scalar(Op::Mul, Scalar::I64(-1), false)
            .unwrap()
            .sort_along(1, false, true)
            .unwrap();
        assert_eq!(
            values(&x.take_along_axis(&order, 1).unwrap()),
            [2., 1., 0., 5., 4., 3.]
        );
        let far = full(&[2, 1], Scalar::I64(3), 1).unwrap();
        let gathered = x.take_along_axis(&far, 1).unwrap();
        assert!(run(&gathered).is_err());
        assert!(x
            .take_along_axis(&full(&[2], Scalar::I64(0), 1).unwrap(), 1)
            .is_err());
    }
}
