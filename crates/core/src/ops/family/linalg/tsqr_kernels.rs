//! The chunk kernels of TSQR (see `tsqr` for the tree they make).
//!
//! A chunk kernel has one output, and a QR step has two (Q and R), so a step's chunk is
//! *packed*, its R (k × n) in its last k rows:
//! - an inner node (and a matrix of one block) keeps its explicit Q (q × k, k = min(q, n),
//!   zero-padded to n columns) on top of its R: `(q + k) × n`. Inside the tree every R is
//!   n × n (every block has at least n rows), so the slot of child `s` in its parent's Q is
//!   rows `s·n .. (s+1)·n`;
//! - a leaf of a tree (m × n, m ≥ n) keeps its Householder form instead, `(m + 2n) × n`:
//!   faer's factor (R above the diagonal, the vectors V below; m·n values, column-major),
//!   the block reflector's n × n T (column-major), then R (row-major). Its rows of the final
//!   Q are `Q_leaf·[F; 0]` for the n × n factor F from the tree, which the structure turns
//!   into one m × n × n product (`faer_bridge::householder_times_top`): the leaf's Q is never
//!   formed, which halved the flops of a leaf and freed one block-sized buffer per leaf.

use super::faer_bridge;
use super::kernels::{as_f64, gemm_f64};
use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use ndarray::{s, Array2, ArrayView2, Ix2};

/// The k of a packed chunk of `rows` rows and `n` columns (`rows = q + min(q, n)`).
fn packed_k(rows: usize, n: usize) -> usize {
    if rows >= 2 * n {
        n
    } else {
        rows / 2
    }
}

/// A packed chunk's Q (q × k) and R (k × n) as views.
fn split<'a>(p: &ArrayView2<'a, f64>) -> (ArrayView2<'a, f64>, ArrayView2<'a, f64>) {
    let p = *p;
    let (rows, n) = p.dim();
    let k = packed_k(rows, n);
    let q = rows - k;
    let (top, r) = p.split_at(ndarray::Axis(0), q);
    (top.slice_move(s![.., ..k]), r)
}

/// A float64 chunk as a matrix, read in place (the chunks of TSQR are float64 matrices).
fn matrix(a: &ArrayData) -> KResult<ArrayView2<'_, f64>> {
    match a {
        ArrayData::F64(x) => x
            .view()
            .into_dimensionality::<Ix2>()
            .or_else(|e| kerr(format!("TSQR needs 2-D chunks: {e}"))),
        other => kerr(format!("TSQR needs float64 chunks, got {}", other.dtype())),
    }
}

/// `f` of a block of any numeric dtype as a float64 matrix (converted when it is not one).
fn with_block<T>(x: &ArrayData, f: impl FnOnce(ArrayView2<f64>) -> KResult<T>) -> KResult<T> {
    let x = as_f64(x);
    let x = x
        .view()
        .into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("TSQR needs 2-D chunks: {e}")))?;
    f(x)
}

/// A matrix of one block: its QR, packed.
pub fn block(x: &ArrayData) -> KResult<ArrayData> {
    with_block(x, |x| {
        Ok(ArrayData::F64(faer_bridge::qr_packed(x).into_dyn()))
    })
}

/// A leaf of a tree: the block's QR in Householder form (`(m + 2n) × n`, see the module).
pub fn leaf(x: &ArrayData) -> KResult<ArrayData> {
    with_block(x, householder_leaf)
}

fn householder_leaf(x: ArrayView2<f64>) -> KResult<ArrayData> {
    let (m, n) = x.dim();
    if m < n || n == 0 {
        return kerr(format!(
            "a TSQR leaf needs at least as many rows as columns, got {m} × {n}"
        ));
    }
    let mut out = Array2::<f64>::zeros((m + 2 * n, n));
    let flat = out.as_slice_mut().expect("a new array is contiguous");
    let (basis, rest) = flat.split_at_mut(m * n);
    let (coeff, r) = rest.split_at_mut(n * n);
    faer_bridge::householder_qr_into(x, basis, coeff);
    // R, row-major, from the factor's upper triangle (column-major: (i, j) at j·m + i).
    for i in 0..n {
        for j in i..n {
            r[i * n + j] = basis[j * m + i];
        }
    }
    Ok(ArrayData::F64(out.into_dyn()))
}

