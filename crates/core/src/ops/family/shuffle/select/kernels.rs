//! Kernels of the operations whose result depends on the values: `unique` (local distinct
//! values split by value range, then merged per range), `x[mask]` and `searchsorted`.
//!
//! They compare values by NumPy's sort order through one `u64` key ([`skey`]): the sort key
//! of [`crate::ops::family::shuffle::kernels::Key`] with `-0.0` folded onto `+0.0` (NumPy finds them equal, so
//! `unique` keeps one zero and `searchsorted` does not tell them apart) and every NaN equal
//! and last (NumPy 2's `equal_nan=True`: one NaN). Zeros are folded before the shuffle, so
//! equal values always land in the same reducer.
//!
//! `unique` with counts moves `(key, count)` int64 pairs (the key as its bits), so mappers
//! and reducers need no dtype; [`pick`] decodes keys back to values at the end.

use crate::array::{ArrayData, DType};
use crate::kernels::{kerr, KResult};
use crate::ops::family::shuffle::kernels::Key;
use ndarray::{ArrayD, IxDyn};

/// NumPy's order as a `u64`: zeros folded, NaN last.
pub trait SKey: Key {
    fn skey(self) -> u64;
}

impl SKey for f64 {
    #[inline]
    fn skey(self) -> u64 {
        if self == 0.0 {
            0.0f64.key()
        } else {
            self.key()
        }
    }
}

impl SKey for i64 {
    #[inline]
    fn skey(self) -> u64 {
        self.key()
    }
}

impl SKey for u64 {
    #[inline]
    fn skey(self) -> u64 {
        self
    }
}

impl SKey for bool {
    #[inline]
    fn skey(self) -> u64 {
        self.key()
    }
}

fn vec1<T>(v: Vec<T>) -> ArrayD<T> {
    let n = v.len();
    ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("a 1-D vector fits its length")
}

/// The value of key `k` (the inverse of [`SKey::skey`], NaN canonical).
fn unkey(dtype: DType, k: u64) -> ArrayElem {
    match dtype.wide() {
        DType::I64 => ArrayElem::I(k as i64 ^ i64::MIN),
        DType::U64 => ArrayElem::U(k),
        DType::Bool => ArrayElem::B(k != 0),
        DType::F64 if k == u64::MAX => ArrayElem::F(f64::NAN),
        DType::F64 if k >> 63 == 1 => ArrayElem::F(f64::from_bits(k & !(1 << 63))),
        _ => ArrayElem::F(f64::from_bits(!k)),
    }
}

enum ArrayElem {
    F(f64),
    I(i64),
    U(u64),
    B(bool),
}

/// Sorted distinct keys with their counts summed (`runs`: as in [`distinct_values`]).
fn distinct(mut pairs: Vec<(u64, i64)>, runs: bool) -> Vec<(u64, i64)> {
    if runs {
        pairs.sort_by_key(|p| p.0);
    } else {
        crate::ops::family::shuffle::kernels::sort_by_key(&mut pairs, |p| p.0);
    }
    let mut out: Vec<(u64, i64)> = Vec::with_capacity(pairs.len().min(1 << 20));
    for (k, c) in pairs {
        match out.last_mut() {
            Some(last) if last.0 == k => last.1 += c,
            _ => out.push((k, c)),
        }
    }
    out
}

/// Distinct values, sorted (first of each run of equal keys, zeros folded). `runs`: the
/// values are a few sorted runs (a reducer's pieces), which the stable sort merges.
fn distinct_values<T: SKey + Copy + From0>(v: impl Iterator<Item = T>, runs: bool) -> Vec<T> {
    let mut all: Vec<T> = v.map(|x| x.fold_zero()).collect();
    if runs {
        all.sort_by_key(|x| x.skey());
    } else {
        crate::ops::family::shuffle::kernels::sort_by_key(&mut all, |x| x.skey());
    }
    all.dedup_by_key(|x| x.skey());
    all
}

/// Folds `-0.0` onto `+0.0` (identity for other dtypes).
pub trait From0 {
    fn fold_zero(self) -> Self;
}
impl From0 for f64 {
    #[inline]
    fn fold_zero(self) -> Self {
        if self == 0.0 {
            0.0
        } else {
            self
        }
    }
}
impl From0 for i64 {
    #[inline]
    fn fold_zero(self) -> Self {
        self
    }
}
impl From0 for u64 {
    #[inline]
    fn fold_zero(self) -> Self {
        self
    }
}
impl From0 for bool {
    #[inline]
    fn fold_zero(self) -> Self {
        self
    }
}

