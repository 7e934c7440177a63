//! The operation registry (MEP-0002).
//!
//! Every operation is a variant of [`Op`], a one-byte enum, and has a full name such as
//! `ares.tensor.arithmetic.add`. Its wire id is `OpId = murmur3_32(full name, seed 0)`, and
//! [`Op::from_id`] maps ids back to operations. Serialized graphs carry `(op_id, args)`, never
//! trait objects. The variants are declared by family: the elementwise ufuncs by their table
//! ([`family::elementwise`]), the rest below; [`registry::OP_REGISTRY`] lists the families
//! and the functions each one gives the expression language. The metadata here (kind,
//! fusability) is what the passes need to reason about ops generically.

pub mod args;
pub mod chunk_auto;
pub mod chunk_spec;
pub mod dtypes;
pub mod family;
pub mod infer;
pub mod registry;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::OnceLock;

pub use args::{
    chunk_seed, ChunkSpec, DimIndex, Fill, FuseStep, GeneratedOperand, MapKind, OpArgs, ReduceKind,
    UNPLACED,
};

/// Wire id of an operation: murmur3_32 of its full name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OpId(pub u32);

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

/// What kind of computation an op is; drives fusion and the fused kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Produces data from nothing (random, constants, ranges).
    Creation,
    /// One input, element by element.
    Unary,
    /// Two inputs (or one input and a scalar), element by element with broadcasting.
    Binary,
    /// Three inputs element by element with broadcasting (`where`).
    Ternary,
    /// Running totals along an axis (`cumsum`, `cumprod`).
    Scan,
    /// Reduces along axes.
    Reduction,
    /// Combines partial results of a reduction or a matmul (chunk level only).
    Combine,
    Linalg,
    /// Shape and indexing: slice, transpose, concatenate, rechunk, reshape, assemble.
    Indexing,
    /// A chain of ops fused into one chunk node.
    Fuse,
    /// Reads a result another task of the session left on the workers.
    Fetch,
    /// Reads or writes a file (`from_npy`, `to_zarr`...; see `crate::io`).
    Io,
    /// A user's function on blocks (`map_blocks`): run by a registered runner
    /// (`family::python_call`), never fused.
    UserCode,
    /// Fourier transforms along one axis (`crate::ops::family::fft`).
    Fft,
    /// Map-reduce shuffles (MEP-0002): tileable ops that tile into mappers, a proxy and
    /// reducers, and those chunk-level ops ([`crate::graph::shuffle`]).
    Shuffle,
}

/// Declares [`Op`] from the `rows` below (`Variant => Kind, "name", "full.name";`), the
/// reduction table's (`fold`, `scan`, `reduction_rows`, appended by
/// [`family::reduction::reduction_table!`]) and the ufunc table's (`unary`, `binary`,
/// appended by [`family::elementwise::ufunc_table!`]).
macro_rules! ops {
    (
        rows { $($variant:ident => $family:ident, $name:literal, $full:literal;)* }
        fold { $($f:ident: $fm:ident, $fr:ident, $fu:literal, $ff:literal, [$fn:literal $(, $fa:literal)*], $fd:literal;)* }
        scan { $($s:ident: $sm:ident, $sr:ident, $sf:literal, [$sn:literal $(, $sa:literal)*], $sd:literal;)* }
        reduction_rows { $($rv:ident => $rfam:ident, $rname:literal, $rfull:literal;)* }
        unary { $($u:ident: $ur:ident, $uf:literal, [$un:literal $(, $ua:literal)*], $ud:literal;)* }
        binary { $($b:ident: $br:ident, $bf:literal, [$bn:literal $(, $ba:literal)*], $bd:literal;)* }
    ) => {
        /// Every operation ares knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Op { $($variant,)* $($f,)* $($s,)* $($rv,)* $($u,)* $($b,)* }

        impl Op {
            /// All operations, in declaration order.
            pub const ALL: &'static [Op] = &[$(Op::$variant,)* $(Op::$f,)* $(Op::$s,)* $(Op::$rv,)* $(Op::$u,)* $(Op::$b,)*];

            /// Short, numpy-like name (`add`, `sum`, `rand`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Op::$variant => $name,)*
                    $(Op::$f => $fn,)*
                    $(Op::$s => $sn,)*
                    $(Op::$rv => $rname,)*
                    $(Op::$u => $un,)*
                    $(Op::$b => $bn,)*
                }
            }

            /// Full name hashed into the [`OpId`].
            pub fn full_name(self) -> &'static str {
                match self {
                    $(Op::$variant => $full,)*
                    $(Op::$f => $ff,)*
                    $(Op::$s => $sf,)*
                    $(Op::$rv => $rfull,)*
                    $(Op::$u => $uf,)*
                    $(Op::$b => $bf,)*
                }
            }

            pub fn family(self) -> Family {
                match self {
                    $(Op::$variant => Family::$family,)*
                    $(Op::$f => Family::Reduction,)*
                    $(Op::$s => Family::Scan,)*
                    $(Op::$rv => Family::$rfam,)*
                    $(Op::$u => Family::Unary,)*
                    $(Op::$b => Family::Binary,)*
                }
            }
        }
    };
}

