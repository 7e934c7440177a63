//! Bad files fail their task with the file (and, on a worker, the chunk) named, while the
//! cluster keeps serving.

use crate::*;

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
    // float16, which ares has no dtype for (every integer dtype is read since branch dtypes).
    let mut f16 = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
    let header = format!("{header:<117}\n");
    f16.extend_from_slice(&(header.len() as u16).to_le_bytes());
    f16.extend_from_slice(header.as_bytes());
    f16.extend_from_slice(&[0, 60, 0, 64, 0, 66]);
    std::fs::write(d.join("f16.npy"), f16).unwrap();
    let e = tensor::from_npy("bad/f16.npy", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("f16.npy") && e.contains("unsupported dtype"),
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
            ares_core::io::Codec::Zstd { level: 1 },
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
            z.to_zarr("bad/fresh.zarr", None, ares_core::io::Codec::None)
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
