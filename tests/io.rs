//! Data in and out on a real cluster (a supervisor and two worker processes): `.npy` and Zarr
//! sources and sinks round-trip every dtype bit for bit, paths outside `data.roots` are
//! refused by the supervisor, and bad files fail their task with the file (and, on a worker,
//! the chunk) named while the cluster keeps serving. Input files are written with `npyz`
//! directly and outputs read back with it, independently of ares's own region code.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::array::{ArrayData, DType};
use ares::io::{DataRef, Format};
use ares::ops::{ChunkSpec, Op, OpArgs};
use ares::protocol::TaskStatus;
use ares::tensor::{self, Tensor};
use common::cluster::Cluster;
use npyz::WriterBuilder;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn run(c: &mut NativeClient, t: &Tensor) -> Result<ArrayData, String> {
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[t]), None)
        .map_err(|e| e.to_string())?;
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    match info.status {
        TaskStatus::Succeeded => {
            let r = c.fetch(task).unwrap().remove(0);
            c.cancel_task(task).unwrap();
            Ok(r)
        }
        _ => Err(info.error.unwrap_or_else(|| format!("{:?}", info.status))),
    }
}

fn write_npy<T: npyz::AutoSerialize + Clone>(
    path: &Path,
    descr: &str,
    shape: &[u64],
    fortran: bool,
    v: &[T],
) {
    let ts: npyz::TypeStr = descr.parse().unwrap();
    let order = if fortran {
        npyz::Order::Fortran
    } else {
        npyz::Order::C
    };
    let mut w = npyz::WriteOptions::new()
        .dtype(npyz::DType::Plain(ts))
        .shape(shape)
        .order(order)
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(v.iter().cloned()).unwrap();
    w.finish().unwrap();
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, Vec<T>) {
    let f = npyz::NpyFile::new(std::fs::File::open(path).unwrap()).unwrap();
    assert_eq!(f.order(), npyz::Order::C);
    (f.shape().to_vec(), f.into_vec().unwrap())
}

fn floats(n: usize) -> Vec<f64> {
    // Awkward values: negative zero, subnormals, infinities, NaN payloads, large magnitudes.
    let special = [
        -0.0,
        f64::MIN_POSITIVE / 3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff8_dead_beef_0001),
    ];
    (0..n)
        .map(|i| {
            special
                .get(i % 11)
                .copied()
                .unwrap_or((i as f64 * 1.37e-3).sin() * 1e10)
        })
        .collect()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn npy_and_zarr_round_trip_every_dtype_bit_for_bit() {
    let (d, cluster) = common::data_cluster("rt");
    let mut c = cluster.client();
    let f = floats(37 * 11);
    let ints: Vec<i64> = (0..23 * 5)
        .map(|i| (i as i64 - 50) * 0x0123_4567_89ab)
        .collect();
    let bools: Vec<bool> = (0..9 * 7).map(|i| i % 3 == 0 || i % 5 == 1).collect();
    write_npy(&d.join("f.npy"), "<f8", &[37, 11], false, &f);
    write_npy(&d.join("i.npy"), "<i8", &[23, 5], false, &ints);
    write_npy(&d.join("b.npy"), "|b1", &[9, 7], false, &bools);
    for (name, chunk) in [("f", [5usize, 4]), ("i", [7, 2]), ("b", [4, 3])] {
        // .npy → ares (blocks that are not whole rows) → .npy
        let p = |f: &str| format!("rt/{name}{f}");
        let x = tensor::from_npy(&p(".npy"), Some(ChunkSpec::from(chunk))).unwrap();
        let written = run(&mut c, &x.to_npy(&p(".out.npy")).unwrap()).unwrap();
        // → Zarr (ares's chunks) → ares with another chunking → .npy
        let z = x
            .to_zarr(&p(".zarr"), None, ares::io::Codec::Zstd { level: 1 })
            .unwrap();
        run(&mut c, &z).unwrap();
        let back = tensor::from_zarr(&p(".zarr"), Some(ChunkSpec::from([3usize, 3]))).unwrap();
        run(&mut c, &back.to_npy(&p(".back.npy")).unwrap()).unwrap();
        let bytes = written.get_flat(0).unwrap().as_i64() as usize;
        match name {
            "f" => {
                assert_eq!(bytes, f.len() * 8);
                for out in ["f.out.npy", "f.back.npy"] {
                    let (shape, got) = read_npy::<f64>(&d.join(out));
                    assert_eq!(shape, [37, 11]);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&f), "{out}");
                }
            }
            "i" => {
                assert_eq!(bytes, ints.len() * 8);
                for out in ["i.out.npy", "i.back.npy"] {
                    assert_eq!(
                        read_npy::<i64>(&d.join(out)),
                        (vec![23, 5], ints.clone()),
                        "{out}"
                    );
                }
            }
            _ => {
                assert_eq!(bytes, bools.len());
                for out in ["b.out.npy", "b.back.npy"] {
                    assert_eq!(
                        read_npy::<bool>(&d.join(out)),
                        (vec![9, 7], bools.clone()),
                        "{out}"
                    );
                }
            }
        }
    }
    // Fortran order and big-endian files read right; a computation on them matches ndarray.
    let v: Vec<f64> = (0..6 * 4).map(|i| i as f64 * 0.5).collect();
    write_npy(&d.join("fortran.npy"), "<f8", &[6, 4], true, &v);
    write_npy(
        &d.join("big.npy"),
        ">i8",
        &[24],
        false,
        &(0..24).map(|i| i * 1000).collect::<Vec<i64>>(),
    );
    let fx = tensor::from_npy("rt/fortran.npy", Some(ChunkSpec::from([4usize, 3]))).unwrap();
    let got = run(&mut c, &fx).unwrap().to_f64();
    // Fortran order: element (i, j) is v[i + 6 j].
    let want = ndarray::Array2::from_shape_fn((6, 4), |(i, j)| v[i + 6 * j]).into_dyn();
    assert_eq!(got, want);
    let big = tensor::from_npy(&s(&d.join("big.npy")), Some(ChunkSpec::from(5usize))).unwrap();
    let total = run(&mut c, &big.sum(None, false).unwrap()).unwrap();
    assert_eq!(
        total.get_flat(0).unwrap().as_i64(),
        (0..24).sum::<i64>() * 1000
    );
}