/// An inner node: the QR of its children's R factors stacked in order, packed.
pub fn stack(children: &[&ArrayData]) -> KResult<ArrayData> {
    let mats = children
        .iter()
        .map(|c| matrix(c))
        .collect::<KResult<Vec<_>>>()?;
    let rs: Vec<ArrayView2<f64>> = mats.iter().map(|m| split(m).1).collect();
    let stacked = ndarray::concatenate(ndarray::Axis(0), &rs)
        .or_else(|e| kerr(format!("TSQR: the R factors do not stack: {e}")))?;
    Ok(ArrayData::F64(
        faer_bridge::qr_packed(stacked.view()).into_dyn(),
    ))
}

/// Child `slot`'s rows of a packed parent's Q, times the parent's own factor from above
/// (`down`, none at the root): the n × n factor that carries the child's Q to the final Q.
pub(super) fn factor(
    parent: &ArrayData,
    down: Option<&ArrayData>,
    slot: usize,
) -> KResult<Array2<f64>> {
    let p = matrix(parent)?;
    let n = p.ncols();
    let (q, _) = split(&p);
    if q.nrows() < (slot + 1) * n {
        return kerr(format!(
            "TSQR: slot {slot} is outside a parent Q of {} rows",
            q.nrows()
        ));
    }
    let rows = q.slice(s![slot * n..(slot + 1) * n, ..]);
    Ok(match down {
        Some(d) => gemm_f64(rows, matrix(d)?),
        None => rows.to_owned(),
    })
}

/// Inputs (packed parent[, the parent's factor]): the factor of child `slot`.
pub fn down(inputs: &[&ArrayData], slot: u32) -> KResult<ArrayData> {
    let f = match inputs {
        [p] => factor(p, None, slot as usize)?,
        [p, d] => factor(p, Some(d), slot as usize)?,
        _ => {
            return kerr(format!(
                "qr_down expects 1 or 2 inputs, got {}",
                inputs.len()
            ))
        }
    };
    Ok(ArrayData::F64(f.into_dyn()))
}

/// Inputs (a leaf, its packed parent[, the parent's factor]) of the op `name`: the leaf and
/// its factor from the tree.
pub(super) fn leaf_and_factor<'a>(
    name: &str,
    inputs: &[&'a ArrayData],
    slot: u32,
) -> KResult<(&'a ArrayData, Array2<f64>)> {
    match inputs {
        [l, p] => Ok((l, factor(p, None, slot as usize)?)),
        [l, p, d] => Ok((l, factor(p, Some(d), slot as usize)?)),
        _ => kerr(format!(
            "{name} expects 2 or 3 inputs, got {}",
            inputs.len()
        )),
    }
}

