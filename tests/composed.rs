//! NumPy functions added for the Python work (`tensor::compose`, `where`, `isnan`, scans), against values
//! NumPy 2 printed for the same programs, with fusion on and off.

mod common;

use ares::config::TaskConfig;
use ares_core::expr::evaluate;

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
    (
        "isnan(divide(arange(-2, 3, chunk=2), 0) * 0)",
        "bool",
        &[5],
        &[1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    (
        "isinf(divide(arange(-2, 3, chunk=2), 0))",
        "bool",
        &[5],
        &[1.0, 1.0, 0.0, 1.0, 1.0],
    ),
    (
        "isfinite(divide(arange(-2, 3, chunk=2), 0))",
        "bool",
        &[5],
        &[0.0, 0.0, 0.0, 0.0, 0.0],
    ),
    ("isnan(arange(3))", "bool", &[3], &[0.0, 0.0, 0.0]),
    (
        "sum(isnan(linspace(-1, 1, 9, chunk=2) / 0))",
        "int64",
        &[],
        &[1.0],
    ),
    (
        "where(arange(6, chunk=4) > 2, arange(6, chunk=4), -1)",
        "int64",
        &[6],
        &[-1.0, -1.0, -1.0, 3.0, 4.0, 5.0],
    ),
    (
        "where(arange(6, chunk=4) > 2, 1.5, arange(6, chunk=3))",
        "float64",
        &[6],
        &[0.0, 1.0, 2.0, 1.5, 1.5, 1.5],
    ),
    (
        "where(arange(3)[:, None] > 0, arange(4, chunk=3), arange(3.0)[:, None] * 10)",
        "float64",
        &[3, 4],
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0],
    ),
    (
        "where(arange(6) > 3, arange(6) > 1, 7)",
        "int64",
        &[6],
        &[7.0, 7.0, 7.0, 7.0, 1.0, 1.0],
    ),
    (
        "cumsum(arange(10, chunk=3))",
        "int64",
        &[10],
        &[0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0, 36.0, 45.0],
    ),
    (
        "cumprod(arange(1, 8, chunk=3))",
        "int64",
        &[7],
        &[1.0, 2.0, 6.0, 24.0, 120.0, 720.0, 5040.0],
    ),
    (
        "cumsum(ones((4, 6), chunk=(3, 4)), axis=1)",
        "float64",
        &[4, 6],
        &[
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0,
            6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0,
        ],
    ),
    (
        "cumprod(ones((4, 6), chunk=(3, 4)) * 2, axis=-2)",
        "float64",
        &[4, 6],
        &[
            2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 8.0, 8.0, 8.0, 8.0, 8.0,
            8.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0,
        ],
    ),
    (
        "cumsum(arange(6, chunk=2) > 2)",
        "int64",
        &[6],
        &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0],
    ),
    (
        "cumsum(full(5, 2**62, chunk=2))",
        "int64",
        &[5],
        &[
            4611686018427387904.0,
            -9223372036854775808.0,
            -4611686018427387904.0,
            0.0,
            4611686018427387904.0,
        ],
    ),
    (
        "cumsum(ones((2, 3, 4), chunk=(1, 2, 3)) * 1.5)",
        "float64",
        &[24],
        &[
            1.5, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5, 12.0, 13.5, 15.0, 16.5, 18.0, 19.5, 21.0, 22.5,
            24.0, 25.5, 27.0, 28.5, 30.0, 31.5, 33.0, 34.5, 36.0,
        ],
    ),
    (
        "sum(ones((10, 8), chunk=((2, 3, 5), (4, 4))), axis=0)",
        "float64",
        &[8],
        &[10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0],
    ),
    (
        "arange(10, chunk=((1, 2, 3, 4),)) * 2",
        "int64",
        &[10],
        &[0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0],
    ),
    (
        "rechunk(arange(12).reshape(3, 4), ((1, 2), 3)) + 1",
        "int64",
        &[3, 4],
        &[
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ],
    ),
    (
        "rechunk(arange(12, chunk=5), ((6, 6),)).reshape(2, 6)",
        "int64",
        &[2, 6],
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
    ),
    ("matmul(ones((3, 2, 4), chunk=2), arange(12.0, chunk=5).reshape(4, 3))", "float64", &[3, 2, 3], &[18.0, 22.0, 26.0, 18.0, 22.0, 26.0, 18.0, 22.0, 26.0, 18.0, 22.0, 26.0, 18.0, 22.0, 26.0, 18.0, 22.0, 26.0]),
    ("matmul(arange(24, chunk=7).reshape(2, 3, 4), arange(24, chunk=5).reshape(2, 4, 3))", "int64", &[2, 3, 3], &[42.0, 48.0, 54.0, 114.0, 136.0, 158.0, 186.0, 224.0, 262.0, 906.0, 960.0, 1014.0, 1170.0, 1240.0, 1310.0, 1434.0, 1520.0, 1606.0]),
    ("arange(24, chunk=7).reshape(2, 1, 3, 4) @ arange(40, chunk=5).reshape(5, 4, 2)", "int64", &[2, 5, 3, 2], &[28.0, 34.0, 76.0, 98.0, 124.0, 162.0, 76.0, 82.0, 252.0, 274.0, 428.0, 466.0, 124.0, 130.0, 428.0, 450.0, 732.0, 770.0, 172.0, 178.0, 604.0, 626.0, 1036.0, 1074.0, 220.0, 226.0, 780.0, 802.0, 1340.0, 1378.0, 172.0, 226.0, 220.0, 290.0, 268.0, 354.0, 604.0, 658.0, 780.0, 850.0, 956.0, 1042.0, 1036.0, 1090.0, 1340.0, 1410.0, 1644.0, 1730.0, 1468.0, 1522.0, 1900.0, 1970.0, 2332.0, 2418.0, 1900.0, 1954.0, 2460.0, 2530.0, 3020.0, 3106.0]),
    ("tensordot(arange(24, chunk=5).reshape(2, 3, 4), arange(12, chunk=5).reshape(3, 4))", "int64", &[2], &[506.0, 1298.0]),
    ("tensordot(arange(24, chunk=5).reshape(2, 3, 4), arange(6, chunk=5).reshape(3, 2), axes=((1,), (0,)))", "int64", &[2, 4, 2], &[40.0, 52.0, 46.0, 61.0, 52.0, 70.0, 58.0, 79.0, 112.0, 160.0, 118.0, 169.0, 124.0, 178.0, 130.0, 187.0]),
    ("tensordot(arange(24, chunk=5).reshape(2, 3, 4), arange(8.0, chunk=5).reshape(2, 4), axes=((0, 2), (0, 1)))", "float64", &[3], &[316.0, 428.0, 540.0]),
    ("dot(arange(24, chunk=7).reshape(2, 3, 4), arange(20, chunk=6).reshape(4, 5))", "int64", &[2, 3, 5], &[70.0, 76.0, 82.0, 88.0, 94.0, 190.0, 212.0, 234.0, 256.0, 278.0, 310.0, 348.0, 386.0, 424.0, 462.0, 430.0, 484.0, 538.0, 592.0, 646.0, 550.0, 620.0, 690.0, 760.0, 830.0, 670.0, 756.0, 842.0, 928.0, 1014.0]),
    ("dot(arange(24, chunk=7).reshape(2, 3, 4), arange(4))", "int64", &[2, 3], &[14.0, 38.0, 62.0, 86.0, 110.0, 134.0]),
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
        ("where(arange(3) > 1)", "needs a condition, x and y"),
        ("cumsum(ones(3), axis=1)", "out of bounds"),
        (
            "matmul(ones((2, 3, 4)), ones((3, 4, 5)))",
            "do not broadcast",
        ),
        // NumPy checks the core dimensions first.
        ("matmul(ones((2, 3, 4)), ones((3, 5, 4)))", "do not align"),
        (
            "tensordot(ones((2, 3)), ones((2, 3)), axes=1)",
            "shape mismatch",
        ),
        ("ones(4, chunk=((1, 2),))", "add up to its length 4"),
        (
            "ones((4, 2), chunk=((4,),))",
            "1 entries for a tensor of 2 dimensions",
        ),
        ("where(arange(3) > 1, arange(2), 0)", "broadcast"),
        (
            "clip(arange(3), minimum=1)",
            "unknown keyword argument 'minimum' for clip",
        ),
    ] {
        let e = evaluate(program)
            .err()
            .unwrap_or_else(|| panic!("{program} was accepted"));
        assert!(e.message.contains(message), "{program}: {e}");
    }
    // NumPy 2.1: `clip` with neither bound is `a` (ares: the tensor itself).
    assert!(evaluate("clip(arange(3))").is_ok());
}
