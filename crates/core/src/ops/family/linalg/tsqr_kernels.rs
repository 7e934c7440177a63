//! The chunk kernels of TSQR (see `tsqr` for the tree they make).
//!
//! A chunk kernel has one output, and a QR step has two (Q and R), so a step's chunk is
//! *packed*: its Q (q × k, k = min(q, n), zero-padded to n columns) on top of its R
//! (k × n): `(q + k) × n`. The R the next level stacks is the last k rows; the Q stays in
//! the chunk until the tree's Q factors come back down to it. Inside the tree every R is
//! n × n (every block has at least n rows), so the slot of child `s` in its parent's Q is
//! rows `s·n .. (s+1)·n`.

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

/// A leaf: the block's QR, packed.
pub fn block(x: &ArrayData) -> KResult<ArrayData> {
    let x = as_f64(x);
    let x = x
        .view()
        .into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("TSQR needs 2-D chunks: {e}")))?;
    Ok(ArrayData::F64(faer_bridge::qr_packed(x).into_dyn()))
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
fn factor(parent: &ArrayData, down: Option<&ArrayData>, slot: usize) -> KResult<Array2<f64>> {
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

/// Inputs (packed leaf, packed parent[, the parent's factor]): the leaf's rows of the
/// final Q, its own Q times its factor.
pub fn apply(inputs: &[&ArrayData], slot: u32) -> KResult<ArrayData> {
    let (leaf, f) = match inputs {
        [l, p] => (l, factor(p, None, slot as usize)?),
        [l, p, d] => (l, factor(p, Some(d), slot as usize)?),
        _ => {
            return kerr(format!(
                "qr_apply expects 2 or 3 inputs, got {}",
                inputs.len()
            ))
        }
    };
    let leaf = matrix(leaf)?;
    let (q, _) = split(&leaf);
    Ok(ArrayData::F64(gemm_f64(q, f.view()).into_dyn()))
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
        let (la, lb) = (block(&a).unwrap(), block(&b).unwrap());
        assert_eq!(la.shape(), &[9 + n, n]);
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

    #[test]
    fn a_short_block_packs_its_smaller_factors() {
        let p = m2(&block(&data(2, 5, 1)).unwrap());
        assert_eq!(p.dim(), (4, 5));
        let (q, r) = split(&p.view());
        assert_eq!((q.dim(), r.dim()), ((2, 2), (2, 5)));
        assert!(apply(&[&ArrayData::F64(p.into_dyn())], 0).is_err());
    }
}
