//! Factorizations of one whole matrix in one chunk (faer kernels): the small matrices of the
//! chunked algorithms (the SVD of TSQR's R) and the matrices that fit one chunk.
//!
//! A function with several results returns them *packed* in one flat float64 vector (a
//! chunk kernel has one output), which the tensor API slices and reshapes: `svd` of an
//! m × n matrix is U (m·k values), then S (k), then Vᵀ (k·n), k = min(m, n).

use super::faer_bridge;
use super::kernels::as_f64;
use crate::array::{fmt_shape, ArrayData, DType, Shape};
use crate::error::{AresError, Result};
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, Ix2, IxDyn};
use serde::{Deserialize, Serialize};
use smallvec::smallvec;

/// Which factorization a `dense` op computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenseFn {
    /// The thin SVD, packed U, S, Vᵀ.
    Svd,
    /// The singular values, nonincreasing.
    SvdVals,
}

impl DenseFn {
    pub fn name(self) -> &'static str {
        match self {
            DenseFn::Svd => "linalg.svd",
            DenseFn::SvdVals => "linalg.svdvals",
        }
    }
}

/// The result's shape for an input of `shape` (a float64 matrix).
pub fn dense_shape(f: DenseFn, shape: &[usize], dtype: DType) -> Result<Shape> {
    let [m, n] = shape else {
        return Err(AresError::shape(
            f.name(),
            format!("needs a matrix (2-D), got shape {}", fmt_shape(shape)),
        ));
    };
    if dtype != DType::F64 {
        return Err(AresError::arg(
            f.name(),
            format!("computes in float64, got {dtype}"),
        ));
    }
    let k = (*m).min(*n);
    Ok(match f {
        DenseFn::Svd => smallvec![m * k + k + k * n],
        DenseFn::SvdVals => smallvec![k],
    })
}

/// The kernel of one chunk holding the whole matrix.
pub fn apply(f: DenseFn, x: &ArrayData) -> KResult<ArrayData> {
    let x = as_f64(x)
        .into_owned()
        .into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("{}: needs a 2-D chunk: {e}", f.name())))?;
    let flat: Vec<f64> = match f {
        DenseFn::Svd => {
            let (u, s, vt) = faer_bridge::svd(x.view())?;
            u.iter().chain(&s).chain(vt.iter()).copied().collect()
        }
        DenseFn::SvdVals => faer_bridge::singular_values(x.view())?.to_vec(),
    };
    let n = flat.len();
    Ok(ArrayData::F64(
        ArrayD::from_shape_vec(IxDyn(&[n]), flat).expect("a flat vector"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svd_packs_u_s_vt_and_shapes_agree() {
        let x = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j * j) as f64 - 4.0);
        let got = apply(DenseFn::Svd, &ArrayData::F64(x.clone().into_dyn())).unwrap();
        let shape = dense_shape(DenseFn::Svd, &[5, 3], DType::F64).unwrap();
        assert_eq!(got.shape(), shape.as_slice());
        let vals = apply(DenseFn::SvdVals, &ArrayData::F64(x.into_dyn())).unwrap();
        assert_eq!(vals.shape(), &[3]);
        let flat: Vec<f64> = got.iter_f64().collect();
        let s = &flat[15..18];
        assert!(s
            .iter()
            .zip(vals.iter_f64())
            .all(|(a, b)| (a - b).abs() < 1e-10));
        assert!(dense_shape(DenseFn::Svd, &[3], DType::F64).is_err());
        assert!(dense_shape(DenseFn::Svd, &[3, 3], DType::F32).is_err());
    }
}
