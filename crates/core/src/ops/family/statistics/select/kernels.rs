//! The selection's kernels, pure functions of slices: a random sample of a chunk, brackets
//! around the wanted ranks from the merged samples, a chunk's counts against the brackets,
//! a chunk's values inside the brackets that hold a wanted rank, and the ranks picked from
//! those (`select_nth_unstable`). Every step computes the same [`Plan`] from the summed
//! counts, so the gatherers and the picker agree on what is needed without talking.
//!
//! Values are compared with `<`/`==` (IEEE: `-0.0 == 0.0`, the order NumPy's sort uses);
//! NaN falls in no bracket and is counted apart: the ranks from `n - nans` on are NaN, as
//! in NumPy's NaN-last sort. A bracket's bounds are sample values or the dtype's extremes
//! (`-inf`/`inf`, `i64::MIN`/`MAX`, `0`/`u64::MAX`), so the counts are exact for any data.

use super::SelectStep;
use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, IxDyn};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Values per block of the counting loop (L1-resident while every bracket is counted).
const BLOCK: usize = 2048;
/// The half-width of a rank's window in the sorted sample, in standard deviations of a
/// sampled rank (`sqrt(s q (1 - q))`, at most `sqrt(s) / 2`): missing a rank then has a
/// probability below 10^-6, and costs a gather of every value, never a wrong number.
const SIGMAS: f64 = 5.0;

/// A value the selection compares: the wide dtypes the kernels compute in.
pub trait Key: Copy + PartialOrd + std::fmt::Debug {
    /// Below or equal to every value (a bracket open at the bottom).
    const LOWEST: Self;
    /// Above or equal to every value.
    const HIGHEST: Self;
    const NAN: Option<Self>;
    fn is_nan(self) -> bool;
}

impl Key for f64 {
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
    const NAN: Option<Self> = Some(f64::NAN);
    fn is_nan(self) -> bool {
        self.is_nan()
    }
}

impl Key for i64 {
    const LOWEST: Self = i64::MIN;
    const HIGHEST: Self = i64::MAX;
    const NAN: Option<Self> = None;
    fn is_nan(self) -> bool {
        false
    }
}

impl Key for u64 {
    const LOWEST: Self = 0;
    const HIGHEST: Self = u64::MAX;
    const NAN: Option<Self> = None;
    fn is_nan(self) -> bool {
        false
    }
}

fn order<T: Key>(a: &T, b: &T) -> Ordering {
    a.partial_cmp(b).unwrap_or(Ordering::Equal)
}

/// splitmix64: the sample's positions, seeded per chunk (deterministic).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `count` values of `x` at uniformly random positions (with replacement): the sample is
/// random whatever the order of the data, so no input makes the brackets miss but by chance.
pub fn sample<T: Key>(x: &[T], count: usize, seed: u64) -> Vec<T> {
    if x.is_empty() {
        return Vec::new();
    }
    let mut state = seed ^ 0xA5A5_5A5A_D00D_F00D;
    (0..count)
        .map(|_| x[((splitmix(&mut state) as u128 * x.len() as u128) >> 64) as usize])
        .collect()
}

/// Disjoint brackets `[lo, hi]`, flattened `[lo0, hi0, lo1, hi1, ...]` in increasing
/// order, around the wanted `ranks` of `n` values, from the merged `samples` (NaN
/// included: they estimate how many values are not NaN). Each rank's position in the
/// sorted sample, widened by [`SIGMAS`] deviations each side; overlapping windows merge.
pub fn brackets<T: Key>(samples: Vec<T>, n: u64, ranks: &[u64]) -> Vec<T> {
    let drawn = samples.len();
    let mut s: Vec<T> = samples.into_iter().filter(|v| !v.is_nan()).collect();
    if s.is_empty() {
        return vec![T::LOWEST, T::HIGHEST];
    }
    s.sort_unstable_by(order);
    let len = s.len() as f64;
    let not_nan = n as f64 * len / drawn as f64;
    let half = (SIGMAS * len.sqrt() / 2.0).ceil() + 2.0;
    let mut windows: Vec<(f64, f64)> = Vec::new();
    let mut sorted: Vec<u64> = ranks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for r in sorted {
        let at = r as f64 * len / not_nan.max(1.0);
        let (from, to) = (at.floor() - half, at.ceil() + half);
        match windows.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => windows.push((from, to)),
        }
    }
    let mut out = Vec::with_capacity(2 * windows.len());
    for (from, to) in windows {
        // A rank past the estimated non-NaN values (its window beyond the sample) gets the
        // sample's top as its low bound.
        let from = from.min(len - 1.0);
        out.push(if from < 0.0 {
            T::LOWEST
        } else {
            s[from as usize]
        });
        out.push(if to >= len {
            T::HIGHEST
        } else {
            s[to as usize]
        });
    }
    out
}

