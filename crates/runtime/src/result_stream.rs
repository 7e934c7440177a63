//! Streaming a chunked result in C order without holding it whole: band by band, a band
//! being the chunks that share their first grid index (whole rows of chunks). A band is
//! fetched in parts of at most a budget of bytes, assembled, and written out; then the next.
//! Used by the native client's result fetch and by the web API's `.npy` download.

use crate::protocol::ResultPart;
use ares_core::array::{numel, ArrayData, DType, Shape};
pub use ares_core::io::npy::le_bytes;
use ndarray::{ArrayD, IxDyn, Slice};

/// One fetch of a streamed result: whole chunks, or rows `start..end` of one chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Chunks(Vec<u32>),
    Rows(u32, u64, u64),
}

/// Why streamed pieces of a result do not fit together (they came from a peer).
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("no rows")]
    NoRows,
    #[error("rows of a chunk of {0}")]
    MixedDtypes(DType),
    #[error("rows of a chunk: {0}")]
    Rows(#[from] ndarray::ShapeError),
    #[error("dimension {0} too large")]
    TooLarge(u64),
    #[error("result layout {splits:?} does not add up to {shape:?}")]
    Splits {
        splits: Vec<Vec<usize>>,
        shape: Shape,
    },
    #[error("band {band}: {chunks} chunks for a grid of {grid:?}")]
    ChunkCount {
        band: usize,
        chunks: usize,
        grid: Vec<usize>,
    },
    #[error("band {band}: a chunk of {dtype}")]
    ChunkDtype { band: usize, dtype: DType },
    #[error("band {band}: chunk {chunk} is {got:?}, its place {want:?}")]
    ChunkShape {
        band: usize,
        chunk: usize,
        got: Vec<usize>,
        want: Vec<usize>,
    },
}

/// Puts a chunk fetched in row ranges back together (the ranges in order).
pub fn join_rows(pieces: &[ArrayData]) -> Result<ArrayData, LayoutError> {
    macro_rules! join {
        ($variant:ident) => {{
            let views = pieces
                .iter()
                .map(|p| match p {
                    ArrayData::$variant(a) => Ok(a.view()),
                    other => Err(LayoutError::MixedDtypes(other.dtype())),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ndarray::concatenate(ndarray::Axis(0), &views).map(ArrayData::$variant)?)
        }};
    }
    match pieces.first() {
        None => Err(LayoutError::NoRows),
        Some(ArrayData::F64(_)) => join!(F64),
        Some(ArrayData::I64(_)) => join!(I64),
        Some(ArrayData::Bool(_)) => join!(Bool),
        Some(ArrayData::F32(_)) => join!(F32),
        Some(ArrayData::I32(_)) => join!(I32),
        Some(ArrayData::C64(_)) => join!(C64),
        Some(ArrayData::C128(_)) => join!(C128),
        Some(ArrayData::I8(_)) => join!(I8),
        Some(ArrayData::I16(_)) => join!(I16),
        Some(ArrayData::U8(_)) => join!(U8),
        Some(ArrayData::U16(_)) => join!(U16),
        Some(ArrayData::U32(_)) => join!(U32),
        Some(ArrayData::U64(_)) => join!(U64),
    }
}

/// The chunk layout of a result: shape, dtype and chunk lengths per dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub shape: Shape,
    pub dtype: DType,
    pub splits: Vec<Vec<usize>>,
}

impl Layout {
    /// From a part's header; checks the splits add up to the shape (it came from a peer).
    pub fn from_part(p: &ResultPart) -> Result<Layout, LayoutError> {
        let to = |v: u64| usize::try_from(v).map_err(|_| LayoutError::TooLarge(v));
        let shape: Shape = p.shape.iter().map(|d| to(*d)).collect::<Result<_, _>>()?;
        let splits: Vec<Vec<usize>> = p
            .splits
            .iter()
            .map(|s| s.iter().map(|d| to(*d)).collect::<Result<Vec<_>, _>>())
            .collect::<Result<_, _>>()?;
        let fits = splits.len() == shape.len()
            && splits
                .iter()
                .zip(&shape)
                .all(|(s, d)| !s.is_empty() && s.iter().sum::<usize>() == *d);
        if !fits {
            return Err(LayoutError::Splits { splits, shape });
        }
        Ok(Layout {
            shape,
            dtype: p.dtype,
            splits,
        })
    }

