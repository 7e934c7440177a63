//! Data in and out on a real cluster (a supervisor and two worker processes): `.npy` and Zarr
//! sources and sinks round-trip every dtype bit for bit, paths outside `data.roots` are
//! refused by the supervisor, and bad files fail their task with the file (and, on a worker,
//! the chunk) named while the cluster keeps serving. Input files are written with `npyz`
//! directly and outputs read back with it, independently of ares's own region code.

mod common;
/// The cases, in `tests/io/`: each uses this file's helpers (`use crate::*`).
mod io {
    mod bad_files;
    mod cli;
    mod large_results;
}

use ares::api::{NativeClient, TaskApi};
use ares::protocol::TaskStatus;
use ares_core::array::{ArrayData, DType};
use ares_core::io::{DataRef, Format};
use ares_core::ops::{ChunkSpec, Op, OpArgs};
use ares_core::tensor::{self, Tensor};
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
            .to_zarr(&p(".zarr"), None, ares_core::io::Codec::Zstd { level: 1 })
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

#[test]
fn empty_npy_files_of_any_shape_are_read() {
    let (d, cluster) = common::data_cluster("empty");
    let mut c = cluster.client();
    for shape in [&[0u64][..], &[3, 0], &[0, 4], &[2, 0, 5]] {
        let p = d.join(format!("e{}.npy", shape.len() * 10 + shape[0] as usize));
        write_npy::<f64>(&p, "<f8", shape, false, &[]);
        let x = ares_core::tensor::from_npy(&s(&p), None).unwrap();
        let want: Vec<usize> = shape.iter().map(|n| *n as usize).collect();
        assert_eq!(x.shape(), &want[..]);
        let got = run(&mut c, &x.sum(None, false).unwrap()).unwrap();
        assert_eq!(got.iter_f64().collect::<Vec<_>>(), vec![0.0], "{shape:?}");
    }
}
