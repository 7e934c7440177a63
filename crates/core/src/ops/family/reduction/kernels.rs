//! Reduction, scan and combine kernels, each written once over the row's [`Fold`].
//!
//! A reduction map keeps or drops the reduced axes as its arguments say; `combine` folds
//! same-shaped partials elementwise with the same fold and then drops the reduced axes if
//! this is the last level of the tree. `min`/`max` propagate NaN, as numpy does.

use super::monoid::{Fold, FoldVisitor, Monoid};
use super::reduction_dtype;
use crate::array::DType;
use crate::array::{ArrayData, Complex64};
use crate::kernels::{kerr, KResult};
use crate::ops::Op;
use ndarray::{ArrayD, Axis, IxDyn, Zip};

/// Folds `axes` (ascending) of `a` with `f` from `init`; a reduction never copies its input.
///
/// How each axis is folded matters more than the fold itself: ndarray's `fold_axis` checks
/// shapes and layouts once per sub-array, which is free on a leading axis and ruinous on the
/// last one, where the sub-arrays are single elements (a 1-D int64 `sum` spent 65% of its time
/// there). So every axis at once folds the elements in memory order, the last axis folds each
/// contiguous lane, and only the other axes go through `fold_axis`. The order of the additions
/// along an axis is the same either way.
fn fold_axes<T: Copy>(
    a: &ArrayD<T>,
    axes: &[usize],
    keepdims: bool,
    init: T,
    f: impl Fn(T, T) -> T + Copy,
) -> ArrayD<T> {
    let fold = |acc: T, x: &T| f(acc, *x);
    let mut out = if !axes.is_empty() && axes.len() == a.ndim() {
        let v = match a.as_slice() {
            Some(s) => s.iter().fold(init, fold),
            None => a.iter().fold(init, fold),
        };
        ArrayD::from_elem(IxDyn(&[]), v)
    } else {
        let mut out: Option<ArrayD<T>> = None;
        for &ax in axes.iter().rev() {
            let view = out.as_ref().map_or_else(|| a.view(), |o| o.view());
            out = Some(if ax + 1 == view.ndim() {
                view.map_axis(Axis(ax), |lane| lane.iter().fold(init, fold))
            } else {
                view.fold_axis(Axis(ax), init, |acc, x| f(*acc, *x))
            });
        }
        out.unwrap_or_else(|| a.clone())
    };
    if keepdims {
        for ax in axes {
            out.insert_axis_inplace(Axis(*ax));
        }
    }
    out
}

/// The fold of a reduction over axes, or an error for any other op.
fn monoid(op: Op) -> KResult<Monoid> {
    match super::fold(op).or_else(|| super::scan(op)) {
        Some(row) => Ok(row.monoid),
        None => kerr(format!("{op} is not a reduction")),
    }
}

/// A reduction map of one chunk, generic over its fold.
struct Reduce<'a> {
    a: &'a ArrayData,
    axes: &'a [usize],
    keepdims: bool,
}

impl FoldVisitor for Reduce<'_> {
    type Out = KResult<ArrayData>;
    fn visit<F: Fold>(self) -> KResult<ArrayData> {
        let Reduce { a, axes, keepdims } = self;
        Ok(match a {
            ArrayData::F64(x) if axes.is_empty() => {
                // NumPy starts every fold from the identity, so a sum turns -0.0 into +0.0.
                ArrayData::F64(x.mapv(|v| F::f64(F::F64, v)))
            }
            ArrayData::F64(x) if axes.len() == x.ndim() => {
                // An empty chunk (a zero-length piece of a concatenation) contributes the
                // identity; the tensor-level check refused reductions with no element at all.
                let shape: Vec<usize> = if keepdims { vec![1; x.ndim()] } else { vec![] };
                ArrayData::F64(ArrayD::from_elem(IxDyn(&shape), F::whole(x)))
            }
            ArrayData::F64(x) => ArrayData::F64(fold_axes(x, axes, keepdims, F::F64, F::f64)),
            ArrayData::I64(x) => ArrayData::I64(fold_axes(x, axes, keepdims, F::I64, F::i64)),
            ArrayData::Bool(x) => ArrayData::Bool(fold_axes(x, axes, keepdims, F::BOOL, F::bool)),
            ArrayData::U64(x) => ArrayData::U64(fold_axes(x, axes, keepdims, F::U64, F::u64)),
            other => return crate::kernels::not_widened(other.dtype()),
        })
    }
}

/// One step of a complex fold.
type ComplexStep = fn(Complex64, Complex64) -> Complex64;