/// Bucket of key `k`: the number of splitter keys at or below it, at most `m - 1`.
fn bucket(splitters: &[u64], k: u64, m: usize) -> usize {
    splitters.partition_point(|s| *s <= k).min(m - 1)
}

/// A `unique` mapper: the chunk's distinct values (with counts as `(key, count)` pairs when
/// `counts`), split into `m` pieces by the splitters (all in piece 0 without splitters).
pub fn unique_partition(
    data: &ArrayData,
    splitters: Option<&ArrayData>,
    m: usize,
    counts: bool,
) -> KResult<Vec<ArrayData>> {
    let split_keys: Vec<u64> = match splitters {
        None => vec![],
        Some(ArrayData::F64(s)) => s.iter().map(|x| x.skey()).collect(),
        Some(ArrayData::I64(s)) => s.iter().map(|x| x.skey()).collect(),
        Some(ArrayData::Bool(s)) => s.iter().map(|x| x.skey()).collect(),
        Some(ArrayData::U64(s)) => s.iter().map(|x| x.skey()).collect(),
        Some(other) => return crate::kernels::not_widened(other.dtype()),
    };
    if m == 0 {
        return kerr("unique: a shuffle without reducers");
    }
    if counts {
        let pairs: Vec<(u64, i64)> = match data {
            ArrayData::F64(a) => distinct(a.iter().map(|x| (x.skey(), 1)).collect(), false),
            ArrayData::I64(a) => distinct(a.iter().map(|x| (x.skey(), 1)).collect(), false),
            ArrayData::Bool(a) => distinct(a.iter().map(|x| (x.skey(), 1)).collect(), false),
            ArrayData::U64(a) => distinct(a.iter().map(|x| (x.skey(), 1)).collect(), false),
            other => return crate::kernels::not_widened(other.dtype()),
        };
        let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
        for (k, c) in pairs {
            parts[bucket(&split_keys, k, m)].extend([k as i64, c]);
        }
        return Ok(parts.into_iter().map(|p| ArrayData::I64(vec1(p))).collect());
    }
    fn split<T: SKey + Copy>(v: Vec<T>, s: &[u64], m: usize) -> Vec<Vec<T>> {
        let mut parts: Vec<Vec<T>> = vec![Vec::new(); m];
        for x in v {
            parts[bucket(s, x.skey(), m)].push(x);
        }
        parts
    }
    Ok(match data {
        ArrayData::F64(a) => split(distinct_values(a.iter().copied(), false), &split_keys, m)
            .into_iter()
            .map(|p| ArrayData::F64(vec1(p)))
            .collect(),
        ArrayData::I64(a) => split(distinct_values(a.iter().copied(), false), &split_keys, m)
            .into_iter()
            .map(|p| ArrayData::I64(vec1(p)))
            .collect(),
        ArrayData::Bool(a) => split(distinct_values(a.iter().copied(), false), &split_keys, m)
            .into_iter()
            .map(|p| ArrayData::Bool(vec1(p)))
            .collect(),
        ArrayData::U64(a) => split(distinct_values(a.iter().copied(), false), &split_keys, m)
            .into_iter()
            .map(|p| ArrayData::U64(vec1(p)))
            .collect(),
        other => return crate::kernels::not_widened(other.dtype()),
    })
}

/// Elements of a chunk read per sample value: the sample comes from `count × STRIDE_FACTOR`
/// evenly spaced elements (all of them in a smaller chunk), sorted.
const STRIDE_FACTOR: usize = 16;

/// `count` regularly spaced values of a sorted strided subsample of the (flattened) chunk.
pub fn strided_sample(data: &ArrayData, count: u32) -> KResult<ArrayData> {
    fn go<T: SKey + Copy>(a: &ArrayD<T>, count: usize) -> ArrayD<T> {
        let n = a.len();
        if n == 0 || count == 0 {
            return vec1(vec![]);
        }
        let want = (count * STRIDE_FACTOR).min(n);
        let flat: Vec<T> = match a.as_slice() {
            Some(s) => (0..want).map(|i| s[i * n / want]).collect(),
            None => {
                let all: Vec<T> = a.iter().copied().collect();
                (0..want).map(|i| all[i * n / want]).collect()
            }
        };
        let mut sub = flat;
        sub.sort_unstable_by_key(|x| x.skey());
        vec1((0..count).map(|i| sub[i * want / count]).collect())
    }
    let count = count as usize;
    Ok(match data {
        ArrayData::F64(a) => ArrayData::F64(go(a, count)),
        ArrayData::I64(a) => ArrayData::I64(go(a, count)),
        ArrayData::Bool(a) => ArrayData::Bool(go(a, count)),
        ArrayData::U64(a) => ArrayData::U64(go(a, count)),
        other => return crate::kernels::not_widened(other.dtype()),
    })
}

