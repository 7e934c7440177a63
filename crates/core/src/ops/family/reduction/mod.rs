//! The reduction family: reductions, arg-reductions, statistics and scans, and the
//! chunk-level ops that combine their partial results.
//!
//! **Adding a reduction that folds (`sum`-like) is one row of [`reduction_table!`]**: the
//! row declares the [`Op`] variant (the enum is generated from this table, the ufunc table
//! and the rows in `ops/mod.rs`), its full name (hashed into the wire id: never rename one),
//! its names in the expression language, its [`Monoid`] (identity and combining step, in
//! `monoid`), its dtype rule, whether the fused kernel may end a chain with it, and NumPy's
//! summary. Everything else reads the table: result dtypes ([`reduction_dtype`]), the
//! expression language and the Python package (`fold_op`, [`Reduction`]'s functions), the
//! tensor method (`Tensor::reduce`), the kernels (`kernels`, generic over the monoid), the
//! fused kernel's trailing step and the tiling (`tile`: a map per chunk, a tree of combines).
//! A reduction that folds in a new way adds a [`Monoid`] variant and its `impl Fold`.
//!
//! The other reductions have kernels of their own: `argreduce` (argmin/argmax as (value,
//! index) records), `moments` (one-pass variance by Chan's merge); `records` tiles both.

pub mod argreduce;
pub mod kernels;
pub mod moments;
pub mod monoid;
pub(crate) mod records;
pub(crate) mod tile;

use crate::array::DType;
use crate::ops::registry::{Form, Function, OpFamily};
use crate::ops::{Family, Op};
pub use monoid::Monoid;

/// The reduction table, passed to `$then!` after the tokens given (the callback pattern of
/// the ufunc table: the same rows declare the [`Op`] variants in `ops/mod.rs` and build
/// [`FOLDS`] and [`SCANS`] here).
///
/// `fold` rows: `Variant: Monoid, Rule, fuses, "full.name", ["name", "alias"...], "summary";`
/// (`fuses`: the fused kernel may end a chain with it). `scan` rows: running folds along an
/// axis, `Variant: Monoid, Rule, "full.name", ["name"], "summary";`. `rows`: the family's
/// other ops, as in `ops/mod.rs` (`Variant => Kind, "name", "full.name";`).
macro_rules! reduction_table {
    ($then:ident! { $($pass:tt)* }) => {
        $then! {
            $($pass)*
            fold {
                Sum: Add, Widen, true, "ares.tensor.reduction.sum", ["sum"],
                    "Sum of array elements over given axes.";
                Prod: Mul, Widen, true, "ares.tensor.reduction.prod", ["prod"],
                    "Product of array elements over given axes.";
                Min: Min, Same, true, "ares.tensor.reduction.min", ["min", "amin"],
                    "Minimum of an array or minimum along an axis.";
                Max: Max, Same, true, "ares.tensor.reduction.max", ["max", "amax"],
                    "Maximum of an array or maximum along an axis.";
            }
            scan {
                CumSum: Add, Widen, "ares.tensor.reduction.cumsum", ["cumsum"],
                    "Cumulative sum of the elements along a given axis.";
                CumProd: Mul, Widen, "ares.tensor.reduction.cumprod", ["cumprod"],
                    "Cumulative product of elements along a given axis.";
            }
            reduction_rows {
                Var => Reduction, "var", "ares.tensor.reduction.var";
                ArgMin => Reduction, "argmin", "ares.tensor.reduction.argmin";
                ArgMax => Reduction, "argmax", "ares.tensor.reduction.argmax";
                ArgCombine => Combine, "arg_combine", "ares.tensor.reduction.arg_combine";
                ArgIndex => Combine, "arg_index", "ares.tensor.reduction.arg_index";
                Moments => Reduction, "moments", "ares.tensor.reduction.moments";
                MomentsCombine => Combine, "moments_combine",
                    "ares.tensor.reduction.moments_combine";
                MomentsVar => Combine, "moments_var", "ares.tensor.reduction.moments_var";
                Combine => Combine, "combine", "ares.tensor.reduction.combine";
            }
        }
    };
}
pub(crate) use reduction_table;

/// A fold's result dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Bools and int32 give int64, as NumPy's `sum`/`prod` on 64-bit Linux; the rest stay.
    Widen,
    /// The input's dtype (`min`, `max`).
    Same,
}

impl Rule {
    pub fn dtype(self, a: DType) -> DType {
        match self {
            // NumPy 2: bools and signed integers sum to int64, unsigned ones to uint64.
            Rule::Widen if a == DType::Bool || a.is_int() => {
                if a.is_unsigned() {
                    DType::U64
                } else {
                    DType::I64
                }
            }
            _ => a,
        }
    }
}

