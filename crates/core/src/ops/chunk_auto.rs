//! dask's chunk spellings, resolved to a [`ChunkSpec`] in one place so the expression
//! language, the CLI, HTTP and Python accept the same `chunk=` arguments.
//!
//! Per axis, dask takes a length, `-1` or `None` (the whole axis), `"auto"`, or every chunk
//! length (`(2, 3, 5)`); a byte size (`"100 MiB"`, `"1GB"`) anywhere means `"auto"` with that
//! many bytes per chunk instead of `array.chunk-size`'s 128 MiB. `"auto"` follows dask's
//! `auto_chunks` (without previous chunks): the axes given explicitly are kept, the auto axes
//! share what is left of the byte budget evenly, an axis shorter than its share is taken
//! whole (and the rest share again), and a share is rounded to a divisor of the axis length
//! when one lies within a factor of two below it, so chunks come out balanced.

use crate::error::{AresError, Result};
use crate::ops::ChunkSpec;

/// dask's `array.chunk-size`: the bytes an `"auto"` chunk aims at.
pub const AUTO_CHUNK_BYTES: u64 = 128 << 20;

/// One axis of a `chunk=` argument, as dask spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DimChunk {
    /// Chunks of this length (the last one may be shorter).
    Len(usize),
    /// One chunk holding the whole axis (`-1` or `None`).
    Whole,
    /// Chosen by the byte budget (`"auto"` or a byte size).
    Auto,
    /// Every chunk length (they must add up to the axis length).
    Lengths(Vec<usize>),
}

