//! Slicing, transposition, reshaping and block assembly of chunks. Outputs are always in
//! standard (C) layout so later kernels can read them as flat slices.

use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use crate::ops::DimIndex;
use ndarray::{ArrayD, ArrayViewD, Axis, Ix1, Ix2, IxDyn, Slice};

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

/// The blocks of a grid (C order) placed into one array allocated once: the blocks and the
/// output are all it holds (concatenating axis by axis held two more copies), which is what
/// the runtime's memory projection of an assemble counts.
fn assemble_one<T: Clone>(parts: Vec<ArrayViewD<T>>, grid: &[usize]) -> KResult<ArrayD<T>> {
    if parts.len() != grid.iter().product::<usize>() || parts.is_empty() {
        return kerr(format!("{} blocks for a grid of {grid:?}", parts.len()));
    }
    if let Some(p) = parts.iter().find(|p| p.ndim() != grid.len()) {
        return kerr(format!("a {}-D block in a {}-D grid", p.ndim(), grid.len()));
    }
    // Block k along axis d is as long as the block at (0, .., k, .., 0).
    let starts: Vec<Vec<usize>> = (0..grid.len())
        .map(|d| {
            let stride: usize = grid[d + 1..].iter().product();
            let lens = (0..grid[d]).map(|k| parts[k * stride].shape()[d]);
            crate::prepare::tile::offsets(&lens.collect::<Vec<_>>())
        })
        .collect();
    let shape: Vec<usize> = starts.iter().map(|o| o[o.len() - 1]).collect();
    let Some(fill) = parts.iter().find_map(|p| p.iter().next().cloned()) else {
        return ArrayD::from_shape_vec(IxDyn(&shape), Vec::new())
            .map_err(|e| crate::kernels::KernelError(format!("blocks do not fit: {e}")));
    };
    let mut out = ArrayD::from_elem(IxDyn(&shape), fill);
    let mut k = 0;
    let mut result = Ok(());
    crate::prepare::tile::Odometer::for_each(grid, |at| {
        let part = &parts[k];
        k += 1;
        let region: Vec<(usize, usize)> = at
            .iter()
            .enumerate()
            .map(|(d, i)| (starts[d][*i], starts[d][*i + 1]))
            .collect();
        if region
            .iter()
            .zip(part.shape())
            .any(|((lo, hi), n)| hi - lo != *n)
        {
            result = kerr(format!(
                "blocks do not fit: block {at:?} is {:?} in a grid of {:?}",
                part.shape(),
                starts
            ));
            return;
        }
        out.slice_each_axis_mut(|ax| {
            Slice::from(region[ax.axis.index()].0..region[ax.axis.index()].1)
        })
        .assign(part);
    });
    result.map(|()| out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5×7 array cut into a 3×2 grid of ragged blocks comes back whole from `assemble`,
    /// for a dtype of 8 bytes and one of 1; blocks that do not line up are an error.
    #[test]
    fn assemble_places_ragged_blocks() {
        //   cols |---4---|--3--|
        //  rows 1 | b0    | b1  |
        //       3 | b2    | b3  |
        //       1 | b4    | b5  |
        let whole = ArrayD::from_shape_fn(IxDyn(&[5, 7]), |i| (i[0] * 10 + i[1]) as i64);
        let (rows, cols) = ([0, 1, 4, 5], [0, 4, 7]);
        let mut blocks = Vec::new();
        for r in 0..3 {
            for c in 0..2 {
                let b = whole.slice_each_axis(|ax| {
                    let o = if ax.axis.index() == 0 {
                        &rows[r..]
                    } else {
                        &cols[c..]
                    };
                    Slice::from(o[0]..o[1])
                });
                blocks.push(ArrayData::I64(b.to_owned()));
            }
        }
        let refs: Vec<&ArrayData> = blocks.iter().collect();
        assert_eq!(
            assemble(&refs, &[3, 2]).unwrap(),
            ArrayData::I64(whole.clone())
        );
        let bytes: Vec<ArrayData> = blocks
            .iter()
            .map(|b| b.clone().cast(crate::array::DType::U8))
            .collect();
        let refs: Vec<&ArrayData> = bytes.iter().collect();
        assert_eq!(
            assemble(&refs, &[3, 2]).unwrap(),
            ArrayData::I64(whole).cast(crate::array::DType::U8)
        );
        let mut wrong: Vec<&ArrayData> = blocks.iter().collect();
        wrong.swap(0, 1); // a 1×3 block where a 1×4 goes
        let e = assemble(&wrong, &[3, 2]).unwrap_err().0;
        assert!(e.contains("blocks do not fit"), "{e}");
        assert!(assemble(&refs, &[2, 2]).unwrap_err().0.contains("6 blocks"));
    }
}
