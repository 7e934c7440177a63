//! ares' elementwise kernels against NumPy's answers on special values: NaN, ±0, ±inf, the
//! smallest subnormals, huge values, and the integer bounds (`INT64_MIN // -1`, `x % 0`,
//! `remainder`'s signs). The answers were computed once by NumPy and checked in
//! (`numpy_cases/values.rs`, written by `scripts/ufunc_cases.py`), so this test needs no
//! Python. Each case runs through the array kernel and through the fused kernel's lanes (a
//! FUSE segment of the op and a multiplication by 1), which must agree with NumPy alike.
//!
//! Exact agreement (to the sign of zero; any NaN matches any NaN) for everything but the
//! transcendental functions, whose finite non-zero results may differ by a few units in the
//! last place between C libraries (NumPy's float32 loops compute in float32, ares' in
//! float64, rounded once).

mod values;

use super::ufunc;
use crate::array::{ArrayData, DType, Scalar};
use crate::ids::ArgsIdx;
use crate::kernels::fused::run_fused;
use crate::ops::{FuseStep, Op, OpArgs};
use ndarray::{ArrayD, IxDyn};
use values::*;

const FLOATS: [f64; 19] = [
    f64::NAN,
    f64::NEG_INFINITY,
    -1e300,
    -50.0,
    -2.5,
    -1.0,
    -0.5,
    -5e-324,
    -0.0,
    0.0,
    5e-324,
    0.5,
    1.0,
    1.5,
    2.5,
    3.0,
    50.0,
    1e300,
    f64::INFINITY,
];
const INT64: [i64; 10] = [i64::MIN, i64::MIN + 1, -7, -2, -1, 0, 1, 2, 7, i64::MAX];
const INT32: [i32; 10] = [i32::MIN, i32::MIN + 1, -7, -2, -1, 0, 1, 2, 7, i32::MAX];

/// The ares op NumPy's function `name` is (`rint` is `round` of floats).
fn op_of(name: &str) -> Op {
    let name = if name == "rint" { "round" } else { name };
    ufunc(name).unwrap_or_else(|| panic!("no ufunc {name}")).op
}

/// Functions exact in both C libraries: every result must be NumPy's, bit for bit.
fn exact(name: &str) -> bool {
    !name.starts_with("arc")
        && !matches!(
            name,
            "cosh"
                | "sinh"
                | "tan"
                | "tanh"
                | "expm1"
                | "log1p"
                | "log2"
                | "log10"
                | "hypot"
                | "logaddexp"
        )
}

fn arr<T: Clone>(v: Vec<T>, wrap: fn(ArrayD<T>) -> ArrayData) -> ArrayData {
    let n = v.len();
    wrap(ArrayD::from_shape_vec(IxDyn(&[n]), v).unwrap())
}

/// ares' result as float64 values (bools as 0 and 1).
fn floats(a: &ArrayData) -> Vec<f64> {
    (0..a.len())
        .map(|i| match a.get_flat(i).unwrap() {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            s => s.as_f64(),
        })
        .collect()
}

/// Units in the last place between two finite values of one sign, in float32 or float64.
fn ulps(a: f64, b: f64, dtype: DType) -> u64 {
    if dtype == DType::F32 {
        (a as f32).to_bits().abs_diff((b as f32).to_bits()).into()
    } else {
        a.to_bits().abs_diff(b.to_bits())
    }
}

/// Whether ares' `got` is NumPy's `want` for function `name` in `dtype`.
fn agrees(name: &str, got: f64, want: f64, dtype: DType) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    let special = want == 0.0 || want.is_infinite() || got == 0.0 || got.is_infinite();
    if exact(name) || special {
        return got.to_bits() == want.to_bits();
    }
    let tolerance = if dtype == DType::F32 { 4 } else { 2 };
    got.signum() == want.signum() && ulps(got, want, dtype) <= tolerance
}

/// FUSE[op, multiply by 1] on the inputs: the op's lane, in a segment of two.
fn fused(op: Op, inputs: &[&ArrayData]) -> ArrayData {
    let step = |op, args| FuseStep {
        op,
        args: ArgsIdx(args),
        position: 0,
    };
    let table = [
        OpArgs::None,
        OpArgs::Scalar {
            value: Scalar::I64(1),
            scalar_left: false,
        },
    ];
    run_fused(&[step(op, 0), step(Op::Mul, 1)], &table, inputs).unwrap()
}