/// Passes the rows gathered so far on to the ufunc table, then to [`ops!`].
macro_rules! with_ufuncs {
    ($($rows:tt)*) => {
        family::elementwise::ufunc_table! { ops! { $($rows)* } }
    };
}

family::reduction::reduction_table! { with_ufuncs! { rows {
    Rand => Creation, "rand", "ares.tensor.random.rand";
    Randn => Creation, "randn", "ares.tensor.random.randn";
    Full => Creation, "full", "ares.tensor.datasource.full";
    Arange => Creation, "arange", "ares.tensor.datasource.arange";
    Linspace => Creation, "linspace", "ares.tensor.datasource.linspace";
    AsType => Unary, "astype", "ares.tensor.base.astype";
    Where => Ternary, "where", "ares.tensor.base.where";
    TreeAdd => Combine, "tree_add", "ares.tensor.arithmetic.tree_add";
    Matmul => Linalg, "matmul", "ares.tensor.linalg.matmul";
    Slice => Indexing, "slice", "ares.tensor.indexing.slice";
    Transpose => Indexing, "transpose", "ares.tensor.base.transpose";
    Concatenate => Indexing, "concatenate", "ares.tensor.merge.concatenate";
    Rechunk => Indexing, "rechunk", "ares.tensor.rechunk.rechunk";
    Reshape => Indexing, "reshape", "ares.tensor.reshape.reshape";
    Assemble => Indexing, "assemble", "ares.tensor.merge.assemble";
    Fuse => Fuse, "fuse", "ares.tensor.fuse.fuse";
    Fetch => Fetch, "fetch", "ares.tensor.fetch.fetch";
    // A call that needs a data-dependent length, made once the stage before has run
    // (`tensor::wait`); never tiled.
    WaitForLength => Fetch, "wait_for_length", "ares.tensor.stage.wait_for_length";
    // io (branch io): sources and sinks
    FromNpy => Io, "from_npy", "ares.tensor.datasource.from_npy";
    FromZarr => Io, "from_zarr", "ares.tensor.datasource.from_zarr";
    ToNpy => Io, "to_npy", "ares.tensor.datastore.to_npy";
    ToZarr => Io, "to_zarr", "ares.tensor.datastore.to_zarr";
    // Shuffle (issue 11): tileable ops, then the chunk-level map / proxy / reduce ops.
    ShuffleBench => Shuffle, "shuffle_bench", "ares.tensor.shuffle.bench";
    Sort => Shuffle, "sort", "ares.tensor.base.sort";
    ShuffleMap => Shuffle, "shuffle_map", "ares.tensor.shuffle.map";
    ShuffleProxy => Shuffle, "shuffle_proxy", "ares.tensor.shuffle.proxy";
    ShuffleReduce => Shuffle, "shuffle_reduce", "ares.tensor.shuffle.reduce";
    SortSample => Shuffle, "sort_sample", "ares.tensor.base.sort_sample";
    SortSplitters => Shuffle, "sort_splitters", "ares.tensor.base.sort_splitters";
    // Data-dependent lengths and lookups (issue 11, `tensor::select`).
    Unique => Shuffle, "unique", "ares.tensor.base.unique";
    UniquePick => Shuffle, "unique_pick", "ares.tensor.base.unique_pick";
    MaskSelect => Shuffle, "mask_select", "ares.tensor.indexing.mask_select";
    SearchSorted => Shuffle, "searchsorted", "ares.tensor.base.searchsorted";
    TakeRows => Shuffle, "take", "ares.tensor.indexing.take";
    // linalg (issue 30): `qr` by TSQR, its chunk-level steps, and one-chunk factorizations.
    Qr => Linalg, "qr", "ares.tensor.linalg.qr";
    QrBlock => Linalg, "qr_block", "ares.tensor.linalg.qr_block";
    QrLeaf => Linalg, "qr_leaf", "ares.tensor.linalg.qr_leaf";
    QrStack => Linalg, "qr_stack", "ares.tensor.linalg.qr_stack";
    QrDown => Linalg, "qr_down", "ares.tensor.linalg.qr_down";
    QrApply => Linalg, "qr_apply", "ares.tensor.linalg.qr_apply";
    // The QR of `x·w` with `Qᵀ·x`, in one pass over x (`svd_compressed`), and its steps.
    QrProject => Linalg, "qr_project", "ares.tensor.linalg.qr_project";
    QrProjectLeaf => Linalg, "qr_project_leaf", "ares.tensor.linalg.qr_project_leaf";
    QrProjectApply => Linalg, "qr_project_apply", "ares.tensor.linalg.qr_project_apply";
    Dense => Linalg, "dense", "ares.tensor.linalg.dense";
    CholeskyBlock => Linalg, "cholesky_block", "ares.tensor.linalg.cholesky_block";
    LuBlock => Linalg, "lu_block", "ares.tensor.linalg.lu_block";
    // User functions (issue 31): a user's function on one block of each input.
    MapBlocks => UserCode, "map_blocks", "ares.tensor.python.map_blocks";
    // Complex dtypes (issue 29): the parts of a complex tensor (real tensors compose them).
    Conj => Unary, "conj", "ares.tensor.arithmetic.conj";
    RealPart => Unary, "real", "ares.tensor.arithmetic.real";
    ImagPart => Unary, "imag", "ares.tensor.arithmetic.imag";
    // fft (issue 30): one transform along one axis held in one chunk.
    Fft => Fft, "fft", "ares.tensor.fft.fft";
    // statistics (issue 29): exact ranks of a flattened tensor by selection, and its
    // chunk-level steps (`ops::family::statistics::select`).
    SelectRanks => Shuffle, "select_ranks", "ares.tensor.statistics.select_ranks";
} } }

