//! Issue 12's NumPy basics on data NumPy users meet: NaN, ±inf, -0.0, empty dimensions, and
//! arbitrary explicit chunkings (chunks of length 1 included). Proptest draws a shape, the
//! values and two explicit chunkings; the data goes through a `.npy` file (the only way to
//! put chosen values into a tensor), is read with the first chunking, and every program
//! below is evaluated through the expression language, prepared and executed with fusion on
//! and off, and compared with a whole-array evaluation written here with ndarray.

mod common;

use ares::config::TaskConfig;
use ares_core::array::ArrayData;
use ares_core::io::{npy, roots};
use ares_core::ops::ChunkSpec;
use ares_core::tensor::{self, Tensor};
use ndarray::{ArrayD, Axis, IxDyn};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

type Want = Result<ArrayD<f64>, ()>;

/// The data root of this process (under the target directory), set once.
fn root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("numpy_basics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        roots::set_global(roots::DataRoots::new(std::slice::from_ref(&dir)).unwrap());
        dir
    })
}

/// `values` as a float64 tensor of `shape` read in chunks `splits`.
fn tensor_of(values: &ArrayD<f64>, splits: &[Vec<usize>]) -> Tensor {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = root().join(format!("x{}.npy", NEXT.fetch_add(1, Ordering::Relaxed)));
    let meta = npy::create(&path, values.shape(), ares_core::array::DType::F64).unwrap();
    let data = ArrayData::F64(values.as_standard_layout().into_owned());
    let origin = vec![0; values.ndim()];
    npy::write_region(&path, &meta, &origin, &data).unwrap();
    let spec = ChunkSpec::Explicit(splits.to_vec());
    tensor::from_npy(path.to_str().unwrap(), Some(spec)).unwrap()
}

fn same(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan())
        || got == want
        || (got.is_finite() && (got - want).abs() <= 1e-9 * (1.0 + want.abs()))
}

/// Runs `program` on `x` (fusion on and off) and compares with `want`.
fn check(program: &str, x: &Tensor, want: Want) -> Result<(), TestCaseError> {
    let built = ares_core::expr::evaluate_with(program, &[("x".to_string(), x.clone())]);
    let t = match (built, &want) {
        (Ok(t), Ok(_)) => t,
        (Err(_), Err(())) => return Ok(()),
        (got, _) => {
            return Err(TestCaseError::fail(format!(
                "{program}: {got:?} vs {want:?}"
            )))
        }
    };
    let want = want.unwrap();
    for fuse in [true, false] {
        let config = TaskConfig {
            fuse_enabled: fuse,
            ..TaskConfig::default()
        };
        let got = common::run(&t, &config, 2, 2);
        prop_assert_eq!(got.shape(), want.shape(), "{} (fuse={})", program, fuse);
        for (i, (g, w)) in got.iter_f64().zip(want.iter()).enumerate() {
            prop_assert!(same(g, *w), "{program} (fuse={fuse}): [{i}] {g} != {w}");
        }
    }
    Ok(())
}

/// Folds `x` along `axis`; `keepdims` keeps it as length 1.
fn fold(x: &ArrayD<f64>, axis: usize, keep: bool, f: impl Fn(&[f64]) -> f64) -> ArrayD<f64> {
    let out = x.map_axis(Axis(axis), |lane| f(&lane.to_vec()));
    if keep {
        out.insert_axis(Axis(axis))
    } else {
        out
    }
}

/// The running `f` along `axis`.
fn running(x: &ArrayD<f64>, axis: usize, f: impl Fn(f64, f64) -> f64) -> ArrayD<f64> {
    let mut out = x.clone();
    for mut lane in out.lanes_mut(Axis(axis)) {
        for i in 1..lane.len() {
            lane[i] = f(lane[i - 1], lane[i]);
        }
    }
    out
}