/// The fold of complex values: `sum` and `prod` only (complex numbers have no order; the
/// tensor API refuses the other reductions of a complex tensor before they are built).
fn complex_fold(op: Op) -> KResult<(Complex64, ComplexStep)> {
    match monoid(op)? {
        Monoid::Add => Ok((Complex64::new(0.0, 0.0), |a, b| a + b)),
        Monoid::Mul => Ok((Complex64::new(1.0, 0.0), |a, b| a * b)),
        _ => kerr(format!("{op} is not defined for complex values")),
    }
}

/// The reduction `op` (a row of the table) of one chunk over `axes`.
pub fn reduce(op: Op, a: &ArrayData, axes: &[usize], keepdims: bool) -> KResult<ArrayData> {
    if let ArrayData::C128(x) = a {
        let (init, f) = complex_fold(op)?;
        return Ok(ArrayData::C128(fold_axes(x, axes, keepdims, init, f)));
    }
    let m = monoid(op)?;
    let widened;
    let a = match a {
        // Bools fold as int64 where the result widens (`sum` counts), as NumPy's do.
        ArrayData::Bool(x) if reduction_dtype(op, DType::Bool) == DType::I64 => {
            widened = ArrayData::I64(x.mapv(i64::from));
            &widened
        }
        _ => a,
    };
    m.visit(Reduce { a, axes, keepdims })
}

/// A running fold along an axis of one chunk.
struct Scan<'a>(&'a ArrayData, Axis);

impl FoldVisitor for Scan<'_> {
    type Out = ArrayData;
    fn visit<F: Fold>(self) -> ArrayData {
        let Scan(a, ax) = self;
        match a.clone() {
            ArrayData::F64(mut x) => {
                x.accumulate_axis_inplace(ax, |p, c| *c = F::f64(*p, *c));
                ArrayData::F64(x)
            }
            other => {
                let ArrayData::I64(mut x) = other.cast(DType::I64) else {
                    unreachable!("cast to int64")
                };
                x.accumulate_axis_inplace(ax, |p, c| *c = F::i64(*p, *c));
                ArrayData::I64(x)
            }
        }
    }
}

/// Running fold (`cumsum`, `cumprod`) along `axis` inside one chunk (bools and integers in
/// int64, as in NumPy; uint64's wrapping sums and products are int64's bits, cast back by
/// the caller); tiling folds in the carry of the chunks before it.
pub fn scan(op: Op, a: &ArrayData, axis: usize) -> KResult<ArrayData> {
    if axis >= a.shape().len() {
        return kerr(format!(
            "axis {axis} is out of bounds for a chunk of {:?}",
            a.shape()
        ));
    }
    Ok(monoid(op)?.visit(Scan(a, Axis(axis))))
}

fn fold_into<T: Copy>(acc: &mut ArrayD<T>, x: &ArrayD<T>, f: impl Fn(T, T) -> T) -> KResult<()> {
    if acc.shape() != x.shape() {
        return kerr(format!(
            "partials have different shapes {:?} and {:?}",
            acc.shape(),
            x.shape()
        ));
    }
    Zip::from(acc).and(x).for_each(|a, b| *a = f(*a, *b));
    Ok(())
}

/// Folds partials with `op`, then removes `axes` unless `keepdims`.
pub fn combine(
    op: Op,
    inputs: &[&ArrayData],
    axes: &[usize],
    keepdims: bool,
) -> KResult<ArrayData> {
    let Some(first) = inputs.first() else {
        return kerr("combine of no partials");
    };
    if let ArrayData::C128(a) = first {
        let (_, f) = complex_fold(op)?;
        let mut acc = a.clone();
        for x in &inputs[1..] {
            let ArrayData::C128(b) = x else {
                return kerr(format!(
                    "partials of different dtypes complex128 and {}",
                    x.dtype()
                ));
            };
            fold_into(&mut acc, b, f)?;
        }
        let acc = ArrayData::C128(acc);
        return if keepdims || axes.is_empty() {
            Ok(acc)
        } else {
            drop_axes(acc, axes)
        };
    }
    let acc = match fold_contiguous(op, inputs) {
        Some(acc) => acc,
        None => fold_pairwise(op, first, &inputs[1..])?,
    };
    if keepdims || axes.is_empty() {
        return Ok(acc);
    }
    drop_axes(acc, axes)
}