/// A `unique` reducer: the distinct values of its pieces (pairs with summed counts).
pub fn unique_merge(pieces: &[&ArrayData], counts: bool) -> KResult<ArrayData> {
    if counts {
        let mut pairs = Vec::new();
        for p in pieces {
            let ArrayData::I64(a) = p else {
                return kerr("unique: count pieces must be int64 pairs");
            };
            let flat: Vec<i64> = a.iter().copied().collect();
            pairs.extend(flat.chunks_exact(2).map(|q| (q[0] as u64, q[1])));
        }
        let merged = distinct(pairs, true);
        return Ok(ArrayData::I64(vec1(
            merged
                .into_iter()
                .flat_map(|(k, c)| [k as i64, c])
                .collect(),
        )));
    }
    macro_rules! merge {
        ($variant:ident) => {{
            let mut all = Vec::new();
            for p in pieces {
                let ArrayData::$variant(a) = p else {
                    return kerr("unique: pieces of different dtypes");
                };
                all.extend(a.iter().copied());
            }
            ArrayData::$variant(vec1(distinct_values(all.into_iter(), true)))
        }};
    }
    Ok(match pieces.first() {
        None => ArrayData::I64(vec1(vec![])),
        Some(ArrayData::F64(_)) => merge!(F64),
        Some(ArrayData::I64(_)) => merge!(I64),
        Some(ArrayData::Bool(_)) => merge!(Bool),
        Some(ArrayData::U64(_)) => merge!(U64),
        Some(other) => return crate::kernels::not_widened(other.dtype()),
    })
}

/// The values (decoded to `dtype`) or the counts of `(key, count)` pairs.
pub fn pick(pairs: &ArrayData, counts: bool, dtype: DType) -> KResult<ArrayData> {
    let ArrayData::I64(a) = pairs else {
        return kerr("unique_pick: the input must be int64 pairs");
    };
    let flat: Vec<i64> = a.iter().copied().collect();
    if counts {
        return Ok(ArrayData::I64(vec1(
            flat.chunks_exact(2).map(|q| q[1]).collect(),
        )));
    }
    let keys = flat.chunks_exact(2).map(|q| unkey(dtype, q[0] as u64));
    Ok(match dtype.wide() {
        DType::C64 | DType::C128 => return kerr("unique of complex values is not supported"),
        DType::F64 | DType::F32 => ArrayData::F64(vec1(
            keys.map(|e| if let ArrayElem::F(x) = e { x } else { 0.0 })
                .collect(),
        )),
        DType::I64 => ArrayData::I64(vec1(
            keys.map(|e| if let ArrayElem::I(x) = e { x } else { 0 })
                .collect(),
        )),
        DType::U64 => ArrayData::U64(vec1(
            keys.map(|e| if let ArrayElem::U(x) = e { x } else { 0 })
                .collect(),
        )),
        DType::Bool => ArrayData::Bool(vec1(
            keys.map(|e| matches!(e, ArrayElem::B(true))).collect(),
        )),
        other => return crate::kernels::not_widened(other),
    })
}

/// `x[mask]` of one chunk: the selected elements in C order.
pub fn mask_select(x: &ArrayData, mask: &ArrayData) -> KResult<ArrayData> {
    let ArrayData::Bool(m) = mask else {
        return kerr("x[mask]: the mask must be bool");
    };
    if x.shape() != m.shape() {
        return kerr(format!(
            "x[mask]: chunk of shape {:?} with a mask chunk of shape {:?}",
            x.shape(),
            m.shape()
        ));
    }
    macro_rules! sel {
        ($a:expr) => {
            vec1(
                $a.iter()
                    .zip(m.iter())
                    .filter(|(_, k)| **k)
                    .map(|(v, _)| *v)
                    .collect(),
            )
        };
    }
    Ok(match x {
        ArrayData::F64(a) => ArrayData::F64(sel!(a)),
        ArrayData::I64(a) => ArrayData::I64(sel!(a)),
        ArrayData::Bool(a) => ArrayData::Bool(sel!(a)),
        ArrayData::U64(a) => ArrayData::U64(sel!(a)),
        ArrayData::C128(a) => ArrayData::C128(sel!(a)),
        other => return crate::kernels::not_widened(other.dtype()),
    })
}

