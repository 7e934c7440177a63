//! The reference for N-D linear algebra, from NumPy's documentation: `matmul` multiplies
//! stacks of matrices with broadcast batch dimensions (1-D operands become a row on the left
//! or a column on the right, removed again), N-D `dot` sums over the last axis of `a` and the
//! second-to-last of `b`, and `tensordot` sums over given axis pairs. All of them reduce to
//! the 2-D product of `refarr::matmul`.

use super::refarr::{self, np_err, Arr, R};
use super::refshape::{self, norm_axis, Item};
use ndarray::{ArrayD, IxDyn};

fn bcast(a: &Arr, shape: &[usize]) -> Arr {
    let s = IxDyn(shape);
    match a {
        Arr::B(x) => Arr::B(x.broadcast(s).unwrap().to_owned()),
        Arr::I(x) => Arr::I(x.broadcast(s).unwrap().to_owned()),
        Arr::F(x) => Arr::F(x.broadcast(s).unwrap().to_owned()),
    }
}

fn empty_like(dt_of: &Arr, shape: &[usize]) -> Arr {
    let s = IxDyn(shape);
    match dt_of {
        Arr::B(_) => Arr::B(ArrayD::from_elem(s, false)),
        Arr::I(_) => Arr::I(ArrayD::from_elem(s, 0)),
        Arr::F(_) => Arr::F(ArrayD::from_elem(s, 0.0)),
    }
}

/// `matmul` with more than 2 dimensions on either side.
pub fn matmul_nd(a: &Arr, b: &Arr) -> R<Arr> {
    let (mut sa, mut sb) = (a.shape(), b.shape());
    let (row, col) = (sa.len() == 1, sb.len() == 1);
    if row {
        sa.insert(0, 1);
    }
    if col {
        sb.push(1);
    }
    let (n, k, k2, m) = (
        sa[sa.len() - 2],
        sa[sa.len() - 1],
        sb[sb.len() - 2],
        sb[sb.len() - 1],
    );
    if k != k2 {
        return np_err(format!("matmul: mismatch in core dimension {sa:?} {sb:?}"));
    }
    let batch = refarr::broadcast_shape(&sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
    let nb: usize = batch.iter().product();
    let full = |x: &Arr, s: &[usize], p: usize, q: usize| {
        let x = refshape::reshape(x, s);
        let mut t = batch.clone();
        t.extend([p, q]);
        refshape::reshape(&bcast(&x, &t), &[nb, p, q])
    };
    let (x, y) = (full(a, &sa, n, k), full(b, &sb, k, m));
    let mut parts = vec![];
    for i in 0..nb as i64 {
        let p = refarr::matmul(
            &refshape::index(&x, &[Item::At(i)])?,
            &refshape::index(&y, &[Item::At(i)])?,
        )?;
        parts.push(refshape::reshape(&p, &[1, n, m]));
    }
    let r = if parts.is_empty() {
        let probe = refarr::matmul(
            &refshape::reshape(&x, &[0, k]),
            &refshape::reshape(&y, &[k, 0]),
        )?;
        empty_like(&probe, &[0, n, m])
    } else {
        refshape::concatenate(&parts, 0)?
    };
    let mut out = batch.clone();
    if !row {
        out.push(n);
    }
    if !col {
        out.push(m);
    }
    Ok(refshape::reshape(&r, &out))
}

/// `tensordot(a, b, (axes_a, axes_b))`.
pub fn tensordot(a: &Arr, b: &Arr, axes_a: &[i64], axes_b: &[i64]) -> R<Arr> {
    let (sa, sb) = (a.shape(), b.shape());
    if axes_a.len() != axes_b.len() {
        return np_err("shape-mismatch for sum");
    }
    let xa: Vec<usize> = axes_a
        .iter()
        .map(|x| norm_axis(*x, sa.len()))
        .collect::<R<_>>()?;
    let xb: Vec<usize> = axes_b
        .iter()
        .map(|x| norm_axis(*x, sb.len()))
        .collect::<R<_>>()?;
    if xa.iter().zip(&xb).any(|(p, q)| sa[*p] != sb[*q]) {
        return np_err("shape-mismatch for sum");
    }
    let dup = |v: &[usize]| (0..v.len()).any(|i| v[i + 1..].contains(&v[i]));
    if dup(&xa) || dup(&xb) {
        return np_err("repeated axis");
    }
    let free_a: Vec<usize> = (0..sa.len()).filter(|d| !xa.contains(d)).collect();
    let free_b: Vec<usize> = (0..sb.len()).filter(|d| !xb.contains(d)).collect();
    let k: usize = xa.iter().map(|d| sa[*d]).product();
    let ma: usize = free_a.iter().map(|d| sa[*d]).product();
    let nb: usize = free_b.iter().map(|d| sb[*d]).product();
    let pa: Vec<i64> = free_a.iter().chain(&xa).map(|d| *d as i64).collect();
    let pb: Vec<i64> = xb.iter().chain(&free_b).map(|d| *d as i64).collect();
    let a2 = refshape::reshape(&refshape::transpose(a, Some(&pa))?, &[ma, k]);
    let b2 = refshape::reshape(&refshape::transpose(b, Some(&pb))?, &[k, nb]);
    let r = refarr::matmul(&a2, &b2)?;
    let out: Vec<usize> = free_a
        .iter()
        .map(|d| sa[*d])
        .chain(free_b.iter().map(|d| sb[*d]))
        .collect();
    Ok(refshape::reshape(&r, &out))
}

/// N-D `dot`: over the last axis of `a` and the second-to-last of `b` (its only one if 1-D).
pub fn dot_nd(a: &Arr, b: &Arr) -> R<Arr> {
    let nb = b.shape().len() as i64;
    tensordot(a, b, &[-1], &[if nb == 1 { 0 } else { -2 }])
}
