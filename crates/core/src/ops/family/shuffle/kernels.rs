//! Kernels of the shuffle ops: mappers that split a chunk into one piece per reducer,
//! reducers that combine their pieces (in mapper order), and the local parts of sorting.
//!
//! Sorting orders every dtype by one `u64` key ([`Key`]): int64 with its sign bit flipped,
//! float64 by IEEE total order with every NaN last (NumPy sorts NaN last), bool as 0/1,
//! uint64 as itself. Ties
//! keep their original order wherever positions are carried (argsort is NumPy's
//! `kind='stable'`). Argsort buckets are int64 pairs `(key, position)`.

use super::partition::{split, values, Buckets, Pieces};
use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use crate::ops::{MapKind, ReduceKind};
use ndarray::{ArrayD, IxDyn};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// An order-preserving `u64` key.
pub trait Key: Copy {
    fn key(self) -> u64;
}

impl Key for i64 {
    #[inline]
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}

impl Key for f64 {
    #[inline]
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::MAX;
        }
        let b = self.to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | (1 << 63)
        }
    }
}

/// uint64 is its own key (it only reaches the sort unwidened: narrower integers sort as
/// int64).
impl Key for u64 {
    #[inline]
    fn key(self) -> u64 {
        self
    }
}

impl Key for bool {
    #[inline]
    fn key(self) -> u64 {
        self as u64
    }
}

/// The values `rows` int64 of the benchmark's mapper `seed`: [0, 2^31) from Xoshiro256++.
pub fn bench_values(rows: u64, seed: u64) -> Vec<i64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..rows).map(|_| (rng.next_u64() >> 33) as i64).collect()
}

/// 2^61, the modulus of the benchmark's weighted sum.
pub const BENCH_MOD: u128 = 1 << 61;

fn vec1<T>(v: Vec<T>) -> ArrayD<T> {
    let n = v.len();
    ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("a 1-D vector fits its length")
}

fn flat<T: Clone>(a: &ArrayD<T>) -> Vec<T> {
    a.iter().cloned().collect()
}

macro_rules! each_dtype {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            ArrayData::F64($v) => ArrayData::F64($body),
            ArrayData::I64($v) => ArrayData::I64($body),
            ArrayData::Bool($v) => ArrayData::Bool($body),
            ArrayData::F32($v) => ArrayData::F32($body),
            ArrayData::I32($v) => ArrayData::I32($body),
            ArrayData::C64($v) => ArrayData::C64($body),
            ArrayData::C128($v) => ArrayData::C128($body),
            ArrayData::I8($v) => ArrayData::I8($body),
            ArrayData::I16($v) => ArrayData::I16($body),
            ArrayData::U8($v) => ArrayData::U8($body),
            ArrayData::U16($v) => ArrayData::U16($body),
            ArrayData::U32($v) => ArrayData::U32($body),
            ArrayData::U64($v) => ArrayData::U64($body),
        }
    };
}

/// Splits a mapper's input: the pieces (one per reducer) and each piece's element count.
pub fn map(
    kind: &MapKind,
    reducers: u32,
    ordinal: u32,
    inputs: &[&ArrayData],
) -> KResult<(ArrayData, Vec<ArrayData>)> {
    let m = reducers as usize;
    let mut counts = vec![0i64; m];
    let pieces = match (kind, inputs) {
        (MapKind::BenchGen { rows, seed }, []) => {
            let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
            for v in bench_values(*rows, *seed) {
                parts[(v as u64 % reducers as u64) as usize].push(v);
            }
            parts.into_iter().map(|p| ArrayData::I64(vec1(p))).collect()
        }
        (MapKind::SortPartition { arg, offset }, [data, splitters]) => {
            partition(data, splitters, m, *arg, *offset)?
        }
        (MapKind::Rebalance { chunk, arg }, [bucket, ArrayData::I64(lengths)]) => {
            let lengths = flat(lengths);
            let start: i64 = lengths.iter().take(ordinal as usize).sum();
            rebalance(bucket, start.max(0) as usize, *chunk as usize, m, *arg)
        }
        (
            MapKind::TakeRoute {
                len,
                chunk,
                offset,
                axis,
            },
            [idx],
        ) => super::take::kernels::route(idx, m, *len, *chunk, *offset, *axis)?,
        (MapKind::TakeServe { out_chunk }, [rows, requests]) => {
            super::take::kernels::serve(rows, requests, m, *out_chunk)?
        }
        (MapKind::SearchRoute { right }, [values, bounds]) => {
            super::select::search::route(values, bounds, m, ordinal, *right)?
        }
        (MapKind::SearchServe { right, offset }, [sorted, requests]) => {
            super::select::search::serve(sorted, requests, m, *offset, *right)?
        }
        (MapKind::UniquePartition { counts }, [data]) => {
            super::select::kernels::unique_partition(data, None, m, *counts)?
        }
        (MapKind::UniquePartition { counts }, [data, splitters]) => {
            super::select::kernels::unique_partition(data, Some(splitters), m, *counts)?
        }
        _ => {
            return kerr(format!(
                "mapper {kind:?} got {} inputs of the wrong kind",
                inputs.len()
            ))
        }
    };
    for (c, p) in counts.iter_mut().zip(&pieces) {
        *c = match (kind, p) {
            (
                MapKind::SortPartition { arg: true, .. }
                | MapKind::Rebalance { arg: true, .. }
                | MapKind::UniquePartition { counts: true },
                p,
            ) => p.len() as i64 / 2,
            (_, p) => p.len() as i64,
        };
    }
    Ok((ArrayData::I64(vec1(counts)), pieces))
}

