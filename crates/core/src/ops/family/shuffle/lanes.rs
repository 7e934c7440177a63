//! The chunk kernel of `sort`/`argsort` along one axis whose lanes are whole in the chunk.
//!
//! Why a kernel of its own: sorting along another axis than the last by moving the axis last
//! (a transpose), sorting and moving it back costs two full copies of the data and two fresh
//! buffers per chunk, which at 80 MB chunks is most of the run time (page faults and memory
//! traffic, not the sort). NumPy instead copies each lane into one reused buffer, sorts it
//! there and writes it back; this does the same, a block of [`BLOCK`] neighbouring lanes at a
//! time so that every cache line of a strided lane is read once, not once per lane.
//!
//! The order is [`Key`]'s (NaN last), always stable: argsort carries `(key, position)` pairs
//! through the stable [`sort_by_key`]. Descending sorts by the complemented key: the reverse
//! order of the keys with ties still in their original order and NaN first, which is the
//! array API's stable descending order (the ascending order of the reversed lane, reversed).

use super::kernels::{sort_by_key, Key};
use crate::array::ArrayData;
use crate::kernels::KResult;
use ndarray::{ArrayD, IxDyn};

/// Lanes gathered together: 8 float64 or int64 fill one 64-byte cache line.
const BLOCK: usize = 8;

/// Sorts every lane along `axis` of `data` (positions instead of values when `arg`),
/// ascending or `descending`.
pub fn sort_axis(data: &ArrayData, axis: usize, arg: bool, descending: bool) -> KResult<ArrayData> {
    let check = |ndim: usize| {
        if axis >= ndim.max(1) {
            return crate::kernels::kerr(format!(
                "sort: axis {axis} is out of bounds for a chunk of dimension {ndim}"
            ));
        }
        Ok(())
    };
    check(data.shape().len())?;
    Ok(match (data, arg) {
        (ArrayData::F64(a), false) => ArrayData::F64(sorted(a, axis, descending)),
        (ArrayData::I64(a), false) => ArrayData::I64(sorted(a, axis, descending)),
        (ArrayData::Bool(a), false) => ArrayData::Bool(sorted(a, axis, descending)),
        (ArrayData::F64(a), true) => ArrayData::I64(positions(a, axis, descending)),
        (ArrayData::I64(a), true) => ArrayData::I64(positions(a, axis, descending)),
        (ArrayData::Bool(a), true) => ArrayData::I64(positions(a, axis, descending)),
        (ArrayData::U64(a), false) => ArrayData::U64(sorted(a, axis, descending)),
        (ArrayData::U64(a), true) => ArrayData::I64(positions(a, axis, descending)),
        (other, _) => return crate::kernels::not_widened(other.dtype()),
    })
}

/// The chunk as C-order values, its lanes and the sort key (complemented when descending).
fn prepare<T: Key>(
    a: &ArrayD<T>,
    axis: usize,
    descending: bool,
) -> (Vec<usize>, Lanes, impl Fn(T) -> u64) {
    let shape = a.shape().to_vec();
    let lanes = if shape.is_empty() {
        // A 0-d chunk is one lane of one element.
        Lanes {
            n: 1,
            outer: 1,
            inner: 1,
        }
    } else {
        Lanes {
            n: shape[axis],
            outer: shape[..axis].iter().product(),
            inner: shape[axis + 1..].iter().product(),
        }
    };
    let key = move |x: T| if descending { !x.key() } else { x.key() };
    (shape, lanes, key)
}

/// `a`'s values sorted along `axis`.
fn sorted<T: Key + Default>(a: &ArrayD<T>, axis: usize, descending: bool) -> ArrayD<T> {
    let (shape, lanes, key) = prepare(a, axis, descending);
    let src = a.as_standard_layout();
    let src = src.as_slice().expect("a standard layout is contiguous");
    let mut out = vec![T::default(); src.len()];
    let mut scratch: Vec<T> = Vec::new();
    lanes.each_block(|base, width| {
        lanes.gather(src, base, width, &mut scratch, |x| x);
        for lane in scratch.chunks_mut(lanes.n) {
            sort_by_key(lane, |x| key(*x));
        }
        lanes.scatter(&scratch, base, width, &mut out, |x| x);
    });
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("the input's shape")
}

