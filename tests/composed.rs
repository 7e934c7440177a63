//! The NumPy functions composed from primitive ops (`tensor::compose`), against values
//! NumPy 2 printed for the same programs, with fusion on and off.

mod common;

use ares::config::TaskConfig;
use ares::expr::evaluate;

/// Program, NumPy's dtype, shape and values (bools as 0/1).
const CASES: &[(&str, &str, &[usize], &[f64])] = &[
    (
        "logical_and(arange(5, chunk=2), arange(5, chunk=3) > 2)",
        "bool",
        &[5],
        &[0.0, 0.0, 0.0, 1.0, 1.0],
    ),
    (
        "logical_or(arange(5.0, chunk=2) - 2, 0)",
        "bool",
        &[5],
        &[1.0, 1.0, 0.0, 1.0, 1.0],
    ),
    (
        "logical_xor(arange(4) > 1, arange(4) > 2)",
        "bool",
        &[4],
        &[0.0, 0.0, 1.0, 0.0],
    ),
    (
        "logical_not(arange(4, chunk=3) - 1)",
        "bool",
        &[4],
        &[0.0, 1.0, 0.0, 0.0],
    ),
    ("all(arange(5, chunk=2))", "bool", &[], &[0.0]),
    ("any(zeros((3, 0)), axis=1)", "bool", &[3], &[0.0, 0.0, 0.0]),
    (
        "all(zeros((3, 0)), axis=1, keepdims=True)",
        "bool",
        &[3, 1],
        &[1.0, 1.0, 1.0],
    ),
    (
        "clip(arange(10, chunk=3), 2.5, None)",
        "float64",
        &[10],
        &[2.5, 2.5, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ),
    (
        "clip(arange(10.0, chunk=3), 7, 2)",
        "float64",
        &[10],
        &[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
    ),
    (
        "expand_dims(arange(6, chunk=4), (0, 2))",
        "int64",
        &[1, 6, 1],
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    ),
    (
        "squeeze(ones((1, 3, 1), chunk=2), axis=-1)",
        "float64",
        &[1, 3],
        &[1.0, 1.0, 1.0],
    ),
    (
        "broadcast_to(arange(3) > 0, (2, 3))",
        "bool",
        &[2, 3],
        &[0.0, 1.0, 1.0, 0.0, 1.0, 1.0],
    ),
    (
        "stack((arange(3, chunk=2), arange(3) * 2), axis=-1)",
        "int64",
        &[3, 2],
        &[0.0, 0.0, 1.0, 2.0, 2.0, 4.0],
    ),
    (
        "split(arange(9, chunk=4), (2, 5))[2]",
        "int64",
        &[4],
        &[5.0, 6.0, 7.0, 8.0],
    ),
    (
        "inner(ones((2, 3), chunk=2), arange(3))",
        "float64",
        &[2],
        &[3.0, 3.0],
    ),
    (
        "dot(ones((2, 3), chunk=2), arange(3))",
        "float64",
        &[2],
        &[3.0, 3.0],
    ),
    (
        "matmul(arange(2), ones((2, 4), chunk=3))",
        "float64",
        &[4],
        &[1.0, 1.0, 1.0, 1.0],
    ),
    ("arange(3) @ arange(3, chunk=2)", "int64", &[], &[5.0]),
    (
        "linspace(0, 1, 5, endpoint=False, chunk=2)",
        "float64",
        &[5],
        &[0.0, 0.2, 0.4, 0.6000000000000001, 0.8],
    ),
    (
        "transpose(arange(6, chunk=3).reshape(1, 2, 3), (-1, 0, -2))",
        "int64",
        &[3, 1, 2],
        &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0],
    ),
];

#[test]
fn composed_functions_match_numpy() {
    for (program, dtype, shape, values) in CASES {
        let t = evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        for fuse in [true, false] {
            let config = TaskConfig {
                fuse_enabled: fuse,
                ..TaskConfig::default()
            };
            let got = common::run(&t, &config, 2, 2);
            let what = format!("{program} (fuse={fuse})");
            assert_eq!(got.dtype().name(), *dtype, "{what}: dtype");
            assert_eq!(got.shape(), *shape, "{what}: shape");
            let got: Vec<f64> = got.iter_f64().collect();
            assert_eq!(got.len(), values.len(), "{what}: size");
            for (g, w) in got.iter().zip(values.iter()) {
                assert!(
                    (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                    "{what}: {got:?} != {values:?}"
                );
            }
        }
    }
}

#[test]
fn composed_functions_refuse_bad_arguments() {
    for (program, message) in [
        ("split(arange(9), 2)", "equal division"),
        ("squeeze(ones((2, 3)), axis=0)", "not 1"),
        ("broadcast_to(arange(3), (3, 2))", "broadcast"),
        ("expand_dims(arange(3), 5)", "out of bounds"),
        ("stack((arange(3), arange(4)))", "same shape"),
        ("matmul(3, arange(3))", "at least one dimension"),
        ("clip(arange(3))", "a_min or a_max"),
    ] {
        let e = evaluate(program)
            .err()
            .unwrap_or_else(|| panic!("{program} was accepted"));
        assert!(e.message.contains(message), "{program}: {e}");
    }
}
