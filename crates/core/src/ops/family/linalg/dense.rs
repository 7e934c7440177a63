//! Factorizations of one whole matrix in one chunk (faer kernels): the small matrices of the
//! chunked algorithms (the SVD of TSQR's R) and the matrices that fit one chunk.
//!
//! A function with several results returns them *packed* in one flat float64 vector (a
//! chunk kernel has one output), which the tensor API slices and reshapes: `svd` of an
//! m × n matrix is U (m·k values), then S (k), then Vᵀ (k·n), k = min(m, n); `eigh` the
//! eigenvalues (n), then the eigenvectors (n·n). A matrix above
//! [`super::SINGLE_CHUNK_BUDGET`] is refused when tiled, naming its size.

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
    /// The Cholesky factor, lower (or upper) triangular.
    Cholesky {
        upper: bool,
    },
    Inv,
    /// The determinant, a 0-d result.
    Det,
    /// The eigenvalues (n) then the eigenvectors (n × n), packed.
    Eigh,
    EigvalsH,
}

impl DenseFn {
    pub fn name(self) -> &'static str {
        match self {
            DenseFn::Svd => "linalg.svd",
            DenseFn::SvdVals => "linalg.svdvals",
            DenseFn::Cholesky { .. } => "linalg.cholesky",
            DenseFn::Inv => "linalg.inv",
            DenseFn::Det => "linalg.det",
            DenseFn::Eigh => "linalg.eigh",
            DenseFn::EigvalsH => "linalg.eigvalsh",
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
    let square = !matches!(f, DenseFn::Svd | DenseFn::SvdVals);
    if square && m != n {
        return Err(AresError::shape(
            f.name(),
            format!("needs a square matrix, got shape {}", fmt_shape(shape)),
        ));
    }
    Ok(match f {
        DenseFn::Svd => smallvec![m * k + k + k * n],
        DenseFn::SvdVals | DenseFn::EigvalsH => smallvec![k],
        DenseFn::Cholesky { .. } | DenseFn::Inv => smallvec![*m, *n],
        DenseFn::Det => smallvec![],
        DenseFn::Eigh => smallvec![n + n * n],
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
        DenseFn::EigvalsH => faer_bridge::eigvalsh(x.view())?.to_vec(),
        DenseFn::Eigh => {
            let (w, v) = faer_bridge::eigh(x.view())?;
            w.iter().chain(v.iter()).copied().collect()
        }
        DenseFn::Cholesky { upper } => {
            let l = faer_bridge::cholesky(x.view(), upper)?;
            return Ok(ArrayData::F64(l.into_dyn()));
        }
        DenseFn::Inv => return Ok(ArrayData::F64(faer_bridge::inv(x.view())?.into_dyn())),
        DenseFn::Det => {
            let d = faer_bridge::det(x.view());
            return Ok(ArrayData::F64(
                ArrayD::from_shape_vec(IxDyn(&[]), vec![d]).expect("a 0-d array"),
            ));
        }
    };
    let n = flat.len();
    Ok(ArrayData::F64(
        ArrayD::from_shape_vec(IxDyn(&[n]), flat).expect("a flat vector"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::linalg::kernels::gemm_f64;
    use ndarray::Array2;

    fn m(a: ArrayData) -> Array2<f64> {
        a.to_f64().into_dimensionality::<Ix2>().unwrap()
    }

    fn near(a: &Array2<f64>, b: &Array2<f64>) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-10)
    }

    /// A symmetric positive-definite matrix: its Cholesky factor, inverse, determinant and
    /// eigen-decomposition reconstruct it.
    #[test]
    fn square_factorizations_reconstruct_the_matrix() {
        let b = Array2::from_shape_fn((4, 4), |(i, j)| ((i * 5 + j * 3) % 7) as f64 - 3.0);
        let a = gemm_f64(b.t(), b.view()) + Array2::<f64>::eye(4);
        let x = ArrayData::F64(a.clone().into_dyn());
        let l = m(apply(DenseFn::Cholesky { upper: false }, &x).unwrap());
        assert!(near(&gemm_f64(l.view(), l.t()), &a));
        assert!(
            (0..4).all(|i| (i + 1..4).all(|j| l[[i, j]] == 0.0)),
            "L is lower"
        );
        let u = m(apply(DenseFn::Cholesky { upper: true }, &x).unwrap());
        assert!(near(&u, &l.t().to_owned()));
        let inv = m(apply(DenseFn::Inv, &x).unwrap());
        assert!(near(&gemm_f64(a.view(), inv.view()), &Array2::eye(4)));
        let packed: Vec<f64> = apply(DenseFn::Eigh, &x).unwrap().iter_f64().collect();
        let (w, v) = packed.split_at(4);
        let v = Array2::from_shape_vec((4, 4), v.to_vec()).unwrap();
        let back = gemm_f64((&v * &ndarray::aview1(w)).view(), v.t());
        assert!(near(&back, &a));
        let vals: Vec<f64> = apply(DenseFn::EigvalsH, &x).unwrap().iter_f64().collect();
        assert!(vals.iter().zip(w).all(|(p, q)| (p - q).abs() < 1e-10));
        let det = apply(DenseFn::Det, &x).unwrap();
        assert_eq!(det.shape(), &[] as &[usize]);
        let product: f64 = w.iter().product();
        assert!((det.iter_f64().next().unwrap() - product).abs() < 1e-8 * product.abs());
        let singular = ArrayData::F64(Array2::<f64>::ones((3, 3)).into_dyn());
        assert!(apply(DenseFn::Inv, &singular)
            .unwrap_err()
            .0
            .contains("singular"));
        let e = apply(
            DenseFn::Cholesky { upper: false },
            &ArrayData::F64((-a).into_dyn()),
        );
        assert!(e.unwrap_err().0.contains("not positive definite"));
    }

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
        let e = dense_shape(DenseFn::Inv, &[3, 2], DType::F64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a square matrix, got shape (3, 2)"), "{e}");
        assert!(dense_shape(DenseFn::Svd, &[3, 3], DType::F32).is_err());
    }
}