    fn grid(&self) -> Vec<usize> {
        self.splits.iter().map(|s| s.len()).collect()
    }

    /// Bands in C order (one for a 0-d result).
    pub fn bands(&self) -> usize {
        self.splits.first().map_or(1, |s| s.len())
    }

    /// Grid positions of band `b`'s chunks, in C order.
    pub fn band_positions(&self, b: usize) -> Vec<u32> {
        let per_band: usize = self.grid().iter().skip(1).product();
        (b * per_band..(b + 1) * per_band)
            .map(|p| p as u32)
            .collect()
    }

    /// Bytes of the chunk at grid position `pos`.
    pub fn chunk_bytes(&self, pos: u32) -> u64 {
        let grid = self.grid();
        let mut rest = pos as usize;
        let mut n = 1usize;
        for d in (0..grid.len()).rev() {
            n *= self.splits[d][rest % grid[d]];
            rest /= grid[d];
        }
        (n * self.dtype.itemsize()) as u64
    }

    /// Rows (first axis) of the chunk at grid position `pos` (1 for a 0-d result).
    fn chunk_rows(&self, pos: u32) -> u64 {
        let per_band: usize = self.grid().iter().skip(1).product();
        self.splits
            .first()
            .map_or(1, |s| s[pos as usize / per_band.max(1)] as u64)
    }

    /// `positions` cut into parts of at most `budget` bytes: runs of whole chunks, and a chunk
    /// larger than the budget in row ranges (a row larger than the budget alone, which the
    /// supervisor then refuses by name).
    pub fn parts(&self, positions: &[u32], budget: u64) -> Vec<Part> {
        let mut out: Vec<Part> = Vec::new();
        let mut bytes = 0u64;
        for &p in positions {
            let b = self.chunk_bytes(p);
            if b > budget {
                let n = self.chunk_rows(p).max(1);
                let step = (budget / (b / n).max(1)).max(1);
                out.extend(
                    (0..n)
                        .step_by(step as usize)
                        .map(|s| Part::Rows(p, s, (s + step).min(n))),
                );
                bytes = budget; // nothing joins a row range
                continue;
            }
            match out.last_mut() {
                Some(Part::Chunks(run)) if bytes + b <= budget => run.push(p),
                _ => {
                    out.push(Part::Chunks(vec![p]));
                    bytes = 0;
                }
            }
            bytes += b;
        }
        out
    }

    /// Shape of band `b`.
    pub fn band_shape(&self, b: usize) -> Shape {
        let mut s = self.shape.clone();
        if let Some(first) = s.first_mut() {
            *first = self.splits[0][b];
        }
        s
    }

