//! The chunk kernels of the projected QR (see `projected_qr` for the tree they make).
//!
//! A leaf reads its block of rows of `x` (m × n) once, a block of 64 K values at a time,
//! and keeps three things of `Y = x·w` (w: n × l): Q (m × l, orthonormal columns), R (l × l)
//! and `Wᵀ = (Qᵀ·x)ᵀ = xᵀ·Q` (n × l). It is sequential TSQR (Demmel et al.) over the blocks:
//! the first block's rows are factored, `Y₀ = Q₀·R₀`, and each next block's rows are stacked
//! under the R so far and factored again, `[R; Yᵣ] = Q̃ᵣ·Rᵣ`, Q̃ᵣ's top l rows (`Tᵣ`, l × l)
//! carrying the rows before it and its bottom rows (`Bᵣ`) the new ones. So the Q so far is
//! `[Q·Tᵣ; Bᵣ]`, and its projection of x follows as `Wᵀ ← Wᵀ·Tᵣ + xᵣᵀ·Bᵣ`, while the block is
//! in cache. Every step is a Householder QR and products by orthonormal factors: as stable
//! as factoring Y whole. Q's rows come out at the end, each block's bottom times the product
//! of the later tops, from the last block back.
//!
//! Packed in one chunk of l columns, `(m + n + l) × l`: Q's rows, then Wᵀ, then R, so the
//! tree's inner nodes (`tsqr_kernels::stack`) find each leaf's R in its last l rows, as in
//! every TSQR chunk. A leaf's rows `start..start + len` times its factor from the tree
//! (`apply`) are its rows of the final Q (Q's part) or its term of `(Qᵀ·x)ᵀ` (Wᵀ's part).
//!
//! The rows come from a stored chunk or from a creation operand made block by block
//! ([`leaf_generated`]): the chunk of a random matrix then never exists, and it is drawn once.

use super::faer_bridge;
use super::kernels::{as_2d, as_f64, gemm_to};
use super::tsqr_kernels::leaf_and_factor;
use crate::array::{ArrayData, DType};
use crate::kernels::{kerr, KResult};
use crate::ops::family::creation::generate::Stream;
use crate::ops::GeneratedOperand;
use ndarray::{s, Array2, ArrayView2};

/// Values of x read per block: 512 KB of float64, with the block's products in the core's L2.
const BLOCK_VALUES: usize = 1 << 16;

/// Where a leaf's rows of x come from, a block at a time, in order.
enum RowSource<'a> {
    Stored {
        x: ArrayView2<'a, f64>,
        next: usize,
    },
    Generated {
        stream: Stream,
        cols: usize,
        buf: Vec<f64>,
    },
}

impl RowSource<'_> {
    /// The next `len` rows.
    fn next(&mut self, len: usize) -> ArrayView2<'_, f64> {
        match self {
            RowSource::Stored { x, next } => {
                let rows = x.slice(s![*next..*next + len, ..]);
                *next += len;
                rows
            }
            RowSource::Generated { stream, cols, buf } => {
                let values = len * *cols;
                buf.resize(values, 0.0);
                stream.fill(&mut buf[..values]);
                ArrayView2::from_shape((len, *cols), &buf[..values]).expect("whole rows")
            }
        }
    }
}

/// A leaf from a stored block of rows of x, and w.
pub fn leaf(x: &ArrayData, w: &ArrayData) -> KResult<ArrayData> {
    let x = as_f64(x);
    let x = as_2d(&x)?;
    let (m, n) = x.dim();
    let w = as_f64(w);
    let mut rows = RowSource::Stored { x, next: 0 };
    project(&mut rows, m, n, as_2d(&w)?)
}

/// A leaf whose rows of x are made by a creation operand, block by block.
pub fn leaf_generated(operand: &GeneratedOperand, w: &ArrayData) -> KResult<ArrayData> {
    let GeneratedOperand { fill, shape, left } = operand;
    let Some((stream, DType::F64)) = Stream::new(fill).filter(|_| *left) else {
        return kerr(format!(
            "a projected QR generates its left operand as float64, got {fill:?} (left: {left})"
        ));
    };
    let &[m, n] = shape.as_slice() else {
        return kerr(format!(
            "a generated operand is a matrix, got shape {shape:?}"
        ));
    };
    let w = as_f64(w);
    let mut rows = RowSource::Generated {
        stream,
        cols: n,
        buf: Vec::new(),
    };
    project(&mut rows, m, n, as_2d(&w)?)
}