/// One fold row of the table: a reduction over axes, or a scan along one.
#[derive(Debug)]
pub struct FoldRow {
    pub op: Op,
    pub monoid: Monoid,
    pub rule: Rule,
    /// Whether the fused kernel may end a chain of elementwise lanes with it (scans: no).
    pub fuses: bool,
    /// Names in the expression language; the first is [`Op::name`].
    pub names: &'static [&'static str],
    /// NumPy's one-line summary.
    pub doc: &'static str,
}

macro_rules! fold_defs {
    (
        fold { $($f:ident: $fm:ident, $fr:ident, $fu:literal, $ff:literal, [$($fnm:literal),+], $fd:literal;)* }
        scan { $($s:ident: $sm:ident, $sr:ident, $sf:literal, [$($snm:literal),+], $sd:literal;)* }
        reduction_rows { $($rest:tt)* }
    ) => {
        /// The reductions over axes, in the table's order.
        pub static FOLDS: &[FoldRow] = &[
            $(FoldRow { op: Op::$f, monoid: Monoid::$fm, rule: Rule::$fr, fuses: $fu, names: &[$($fnm),+], doc: $fd },)*
        ];
        /// The scans, in the table's order.
        pub static SCANS: &[FoldRow] = &[
            $(FoldRow { op: Op::$s, monoid: Monoid::$sm, rule: Rule::$sr, fuses: false, names: &[$($snm),+], doc: $sd },)*
        ];
    };
}
reduction_table! { fold_defs! {} }

/// The row of a reduction over axes; `None` for every other op.
pub fn fold(op: Op) -> Option<&'static FoldRow> {
    FOLDS.iter().find(|r| r.op == op)
}

/// The row of a scan; `None` for every other op.
pub fn scan(op: Op) -> Option<&'static FoldRow> {
    SCANS.iter().find(|r| r.op == op)
}

/// The reduction over axes the expression language calls `name`.
pub fn fold_op(name: &str) -> Option<Op> {
    FOLDS.iter().find(|r| r.names.contains(&name)).map(|r| r.op)
}

/// The scan the expression language calls `name`.
pub fn scan_op(name: &str) -> Option<Op> {
    SCANS.iter().find(|r| r.names.contains(&name)).map(|r| r.op)
}

/// The result dtype of a fold or a scan of `a` (the input's dtype for other ops).
pub fn reduction_dtype(op: Op, a: DType) -> DType {
    match fold(op).or_else(|| scan(op)) {
        Some(row) => row.rule.dtype(a),
        None => a,
    }
}

/// The family's functions beside the table's rows (composed of them, or with kernels of
/// their own).
const OTHER_FUNCTIONS: &[Function] = &[
    Function::new(
        "mean",
        Form::Reduce,
        "Arithmetic mean along the specified axes.",
    ),
    Function::new("var", Form::Reduce, "Variance along the specified axes."),
    Function::new(
        "std",
        Form::Reduce,
        "Standard deviation along the specified axes.",
    ),
    Function::new(
        "all",
        Form::Reduce,
        "Whether all array elements along given axes evaluate to True.",
    ),
    Function::new(
        "any",
        Form::Reduce,
        "Whether any array element along given axes evaluates to True.",
    ),
    Function::new(
        "argmin",
        Form::ArgReduce,
        "Indices of the minimum values along an axis.",
    ),
    Function::new(
        "argmax",
        Form::ArgReduce,
        "Indices of the maximum values along an axis.",
    ),
    // branch apifuncs: the array API's scans and count (`expr::rearrange`).
    Function::other(
        "cumulative_sum",
        "Cumulative sum of elements along a given axis.",
    ),
    Function::other(
        "cumulative_prod",
        "Cumulative product of elements along a given axis.",
    ),
    Function::other(
        "count_nonzero",
        "Counts the number of non-zero values in the array.",
    ),
];

pub struct Reduction;

impl OpFamily for Reduction {
    fn name(&self) -> &'static str {
        "reduction"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(
            op.family(),
            Family::Reduction | Family::Scan | Family::Combine
        )
    }

    fn functions(&self) -> Vec<Function> {
        let rows = |rows: &'static [FoldRow], form: Form| {
            rows.iter()
                .flat_map(move |r| r.names.iter().map(move |&n| Function::new(n, form, r.doc)))
        };
        rows(FOLDS, Form::Reduce)
            .chain(OTHER_FUNCTIONS.iter().copied())
            .chain(rows(SCANS, Form::Scan))
            .collect()
    }
}
