//! Factorizations of whole matrices, one chunk per stack of them (faer kernels): the small
//! matrices of the chunked algorithms (the SVD of TSQR's R), the matrices that fit one
//! chunk, and stacks of matrices (the array API's batched linalg: the leading axes keep
//! their chunks, the last two are one chunk, and the kernel loops over the matrices of its
//! chunk).
//!
//! A function with several results returns them *packed* in one flat float64 vector per
//! matrix (complex128 for the SVD of complex matrices, S then with zero imaginary parts; a
//! chunk kernel has one output), which the tensor API slices and reshapes: `svd`
//! of an m × n matrix is U (m·k values), then S (k), then Vᵀ (k·n), k = min(m, n); `qr` Q
//! (m·k) then R (k·n); `eigh` the eigenvalues (n), then the eigenvectors (n·n); `slogdet`
//! the sign then the log of the absolute value. `solve` takes a second input, the stacked
//! right-hand sides. A matrix above [`super::SINGLE_CHUNK_BUDGET`] is refused when tiled,
//! naming its size.

use super::kernels::as_f64;
use super::SINGLE_CHUNK_BUDGET;
use super::{complex_factors, faer_bridge};
use crate::array::{fmt_shape, ArrayData, Complex64, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::kernels::{kerr, KResult};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Odometer, Tiled, Tiler};
use ndarray::{ArrayD, Axis, Ix3, IxDyn};
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
    /// The determinant, a 0-d result per matrix.
    Det,
    /// The eigenvalues (n) then the eigenvectors (n × n), packed.
    Eigh,
    EigvalsH,
    /// The sign of the determinant and the log of its absolute value, packed.
    Slogdet,
    /// The solution of `a · x = b` (two inputs: `a`, n × n, and `b`, n × k).
    Solve,
    /// The reduced QR of one matrix, packed Q then R (the batched `qr`).
    Qr,
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
            DenseFn::Slogdet => "linalg.slogdet",
            DenseFn::Solve => "linalg.solve",
            DenseFn::Qr => "linalg.qr",
        }
    }

    /// How many inputs the function takes.
    pub fn arity(self) -> usize {
        match self {
            DenseFn::Solve => 2,
            _ => 1,
        }
    }

    /// The result's dtype for inputs of `dtype`: complex128 matrices give complex128
    /// results, their real values (S, eigenvalues, `slogdet`'s log) as zero imaginary
    /// parts, except the functions whose every value is real (`svdvals`, `eigvalsh`);
    /// everything else is float64.
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (DenseFn::SvdVals | DenseFn::EigvalsH, _) => DType::F64,
            (_, DType::C128) => DType::C128,
            _ => DType::F64,
        }
    }

    /// Whether the function needs a square matrix.
    fn square(self) -> bool {
        !matches!(self, DenseFn::Svd | DenseFn::SvdVals | DenseFn::Qr)
    }

    /// The result of one m × n matrix (with `k_rhs` right-hand sides for `solve`).
    fn per_matrix(self, m: usize, n: usize, k_rhs: usize) -> Shape {
        let k = m.min(n);
        match self {
            DenseFn::Svd => smallvec![m * k + k + k * n],
            DenseFn::Qr => smallvec![m * k + k * n],
            DenseFn::SvdVals | DenseFn::EigvalsH => smallvec![k],
            DenseFn::Cholesky { .. } | DenseFn::Inv => smallvec![m, n],
            DenseFn::Det => smallvec![],
            DenseFn::Slogdet => smallvec![2],
            DenseFn::Eigh => smallvec![n + n * n],
            DenseFn::Solve => smallvec![n, k_rhs],
        }
    }
}