/// Bytes per chunk written as dask writes them: `"100 MiB"`, `"1GB"`, `"5kB"`, `"1048576"`.
pub fn parse_byte_size(op: &'static str, text: &str) -> Result<u64> {
    let t = text.trim();
    let bytes = match t.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) => t.parse::<bytesize::ByteSize>().map(|b| b.as_u64()),
    };
    match bytes {
        Ok(0) => Err(AresError::arg(
            op,
            format!("chunk byte size {text:?} is zero"),
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(AresError::arg(
            op,
            format!(
                "chunk {text:?} is neither \"auto\" nor a byte size such as \"100 MiB\" or \"1GB\""
            ),
        )),
    }
}

/// The chunk specification of `dims` (one per axis of `shape`) for elements of `itemsize`
/// bytes, the auto axes sharing `limit` bytes per chunk.
pub fn resolve_dims(
    op: &'static str,
    dims: Vec<DimChunk>,
    shape: &[usize],
    itemsize: usize,
    limit: u64,
) -> Result<ChunkSpec> {
    if dims.len() != shape.len() {
        return Err(AresError::arg(
            op,
            format!(
                "chunk has {} entries for a tensor of {} dimensions",
                dims.len(),
                shape.len()
            ),
        ));
    }
    let autos = auto_lengths(&dims, shape, itemsize, limit);
    // Each axis as one chunk length, or (`Lengths`) as every chunk length.
    let mut lens = Vec::with_capacity(dims.len());
    let mut listed = Vec::with_capacity(dims.len());
    for (d, ((dim, n), auto)) in dims.into_iter().zip(shape).zip(autos).enumerate() {
        let (len, all) = match dim {
            DimChunk::Len(0) => {
                return Err(AresError::arg(
                    op,
                    format!("chunk length of axis {d} must be at least 1"),
                ))
            }
            DimChunk::Len(c) => (c, None),
            DimChunk::Whole => ((*n).max(1), None),
            DimChunk::Auto => (auto.max(1), None),
            DimChunk::Lengths(all) => (1, Some(all)),
        };
        lens.push(len);
        listed.push(all);
    }
    if listed.iter().all(Option::is_none) {
        return Ok(ChunkSpec::PerDim(lens.into_iter().collect()));
    }
    let dims = listed
        .into_iter()
        .zip(lens)
        .zip(shape)
        .enumerate()
        .map(|(d, ((all, len), n))| match all {
            Some(all) => Ok(all),
            None => even_lengths(op, d, *n, len),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ChunkSpec::Explicit(dims))
}

/// Most chunks one axis of a mixed explicit `chunk=` may list: a length given as one number
/// there is expanded to every chunk's length, so it is bounded before anything is allocated.
const MAX_EXPANDED_CHUNKS: usize = 1 << 20;

/// The lengths of axis `d` (of length `n`) cut every `chunk` elements, for a `chunk=` that
/// lists other axes' lengths explicitly (`((2, 3, 5), 4)`).
fn even_lengths(op: &'static str, d: usize, n: usize, chunk: usize) -> Result<Vec<usize>> {
    let count = n.div_ceil(chunk);
    if count > MAX_EXPANDED_CHUNKS {
        return Err(AresError::arg(
            op,
            format!(
                "chunk length {chunk} cuts axis {d} (length {n}) into {count} chunks, more \
                 than the {MAX_EXPANDED_CHUNKS} an explicit chunk= may list"
            ),
        ));
    }
    Ok(crate::prepare::tile::split_dim(n, chunk))
}

/// The chunk length of every `Auto` axis (0 for the others): dask's `auto_chunks`.
fn auto_lengths(dims: &[DimChunk], shape: &[usize], itemsize: usize, limit: u64) -> Vec<usize> {
    let mut out = vec![0; dims.len()];
    let mut autos: Vec<usize> = (0..dims.len())
        .filter(|&d| dims[d] == DimChunk::Auto)
        .collect();
    if autos.is_empty() {
        return out;
    }
    // The elements of one chunk along the axes given explicitly.
    let fixed: f64 = dims
        .iter()
        .zip(shape)
        .map(|(dim, n)| match dim {
            DimChunk::Len(c) => (*c).min(*n).max(1) as f64,
            DimChunk::Whole => (*n).max(1) as f64,
            DimChunk::Lengths(l) => l.iter().copied().max().unwrap_or(1).max(1) as f64,
            DimChunk::Auto => 1.0,
        })
        .product();
    let mut budget = limit as f64 / itemsize.max(1) as f64 / fixed;
    loop {
        let share = budget.max(1.0).powf(1.0 / autos.len() as f64);
        let (small, rest): (Vec<usize>, Vec<usize>) =
            autos.iter().partition(|&&d| (shape[d] as f64) < share);
        if small.is_empty() {
            for d in rest {
                out[d] = round_to(share, shape[d]);
            }
            return out;
        }
        for d in small {
            out[d] = shape[d];
            budget /= shape[d].max(1) as f64;
        }
        if rest.is_empty() {
            return out;
        }
        autos = rest;
    }
}

/// dask's `round_to`: the largest divisor of `n` within `[c / 2, c]`, else `c` itself, so an
/// axis is cut in equal chunks when that costs at most half the budget.
fn round_to(c: f64, n: usize) -> usize {
    let c_int = (c.floor() as usize).max(1);
    let low = (c / 2.0).ceil() as usize;
    let mut best = None;
    let mut i = 1usize;
    while i.saturating_mul(i) <= n {
        if n.is_multiple_of(i) {
            for f in [i, n / i] {
                if f >= low && f <= c_int && best.is_none_or(|b| f > b) {
                    best = Some(f);
                }
            }
        }
        i += 1;
    }
    best.unwrap_or(c_int)
}

/// A check for tests: the chunk lengths a spec gives each axis.
#[cfg(test)]
fn splits(spec: &ChunkSpec, shape: &[usize]) -> Vec<Vec<usize>> {
    match spec {
        ChunkSpec::Explicit(d) => d.clone(),
        ChunkSpec::PerDim(c) => shape
            .iter()
            .zip(c)
            .map(|(n, c)| crate::prepare::tile::split_dim(*n, *c))
            .collect(),
        ChunkSpec::Uniform(c) => shape
            .iter()
            .map(|n| crate::prepare::tile::split_dim(*n, *c))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::fmt_shape;
    use DimChunk::*;

    fn resolve(dims: Vec<DimChunk>, shape: &[usize], itemsize: usize, limit: u64) -> String {
        let spec = resolve_dims("t", dims, shape, itemsize, limit).unwrap();
        splits(&spec, shape)
            .iter()
            .map(|d| fmt_shape(d))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn whole_axis_and_lengths_pass_through() {
        assert_eq!(
            resolve(vec![Whole, Len(4)], &[3, 10], 8, 1),
            "(3,) (4, 4, 2)"
        );
        assert_eq!(
            resolve(vec![Lengths(vec![1, 2]), Whole], &[3, 5], 8, 1),
            "(1, 2) (5,)"
        );
        assert_eq!(
            resolve(vec![Lengths(vec![1, 2]), Len(2)], &[3, 5], 8, 1),
            "(1, 2) (2, 2, 1)"
        );
    }

    #[test]
    fn auto_matches_dask() {
        // 10000 x 10000 float64: a share of 4096 per axis, rounded to 2500, the largest
        // divisor of 10000 in [2048, 4096].
        let spec = resolve_dims("t", vec![Auto, Auto], &[10000, 10000], 8, AUTO_CHUNK_BYTES);
        assert_eq!(
            spec.unwrap(),
            ChunkSpec::PerDim([2500, 2500].into_iter().collect())
        );
        // (100, 10**6) with chunks=(-1, "auto"): 100 rows whole, the rest 125000 long
        // (the largest divisor of 10**6 at most 16777216 / 100 = 167772).
        let spec = resolve_dims(
            "t",
            vec![Whole, Auto],
            &[100, 1_000_000],
            8,
            AUTO_CHUNK_BYTES,
        );
        assert_eq!(
            spec.unwrap(),
            ChunkSpec::PerDim([100, 125000].into_iter().collect())
        );
        // A short axis is taken whole and the others share again: 2 x 1e6 float32 with
        // "1 MiB": 2 * 131072 elements per chunk; 10**6 has the divisor 125000 in [65536, 131072].
        let limit = parse_byte_size("t", "1 MiB").unwrap();
        let spec = resolve_dims("t", vec![Auto, Auto], &[2, 1_000_000], 4, limit);
        assert_eq!(
            spec.unwrap(),
            ChunkSpec::PerDim([2, 125000].into_iter().collect())
        );
        // No divisor in range (a prime length): the share itself.
        assert_eq!(
            resolve(vec![Auto], &[1_000_003], 8, 8_000_000),
            "(1000000, 3)"
        );
    }

    #[test]
    fn byte_sizes_parse_as_dask() {
        assert_eq!(parse_byte_size("t", "100 MiB").unwrap(), 100 << 20);
        assert_eq!(parse_byte_size("t", "1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_byte_size("t", "5kB").unwrap(), 5000);
        assert_eq!(parse_byte_size("t", "4096").unwrap(), 4096);
        let e = parse_byte_size("t", "lots").unwrap_err().to_string();
        assert!(e.contains("\"lots\"") && e.contains("100 MiB"), "{e}");
        assert!(parse_byte_size("t", "0 B").is_err());
    }

    #[test]
    fn bad_spellings_are_refused_with_the_axis() {
        let e = resolve_dims("t", vec![Len(0), Whole], &[3, 4], 8, 1).unwrap_err();
        assert!(e.to_string().contains("axis 0"), "{e}");
        let e = resolve_dims("t", vec![Whole], &[3, 4], 8, 1).unwrap_err();
        assert!(e.to_string().contains("1 entries"), "{e}");
    }

    #[test]
    fn an_empty_axis_gets_a_positive_length() {
        assert_eq!(
            resolve_dims("t", vec![Whole, Auto], &[0, 0], 8, AUTO_CHUNK_BYTES).unwrap(),
            ChunkSpec::PerDim([1, 1].into_iter().collect())
        );
    }

    /// The chunk lengths of the program's result, as tiling makes them.
    fn tiled(src: &str) -> std::result::Result<Vec<Vec<usize>>, String> {
        let t = crate::expr::evaluate(src).map_err(|e| e.to_string())?;
        let g = crate::tensor::Tensor::graph(&[&t]);
        let tiled = crate::prepare::tile::tile(&g, &crate::config::TaskConfig::default())
            .map_err(|e| e.to_string())?;
        Ok(tiled.results[0].splits.clone())
    }

    #[test]
    fn the_language_takes_dask_spellings() {
        let x = "x = rand(6, 10, chunk=2, seed=1); ";
        let ok = |src: &str| tiled(&format!("{x}{src}")).unwrap();
        assert_eq!(ok("rechunk(x, -1)"), [vec![6], vec![10]]);
        assert_eq!(ok("rechunk(x, (None, 4))"), [vec![6], vec![4, 4, 2]]);
        assert_eq!(ok("rechunk(x, (-1, (3, 7)))"), [vec![6], vec![3, 7]]);
        assert_eq!(ok("rechunk(x, \"auto\")"), [vec![6], vec![10]]);
        // 48 bytes: 6 float64 per chunk, a share of sqrt(6) = 2.4 per axis, rounded to the
        // divisor 2 of both lengths.
        assert_eq!(ok("rechunk(x, \"48 B\")"), [vec![2, 2, 2], vec![2; 5]]);
        assert_eq!(ok("rechunk(x, (2, \"80B\"))"), [vec![2; 3], vec![5, 5]]);
        assert_eq!(
            tiled("zeros(10, chunk=(3, 3, 4))").unwrap(),
            [vec![3, 3, 4]]
        );
        assert_eq!(
            tiled("ones((4, 4), chunk=(-1, 2))").unwrap(),
            [vec![4], vec![2, 2]]
        );
        for (bad, says) in [
            ("rechunk(x, (-2, 2))", "negative"),
            ("rechunk(x, \"lots\")", "byte size"),
            ("rechunk(x, (\"1 KiB\", \"2 KiB\"))", "two byte sizes"),
            ("rechunk(x, (-1, -1, -1))", "3 entries"),
        ] {
            let e = tiled(&format!("{x}{bad}")).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