/// The packed leaf of m rows of x (n columns, from `rows`) and w (n × l): see the module.
fn project(rows: &mut RowSource, m: usize, n: usize, w: ArrayView2<f64>) -> KResult<ArrayData> {
    let l = w.ncols();
    if w.nrows() != n {
        return kerr(format!(
            "projected QR of a block of {m} × {n} by {:?}",
            w.dim()
        ));
    }
    if l == 0 || m < l {
        return kerr(format!(
            "a projected QR leaf needs at least as many rows as the product's {l} columns, \
             got {m}"
        ));
    }
    // The first block has at least l rows (m ≥ l), so every R is l × l.
    let per_block = (BLOCK_VALUES / n.max(1)).max(l).min(m);
    let mut out = Array2::<f64>::zeros((m + n + l, l));
    // [R; Yᵣ], and Wᵀ·Tᵣ before the block's own term is added.
    let mut stacked = Array2::<f64>::zeros((l + per_block, l));
    let mut turned = Array2::<f64>::zeros((n, l));
    let mut tops: Vec<Array2<f64>> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut r = Array2::<f64>::zeros((l, l));
    let mut start = 0;
    while start < m {
        let h = per_block.min(m - start);
        let x = rows.next(h);
        let above = if start == 0 { 0 } else { l };
        if above > 0 {
            stacked.slice_mut(s![..l, ..]).assign(&r);
        }
        gemm_to(stacked.slice_mut(s![above..above + h, ..]), x, w, false);
        let (q, r_new) = faer_bridge::qr(stacked.slice(s![..above + h, ..]));
        r = r_new;
        let (top, bottom) = q.view().split_at(ndarray::Axis(0), above);
        let (mut q_rows, rest) = out.view_mut().split_at(ndarray::Axis(0), m);
        let mut wt = rest.split_at(ndarray::Axis(0), n).0;
        if above > 0 {
            gemm_to(turned.view_mut(), wt.view(), top, false);
            gemm_to(turned.view_mut(), x.t(), bottom, true);
            wt.assign(&turned);
            tops.push(top.to_owned());
        } else {
            gemm_to(wt, x.t(), bottom, false);
        }
        q_rows.slice_mut(s![start..start + h, ..]).assign(&bottom);
        starts.push(start);
        start += h;
    }
    // Q's rows: block b's bottom times T_{b+1}·…·T_last, from the last block back.
    let mut carry = Array2::<f64>::eye(l);
    let mut next_carry = Array2::<f64>::zeros((l, l));
    let mut block = Array2::<f64>::zeros((per_block, l));
    for b in (0..starts.len()).rev() {
        let end = starts.get(b + 1).copied().unwrap_or(m);
        let h = end - starts[b];
        let mut rows_b = out.slice_mut(s![starts[b]..end, ..]);
        let mut tmp = block.slice_mut(s![..h, ..]);
        gemm_to(tmp.view_mut(), rows_b.view(), carry.view(), false);
        rows_b.assign(&tmp);
        if b > 0 {
            gemm_to(
                next_carry.view_mut(),
                tops[b - 1].view(),
                carry.view(),
                false,
            );
            std::mem::swap(&mut carry, &mut next_carry);
        }
    }
    out.slice_mut(s![m + n.., ..]).assign(&r);
    Ok(ArrayData::F64(out.into_dyn()))
}

