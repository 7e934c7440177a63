//! The elementwise family: NumPy's ufuncs (one operand, or two broadcast together), and
//! beside them `where` and `astype`.
//!
//! **Adding a ufunc is one row of [`ufunc_table!`] plus its kernel**, a type of the same
//! name in [`math`] implementing [`math::UnaryUfunc`] or [`math::BinaryUfunc`]. The row
//! declares the [`Op`] variant (the enum is generated from this table and the other families'
//! rows in `ops/mod.rs`), its full name (hashed into the wire id: never rename one), its names
//! in the expression language (the first is the op's short name), its dtype rule and NumPy's
//! one-line summary. Everything else reads the table: result dtypes (`dtypes`), the array
//! kernels (`kernels`), the fused kernel's lanes, fusion, tiling (`tile`: inputs' chunk
//! boundaries unified per axis, by [`Family::Unary`] /
//! [`Family::Binary`]), the expression language's functions, the Python package's function
//! list, and the registry ([`crate::ops::registry::OP_REGISTRY`]) the docs and tests check.
//!
//! [`Family::Unary`]: crate::ops::Family::Unary
//! [`Family::Binary`]: crate::ops::Family::Binary

mod complex;
pub mod dtypes;
pub mod kernels;
pub mod math;
#[cfg(test)]
mod numpy_cases;
mod tile;

use crate::ops::registry::{Form, Function, OpFamily};
use crate::ops::{Family, Op};
use math::{BinaryVisitor, UnaryVisitor};