/// Counts per bracket of the chunk `x`: `(< lo, <= lo, < hi, <= hi)`, then NaN's count;
/// sums of these over the chunks are the data's.
pub fn count<T: Key>(x: &[T], brackets: &[T]) -> Vec<i64> {
    let b = brackets.len() / 2;
    let mut out = vec![0i64; 4 * b + 1];
    for block in x.chunks(BLOCK) {
        for (j, pair) in brackets.chunks_exact(2).enumerate() {
            let (lo, hi) = (pair[0], pair[1]);
            let mut c = [0u32; 4];
            for &v in block {
                c[0] += (v < lo) as u32;
                c[1] += (v <= lo) as u32;
                c[2] += (v < hi) as u32;
                c[3] += (v <= hi) as u32;
            }
            for (o, c) in out[4 * j..4 * j + 4].iter_mut().zip(c) {
                *o += c as i64;
            }
        }
    }
    if T::NAN.is_some() {
        out[4 * b] = x.iter().filter(|v| v.is_nan()).count() as i64;
    }
    out
}

/// Where one wanted rank's value is, once the counts are known.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer<T> {
    /// At or past the values that are not NaN.
    Nan,
    /// A bracket's bound (a rank among the values equal to it).
    Bound(T),
    /// Rank `index` of the values strictly inside bracket `bracket`.
    Inside { bracket: usize, index: usize },
    /// Rank `index` of all the values (when some rank fell in no bracket).
    Anywhere { index: usize },
}

/// What the counts say: each rank's answer; `fallback` when a rank is in no bracket
/// (then every value is gathered and selected from: slower, as exact); per bracket, how
/// many values are strictly inside it when a rank is (`None`: not gathered).
#[derive(Debug)]
struct Plan<T> {
    answers: Vec<Answer<T>>,
    fallback: bool,
    inside: Vec<Option<usize>>,
}

/// The plan of the `ranks` of `n` values from the summed counts against `brackets`.
fn plan<T: Key>(brackets: &[T], totals: &[i64], n: u64, ranks: &[u64]) -> KResult<Plan<T>> {
    let b = brackets.len() / 2;
    if !brackets.len().is_multiple_of(2) || totals.len() != 4 * b + 1 {
        return kerr(format!(
            "internal: {} bracket bounds and {} counts do not match",
            brackets.len(),
            totals.len()
        ));
    }
    let values = n.saturating_sub(totals[4 * b] as u64);
    // (below, equal to lo, strictly inside, equal to hi) per bracket.
    let spans: Vec<[u64; 4]> = brackets
        .chunks_exact(2)
        .enumerate()
        .map(|(j, pair)| {
            let t = &totals[4 * j..4 * j + 4];
            let at_lo = (t[1] - t[0]) as u64;
            match pair[0] == pair[1] {
                true => [t[0] as u64, at_lo, 0, 0],
                false => [
                    t[0] as u64,
                    at_lo,
                    (t[2] - t[1]) as u64,
                    (t[3] - t[2]) as u64,
                ],
            }
        })
        .collect();
    let mut inside = vec![None; b];
    let mut answers: Vec<Answer<T>> = Vec::with_capacity(ranks.len());
    for &r in ranks {
        if r >= values {
            answers.push(Answer::Nan);
            continue;
        }
        let found = spans
            .iter()
            .enumerate()
            .find_map(|(j, &[below, lo, open, hi])| {
                if r < below || r >= below + lo + open + hi {
                    None
                } else if r < below + lo {
                    Some(Answer::Bound(brackets[2 * j]))
                } else if r < below + lo + open {
                    inside[j] = Some(open as usize);
                    Some(Answer::Inside {
                        bracket: j,
                        index: (r - below - lo) as usize,
                    })
                } else {
                    Some(Answer::Bound(brackets[2 * j + 1]))
                }
            });
        answers.push(found.unwrap_or(Answer::Anywhere { index: r as usize }));
    }
    let fallback = answers.iter().any(|a| matches!(a, Answer::Anywhere { .. }));
    if fallback {
        // Every rank from all the values: no bracket is gathered.
        inside.iter_mut().for_each(|i| *i = None);
        for (a, &r) in answers.iter_mut().zip(ranks) {
            if !matches!(a, Answer::Nan) {
                *a = Answer::Anywhere { index: r as usize };
            }
        }
    }
    Ok(Plan {
        answers,
        fallback,
        inside,
    })
}

