//! The sort mapper's split of a chunk by value range (PSRS's first shuffle), and the slice
//! access the shuffle kernels use instead of ndarray's element iterators.
//!
//! A profile of `sum(sort(rand(10^8)))` spent about a third of its CPU here, in the
//! reducers' concatenation and in rand: a binary search over the splitters per element, a
//! second pass through ndarray's n-dimensional iterator, and concatenation element by
//! element. Now the bucket of a key comes from a table over the splitters' key range (one
//! subtraction, a shift and two loads, then a scan of the one or two splitters that share the
//! key's cell; a binary search only in a crowded cell), and every piece is sized by a first
//! counting pass so each element is written once.

use super::kernels::Key;
use ndarray::ArrayD;
use std::borrow::Cow;

/// Table cells over the splitters' key range: small enough to stay in L1 (16 KiB).
const CELLS: u64 = 4096;

/// The bucket of a key: the number of splitter keys at or below it, at most `last` (the
/// reducer count minus one), exactly as `keys.partition_point(|s| *s <= k).min(last)`.
pub(super) struct Buckets {
    /// The splitters' keys, ascending.
    keys: Vec<u64>,
    last: usize,
    /// The first splitter's key: cell `i` holds the keys `lo + (i << shift) ..` up to the
    /// next cell's first key.
    lo: u64,
    shift: u32,
    /// `table[i]`: the bucket of cell `i`'s first key; a key in the cell has its bucket in
    /// `table[i] ..= table[i + 1]`.
    table: Vec<u32>,
}

impl Buckets {
    /// `keys` must be ascending (splitters are drawn from sorted samples); `reducers` ≥ 1.
    pub(super) fn new(keys: Vec<u64>, reducers: usize) -> Self {
        debug_assert!(keys.is_sorted(), "splitters must be ascending");
        let last = reducers.saturating_sub(1);
        let (lo, hi) = match (keys.first(), keys.last()) {
            (Some(lo), Some(hi)) => (*lo, *hi),
            _ => {
                return Buckets {
                    keys,
                    last,
                    lo: 0,
                    shift: 0,
                    table: vec![],
                }
            }
        };
        let span = hi - lo;
        let mut shift = 0;
        while (span >> shift) >= CELLS {
            shift += 1;
        }
        let cells = (span >> shift) as usize + 1;
        let table = (0..=cells)
            .map(|i| {
                // In u128: `cells << shift` can reach 2^64.
                let first = (lo as u128 + ((i as u128) << shift)).min(u64::MAX as u128) as u64;
                keys.partition_point(|s| *s <= first) as u32
            })
            .collect();
        Buckets {
            keys,
            last,
            lo,
            shift,
            table,
        }
    }

    #[inline]
    pub(super) fn of(&self, k: u64) -> usize {
        if self.table.is_empty() || k < self.lo {
            return 0;
        }
        // A key far above the last splitter has a cell near 2^64: no table slice then.
        let cell = ((k - self.lo) >> self.shift) as usize;
        let found = match self.table.get(cell..cell.saturating_add(2)) {
            Some(&[a, b]) => {
                let (mut a, b) = (a as usize, b as usize);
                if b - a > 4 {
                    a + self.keys[a..b].partition_point(|s| *s <= k)
                } else {
                    // Usually none or one splitter shares the cell: a scan beats a search.
                    while a < b && self.keys[a] <= k {
                        a += 1;
                    }
                    a
                }
            }
            // Beyond the last splitter: every splitter is at or below the key.
            _ => self.keys.len(),
        };
        found.min(self.last)
    }
}

/// The elements of `a` in C order: borrowed when it is contiguous, else copied.
pub(super) fn values<T: Clone>(a: &ArrayD<T>) -> Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().cloned().collect()),
    }
}

/// Splits `v` into `buckets`' reducers: values, or with `arg` the `(key, offset + position)`
/// pairs argsort's reducers sort, each piece in position order.
pub(super) fn split<T: Key>(v: &[T], buckets: &Buckets, arg: bool, offset: u64) -> Pieces<T> {
    let m = buckets.last + 1;
    let mut sizes = vec![0usize; m];
    let of: Vec<u32> = v
        .iter()
        .map(|x| {
            let b = buckets.of(x.key());
            sizes[b] += 1;
            b as u32
        })
        .collect();
    if arg {
        let mut parts: Vec<Vec<i64>> = sizes.iter().map(|n| Vec::with_capacity(2 * n)).collect();
        for (i, (x, b)) in v.iter().zip(&of).enumerate() {
            let p = &mut parts[*b as usize];
            p.push(x.key() as i64);
            p.push((offset + i as u64) as i64);
        }
        Pieces::Pairs(parts)
    } else {
        let mut parts: Vec<Vec<T>> = sizes.iter().map(|n| Vec::with_capacity(*n)).collect();
        for (x, b) in v.iter().zip(&of) {
            parts[*b as usize].push(*x);
        }
        Pieces::Values(parts)
    }
}

