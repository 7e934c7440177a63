//! `GET …/result?format=json` streamed: the JSON text of a result written band by band, in
//! pieces of [`PIECE_ELEMENTS`] elements, as the client reads.
//!
//! The result used to be assembled whole, turned into a `serde_json::Value` tree and then
//! serialized: a 64 MB result took the supervisor 1.1 GB more (about 22 times the data).
//! Now the supervisor holds what the `.npy` download holds, one band of chunks (read from
//! the workers when the client is ready for it), plus one piece of text. Elements are
//! written as the assembled answer wrote them (`summary::json_result`): booleans, integers,
//! finite floats as numbers (a float32 as its shortest decimal), others as strings; a
//! complex element as the pair `[re, im]` of such floats.

use ares_core::array::ArrayData;
use std::ops::Range;

/// Elements per piece of text (about 1-2 MB of JSON).
pub const PIECE_ELEMENTS: usize = 1 << 16;

/// A band's elements in C order, typed.
enum Elems {
    Bool(Vec<bool>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    F32(Vec<f32>),
    C64(Vec<ares_core::array::Complex32>),
    C128(Vec<ares_core::array::Complex64>),
}

impl Elems {
    fn of(band: ArrayData) -> Elems {
        fn flat<T: Clone>(a: ndarray::ArrayD<T>) -> Vec<T> {
            if a.is_standard_layout() {
                a.into_raw_vec_and_offset().0
            } else {
                a.iter().cloned().collect()
            }
        }
        match band {
            ArrayData::Bool(a) => Elems::Bool(flat(a)),
            ArrayData::I64(a) => Elems::I64(flat(a)),
            ArrayData::I32(a) => Elems::I32(flat(a)),
            ArrayData::F64(a) => Elems::F64(flat(a)),
            ArrayData::F32(a) => Elems::F32(flat(a)),
            ArrayData::C64(a) => Elems::C64(flat(a)),
            ArrayData::C128(a) => Elems::C128(flat(a)),
            ArrayData::U64(a) => Elems::U64(flat(a)),
            // The narrower integers print as the int64 of their value.
            other @ (ArrayData::I8(_)
            | ArrayData::I16(_)
            | ArrayData::U8(_)
            | ArrayData::U16(_)
            | ArrayData::U32(_)) => match other.cast(ares_core::array::DType::I64) {
                ArrayData::I64(a) => Elems::I64(flat(a)),
                _ => unreachable!("cast to int64"),
            },
        }
    }

    fn len(&self) -> usize {
        match self {
            Elems::Bool(v) => v.len(),
            Elems::I64(v) => v.len(),
            Elems::I32(v) => v.len(),
            Elems::U64(v) => v.len(),
            Elems::F64(v) => v.len(),
            Elems::F32(v) => v.len(),
            Elems::C64(v) => v.len(),
            Elems::C128(v) => v.len(),
        }
    }

