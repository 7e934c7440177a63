//! Linear algebra: matrix products. The family owns the `matmul` primitive's shape rule
//! ([`shape`]), NumPy's products composed on it ([`tensor`]: vectors, `inner`,
//! `tensordot`), its tiling into block products and `tree_add` combines ([`tile`]), and the
//! kernels of one block and of stacks of blocks ([`kernels`], [`batched`]).
//!
//! And the array API's `linalg` extension (issue 30), on faer's kernels ([`faer_bridge`]):
//! QR of tall-skinny matrices by TSQR ([`tsqr`], [`tsqr_kernels`]), the SVD from it, the
//! QR of a sketch `x·w` with x projected on its Q in one pass ([`projected_qr`]), the
//! factorizations of one whole matrix in one chunk ([`dense`]), the Cholesky factor of a
//! matrix chunked in both dimensions by blocks ([`blocked_cholesky`]) and `solve` by a
//! blocked LU ([`blocked_lu`]), and their tensor API
//! ([`decompose`]); batched (stacked) matrices one `dense` chunk per chunk of the leading
//! axes ([`dense`]); linear systems and the pseudo-inverse ([`solvers`]); the products and
//! views ([`products`]) and norms ([`norms`]) composed from chunked primitives. Their
//! functions are named `linalg.NAME` in the expression language, as
//! `ar.linalg.NAME` in Python.

pub(crate) mod batched;
pub mod blocked_cholesky;
pub mod blocked_lu;
mod complex_factors;
mod decompose;
pub mod dense;
pub use norms::NormOrd;
mod faer_bridge;
pub(crate) mod generated_product;
pub(crate) mod kernels;
mod norms;
mod products;
mod projected_qr;
mod projected_qr_kernels;
pub mod shape;
mod solvers;
mod tensor;
mod tile;
mod tsqr;
mod tsqr_kernels;

use crate::array::{ArrayData, DType, Shape};
use crate::error::{AresError, Result};
use crate::kernels::{kerr, KResult};
use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};

/// The most bytes one factorization's chunk may hold (a block of TSQR, a matrix factored
/// whole): above it, the op is refused when it is tiled, naming the size. 1 GiB: an
/// 11,585² float64 matrix, whose O(n³) factorization is minutes on one core already.
pub const SINGLE_CHUNK_BUDGET: u64 = 1 << 30;

const LINALG_FUNCTIONS: &[Function] = &[
    Function::other("matmul", "Matrix product of two arrays."),
    Function::other("dot", "Dot product of two arrays."),
    Function::other("tensordot", "Tensor dot product along specified axes."),
    Function::other("inner", "Inner product of two arrays."),
    Function::other(
        "linalg.qr",
        "Reduced QR of a matrix (TSQR over row chunks): returns (Q, R).",
    ),
    Function::other(
        "linalg.svd",
        "Thin SVD of a matrix (from TSQR): returns (U, S, Vh).",
    ),
    Function::other("linalg.svdvals", "Singular values of a matrix."),
    Function::other(
        "linalg.cholesky",
        "Cholesky factor of a symmetric positive-definite matrix (one chunk).",
    ),
    Function::other("linalg.inv", "Inverse of a square matrix (one chunk)."),
    Function::other("linalg.det", "Determinant of a square matrix (one chunk)."),
    Function::other(
        "linalg.eigh",
        "Eigenvalues and eigenvectors of a symmetric matrix (one chunk).",
    ),
    Function::other(
        "linalg.eigvalsh",
        "Eigenvalues of a symmetric matrix (one chunk).",
    ),
    Function::other(
        "linalg.svd_compressed",
        "Randomized truncated SVD (Halko et al.): returns (U, S, Vh) of rank k.",
    ),
    Function::other(
        "linalg.slogdet",
        "Sign and log of the absolute determinant: returns (sign, logabsdet).",
    ),
    Function::other(
        "linalg.solve",
        "Solution x of x1 @ x = x2 (LU with partial pivoting).",
    ),
    Function::other("linalg.pinv", "Pseudo-inverse from the SVD."),
    Function::other(
        "linalg.matrix_rank",
        "Number of singular values above rtol * max(s).",
    ),
    Function::other(
        "linalg.lstsq",
        "Least squares (NumPy's): returns (x, residuals, rank, s).",
    ),
    Function::other("linalg.matrix_transpose", "The last two axes swapped."),
    Function::other("linalg.diagonal", "The offset-th diagonal of each matrix."),
    Function::other(
        "linalg.trace",
        "Sum of the offset-th diagonal of each matrix.",
    ),
    Function::other("linalg.outer", "Outer product of two vectors."),
    Function::other("linalg.vecdot", "Dot product of vectors along an axis."),
    Function::other("linalg.cross", "Cross product of 3-vectors along an axis."),
    Function::other("linalg.tensordot", "Tensor dot product (as tensordot)."),
    Function::other("linalg.matmul", "Matrix product (as matmul)."),
    Function::other(
        "linalg.vector_norm",
        "Vector norm over axes (ord: p, inf, -inf, 0).",
    ),
    Function::other(
        "linalg.matrix_norm",
        "Matrix norm of the last two axes (ord: fro, nuc, 1, -1, 2, -2, inf, -inf).",
    ),
    Function::other("linalg.matrix_power", "Integer power of square matrices."),
];