/// The result's shape for inputs of `shapes` (float64 stacks of matrices, `(..., m, n)`; for
/// `solve`, `a` then `b` of `(..., n, k)` with the same leading axes): the leading axes, then
/// the result of one matrix.
pub fn dense_shape(f: DenseFn, shapes: &[&[usize]], dtype: DType) -> Result<Shape> {
    let name = f.name();
    if shapes.len() != f.arity() {
        return Err(AresError::arg(
            name,
            format!("takes {} inputs, got {}", f.arity(), shapes.len()),
        ));
    }
    let shape = shapes[0];
    let (batch, m, n) = match shape {
        [batch @ .., m, n] => (batch, *m, *n),
        _ => {
            return Err(AresError::shape(
                name,
                format!(
                    "needs a matrix (at least 2-D), got shape {}",
                    fmt_shape(shape)
                ),
            ))
        }
    };
    if dtype != DType::F64 && dtype != DType::C128 {
        return Err(AresError::arg(
            name,
            format!("computes in float64, got {dtype}"),
        ));
    }
    if f.square() && m != n {
        return Err(AresError::shape(
            name,
            format!(
                "needs square matrices, got shape {} (the last two axes are {m} × {n})",
                fmt_shape(shape)
            ),
        ));
    }
    let mut k_rhs = 0;
    if let [_, b] = shapes {
        match b {
            [b_batch @ .., bm, k] if b_batch == batch && *bm == n => k_rhs = *k,
            _ => {
                return Err(AresError::shape(
                    name,
                    format!(
                        "the right-hand side must have shape {}, got {}",
                        fmt_shape(&[batch, &[n, 0]].concat()).replace(", 0)", ", k)"),
                        fmt_shape(b)
                    ),
                ))
            }
        }
    }
    let mut out: Shape = batch.iter().copied().collect();
    out.extend(f.per_matrix(m, n, k_rhs));
    Ok(out)
}

/// A chunk as a stack of matrices: (count, rows, columns), in standard layout.
fn stack_of(x: &ArrayData, name: &str) -> KResult<ndarray::Array3<f64>> {
    let x = as_f64(x).as_standard_layout().into_owned();
    let shape = x.shape().to_vec();
    let [batch @ .., m, n] = shape.as_slice() else {
        return kerr(format!(
            "{name}: needs a chunk of at least 2 dimensions, got {}",
            fmt_shape(&shape)
        ));
    };
    let count = batch.iter().product::<usize>();
    x.into_shape_with_order((count, *m, *n))
        .or_else(|e| kerr(format!("{name}: {e}")))?
        .into_dimensionality::<Ix3>()
        .or_else(|e| kerr(format!("{name}: {e}")))
}

/// The kernel of one chunk holding whole matrices (a stack of them when it has leading axes).
pub fn apply(f: DenseFn, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let name = f.name();
    if inputs.len() != f.arity() {
        return kerr(format!(
            "{name}: takes {} inputs, got {}",
            f.arity(),
            inputs.len()
        ));
    }
    if let ArrayData::C128(x) = inputs[0] {
        return apply_complex(f, x, inputs.get(1).copied());
    }
    let a = stack_of(inputs[0], name)?;
    let b = match inputs.get(1) {
        Some(b) => Some(stack_of(b, name)?),
        None => None,
    };
    let (count, m, n) = a.dim();
    let k_rhs = b.as_ref().map_or(0, |b| b.dim().2);
    if let Some(b) = &b {
        if b.dim().0 != count || b.dim().1 != n {
            return kerr(format!(
                "{name}: the right-hand sides' chunk {:?} does not match the matrices' {:?}",
                b.dim(),
                a.dim()
            ));
        }
    }
    let per = f.per_matrix(m, n, k_rhs);
    let per_len: usize = per.iter().product();
    let mut flat = Vec::with_capacity(count * per_len);
    for i in 0..count {
        let x = a.index_axis(Axis(0), i);
        let rhs = b.as_ref().map(|b| b.index_axis(Axis(0), i));
        one(f, x, rhs, &mut flat)?;
    }
    let mut shape: Vec<usize> = inputs[0].shape()[..inputs[0].shape().len() - 2].to_vec();
    shape.extend(per.iter());
    ArrayD::from_shape_vec(IxDyn(&shape), flat)
        .map(ArrayData::F64)
        .or_else(|e| kerr(format!("{name}: {e}")))
}