/// A source the client did not check: as a graph built by hand or by another client.
fn unchecked_source(path: &str, shape: &[usize], dtype: DType) -> Tensor {
    let data = DataRef {
        format: Format::Npy,
        path: path.into(),
        shape: shape.into(),
        dtype,
    };
    Tensor::new(
        Op::FromNpy,
        OpArgs::Source {
            data: Box::new(data),
            chunk: ChunkSpec::Uniform(4),
        },
        vec![],
    )
    .unwrap()
}

#[test]
fn paths_outside_the_roots_are_refused_by_the_supervisor() {
    let (root, cluster) = common::data_cluster("paths");
    // A sibling of this process's root, outside every root.
    let other = tempfile::tempdir().unwrap();
    let outside = other.path().canonicalize().unwrap();
    write_npy(&outside.join("secret.npy"), "<f8", &[8], false, &[1.0; 8]);
    std::os::unix::fs::symlink(outside.join("secret.npy"), root.join("link.npy")).unwrap();
    let escape = format!(
        "paths/../../{}/secret.npy",
        outside.file_name().unwrap().to_str().unwrap()
    );
    write_npy(
        &root.join("../elsewhere.npy"),
        "<f8",
        &[8],
        false,
        &[1.0; 8],
    );
    let mut c = cluster.client();
    // The client refuses them when building...
    for p in [
        s(&outside.join("secret.npy")),
        escape.clone(),
        "paths/link.npy".into(),
    ] {
        let e = tensor::from_npy(&p, None).expect_err("refused");
        assert!(
            e.to_string().contains(&p) && e.to_string().contains("outside the data roots"),
            "{e}"
        );
    }
    let e = tensor::ones(&[4], 2)
        .unwrap()
        .to_npy(&escape.replace("secret", "new"))
        .expect_err("refused");
    assert!(e.to_string().contains("new.npy"), "{e}");
    // ...and the supervisor refuses graphs that carry them anyway; nothing is written.
    for p in [
        s(&outside.join("secret.npy")),
        s(&root.join("link.npy")),
        s(&root.join("..").join(&escape)),
        // Inside this process's root but not the cluster's: only the supervisor can tell.
        s(&root.join("../elsewhere.npy")),
    ] {
        let e = run(&mut c, &unchecked_source(&p, &[8], DType::F64)).unwrap_err();
        assert!(
            e.contains("outside the data roots") && e.contains(&p),
            "{p}: {e}"
        );
    }
    let data = DataRef {
        format: Format::Npy,
        path: s(&outside.join("written.npy")),
        shape: [4usize][..].into(),
        dtype: DType::F64,
    };
    let sink = Tensor::new(
        Op::ToNpy,
        OpArgs::Sink {
            data: Box::new(data),
            chunk: Default::default(),
        },
        vec![tensor::ones(&[4], 2).unwrap()],
    )
    .unwrap();
    let e = run(&mut c, &sink).unwrap_err();
    assert!(e.contains("outside the data roots"), "{e}");
    assert!(!outside.join("written.npy").exists());
    // Still serving.
    let ok = tensor::ones(&[10], 3).unwrap().sum(None, false).unwrap();
    assert_eq!(
        run(&mut c, &ok).unwrap().get_flat(0).unwrap().as_f64(),
        10.0
    );
}

