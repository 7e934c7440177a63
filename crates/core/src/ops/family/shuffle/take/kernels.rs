//! Kernels of integer-array indexing (`take`, `x[idx]`), a two-stage shuffle: positions are
//! routed to the row chunks that hold them ([`route`]), each row chunk sends the requested
//! rows to the output chunks that need them ([`serve`]), and each output chunk places the
//! rows it received ([`place`]). Rows travel as int64 records `(position, values as bits)`,
//! so the shuffle's pieces have one dtype whatever the data's.

use crate::array::{ArrayData, DType};
use crate::kernels::{kerr, KResult};
use ndarray::{ArrayD, IxDyn};

fn vec1(v: Vec<i64>) -> ArrayData {
    let n = v.len();
    ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("a 1-D vector fits its length"))
}

/// The message NumPy gives for an index out of range.
fn out_of_bounds(i: i64, axis: u32, len: u64) -> String {
    if axis == u32::MAX {
        format!("index {i} is out of bounds for size {len}")
    } else {
        format!("index {i} is out of bounds for axis {axis} with size {len}")
    }
}

/// Stage 1: `(output position, row within its chunk)` pairs, one piece per row chunk.
pub fn route(
    idx: &ArrayData,
    m: usize,
    len: u64,
    chunk: u64,
    offset: u64,
    axis: u32,
) -> KResult<Vec<ArrayData>> {
    let ArrayData::I64(idx) = idx else {
        return kerr("take: indices must be int64");
    };
    let chunk = chunk.max(1);
    let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
    for (k, i) in idx.iter().enumerate() {
        let j = if *i < 0 {
            *i as i128 + len as i128
        } else {
            *i as i128
        };
        if j < 0 || j >= len as i128 {
            return kerr(out_of_bounds(*i, axis, len));
        }
        let (r, local) = (j as u64 / chunk, j as u64 % chunk);
        let Some(part) = parts.get_mut(r as usize) else {
            return kerr(format!("take: row {j} falls in chunk {r} of {m}"));
        };
        part.extend([(offset + k as u64) as i64, local as i64]);
    }
    Ok(parts.into_iter().map(vec1).collect())
}

/// A chunk's values as int64 bits, in C order.
fn bits(x: &ArrayData) -> Vec<i64> {
    match x {
        ArrayData::F64(a) => a.iter().map(|v| v.to_bits() as i64).collect(),
        ArrayData::I64(a) => a.iter().copied().collect(),
        ArrayData::Bool(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::I32(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::I16(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::I8(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::U32(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::U16(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::U8(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::U64(a) => a.iter().map(|v| *v as i64).collect(),
        ArrayData::F32(a) => a.iter().map(|v| (*v as f64).to_bits() as i64).collect(),
        // Refused when the tensor is built (`crate::ops::infer::check_complex`).
        ArrayData::C64(_) | ArrayData::C128(_) => vec![],
    }
}

/// Stage 2: the requested rows of a (rows, width) chunk, one piece per output chunk.
pub fn serve(
    rows: &ArrayData,
    requests: &ArrayData,
    m: usize,
    out_chunk: u64,
) -> KResult<Vec<ArrayData>> {
    let ArrayData::I64(req) = requests else {
        return kerr("take: requests must be int64 pairs");
    };
    let shape = rows.shape();
    let (n, width) = match shape {
        [n, w] => (*n, *w),
        _ => return kerr(format!("take: rows of shape {shape:?}, not 2-D")),
    };
    let values = bits(rows);
    let req: Vec<i64> = req.iter().copied().collect();
    let mut parts: Vec<Vec<i64>> = vec![Vec::new(); m];
    for q in req.chunks_exact(2) {
        let (pos, local) = (q[0], q[1] as usize);
        if local >= n {
            return kerr(format!("take: row {local} of a chunk of {n}"));
        }
        let Some(part) = parts.get_mut((pos as u64 / out_chunk.max(1)) as usize) else {
            return kerr(format!("take: position {pos} beyond the output"));
        };
        part.push(pos);
        part.extend_from_slice(&values[local * width..(local + 1) * width]);
    }
    Ok(parts.into_iter().map(vec1).collect())
}

/// An output chunk: rows `start..start + rows` placed from their records.
pub fn place(
    pieces: &[&ArrayData],
    dtype: DType,
    start: u64,
    rows: u64,
    width: u64,
) -> KResult<ArrayData> {
    let (rows, width) = (rows as usize, width as usize);
    let mut out = vec![0i64; rows * width];
    let mut seen = 0usize;
    for p in pieces {
        let ArrayData::I64(a) = p else {
            return kerr("take: pieces must be int64 records");
        };
        let flat: Vec<i64> = a.iter().copied().collect();
        for rec in flat.chunks_exact(width + 1) {
            let r = (rec[0] as u64).wrapping_sub(start) as usize;
            if r >= rows {
                return kerr(format!("take: position {} outside this chunk", rec[0]));
            }
            out[r * width..(r + 1) * width].copy_from_slice(&rec[1..]);
            seen += 1;
        }
    }
    if seen != rows {
        return kerr(format!("take: {seen} rows arrived for a chunk of {rows}"));
    }
    let shape = IxDyn(&[rows, width]);
    let wrap = |e| crate::kernels::KernelError(format!("take: {e}"));
    Ok(match dtype.wide() {
        DType::C64 | DType::C128 => return kerr("take of complex values is not supported"),
        DType::I64 | DType::I32 => {
            ArrayData::I64(ArrayD::from_shape_vec(shape, out).map_err(wrap)?)
        }
        DType::F64 | DType::F32 => ArrayData::F64(
            ArrayD::from_shape_vec(
                shape,
                out.iter().map(|b| f64::from_bits(*b as u64)).collect(),
            )
            .map_err(wrap)?,
        ),
        DType::Bool => ArrayData::Bool(
            ArrayD::from_shape_vec(shape, out.iter().map(|b| *b != 0).collect()).map_err(wrap)?,
        ),
        DType::U64 => ArrayData::U64(
            ArrayD::from_shape_vec(shape, out.iter().map(|b| *b as u64).collect()).map_err(wrap)?,
        ),
        other => return crate::kernels::not_widened(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_names_the_index_and_the_length() {
        let idx = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[2]), vec![-3, 7]).unwrap());
        let e = route(&idx, 2, 5, 3, 0, 1).unwrap_err();
        assert_eq!(e.0, "index 7 is out of bounds for axis 1 with size 5");
        let e = route(&idx, 1, 2, 3, 0, u32::MAX).unwrap_err();
        assert_eq!(e.0, "index -3 is out of bounds for size 2");
    }
}
