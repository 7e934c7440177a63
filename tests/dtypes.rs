//! float32 and int32 on a real cluster (a supervisor and two worker processes): data read from
//! `.npy` files written with `npyz`, computed through the expression language, compared with
//! the same computation written here with ndarray in float32/int32 arithmetic. Elementwise
//! float32 results must be bit-identical to NumPy's (each op rounded to float32), int32
//! arithmetic must wrap at 32 bits, reductions follow NumPy's result dtypes (`sum` of int32
//! is int64), and mixing dtypes follows NumPy 2's promotion with NEP 50's weak scalars.
//! The local executor runs every program too, with fusion off, so both kernel paths (the
//! fused block evaluator and the per-op kernels) are held to the same answers.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::config::TaskConfig;
use ares::protocol::TaskStatus;
use ares_core::array::{ArrayData, DType};
use ares_core::ops::ChunkSpec;
use ares_core::tensor::{self, Tensor};
use ndarray::{ArrayD, IxDyn};
use npyz::WriterBuilder;
use std::path::Path;
use std::time::Duration;

const N: usize = 1000;

fn write_npy<T: npyz::AutoSerialize + Clone>(path: &Path, descr: &str, v: &[T]) {
    let ts: npyz::TypeStr = descr.parse().unwrap();
    let mut w = npyz::WriteOptions::new()
        .dtype(npyz::DType::Plain(ts))
        .shape(&[v.len() as u64])
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(v.iter().cloned()).unwrap();
    w.finish().unwrap();
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> Vec<T> {
    npyz::NpyFile::new(std::fs::File::open(path).unwrap())
        .unwrap()
        .into_vec()
        .unwrap()
}

/// float32 values NumPy users meet: -0.0, subnormals, infinities, NaN, large and tiny ones.
fn floats() -> Vec<f32> {
    let special = [
        -0.0,
        f32::MIN_POSITIVE / 3.0,
        f32::INFINITY,
        f32::NAN,
        -1e30,
    ];
    (0..N)
        .map(|i| {
            special
                .get(i % 97)
                .copied()
                .unwrap_or(((i as f32) * 0.37).sin() * 1000.0 + 0.1)
        })
        .collect()
}

/// int32 values near both ends of the range, so arithmetic wraps.
fn ints() -> Vec<i32> {
    (0..N)
        .map(|i| match i % 7 {
            0 => i32::MAX - i as i32,
            1 => i32::MIN + i as i32,
            _ => (i as i32 - 500) * 12345,
        })
        .collect()
}

fn run(c: &mut NativeClient, t: &Tensor) -> ArrayData {
    let task = c.submit_tileable_graph(&Tensor::graph(&[t]), None).unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{:?}", info.error);
    let r = c.fetch(task).unwrap().remove(0);
    c.cancel_task(task).unwrap();
    r
}

/// `program` over `x` (float32) and `i` (int32), on the cluster and on the local executor
/// without fusion.
fn both(c: &mut NativeClient, program: &str, x: &Tensor, i: &Tensor) -> [ArrayData; 2] {
    let vars = [("x".to_string(), x.clone()), ("i".to_string(), i.clone())];
    let t = ares_core::expr::evaluate_with(program, &vars).unwrap();
    let unfused = TaskConfig {
        fuse_enabled: false,
        ..TaskConfig::default()
    };
    [run(c, &t), common::run(&t, &unfused, 2, 2)]
}

fn as_f32(a: &ArrayData) -> Vec<f32> {
    match a {
        ArrayData::F32(v) => v.iter().copied().collect(),
        other => panic!("float32 expected, got {}", other.dtype()),
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    // NaNs compare by being NaN, not by payload.
    v.iter()
        .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
        .collect()
}

#[test]
fn float32_and_int32_compute_as_numpy_on_a_cluster() {
    let (d, cluster) = common::data_cluster("dt");
    let mut c = cluster.client();
    let (f, n) = (floats(), ints());
    write_npy(&d.join("f.npy"), "<f4", &f);
    write_npy(&d.join("i.npy"), "<i4", &n);
    let spec = || Some(ChunkSpec::from(128usize));
    let x = tensor::from_npy("dt/f.npy", spec()).unwrap();
    let i = tensor::from_npy("dt/i.npy", spec()).unwrap();
    assert_eq!((x.dtype(), i.dtype()), (DType::F32, DType::I32));

    // Elementwise float32 chains: every op rounded to float32, as NumPy's loops do; the
    // Python float 0.1 meets float32 data as float32(0.1) (NEP 50).
    type Chain = (&'static str, fn(f32) -> f32);
    let chains: [Chain; 4] = [
        ("x * 1.5 + 0.1", |v| v * 1.5 + 0.1f32),
        ("sqrt(abs(x)) / 3", |v| v.abs().sqrt() / 3.0),
        ("-(x - 0.1) * x", |v| -(v - 0.1f32) * v),
        // NumPy's maximum propagates NaN (Rust's f32::max does not).
        // NumPy squares for `** 2`: the correctly rounded float32 square.
        ("maximum(x, 2.5) ** 2", |v| {
            let m = if v.is_nan() { v } else { v.max(2.5) };
            (m as f64 * m as f64) as f32
        }),
    ];
    for (program, f32_op) in chains {
        let want: Vec<f32> = f.iter().map(|v| f32_op(*v)).collect();
        for got in both(&mut c, program, &x, &i) {
            assert_eq!(bits(&as_f32(&got)), bits(&want), "{program}");
        }
    }

    // int32 wraps at 32 bits; a weak Python int keeps int32, a float gives float64.
    for got in both(&mut c, "i * 3 + 7", &x, &i) {
        let want: Vec<i32> = n
            .iter()
            .map(|v| v.wrapping_mul(3).wrapping_add(7))
            .collect();
        assert_eq!(
            got,
            ArrayData::I32(ArrayD::from_shape_vec(IxDyn(&[N]), want).unwrap())
        );
    }
    for got in both(&mut c, "i + 0.5", &x, &i) {
        assert_eq!(got.dtype(), DType::F64);
        let want: Vec<f64> = n.iter().map(|v| *v as f64 + 0.5).collect();
        assert_eq!(got.iter_f64().collect::<Vec<_>>(), want);
    }

    // Reductions: sum of int32 is int64 and exact; max keeps int32.
    let total: i64 = n.iter().map(|v| *v as i64).sum();
    for got in both(&mut c, "sum(i)", &x, &i) {
        assert_eq!(got, ArrayData::I64(ArrayD::from_elem(IxDyn(&[]), total)));
    }
    for got in both(&mut c, "max(i)", &x, &i) {
        let want = *n.iter().max().unwrap();
        assert_eq!(got, ArrayData::I32(ArrayD::from_elem(IxDyn(&[]), want)));
    }

    // float32 statistics (the non-finite and huge values replaced by 0): float32 results,
    // close to float64's.
    let clean: Vec<f64> = f
        .iter()
        .map(|v| {
            if v.is_finite() && v.abs() < 1e20 {
                *v as f64
            } else {
                0.0
            }
        })
        .collect();
    let mean = clean.iter().sum::<f64>() / N as f64;
    let var = clean.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / N as f64;
    let y = "y = where(isfinite(x) & (abs(x) < 1e20), x, 0); ";
    for (stat, want) in [
        ("mean(y)", mean),
        ("var(y)", var),
        ("sum(y)", mean * N as f64),
    ] {
        for got in both(&mut c, &format!("{y}{stat}"), &x, &i) {
            assert_eq!(got.dtype(), DType::F32, "{stat}");
            let g = got.get_flat(0).unwrap().as_f64();
            assert!(
                (g - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{stat}: {g} vs {want}"
            );
        }
    }

    // Lone reductions of float32 chunks (streamed, accumulated in float64), whole and
    // along an axis, on finite data: float32 results within float32 rounding of float64's.
    let g: Vec<f32> = (0..N).map(|k| ((k as f32) * 0.731).cos() * 50.0).collect();
    write_npy(&d.join("g.npy"), "<f4", &g);
    let gx = tensor::from_npy("dt/g.npy", spec()).unwrap();
    let col = |k: usize| -> Vec<f64> { (0..40).map(|r| g[r * 25 + k] as f64).collect() };
    for (program, want) in [
        ("sum(x)", vec![g.iter().map(|v| *v as f64).sum::<f64>()]),
        (
            "max(x)",
            vec![g.iter().fold(f64::MIN, |m, v| m.max(*v as f64))],
        ),
        (
            "sum(reshape(x, (40, 25)), axis=0)",
            (0..25).map(|k| col(k).iter().sum()).collect(),
        ),
        (
            "min(reshape(x, (40, 25)), axis=0)",
            (0..25)
                .map(|k| col(k).into_iter().fold(f64::MAX, f64::min))
                .collect(),
        ),
    ] {
        for got in both(&mut c, program, &gx, &i) {
            assert_eq!(got.dtype(), DType::F32, "{program}");
            for (k, (g, w)) in got.iter_f64().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "{program} [{k}]: {g} vs {w}"
                );
            }
        }
    }

    // Sorting float32 keeps every value (NaN last), in float32.
    let mut sorted = f.clone();
    sorted.sort_by(|a, b| {
        a.partial_cmp(b)
            .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
    });
    for got in both(&mut c, "sort(x)", &x, &i) {
        assert_eq!(bits(&as_f32(&got)), bits(&sorted));
    }

    // Mixing: float32 with int32 data is float64 (NumPy's table), exact here.
    for got in both(&mut c, "x + i", &x, &i) {
        assert_eq!(got.dtype(), DType::F64);
        for (k, g) in got.iter_f64().enumerate() {
            let want = f[k] as f64 + n[k] as f64;
            assert!(g == want || (g.is_nan() && want.is_nan()), "x + i [{k}]");
        }
    }

    // A Python int that does not fit int32 is refused when the graph is built.
    let vars = [("i".to_string(), i.clone())];
    let e = ares_core::expr::evaluate_with("i + 2**40", &vars).unwrap_err();
    assert!(e.to_string().contains("out of bounds for int32"), "{e}");

    // Written back by the workers, bit for bit, in the same dtypes.
    run(&mut c, &(x.to_npy("dt/f.out.npy").unwrap()));
    run(&mut c, &(i.to_npy("dt/i.out.npy").unwrap()));
    assert_eq!(bits(&read_npy::<f32>(&d.join("f.out.npy"))), bits(&f));
    assert_eq!(read_npy::<i32>(&d.join("i.out.npy")), n);
    let z = x
        .to_zarr("dt/f.zarr", None, ares_core::io::Codec::Zstd { level: 1 })
        .unwrap();
    run(&mut c, &z);
    let back = tensor::from_zarr("dt/f.zarr", Some(ChunkSpec::from(300usize))).unwrap();
    assert_eq!(bits(&as_f32(&run(&mut c, &back))), bits(&f));
}

/// gemm's float32 kernels, on blocks spread over two workers, against a float64 product of
/// the same values (float32 rounding bounded by the sum of the terms' magnitudes).
#[test]
fn float32_matmul_matches_a_float64_product() {
    let (d, cluster) = common::data_cluster("mm");
    let mut c = cluster.client();
    let (m, k, n) = (70usize, 50usize, 40usize);
    let a: Vec<f32> = (0..m * k)
        .map(|t| ((t * 37) % 101) as f32 / 7.0 - 6.0)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|t| ((t * 13) % 29) as f32 * 0.3 - 4.0)
        .collect();
    write_npy(&d.join("a.npy"), "<f4", &a);
    write_npy(&d.join("b.npy"), "<f4", &b);
    let vars = [
        ("a".to_string(), tensor::from_npy("mm/a.npy", None).unwrap()),
        ("b".to_string(), tensor::from_npy("mm/b.npy", None).unwrap()),
    ];
    let program =
        "rechunk(reshape(a, (70, 50)), (16, 16)) @ rechunk(reshape(b, (50, 40)), (16, 8))";
    let t = ares_core::expr::evaluate_with(program, &vars).unwrap();
    let got = run(&mut c, &t);
    assert_eq!((got.dtype(), got.shape()), (DType::F32, &[m, n][..]));
    let got = as_f32(&got);
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|t| a[i * k + t] as f64 * b[t * n + j] as f64);
            let (want, scale) = terms.fold((0.0, 0.0), |(s, z), v| (s + v, z + v.abs()));
            let g = got[i * n + j] as f64;
            assert!(
                (g - want).abs() <= 1e-6 * scale,
                "[{i}, {j}]: {g} vs {want}"
            );
        }
    }
    // 4 MB float32 blocks (sent between the workers as whole-chunk frames): the cluster's
    // answer is the local executor's, bit for bit.
    let big = "a = astype(rand((2000, 2000), chunk=1000, seed=1), 'float32'); sum(a @ a.T)";
    let t = ares_core::expr::evaluate(big).unwrap();
    let local = common::run(&t, &TaskConfig::default(), 1, 2);
    assert_eq!(local.dtype(), DType::F32);
    assert_eq!(run(&mut c, &t), local);
}