/// NumPy's argmin/argmax of one lane: the first NaN, else the first extreme.
fn arg_extreme(lane: &[f64], better: impl Fn(f64, f64) -> bool) -> f64 {
    if let Some(i) = lane.iter().position(|v| v.is_nan()) {
        return i as f64;
    }
    let mut best = 0;
    for (i, v) in lane.iter().enumerate() {
        if better(*v, lane[best]) {
            best = i;
        }
    }
    best as f64
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn matmul2(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    let (n, k, m) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    ArrayD::from_shape_fn(IxDyn(&[n, m]), |i| {
        (0..k).map(|t| a[[i[0], t]] * b[[t, i[1]]]).sum()
    })
}

const POOL: [f64; 10] = [
    0.0,
    -0.0,
    1.0,
    -2.5,
    3.0,
    0.5,
    -1.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Lengths adding up to `n`, cut where `cuts` says (every cut of `n - 1` possible ones).
fn composition(n: usize, cuts: u32) -> Vec<usize> {
    if n == 0 {
        return vec![0];
    }
    let mut out = vec![];
    let mut len = 0;
    for i in 0..n {
        len += 1;
        if i + 1 == n || cuts >> (i % 32) & 1 == 1 {
            out.push(len);
            len = 0;
        }
    }
    out
}

#[derive(Debug, Clone)]
struct Case {
    x: ArrayD<f64>,
    chunks: Vec<Vec<usize>>,
    other: Vec<Vec<usize>>,
    axis: usize,
    keep: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(0usize..5, 1..=3),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_flat_map(|(shape, cuts, keep)| {
            let n: usize = shape.iter().product();
            let nd = shape.len();
            (prop::collection::vec(0..POOL.len(), n), 0..nd).prop_map(move |(picks, axis)| {
                let vals: Vec<f64> = picks.iter().map(|p| POOL[*p]).collect();
                let x = ArrayD::from_shape_vec(IxDyn(&shape), vals).unwrap();
                let split = |salt: u64| {
                    shape
                        .iter()
                        .enumerate()
                        .map(|(d, n)| {
                            composition(*n, (cuts.rotate_left(salt as u32 + 7 * d as u32)) as u32)
                        })
                        .collect::<Vec<_>>()
                };
                Case {
                    x,
                    chunks: split(0),
                    other: split(31),
                    axis,
                    keep,
                }
            })
        })
}

fn chunk_text(splits: &[Vec<usize>]) -> String {
    let dims: Vec<String> = splits
        .iter()
        .map(|d| {
            format!(
                "({},)",
                d.iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    format!("({},)", dims.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn elementwise_predicates_and_logic(c in case()) {
        let t = tensor_of(&c.x, &c.chunks);
        let x = &c.x;
        let map = |f: fn(f64) -> bool| Ok(x.mapv(|v| f(v) as u8 as f64));
        check("isnan(x)", &t, map(f64::is_nan))?;
        check("isinf(x)", &t, map(f64::is_infinite))?;
        check("isfinite(x)", &t, map(f64::is_finite))?;
        // Python's precedence: `&` before `^` before `|`, all after comparisons' operands.
        check(
            "(x > 0) & ~isnan(x) | (x == 0) ^ isinf(x)",
            &t,
            map(|v| (v > 0.0 && !v.is_nan()) || ((v == 0.0) != v.is_infinite())),
        )?;
        check("logical_or(logical_not(x), x < 0)", &t, map(|v| v <= 0.0))?;
        check("logical_and(x, True)", &t, map(|v| v != 0.0))?;
        check("~(astype(isfinite(x), 'int64') * 6 ^ 5)", &t,
            Ok(x.mapv(|v| !((v.is_finite() as i64 * 6) ^ 5) as f64)))?;
        check("where(x > 1, x, -x)", &t, Ok(x.mapv(|v| if v > 1.0 { v } else { -v })))?;
        // `where` heading a fused segment (multiply, then a sum along an axis).
        let flipped = x.mapv(|v| (if v > 1.0 { v } else { -v }) * 2.0);
        check(&format!("sum(where(x > 1, x, -x) * 2, axis={})", c.axis), &t,
            Ok(fold(&flipped, c.axis, false, |l| l.iter().sum())))?;
        check("clip(x, -1, 2)", &t, Ok(x.mapv(|v| nan_min(nan_max(v, -1.0), 2.0))))?;
        check("clip(x, None, nan)", &t, Ok(x.mapv(|_| f64::NAN)))?;
        check("x & 1", &t, Err(()))?;
    }

    #[test]
    fn reductions_scans_and_args(c in case()) {
        let t = tensor_of(&c.x, &c.chunks);
        let (x, a, k) = (&c.x, c.axis, c.keep);
        let kw = format!("axis={a}, keepdims={}", if k { "True" } else { "False" });
        check(&format!("all(x, {kw})"), &t,
            Ok(fold(x, a, k, |l| l.iter().all(|v| *v != 0.0) as u8 as f64)))?;
        check(&format!("any(x, {kw})"), &t,
            Ok(fold(x, a, k, |l| l.iter().any(|v| *v != 0.0) as u8 as f64)))?;
        check("all(x)", &t, Ok(ArrayD::from_elem(IxDyn(&[]), x.iter().all(|v| *v != 0.0) as u8 as f64)))?;
        check("any(isnan(x))", &t, Ok(ArrayD::from_elem(IxDyn(&[]), x.iter().any(|v| v.is_nan()) as u8 as f64)))?;
        let empty = x.shape()[a] == 0;
        let arg = |better: fn(f64, f64) -> bool| {
            if empty { Err(()) } else { Ok(fold(x, a, k, |l| arg_extreme(l, better))) }
        };
        check(&format!("argmin(x, {kw})"), &t, arg(|v, b| v < b))?;
        check(&format!("argmax(x, {kw})"), &t, arg(|v, b| v > b))?;
        check(&format!("cumsum(x, axis={a})"), &t, Ok(running(x, a, |p, q| p + q)))?;
        check(&format!("cumprod(x, axis=-{})", x.ndim() - a), &t, Ok(running(x, a, |p, q| p * q)))?;
        let flat = ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.iter().copied().collect()).unwrap();
        check("cumsum(x)", &t, Ok(running(&flat, 0, |p, q| p + q)))?;
        check(&format!("argmax(isnan(x) | (x < 0), axis={a})"), &t, if empty { Err(()) } else {
            Ok(fold(x, a, false, |l| l.iter().position(|v| v.is_nan() || *v < 0.0).unwrap_or(0) as f64))
        })?;
        // Explicit chunk lengths in rechunk, then a tree-combined sum.
        let other = chunk_text(&c.other);
        check(&format!("sum(rechunk(x, {other}), axis={a})"), &t,
            Ok(fold(x, a, false, |l| l.iter().sum())))?;
        check(&format!("rechunk(x, {other})"), &t, Ok(x.clone()))?;
    }

    #[test]
    fn shapes_and_products(c in case()) {
        let t = tensor_of(&c.x, &c.chunks);
        let (x, a, nd) = (&c.x, c.axis, c.x.ndim());
        let shape: Vec<usize> = x.shape().to_vec();
        let perm: Vec<i64> = (0..nd as i64).rev().map(|d| d - nd as i64).collect();
        let perm_text = format!("({},)", perm.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "));
        let reversed = x.clone().reversed_axes();
        check(&format!("transpose(x, {perm_text})"), &t, Ok(reversed.as_standard_layout().into_owned()))?;
        check(&format!("squeeze(expand_dims(x, {a}), {a})"), &t, Ok(x.clone()))?;
        check("expand_dims(x, -1)", &t, Ok(x.clone().insert_axis(Axis(nd))))?;
        let stacked = ndarray::stack(Axis(nd), &[x.view(), x.mapv(|v| -v).view()]).unwrap();
        check("stack((x, -x), axis=-1)", &t, Ok(stacked))?;
        let cut = shape[a] / 2;
        let tail = x.slice_axis(Axis(a), ndarray::Slice::from(cut..)).to_owned();
        check(&format!("split(x, ({cut},), axis={a})[1]"), &t, Ok(tail))?;
        let mut wide = vec![2];
        wide.extend(&shape);
        let wide_text = format!("({},)", wide.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "));
        check(&format!("broadcast_to(x, {wide_text})"), &t,
            Ok(x.broadcast(IxDyn(&wide)).unwrap().to_owned()))?;
        // Products: NaN and inf propagate through sums of products (0 * inf is NaN).
        if nd == 2 {
            let m = x.clone();
            let mt = m.clone().reversed_axes().as_standard_layout().into_owned();
            check("x @ x.T", &t, Ok(matmul2(&m, &mt)))?;
            check("inner(x, x)", &t, Ok(matmul2(&m, &mt)))?;
            check("tensordot(x, x, axes=((0,), (0,)))", &t, Ok(matmul2(&mt, &m)))?;
            if shape[0] > 0 {
                let row = m.slice_axis(Axis(0), ndarray::Slice::from(0..1)).to_owned();
                let v = matmul2(&row, &mt).into_shape_with_order(IxDyn(&[shape[0]])).unwrap();
                check("x[0] @ x.T", &t, Ok(v))?;
            }
        }
        if nd == 3 {
            let batch: Vec<ArrayD<f64>> = (0..shape[0]).map(|i| {
                let m = x.index_axis(Axis(0), i).to_owned();
                let mt = m.clone().reversed_axes().as_standard_layout().into_owned();
                matmul2(&m, &mt)
            }).collect();
            let views: Vec<_> = batch.iter().map(|b| b.view()).collect();
            let want = if views.is_empty() {
                ArrayD::zeros(IxDyn(&[0, shape[1], shape[1]]))
            } else {
                ndarray::stack(Axis(0), &views).unwrap()
            };
            check("x @ transpose(x, (0, -1, -2))", &t, Ok(want))?;
            // Broadcast batches: (b, 1, n, k) @ (b, k, n) is (b, b, n, n), x[i] @ x[j].T.
            let (b, n) = (shape[0], shape[1]);
            let want = ArrayD::from_shape_fn(IxDyn(&[b, b, n, n]), |i| {
                (0..shape[2]).map(|t| x[[i[0], i[2], t]] * x[[i[1], i[3], t]]).sum()
            });
            check("expand_dims(x, 1) @ transpose(x, (0, 2, 1))", &t, Ok(want))?;
        }
    }
}

#[test]
fn linspace_without_endpoint_and_explicit_creation_chunks() {
    let program = "linspace(0, 1, 5, endpoint=False, chunk=((2, 1, 2),))";
    let t = ares_core::expr::evaluate(program).unwrap();
    let got = common::run(&t, &TaskConfig::default(), 1, 2);
    let want = [0.0, 0.2, 0.4, 0.6, 0.8];
    assert!(got.iter_f64().zip(want).all(|(g, w)| same(g, w)), "{got:?}");
    let t = ares_core::expr::evaluate("ones((10, 8), chunk=((2, 3, 5), (4, 4)))").unwrap();
    let graph = Tensor::graph(&[&t]);
    let prepared = ares_core::prepare::prepare(
        &graph,
        &TaskConfig::default(),
        &ares_core::prepare::uniform_cluster(1, 1),
        ares_core::ids::TaskId(1),
    )
    .unwrap();
    assert_eq!(prepared.tiled_chunks, 6);
    for bad in [
        "ones((10, 8), chunk=((2, 3, 4), 4))",
        "ones(4, chunk=((2, 0, 2),))",
    ] {
        let e = ares_core::expr::evaluate(bad).unwrap_err();
        assert!(e.message.contains("add up"), "{bad}: {e}");
    }
    // A length given as a number next to explicit lengths is expanded: bounded first.
    let e = ares_core::expr::evaluate("ones((1, 2**40), chunk=((1,), 1))").unwrap_err();
    assert!(e.message.contains("1099511627776 chunks"), "{e}");
    let e = ares_core::expr::evaluate("split(ones(0), 10**12)").unwrap_err();
    assert!(e.message.contains("exceed the limit"), "{e}");
    let parts = ares_core::expr::evaluate("split(ones((2, 0), chunk=1), 3, axis=1)[2]").unwrap();
    assert_eq!(parts.shape(), &[2, 0]);
    let e = ares_core::expr::evaluate("ones((4, 4), chunk=((2, 2), 0))").unwrap_err();
    assert!(e.message.contains("axis 1 must be at least 1"), "{e}");
}

/// The README documents every function, constant and operator of the language in code
/// (its expression-language table; the file and shuffle functions in their own sections).
#[test]
fn readme_documents_every_function_and_operator() {
    let readme = include_str!("../README.md");
    let spans: Vec<&str> = readme.split('`').skip(1).step_by(2).collect();
    // Words, and dotted names of a namespace (`linalg.qr`).
    let words: std::collections::HashSet<&str> = spans
        .iter()
        .flat_map(|s| s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .chain(
            spans
                .iter()
                .flat_map(|s| s.split(|c: char| !(c.is_ascii_alphanumeric() || "_.".contains(c)))),
        )
        .collect();
    let missing: Vec<&str> = ares_core::expr::FUNCTIONS
        .iter()
        .chain(ares_core::expr::CONSTANTS)
        .copied()
        .filter(|f| !words.contains(f))
        .collect();
    assert!(missing.is_empty(), "not in the README: {missing:?}");
    for (symbol, _) in ares_core::expr::OPERATORS {
        let shown = spans.iter().any(|s| s.split(' ').any(|w| w == *symbol));
        assert!(shown, "operator {symbol} is not in the README");
    }
}