fn partition(
    data: &ArrayData,
    splitters: &ArrayData,
    m: usize,
    arg: bool,
    offset: u64,
) -> KResult<Vec<ArrayData>> {
    fn emit<T: Key + Clone>(
        v: &ArrayD<T>,
        s: &ArrayD<T>,
        m: usize,
        arg: bool,
        offset: u64,
        wrap: impl Fn(ArrayD<T>) -> ArrayData,
    ) -> Vec<ArrayData> {
        let buckets = Buckets::new(s.iter().map(|x| x.key()).collect(), m);
        match split(&values(v), &buckets, arg, offset) {
            Pieces::Values(parts) => parts.into_iter().map(|p| wrap(vec1(p))).collect(),
            Pieces::Pairs(parts) => parts.into_iter().map(|p| ArrayData::I64(vec1(p))).collect(),
        }
    }
    Ok(match (data, splitters) {
        (ArrayData::F64(v), ArrayData::F64(s)) => emit(v, s, m, arg, offset, ArrayData::F64),
        (ArrayData::I64(v), ArrayData::I64(s)) => emit(v, s, m, arg, offset, ArrayData::I64),
        (ArrayData::Bool(v), ArrayData::Bool(s)) => emit(v, s, m, arg, offset, ArrayData::Bool),
        (ArrayData::U64(v), ArrayData::U64(s)) => emit(v, s, m, arg, offset, ArrayData::U64),
        _ => return kerr("sort: chunk and splitters of different dtypes"),
    })
}

fn rebalance(
    bucket: &ArrayData,
    start: usize,
    chunk: usize,
    m: usize,
    arg: bool,
) -> Vec<ArrayData> {
    let width = if arg { 2 } else { 1 };
    let n = bucket.len() / width;
    (0..m)
        .map(|r| {
            let (lo, hi) = (r * chunk, (r + 1) * chunk);
            let a = lo.max(start).min(start + n) - start;
            let b = hi.max(start).min(start + n) - start;
            let range = a * width..b * width;
            each_dtype!(bucket, v => vec1(match v.as_slice() {
                Some(flat) => flat[range].to_vec(),
                None => v.iter().skip(range.start).take(range.len()).cloned().collect(),
            }))
        })
        .collect()
}

/// Combines a reducer's pieces, given in mapper order.
pub fn reduce(kind: &ReduceKind, pieces: &[&ArrayData]) -> KResult<ArrayData> {
    let concat = |pieces: &[&ArrayData]| -> KResult<ArrayData> {
        let Some(first) = pieces.first() else {
            return Ok(ArrayData::I64(vec1(vec![])));
        };
        // One arm per dtype: every piece must be of the first one's.
        macro_rules! concat_as {
            ($($v:ident),*) => {
                match first {
                    $(ArrayData::$v(_) => ArrayData::$v(vec1(collect(pieces, |p| match p {
                        ArrayData::$v(a) => Some(a),
                        _ => None,
                    })?)),)*
                }
            };
        }
        Ok(concat_as!(
            F64, I64, Bool, F32, I32, C64, C128, I8, I16, U8, U16, U32, U64
        ))
    };
    match kind {
        ReduceKind::BenchStats => {
            let ArrayData::I64(all) = concat(pieces)? else {
                return kerr("benchmark pieces must be int64");
            };
            let mut v = flat(&all);
            sort_by_key(&mut v, |x| x.key());
            let sum = v.iter().fold(0i64, |a, x| a.wrapping_add(*x));
            let weighted = v.iter().enumerate().fold(0u128, |acc, (i, x)| {
                (acc + (i as u128) * (*x as u64 as u128)) % BENCH_MOD
            });
            Ok(ArrayData::I64(
                ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![v.len() as i64, sum, weighted as i64])
                    .expect("three values"),
            ))
        }
        ReduceKind::SortMerge { arg: false } => Ok(match concat(pieces)? {
            ArrayData::F64(a) => ArrayData::F64(sorted(a)),
            ArrayData::I64(a) => ArrayData::I64(sorted(a)),
            ArrayData::Bool(a) => ArrayData::Bool(sorted(a)),
            ArrayData::U64(a) => ArrayData::U64(sorted(a)),
            other => return crate::kernels::not_widened(other.dtype()),
        }),
        ReduceKind::SortMerge { arg: true } => {
            let ArrayData::I64(all) = concat(pieces)? else {
                return kerr("argsort pieces must be int64 pairs");
            };
            let (mut pairs, _) = all.into_raw_vec_and_offset();
            // Pieces come in mapper order and each in position order, so a stable sort by
            // key alone keeps equal keys in position order (NumPy's stable argsort).
            sort_by_key(pairs.as_chunks_mut::<2>().0, |p| p[0] as u64);
            Ok(ArrayData::I64(vec1(pairs)))
        }
        ReduceKind::TakePlace {
            dtype,
            start,
            rows,
            width,
        } => super::take::kernels::place(pieces, *dtype, *start, *rows, *width),
        ReduceKind::SearchPlace { len } => super::select::search::place(pieces, *len),
        ReduceKind::UniqueMerge { counts } => super::select::kernels::unique_merge(pieces, *counts),
        ReduceKind::RechunkPlace { .. } => kerr("rechunk reducers run manipulation::regrid::place"),
        ReduceKind::Concat { arg: false } => concat(pieces),
        ReduceKind::Concat { arg: true } => {
            let ArrayData::I64(all) = concat(pieces)? else {
                return kerr("argsort pieces must be int64 pairs");
            };
            let pairs = all.as_slice().expect("a fresh 1-D vector");
            Ok(ArrayData::I64(vec1(
                pairs.iter().skip(1).step_by(2).copied().collect(),
            )))
        }
    }
}