pub struct Linalg;

impl OpFamily for Linalg {
    fn name(&self) -> &'static str {
        "linalg"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Linalg)
    }

    fn functions(&self) -> Vec<Function> {
        LINALG_FUNCTIONS.to_vec()
    }
}

/// The shape and dtype of a linalg op other than `matmul`.
pub(crate) fn infer(op: Op, args: &OpArgs, inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
    let one = |name: &'static str| match inputs {
        [x] => Ok(*x),
        _ => Err(AresError::arg(
            name,
            format!("takes 1 input, got {}", inputs.len()),
        )),
    };
    match (op, args) {
        (Op::Qr, OpArgs::None) => {
            let (shape, dtype) = one("linalg.qr")?;
            let [m, n] = shape.as_slice() else {
                return Err(AresError::shape(
                    "linalg.qr",
                    format!(
                        "needs a matrix (2-D), got shape {}",
                        crate::array::fmt_shape(shape)
                    ),
                ));
            };
            if dtype != DType::F64 {
                return Err(AresError::arg(
                    "linalg.qr",
                    format!("computes in float64, got {dtype}"),
                ));
            }
            Ok((smallvec::smallvec![m + m.min(n), *n], DType::F64))
        }
        (Op::QrProject, OpArgs::None) => projected_qr::infer(inputs),
        (Op::Dense, OpArgs::Dense(f)) => {
            let shapes: Vec<&[usize]> = inputs.iter().map(|(s, _)| s.as_slice()).collect();
            let dtype = inputs
                .iter()
                .map(|(_, d)| *d)
                .find(|d| *d != DType::F64)
                .unwrap_or(DType::F64);
            Ok((dense::dense_shape(*f, &shapes, dtype)?, f.out_dtype(dtype)))
        }
        _ => Err(AresError::arg(
            op.name(),
            format!("is not a tileable op with arguments {args:?}"),
        )),
    }
}

/// The kernel of a linalg chunk other than `matmul`.
pub(crate) fn apply(op: Op, args: &OpArgs, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    match (op, args, inputs) {
        (Op::QrBlock, _, [x]) => tsqr_kernels::block(x),
        (Op::QrLeaf, _, [x]) => tsqr_kernels::leaf(x),
        (Op::QrStack, _, children) => tsqr_kernels::stack(children),
        (Op::QrDown, OpArgs::Tsqr { slot }, ins) => tsqr_kernels::down(ins, *slot),
        (Op::QrApply, OpArgs::Tsqr { slot }, ins) => tsqr_kernels::apply(ins, *slot),
        (Op::QrProjectLeaf, _, [x, w]) => projected_qr_kernels::leaf(x, w),
        (Op::QrProjectApply, OpArgs::TsqrRows { slot, start, len }, ins) => {
            projected_qr_kernels::apply(ins, *slot, *start, *len)
        }
        (Op::Dense, OpArgs::Dense(f), ins) => dense::apply(*f, ins),
        (Op::CholeskyBlock, OpArgs::CholeskyStep(step), ins) => blocked_cholesky::apply(*step, ins),
        (Op::LuBlock, OpArgs::LuStep(step), ins) => blocked_lu::apply(*step, ins),
        _ => kerr(format!(
            "{op} with arguments {args:?} and {} inputs is not a chunk kernel",
            inputs.len()
        )),
    }
}

/// The kernel of a linalg chunk that makes one operand itself (`fuse_generated_operands`):
/// `other` is its one input.
pub(crate) fn apply_generated(
    op: Op,
    operand: &crate::ops::GeneratedOperand,
    other: &ArrayData,
) -> KResult<ArrayData> {
    match op {
        Op::Matmul => generated_product::matmul_generated(operand, other),
        Op::QrProjectLeaf => projected_qr_kernels::leaf_generated(operand, other),
        _ => kerr(format!("{op} does not generate an operand")),
    }
}

impl Tiler {
    /// Tiles a linalg op other than `matmul`.
    pub(crate) fn tile_linalg(
        &mut self,
        op: Op,
        args: &OpArgs,
        shape: &Shape,
        inputs: &[&Tiled],
        in_shapes: &[&Shape],
    ) -> Result<Tiled> {
        match (op, args, inputs, in_shapes) {
            (Op::Qr, _, [x], [s]) => self.tile_qr(x, s),
            (Op::QrProject, _, [x, w], [xs, ws]) => self.tile_projected_qr(x, w, xs, ws[1]),
            (Op::Dense, OpArgs::Dense(f), ins, shapes) => {
                self.tile_dense(*f, args, shape, ins, shapes)
            }
            _ => Err(AresError::prepare(
                "tile",
                format!("{op} with arguments {args:?} cannot be tiled"),
            )),
        }
    }
}