/// The int64 positions that sort `a` along `axis`, stably.
fn positions<T: Key>(a: &ArrayD<T>, axis: usize, descending: bool) -> ArrayD<i64> {
    let (shape, lanes, key) = prepare(a, axis, descending);
    let src = a.as_standard_layout();
    let src = src.as_slice().expect("a standard layout is contiguous");
    let mut out = vec![0i64; src.len()];
    let mut scratch: Vec<(u64, i64)> = Vec::new();
    lanes.each_block(|base, width| {
        lanes.gather(src, base, width, &mut scratch, |x| (key(x), 0));
        for lane in scratch.chunks_mut(lanes.n) {
            for (i, p) in lane.iter_mut().enumerate() {
                p.1 = i as i64;
            }
            sort_by_key(lane, |p| p.0);
        }
        lanes.scatter(&scratch, base, width, &mut out, |p| p.1);
    });
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("the input's shape")
}

/// A C-order chunk seen as `(outer, n, inner)`: the lanes run along the middle axis.
struct Lanes {
    n: usize,
    outer: usize,
    inner: usize,
}

impl Lanes {
    /// Calls `f(base, width)` for every block of up to [`BLOCK`] neighbouring lanes: lane `j`
    /// of the block has element `i` at `base + i * inner + j`.
    fn each_block(&self, mut f: impl FnMut(usize, usize)) {
        if self.n == 0 || self.inner == 0 {
            return;
        }
        for o in 0..self.outer {
            let mut j0 = 0;
            while j0 < self.inner {
                let width = BLOCK.min(self.inner - j0);
                f(o * self.n * self.inner + j0, width);
                j0 += width;
            }
        }
    }

    /// The block's lanes into `scratch`, one after the other (`f` of each element), reading
    /// the source row by row: each row's `width` neighbours share a cache line.
    fn gather<T: Copy, S: Copy + Default>(
        &self,
        src: &[T],
        base: usize,
        width: usize,
        scratch: &mut Vec<S>,
        f: impl Fn(T) -> S,
    ) {
        let n = self.n;
        scratch.clear();
        scratch.resize(n * width, S::default());
        for i in 0..n {
            let row = &src[base + i * self.inner..][..width];
            for (j, x) in row.iter().enumerate() {
                scratch[j * n + i] = f(*x);
            }
        }
    }

    /// The sorted lanes of `scratch` back into the block, row by row (`f` of each element).
    fn scatter<S: Copy, T>(
        &self,
        scratch: &[S],
        base: usize,
        width: usize,
        out: &mut [T],
        f: impl Fn(S) -> T,
    ) {
        let n = self.n;
        for i in 0..n {
            let row = &mut out[base + i * self.inner..][..width];
            for (j, x) in row.iter_mut().enumerate() {
                *x = f(scratch[j * n + i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy's order (NaN last), stable, through comparisons only.
    fn reference(lane: &[f64], arg: bool, descending: bool) -> Vec<f64> {
        let mut idx: Vec<usize> = (0..lane.len()).collect();
        idx.sort_by(|a, b| {
            let (x, y) = (lane[*a], lane[*b]);
            let o = match (x.is_nan(), y.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ => x.partial_cmp(&y).unwrap(),
            };
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        idx.iter()
            .map(|i| if arg { *i as f64 } else { lane[*i] })
            .collect()
    }

    #[test]
    fn every_axis_of_a_3d_chunk_matches_a_comparison_sort() {
        // Lanes long enough for the radix sort along axis 1 (300), short along the others;
        // ties (values on a grid of 7), NaN, infinities and a width that is not a multiple
        // of the block.
        let shape = [3usize, 300, 11];
        let len: usize = shape.iter().product();
        let values: Vec<f64> = (0..len)
            .map(|i| match (i * 7919) % 101 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                k => ((k * 31) % 7) as f64 - 3.0,
            })
            .collect();
        let a = ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap();
        for axis in 0..3 {
            for arg in [false, true] {
                for descending in [false, true] {
                    let got = sort_axis(&ArrayData::F64(a.clone()), axis, arg, descending).unwrap();
                    let got: Vec<f64> = got.iter_f64().collect();
                    let got = ArrayD::from_shape_vec(IxDyn(&shape), got).unwrap();
                    for (lane, out) in a
                        .lanes(ndarray::Axis(axis))
                        .into_iter()
                        .zip(got.lanes(ndarray::Axis(axis)))
                    {
                        let want = reference(&lane.to_vec(), arg, descending);
                        for (g, w) in out.iter().zip(&want) {
                            assert!(
                                (g.is_nan() && w.is_nan()) || g == w,
                                "axis {axis} arg {arg} descending {descending}: {g} != {w}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_axis_beyond_the_chunk_is_an_error() {
        let a = ArrayData::I64(ArrayD::zeros(IxDyn(&[2, 3])));
        let e = sort_axis(&a, 2, false, false).unwrap_err();
        assert!(e.0.contains("axis 2"), "{}", e.0);
    }
}
