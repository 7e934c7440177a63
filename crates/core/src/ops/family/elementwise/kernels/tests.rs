//! Unit tests of the elementwise kernels: NumPy's integer power, bitwise and shift ops, bool loops.

use super::*;
use crate::ops::family::elementwise::math::wrapping_pow_i64;

fn bools(v: &[bool]) -> ArrayData {
    ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap())
}

#[test]
fn integer_power_wraps_over_the_whole_exponent() {
    let naive = |p: i64, q: u64| (0..q).fold(1i64, |acc, _| acc.wrapping_mul(p));
    for p in [-3i64, -1, 0, 1, 2, 3, 7, 1 << 40] {
        for q in [0u64, 1, 2, 5, 63, 64, 65, 1000] {
            assert_eq!(wrapping_pow_i64(p, q as i64), naive(p, q), "{p} ** {q}");
        }
    }
    // Past u32::MAX the exponent still counts: 3 ** (2^32 + 1) = 3 * (3 ** 2^32).
    let big = (1i64 << 32) + 1;
    assert_eq!(
        wrapping_pow_i64(3, big),
        3i64.wrapping_mul(wrapping_pow_i64(wrapping_pow_i64(3, 1 << 16), 1 << 16))
    );
}

#[test]
fn bitwise_ops_are_logical_on_bools_bitwise_on_ints_refused_on_floats() {
    let (a, b) = (
        bools(&[false, false, true, true]),
        bools(&[false, true, false, true]),
    );
    let run = |op, x: &ArrayData, y: &ArrayData| binary(op, x, y).map_err(|e| e.0);
    assert_eq!(
        run(Op::BitAnd, &a, &b),
        Ok(bools(&[false, false, false, true]))
    );
    assert_eq!(
        run(Op::BitOr, &a, &b),
        Ok(bools(&[false, true, true, true]))
    );
    assert_eq!(
        run(Op::BitXor, &a, &b),
        Ok(bools(&[false, true, true, false]))
    );
    let ints =
        |v: &[i64]| ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap());
    let (x, y) = (ints(&[12, -1, 0, i64::MIN]), ints(&[10, 7, -1, -1]));
    assert_eq!(run(Op::BitAnd, &x, &y), Ok(ints(&[8, 7, 0, i64::MIN])));
    assert_eq!(run(Op::BitOr, &x, &y), Ok(ints(&[14, -1, -1, -1])));
    assert_eq!(run(Op::BitXor, &x, &y), Ok(ints(&[6, -8, -1, i64::MAX])));
    // A bool with an int promotes to int64: True & 3 is 1.
    assert_eq!(
        run(Op::BitAnd, &bools(&[true]), &ints(&[3])),
        Ok(ints(&[1]))
    );
    let invert = |x: &ArrayData| unary(Op::Invert, &OpArgs::None, x).map_err(|e| e.0);
    assert_eq!(invert(&x), Ok(ints(&[-13, 0, -1, i64::MAX])));
    assert_eq!(invert(&a), Ok(bools(&[true, true, false, false])));
    let floats = ArrayData::F64(ArrayD::from_elem(IxDyn(&[2]), 1.5));
    let e = run(Op::BitOr, &floats, &x).unwrap_err();
    assert!(e.contains("bitwise_or") && e.contains("float64"), "{e}");
    assert!(invert(&floats).unwrap_err().contains("invert"));
}

#[test]
fn two_bools_follow_numpys_bool_loops() {
    let (a, b) = (
        bools(&[false, false, true, true]),
        bools(&[false, true, false, true]),
    );
    let run = |op| binary(op, &a, &b).map_err(|e| e.0);
    assert_eq!(run(Op::Add), Ok(bools(&[false, true, true, true])));
    assert_eq!(run(Op::Mul), Ok(bools(&[false, false, false, true])));
    assert!(run(Op::Sub).unwrap_err().contains("boolean subtract"));
    assert_eq!(run(Op::Pow).unwrap().dtype(), DType::I8);
    assert_eq!(run(Op::Div).unwrap().dtype(), DType::F64);
    // A weak int scalar on bools widens to int64; a weak bool does not.
    let plus_one = binary_scalar(Op::Add, &a, Scalar::I64(1), false).unwrap();
    assert_eq!(plus_one.dtype(), DType::I64);
    let plus_true = binary_scalar(Op::Add, &a, Scalar::Bool(true), false).unwrap();
    assert_eq!(plus_true, bools(&[true; 4]));
}

