//! Operation arguments: plain data, shared by tileable and chunk graphs.
//!
//! A tileable node carries its op's user-level arguments (a creation op's chunk size and seed,
//! a reduction's axes). A chunk node refers to an entry of its graph's argument table, which is
//! interned: the thousands of `add` chunks of one tiled operation share one `OpArgs::None`
//! entry, and only ops that need per-chunk data (a rand chunk's seed, a slice's local bounds)
//! get their own.

use crate::array::{Scalar, Shape};
use crate::ids::ArgsIdx;
use crate::ops::Op;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The worker of a `FetchResult` chunk whose place is not known yet (see `OpArgs::FetchResult`).
pub const UNPLACED: u32 = u32::MAX;

/// How a dimension is split into chunks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkSpec {
    /// The same chunk length on every dimension.
    Uniform(usize),
    /// One chunk length per dimension.
    PerDim(SmallVec<[usize; 4]>),
    /// Every chunk length of every dimension (dask's explicit `chunks=`): each list sums to
    /// its dimension's length.
    Explicit(Vec<Vec<usize>>),
}

impl std::fmt::Display for ChunkSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkSpec::Uniform(c) => write!(f, "{c}"),
            ChunkSpec::PerDim(v) => f.write_str(&crate::array::fmt_shape(v)),
            ChunkSpec::Explicit(dims) => {
                let dims: Vec<String> = dims.iter().map(|d| crate::array::fmt_shape(d)).collect();
                let comma = if dims.len() == 1 { "," } else { "" };
                write!(f, "({}{comma})", dims.join(", "))
            }
        }
    }
}

/// What a creation op fills its chunks with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// Uniform [0, 1). The user's seed, in the graph at both levels: one record serves every
    /// chunk of the op, and a chunk's own seed is derived from it and the chunk's position
    /// when it is computed ([`OpArgs::at`]).
    Uniform { seed: u64 },
    /// Standard normal, seeded as `Uniform`.
    Normal { seed: u64 },
    /// A constant.
    Const { value: Scalar },
    /// Element `i` is `start + step * (offset + i)` (arange and linspace), computed that way
    /// in every chunk so chunked values are NumPy's bit for bit; `offset` is 0 at tileable
    /// level and a chunk's first position at chunk level. `end` pins one element to a value:
    /// `linspace` ends exactly at `stop`, as NumPy's does.
    Range {
        start: Scalar,
        step: Scalar,
        #[serde(default)]
        offset: u64,
        #[serde(default)]
        end: Option<(u64, Scalar)>,
    },
}

/// One index of a basic slice, normalized against the dimension length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimIndex {
    /// Elements `start, start + step, ...`, `len` of them (step may be negative).
    Range {
        start: usize,
        step: isize,
        len: usize,
    },
    /// A single position; the dimension disappears.
    Index(usize),
}

/// One op inside a FUSE node: the op and its arguments (an index into the same table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FuseStep {
    pub op: Op,
    pub args: ArgsIdx,
    /// For arguments that depend on it ([`OpArgs::positional`]), the position of the step's
    /// chunk among its op's chunks; 0 otherwise, so equal step lists stay equal.
    #[serde(default)]
    pub position: u32,
}

/// SplitMix64: the seed of a random op's chunk at `position`, from the op's seed. Whatever
/// the execution order or placement, a chunk gets the same values.
pub fn chunk_seed(user_seed: u64, position: u64) -> u64 {
    let mut z = user_seed ^ position.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl OpArgs {
    /// Whether a chunk's values depend on its position as well as on these arguments: random
    /// fills, whose one record serves all of an op's chunks.
    pub fn positional(&self) -> bool {
        matches!(
            self,
            OpArgs::Fill {
                fill: Fill::Uniform { .. } | Fill::Normal { .. },
                ..
            }
        )
    }

    /// The arguments a kernel sees for the chunk at `position` among its op's chunks: a random
    /// fill with that chunk's own seed; anything else as it is.
    pub fn at(&self, position: u32) -> std::borrow::Cow<'_, OpArgs> {
        use std::borrow::Cow;
        let derive = |seed: u64| chunk_seed(seed, position as u64);
        match self {
            OpArgs::Fill { fill, shape } => {
                let fill = match *fill {
                    Fill::Uniform { seed } => Fill::Uniform { seed: derive(seed) },
                    Fill::Normal { seed } => Fill::Normal { seed: derive(seed) },
                    _ => return Cow::Borrowed(self),
                };
                Cow::Owned(OpArgs::Fill {
                    fill,
                    shape: shape.clone(),
                })
            }
            _ => Cow::Borrowed(self),
        }
    }
}