/// A mapper's pieces, one per reducer.
pub(super) enum Pieces<T> {
    Values(Vec<Vec<T>>),
    Pairs(Vec<Vec<i64>>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(keys: &[u64], reducers: usize, k: u64) -> usize {
        keys.partition_point(|s| *s <= k).min(reducers - 1)
    }

    fn check(mut keys: Vec<u64>, reducers: usize, probes: &[u64]) {
        keys.sort_unstable();
        let b = Buckets::new(keys.clone(), reducers);
        let edges = keys
            .iter()
            .flat_map(|k| [k.wrapping_sub(1), *k, k.wrapping_add(1)]);
        for k in probes.iter().copied().chain(edges).chain([0, u64::MAX]) {
            assert_eq!(
                b.of(k),
                reference(&keys, reducers, k),
                "key {k:#x}, splitters {keys:x?}"
            );
        }
    }

    #[test]
    fn no_splitters_put_everything_in_the_first_bucket() {
        check(vec![], 1, &[0, 5, u64::MAX]);
        check(vec![], 3, &[0, 5, u64::MAX]);
    }

    #[test]
    fn equal_splitters_and_extreme_keys() {
        check(vec![7; 9], 10, &[6, 7, 8]);
        check(vec![0, 0, u64::MAX, u64::MAX], 5, &[1, u64::MAX - 1]);
        check(vec![u64::MAX; 3], 4, &[]);
        // Fewer reducers than splitters + 1: capped at the last reducer.
        check(vec![1, 2, 3, 4], 2, &[0, 2, 9]);
    }

    #[test]
    fn float_splitters_of_a_uniform_sample() {
        let keys: Vec<u64> = (1..100).map(|i| (i as f64 / 100.0).key()).collect();
        let probes: Vec<u64> = (0..10_000)
            .map(|i| (i as f64 / 9999.0).key())
            .chain([f64::NAN.key(), (-0.0f64).key(), f64::INFINITY.key()])
            .collect();
        check(keys, 100, &probes);
    }

    proptest! {
        #[test]
        fn bucket_equals_the_binary_search(
            keys in prop::collection::vec(any::<u64>(), 0..40),
            narrow in prop::collection::vec(0u64..64, 0..40),
            probes in prop::collection::vec(any::<u64>(), 0..60),
            extra in 0usize..4,
        ) {
            let m = keys.len() + 1;
            check(keys, (m + extra).saturating_sub(2).max(1), &probes);
            let m = narrow.len() + 1;
            check(narrow, m, &probes.iter().map(|p| p % 80).collect::<Vec<_>>());
        }

        #[test]
        fn split_keeps_every_value_in_its_bucket_in_order(
            v in prop::collection::vec(any::<i64>(), 0..300),
            mut s in prop::collection::vec(any::<i64>(), 0..8),
            arg in any::<bool>(),
        ) {
            s.sort_unstable();
            let m = s.len() + 1;
            let keys: Vec<u64> = s.iter().map(|x| x.key()).collect();
            let b = Buckets::new(keys.clone(), m);
            let expect = |r: usize| -> Vec<(usize, i64)> {
                v.iter().copied().enumerate()
                    .filter(|(_, x)| reference(&keys, m, x.key()) == r)
                    .collect()
            };
            match split(&v, &b, arg, 10) {
                Pieces::Values(parts) => {
                    prop_assert!(!arg);
                    for (r, p) in parts.iter().enumerate() {
                        let e: Vec<i64> = expect(r).into_iter().map(|(_, x)| x).collect();
                        prop_assert_eq!(p, &e);
                    }
                }
                Pieces::Pairs(parts) => {
                    prop_assert!(arg);
                    for (r, p) in parts.iter().enumerate() {
                        let e: Vec<i64> = expect(r)
                            .into_iter()
                            .flat_map(|(i, x)| [x.key() as i64, 10 + i as i64])
                            .collect();
                        prop_assert_eq!(p, &e);
                    }
                }
            }
        }
    }
}