/// Partials of one dtype and shape, all in standard layout (the usual case): folded in one
/// pass over memory, block by block, instead of a copy of the first and a read-modify-write
/// pass over the accumulator per further partial (a tree add of four 8 MB matmul blocks moved
/// 88 MB this way against 40 MB). The additions happen in the same order, `((a + b) + c) + d`,
/// so the result is bit-identical.
fn fold_contiguous(op: Op, inputs: &[&ArrayData]) -> Option<ArrayData> {
    fn slices<'a, T>(
        inputs: &[&'a ArrayData],
        get: impl Fn(&'a ArrayData) -> Option<&'a ArrayD<T>>,
    ) -> Option<(Vec<&'a [T]>, &'a [usize])> {
        let first = get(inputs[0])?;
        let parts = inputs
            .iter()
            .map(|x| get(x).filter(|a| a.shape() == first.shape())?.as_slice())
            .collect::<Option<Vec<_>>>()?;
        Some((parts, first.shape()))
    }
    fn blocks<T: Copy>(parts: &[&[T]], f: impl Fn(T, T) -> T) -> Vec<T> {
        const BLOCK: usize = 2048;
        let mut out = parts[0].to_vec();
        for start in (0..out.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(out.len());
            let acc = &mut out[start..end];
            for part in &parts[1..] {
                for (a, b) in acc.iter_mut().zip(&part[start..end]) {
                    *a = f(*a, *b);
                }
            }
        }
        out
    }
    fn array<T>(shape: &[usize], v: Vec<T>) -> Option<ArrayD<T>> {
        ArrayD::from_shape_vec(IxDyn(shape), v).ok()
    }
    struct Contiguous<'a, 'b>(&'b [&'a ArrayData]);
    impl FoldVisitor for Contiguous<'_, '_> {
        type Out = Option<ArrayData>;
        fn visit<F: Fold>(self) -> Option<ArrayData> {
            let inputs = self.0;
            match inputs[0] {
                ArrayData::F64(_) => {
                    let (parts, shape) = slices(inputs, |x| match x {
                        ArrayData::F64(a) => Some(a),
                        _ => None,
                    })?;
                    array(shape, blocks(&parts, F::f64)).map(ArrayData::F64)
                }
                ArrayData::I64(_) => {
                    let (parts, shape) = slices(inputs, |x| match x {
                        ArrayData::I64(a) => Some(a),
                        _ => None,
                    })?;
                    array(shape, blocks(&parts, F::i64)).map(ArrayData::I64)
                }
                ArrayData::U64(_) => {
                    let (parts, shape) = slices(inputs, |x| match x {
                        ArrayData::U64(a) => Some(a),
                        _ => None,
                    })?;
                    array(shape, blocks(&parts, F::u64)).map(ArrayData::U64)
                }
                _ => None,
            }
        }
    }
    monoid(op).ok()?.visit(Contiguous(inputs))
}