/// The operand a [`OpArgs::Generated`] product makes: `fill` as the creation chunk's
/// kernel saw it (its own seed), `shape` that chunk's shape, `left` whether it is the left
/// operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GeneratedOperand {
    pub fill: Fill,
    pub shape: Shape,
    pub left: bool,
}

/// Arguments of an operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpArgs {
    None,
    /// Tileable-level creation: how to fill, the shape, and how to chunk.
    Create {
        fill: Fill,
        shape: Shape,
        chunk: Box<ChunkSpec>,
    },
    /// Chunk-level creation: fill and the chunk's shape.
    Fill {
        fill: Fill,
        shape: Shape,
    },
    /// A chunk-level `matmul` or `qr_project_leaf` that makes one operand itself, a
    /// creation chunk taken in by fusion ([`crate::prepare::generated_products`]). The
    /// node's one input is the other operand. Boxed: one per product, and the per-chunk
    /// records stay small.
    Generated(Box<GeneratedOperand>),
    /// A binary op with one scalar operand; `scalar_left` for `2 - x`.
    Scalar {
        value: Scalar,
        scalar_left: bool,
    },
    /// Target dtype of `astype`.
    Cast {
        dtype: crate::array::DType,
    },
    /// Reduction axes (sorted, unique) and whether reduced axes are kept as length 1.
    Reduce {
        axes: SmallVec<[usize; 4]>,
        keepdims: bool,
    },
    /// `argmin`/`argmax` (`op`) along `axis`. At chunk level, `offset` is the position of the
    /// chunk's first element along the axis.
    Arg {
        op: Op,
        axis: usize,
        offset: u64,
        keepdims: bool,
    },
    /// The axis of a running total (`cumsum`, `cumprod`).
    Scan {
        axis: usize,
    },
    /// Variance over `axes` with `ddof` (tileable `var`, and its chunk-level moments ops).
    Moments {
        axes: SmallVec<[usize; 4]>,
        keepdims: bool,
        ddof: u32,
    },
    /// Combine partials of `op` (sum/prod/min/max), then drop `axes` unless `keepdims`.
    Combine {
        op: Op,
        axes: SmallVec<[usize; 4]>,
        keepdims: bool,
    },
    Slice(Box<SmallVec<[DimIndex; 4]>>),
    Transpose(SmallVec<[usize; 4]>),
    Concat {
        axis: usize,
    },
    Rechunk(ChunkSpec),
    Reshape(Shape),
    /// Concatenate a C-order grid of input blocks into one chunk.
    Assemble {
        grid: Shape,
    },
    /// The ops of a FUSE node, head first.
    Fuse(SmallVec<[FuseStep; 4]>),
    /// Tileable level: a call waiting for a data-dependent length (`tensor::wait`).
    Deferred(Box<crate::tensor::wait::Deferred>),
    /// Tileable level: output `output` of `task`, with its chunk layout and where each chunk is
    /// (source chunk index, worker id), resolved when the task is submitted. A read made
    /// before its chunks' places were known (`persist`) lists them on [`UNPLACED`]: the
    /// supervisor takes the layout and places from the source task then.
    FetchResult {
        task: crate::ids::TaskId,
        output: u32,
        shape: Shape,
        dtype: crate::array::DType,
        splits: Vec<Vec<usize>>,
        chunks: Vec<(u32, u32)>,
    },
    /// Chunk level: one chunk of another task's result and the worker holding it.
    FetchChunk {
        task: crate::ids::TaskId,
        chunk: u32,
        worker: u32,
    },
    /// Tileable `from_npy`/`from_zarr`: the file and how to chunk it.
    Source {
        data: Box<crate::io::DataRef>,
        chunk: ChunkSpec,
    },
    /// Chunk level: region `offset..offset+shape` of the file.
    Read {
        data: Box<crate::io::DataRef>,
        offset: Shape,
        shape: Shape,
    },
    /// Tileable `to_npy`/`to_zarr`: the file written (shape and dtype of the input). For Zarr,
    /// `chunk` is the store's chunk shape (empty: the input's own chunks).
    Sink {
        data: Box<crate::io::DataRef>,
        chunk: Shape,
    },
    /// Chunk level: write the input chunk at `offset`; `index` is its position in the chunk
    /// grid (the store chunk, for Zarr).
    Write {
        data: Box<crate::io::DataRef>,
        offset: Shape,
        index: Shape,
    },
    /// Chunk level, after every `Write` of a sink: moves the file written under `partial`
    /// to `data.path` (see [`crate::io::commit_sink`]); passes its input (the byte count)
    /// through.
    Commit {
        data: Box<crate::io::DataRef>,
        partial: String,
    },
    /// Tileable `shuffle_bench` (dask#3872's graph): `in_parts` mappers draw `rows` int64
    /// each and split them by `value % out_parts`; each of the `out_parts` reducers returns
    /// one row `(count, sum, Σ i·sorted[i] mod 2^61)`.
    ShuffleBench {
        in_parts: u32,
        out_parts: u32,
        rows: u64,
    },
    /// `sort` / `argsort` along `axis` (`arg`: positions instead of values), ascending or
    /// `descending` (stable either way). A 1-D tensor in several chunks sorts through PSRS,
    /// ascending only; otherwise the axis is made one chunk and each chunk sorts its lanes.
    Sort {
        arg: bool,
        axis: u32,
        descending: bool,
    },
    /// A mapper: how it splits its input into one piece per reducer, its position among the
    /// proxy's mappers and the first piece key of its shuffle (see [`crate::graph::shuffle`]).
    ShuffleMap {
        kind: MapKind,
        ordinal: u32,
        base: u32,
        reducers: u32,
    },
    /// The proxy between `mappers` and `reducers`: a virtual chunk, never computed.
    ShuffleProxy {
        base: u32,
        reducers: u32,
    },
    /// A reducer: what it makes of its pieces, and which reducer it is.
    ShuffleReduce {
        kind: ReduceKind,
        index: u32,
    },
    /// Sort sampling: `count` regularly spaced values of the sorted chunk; splitters:
    /// `parts - 1` values cutting the merged samples evenly.
    SortSample {
        count: u32,
    },
    SortSplitters {
        parts: u32,
    },
    /// `count` values cutting a strided subsample of the chunk evenly (its sorted sample for
    /// `unique`'s splitters, without sorting the chunk).
    StridedSample {
        count: u32,
    },
    /// Tileable `unique` of the flattened input; with `counts`, (key, count) int64 pairs
    /// that [`OpArgs::UniquePick`] splits (see `crate::ops::family::shuffle::select`).
    Unique {
        counts: bool,
    },
    /// Values (decoded to `dtype`) or counts of a `unique` with counts.
    UniquePick {
        counts: bool,
        dtype: crate::array::DType,
    },
    /// `x[mask]` (inputs x and a bool mask of its shape): the selected elements in C order.
    MaskSelect,
    /// `searchsorted(a, v, side)`: inputs (sorted 1-D `a`, `v`); at chunk level the count of
    /// one chunk of `a` below each `v` (summed over `a`'s chunks).
    SearchSorted {
        right: bool,
    },
    /// Tileable `take` of rows: inputs (x of shape (n, R), int64 positions of shape (L,)), the
    /// (L, R) rows at those positions; `axis` names the user's axis in errors (`u32::MAX`:
    /// the flattened tensor).
    TakeRows {
        axis: u32,
    },
    /// linalg (issue 30): a TSQR tree node's slot among its parent's children
    /// (`qr_down`, `qr_apply`; see `ops::family::linalg::tsqr`).
    Tsqr {
        slot: u32,
    },
    /// linalg: a projected-QR leaf's rows `start..start + len` times its factor from the
    /// tree, the leaf being child `slot` of its parent (`qr_project_apply`; see
    /// `ops::family::linalg::projected_qr`).
    TsqrRows {
        slot: u32,
        start: u64,
        len: u64,
    },
    /// linalg: the factorization of one whole matrix in one chunk (`ops::family::linalg::dense`).
    Dense(crate::ops::family::linalg::dense::DenseFn),
    /// linalg: one block step of the tile Cholesky
    /// (`ops::family::linalg::blocked_cholesky`).
    CholeskyStep(crate::ops::family::linalg::blocked_cholesky::CholeskyStep),
    /// linalg: one block step of the blocked LU solve (`ops::family::linalg::blocked_lu`).
    LuStep(crate::ops::family::linalg::blocked_lu::LuStep),
    /// A user's function on blocks, at both levels (every chunk of the node shares the one
    /// entry; see `ops::family::python_call`).
    MapBlocks(Box<crate::ops::family::python_call::BlockCall>),
    /// fft: one transform along one axis (`ops::family::fft::spec`).
    Fft(crate::ops::family::fft::spec::FftSpec),
    /// Tileable `select_ranks`: the values at `ranks` of a 1-D tensor sorted, NaN last
    /// (`ops::family::statistics::select`).
    SelectRanks {
        ranks: Vec<u64>,
    },
    /// One chunk-level step of `select_ranks`.
    SelectStep(crate::ops::family::statistics::select::SelectStep),
}

