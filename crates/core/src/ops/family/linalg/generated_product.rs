//! The matrix product of a chunk and a creation operand made inside the product, block by
//! block, instead of read from a chunk of its own ([`crate::prepare::generated_products`]).
//!
//! Why: a product of a random 80 MB block with a thin matrix (a sketch `x·Ω`) otherwise
//! waits for the block to be written to fresh memory, faulted in page by page, and streams
//! it from DRAM through a 20-column product. A random chunk is a pure function of its seed,
//! and drawing it again costs about what first touching its memory does, so each product
//! draws its own copy: 64 K values (512 KB, in the core's L2) at a time, multiplied while
//! they are in cache. The chunk never exists; the values are the creation kernel's bit for
//! bit, and so are the products' sums up to the grouping of the blocks along the shared
//! axis. (`svd_compressed` reads its x once, in the leaves of a projected QR, which generate
//! their blocks the same way: `projected_qr_kernels`.)

use super::kernels::{as_2d, as_f64, gemm_to, may_return_negative_zero, FEW_ROWS};
use crate::array::{ArrayData, DType};
use crate::kernels::{kerr, KResult};
use crate::ops::family::creation::generate::Stream;
use crate::ops::GeneratedOperand;
use ndarray::{s, Array2, ArrayView2};

/// Values generated per block: 512 KB of float64.
const BLOCK_VALUES: usize = 1 << 16;