/// Checks one function's results on `inputs` against NumPy's `want`, in the array kernel
/// and (for float results) the fused kernel.
fn check(name: &str, dtype: DType, inputs: &[&ArrayData], want: &[f64], cases: &[String]) {
    let op = op_of(name);
    let whole = crate::kernels::apply(op, &OpArgs::None, &[], inputs).unwrap();
    let mut runs = vec![("kernel", whole)];
    if dtype.is_float() && name != "signbit" {
        runs.push(("fused", fused(op, inputs)));
    }
    for (how, out) in runs {
        let got = floats(&out);
        assert_eq!(got.len(), want.len(), "{name}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                agrees(name, *g, *w, dtype),
                "{name}({}) in {dtype} ({how}): ares {g:e}, NumPy {w:e}",
                cases[i]
            );
        }
    }
}

fn float_data(values: Vec<f64>, dtype: DType) -> ArrayData {
    let a = arr(values, ArrayData::F64);
    a.cast(dtype)
}

fn pairs<T: Copy>(v: &[T]) -> (Vec<T>, Vec<T>) {
    let a = v.iter().flat_map(|x| v.iter().map(move |_| *x)).collect();
    let b = v.iter().flat_map(|_| v.iter().copied()).collect();
    (a, b)
}

#[test]
fn float_functions_give_numpys_special_values() {
    let from64 = |bits: &[u64]| bits.iter().map(|b| f64::from_bits(*b)).collect::<Vec<_>>();
    let from32 = |bits: &[u32]| {
        bits.iter()
            .map(|b| f64::from(f32::from_bits(*b)))
            .collect::<Vec<_>>()
    };
    let tables = [
        (
            DType::F64,
            UNARY_F64
                .iter()
                .map(|(n, v)| (*n, from64(v)))
                .collect::<Vec<_>>(),
            BINARY_F64
                .iter()
                .map(|(n, v)| (*n, from64(v)))
                .collect::<Vec<_>>(),
        ),
        (
            DType::F32,
            UNARY_F32.iter().map(|(n, v)| (*n, from32(v))).collect(),
            BINARY_F32.iter().map(|(n, v)| (*n, from32(v))).collect(),
        ),
    ];
    let (a, b) = pairs(&FLOATS);
    let one: Vec<String> = FLOATS.iter().map(|x| format!("{x:e}")).collect();
    let two: Vec<String> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| format!("{x:e}, {y:e}"))
        .collect();
    for (dtype, unary, binary) in tables {
        let x = float_data(FLOATS.to_vec(), dtype);
        for (name, want) in &unary {
            check(name, dtype, &[&x], want, &one);
        }
        let (x1, x2) = (float_data(a.clone(), dtype), float_data(b.clone(), dtype));
        for (name, want) in &binary {
            check(name, dtype, &[&x1, &x2], want, &two);
        }
    }
}

#[test]
fn integer_functions_give_numpys_values_at_the_bounds() {
    let (a64, b64) = pairs(&INT64);
    let (a32, b32) = pairs(&INT32);
    let int_cases = |v: &[i64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let one64 = int_cases(&INT64);
    let one32 = int_cases(&INT32.map(i64::from));
    let pair_cases = |a: &[i64], b: &[i64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| format!("{x}, {y}"))
            .collect::<Vec<_>>()
    };
    let two64 = pair_cases(&a64, &b64);
    let two32 = pair_cases(
        &a32.iter().map(|x| i64::from(*x)).collect::<Vec<_>>(),
        &b32.iter().map(|x| i64::from(*x)).collect::<Vec<_>>(),
    );
    let exact = |name: &str, inputs: &[&ArrayData], want: Vec<i64>, cases: &[String]| {
        let out = crate::kernels::apply(op_of(name), &OpArgs::None, &[], inputs).unwrap();
        let got: Vec<i64> = (0..out.len())
            .map(|i| match out.get_flat(i).unwrap() {
                Scalar::Bool(b) => i64::from(b),
                Scalar::I64(v) => v,
                other => panic!("{name}: {other:?}"),
            })
            .collect();
        let dtype = inputs[0].dtype();
        let expected_dtype = if name == "signbit" {
            DType::Bool
        } else {
            dtype
        };
        assert_eq!(out.dtype(), expected_dtype, "{name}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{name}({}) in {dtype}", cases[i]);
        }
    };
    let x64 = arr(INT64.to_vec(), ArrayData::I64);
    for (name, want) in UNARY_I64 {
        exact(name, &[&x64], want.to_vec(), &one64);
    }
    let (p, q) = (arr(a64, ArrayData::I64), arr(b64, ArrayData::I64));
    for (name, want) in BINARY_I64 {
        exact(name, &[&p, &q], want.to_vec(), &two64);
    }
    let x32 = arr(INT32.to_vec(), ArrayData::I32);
    let widen = |v: &[i32]| v.iter().map(|x| i64::from(*x)).collect::<Vec<_>>();
    for (name, want) in UNARY_I32 {
        exact(name, &[&x32], widen(want), &one32);
    }
    let (p, q) = (arr(a32, ArrayData::I32), arr(b32, ArrayData::I32));
    for (name, want) in BINARY_I32 {
        exact(name, &[&p, &q], widen(want), &two32);
    }
}