/// Inputs (leaf in Householder form, packed parent[, the parent's factor]): the leaf's rows
/// of the final Q, its own Q times its factor.
pub fn apply(inputs: &[&ArrayData], slot: u32) -> KResult<ArrayData> {
    let (leaf, f) = leaf_and_factor("qr_apply", inputs, slot)?;
    let leaf = matrix(leaf)?;
    let (rows, n) = leaf.dim();
    let Some(flat) = leaf
        .as_slice()
        .filter(|_| rows >= 3 * n && f.dim() == (n, n))
    else {
        return kerr(format!(
            "qr_apply: a {rows} × {n} chunk is not a TSQR leaf for a {:?} factor",
            f.dim()
        ));
    };
    let m = rows - 2 * n;
    let (basis, rest) = flat.split_at(m * n);
    let q = faer_bridge::householder_times_top(basis, &rest[..n * n], m, f.view());
    Ok(ArrayData::F64(q.into_dyn()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(m: usize, n: usize, seed: usize) -> ArrayData {
        let x = Array2::from_shape_fn((m, n), |(i, j)| {
            (((i + seed) * 31 + j * 17) % 23) as f64 / 7.0 - 1.5
        });
        ArrayData::F64(x.into_dyn())
    }

    fn m2(a: &ArrayData) -> Array2<f64> {
        matrix(a).unwrap().to_owned()
    }

    /// Two leaves under one root: the assembled Q times the root's R is the input, and Q's
    /// columns are orthonormal.
    #[test]
    fn two_level_tree_reconstructs_the_input() {
        let n = 4;
        let (a, b) = (data(9, n, 0), data(6, n, 5));
        let (la, lb) = (leaf(&a).unwrap(), leaf(&b).unwrap());
        assert_eq!(la.shape(), &[9 + 2 * n, n]);
        let root = stack(&[&la, &lb]).unwrap();
        assert_eq!(root.shape(), &[2 * n + n, n]);
        let qa = m2(&apply(&[&la, &root], 0).unwrap());
        let qb = m2(&apply(&[&lb, &root], 1).unwrap());
        let q = ndarray::concatenate(ndarray::Axis(0), &[qa.view(), qb.view()]).unwrap();
        let root = m2(&root);
        let r = split(&root.view()).1.to_owned();
        let x = ndarray::concatenate(ndarray::Axis(0), &[m2(&a).view(), m2(&b).view()]).unwrap();
        let back = gemm_f64(q.view(), r.view());
        assert!(back.iter().zip(&x).all(|(p, t)| (p - t).abs() < 1e-10));
        let qtq = gemm_f64(q.t(), q.view());
        for ((i, j), v) in qtq.indexed_iter() {
            assert!((v - f64::from(u8::from(i == j))).abs() < 1e-12);
        }
        // A deeper factor: the root's slot times a factor from above.
        let d = down(&[&ArrayData::F64(root.clone().into_dyn())], 1).unwrap();
        assert_eq!(d.shape(), &[n, n]);
        let twice = down(&[&ArrayData::F64(root.into_dyn()), &d], 0).unwrap();
        assert_eq!(twice.shape(), &[n, n]);
    }

    /// A leaf's rows of Q from its Householder form equal its explicit Q times the factor,
    /// for square and tall blocks and a block with a zero column (rank-deficient).
    #[test]
    fn a_leaf_applies_its_reflectors_as_its_explicit_q_would() {
        for (m, n, zero_column) in [(9, 4, None), (4, 4, None), (60, 7, Some(3)), (33, 1, None)] {
            let mut x = m2(&data(m, n, 2));
            if let Some(j) = zero_column {
                x.column_mut(j).fill(0.0);
            }
            let f = m2(&data(n, n, 9));
            let leaf = leaf(&ArrayData::F64(x.clone().into_dyn())).unwrap();
            assert_eq!(leaf.shape(), &[m + 2 * n, n]);
            let (q, r) = faer_bridge::qr(x.view());
            let max_diff = |a: ArrayView2<f64>, b: ArrayView2<f64>| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max)
            };
            let r_err = max_diff(split(&matrix(&leaf).unwrap()).1, r.view());
            assert!(r_err < 1e-12, "{m} × {n}: R off by {r_err}");
            let mut parent = Array2::<f64>::zeros((2 * n, n));
            parent.slice_mut(s![..n, ..]).assign(&f);
            let parent = ArrayData::F64(parent.into_dyn());
            let got = m2(&apply(&[&leaf, &parent], 0).unwrap());
            let want = gemm_f64(q.view(), f.view());
            let err = max_diff(got.view(), want.view());
            assert!(err < 1e-12, "{m} × {n}: Q·F off by {err}");
        }
    }

    #[test]
    fn a_short_block_packs_its_smaller_factors() {
        let p = m2(&block(&data(2, 5, 1)).unwrap());
        assert_eq!(p.dim(), (4, 5));
        let (q, r) = split(&p.view());
        assert_eq!((q.dim(), r.dim()), ((2, 2), (2, 5)));
        assert!(apply(&[&ArrayData::F64(p.into_dyn())], 0).is_err());
    }
}