/// Each complex128 matrix of a chunk (with its complex128 right-hand sides for `solve`),
/// packed as for float64, in complex numbers except for `svdvals` and `eigvalsh`.
fn apply_complex(f: DenseFn, x: &ArrayD<Complex64>, rhs: Option<&ArrayData>) -> KResult<ArrayData> {
    let name = f.name();
    let stack = |x: &ArrayD<Complex64>| -> KResult<ndarray::Array3<Complex64>> {
        let shape = x.shape().to_vec();
        let [batch @ .., m, n] = shape.as_slice() else {
            return kerr(format!(
                "{name}: needs a chunk of at least 2 dimensions, got {}",
                fmt_shape(&shape)
            ));
        };
        x.as_standard_layout()
            .into_owned()
            .into_shape_with_order((batch.iter().product::<usize>(), *m, *n))
            .or_else(|e| kerr(format!("{name}: {e}")))
    };
    let a = stack(x)?;
    let b = match rhs {
        Some(ArrayData::C128(b)) => Some(stack(b)?),
        Some(other) => {
            return kerr(format!(
                "{name}: a complex128 matrix's right-hand sides are {}",
                other.dtype()
            ))
        }
        None => None,
    };
    let (count, m, n) = a.dim();
    let k_rhs = b.as_ref().map_or(0, |b| b.dim().2);
    if b.as_ref()
        .is_some_and(|b| b.dim().0 != count || b.dim().1 != n)
    {
        return kerr(format!(
            "{name}: the right-hand sides do not match the matrices"
        ));
    }
    let per = f.per_matrix(m, n, k_rhs);
    let mut shape = x.shape()[..x.ndim() - 2].to_vec();
    shape.extend(per.iter());
    let real = |v: &f64| Complex64::new(*v, 0.0);
    let (mut flat, mut reals) = (Vec::new(), Vec::new());
    for i in 0..count {
        let x = a.index_axis(Axis(0), i);
        match f {
            DenseFn::Svd => {
                let (u, s, vh) = faer_bridge::svd_complex(x)?;
                flat.extend(u.iter().copied().chain(s.iter().map(real)).chain(vh));
            }
            DenseFn::SvdVals => reals.extend(faer_bridge::svd_complex(x)?.1),
            DenseFn::EigvalsH => reals.extend(complex_factors::eigvalsh(x)?),
            DenseFn::Eigh => {
                let (w, v) = complex_factors::eigh(x)?;
                flat.extend(w.iter().map(real).chain(v));
            }
            DenseFn::Qr => {
                let (q, r) = complex_factors::qr(x);
                flat.extend(q.iter().chain(r.iter()));
            }
            DenseFn::Cholesky { upper } => flat.extend(complex_factors::cholesky(x, upper)?),
            DenseFn::Inv => flat.extend(complex_factors::inv(x)?),
            DenseFn::Det => flat.push(complex_factors::det(x)),
            DenseFn::Slogdet => {
                let (sign, logabs) = complex_factors::slogdet(x);
                flat.extend([sign, real(&logabs)]);
            }
            DenseFn::Solve => {
                let Some(b) = &b else {
                    return kerr("linalg.solve: needs a right-hand side");
                };
                flat.extend(complex_factors::solve(x, b.index_axis(Axis(0), i))?);
            }
        }
    }
    let shape = IxDyn(&shape);
    match f.out_dtype(DType::C128) {
        DType::F64 => ArrayD::from_shape_vec(shape, reals).map(ArrayData::F64),
        _ => ArrayD::from_shape_vec(shape, flat).map(ArrayData::C128),
    }
    .or_else(|e| kerr(format!("{name}: {e}")))
}