/// How a mapper splits its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapKind {
    /// No input: draws `rows` int64 in [0, 2^31) from `seed`, piece `r` holds `v % reducers == r`.
    BenchGen { rows: u64, seed: u64 },
    /// Inputs (chunk, splitters): piece `r` holds the values between splitters `r - 1` and `r`
    /// (NaN last), with their global positions when `arg` (argsort), `offset` being the
    /// chunk's first position.
    SortPartition { arg: bool, offset: u64 },
    /// Inputs (sorted bucket `ordinal`, every bucket's length): the bucket starts after the
    /// buckets before it; piece `r` holds what falls in output chunk `r` (chunks of `chunk`
    /// elements). Buckets of argsort hold (key, position) pairs.
    Rebalance { chunk: u64, arg: bool },
    /// Inputs (chunk[, splitters]): the chunk's distinct values, sorted, split by value range
    /// as `SortPartition`; with `counts`, (key, count) int64 pairs.
    UniquePartition { counts: bool },
    /// Input (positions `offset..` of the take): each position, checked against `len` and
    /// wrapped when negative, goes to the row chunk holding it (chunks of `chunk` rows) as
    /// an int64 pair (output position, row within the chunk). `axis` is for the error.
    TakeRoute {
        len: u64,
        chunk: u64,
        offset: u64,
        axis: u32,
    },
    /// Inputs (a chunk of rows, its requests): each requested row goes to the output chunk
    /// holding its position (chunks of `out_chunk` rows) as int64s (position, the row's
    /// values as bits).
    TakeServe { out_chunk: u64 },
    /// Inputs (values chunk `ordinal`, the sorted chunks' boundaries): each value goes to
    /// the sorted chunk it falls into as int64 triples (ordinal, position, key); see
    /// `select::search`.
    SearchRoute { right: bool },
    /// Inputs (a sorted chunk starting at `offset`, its requests): each answer goes to the
    /// values chunk that asked as int64 pairs (position, insertion point).
    SearchServe { right: bool, offset: u64 },
    /// Input (source chunk `ordinal` in C order): piece `r` is the part of it inside chunk
    /// `r` of the target grid (empty where they do not overlap). Both grids are
    /// `OpArgs::Rechunk(ChunkSpec::Explicit(..))` entries of the graph's argument table, so
    /// each mapper's arguments stay a few bytes however large the grids.
    RechunkSplit {
        source: crate::ids::ArgsIdx,
        target: crate::ids::ArgsIdx,
    },
}

/// What a reducer makes of its pieces (in mapper order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceKind {
    /// `[[count, sum, Σ i·sorted[i] mod 2^61]]` (int64, wrapping sum).
    BenchStats,
    /// The pieces concatenated and sorted (value/position pairs by value when `arg`).
    SortMerge { arg: bool },
    /// The pieces concatenated; positions only when `arg`.
    Concat { arg: bool },
    /// The distinct values of the pieces, sorted (with `counts`, (key, count) pairs whose
    /// counts are summed).
    UniqueMerge { counts: bool },
    /// The rows `start..start + rows` of a take's output (each `width` values of `dtype`),
    /// placed from (position, bits...) records.
    TakePlace {
        dtype: crate::array::DType,
        start: u64,
        rows: u64,
        width: u64,
    },
    /// The `len` insertion points of a values chunk of `searchsorted`, placed from
    /// (position, insertion point) pairs.
    SearchPlace { len: u64 },
    /// Chunk `index` of the target grid, each piece (source chunk `j`'s part of it, in
    /// source order) placed where it belongs; grids as in `MapKind::RechunkSplit`.
    RechunkPlace {
        source: crate::ids::ArgsIdx,
        target: crate::ids::ArgsIdx,
    },
}