/// An integer or bool array's values as i128 (which holds every int8 to uint64 value).
fn ints128(a: &ArrayData) -> Vec<i128> {
    crate::with_array!(a, |x| x.iter().map(|v| to_i128(*v)).collect())
}

trait ToI128: Copy {
    fn to(self) -> i128;
}
macro_rules! to_i128_for {
    ($($t:ty),*) => {
        $(impl ToI128 for $t {
            fn to(self) -> i128 {
                self as i128
            }
        })*
    };
}
to_i128_for!(i8, i16, i32, i64, u8, u16, u32, u64);
impl ToI128 for bool {
    fn to(self) -> i128 {
        i128::from(self)
    }
}
impl ToI128 for f32 {
    fn to(self) -> i128 {
        panic!("a float32 result where NumPy's is an integer")
    }
}
impl ToI128 for f64 {
    fn to(self) -> i128 {
        panic!("a float64 result where NumPy's is an integer")
    }
}
impl ToI128 for crate::array::Complex32 {
    fn to(self) -> i128 {
        panic!("a complex result where NumPy's is an integer")
    }
}
impl ToI128 for crate::array::Complex64 {
    fn to(self) -> i128 {
        panic!("a complex result where NumPy's is an integer")
    }
}
fn to_i128<T: ToI128>(v: T) -> i128 {
    v.to()
}

/// The narrow integers and uint64: wrapping arithmetic, division by zero, `abs(-128)`,
/// the negation of unsigned values, shifts at and past the width and comparisons past
/// 2^63, each result NumPy's value in NumPy's dtype.
#[test]
fn narrow_integers_give_numpys_values() {
    let values = |name: &str| {
        let dtype = DType::parse(name).unwrap();
        let (_, v) = NARROW.iter().find(|(n, _)| *n == name).unwrap();
        let x = ArrayData::I64(
            ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.iter().map(|x| *x as i64).collect())
                .unwrap(),
        );
        (dtype, v.to_vec(), x.cast(dtype))
    };
    for (name, f, want) in NARROW_CASES {
        let (dtype, v, x) = values(name);
        let op = op_of(f);
        let (out, cases): (ArrayData, Vec<String>) = if want.len() == v.len() {
            let out = crate::kernels::apply(op, &OpArgs::None, &[], &[&x]).unwrap();
            (out, v.iter().map(|a| a.to_string()).collect())
        } else {
            let n = v.len();
            let a = ArrayD::from_shape_fn(IxDyn(&[n * n]), |i| i[0] / n);
            let b = ArrayD::from_shape_fn(IxDyn(&[n * n]), |i| i[0] % n);
            let take = |idx: &ArrayD<usize>| crate::map_array!(&x, |p| idx.mapv(|i| p[[i]]));
            let out =
                crate::kernels::apply(op, &OpArgs::None, &[], &[&take(&a), &take(&b)]).unwrap();
            let cases = a
                .iter()
                .zip(&b)
                .map(|(i, j)| format!("{}, {}", v[*i], v[*j]))
                .collect();
            (out, cases)
        };
        let want_dtype = if op.is_comparison() {
            DType::Bool
        } else {
            dtype
        };
        assert_eq!(out.dtype(), want_dtype, "{f} of {name}");
        for (i, (g, w)) in ints128(&out).iter().zip(*want).enumerate() {
            assert_eq!(g, w, "{f}({}) in {name}", cases[i]);
        }
    }
}