/// One matrix's result, appended to `out` in C order.
fn one(
    f: DenseFn,
    x: ndarray::ArrayView2<f64>,
    rhs: Option<ndarray::ArrayView2<f64>>,
    out: &mut Vec<f64>,
) -> KResult<()> {
    match f {
        DenseFn::Svd => {
            let (u, s, vt) = faer_bridge::svd(x)?;
            out.extend(u.iter().chain(&s).chain(vt.iter()));
        }
        DenseFn::Qr => {
            let (q, r) = faer_bridge::qr(x);
            out.extend(q.iter().chain(r.iter()));
        }
        DenseFn::SvdVals => out.extend(faer_bridge::singular_values(x)?.iter()),
        DenseFn::EigvalsH => out.extend(faer_bridge::eigvalsh(x)?.iter()),
        DenseFn::Eigh => {
            let (w, v) = faer_bridge::eigh(x)?;
            out.extend(w.iter().chain(v.iter()));
        }
        DenseFn::Cholesky { upper } => out.extend(faer_bridge::cholesky(x, upper)?.iter()),
        DenseFn::Inv => out.extend(faer_bridge::inv(x)?.iter()),
        DenseFn::Det => out.push(faer_bridge::det(x)),
        DenseFn::Slogdet => {
            let (sign, logabs) = faer_bridge::slogdet(x);
            out.extend([sign, logabs]);
        }
        DenseFn::Solve => {
            let Some(b) = rhs else {
                return kerr("linalg.solve: needs a right-hand side");
            };
            out.extend(faer_bridge::solve(x, b)?.iter());
        }
    }
    Ok(())
}

/// Refuses a matrix (`m` × `n` float64) above the single-chunk budget, naming its size: the
/// factorizations here hold a whole matrix in one chunk (eigh, and the SVD of a matrix that
/// is not tall-and-skinny, are not chunked).
pub(super) fn check_matrix(what: &'static str, m: usize, n: usize) -> Result<()> {
    check_matrix_of(what, m, n, DType::F64)
}

/// [`check_matrix`] for a matrix of `dtype`.
fn check_matrix_of(what: &'static str, m: usize, n: usize, dtype: DType) -> Result<()> {
    let bytes = m as u64 * n as u64 * dtype.itemsize() as u64;
    if bytes > SINGLE_CHUNK_BUDGET {
        return Err(AresError::arg(
            what,
            format!(
                "a {m} × {n} {dtype} matrix is {} MiB, over the {} MiB one chunk may hold \
                 for a factorization of a whole matrix",
                bytes >> 20,
                SINGLE_CHUNK_BUDGET >> 20
            ),
        ));
    }
    Ok(())
}

