//! Named regression tests: one per row and per "Also" item of issue 14, and one per
//! disagreement the differential test (`tests/differential.rs`) has found. Each program runs
//! in every mode (the embedded cluster and `--local`, each with and without fusion) with a
//! deadline, and must give exactly the dtype, shape and values NumPy 2 gives (floats within
//! 1e-9 relative, NaN equal to NaN, infinities with their sign), or an error where NumPy
//! raises.

mod diff;

use diff::ares::{ClusterRunner, MODES};
use diff::value::{judge, judge_mode, Outcome, Res, Vals};
use std::sync::{Mutex, OnceLock};

/// One embedded cluster for all tests of this file.
fn cluster() -> &'static Mutex<ClusterRunner> {
    static CLUSTER: OnceLock<Mutex<ClusterRunner>> = OnceLock::new();
    CLUSTER.get_or_init(|| Mutex::new(ClusterRunner::start()))
}

fn check(program: &str, want: Outcome) {
    let modes = cluster()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .all_modes(program);
    let bad: Vec<String> = MODES
        .iter()
        .zip(&modes)
        .filter_map(|(m, got)| judge(got, &want).map(|w| format!("  {m}: {got} ({w})")))
        .collect();
    assert!(
        bad.is_empty(),
        "`{program}`: expected {want}\n{}",
        bad.join("\n")
    );
}