fn collect<'a, T: Clone + 'a>(
    pieces: &[&'a ArrayData],
    get: impl Fn(&'a ArrayData) -> Option<&'a ArrayD<T>>,
) -> KResult<Vec<T>> {
    let mut out = Vec::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for p in pieces {
        match get(p) {
            Some(a) => out.extend_from_slice(&values(a)),
            None => return kerr("pieces of different dtypes"),
        }
    }
    Ok(out)
}

/// Slices shorter than this sort by comparison: a radix sort's eight counting passes cost
/// more than they save on a short lane.
const RADIX_FROM: usize = 256;

/// Stable sort by an order-preserving `u64` key: LSD radix sort (`radsort`) on long slices,
/// the standard stable sort on short ones. Every sort of the sort, argsort and unique kernels
/// goes through here.
pub(crate) fn sort_by_key<T>(v: &mut [T], mut key: impl FnMut(&T) -> u64) {
    if v.len() < RADIX_FROM {
        v.sort_by_key(|x| key(x));
    } else {
        radsort::sort_by_key(v, key);
    }
}

fn sorted<T: Key>(a: ArrayD<T>) -> ArrayD<T> {
    let mut v = a.into_raw_vec_and_offset().0;
    sort_by_key(&mut v, |x| x.key());
    vec1(v)
}

/// `parts - 1` splitters from the merged samples.
pub fn splitters(samples: &[&ArrayData], parts: u32) -> KResult<ArrayData> {
    let merged = reduce(&ReduceKind::Concat { arg: false }, samples)?;
    let merged = super::lanes::sort_axis(&merged, 0, false, false)?;
    let n = merged.len();
    let picks: Vec<usize> = if n == 0 {
        vec![]
    } else {
        (1..parts as usize)
            .map(|k| (k * n / parts as usize).min(n - 1))
            .collect()
    };
    Ok(each_dtype!(&merged, v => vec1(picks.iter().map(|i| v[[*i]]).collect())))
}

/// Every reducer's `(count, sum, weighted)`, computed without the runtime's split or kernels.
pub fn bench_expected(in_parts: u32, out_parts: u32, rows: u64) -> Vec<[i64; 3]> {
    let o = out_parts as i64;
    let mut all: Vec<i64> = (0..in_parts as u64)
        .flat_map(|seed| bench_values(rows, seed))
        .collect();
    all.sort_unstable_by_key(|v| (v.rem_euclid(o), *v));
    let mut out = vec![[0i64; 3]; out_parts as usize];
    let mut start = 0;
    while start < all.len() {
        let r = all[start].rem_euclid(o);
        let end = start + all[start..].partition_point(|v| v.rem_euclid(o) == r);
        let group = &all[start..end];
        let mut weighted = 0u128;
        for (i, v) in group.iter().enumerate() {
            weighted = (weighted + i as u128 * *v as u128) % BENCH_MOD;
        }
        out[r as usize] = [
            group.len() as i64,
            group.iter().fold(0i64, |a, v| a.wrapping_add(*v)),
            weighted as i64,
        ];
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_expected_counts_every_value_once() {
        let e = bench_expected(3, 4, 50);
        assert_eq!(e.iter().map(|r| r[0]).sum::<i64>(), 150);
        let all: Vec<i64> = (0..3).flat_map(|s| bench_values(50, s)).collect();
        let sum = all.iter().fold(0i64, |a, v| a.wrapping_add(*v));
        assert_eq!(e.iter().fold(0i64, |a, r| a.wrapping_add(r[1])), sum);
    }
}