impl Tiler {
    /// One `dense` chunk per chunk of the leading axes: the inputs' last two axes rechunked
    /// to one chunk, their leading axes to the first input's chunks.
    pub(super) fn tile_dense(
        &mut self,
        f: DenseFn,
        args: &OpArgs,
        shape: &Shape,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
    ) -> Result<Tiled> {
        let s = in_shapes[0];
        let batch = s.len() - 2;
        let dtype = self.graph.node(inputs[0].chunks[0]).dtype;
        // The blocked algorithms are float64's; a complex matrix is factored whole.
        let blocks = match dtype {
            DType::F64 => inputs[0].chunks.len(),
            _ => 1,
        };
        if matches!(f, DenseFn::Cholesky { upper: false }) && batch == 0 && blocks > 1 {
            return self.tile_blocked_cholesky(inputs[0], s[0]);
        }
        if batch == 0 && blocks > 1 {
            match f {
                DenseFn::Solve => {
                    return self.tile_blocked_solve(inputs[0], inputs[1], s[0], in_shapes[1][1])
                }
                DenseFn::Inv => return self.tile_blocked_inv(inputs[0], s[0]),
                DenseFn::Det => return self.tile_blocked_det(inputs[0], s[0], false),
                DenseFn::Slogdet => return self.tile_blocked_det(inputs[0], s[0], true),
                _ => {}
            }
        }
        check_matrix_of(f.name(), s[batch], s[batch + 1], dtype)?;
        let batch_splits: Vec<Vec<usize>> = inputs[0].splits[..batch].to_vec();
        let rechunked: Vec<Tiled> = inputs
            .iter()
            .zip(in_shapes)
            .map(|(t, s)| {
                let mut target = batch_splits.clone();
                target.extend([vec![s[batch]], vec![s[batch + 1]]]);
                let dtype = self.graph.node(t.chunks[0]).dtype;
                self.rechunk_to(t, &target, dtype)
            })
            .collect();
        let key = self.key();
        let args = self.graph.intern_args(args.clone());
        let grid: Shape = batch_splits.iter().map(|s| s.len()).collect();
        let mut chunks = Vec::with_capacity(rechunked[0].chunks.len());
        let mut i = 0;
        Odometer::for_each(&grid, |idx| {
            let mut chunk_shape: Shape = idx
                .iter()
                .enumerate()
                .map(|(d, k)| batch_splits[d][*k])
                .collect();
            chunk_shape.extend(shape[batch..].iter().copied());
            let ins: Vec<ChunkIdx> = rechunked.iter().map(|t| t.chunks[i]).collect();
            let out = f.out_dtype(dtype);
            chunks.push(self.push(key, Op::Dense, args, chunk_shape, out, &ins));
            i += 1;
        });
        let mut splits = batch_splits;
        splits.extend(shape[batch..].iter().map(|l| vec![*l]));
        Ok(Tiled { splits, chunks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::linalg::kernels::gemm_f64;
    use ndarray::{Array2, Array3, Ix2};

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
        let l = m(apply(DenseFn::Cholesky { upper: false }, &[&x]).unwrap());
        assert!(near(&gemm_f64(l.view(), l.t()), &a));
        assert!(
            (0..4).all(|i| (i + 1..4).all(|j| l[[i, j]] == 0.0)),
            "L is lower"
        );
        let u = m(apply(DenseFn::Cholesky { upper: true }, &[&x]).unwrap());
        assert!(near(&u, &l.t().to_owned()));
        let inv = m(apply(DenseFn::Inv, &[&x]).unwrap());
        assert!(near(&gemm_f64(a.view(), inv.view()), &Array2::eye(4)));
        let packed: Vec<f64> = apply(DenseFn::Eigh, &[&x]).unwrap().iter_f64().collect();
        let (w, v) = packed.split_at(4);
        let v = Array2::from_shape_vec((4, 4), v.to_vec()).unwrap();
        let back = gemm_f64((&v * &ndarray::aview1(w)).view(), v.t());
        assert!(near(&back, &a));
        let vals: Vec<f64> = apply(DenseFn::EigvalsH, &[&x])
            .unwrap()
            .iter_f64()
            .collect();
        assert!(vals.iter().zip(w).all(|(p, q)| (p - q).abs() < 1e-10));
        let det = apply(DenseFn::Det, &[&x]).unwrap();
        assert_eq!(det.shape(), &[] as &[usize]);
        let product: f64 = w.iter().product();
        assert!((det.iter_f64().next().unwrap() - product).abs() < 1e-8 * product.abs());
        let singular = ArrayData::F64(Array2::<f64>::ones((3, 3)).into_dyn());
        assert!(apply(DenseFn::Inv, &[&singular])
            .unwrap_err()
            .0
            .contains("singular"));
        let e = apply(
            DenseFn::Cholesky { upper: false },
            &[&ArrayData::F64((-a).into_dyn())],
        );
        assert!(e.unwrap_err().0.contains("not positive definite"));
    }

    #[test]
    fn svd_packs_u_s_vt_and_shapes_agree() {
        let x = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j * j) as f64 - 4.0);
        let got = apply(DenseFn::Svd, &[&ArrayData::F64(x.clone().into_dyn())]).unwrap();
        let shape = dense_shape(DenseFn::Svd, &[&[5, 3]], DType::F64).unwrap();
        assert_eq!(got.shape(), shape.as_slice());
        let vals = apply(DenseFn::SvdVals, &[&ArrayData::F64(x.into_dyn())]).unwrap();
        assert_eq!(vals.shape(), &[3]);
        let flat: Vec<f64> = got.iter_f64().collect();
        let s = &flat[15..18];
        assert!(s
            .iter()
            .zip(vals.iter_f64())
            .all(|(a, b)| (a - b).abs() < 1e-10));
        assert!(dense_shape(DenseFn::Svd, &[&[3]], DType::F64).is_err());
        let e = dense_shape(DenseFn::Inv, &[&[3, 2]], DType::F64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs square matrices, got shape (3, 2)"), "{e}");
        assert!(dense_shape(DenseFn::Svd, &[&[3, 3]], DType::F32).is_err());
    }

    /// A diagonally dominant matrix of a seed (never singular), and a direct loop's
    /// Gaussian elimination as the reference solution.
    fn system(seed: usize, n: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, n), |(i, j)| {
            let v = ((i * 7 + j * 11 + seed * 5) % 13) as f64 - 6.0;
            if i == j {
                v + 40.0
            } else {
                v
            }
        })
    }

    fn eliminate(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        let n = a.nrows();
        let (mut a, mut b) = (a.clone(), b.clone());
        for c in 0..n {
            for r in c + 1..n {
                let f = a[[r, c]] / a[[c, c]];
                for j in 0..n {
                    a[[r, j]] -= f * a[[c, j]];
                }
                for j in 0..b.ncols() {
                    b[[r, j]] -= f * b[[c, j]];
                }
            }
        }
        let mut x = Array2::zeros(b.dim());
        for r in (0..n).rev() {
            for j in 0..b.ncols() {
                let s: f64 = (r + 1..n).map(|k| a[[r, k]] * x[[k, j]]).sum();
                x[[r, j]] = (b[[r, j]] - s) / a[[r, r]];
            }
        }
        x
    }

    /// A stack of 3 systems: `solve`, `det`, `slogdet` and `inv` per matrix equal a direct
    /// elimination's, the determinant's sign and log agree with `det`, and a singular
    /// matrix gives sign 0 and log -inf (NumPy's) but fails `solve` by name.
    #[test]
    fn stacks_solve_and_slogdet_per_matrix() {
        let n = 5;
        let a = Array3::from_shape_fn((3, n, n), |(k, i, j)| system(k, n)[[i, j]]);
        let b = Array3::from_shape_fn((3, n, 2), |(k, i, j)| (k * 3 + i * 2 + j) as f64 - 4.0);
        let (ad, bd) = (
            ArrayData::F64(a.clone().into_dyn()),
            ArrayData::F64(b.clone().into_dyn()),
        );
        let shape = dense_shape(DenseFn::Solve, &[&[3, n, n], &[3, n, 2]], DType::F64).unwrap();
        assert_eq!(shape.as_slice(), &[3, n, 2]);
        let x = apply(DenseFn::Solve, &[&ad, &bd]).unwrap().to_f64();
        assert_eq!(x.shape(), &[3, n, 2]);
        let dets = apply(DenseFn::Det, &[&ad]).unwrap().to_f64();
        assert_eq!(dets.shape(), &[3]);
        let sl = apply(DenseFn::Slogdet, &[&ad]).unwrap().to_f64();
        assert_eq!(sl.shape(), &[3, 2]);
        let inv = apply(DenseFn::Inv, &[&ad]).unwrap().to_f64();
        for k in 0..3 {
            let (ak, bk) = (system(k, n), b.index_axis(ndarray::Axis(0), k).to_owned());
            let want = eliminate(&ak, &bk);
            let got = x
                .index_axis(ndarray::Axis(0), k)
                .into_dimensionality::<Ix2>();
            assert!(near(&got.unwrap().to_owned(), &want), "solve {k}");
            let ik = inv
                .index_axis(ndarray::Axis(0), k)
                .into_dimensionality::<Ix2>();
            let back = gemm_f64(ak.view(), ik.unwrap());
            assert!(near(&back, &Array2::eye(n)), "inv {k}");
            let (sign, logabs) = (sl[[k, 0]], sl[[k, 1]]);
            let det = dets[[k]];
            assert_eq!(sign, det.signum());
            assert!((logabs - det.abs().ln()).abs() < 1e-12, "slogdet {k}");
        }
        let mut odd = system(0, 3);
        odd.swap_axes(0, 1);
        let odd = odd.as_standard_layout().to_owned();
        let (s, l) = faer_bridge::slogdet(odd.view());
        let d = faer_bridge::det(odd.view());
        assert_eq!(s, d.signum());
        assert!((l - d.abs().ln()).abs() < 1e-12);
        let ones = ArrayData::F64(Array2::<f64>::ones((3, 3)).into_dyn());
        let sl = apply(DenseFn::Slogdet, &[&ones]).unwrap().to_f64();
        assert_eq!((sl[[0]], sl[[1]]), (0.0, f64::NEG_INFINITY));
        let rhs = ArrayData::F64(Array2::<f64>::ones((3, 1)).into_dyn());
        let e = apply(DenseFn::Solve, &[&ones, &rhs]).unwrap_err();
        assert!(e.0.contains("singular"), "{}", e.0);
        let e = dense_shape(DenseFn::Solve, &[&[3, 3], &[4, 1]], DType::F64).unwrap_err();
        assert!(e.to_string().contains("must have shape (3, k)"), "{e}");
        let e = dense_shape(DenseFn::Det, &[&[2, 3, 4]], DType::F64).unwrap_err();
        assert!(
            e.to_string().contains("(the last two axes are 3 × 4)"),
            "{e}"
        );
    }

    /// The batched QR and SVD reconstruct every matrix of a stack.
    #[test]
    fn stacked_qr_and_svd_reconstruct_each_matrix() {
        let x = Array3::from_shape_fn((2, 6, 4), |(k, i, j)| {
            ((k + i * 5 + j * 3) % 7) as f64 - 2.5
        });
        let xd = ArrayData::F64(x.clone().into_dyn());
        let qr = apply(DenseFn::Qr, &[&xd]).unwrap().to_f64();
        let svd = apply(DenseFn::Svd, &[&xd]).unwrap().to_f64();
        assert_eq!(qr.shape(), &[2, 6 * 4 + 4 * 4]);
        for k in 0..2 {
            let p: Vec<f64> = qr.index_axis(ndarray::Axis(0), k).iter().copied().collect();
            let q = Array2::from_shape_vec((6, 4), p[..24].to_vec()).unwrap();
            let r = Array2::from_shape_vec((4, 4), p[24..].to_vec()).unwrap();
            let want = x.index_axis(ndarray::Axis(0), k).to_owned();
            assert!(near(&gemm_f64(q.view(), r.view()), &want), "qr {k}");
            let p: Vec<f64> = svd
                .index_axis(ndarray::Axis(0), k)
                .iter()
                .copied()
                .collect();
            let u = Array2::from_shape_vec((6, 4), p[..24].to_vec()).unwrap();
            let s = ndarray::Array1::from(p[24..28].to_vec());
            let vt = Array2::from_shape_vec((4, 4), p[28..].to_vec()).unwrap();
            let us = &u * &s.view().insert_axis(ndarray::Axis(0));
            assert!(near(&gemm_f64(us.view(), vt.view()), &want), "svd {k}");
        }
    }

    /// A matrix factored whole that does not fit the single-chunk budget is refused when
    /// the graph is prepared, naming its size (nothing is allocated).
    #[test]
    fn a_whole_matrix_over_the_budget_is_refused_naming_its_size() {
        let t = crate::expr::evaluate("w, v = linalg.eigh(ones((20000, 20000), chunk=5000)); w")
            .unwrap();
        let graph = crate::tensor::Tensor::graph(&[&t]);
        let cluster = crate::prepare::uniform_cluster(1, 2);
        let config = crate::config::TaskConfig::default();
        let e = match crate::prepare::prepare(&graph, &config, &cluster, crate::ids::TaskId(1)) {
            Ok(_) => panic!("a 3 GiB matrix in one chunk was prepared"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("a 20000 × 20000 float64 matrix is 3051 MiB, over the 1024 MiB"),
            "{e}"
        );
    }
}
