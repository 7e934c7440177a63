//! The kernels of `searchsorted` over a sorted operand in several chunks, in O(chunks)
//! subtasks rather than one per (values chunk, sorted chunk) pair.
//!
//! A value's insertion point is `offset[k] + local(k)`, where `k` is the sorted chunk it
//! falls into and `local(k)` its insertion point within that chunk: every chunk before `k`
//! lies wholly below it, every chunk after wholly above. `k` is found from the chunks'
//! boundaries (the last element of every non-empty chunk but the last, gathered into one
//! small chunk): `side='left'` counts the boundaries below the value, `'right'` those at or
//! below it. So the values travel through two shuffles, as `take`'s positions do:
//! [`route`] sends each value (its key, with where it came from) to its sorted chunk,
//! [`serve`] answers a chunk's requests against its data, and [`place`] puts the answers back
//! in the order of the values' chunk. Keys are [`SKey`]'s (zeros folded, NaN last), so the
//! comparisons are the ones of the one-chunk kernel (`kernels::searchsorted`).

use super::kernels::SKey;
use crate::array::ArrayData;
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, IxDyn};

fn vec1(v: Vec<i64>) -> ArrayData {
    let n = v.len();
    ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("a 1-D vector fits its length"))
}

/// The keys of a chunk's elements, in C order.
fn keys(x: &ArrayData, what: &str) -> KResult<Vec<u64>> {
    Ok(match x {
        ArrayData::F64(a) => a.iter().map(|v| v.skey()).collect(),
        ArrayData::I64(a) => a.iter().map(|v| v.skey()).collect(),
        ArrayData::Bool(a) => a.iter().map(|v| v.skey()).collect(),
        ArrayData::U64(a) => a.iter().map(|v| v.skey()).collect(),
        other => return kerr(format!("searchsorted: {what} of dtype {}", other.dtype())),
    })
}

/// How many of the sorted `keys` are below `k` (`right`: at or below it).
fn count(keys: &[u64], k: u64, right: bool) -> usize {
    if right {
        keys.partition_point(|s| *s <= k)
    } else {
        keys.partition_point(|s| *s < k)
    }
}

/// Stage 1, values chunk `ordinal`: each value goes to the sorted chunk it falls into (one
/// piece per sorted chunk, `m` of them) as int64 triples `(ordinal, position in the values
/// chunk, key)`.
pub fn route(
    values: &ArrayData,
    bounds: &ArrayData,
    m: usize,
    ordinal: u32,
    right: bool,
) -> KResult<Vec<ArrayData>> {
    let bounds = keys(bounds, "boundaries")?;
    if bounds.len() + 1 != m {
        return kerr(format!(
            "searchsorted: {} boundaries for {m} sorted chunks",
            bounds.len()
        ));
    }
    let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
    for (i, k) in keys(values, "values")?.into_iter().enumerate() {
        parts[count(&bounds, k, right)].extend([ordinal as i64, i as i64, k as i64]);
    }
    Ok(parts.into_iter().map(vec1).collect())
}

/// Stage 2, a sorted chunk starting at `offset` and its requests: each answer goes to the
/// values chunk that asked (one piece per values chunk, `m` of them) as int64 pairs
/// `(position, insertion point)`.
pub fn serve(
    sorted: &ArrayData,
    requests: &ArrayData,
    m: usize,
    offset: u64,
    right: bool,
) -> KResult<Vec<ArrayData>> {
    let sorted = keys(sorted, "the sorted array")?;
    let ArrayData::I64(requests) = requests else {
        return kerr("searchsorted: requests must be int64 triples");
    };
    let requests = requests.as_slice().expect("a concatenated 1-D vector");
    let (triples, rest) = requests.as_chunks::<3>();
    if !rest.is_empty() {
        return kerr("searchsorted: requests must be int64 triples");
    }
    let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
    for [ordinal, position, key] in triples {
        let Some(part) = parts.get_mut(*ordinal as usize) else {
            return kerr(format!(
                "searchsorted: a request from values chunk {ordinal} of {m}"
            ));
        };
        let at = offset as usize + count(&sorted, *key as u64, right);
        part.extend([*position, at as i64]);
    }
    Ok(parts.into_iter().map(vec1).collect())
}

/// The `len` insertion points of one values chunk, from the `(position, insertion point)`
/// pairs of every sorted chunk.
pub fn place(pieces: &[&ArrayData], len: u64) -> KResult<ArrayData> {
    let mut out = vec![0i64; len as usize];
    let mut seen = 0usize;
    for p in pieces {
        let ArrayData::I64(a) = p else {
            return kerr("searchsorted: answers must be int64 pairs");
        };
        for pair in a.iter().copied().collect::<Vec<_>>().chunks(2) {
            let [position, at] = pair else {
                return kerr("searchsorted: answers must be int64 pairs");
            };
            let Some(slot) = out.get_mut(*position as usize) else {
                return kerr(format!("searchsorted: position {position} of {len}"));
            };
            *slot = *at;
            seen += 1;
        }
    }
    if seen != len as usize {
        return kerr(format!("searchsorted: {seen} answers for {len} values"));
    }
    Ok(vec1(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[f64]) -> ArrayData {
        ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap())
    }

    fn ints(a: &ArrayData) -> Vec<i64> {
        a.iter_f64().map(|x| x as i64).collect()
    }

    /// Three sorted chunks with ties across their borders and NaN at the end, searched
    /// through route → serve → place, equal the one-chunk kernel on the whole array.
    #[test]
    fn three_stages_equal_one_search_of_the_whole() {
        let chunks = [
            vec![-1.0, 0.0, 2.0],
            vec![2.0, 2.0, 3.0],
            vec![5.0, f64::NAN],
        ];
        let whole: Vec<f64> = chunks.concat();
        let bounds = f(&[2.0, 3.0]);
        let values = f(&[-5.0, -0.0, 2.0, 2.5, 3.0, 4.0, 9.0, f64::NAN, f64::INFINITY]);
        for right in [false, true] {
            let routed = route(&values, &bounds, 3, 0, right).unwrap();
            let mut offset = 0;
            let mut answers = Vec::new();
            for (c, req) in chunks.iter().zip(&routed) {
                answers.extend(serve(&f(c), req, 1, offset, right).unwrap());
                offset += c.len() as u64;
            }
            let refs: Vec<&ArrayData> = answers.iter().collect();
            let got = place(&refs, 9).unwrap();
            let want = crate::ops::family::shuffle::select::kernels::searchsorted(
                &f(&whole),
                &values,
                right,
            )
            .unwrap();
            assert_eq!(ints(&got), ints(&want), "right={right}");
        }
    }

    #[test]
    fn a_missing_answer_is_an_error() {
        let e = place(&[&vec1(vec![0, 3])], 2).unwrap_err();
        assert!(e.0.contains("1 answers for 2"), "{}", e.0);
    }
}