/// For each element of `v`, how many elements of the sorted chunk `a` are below it
/// (`right`: at or below it), in NumPy's order.
pub fn searchsorted(a: &ArrayData, v: &ArrayData, right: bool) -> KResult<ArrayData> {
    fn go<T: SKey + Copy>(a: &ArrayD<T>, v: &ArrayD<T>, right: bool) -> ArrayD<i64> {
        let keys: Vec<u64> = a.iter().map(|x| x.skey()).collect();
        v.mapv(|x| {
            let k = x.skey();
            if right {
                keys.partition_point(|s| *s <= k) as i64
            } else {
                keys.partition_point(|s| *s < k) as i64
            }
        })
    }
    Ok(ArrayData::I64(match (a, v) {
        (ArrayData::F64(a), ArrayData::F64(v)) => go(a, v, right),
        (ArrayData::I64(a), ArrayData::I64(v)) => go(a, v, right),
        (ArrayData::Bool(a), ArrayData::Bool(v)) => go(a, v, right),
        (ArrayData::U64(a), ArrayData::U64(v)) => go(a, v, right),
        _ => return kerr("searchsorted: a and v of different dtypes"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[f64]) -> ArrayData {
        ArrayData::F64(vec1(v.to_vec()))
    }

    #[test]
    fn unique_folds_zeros_and_nans() {
        let x = f(&[f64::NAN, 1.0, -0.0, 0.0, f64::NAN, 1.0]);
        let pieces = unique_partition(&x, None, 1, false).unwrap();
        let ArrayData::F64(u) = unique_merge(&[&pieces[0]], false).unwrap() else {
            panic!()
        };
        assert_eq!(u.len(), 3);
        assert_eq!((u[[0]], u[[1]]), (0.0, 1.0));
        assert!(u[[2]].is_nan());
        let pieces = unique_partition(&x, None, 1, true).unwrap();
        let pairs = unique_merge(&[&pieces[0], &pieces[0]], true).unwrap();
        let ArrayData::I64(c) = pick(&pairs, true, DType::F64).unwrap() else {
            panic!()
        };
        assert_eq!(c.iter().copied().collect::<Vec<_>>(), vec![4, 4, 4]);
        let ArrayData::F64(v) = pick(&pairs, false, DType::F64).unwrap() else {
            panic!()
        };
        assert_eq!((v[[0]], v[[1]]), (0.0, 1.0));
        assert!(v[[2]].is_nan());
    }

    /// `x[mask]` keeps complex elements whole, in C order (against a filter of the pairs).
    #[test]
    fn mask_select_keeps_complex_elements() {
        use crate::array::Complex64;
        let v: Vec<Complex64> = (0..6)
            .map(|i| Complex64::new(i as f64, -(i as f64) * 0.5))
            .collect();
        let keep = [true, false, false, true, true, false];
        let x = ArrayData::C128(ArrayD::from_shape_vec(IxDyn(&[2, 3]), v.clone()).unwrap());
        let m = ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[2, 3]), keep.to_vec()).unwrap());
        let want: Vec<Complex64> = v.iter().zip(keep).filter(|p| p.1).map(|p| *p.0).collect();
        assert_eq!(mask_select(&x, &m).unwrap(), ArrayData::C128(vec1(want)));
    }

    #[test]
    fn keys_round_trip() {
        for x in [-5i64, 0, i64::MIN, i64::MAX] {
            assert!(matches!(unkey(DType::I64, x.skey()), ArrayElem::I(y) if y == x));
        }
        for x in [-2.5f64, 0.0, 1e300, f64::NEG_INFINITY, f64::INFINITY] {
            assert!(matches!(unkey(DType::F64, x.skey()), ArrayElem::F(y) if y == x));
        }
    }

    #[test]
    fn searchsorted_sides() {
        let a = f(&[-0.0, 0.0, 1.0, f64::NAN]);
        let v = f(&[0.0, 1.0, f64::NAN, 2.0]);
        let ArrayData::I64(l) = searchsorted(&a, &v, false).unwrap() else {
            panic!()
        };
        let ArrayData::I64(r) = searchsorted(&a, &v, true).unwrap() else {
            panic!()
        };
        assert_eq!(l.iter().copied().collect::<Vec<_>>(), vec![0, 2, 3, 3]);
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4, 3]);
    }
}
