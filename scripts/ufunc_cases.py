"""Writes crates/core/src/ops/family/elementwise/numpy_cases/values.rs: NumPy's answers of the
elementwise functions on special values (NaN, ±0, ±inf, huge and tiny numbers, integer
bounds), for the Rust test beside it to compare ares' kernels with.

    python3 scripts/ufunc_cases.py > crates/core/src/ops/family/elementwise/numpy_cases/values.rs

(needs NumPy 2; the checked-in file says which version wrote it). Floats are written as their
bits (so -0.0 and the NaNs are exact), in the order of the inputs below, which the Rust test
repeats: unary functions on FLOATS, binary ones on every pair of FLOATS (x1 major), integer
functions on INT64 / INT32 and their pairs, and the narrow integers' arithmetic, bit
operations and comparisons on NARROW's values of each dtype and their pairs (as i128, which
holds every int8 to uint64 value).
"""
import warnings

import numpy as np

warnings.simplefilter("ignore")
np.seterr(all="ignore")

FLOATS = [float("nan"), float("-inf"), -1e300, -50.0, -2.5, -1.0, -0.5, -5e-324, -0.0, 0.0,
          5e-324, 0.5, 1.0, 1.5, 2.5, 3.0, 50.0, 1e300, float("inf")]
INT64 = [-2**63, -2**63 + 1, -7, -2, -1, 0, 1, 2, 7, 2**63 - 1]
INT32 = [-2**31, -2**31 + 1, -7, -2, -1, 0, 1, 2, 7, 2**31 - 1]

UNARY = ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cosh", "sinh", "tan",
         "tanh", "expm1", "log1p", "log2", "log10", "floor", "ceil", "trunc", "rint", "sign",
         "square", "reciprocal", "signbit"]
BINARY = ["floor_divide", "remainder", "arctan2", "hypot", "logaddexp", "copysign",
          "nextafter", "maximum", "minimum"]
INT_UNARY = ["floor", "ceil", "trunc", "sign", "square", "reciprocal", "signbit"]
INT_BINARY = ["floor_divide", "remainder"]
NARROW = {
    "int8": [-128, -127, -7, -2, -1, 0, 1, 2, 7, 9, 127],
    "int16": [-2**15, -2**15 + 1, -300, -7, -1, 0, 1, 2, 15, 16, 300, 2**15 - 1],
    "uint8": [0, 1, 2, 7, 8, 9, 100, 127, 128, 200, 254, 255],
    "uint16": [0, 1, 2, 15, 16, 17, 300, 2**15, 2**16 - 2, 2**16 - 1],
    "uint32": [0, 1, 2, 31, 32, 33, 70000, 2**31, 2**32 - 2, 2**32 - 1],
    "uint64": [0, 1, 2, 63, 64, 65, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1],
}
NARROW_UNARY = ["negative", "absolute", "invert", "square", "sign", "reciprocal", "floor",
                "ceil", "trunc"]
NARROW_BINARY = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum",
                 "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                 "right_shift", "less", "less_equal", "equal", "greater"]


def bits(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return [str(int(v)) for v in a]
    if a.dtype == np.float32:
        return [f"0x{v:08x}" for v in a.view(np.uint32)]
    return [f"0x{v:016x}" for v in a.astype(np.float64).view(np.uint64)]


def ints(a):
    return [str(int(v)) for v in np.asarray(a)]


def emit(name, kind, values):
    print(f"    ({name!r}, &[{', '.join(values)}]),".replace("'", '"'))


print(f"//! NumPy {np.__version__}'s values, written by `scripts/ufunc_cases.py` (see there):")
print("//! do not edit.")
print()
for dtype, tag, width in ((np.float64, "F64", "u64"), (np.float32, "F32", "u32")):
    x = np.array(FLOATS, dtype)
    print(f"/// Unary functions on the floats, as {np.dtype(dtype).name} (signbit: 0 or 1).")
    print(f"pub const UNARY_{tag}: &[(&str, &[{width}])] = &[")
    for f in UNARY:
        r = getattr(np, f)(x)
        if r.dtype == np.bool_:
            r = r.astype(dtype)
        emit(f, tag, bits(r))
    print("];")
    print()
    a, b = np.meshgrid(x, x, indexing="ij")
    print(f"/// Binary functions on every pair of the floats, as {np.dtype(dtype).name}.")
    print(f"pub const BINARY_{tag}: &[(&str, &[{width}])] = &[")
    for f in BINARY:
        emit(f, tag, bits(getattr(np, f)(a.ravel(), b.ravel())))
    print("];")
    print()
for dtype, tag, vals in ((np.int64, "I64", INT64), (np.int32, "I32", INT32)):
    x = np.array(vals, dtype)
    t = "i64" if dtype == np.int64 else "i32"
    print(f"/// Integer functions on the {t} values (signbit: 0 or 1).")
    print(f"pub const UNARY_{tag}: &[(&str, &[{t}])] = &[")
    for f in INT_UNARY:
        r = getattr(np, f)(x)
        assert r.dtype in (dtype, np.bool_), (f, r.dtype)
        emit(f, tag, ints(r.astype(dtype)))
    print("];")
    print()
    a, b = np.meshgrid(x, x, indexing="ij")
    print(f"/// Integer functions on every pair of the {t} values.")
    print(f"pub const BINARY_{tag}: &[(&str, &[{t}])] = &[")
    for f in INT_BINARY:
        r = getattr(np, f)(a.ravel(), b.ravel())
        assert r.dtype == dtype, (f, r.dtype)
        emit(f, tag, ints(r))
    print("];")
    print()
print("/// Values of the narrow integer dtypes (and uint64), by dtype name.")
print("pub const NARROW: &[(&str, &[i128])] = &[")
for name, vals in NARROW.items():
    emit(name, "", ints(np.array(vals, name)))
print("];")
print()
print("/// `(dtype, function, values)`: unary functions on NARROW's values, then binary ones on")
print("/// every pair of them (x1 major), as their dtype (comparisons: 0 or 1).")
print("pub const NARROW_CASES: &[(&str, &str, &[i128])] = &[")
for name, vals in NARROW.items():
    x = np.array(vals, name)
    for f in NARROW_UNARY:
        r = getattr(np, f)(x)
        assert r.dtype == x.dtype, (name, f, r.dtype)
        print(f'    ("{name}", "{f}", &[{", ".join(ints(r))}]),')
    a, b = np.meshgrid(x, x, indexing="ij")
    for f in NARROW_BINARY:
        r = getattr(np, f)(a.ravel(), b.ravel())
        assert r.dtype in (x.dtype, np.bool_), (name, f, r.dtype)
        print(f'    ("{name}", "{f}", &[{", ".join(ints(r.astype(np.int64) if r.dtype == np.bool_ else r))}]),')
print("];")