    fn write(&self, i: usize, out: &mut Vec<u8>) {
        fn float(x: f64, out: &mut Vec<u8>) {
            if x.is_finite() {
                let _ = serde_json::to_writer(&mut *out, &x);
            } else {
                let _ = serde_json::to_writer(&mut *out, &x.to_string());
            }
        }
        fn float32(x: f32, out: &mut Vec<u8>) {
            float(format!("{x:?}").parse::<f64>().unwrap_or(x as f64), out)
        }
        match self {
            Elems::Bool(v) => out.extend_from_slice(if v[i] { b"true" } else { b"false" }),
            Elems::I64(v) => out.extend_from_slice(v[i].to_string().as_bytes()),
            Elems::I32(v) => out.extend_from_slice(v[i].to_string().as_bytes()),
            Elems::U64(v) => out.extend_from_slice(v[i].to_string().as_bytes()),
            Elems::F64(v) => float(v[i], out),
            Elems::F32(v) => float32(v[i], out),
            Elems::C64(v) => {
                out.push(b'[');
                float32(v[i].re, out);
                out.push(b',');
                float32(v[i].im, out);
                out.push(b']');
            }
            Elems::C128(v) => {
                out.push(b'[');
                float(v[i].re, out);
                out.push(b',');
                float(v[i].im, out);
                out.push(b']');
            }
        }
    }
}

/// One band of a result of shape `shape` (at least one dimension, no zero length), whose
/// first element is element `offset` of the result.
pub struct Band {
    elems: Elems,
    offset: usize,
    /// `blocks[k]` = elements in one index of dimension `k` (k ≥ 1) and beyond.
    blocks: Vec<usize>,
    ndim: usize,
    total: usize,
}

impl Band {
    pub fn new(band: ArrayData, offset: usize, shape: &[usize]) -> Band {
        let blocks = (1..shape.len())
            .map(|k| shape[k..].iter().product())
            .collect();
        Band {
            elems: Elems::of(band),
            offset,
            blocks,
            ndim: shape.len(),
            total: shape.iter().product(),
        }
    }

    /// The ranges of the band's pieces.
    pub fn pieces(&self) -> Vec<Range<usize>> {
        let n = self.elems.len();
        (0..n.div_ceil(PIECE_ELEMENTS))
            .map(|p| p * PIECE_ELEMENTS..((p + 1) * PIECE_ELEMENTS).min(n))
            .collect()
    }

    /// The text of elements `range` of the band, with the brackets and commas before each
    /// and, after the result's last element, the closing brackets.
    pub fn text(&self, range: Range<usize>) -> Vec<u8> {
        let mut out = Vec::with_capacity(range.len() * 20);
        for i in range {
            let g = self.offset + i;
            if g == 0 {
                out.extend(std::iter::repeat_n(b'[', self.ndim));
            } else {
                let c = self.blocks.iter().filter(|b| g.is_multiple_of(**b)).count();
                out.extend(std::iter::repeat_n(b']', c));
                out.push(b',');
                out.extend(std::iter::repeat_n(b'[', c));
            }
            self.elems.write(i, &mut out);
            if g + 1 == self.total {
                out.extend(std::iter::repeat_n(b']', self.ndim));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    /// Split into bands along the first dimension and pieces of any size, the text is what
    /// `summary::json_nested` gives for the whole.
    #[test]
    fn bands_and_pieces_join_into_the_nested_json() {
        for shape in [
            vec![7usize],
            vec![3, 4],
            vec![2, 3, 2],
            vec![1, 1],
            vec![5, 1, 3],
        ] {
            let n: usize = shape.iter().product();
            let whole =
                ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|v| v as f64 * 0.5).collect())
                    .unwrap();
            let want = ares_core::summary::json_nested(&ArrayData::F64(whole.clone())).to_string();
            let inner: usize = shape[1..].iter().product();
            let mut text = Vec::new();
            // Bands of 1 and 2 rows.
            let mut row = 0;
            while row < shape[0] {
                let rows = (row % 2 + 1).min(shape[0] - row);
                let band = whole
                    .slice_axis(ndarray::Axis(0), (row..row + rows).into())
                    .to_owned();
                let b = Band::new(ArrayData::F64(band), row * inner, &shape);
                for r in b.pieces() {
                    // Pieces split further, as a small PIECE_ELEMENTS would.
                    for i in r {
                        text.extend(b.text(i..i + 1));
                    }
                }
                row += rows;
            }
            assert_eq!(String::from_utf8(text).unwrap(), want, "{shape:?}");
        }
        let b = ArrayD::from_shape_vec(IxDyn(&[2]), vec![f64::NAN, 1.0]).unwrap();
        let band = Band::new(ArrayData::F64(b.clone()), 0, &[2]);
        assert_eq!(
            String::from_utf8(band.text(0..2)).unwrap(),
            ares_core::summary::json_nested(&ArrayData::F64(b)).to_string()
        );
    }
}