/// Inputs (a leaf, its packed parent[, the parent's factor]): the leaf's rows
/// `start..start + len` times the leaf's factor from the tree.
pub fn apply(inputs: &[&ArrayData], slot: u32, start: u64, len: u64) -> KResult<ArrayData> {
    let (leaf, f) = leaf_and_factor("qr_project_apply", inputs, slot)?;
    let leaf = as_f64(leaf);
    let leaf = as_2d(&leaf)?;
    let (start, len) = (start as usize, len as usize);
    let l = leaf.ncols();
    if f.dim() != (l, l) || start.saturating_add(len) > leaf.nrows() {
        return kerr(format!(
            "qr_project_apply: rows {start}..{} of a {:?} leaf by a {:?} factor",
            start.saturating_add(len),
            leaf.dim(),
            f.dim()
        ));
    }
    let mut out = Array2::<f64>::zeros((len, l));
    gemm_to(
        out.view_mut(),
        leaf.slice(s![start..start + len, ..]),
        f.view(),
        false,
    );
    Ok(ArrayData::F64(out.into_dyn()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::creation::kernels::fill as created;
    use crate::ops::family::linalg::kernels::gemm_f64;
    use crate::ops::Fill;

    fn max_diff(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 {
        assert_eq!(a.dim(), b.dim());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    fn parts(p: &ArrayData, m: usize, n: usize) -> [Array2<f64>; 3] {
        let p = as_f64(p);
        let p = as_2d(&p).unwrap();
        [
            p.slice(s![..m, ..]).to_owned(),
            p.slice(s![m..m + n, ..]).to_owned(),
            p.slice(s![m + n.., ..]).to_owned(),
        ]
    }

    /// Blocks of one row up to many (n = 1000 gives 65 rows a block), a short last block,
    /// a rank-deficient product: Q·R = x·w, QᵀQ = I, R upper triangular and equal to the
    /// whole Y's R up to its rows' signs, Wᵀ = xᵀ·Q; and a generated x gives the stored one's
    /// values.
    #[test]
    fn one_pass_factors_and_projects_as_the_whole_product_would() {
        let cases = [
            (20, 3, 2, false),
            (300, 1000, 20, false),
            (131, 1000, 20, false),
            (70_000, 1, 1, false),
            (400, 9, 5, true),
        ];
        for (m, n, l, deficient) in cases {
            let fill = Fill::Normal { seed: 7 };
            let x = created(&fill, &[m, n]).unwrap();
            let w = created(&Fill::Uniform { seed: 3 }, &[n, l]).unwrap();
            let mut w = as_f64(&w)
                .into_owned()
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            if deficient {
                // Two equal columns and a zero one: Y has rank l - 2.
                let c0 = w.column(0).to_owned();
                w.column_mut(1).assign(&c0);
                w.column_mut(2).fill(0.0);
            }
            let what = format!("{m} × {n} by {l}");
            let wd = ArrayData::F64(w.clone().into_dyn());
            let packed = leaf(&x, &wd).unwrap();
            assert_eq!(packed.shape(), &[m + n + l, l], "{what}");
            let [q, wt, r] = parts(&packed, m, n);
            let xv = as_f64(&x);
            let xv = as_2d(&xv).unwrap();
            let y = gemm_f64(xv, w.view());
            let scale = y.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            let err = max_diff(gemm_f64(q.view(), r.view()).view(), y.view());
            assert!(
                err < 1e-12 * scale * (m as f64).sqrt(),
                "{what}: Q·R off by {err}"
            );
            let err = max_diff(gemm_f64(q.t(), q.view()).view(), Array2::eye(l).view());
            assert!(err < 1e-12, "{what}: QᵀQ off by {err}");
            let err = max_diff(wt.view(), gemm_f64(xv.t(), q.view()).view());
            assert!(err < 1e-11 * (m as f64).sqrt(), "{what}: Wᵀ off by {err}");
            for i in 0..l {
                for j in 0..i {
                    assert_eq!(r[[i, j]], 0.0, "{what}: R[{i}, {j}]");
                }
            }
            if !deficient {
                let (_, whole) = faer_bridge::qr(y.view());
                for i in 0..l {
                    let sign = (r[[i, i]] * whole[[i, i]]).signum();
                    let row = whole.row(i).mapv(|v| v * sign);
                    let err = max_diff(
                        r.row(i).insert_axis(ndarray::Axis(0)),
                        row.view().insert_axis(ndarray::Axis(0)),
                    );
                    assert!(err < 1e-10 * scale, "{what}: R row {i} off by {err}");
                }
            }
            let operand = GeneratedOperand {
                fill,
                shape: [m, n].into_iter().collect(),
                left: true,
            };
            let generated = leaf_generated(&operand, &wd).unwrap();
            let [gq, gwt, gr] = parts(&generated, m, n);
            for (got, want) in [(gq, q), (gwt, wt), (gr, r)] {
                let err = max_diff(got.view(), want.view());
                assert!(err <= 1e-12 * scale, "{what}: generated rows off by {err}");
            }
        }
    }

    #[test]
    fn refusals_name_the_shapes() {
        let x = created(&Fill::Normal { seed: 1 }, &[3, 4]).unwrap();
        let w = created(&Fill::Normal { seed: 2 }, &[4, 5]).unwrap();
        let e = leaf(&x, &w).unwrap_err();
        assert!(e.0.contains("needs at least as many rows"), "{}", e.0);
        let w = created(&Fill::Normal { seed: 2 }, &[3, 2]).unwrap();
        let e = leaf(&x, &w).unwrap_err();
        assert!(e.0.contains("3 × 4 by (3, 2)"), "{}", e.0);
        let operand = GeneratedOperand {
            fill: Fill::Normal { seed: 1 },
            shape: [3, 4].into_iter().collect(),
            left: false,
        };
        let e = leaf_generated(&operand, &w).unwrap_err();
        assert!(e.0.contains("left operand"), "{}", e.0);
        let leafd = leaf(&x, &created(&Fill::Normal { seed: 2 }, &[4, 2]).unwrap()).unwrap();
        let parent = ArrayData::F64(ndarray::ArrayD::zeros(ndarray::IxDyn(&[4, 2])));
        let e = apply(&[&leafd, &parent], 0, 5, 9).unwrap_err();
        assert!(e.0.contains("rows 5..14"), "{}", e.0);
    }
}
