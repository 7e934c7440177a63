//! Rechunking through the shuffle: each source chunk (a mapper) cuts itself into the parts
//! that fall in each target chunk, and each target chunk (a reducer) places the parts it
//! receives, one per source chunk in C order, where they belong.
//!
//! The grid method of `prepare::tile::grid` makes one slice node per (source, target) pair
//! that overlap: rechunking 4000 row bands into 4000 column bands would be 16 million graph
//! nodes. Here the graph holds N mappers and M reducers; the pairs exist only as pieces at
//! run time, and both grids are shared entries of the argument table. The kernels are pure
//! data movement, so every dtype keeps its own loops (no widening).

use crate::array::ArrayData;
use crate::ids::ArgsIdx;
use crate::kernels::{kerr, KResult};
use crate::ops::{ChunkSpec, OpArgs};
use ndarray::{ArrayD, IxDyn, Slice};
use smallvec::SmallVec;

type Bounds = SmallVec<[(usize, usize); 4]>;

/// A chunk grid as the starts of its chunks per dimension (and each dimension's end), so a
/// chunk's region costs one lookup per dimension, not a sum over the chunks before it (a
/// mapper asks for every target chunk's region).
struct Grid {
    offsets: Vec<Vec<usize>>,
}

impl Grid {
    fn new(splits: &[Vec<usize>]) -> Grid {
        let offsets = splits
            .iter()
            .map(|s| {
                std::iter::once(0)
                    .chain(s.iter().scan(0, |at, len| {
                        *at += len;
                        Some(*at)
                    }))
                    .collect()
            })
            .collect();
        Grid { offsets }
    }

    /// The grid stored at `at` in the argument table.
    fn of(table: &[OpArgs], at: ArgsIdx) -> KResult<Grid> {
        match table.get(at.index()) {
            Some(OpArgs::Rechunk(ChunkSpec::Explicit(splits))) => Ok(Grid::new(splits)),
            other => kerr(format!(
                "rechunk: argument {} is not a grid: {other:?}",
                at.0
            )),
        }
    }

    /// Start and end, per dimension, of chunk `linear` (C order).
    fn bounds(&self, mut linear: usize) -> KResult<Bounds> {
        let mut out: Bounds = SmallVec::from_elem((0, 0), self.offsets.len());
        for (d, offs) in self.offsets.iter().enumerate().rev() {
            let n = (offs.len() - 1).max(1);
            let k = linear % n;
            linear /= n;
            out[d] = (offs[k], offs.get(k + 1).copied().unwrap_or(offs[k]));
        }
        if linear != 0 {
            return kerr("rechunk: a chunk index past the grid");
        }
        Ok(out)
    }
}

/// The overlap of two regions, if it holds any element.
fn overlap(a: &Bounds, b: &Bounds) -> Option<Bounds> {
    let both: Bounds = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.0.max(y.0), x.1.min(y.1)))
        .collect();
    both.iter().all(|(lo, hi)| hi > lo).then_some(both)
}

/// `region` (global) as slices relative to `origin`.
fn local(region: &Bounds, origin: &Bounds) -> Vec<Slice> {
    region
        .iter()
        .zip(origin)
        .map(|((lo, hi), (o, _))| Slice::from(lo - o..hi - o))
        .collect()
}

/// Mapper `ordinal`: its chunk cut into `reducers` pieces, one per target chunk.
pub fn split(
    table: &[OpArgs],
    source: ArgsIdx,
    target: ArgsIdx,
    ordinal: u32,
    reducers: u32,
    x: &ArrayData,
) -> KResult<Vec<ArrayData>> {
    let (src, dst) = (Grid::of(table, source)?, Grid::of(table, target)?);
    let mine = src.bounds(ordinal as usize)?;
    let extent: Vec<usize> = mine.iter().map(|(lo, hi)| hi - lo).collect();
    if x.shape() != extent.as_slice() {
        return kerr(format!(
            "rechunk: source chunk {ordinal} is {:?}, its place in the grid {extent:?}",
            x.shape()
        ));
    }
    let empty =
        ArrayData::Bool(ArrayD::from_elem(IxDyn(&vec![0; extent.len()]), false)).cast(x.dtype());
    (0..reducers as usize)
        .map(|r| {
            let Some(part) = overlap(&mine, &dst.bounds(r)?) else {
                return Ok(empty.clone());
            };
            let cuts = local(&part, &mine);
            Ok(crate::map_array!(x, |a| a
                .slice_each_axis(|ax| cuts[ax.axis.index()])
                .to_owned()))
        })
        .collect()
}