/// The values of chunk `x` the picker needs: those strictly inside each bracket holding a
/// wanted rank (bracket by bracket), or every non-NaN value on a fallback.
pub fn gather<T: Key>(
    x: &[T],
    brackets: &[T],
    totals: &[i64],
    n: u64,
    ranks: &[u64],
) -> KResult<Vec<T>> {
    let plan = plan(brackets, totals, n, ranks)?;
    if plan.fallback {
        return Ok(x.iter().copied().filter(|v| !v.is_nan()).collect());
    }
    let mut out = Vec::new();
    for (j, pair) in brackets.chunks_exact(2).enumerate() {
        if plan.inside[j].is_some() {
            let (lo, hi) = (pair[0], pair[1]);
            out.extend(x.iter().copied().filter(|v| lo < *v && *v < hi));
        }
    }
    Ok(out)
}

/// The `ranks` of the `n` values from the gathered pieces (see [`gather`]).
pub fn pick<T: Key>(
    brackets: &[T],
    totals: &[i64],
    n: u64,
    ranks: &[u64],
    pieces: &[&[T]],
) -> KResult<Vec<T>> {
    let plan = plan(brackets, totals, n, ranks)?;
    let mut pools: Vec<Vec<T>> = vec![Vec::new(); brackets.len() / 2];
    if plan.fallback {
        pools = vec![pieces.iter().flat_map(|p| p.iter().copied()).collect()];
    } else {
        for (j, pair) in brackets.chunks_exact(2).enumerate() {
            let Some(len) = plan.inside[j] else { continue };
            let (lo, hi) = (pair[0], pair[1]);
            pools[j] = Vec::with_capacity(len);
            for p in pieces {
                pools[j].extend(p.iter().copied().filter(|v| lo < *v && *v < hi));
            }
            if pools[j].len() != len {
                return kerr(format!(
                    "internal: bracket {j} holds {} gathered values, its counts say {len}",
                    pools[j].len()
                ));
            }
        }
    }
    plan.answers
        .iter()
        .map(|a| match *a {
            Answer::Nan => T::NAN.map_or_else(|| kerr("internal: a NaN rank of integers"), Ok),
            Answer::Bound(v) => Ok(v),
            Answer::Inside { bracket, index } => Ok(nth(&mut pools[bracket], index)),
            Answer::Anywhere { index } => match pools[0].len() > index {
                true => Ok(nth(&mut pools[0], index)),
                false => kerr(format!(
                    "internal: rank {index} of {} gathered values",
                    pools[0].len()
                )),
            },
        })
        .collect()
}

/// The `ranks` of all of `x` (NaN last), selected in place: one chunk, no brackets.
pub fn whole<T: Key>(x: &[T], ranks: &[u64]) -> KResult<Vec<T>> {
    let mut values: Vec<T> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    ranks
        .iter()
        .map(|&r| match (r as usize) < values.len() {
            true => Ok(nth(&mut values, r as usize)),
            false if (r as usize) < x.len() => {
                T::NAN.map_or_else(|| kerr("internal: a NaN rank of integers"), Ok)
            }
            false => kerr(format!("rank {r} of {} values", x.len())),
        })
        .collect()
}

fn nth<T: Key>(values: &mut [T], index: usize) -> T {
    *values.select_nth_unstable_by(index, order).1
}