/// The general fold: a copy of `first`, then each further partial folded into it.
fn fold_pairwise(op: Op, first: &ArrayData, rest: &[&ArrayData]) -> KResult<ArrayData> {
    struct Pairwise<'a, 'b>(&'b ArrayData, &'b [&'a ArrayData]);
    impl FoldVisitor for Pairwise<'_, '_> {
        type Out = KResult<ArrayData>;
        fn visit<F: Fold>(self) -> KResult<ArrayData> {
            let mut acc = self.0.clone();
            for x in self.1 {
                match (&mut acc, x) {
                    (ArrayData::F64(a), ArrayData::F64(b)) => fold_into(a, b, F::f64)?,
                    (ArrayData::I64(a), ArrayData::I64(b)) => fold_into(a, b, F::i64)?,
                    (ArrayData::Bool(a), ArrayData::Bool(b)) => fold_into(a, b, F::bool)?,
                    (ArrayData::U64(a), ArrayData::U64(b)) => fold_into(a, b, F::u64)?,
                    (a, b) => {
                        return kerr(format!(
                            "partials of different dtypes {} and {}",
                            a.dtype(),
                            b.dtype()
                        ))
                    }
                }
            }
            Ok(acc)
        }
    }
    monoid(op)?.visit(Pairwise(first, rest))
}

/// The last level of a tree: the reduced axes (length 1 by now) go.
fn drop_axes(acc: ArrayData, axes: &[usize]) -> KResult<ArrayData> {
    Ok(crate::map_array!(acc, |a| drop_unit_axes(a, axes)?))
}

/// Removes `axes` (each of length 1) from `a` in any memory layout, without a copy.
///
/// A partial is not always in standard layout: an elementwise result over broadcast operands
/// can come out in Fortran order, and a reduction keeps its input's order. Reshaping such an
/// array (`into_shape_with_order`) fails, while indexing each axis at 0 only drops a stride.
pub(crate) fn drop_unit_axes<T>(mut a: ArrayD<T>, axes: &[usize]) -> KResult<ArrayD<T>> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for &ax in sorted.iter().rev() {
        if a.shape().get(ax) != Some(&1) {
            return kerr(format!(
                "cannot drop reduced axis {ax} of a partial of shape {:?}",
                a.shape()
            ));
        }
        a.index_axis_inplace(Axis(ax), 0);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f64s(shape: &[usize], v: Vec<f64>) -> ArrayData {
        ArrayData::F64(ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
    }

    fn same(a: &ArrayData, b: &ArrayData) -> bool {
        a.shape() == b.shape()
            && a.iter_f64()
                .zip(b.iter_f64())
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    }

    proptest! {
        /// The one-pass fold of contiguous partials is bit-identical to the pairwise one,
        /// for every op, NaNs and signed zeros included, over more than one block.
        #[test]
        fn contiguous_fold_equals_the_pairwise_fold(
            parts in 1usize..6,
            len in 0usize..5000,
            seed in any::<u64>(),
        ) {
            let value = |p: usize, i: usize| {
                let h = (seed ^ (p as u64 * 0x9e37_79b9) ^ (i as u64).wrapping_mul(0x2545_f491))
                    .wrapping_mul(0x5851_f42d_4c95_7f2d) >> 40;
                match h % 50 {
                    0 => f64::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    _ => h as f64 / 7.0 - 1e6,
                }
            };
            let inputs: Vec<ArrayData> = (0..parts)
                .map(|p| f64s(&[len, 1], (0..len).map(|i| value(p, i)).collect()))
                .collect();
            let refs: Vec<&ArrayData> = inputs.iter().collect();
            for op in super::super::FOLDS.iter().map(|row| row.op) {
                let fast = fold_contiguous(op, &refs).unwrap();
                let slow = fold_pairwise(op, refs[0], &refs[1..]).unwrap();
                prop_assert!(same(&fast, &slow), "{op}");
                let ints: Vec<ArrayData> = inputs.iter().map(|a| a.clone().cast(crate::array::DType::I64)).collect();
                let irefs: Vec<&ArrayData> = ints.iter().collect();
                prop_assert_eq!(fold_contiguous(op, &irefs).unwrap(), fold_pairwise(op, irefs[0], &irefs[1..]).unwrap());
            }
        }
    }

    #[test]
    fn mixed_layouts_and_shapes_take_the_general_fold() {
        let a = f64s(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let ArrayData::F64(x) = &a else {
            unreachable!()
        };
        // The same values in Fortran order.
        let f = ArrayData::F64(x.t().as_standard_layout().into_owned().reversed_axes());
        assert!(
            fold_contiguous(Op::Sum, &[&a, &f]).is_none(),
            "Fortran layout"
        );
        let sum = combine(Op::Sum, &[&a, &f, &a], &[1], true).unwrap();
        assert_eq!(sum, f64s(&[2, 3], vec![3.0, 6.0, 9.0, 12.0, 15.0, 18.0]));
        let other = f64s(&[3, 2], vec![0.0; 6]);
        assert!(combine(Op::Sum, &[&a, &other], &[], true).is_err());
        let dropped = combine(Op::Sum, &[&f64s(&[1, 2], vec![1.0, 2.0])], &[0], false).unwrap();
        assert_eq!(dropped, f64s(&[2], vec![1.0, 2.0]));
    }

    #[test]
    fn the_last_level_drops_reduced_axes_of_a_partial_in_any_layout() {
        use ndarray::ShapeBuilder;
        // A (2, 3, 1) partial in Fortran order, as a reduction of an elementwise result over
        // broadcast operands leaves it.
        let values: Vec<f64> = (0..6).map(f64::from).collect();
        let fortran = ArrayD::from_shape_vec(IxDyn(&[2, 3, 1]).f(), values).unwrap();
        let want = f64s(&[2, 3], vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
        let part = ArrayData::F64(fortran.clone());
        assert_eq!(combine(Op::Sum, &[&part], &[2], false).unwrap(), want);
        assert_eq!(
            combine(Op::Max, &[&part, &part], &[2], false).unwrap(),
            want
        );
        let across = ArrayData::F64(fortran.permuted_axes(IxDyn(&[2, 0, 1])));
        assert_eq!(combine(Op::Min, &[&across], &[0], false).unwrap(), want);
        assert!(
            combine(Op::Sum, &[&part], &[1], false).is_err(),
            "axis of length 3"
        );
    }
}