/// `G @ other` (`left`) or `other @ G`, where `G` of shape `shape` holds the values of
/// `fill` in C order.
pub fn matmul_generated(operand: &GeneratedOperand, other: &ArrayData) -> KResult<ArrayData> {
    let GeneratedOperand { fill, shape, left } = operand;
    let left = *left;
    let Some((mut stream, DType::F64)) = Stream::new(fill) else {
        return kerr(format!("{fill:?} is not a float64 stream"));
    };
    let &[rows, cols] = shape.as_slice() else {
        return kerr(format!(
            "a generated operand is a matrix, got shape {shape:?}"
        ));
    };
    let other = as_f64(other);
    let other = as_2d(&other)?;
    // `G`'s rows come out of the stream in order, a block of them at a time.
    let per_block = (BLOCK_VALUES / cols.max(1)).clamp(1, rows.max(1));
    let mut buf = vec![0.0; per_block * cols];
    let mut next_rows = |start: usize, buf: &mut Vec<f64>| {
        let n = per_block.min(rows - start);
        stream.fill(&mut buf[..n * cols]);
        n
    };
    fn view(buf: &[f64], n: usize, cols: usize) -> ArrayView2<'_, f64> {
        ArrayView2::from_shape((n, cols), &buf[..n * cols]).expect("a block of whole rows")
    }
    let product = if left {
        // out[rows of the block] = G[block] @ other.
        if other.nrows() != cols {
            return kerr(format!("matmul of {shape:?} by {:?}", other.dim()));
        }
        let n = other.ncols();
        let mut out = Array2::<f64>::zeros((rows, n));
        let mut negative_zero = false;
        for start in (0..rows).step_by(per_block) {
            let h = next_rows(start, &mut buf);
            negative_zero |= may_return_negative_zero(h, n, cols);
            gemm_to(
                out.slice_mut(s![start..start + h, ..]),
                view(&buf, h, cols),
                other,
                false,
            );
        }
        if negative_zero {
            out.mapv_inplace(|v| v + 0.0);
        }
        out
    } else {
        // out += other[:, block] @ G[block], along the shared axis. A product of few rows
        // and many columns (`Qᵀ·x`: 20 by 1000) is gemm's worst shape, so it is made as its
        // transpose (`G[block]ᵀ @ other[:, block]ᵀ` into `outᵀ`), as `gemm_float` does.
        if other.ncols() != rows {
            return kerr(format!("matmul of {:?} by {shape:?}", other.dim()));
        }
        let m = other.nrows();
        let mut out = Array2::<f64>::zeros((m, cols));
        let transposed = m <= FEW_ROWS && cols >= 4 * FEW_ROWS;
        let mut negative_zero = false;
        for start in (0..rows).step_by(per_block) {
            let h = next_rows(start, &mut buf);
            negative_zero |= may_return_negative_zero(m, cols, h);
            let (g, a) = (view(&buf, h, cols), other.slice(s![.., start..start + h]));
            if transposed {
                gemm_to(out.view_mut().reversed_axes(), g.t(), a.t(), start > 0);
            } else {
                gemm_to(out.view_mut(), a, g, start > 0);
            }
        }
        if negative_zero {
            out.mapv_inplace(|v| v + 0.0);
        }
        out
    };
    Ok(ArrayData::F64(product.into_dyn()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Scalar;
    use crate::ops::family::creation::kernels::fill as created;
    use crate::ops::Fill;

    fn matmul_generated(
        fill: &Fill,
        shape: &[usize],
        left: bool,
        other: &ArrayData,
    ) -> KResult<ArrayData> {
        let operand = GeneratedOperand {
            fill: *fill,
            shape: shape.iter().copied().collect(),
            left,
        };
        super::matmul_generated(&operand, other)
    }

    fn random(rows: usize, cols: usize, seed: u64) -> ArrayData {
        created(&Fill::Uniform { seed }, &[rows, cols]).unwrap()
    }

    /// Every shape around the block boundaries, both sides, every float64 stream: the product
    /// with the materialized chunk, to the last bits the blocks' grouping allows.
    #[test]
    fn products_equal_the_materialized_chunks() {
        let fills = [
            Fill::Normal { seed: 3 },
            Fill::Uniform { seed: 4 },
            Fill::Const {
                value: Scalar::F64(0.5),
            },
            Fill::Range {
                start: Scalar::F64(-1.0),
                step: Scalar::F64(0.25),
                offset: 7,
                end: None,
            },
        ];
        let shapes = [
            (1, 1),
            (3, 5),
            (70, 1000),
            (2, BLOCK_VALUES + 3),
            (BLOCK_VALUES + 1, 2),
        ];
        for fill in &fills {
            for &(r, c) in &shapes {
                let g = created(fill, &[r, c]).unwrap();
                for k in [1, 7, 20, 40] {
                    let b = random(c, k, 1);
                    let want = super::super::kernels::matmul(&g, &b).unwrap();
                    let got = matmul_generated(fill, &[r, c], true, &b).unwrap();
                    close(&got, &want, &format!("{fill:?} {r}x{c} @ {c}x{k}"));
                    let a = random(k, r, 2);
                    let want = super::super::kernels::matmul(&a, &g).unwrap();
                    let got = matmul_generated(fill, &[r, c], false, &a).unwrap();
                    close(&got, &want, &format!("{k}x{r} @ {fill:?} {r}x{c}"));
                }
            }
        }
    }

    fn close(got: &ArrayData, want: &ArrayData, what: &str) {
        assert_eq!(got.shape(), want.shape(), "{what}");
        for (g, w) in got.iter_f64().zip(want.iter_f64()) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{what}: {g} vs {w}"
            );
        }
    }

    /// A product of `-0.0`s is `+0.0`, as NumPy's BLAS gives it, on every block (a last
    /// block of one row goes through gemm's thin-shape path).
    #[test]
    fn signed_zeros_follow_numpy_on_a_short_last_block() {
        let zero = Fill::Const {
            value: Scalar::F64(-0.0),
        };
        let cols = 4;
        let rows = BLOCK_VALUES / cols + 1;
        let b = ArrayData::F64(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[cols, 20]), 1.0));
        let got = matmul_generated(&zero, &[rows, cols], true, &b).unwrap();
        assert!(got.iter_f64().all(|v| v == 0.0 && v.is_sign_positive()));
        let a = ArrayData::F64(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[20, rows]), 1.0));
        let got = matmul_generated(&zero, &[rows, cols], false, &a).unwrap();
        assert!(got.iter_f64().all(|v| v == 0.0 && v.is_sign_positive()));
    }

    #[test]
    fn empty_and_mismatched_operands() {
        let fill = Fill::Normal { seed: 1 };
        let got = matmul_generated(&fill, &[0, 4], true, &random(4, 3, 1)).unwrap();
        assert_eq!(got.shape(), &[0, 3]);
        let got = matmul_generated(&fill, &[0, 4], false, &random(3, 0, 1)).unwrap();
        assert_eq!(got.shape(), &[3, 4]);
        assert!(got.iter_f64().all(|v| v == 0.0 && v.is_sign_positive()));
        let e = matmul_generated(&fill, &[2, 4], true, &random(3, 3, 1)).unwrap_err();
        assert!(e.0.contains("matmul of [2, 4] by (3, 3)"), "{}", e.0);
        let e = matmul_generated(&fill, &[2, 4, 1], true, &random(3, 3, 1)).unwrap_err();
        assert!(e.0.contains("is a matrix"), "{}", e.0);
    }
}