/// `check` for a program that runs in stages: the local executor may refuse it (only a
/// supervisor runs stages), with its documented words.
fn check_staged(program: &str, want: Outcome) {
    let modes = cluster()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .all_modes(program);
    let bad: Vec<String> = MODES
        .iter()
        .zip(&modes)
        .filter_map(|(m, got)| {
            judge_mode(m, got, &want, true).map(|w| format!("  {m}: {got} ({w})"))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "`{program}`: expected {want}\n{}",
        bad.join("\n")
    );
}

fn f(shape: &[usize], v: &[f64]) -> Outcome {
    Outcome::Ok(Res {
        shape: shape.to_vec(),
        vals: Vals::F(v.to_vec()),
    })
}

fn i(shape: &[usize], v: &[i64]) -> Outcome {
    Outcome::Ok(Res {
        shape: shape.to_vec(),
        vals: Vals::I(v.to_vec()),
    })
}

fn b(shape: &[usize], v: &[bool]) -> Outcome {
    Outcome::Ok(Res {
        shape: shape.to_vec(),
        vals: Vals::B(v.to_vec()),
    })
}

fn error() -> Outcome {
    Outcome::Err("NumPy raises".into())
}

const P62: i64 = 4611686018427387904;

// Issue 14, row 1: `None` in an index is a new axis.
#[test]
fn none_index_is_a_new_axis() {
    check(
        "x = arange(6, chunk=4); x[None]",
        i(&[1, 6], &[0, 1, 2, 3, 4, 5]),
    );
}

#[test]
fn none_in_the_middle_of_an_index() {
    let v: Vec<i64> = (0..12).collect();
    check(
        "reshape(arange(12, chunk=4), (3, 4))[:, None]",
        i(&[3, 1, 4], &v),
    );
}

// Row 2: arange with a float argument is float64.
#[test]
fn arange_with_float_stop_is_float64() {
    check("arange(0, 5.5)", f(&[6], &[0., 1., 2., 3., 4., 5.]));
    check("arange(5.0)", f(&[5], &[0., 1., 2., 3., 4.]));
}

#[test]
fn float_arange_times_big_int_does_not_wrap() {
    let p = P62 as f64;
    check(
        "arange(4.0) * 4611686018427387904",
        f(&[4], &[0.0, p, 2.0 * p, 3.0 * p]),
    );
}

// Row 3: integer mean/var accumulate in float64.
#[test]
fn mean_of_big_ints_accumulates_in_float64() {
    check("mean(full(4, 2**62, chunk=2))", f(&[], &[P62 as f64]));
}

#[test]
fn var_of_constant_big_negative_ints_is_zero() {
    check(
        "var(full((8, 5), -4611686018427387904), axis=-1)",
        f(&[8], &[0.0; 8]),
    );
}

// Row 4: scalar promotion (NEP 50) and NaN propagation.
#[test]
fn maximum_propagates_nan_from_a_float_scalar() {
    check("maximum(divide(0.0, 0.0), 3)", f(&[], &[f64::NAN]));
}

#[test]
fn maximum_of_int_and_float_scalars_is_float() {
    check("maximum(3, 2.5)", f(&[], &[3.0]));
}

#[test]
fn minimum_of_float_and_bool_is_float() {
    check("minimum(2.0, True)", f(&[], &[1.0]));
}

#[test]
fn true_plus_one_is_int_two() {
    check("True + 1", i(&[], &[2]));
}

#[test]
fn big_int_comparison_is_exact() {
    check("(2**53 + 1 == 2**53) * arange(3)", i(&[3], &[0, 0, 0]));
}

#[test]
fn negating_true_is_an_error() {
    check("-True", error());
}

// Row 5: bool matrix product is bool.
#[test]
fn bool_dot_is_bool() {
    check(
        "dot(ones((1, 3), dtype='bool'), ones((3, 2), dtype='bool'))",
        b(&[1, 2], &[true, true]),
    );
}

// Row 6: sums start from +0.0 in every mode.
#[test]
fn sum_over_no_axes_of_negative_zeros_is_positive_zero() {
    check(
        "1 / sum(-zeros(3, chunk=2), axis=())",
        f(&[3], &[f64::INFINITY; 3]),
    );
}

// Also: a failed kernel ends the task in the embedded cluster (no hang: deadline).
#[test]
fn negative_int_power_in_a_kernel_is_an_error_not_a_hang() {
    for _ in 0..5 {
        check(
            "ones((3, 4), chunk=2, dtype='int64') ** full((3, 4), -1, chunk=1)",
            error(),
        );
    }
}

// Also: zero-size reshape does not panic in preparation.
#[test]
fn zero_size_reshape_works() {
    check("zeros((0, 4), chunk=2).reshape(4, 0)", f(&[4, 0], &[]));
}

// Also: invalid argument types are refused.
#[test]
fn float_axis_is_an_error() {
    check("x = arange(6, chunk=4); sum(x, axis=0.0)", error());
}

#[test]
fn float_shape_is_an_error() {
    check("ones((2.0, 3))", error());
}

#[test]
fn float_linspace_num_is_an_error() {
    check("linspace(0, 1, 5.0)", error());
}

// Also: an unused statement is never computed (documented, as in dask).
#[test]
fn unused_failing_statement_is_not_computed() {
    check("a = arange(3) ** -1; 1", i(&[], &[1]));
}

// Found by the differential test (seeds 263, 5xxx): NumPy's integer power raises only for a
// negative exponent it actually applies; a zero-size result has none.
#[test]
fn negative_int_power_of_a_zero_size_array_is_empty() {
    check(
        "astype(reshape(arange(-3, -3, -1), (1, 0, 6)), 'int64') ** -1",
        i(&[1, 0, 6], &[]),
    );
    check(
        "zeros((0, 3), chunk=2, dtype='int64') ** full((0, 3), -1, chunk=1)",
        i(&[0, 3], &[]),
    );
}

// Found by the differential test (seed 838): a zero-length piece of a concatenation is an
// empty chunk, and min/max must skip it rather than fail.
#[test]
fn min_over_a_concatenation_with_an_empty_piece() {
    check(
        "amin(concatenate((arange(-1.0, 0.25, 0.5, chunk=3), linspace(4.75, 3.5, 0, chunk=5), arange(2.0, 2.625, 0.25, chunk=2))), axis=0)",
        f(&[], &[-1.0]),
    );
}

#[test]
fn max_over_a_concatenation_with_an_empty_middle_column_block() {
    check(
        "max(concatenate((full((4, 2), 6.0, chunk=2), zeros((4, 0), chunk=2), ones((4, 1), chunk=1)), axis=1))",
        f(&[], &[6.0]),
    );
}

// Found by the differential test (seed 5xxx): NumPy's ufunc reductions (sum, prod, min, max)
// accept axis=0 and axis=-1 on a 0-d array (mean/var/std do not).
#[test]
fn ufunc_reductions_of_a_0d_array_accept_axis_0_and_minus_1() {
    check(
        "sum(reshape(arange(-1.5, -1.375, 0.25), ()), axis=0)",
        f(&[], &[-1.5]),
    );
    check("max(full((), 3, chunk=1), axis=-1)", i(&[], &[3]));
    check("mean(full((), 3, chunk=1), axis=0)", error());
}

// Found by the differential test (seed 397): split indices are slice bounds, so negative
// ones count from the end and a decreasing pair gives an empty piece.
#[test]
fn split_accepts_negative_and_decreasing_indices() {
    check("split(arange(-6, 0), (-3, 5), axis=-1)[2]", i(&[1], &[-1]));
    check(
        "split(arange(6, chunk=4), (-2,))[0]",
        i(&[4], &[0, 1, 2, 3]),
    );
    check("split(arange(6, chunk=4), (4, 2))[1]", i(&[0], &[]));
}

// Found by the differential test (seed 40xxx, after c097d96): zero samples is an empty array,
// not an overflow panic.
#[test]
fn linspace_of_zero_samples_is_empty() {
    check("linspace(0.75, -0.5, num=0, chunk=1)", f(&[0], &[]));
    check("linspace(1.5, -6.0, 0, endpoint=False)", f(&[0], &[]));
}

// Found by the differential test (10^5 run, seed 10xxxxx): None-indexing and squeeze are
// reshapes, and a concatenation with a zero-length piece has an empty chunk; the reshape
// must accept it.
#[test]
fn new_axis_after_a_concatenation_with_an_empty_piece() {
    check(
        "concatenate((reshape(arange(0), (0, 4)), full((1, 4), 1, chunk=5)), axis=0)[None]",
        i(&[1, 1, 4], &[1, 1, 1, 1]),
    );
}

#[test]
fn squeeze_after_a_concatenation_with_an_empty_piece() {
    check(
        "squeeze(concatenate((arange(0, 0, 3, chunk=2), full(1, 2, chunk=3)), axis=-1), axis=0)",
        i(&[], &[2]),
    );
}

// Found by the differential test (10^5 run, after c097d96's gemm): NumPy's matrix products
// accumulate from +0.0, so 0 * -1 summed is +0.0 and 1 / it is +inf.
#[test]
fn matmul_sums_start_from_positive_zero() {
    check(
        "1 / (zeros((1, 1), chunk=1) @ full((1, 3), -1.0, chunk=2))",
        f(&[1, 3], &[f64::INFINITY; 3]),
    );
    check(
        "1 / dot(zeros((2, 1), chunk=1), full((1, 2), -1.0, chunk=2))",
        f(&[2, 2], &[f64::INFINITY; 4]),
    );
}

// Found by the differential test (seed 1xxx, after 4e0761a): cumsum of a zero-size array
// flattens it to length 0 and must not rechunk to chunks of length 0.
#[test]
fn cumsum_of_a_zero_size_array_is_empty() {
    check(
        "arange(-5, -5, -2, chunk=1).reshape(1, 0).cumsum()",
        i(&[0], &[]),
    );
    check("cumprod(zeros((0, 3), chunk=2), axis=1)", f(&[0, 3], &[]));
}

#[test]
fn cumsum_along_a_concatenation_with_empty_pieces() {
    check(
        "cumsum(concatenate((arange(-4, -4, chunk=5), full(0, False, chunk=5), ones(4, chunk=1))), axis=0)",
        f(&[4], &[1.0, 2.0, 3.0, 4.0]),
    );
}

#[test]
fn cumsum_along_axis_1_of_a_concatenation_with_empty_pieces() {
    check(
        "concatenate((rechunk(reshape(arange(-1, -1, 2), (1, 0)), (3, 4)), rechunk(reshape(arange(0.5, 0.375, 0.25), (1, 0)), (1, 1)), reshape(rechunk(reshape(arange(2.0, 2.75, 0.5), (2, 1, 1)), (3, 4, 3)), (1, 2))), axis=1).cumsum(axis=1)",
        f(&[1, 2], &[2.0, 4.5]),
    );
}

// Found by the differential test (10^5 run, seed 1038691): a silent wrong value. With fusion,
// `any` over a concatenation with an empty piece is True although every element is 0.
#[test]
fn any_over_a_concatenation_with_an_empty_piece_is_false() {
    check(
        "any(concatenate((zeros((7,), chunk=((3, 4),), dtype='float64'), arange(-3.0, -3.75, 1.5)), axis=-1), axis=None)",
        b(&[], &[false]),
    );
    check(
        "any(concatenate((zeros(3, chunk=2), zeros(0, chunk=2))))",
        b(&[], &[false]),
    );
}

// Seed 1057945: the same along an axis (the second row is all zeros).
#[test]
fn any_along_an_axis_after_a_concatenation_with_an_empty_piece() {
    check(
        "any(concatenate((rechunk(reshape(arange(-1.5, -1.625, 0.25), (1, 5, 0)), (4, 3, 4)), rechunk(reshape(arange(-2, 8, 2), (1, 5, 1)), 1)), axis=-1), axis=-1, keepdims=True)",
        b(&[1, 5, 1], &[true, false, true, true, true]),
    );
}

// Found by the differential test (seed 100279, after issue 12's NaN/inf scalars): `.shape` of
// a number folded while the program is read. NumPy's `np.shape(-3.25)` is `()`.
#[test]
fn shape_and_transpose_of_a_number_are_those_of_a_0d_array() {
    check(
        "v0 = (-2); v1 = minimum((-3.25), v0); zeros(v1.shape, chunk=2).amax()",
        f(&[], &[0.0]),
    );
    check("(2.5).T + ones((2,), chunk=1)", f(&[2], &[3.5, 3.5]));
}

// A sum of operands of different ranks broadcast together came out of the elementwise
// kernel in Fortran order, and the reduction kept that order; dropping the reduced axes at
// the end of the combine tree reshaped it (`into_shape_with_order`), which needs a standard
// layout: "cannot drop reduced axes: ShapeError/IncompatibleLayout". The moments path (`var`)
// dropped its axes the same way. NumPy's sum is 90 everywhere (12 * 2 + 0 + 1 + ... + 11).
#[test]
fn reduction_over_operands_of_different_ranks_broadcast_together() {
    let x = "ones((4, 1, 1), chunk=4) + ones((11, 1), chunk=10) + arange(12, chunk=1)";
    check(&format!("sum({x}, axis=2)"), f(&[4, 11], &[90.0; 44]));
    check(&format!("mean({x}, axis=(2, 1))"), f(&[4], &[7.5; 4]));
    check(
        &format!("var({x}, axis=-1)"),
        f(&[4, 11], &[143.0 / 12.0; 44]),
    );
    check(
        &format!("max({x}, axis=2, keepdims=True)[0, 0]"),
        f(&[1], &[13.0]),
    );
}

// Issue 12: `& | ^ ~` are NumPy's bitwise ufuncs with Python's precedence (`&` binds tighter
// than comparisons, so they are parenthesized), logical on bools, bitwise on int64.
#[test]
fn bitwise_operators_follow_numpy_and_python_precedence() {
    check(
        "x = arange(-2, 3, chunk=2); (x > 0) | (x == -2) & ~(x < 0)",
        b(&[5], &[false, false, false, true, true]),
    );
    check(
        "x = arange(-2, 3, chunk=2); x & 6 ^ ~x | 1",
        i(&[5], &[7, 7, -1, -1, -1]),
    );
    check("~True & 1 | False", i(&[], &[0]));
    check("arange(3, chunk=2) & 1.0", error());
    check("~linspace(0, 1, 3, chunk=2)", error());
}

// `<< >>` are NumPy's `left_shift`/`right_shift` with Python's precedence (looser than `+ -`,
// tighter than `&`); counts past the bit width or negative shift every bit out, as NumPy's do
// on every platform; floats and two bools are refused.
#[test]
fn shifts_follow_numpy_and_python_precedence() {
    let x = "x = arange(-3, 3, chunk=2)";
    check(
        &format!("{x}; x << 2 + 1 & 255"),
        i(&[6], &[232, 240, 248, 0, 8, 16]),
    );
    check(&format!("{x}; x >> 1 | 1"), i(&[6], &[-1, -1, -1, 1, 1, 1]));
    check(&format!("{x}; 1 << x"), i(&[6], &[0, 0, 0, 1, 2, 4]));
    check(
        &format!("{x}; right_shift(x, 64)"),
        i(&[6], &[-1, -1, -1, 0, 0, 0]),
    );
    check(
        &format!("{x}; bitwise_left_shift(x, x)"),
        i(&[6], &[0, 0, 0, 0, 2, 8]),
    );
    check(
        "bitwise_right_shift(arange(4, chunk=3) > 1, 1)",
        i(&[4], &[0, 0, 0, 0]),
    );
    check("sum(arange(5, chunk=2) << 2)", i(&[], &[40]));
    check("5 << -1", i(&[], &[0]));
    check("arange(3, chunk=2) << 1.0", error());
    check("linspace(0, 1, 3, chunk=2) >> 1", error());
    // NumPy's bool loop of the shifts is int8's: `[False, True, True] << True` is int8
    // [0, 2, 2] (the dtype is checked by `tests/python` and the core's dtype tests).
    check("(arange(3, chunk=2) > 0) << True", i(&[3], &[0, 2, 2]));
}

// `x[x > 0].shape[0]` gave the static upper bound (the size of `x`; NumPy counts the selected
// elements): a length that depends on the data is not known before the program runs, so
// reading it is an error; the known lengths stay readable.
#[test]
fn reading_a_length_that_depends_on_the_data_is_an_error() {
    let x = "x = sin(arange(200, chunk=30))";
    check(&format!("{x}; x[x > 0].shape[0]"), error());
    check(&format!("{x}; ones(x[x > 0].shape, chunk=7)"), error());
    check(&format!("{x}; unique(x).shape[-1]"), error());
    check(
        "x = ones((3, 4), chunk=2); arange(x.shape[-1] * x.shape[0], chunk=5)",
        i(&[12], &(0..12).collect::<Vec<i64>>()),
    );
}

// Data-dependent lengths in stages (the differential test's `gendd`): what goes on from
// `x[mask]` and `unique` without their length gives NumPy's numbers.
#[test]
fn what_goes_on_from_a_mask_or_unique_gives_numpys_numbers() {
    let x = "x = arange(10, chunk=3) - 4.5";
    check_staged(
        &format!("{x}; v = x[x > 0]; sum(v * 2 + v)"),
        f(&[], &[37.5]),
    );
    check_staged(&format!("{x}; mean(x[x > 2])"), f(&[], &[3.5]));
    check_staged(&format!("{x}; var(x[x < 0], ddof=1)"), f(&[], &[2.5]));
    check_staged(
        &format!("{x}; v = x[x > 0]; v[v > 2.5] * 2"),
        f(&[2], &[7.0, 9.0]),
    );
    check_staged(
        &format!("{x}; sort(-x[x > 2])"),
        f(&[3], &[-4.5, -3.5, -2.5]),
    );
    check_staged(
        "x = reshape(arange(12, chunk=5), (3, 4)); u = unique(x > 5); astype(u, 'int64') + 1",
        i(&[2], &[1, 2]),
    );
    check_staged(
        "x = arange(10, chunk=3) * 0.5; unique(x[x > 2] - x[x > 2]) + ones(1)",
        f(&[1], &[1.0]),
    );
    check_staged(
        &format!("{x}; cumsum(x[x > 2])"),
        f(&[3], &[2.5, 6.0, 10.5]),
    );
    check_staged(&format!("{x}; argmin(x[x > 2] * -1)"), i(&[], &[2]));
    // A length that does not fit once known fails as NumPy does; one that does fit runs.
    check_staged(
        &format!("{x}; x[x > 2] + x[x < -2]"),
        f(&[3], &[-2.0, 0.0, 2.0]),
    );
    check_staged(&format!("{x}; x[x > 2] + x[x < -3]"), error());
    check_staged(
        &format!("{x}; x[x > 4] + x[x < -2]"),
        f(&[3], &[0.0, 1.0, 2.0]),
    );
}

// With no element selected, `min`/`max`/`argmin` raise as NumPy's do (they gave the identity,
// `inf`), and the reductions with an identity give it.
#[test]
fn reductions_of_an_empty_selection_raise_or_give_the_identity() {
    let x = "x = arange(10, chunk=3) - 4.5";
    check_staged(&format!("{x}; min(x[x > 20])"), error());
    check_staged(&format!("{x}; max(x[x > 20], axis=0)"), error());
    check_staged(&format!("{x}; argmax(x[x > 20])"), error());
    check_staged(&format!("{x}; sum(x[x > 20])"), f(&[], &[0.0]));
    check_staged(&format!("{x}; prod(x[x > 20])"), f(&[], &[1.0]));
}

// `any`/`all` are `max`/`min` of bools: when `min`/`max` of an empty selection were made
// to raise (`ops::infer`), `any`/`all` of one raised too; over bools the identity is the
// answer (False / True).
#[test]
fn any_and_all_of_an_empty_selection_are_false_and_true() {
    let x = "x = arange(10, chunk=3) - 4.5";
    check_staged(&format!("{x}; any(x[x > 20])"), b(&[], &[false]));
    check_staged(&format!("{x}; all(x[x > 20])"), b(&[], &[true]));
}

// Ops that need a data-dependent length wait for the stage that computes it (they were
// refused while the expression was built): slicing and reshaping are made again on the
// computed tensor (`tensor::wait`), the rest is built again with the real length.
#[test]
fn ops_that_need_a_data_dependent_length_wait_for_it() {
    let x = "x = arange(10, chunk=3) - 4.5; v = x[x > 0]";
    let v = [0.5, 1.5, 2.5, 3.5, 4.5];
    let rev: Vec<f64> = v.iter().rev().copied().collect();
    let twice: Vec<f64> = v.iter().chain(&v).copied().collect();
    for (op, want) in [
        ("v[1:]", f(&[4], &v[1..])),
        ("v[-2:]", f(&[2], &v[3..])),
        ("v[::-1]", f(&[5], &rev)),
        ("v[0]", f(&[], &[0.5])),
        ("v[-1]", f(&[], &[4.5])),
        ("v[None]", f(&[1, 5], &v)),
        ("reshape(v, (-1, 1))", f(&[5, 1], &v)),
        ("concatenate((v, v))", f(&[10], &twice)),
        ("rechunk(v, 2)", f(&[5], &v)),
        ("v.T", f(&[5], &v)),
        ("v @ v", f(&[], &[41.25])),
        ("expand_dims(v, 0)", f(&[1, 5], &v)),
        ("sum(v[1:] * 2)", f(&[], &[24.0])),
        ("v[v > 2][-1]", f(&[], &[4.5])),
    ] {
        check_staged(&format!("{x}; {op}"), want);
    }
    let sorted: Vec<f64> = (0..10).map(|k| k as f64 - 4.5).collect();
    check_staged(
        "x = arange(10, chunk=3) - 4.5; reshape(unique(x), (2, 5))",
        f(&[2, 5], &sorted),
    );
    // A length that does not fit fails as NumPy does, once known.
    check_staged(&format!("{x}; v[7]"), error());
    check_staged(&format!("{x}; reshape(v, (2, 2))"), error());
}

// Found by the differential test (`ARES_DIFF_KNOWN_BUGS=1`): the length of `x[mask]` is
// checked by its bound (the size of `x`; after a stage, the real length of the
// data-dependent tensor it was selected from) against an operand of known length, so a
// length that fits once known is refused: NumPy broadcasts (1,) with (3,).
#[test]
fn a_length_that_fits_once_known_is_not_refused_by_its_bound() {
    let x = "x = arange(10, chunk=3)";
    check_staged(&format!("{x}; x[x > 8] + ones(3)"), f(&[3], &[10.0; 3]));
    check_staged(
        &format!("{x}; v = x[x > 4]; v[v > 8] + ones(3)"),
        f(&[3], &[10.0; 3]),
    );
    check_staged(
        &format!("{x}; y = arange(5, chunk=2); x[x > 7] + y[y > 2]"),
        i(&[2], &[11, 13]),
    );
}

// Rows of no element selected by a 1-D mask kept the bound's row count (4, 0): after the
// stage, the reshape that gives the gathered rows their shape now takes the real count.
#[test]
fn rows_of_no_element_selected_by_a_mask_count_the_selected_rows() {
    check_staged("x = zeros((4, 0)); x[arange(4) > 0]", f(&[3, 0], &[]));
    check_staged(
        "x = reshape(arange(8.0), (4, 2)); x[arange(4) > 1]",
        f(&[2, 2], &[4.0, 5.0, 6.0, 7.0]),
    );
}