/// Runs one step on its (widened) inputs: the data's dtype is the first input's (the
/// picker's first input is the brackets, in the data's dtype; counts are int64).
pub fn apply(step: &SelectStep, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    match inputs.first() {
        Some(ArrayData::F64(_)) => run(step, inputs, Typed::<f64>::new(view_f64, ArrayData::F64)),
        Some(ArrayData::I64(_)) => run(step, inputs, Typed::<i64>::new(view_i64, ArrayData::I64)),
        Some(ArrayData::U64(_)) => run(step, inputs, Typed::<u64>::new(view_u64, ArrayData::U64)),
        Some(other) => kerr(format!("no selection of {} values", other.dtype())),
        None => kerr("expects inputs"),
    }
}

type View<T> = fn(&ArrayData) -> Option<Cow<'_, [T]>>;

/// How to read and make arrays of one dtype.
struct Typed<T: Clone> {
    view: View<T>,
    make: fn(ArrayD<T>) -> ArrayData,
}

impl<T: Key> Typed<T> {
    fn new(view: View<T>, make: fn(ArrayD<T>) -> ArrayData) -> Self {
        Typed { view, make }
    }

    fn read<'a>(&self, a: &'a ArrayData) -> KResult<Cow<'a, [T]>> {
        (self.view)(a).map_or_else(
            || {
                kerr(format!(
                    "internal: a {} input among the selection's values",
                    a.dtype()
                ))
            },
            Ok,
        )
    }

    fn vector(&self, v: Vec<T>) -> ArrayData {
        let n = v.len();
        (self.make)(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("1-D"))
    }
}

fn view_f64(a: &ArrayData) -> Option<Cow<'_, [f64]>> {
    match a {
        ArrayData::F64(a) => Some(slice_of(a)),
        _ => None,
    }
}

fn view_i64(a: &ArrayData) -> Option<Cow<'_, [i64]>> {
    match a {
        ArrayData::I64(a) => Some(slice_of(a)),
        _ => None,
    }
}

fn view_u64(a: &ArrayData) -> Option<Cow<'_, [u64]>> {
    match a {
        ArrayData::U64(a) => Some(slice_of(a)),
        _ => None,
    }
}

fn slice_of<T: Clone>(a: &ArrayD<T>) -> Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().cloned().collect()),
    }
}

fn counts_of(a: &ArrayData) -> KResult<Cow<'_, [i64]>> {
    view_i64(a).map_or_else(
        || kerr(format!("internal: counts of dtype {}", a.dtype())),
        Ok,
    )
}

fn run<T: Key>(step: &SelectStep, inputs: &[&ArrayData], t: Typed<T>) -> KResult<ArrayData> {
    let arity = |k: usize| match inputs.len() == k {
        true => Ok(()),
        false => kerr(format!("expects {k} inputs, got {}", inputs.len())),
    };
    match step {
        SelectStep::Sample { count, seed } => {
            arity(1)?;
            Ok(t.vector(sample(&t.read(inputs[0])?, *count as usize, *seed)))
        }
        SelectStep::Brackets { n, ranks } => {
            let mut merged = Vec::new();
            for s in inputs {
                merged.extend_from_slice(&t.read(s)?);
            }
            Ok(t.vector(brackets(merged, *n, ranks)))
        }
        SelectStep::Count => {
            arity(2)?;
            let c = count(&t.read(inputs[0])?, &t.read(inputs[1])?);
            let len = c.len();
            Ok(ArrayData::I64(
                ArrayD::from_shape_vec(IxDyn(&[len]), c).expect("1-D"),
            ))
        }
        SelectStep::Gather { n, ranks } => {
            arity(3)?;
            let (x, b) = (t.read(inputs[0])?, t.read(inputs[1])?);
            Ok(t.vector(gather(&x, &b, &counts_of(inputs[2])?, *n, ranks)?))
        }
        SelectStep::Pick { n, ranks } => {
            if inputs.len() < 2 {
                return kerr(format!("expects at least 2 inputs, got {}", inputs.len()));
            }
            let pieces = inputs[2..]
                .iter()
                .map(|p| t.read(p))
                .collect::<KResult<Vec<_>>>()?;
            let pieces: Vec<&[T]> = pieces.iter().map(|p| p.as_ref()).collect();
            let b = t.read(inputs[0])?;
            Ok(t.vector(pick(&b, &counts_of(inputs[1])?, *n, ranks, &pieces)?))
        }
        SelectStep::Whole { ranks } => {
            arity(1)?;
            Ok(t.vector(whole(&t.read(inputs[0])?, ranks)?))
        }
    }
}