fn zarr_chunk_file(array: &Path) -> PathBuf {
    // zarr v3 default chunk key encoding: c/0/0
    array.join("c").join("0").join("0")
}

#[test]
fn bad_files_fail_their_task_naming_file_and_chunk() {
    let (d, cluster) = common::data_cluster("bad");
    let mut c = cluster.client();
    write_npy(&d.join("ok.npy"), "<f8", &[20, 3], false, &floats(60));
    // A file truncated after the expression was built: the supervisor sees it when tiling.
    let x = tensor::from_npy("bad/ok.npy", Some(ChunkSpec::from(5usize))).unwrap();
    std::fs::copy(d.join("ok.npy"), d.join("short.npy")).unwrap();
    let short = tensor::from_npy("bad/short.npy", None).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("short.npy"))
        .unwrap();
    f.set_len(200).unwrap();
    let e = run(&mut c, &short).unwrap_err();
    assert!(e.contains("short.npy") && e.contains("truncated"), "{e}");
    // Corrupt header, missing file, unsupported dtype: refused when the expression is built.
    std::fs::write(
        d.join("junk.npy"),
        b"\x93NUMPY\x01\x00\x10\x00{'descr': <<<<<<}\n",
    )
    .unwrap();
    let e = tensor::from_npy("bad/junk.npy", None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("junk.npy") && e.contains("corrupt"), "{e}");
    let e = tensor::from_npy("bad/missing.npy", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("missing.npy") && e.contains("no such file"),
        "{e}"
    );
    write_npy(&d.join("u16.npy"), "<u2", &[3], false, &[1u16, 2, 3]);
    let e = tensor::from_npy("bad/u16.npy", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("u16.npy") && e.contains("unsupported dtype"),
        "{e}"
    );
    // A graph claiming another shape than the file has.
    let e = run(
        &mut c,
        &unchecked_source(&s(&d.join("ok.npy")), &[7], DType::F64),
    )
    .unwrap_err();
    assert!(
        e.contains("ok.npy") && e.contains("expression was built for"),
        "{e}"
    );
    // A corrupt Zarr chunk: only the worker reading it finds out; the error names the file and
    // the chunk.
    run(
        &mut c,
        &x.to_zarr(
            "bad/z.zarr",
            Some(ChunkSpec::from([10usize, 3])),
            ares::io::Codec::Zstd { level: 1 },
        )
        .unwrap(),
    )
    .unwrap();
    std::fs::write(zarr_chunk_file(&d.join("z.zarr")), b"definitely not zstd").unwrap();
    let z = tensor::from_zarr("bad/z.zarr", None).unwrap();
    let e = run(&mut c, &z.sum(None, false).unwrap()).unwrap_err();
    assert!(e.contains("z.zarr") && e.contains("failed on chunk"), "{e}");
    // A sink whose task fails leaves no complete-looking file at its path: a file written
    // before stays as it was, a new path stays absent (writers write under a hidden partial
    // name, renamed only once every chunk is written).
    run(&mut c, &x.to_npy("bad/kept.npy").unwrap()).unwrap();
    let kept = std::fs::read(d.join("kept.npy")).unwrap();
    for (sink, path) in [
        (z.to_npy("bad/kept.npy").unwrap(), "kept.npy"),
        (z.to_npy("bad/fresh.npy").unwrap(), "fresh.npy"),
        (
            z.to_zarr("bad/fresh.zarr", None, ares::io::Codec::None)
                .unwrap(),
            "fresh.zarr",
        ),
    ] {
        let e = run(&mut c, &sink).unwrap_err();
        assert!(e.contains("z.zarr") && e.contains("failed on chunk"), "{e}");
        if path == "kept.npy" {
            assert_eq!(std::fs::read(d.join(path)).unwrap(), kept);
        } else {
            assert!(!d.join(path).exists(), "{path} left behind");
        }
    }
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(bits(read_npy(&d.join("kept.npy")).1), bits(floats(60)));
    // An unsupported codec in the metadata.
    let meta = std::fs::read_to_string(d.join("z.zarr/zarr.json")).unwrap();
    std::fs::create_dir_all(d.join("odd.zarr")).unwrap();
    std::fs::write(
        d.join("odd.zarr/zarr.json"),
        meta.replace("\"zstd\"", "\"lz5\""),
    )
    .unwrap();
    let e = tensor::from_zarr("bad/odd.zarr", None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("odd.zarr") && e.contains("lz5"), "{e}");
    // blosc (zarr-python's usual default) is not built in: the error names it.
    std::fs::create_dir_all(d.join("blosc.zarr")).unwrap();
    let mut blosc: serde_json::Value = serde_json::from_str(&meta).unwrap();
    blosc["codecs"][1] = serde_json::json!({"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0}});
    std::fs::write(d.join("blosc.zarr/zarr.json"), blosc.to_string()).unwrap();
    let e = tensor::from_zarr("bad/blosc.zarr", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("blosc.zarr") && e.contains("codec blosc is not supported"),
        "{e}"
    );
    // An unsupported data type.
    std::fs::create_dir_all(d.join("f16.zarr")).unwrap();
    std::fs::write(
        d.join("f16.zarr/zarr.json"),
        meta.replace("\"float64\"", "\"float16\""),
    )
    .unwrap();
    let e = tensor::from_zarr("bad/f16.zarr", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("f16.zarr") && e.contains("unsupported data type"),
        "{e}"
    );
    // The nodes keep serving.
    write_npy(
        &d.join("n.npy"),
        "<i8",
        &[60],
        false,
        &(0..60).collect::<Vec<i64>>(),
    );
    let n = tensor::from_npy("bad/n.npy", Some(ChunkSpec::from(7usize))).unwrap();
    let total = run(&mut c, &n.sum(None, false).unwrap()).unwrap();
    assert_eq!(total.get_flat(0).unwrap().as_i64(), 1770);
}

#[test]
fn results_larger_than_a_frame_stream_over_both_protocols() {
    // Frames of 1 MiB; the tensors are 3.2 MB (float64) and 400 kB (bool, in 64 kB chunks).
    let dir = common::data_root().canonicalize().unwrap().join("frames");
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = format!(
        "web:\n  listen: 127.0.0.1:0\ndata:\n  roots: [{}]\n",
        dir.display()
    );
    let cluster = Cluster::start_full(2, 1, "  max_frame_bytes: 1048576\n", &yaml);
    let mut c = cluster.client();
    // Native: a 400 × 1000 float64 result (3.2 MB) comes back whole, part by part.
    let x = ares::expr::evaluate("rand(400, 1000, chunk=(64, 300), seed=7) * 3").unwrap();
    let got = run(&mut c, &x).unwrap();
    let want = common::run(&x, &Default::default(), 1, 1);
    assert_eq!(got, want);
    // HTTP: upload an .npy larger than a frame, use it, download results as .npy.
    let mut web = ares::api::WebTaskApi::connect(
        &format!("http://{}", cluster.web.as_ref().unwrap()),
        "up",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let values: Vec<f64> = (0..500 * 800).map(|i| (i as f64).sqrt() - 300.0).collect();
    write_npy(&dir.join("big.npy"), "<f8", &[500, 800], false, &values);
    let answer = web
        .put_tensor(
            "big",
            Some("60,800"),
            std::fs::File::open(dir.join("big.npy")).unwrap(),
        )
        .unwrap();
    assert_eq!(answer["shape"], serde_json::json!([500, 800]));
    assert_eq!(
        answer["bytes"],
        std::fs::metadata(dir.join("big.npy")).unwrap().len()
    );
    let mut npy = Vec::new();
    web.get_tensor_npy("big", &mut npy).unwrap();
    let f = npyz::NpyFile::new(&npy[..]).unwrap();
    assert_eq!(f.shape(), &[500, 800]);
    let back: Vec<f64> = f.into_vec().unwrap();
    assert!(back
        .iter()
        .zip(&values)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // The uploaded tensor in an expression of the session, named, then downloaded.
    let agent = ureq::agent();
    let base_url = format!("http://{}/api/session/up", cluster.web.as_ref().unwrap());
    let r: serde_json::Value = agent
        .post(&format!("{base_url}/task"))
        .send_json(serde_json::json!({"expr": "big > 0", "name": "pos"}))
        .unwrap()
        .into_json()
        .unwrap();
    let tid = r["task_id"].as_u64().unwrap();
    agent
        .get(&format!("{base_url}/task/{tid}?action=wait&timeout=60"))
        .call()
        .unwrap();
    let mut npy = Vec::new();
    web.get_tensor_npy("pos", &mut npy).unwrap();
    let f = npyz::NpyFile::new(&npy[..]).unwrap();
    let pos: Vec<bool> = f.into_vec().unwrap();
    let want: Vec<bool> = values.iter().map(|v| *v > 0.0).collect();
    assert_eq!(pos, want);
    // The json and raw formats assemble a result in the supervisor: refused above half a
    // frame (400 kB of bool fits; 3.2 MB of float64 does not), pointing to ?format=npy.
    let r: serde_json::Value = agent
        .get(&format!("{base_url}/task/{tid}/result?format=json"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(r["shape"], serde_json::json!([500, 800]));
    let r: serde_json::Value = agent
        .post(&format!("{base_url}/task"))
        .send_json(serde_json::json!({"expr": "big * 2"}))
        .unwrap()
        .into_json()
        .unwrap();
    let big = r["task_id"].as_u64().unwrap();
    agent
        .get(&format!("{base_url}/task/{big}?action=wait&timeout=60"))
        .call()
        .unwrap();
    for format in ["json", "raw"] {
        match agent
            .get(&format!("{base_url}/task/{big}/result?format={format}"))
            .call()
        {
            Err(ureq::Error::Status(413, r)) => {
                let text = r.into_string().unwrap();
                assert!(text.contains("format=npy"), "{text}");
            }
            other => panic!("{format}: {:?}", other.map(|r| r.status())),
        }
    }
    // The TaskApi fetch over HTTP streams the same result as .npy.
    let fetched = web.fetch(ares::ids::TaskId(tid as u32)).unwrap().remove(0);
    assert_eq!(fetched.shape(), &[500, 800]);
    assert!(matches!(&fetched, ArrayData::Bool(a) if a.iter().copied().eq(want.iter().copied())));
    // Bad uploads: not an .npy, a bad name, an unknown session; the spool is cleaned up.
    let e = web
        .put_tensor("junk", None, &b"not an npy at all"[..])
        .unwrap_err();
    assert!(e.to_string().contains("not a usable .npy"), "{e}");
    let e = web.put_tensor("1bad", None, &b""[..]).unwrap_err();
    assert!(e.to_string().contains("invalid tensor name"), "{e}");
    let missing = agent.get(&format!("{base_url}/tensor/nothing")).call();
    assert!(matches!(missing, Err(ureq::Error::Status(404, _))));
    let spooled = std::fs::read_dir(dir.join(".ares-uploads"))
        .unwrap()
        .count();
    assert_eq!(spooled, 0, "spool files left behind");
}

/// Runs `ares run ARGS` in `dir` (its embedded cluster's data root); stdout on success.
fn ares_run(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ares run {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// numpy → .npy and Zarr (v3 and v2) → `ares run --input ... --output ...` → numpy, bit
/// for bit for each dtype. Needs python3 with numpy (and zarr for the Zarr half); skipped,
/// saying so, without them.
#[test]
fn numpy_files_round_trip_through_the_cli_bit_for_bit() {
    if !python_has("numpy") {
        eprintln!("SKIPPED numpy_files_round_trip_through_the_cli_bit_for_bit: python3 with numpy is not available");
        return;
    }
    let zarr = python_has("zarr");
    if !zarr {
        eprintln!("numpy_files_round_trip_through_the_cli_bit_for_bit: zarr-python is not available: Zarr half skipped");
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let make = r#"
import sys, numpy as np
rng = np.random.default_rng(5)
f = rng.standard_normal((41, 13)) * 1e300
f.flat[:6] = [-0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]
arrays = {"f": f, "i": rng.integers(-2**63, 2**63 - 1, (17, 9), dtype=np.int64),
          "b": rng.random((23, 5)) < 0.4}
for k, a in arrays.items():
    np.save(k + ".npy", a)
np.save("fortran.npy", np.asfortranarray(f))
if sys.argv[1] == "zarr":
    import zarr
    for k, a in arrays.items():
        z = zarr.create_array(k + "3.zarr", shape=a.shape, chunks=(7, 4), dtype=a.dtype)
        z[:] = a
        z = zarr.open_array(k + "2.zarr", mode="w", shape=a.shape, chunks=(6, 5), dtype=a.dtype, zarr_format=2)
        z[:] = a
"#;
    let check = r#"
import sys, numpy as np
def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.float64:
        return np.array_equal(a.view(np.uint64), b.view(np.uint64))
    return np.array_equal(a, b)
bad = []
for k in "fib":
    want = np.load(k + ".npy")
    outs = [k + ".out.npy"] + (["fortran.out.npy"] if k == "f" else [])
    for o in outs:
        if not same(np.load(o), want): bad.append(o)
    if sys.argv[1] == "zarr":
        import zarr
        for o in [k + "3.out.npy", k + "2.out.npy"]:
            if not same(np.load(o), want): bad.append(o)
        if not same(zarr.open_array(k + ".out.zarr")[:], want): bad.append(k + ".out.zarr")
print("BAD", bad) if bad else print("OK")
"#;
    let mode = if zarr { "zarr" } else { "npy" };
    let py = |script: &str| {
        let out = std::process::Command::new("python3")
            .args(["-c", script, mode])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    py(make);
    for k in ["f", "i", "b"] {
        let input = format!("x={k}.npy");
        // Chunks that cut rows, so writers place blocks, not whole rows.
        ares_run(
            d,
            &[
                "--input",
                &input,
                "--expr",
                "rechunk(x, (5, 3))",
                "--output",
                &format!("{k}.out.npy"),
            ],
        );
        if zarr {
            for v in ["3", "2"] {
                let input = format!("x={k}{v}.zarr");
                ares_run(
                    d,
                    &[
                        "--input",
                        &input,
                        "--expr",
                        "x",
                        "--output",
                        &format!("{k}{v}.out.npy"),
                    ],
                );
            }
            let out = ares_run(
                d,
                &[
                    "--input",
                    &input,
                    "--expr",
                    "x",
                    "--output",
                    &format!("{k}.out.zarr"),
                    "--json",
                ],
            );
            assert!(out.contains("\"format\":\"zarr\""), "{out}");
        }
    }
    ares_run(
        d,
        &[
            "--input",
            "x=fortran.npy",
            "--expr",
            "x",
            "--output",
            "fortran.out.npy",
        ],
    );
    assert_eq!(py(check).trim(), "OK");
}

#[test]
fn explain_checks_a_sink_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(["explain", "--expr", "to_npy(ones(40, chunk=10), 'e.npy')"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("to_npy"));
    assert!(!dir.path().join("e.npy").exists());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(["explain", "--expr", "to_npy(ones(4), '../e.npy')"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside the data roots"));
}

#[test]
fn empty_npy_files_of_any_shape_are_read() {
    let (d, cluster) = common::data_cluster("empty");
    let mut c = cluster.client();
    for shape in [&[0u64][..], &[3, 0], &[0, 4], &[2, 0, 5]] {
        let p = d.join(format!("e{}.npy", shape.len() * 10 + shape[0] as usize));
        write_npy::<f64>(&p, "<f8", shape, false, &[]);
        let x = ares::tensor::from_npy(&s(&p), None).unwrap();
        let want: Vec<usize> = shape.iter().map(|n| *n as usize).collect();
        assert_eq!(x.shape(), &want[..]);
        let got = run(&mut c, &x.sum(None, false).unwrap()).unwrap();
        assert_eq!(got.iter_f64().collect::<Vec<_>>(), vec![0.0], "{shape:?}");
    }
}