/// The ufunc table, passed to `$then!` after the tokens given (the callback pattern: the
/// same rows declare the [`Op`] variants in `ops/mod.rs` and build [`UFUNCS`] here).
///
/// A row: `Variant: Rule, "full.name", ["name", "alias"...], "NumPy's summary";` where
/// `Rule` is a [`UnaryRule`] in `unary`, a [`BinaryRule`] in `binary`.
macro_rules! ufunc_table {
    ($then:ident! { $($pass:tt)* }) => {
        $then! {
            $($pass)*
            unary {
                Neg: NoBool, "ares.tensor.arithmetic.negative", ["negative"],
                    "Numerical negative, element-wise.";
                Abs: Same, "ares.tensor.arithmetic.abs", ["abs", "absolute"],
                    "Absolute value, element-wise.";
                Sqrt: Float, "ares.tensor.arithmetic.sqrt", ["sqrt"],
                    "Non-negative square root, element-wise.";
                Exp: Float, "ares.tensor.arithmetic.exp", ["exp"],
                    "Exponential, element-wise.";
                Log: Float, "ares.tensor.arithmetic.log", ["log"],
                    "Natural logarithm, element-wise.";
                Sin: Float, "ares.tensor.arithmetic.sin", ["sin"],
                    "Trigonometric sine, element-wise.";
                Cos: Float, "ares.tensor.arithmetic.cos", ["cos"],
                    "Cosine, element-wise.";
                IsNan: Predicate, "ares.tensor.arithmetic.isnan", ["isnan"],
                    "Test element-wise for NaN.";
                IsInf: Predicate, "ares.tensor.arithmetic.isinf", ["isinf"],
                    "Test element-wise for positive or negative infinity.";
                IsFinite: Predicate, "ares.tensor.arithmetic.isfinite", ["isfinite"],
                    "Test element-wise for finiteness (not infinity and not NaN).";
                Invert: IntBool, "ares.tensor.bitwise.invert",
                    ["invert", "bitwise_not", "bitwise_invert"],
                    "Bit-wise inversion, or logical NOT of bools, element-wise.";
                Acos: Float, "ares.tensor.arithmetic.arccos", ["acos", "arccos"],
                    "Trigonometric inverse cosine, element-wise.";
                Acosh: Float, "ares.tensor.arithmetic.arccosh", ["acosh", "arccosh"],
                    "Inverse hyperbolic cosine, element-wise.";
                Asin: Float, "ares.tensor.arithmetic.arcsin", ["asin", "arcsin"],
                    "Inverse sine, element-wise.";
                Asinh: Float, "ares.tensor.arithmetic.arcsinh", ["asinh", "arcsinh"],
                    "Inverse hyperbolic sine element-wise.";
                Atan: Float, "ares.tensor.arithmetic.arctan", ["atan", "arctan"],
                    "Trigonometric inverse tangent, element-wise.";
                Atanh: Float, "ares.tensor.arithmetic.arctanh", ["atanh", "arctanh"],
                    "Inverse hyperbolic tangent element-wise.";
                Cosh: Float, "ares.tensor.arithmetic.cosh", ["cosh"],
                    "Hyperbolic cosine, element-wise.";
                Sinh: Float, "ares.tensor.arithmetic.sinh", ["sinh"],
                    "Hyperbolic sine, element-wise.";
                Tan: Float, "ares.tensor.arithmetic.tan", ["tan"],
                    "Compute tangent element-wise.";
                Tanh: Float, "ares.tensor.arithmetic.tanh", ["tanh"],
                    "Compute hyperbolic tangent element-wise.";
                Expm1: Float, "ares.tensor.arithmetic.expm1", ["expm1"],
                    "Calculate exp(x) - 1 for all elements in the array.";
                Log1p: Float, "ares.tensor.arithmetic.log1p", ["log1p"],
                    "Return the natural logarithm of one plus the input array, element-wise.";
                Log2: Float, "ares.tensor.arithmetic.log2", ["log2"],
                    "Base-2 logarithm of x.";
                Log10: Float, "ares.tensor.arithmetic.log10", ["log10"],
                    "Return the base 10 logarithm of the input array, element-wise.";
                Floor: Same, "ares.tensor.arithmetic.floor", ["floor"],
                    "Return the floor of the input, element-wise (integers are kept).";
                Ceil: Same, "ares.tensor.arithmetic.ceil", ["ceil"],
                    "Return the ceiling of the input, element-wise (integers are kept).";
                Trunc: Same, "ares.tensor.arithmetic.trunc", ["trunc"],
                    "Return the truncated value of the input, element-wise (integers are kept).";
                Round: Round, "ares.tensor.arithmetic.round", ["round"],
                    "Round to the nearest integer, halves to even (integers are kept).";
                Sign: NoBool, "ares.tensor.arithmetic.sign", ["sign"],
                    "Returns an element-wise indication of the sign of a number.";
                Square: NoBool, "ares.tensor.arithmetic.square", ["square"],
                    "Return the element-wise square of the input.";
                Reciprocal: NoBool, "ares.tensor.arithmetic.reciprocal", ["reciprocal"],
                    "Return the reciprocal of the argument, element-wise.";
                SignBit: Test, "ares.tensor.arithmetic.signbit", ["signbit"],
                    "Returns element-wise True where signbit is set (less than zero).";
            }
            binary {
                Add: Arith, "ares.tensor.arithmetic.add", ["add"],
                    "Add arguments element-wise.";
                Sub: NoBool, "ares.tensor.arithmetic.subtract", ["subtract"],
                    "Subtract arguments, element-wise.";
                Mul: Arith, "ares.tensor.arithmetic.multiply", ["multiply"],
                    "Multiply arguments element-wise.";
                Div: Float, "ares.tensor.arithmetic.truediv", ["divide", "true_divide"],
                    "Divide arguments element-wise (true division).";
                Pow: Power, "ares.tensor.arithmetic.power", ["power", "pow"],
                    "First array elements raised to powers from second array, element-wise.";
                Maximum: Arith, "ares.tensor.arithmetic.maximum", ["maximum"],
                    "Element-wise maximum of array elements (NaN propagates).";
                Minimum: Arith, "ares.tensor.arithmetic.minimum", ["minimum"],
                    "Element-wise minimum of array elements (NaN propagates).";
                Eq: Compare, "ares.tensor.arithmetic.equal", ["equal"],
                    "Return (x1 == x2) element-wise.";
                Ne: Compare, "ares.tensor.arithmetic.not_equal", ["not_equal"],
                    "Return (x1 != x2) element-wise.";
                Lt: Compare, "ares.tensor.arithmetic.less", ["less"],
                    "Return the truth value of (x1 < x2) element-wise.";
                Le: Compare, "ares.tensor.arithmetic.less_equal", ["less_equal"],
                    "Return the truth value of (x1 <= x2) element-wise.";
                Gt: Compare, "ares.tensor.arithmetic.greater", ["greater"],
                    "Return the truth value of (x1 > x2) element-wise.";
                Ge: Compare, "ares.tensor.arithmetic.greater_equal", ["greater_equal"],
                    "Return the truth value of (x1 >= x2) element-wise.";
                BitAnd: Bitwise, "ares.tensor.bitwise.bitwise_and", ["bitwise_and"],
                    "Compute the bit-wise AND of two arrays element-wise.";
                BitOr: Bitwise, "ares.tensor.bitwise.bitwise_or", ["bitwise_or"],
                    "Compute the bit-wise OR of two arrays element-wise.";
                BitXor: Bitwise, "ares.tensor.bitwise.bitwise_xor", ["bitwise_xor"],
                    "Compute the bit-wise XOR of two arrays element-wise.";
                LeftShift: Shift, "ares.tensor.bitwise.left_shift",
                    ["left_shift", "bitwise_left_shift"],
                    "Shift the bits of an integer to the left.";
                RightShift: Shift, "ares.tensor.bitwise.right_shift",
                    ["right_shift", "bitwise_right_shift"],
                    "Shift the bits of an integer to the right.";
                FloorDivide: FloorDivide, "ares.tensor.arithmetic.floordiv",
                    ["floor_divide"],
                    "Return the largest integer smaller or equal to the division of the inputs.";
                Remainder: FloorDivide, "ares.tensor.arithmetic.mod", ["remainder", "mod"],
                    "Returns the element-wise remainder of division (the sign of the divisor).";
                Atan2: Float, "ares.tensor.arithmetic.arctan2", ["atan2", "arctan2"],
                    "Element-wise arc tangent of x1/x2 choosing the quadrant correctly.";
                Hypot: Float, "ares.tensor.arithmetic.hypot", ["hypot"],
                    "Given the \"legs\" of a right triangle, return its hypotenuse.";
                LogAddExp: Float, "ares.tensor.arithmetic.logaddexp", ["logaddexp"],
                    "Logarithm of the sum of exponentiations of the inputs.";
                CopySign: Float, "ares.tensor.arithmetic.copysign", ["copysign"],
                    "Change the sign of x1 to that of x2, element-wise.";
                NextAfter: Float, "ares.tensor.arithmetic.nextafter", ["nextafter"],
                    "Return the next floating-point value after x1 towards x2, element-wise.";
            }
        }
    };
}
pub(crate) use ufunc_table;