/// murmur3_32 of a name with seed 0.
pub fn murmur3_id(name: &str) -> OpId {
    let hash = murmur3::murmur3_32(&mut std::io::Cursor::new(name.as_bytes()), 0)
        .expect("hashing an in-memory buffer cannot fail");
    OpId(hash)
}

fn id_table() -> &'static [(OpId, Op)] {
    static TABLE: OnceLock<Vec<(OpId, Op)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<(OpId, Op)> = Op::ALL
            .iter()
            .map(|op| (murmur3_id(op.full_name()), *op))
            .collect();
        table.sort_unstable();
        table
    })
}

impl Op {
    /// The wire id: murmur3_32 of [`Op::full_name`].
    pub fn id(self) -> OpId {
        static IDS: OnceLock<Vec<OpId>> = OnceLock::new();
        IDS.get_or_init(|| {
            Op::ALL
                .iter()
                .map(|op| murmur3_id(op.full_name()))
                .collect()
        })[self as usize]
    }

    /// Looks an operation up by wire id.
    pub fn from_id(id: OpId) -> Option<Op> {
        let table = id_table();
        table
            .binary_search_by_key(&id, |(id, _)| *id)
            .ok()
            .map(|i| table[i].1)
    }

    /// Looks an operation up by short name (used by the JSON graph format).
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// Ops that may join a FUSE chain: everything that computes a chunk from its inputs.
    /// FUSE itself and fetches (resolved by the worker, not computed) do not.
    pub fn is_fusable(self) -> bool {
        !matches!(
            self.family(),
            Family::Fuse | Family::Fetch | Family::Shuffle | Family::UserCode
        )
    }

    /// Elementwise ops: the fused kernel evaluates runs of these block by block.
    pub fn is_elementwise(self) -> bool {
        matches!(self.family(), Family::Unary | Family::Binary)
    }

    /// Comparisons produce bool.
    pub fn is_comparison(self) -> bool {
        family::elementwise::binary_rule(self) == Some(family::elementwise::BinaryRule::Compare)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Op {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(self.name())
        } else {
            s.serialize_u32(self.id().0)
        }
    }
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
        use serde::de::Error;
        if d.is_human_readable() {
            let name = String::deserialize(d)?;
            Op::from_name(&name).ok_or_else(|| D::Error::custom(format!("unknown op {name:?}")))
        } else {
            let id = OpId(u32::deserialize(d)?);
            Op::from_id(id).ok_or_else(|| D::Error::custom(format!("unknown op id {id}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const PINNED_ID_SUM: u64 = 265_137_920_849;

    #[test]
    fn no_two_op_names_collide() {
        let ids: HashSet<OpId> = Op::ALL.iter().map(|op| op.id()).collect();
        assert_eq!(
            ids.len(),
            Op::ALL.len(),
            "murmur3 collision in the op registry"
        );
        let names: HashSet<&str> = Op::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(names.len(), Op::ALL.len(), "duplicate short name");
    }

    #[test]
    fn registry_round_trips_every_op() {
        for op in Op::ALL {
            assert_eq!(Op::from_id(op.id()), Some(*op));
            assert_eq!(Op::from_name(op.name()), Some(*op));
        }
        assert_eq!(Op::from_id(OpId(0)), None);
    }

    /// The wire ids of every op, pinned: moving an op's row between families or tables must
    /// not change one (a renamed full name would break every stored or in-flight graph).
    #[test]
    fn wire_ids_are_pinned() {
        let sum: u64 = Op::ALL.iter().map(|op| u64::from(op.id().0)).sum();
        assert_eq!((Op::ALL.len(), sum), (125, PINNED_ID_SUM));
    }

    #[test]
    fn op_id_is_murmur3_of_full_name() {
        // Reference value of murmur3_32("ares.tensor.arithmetic.add", 0), computed independently.
        assert_eq!(Op::Add.id(), murmur3_id("ares.tensor.arithmetic.add"));
        assert_eq!(murmur3_id(""), OpId(0));
        assert_eq!(murmur3_id("hello"), OpId(0x248b_fa47));
    }
}