    /// Places band `b`'s chunks (in [`Layout::band_positions`] order) into one array.
    pub fn assemble_band(&self, b: usize, chunks: &[ArrayData]) -> Result<ArrayData, LayoutError> {
        let shape = self.band_shape(b);
        let grid = self.grid();
        let inner: Vec<usize> = grid.iter().skip(1).copied().collect();
        let offsets: Vec<Vec<usize>> = self
            .splits
            .iter()
            .map(|s| ares_core::prepare::tile::offsets(s))
            .collect();
        if chunks.len() != inner.iter().product::<usize>() {
            return Err(LayoutError::ChunkCount {
                band: b,
                chunks: chunks.len(),
                grid: inner,
            });
        }
        macro_rules! fill {
            ($variant:ident, $zero:expr) => {{
                let mut out = ArrayD::from_elem(IxDyn(&shape), $zero);
                for (k, chunk) in chunks.iter().enumerate() {
                    let ArrayData::$variant(part) = chunk else {
                        return Err(LayoutError::ChunkDtype {
                            band: b,
                            dtype: chunk.dtype(),
                        });
                    };
                    // The chunk's index within the band (C order over dims 1..).
                    let mut idx = vec![0usize; inner.len()];
                    let mut rest = k;
                    for d in (0..inner.len()).rev() {
                        idx[d] = rest % inner[d];
                        rest /= inner[d];
                    }
                    let mut view = out.slice_each_axis_mut(|ax| {
                        let d = ax.axis.index();
                        if d == 0 {
                            Slice::from(..)
                        } else {
                            let i = idx[d - 1];
                            Slice::from(offsets[d][i]..offsets[d][i + 1])
                        }
                    });
                    if view.shape() != part.shape() {
                        return Err(LayoutError::ChunkShape {
                            band: b,
                            chunk: k,
                            got: part.shape().to_vec(),
                            want: view.shape().to_vec(),
                        });
                    }
                    view.assign(part);
                }
                ArrayData::$variant(out)
            }};
        }
        Ok(match self.dtype {
            DType::F64 => fill!(F64, 0.0),
            DType::I64 => fill!(I64, 0),
            DType::Bool => fill!(Bool, false),
            DType::F32 => fill!(F32, 0.0),
            DType::I32 => fill!(I32, 0),
            DType::C64 => fill!(C64, ares_core::array::Complex32::new(0.0, 0.0)),
            DType::C128 => fill!(C128, ares_core::array::Complex64::new(0.0, 0.0)),
            DType::I8 => fill!(I8, 0),
            DType::I16 => fill!(I16, 0),
            DType::U8 => fill!(U8, 0),
            DType::U16 => fill!(U16, 0),
            DType::U32 => fill!(U32, 0),
            DType::U64 => fill!(U64, 0),
        })
    }

    /// The `.npy` header of the whole result (C order, little-endian).
    pub fn npy_header(&self) -> Vec<u8> {
        let descr = ares_core::io::npy::descr(self.dtype);
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        let mut dict =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        // Version 1.0 pads magic + version + length + dict + newline to a multiple of 64.
        let used = 10 + dict.len() + 1;
        dict.push_str(&" ".repeat((64 - used % 64) % 64));
        dict.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out
    }

    pub fn nbytes(&self) -> u64 {
        (numel(&self.shape) * self.dtype.itemsize()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            shape: [5, 4].into_iter().collect(),
            dtype: DType::I64,
            splits: vec![vec![2, 3], vec![3, 1]],
        }
    }

    #[test]
    fn bands_parts_and_assembly_follow_c_order() {
        let l = layout();
        assert_eq!(l.bands(), 2);
        assert_eq!(l.band_positions(1), vec![2, 3]);
        assert_eq!(
            [0, 1, 2, 3].map(|p| l.chunk_bytes(p)),
            [6 * 8, 2 * 8, 9 * 8, 3 * 8]
        );
        assert_eq!(
            l.parts(&[0, 1, 2, 3], 64),
            vec![
                Part::Chunks(vec![0, 1]),
                Part::Rows(2, 0, 2),
                Part::Rows(2, 2, 3),
                Part::Chunks(vec![3])
            ]
        );
        let full = ArrayD::from_shape_fn(IxDyn(&[5, 4]), |i| (i[0] * 4 + i[1]) as i64);
        let block = |r: std::ops::Range<usize>, c: std::ops::Range<usize>| {
            ArrayData::I64(full.slice(ndarray::s![r, c]).into_dyn().to_owned())
        };
        let rows = join_rows(&[block(2..4, 0..3), block(4..5, 0..3)]).unwrap();
        assert_eq!(rows, block(2..5, 0..3));
        let band = l.assemble_band(1, &[rows, block(2..5, 3..4)]).unwrap();
        assert_eq!(
            band,
            ArrayData::I64(full.slice(ndarray::s![2..5, ..]).into_dyn().to_owned())
        );
    }

    #[test]
    fn npy_header_is_what_npyz_reads() {
        let h = layout().npy_header();
        assert_eq!(h.len() % 64, 0);
        let parsed = npyz::NpyHeader::from_reader(&h[..]).unwrap();
        assert_eq!(parsed.shape(), &[5, 4]);
        let one = Layout {
            shape: [7].into_iter().collect(),
            dtype: DType::Bool,
            splits: vec![vec![7]],
        };
        let parsed = npyz::NpyHeader::from_reader(&one.npy_header()[..]).unwrap();
        assert_eq!(parsed.shape(), &[7]);
    }
}