/// Reducer `index`: target chunk `index`, from one piece per source chunk in C order.
pub fn place(
    table: &[OpArgs],
    source: ArgsIdx,
    target: ArgsIdx,
    index: u32,
    pieces: &[&ArrayData],
) -> KResult<ArrayData> {
    let (src, dst) = (Grid::of(table, source)?, Grid::of(table, target)?);
    let mine = dst.bounds(index as usize)?;
    let shape: Vec<usize> = mine.iter().map(|(lo, hi)| hi - lo).collect();
    let Some(first) = pieces.first() else {
        return kerr("rechunk: a target chunk without pieces");
    };
    let mut out = ArrayData::Bool(ArrayD::from_elem(IxDyn(&shape), false)).cast(first.dtype());
    let mut placed = 0usize;
    for (j, piece) in pieces.iter().enumerate() {
        if piece.is_empty() {
            continue;
        }
        let Some(part) = overlap(&src.bounds(j)?, &mine) else {
            return kerr(format!(
                "rechunk: source chunk {j} sent a piece it does not hold"
            ));
        };
        let cuts = local(&part, &mine);
        let size: Vec<usize> = part.iter().map(|(lo, hi)| hi - lo).collect();
        if piece.shape() != size.as_slice() {
            return kerr(format!(
                "rechunk: the piece of source chunk {j} is {:?}, expected {size:?}",
                piece.shape()
            ));
        }
        macro_rules! put {
            ($($v:ident),*) => {
                match (&mut out, piece) {
                    $((ArrayData::$v(o), ArrayData::$v(p)) => o
                        .slice_each_axis_mut(|ax| cuts[ax.axis.index()])
                        .assign(p),)*
                    _ => return kerr("rechunk: pieces of different dtypes"),
                }
            };
        }
        put!(Bool, I32, I64, F32, F64, C64, C128, I8, I16, U8, U16, U32, U64);
        placed += piece.len();
    }
    if placed != out.len() {
        return kerr(format!(
            "rechunk: {placed} of the {} elements of target chunk {index} arrived",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5×7 array in a 2×3 grid, moved to a 3×2 grid through split and place, equals
    /// the original; every target chunk gets each element exactly once.
    #[test]
    fn split_then_place_moves_every_element_once() {
        let src = vec![vec![2, 3], vec![3, 3, 1]];
        let dst = vec![vec![1, 1, 3], vec![4, 3]];
        let table = vec![
            OpArgs::Rechunk(ChunkSpec::Explicit(src.clone())),
            OpArgs::Rechunk(ChunkSpec::Explicit(dst.clone())),
        ];
        let (s, t) = (ArgsIdx(0), ArgsIdx(1));
        let whole = ArrayD::from_shape_fn(IxDyn(&[5, 7]), |i| (i[0] * 10 + i[1]) as i32);
        let mut pieces: Vec<Vec<ArrayData>> = Vec::new();
        for j in 0..6u32 {
            let b = Grid::new(&src).bounds(j as usize).unwrap();
            let chunk = whole
                .slice_each_axis(|ax| Slice::from(b[ax.axis.index()].0..b[ax.axis.index()].1))
                .to_owned();
            pieces.push(split(&table, s, t, j, 6, &ArrayData::I32(chunk)).unwrap());
        }
        for r in 0..6u32 {
            let mine: Vec<&ArrayData> = pieces.iter().map(|p| &p[r as usize]).collect();
            let got = place(&table, s, t, r, &mine).unwrap();
            let b = Grid::new(&dst).bounds(r as usize).unwrap();
            let want = whole
                .slice_each_axis(|ax| Slice::from(b[ax.axis.index()].0..b[ax.axis.index()].1))
                .to_owned();
            assert_eq!(got, ArrayData::I32(want), "target chunk {r}");
        }
        // A missing piece is an error that names the chunk, not a hole of zeros.
        let mut short: Vec<&ArrayData> = pieces.iter().map(|p| &p[0]).collect();
        let empty = ArrayData::I32(ArrayD::from_elem(IxDyn(&[0, 0]), 0));
        short[0] = &empty;
        let e = place(&table, s, t, 0, &short).unwrap_err().0;
        assert!(e.contains("target chunk 0"), "{e}");
    }
}