/// What a one-operand ufunc's result dtype is (see `dtypes::unary_dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryRule {
    /// Keeps the dtype (`abs`).
    Same,
    /// Keeps the dtype; refuses bools (`negative`).
    NoBool,
    /// float32 stays, the rest give float64 (`sqrt`, `exp`...).
    Float,
    /// Gives bool (`isnan`...).
    Predicate,
    /// Bools and integers only, dtype kept (`invert`).
    IntBool,
    /// Gives bool, from each element's value: unlike [`UnaryRule::Predicate`], integers are
    /// not all alike (`signbit`).
    Test,
    /// Keeps integers and floats; bools give float64 (NumPy: float16) (`round`).
    Round,
}

/// What a two-operand ufunc's result dtype is once the operands promote (see
/// `dtypes::binary_dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryRule {
    /// The promoted dtype (`add`, `maximum`; on bools, NumPy's logical loops).
    Arith,
    /// The promoted dtype; two bools are refused (`subtract`).
    NoBool,
    /// The promoted dtype; two bools give int64, negative integer exponents are refused.
    Power,
    /// The promoted float dtype, float64 for integers and bools (`divide`, `atan2`...; NumPy
    /// gives float16 for two bools but in `divide`).
    Float,
    /// The promoted dtype; two bools give int64 (NumPy: int8) (`floor_divide`, `remainder`).
    FloorDivide,
    /// Bool, compared in the promoted dtype (`less`...).
    Compare,
    /// Bools and integers only (`bitwise_and`...): logical on bools.
    Bitwise,
    /// Integers only (`left_shift`, `right_shift`).
    Shift,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Unary(UnaryRule),
    Binary(BinaryRule),
}

/// One row of the ufunc table.
#[derive(Debug)]
pub struct Ufunc {
    pub op: Op,
    pub rule: Rule,
    /// Names in the expression language; the first is [`Op::name`].
    pub names: &'static [&'static str],
    /// NumPy's one-line summary.
    pub doc: &'static str,
}

