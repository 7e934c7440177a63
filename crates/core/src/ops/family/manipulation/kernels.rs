//! Slicing, transposition, reshaping and block assembly of chunks. Outputs are always in
//! standard (C) layout so later kernels can read them as flat slices.

use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use crate::ops::DimIndex;
use ndarray::{concatenate, ArrayD, ArrayViewD, Axis, Ix1, Ix2, IxDyn, Slice};

fn slice_one<T: Clone>(a: &ArrayD<T>, dims: &[DimIndex]) -> KResult<ArrayD<T>> {
    if dims.len() != a.ndim() {
        return kerr(format!("{} indices for a {}-D chunk", dims.len(), a.ndim()));
    }
    for (d, idx) in dims.iter().enumerate() {
        let n = a.shape()[d];
        let ok = match *idx {
            DimIndex::Index(i) => i < n,
            DimIndex::Range { len: 0, .. } => true,
            DimIndex::Range { start, step, len } => {
                let last = start as i128 + step as i128 * (len as i128 - 1);
                start < n && last >= 0 && last < n as i128
            }
        };
        if !ok {
            return kerr(format!(
                "index {idx:?} out of bounds for axis {d} of length {n}"
            ));
        }
    }
    let view = a.slice_each_axis(|ax| match dims[ax.axis.index()] {
        DimIndex::Index(i) => Slice::new(i as isize, Some(i as isize + 1), 1),
        DimIndex::Range { len: 0, .. } => Slice::new(0, Some(0), 1),
        DimIndex::Range { start, step, len } if step > 0 => Slice::new(
            start as isize,
            Some((start + step as usize * (len - 1) + 1) as isize),
            step,
        ),
        DimIndex::Range { start, step, len } => {
            let lo = start - step.unsigned_abs() * (len - 1);
            Slice::new(lo as isize, Some(start as isize + 1), step)
        }
    });
    let mut view: ArrayViewD<T> = view;
    for (d, idx) in dims.iter().enumerate().rev() {
        if matches!(idx, DimIndex::Index(_)) {
            view = view.index_axis_move(Axis(d), 0);
        }
    }
    Ok(to_standard(view))
}

/// A C-order copy of a view. ndarray's generic copy steps a dynamic-rank index per element;
/// views of rank 1 and 2 (what strided slices of vectors and matrices give) are copied through
/// fixed-rank views, which step plain strides.
fn to_standard<T: Clone>(view: ArrayViewD<T>) -> ArrayD<T> {
    match view.ndim() {
        1 => view
            .clone()
            .into_dimensionality::<Ix1>()
            .map(|v| v.to_owned().into_dyn()),
        2 => view
            .clone()
            .into_dimensionality::<Ix2>()
            .map(|v| v.as_standard_layout().into_owned().into_dyn()),
        _ => Err(ndarray::ShapeError::from_kind(
            ndarray::ErrorKind::IncompatibleShape,
        )),
    }
    .unwrap_or_else(|_| view.as_standard_layout().into_owned())
}

pub fn slice(a: &ArrayData, dims: &[DimIndex]) -> KResult<ArrayData> {
    Ok(crate::map_array!(a, |x| slice_one(x, dims)?))
}

pub fn transpose(a: &ArrayData, perm: &[usize]) -> KResult<ArrayData> {
    if perm.len() != a.shape().len() {
        return kerr(format!(
            "permutation {perm:?} for a {}-D chunk",
            a.shape().len()
        ));
    }
    Ok(crate::map_array!(a, |x| to_standard(
        x.view().permuted_axes(IxDyn(perm))
    )))
}

pub fn reshape(a: &ArrayData, shape: &[usize]) -> KResult<ArrayData> {
    Ok(crate::map_array!(a, |x| x
        .as_standard_layout()
        .into_owned()
        .into_shape_with_order(IxDyn(shape))
        .map_err(|e| crate::kernels::KernelError(format!(
            "cannot reshape {:?} to {shape:?}: {e}",
            x.shape()
        )))?))
}

fn assemble_one<T: Clone>(parts: Vec<ArrayViewD<T>>, grid: &[usize]) -> KResult<ArrayD<T>> {
    if parts.len() != grid.iter().product::<usize>() {
        return kerr(format!("{} blocks for a grid of {grid:?}", parts.len()));
    }
    // Concatenate along the last axis first, then outwards.
    let mut level: Vec<ArrayD<T>> = parts.into_iter().map(|p| p.to_owned()).collect();
    for d in (0..grid.len()).rev() {
        let views: Vec<ArrayD<T>> = level;
        level = views
            .chunks(grid[d])
            .map(|group| {
                let vs: Vec<ArrayViewD<T>> = group.iter().map(|g| g.view()).collect();
                concatenate(Axis(d), &vs)
                    .map_err(|e| crate::kernels::KernelError(format!("blocks do not fit: {e}")))
            })
            .collect::<KResult<_>>()?;
    }
    level
        .pop()
        .ok_or_else(|| crate::kernels::KernelError("empty assembly".into()))
}

pub fn assemble(inputs: &[&ArrayData], grid: &[usize]) -> KResult<ArrayData> {
    macro_rules! gather {
        ($variant:ident) => {{
            let parts = inputs
                .iter()
                .map(|p| match p {
                    ArrayData::$variant(x) => Ok(x.view()),
                    other => kerr(format!(
                        "block of dtype {} among {}",
                        other.dtype(),
                        stringify!($variant)
                    )),
                })
                .collect::<KResult<Vec<_>>>()?;
            ArrayData::$variant(assemble_one(parts, grid)?)
        }};
    }
    Ok(match inputs.first() {
        Some(ArrayData::F64(_)) => gather!(F64),
        Some(ArrayData::I64(_)) => gather!(I64),
        Some(ArrayData::Bool(_)) => gather!(Bool),
        Some(ArrayData::F32(_)) => gather!(F32),
        Some(ArrayData::I32(_)) => gather!(I32),
        Some(ArrayData::C64(_)) => gather!(C64),
        Some(ArrayData::C128(_)) => gather!(C128),
        Some(ArrayData::I8(_)) => gather!(I8),
        Some(ArrayData::I16(_)) => gather!(I16),
        Some(ArrayData::U8(_)) => gather!(U8),
        Some(ArrayData::U16(_)) => gather!(U16),
        Some(ArrayData::U32(_)) => gather!(U32),
        Some(ArrayData::U64(_)) => gather!(U64),
        None => return kerr("assembly of no blocks"),
    })
}