#[test]
fn shifts_follow_numpy_at_and_past_the_bit_width() {
    let run = |op, x: &ArrayData, y: &ArrayData| binary(op, x, y).map_err(|e| e.0);
    let ints =
        |v: &[i64]| ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap());
    let int32s =
        |v: &[i32]| ArrayData::I32(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap());
    let x = ints(&[5, -5, 1, -1, 0]);
    // NumPy 2.4 on x86-64: `np.left_shift(x, s)`, `np.right_shift(x, s)`.
    let cases: [(i64, [i64; 5], [i64; 5]); 7] = [
        (0, [5, -5, 1, -1, 0], [5, -5, 1, -1, 0]),
        (2, [20, -20, 4, -4, 0], [1, -2, 0, -1, 0]),
        (
            63,
            [i64::MIN, i64::MIN, i64::MIN, i64::MIN, 0],
            [0, -1, 0, -1, 0],
        ),
        (64, [0; 5], [0, -1, 0, -1, 0]),
        (100, [0; 5], [0, -1, 0, -1, 0]),
        (-1, [0; 5], [0, -1, 0, -1, 0]),
        (i64::MIN, [0; 5], [0, -1, 0, -1, 0]),
    ];
    for (s, left, right) in cases {
        let count = ints(&[s; 5]);
        assert_eq!(run(Op::LeftShift, &x, &count), Ok(ints(&left)), "<< {s}");
        assert_eq!(run(Op::RightShift, &x, &count), Ok(ints(&right)), ">> {s}");
    }
    // int32 shifts at 32 bits: 1 << 31 is int32's minimum, 1 << 32 is 0.
    let y = int32s(&[5, -5, 1]);
    let counts = int32s(&[31, 32, -1]);
    assert_eq!(
        run(Op::LeftShift, &y, &counts),
        Ok(int32s(&[i32::MIN, 0, 0]))
    );
    assert_eq!(run(Op::RightShift, &y, &counts), Ok(int32s(&[0, -1, 0])));
    // A Python int count keeps int32 (NEP 50); a bool array meets it as int64.
    let shifted = binary_scalar(Op::LeftShift, &y, Scalar::I64(3), false).unwrap();
    assert_eq!(shifted, int32s(&[40, -40, 8]));
    let from_left = binary_scalar(Op::RightShift, &x, Scalar::I64(-64), true).unwrap();
    assert_eq!(from_left, ints(&[-2, -1, -32, -1, -64]));
    let flags = bools(&[true, false]);
    let ones = binary_scalar(Op::LeftShift, &flags, Scalar::I64(4), false).unwrap();
    assert_eq!(ones, ints(&[16, 0]));
    // Two bools shift as NumPy's int8; floats are refused with NumPy's message.
    let two = run(Op::LeftShift, &flags, &flags).unwrap();
    assert_eq!(
        two,
        ArrayData::I8(ArrayD::from_shape_vec(IxDyn(&[2]), vec![2, 0]).unwrap())
    );
    let floats = ArrayData::F64(ArrayD::from_elem(IxDyn(&[2]), 1.5));
    for (a, b) in [(&floats, &x), (&x, &floats)] {
        let e = run(Op::LeftShift, a, b).unwrap_err();
        assert!(
            e.contains("ufunc 'left_shift' not supported for the input types"),
            "{e}"
        );
    }
    assert!(run(Op::RightShift, &floats, &floats).is_err());
}