macro_rules! ufunc_defs {
    (
        unary { $($u:ident: $ur:ident, $uf:literal, [$($un:literal),+], $ud:literal;)* }
        binary { $($b:ident: $br:ident, $bf:literal, [$($bn:literal),+], $bd:literal;)* }
    ) => {
        /// Every ufunc, in the table's order.
        pub static UFUNCS: &[Ufunc] = &[
            $(Ufunc { op: Op::$u, rule: Rule::Unary(UnaryRule::$ur), names: &[$($un),+], doc: $ud },)*
            $(Ufunc { op: Op::$b, rule: Rule::Binary(BinaryRule::$br), names: &[$($bn),+], doc: $bd },)*
        ];

        /// The dtype rule of a one-operand ufunc; `None` for every other op.
        pub fn unary_rule(op: Op) -> Option<UnaryRule> {
            match op {
                $(Op::$u => Some(UnaryRule::$ur),)*
                _ => None,
            }
        }

        /// The dtype rule of a two-operand ufunc; `None` for every other op.
        pub fn binary_rule(op: Op) -> Option<BinaryRule> {
            match op {
                $(Op::$b => Some(BinaryRule::$br),)*
                _ => None,
            }
        }

        /// Runs `v` with the kernel of the one-operand ufunc `op`.
        pub fn with_unary<V: UnaryVisitor>(op: Op, v: V) -> Option<V::Out> {
            match op {
                $(Op::$u => Some(v.visit::<math::$u>()),)*
                _ => None,
            }
        }

        /// Runs `v` with the kernel of the two-operand ufunc `op`.
        pub fn with_binary<V: BinaryVisitor>(op: Op, v: V) -> Option<V::Out> {
            match op {
                $(Op::$b => Some(v.visit::<math::$b>()),)*
                _ => None,
            }
        }
    };
}

ufunc_table!(ufunc_defs! {});

impl Ufunc {
    /// How the expression language calls it.
    pub fn form(&self) -> Form {
        match self.rule {
            Rule::Unary(_) => Form::Unary,
            Rule::Binary(_) => Form::Binary,
        }
    }
}

/// The ufunc the expression language calls `name` (`absolute` is [`Op::Abs`]).
pub fn ufunc(name: &str) -> Option<&'static Ufunc> {
    UFUNCS.iter().find(|u| u.names.contains(&name))
}

/// The elementwise functions the expression language composes from ufuncs (no op of their
/// own), and the two elementwise ops outside the ufunc table.
const OTHER_FUNCTIONS: &[Function] = &[
    Function::other(
        "logical_not",
        "Compute the truth value of NOT x element-wise.",
    ),
    Function::other(
        "logical_and",
        "Compute the truth value of x1 AND x2 element-wise.",
    ),
    Function::other(
        "logical_or",
        "Compute the truth value of x1 OR x2 element-wise.",
    ),
    Function::other(
        "logical_xor",
        "Compute the truth value of x1 XOR x2 element-wise.",
    ),
    Function::other(
        "where",
        "Return elements chosen from x or y depending on condition.",
    ),
    Function::other("clip", "Clip (limit) the values in an array."),
    Function::other(
        "rint",
        "Round elements of the array to the nearest integer (float results).",
    ),
    Function::other(
        "positive",
        "Numerical positive, element-wise (the tensor itself; bools are refused).",
    ),
    Function::other(
        "conj",
        "Return the complex conjugate, element-wise (real dtypes: the tensor itself).",
    ),
    Function::other(
        "conjugate",
        "Return the complex conjugate, element-wise (real dtypes: the tensor itself).",
    ),
    Function::other(
        "real",
        "Return the real part of the complex argument (real dtypes: the tensor itself).",
    ),
    Function::other(
        "imag",
        "Return the imaginary part of the complex argument (real dtypes: zeros).",
    ),
    Function::other("astype", "Copy of the array, cast to a specified type."),
];

/// The elementwise family in the registry.
pub struct Elementwise;

impl OpFamily for Elementwise {
    fn name(&self) -> &'static str {
        "elementwise"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(
            op.family(),
            Family::Unary | Family::Binary | Family::Ternary
        )
    }

    fn functions(&self) -> Vec<Function> {
        let rows = UFUNCS
            .iter()
            .flat_map(|u| u.names.iter().map(|&n| Function::new(n, u.form(), u.doc)));
        rows.chain(OTHER_FUNCTIONS.iter().copied()).collect()
    }
}
