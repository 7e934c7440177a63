//! Where the supervisor spools uploads: a private directory (under `data.upload_spool`, the
//! first data root, or the temp dir) that no client graph can name and that goes with it.

use crate::*;

/// A directory that looks like a spool directory, with a lock file: one nobody holds (its
/// supervisor died) and one this test holds (a live supervisor's).
fn planted_spools(base: &std::path::Path) -> (PathBuf, PathBuf, std::fs::File) {
    let tag = format!("{:x}", rand::random::<u64>());
    let dead = base.join(format!("ares-supervisor-0-dead{tag}"));
    let live = base.join(format!("ares-supervisor-0-live{tag}"));
    for d in [&dead, &live] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join(".lock"), b"").unwrap();
        std::fs::write(d.join("0-x.npy"), b"x").unwrap();
    }
    let lock = std::fs::File::options()
        .write(true)
        .open(live.join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    (dead, live, lock)
}

/// Stops the supervisor with SIGTERM and waits for it to exit (10 s at most).
fn stop_supervisor(cluster: &mut Cluster) {
    let sup = &mut cluster.nodes[0];
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &sup.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let start = Instant::now();
    while sup.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "supervisor still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn without_data_roots_uploads_spool_privately_and_clients_cannot_name_the_spool() {
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    let (dead, live, lock) = planted_spools(&tmp);
    // No data.roots anywhere: the shipped config's case.
    let yaml = "web:\n  listen: 127.0.0.1:0\nlimits:\n  max_upload_bytes: 4000000\n";
    let mut cluster = Cluster::start_full(2, 1, "  max_frame_bytes: 1048576\n", yaml);
    let pid = cluster.nodes[0].id().to_string();
    let dirs = spool_dirs(&tmp, &format!("{pid}-"));
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let spool = dirs[0].clone();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&spool).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", spool.display());
    // A dead supervisor's spool was swept at start; a live one's was left alone.
    assert!(!dead.exists(), "{}", dead.display());
    assert!(live.join("0-x.npy").exists());
    drop(lock);
    std::fs::remove_dir_all(&live).unwrap();

    let web_addr = cluster.web.clone().unwrap();
    let mut native = cluster.client();
    let mut web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "noroot",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let f: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.71).cos() * 7.0)
        .collect();
    let i: Vec<i64> = (0..1000).map(|k| 3 * k - 1700).collect();
    for over_web in [false, true] {
        let side = if over_web { "http" } else { "native" };
        let chunk = ChunkSpec::Explicit(vec![vec![120, 180], vec![50, 150]]);
        let x = upload(
            &mut native,
            &web,
            over_web,
            "f",
            Some(chunk),
            &npy("<f8", &[300, 200], &f),
        );
        let xi = upload(
            &mut native,
            &web,
            over_web,
            "i",
            Some(ChunkSpec::Uniform(99)),
            &npy("<i8", &[1000], &i),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let back = compute(api, &x, "x + 0").to_f64();
        assert!(
            back.iter().zip(&f).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{side}"
        );
        let got = compute(api, &xi, "sum(x)");
        assert_eq!(
            got.get_flat(0).unwrap().as_i64(),
            i.iter().sum::<i64>(),
            "{side}"
        );
        for t in [&x, &xi] {
            api.cancel_task(t.task).unwrap();
        }
        let left: Vec<_> = std::fs::read_dir(&spool)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, [".lock"], "{side}");
    }

    // A client graph naming a spool file (the internal source form) is refused over both
    // protocols, before the supervisor reads anything.
    std::fs::write(spool.join("9-planted.npy"), npy("<i8", &[3], &[1i64, 2, 3])).unwrap();
    let data = ares_core::io::DataRef {
        format: ares_core::io::Format::Spool,
        path: spool.join("9-planted.npy").display().to_string(),
        shape: [3usize][..].into(),
        dtype: ares_core::array::DType::I64,
    };
    let args = ares_core::ops::OpArgs::Source {
        data: Box::new(data),
        chunk: ChunkSpec::Uniform(3),
    };
    let t = Tensor::new(Op::FromNpy, args, vec![]).unwrap();
    let graph = Tensor::graph(&[&t.sum(None, false).unwrap()]);
    let e = native.submit_tileable_graph(&graph, None).unwrap_err();
    assert!(e.to_string().contains("upload spool file"), "{e}");
    let e = web.submit_tileable_graph(&graph, None).unwrap_err();
    assert!(
        matches!(&e, ApiError::Http { status: 400, .. })
            && e.to_string().contains("upload spool file"),
        "{e}"
    );
    std::fs::remove_file(spool.join("9-planted.npy")).unwrap();

    // The spool directory goes with the supervisor.
    stop_supervisor(&mut cluster);
    assert!(!spool.exists(), "{} left behind", spool.display());
}

#[test]
fn data_upload_spool_chooses_where_the_spool_directory_is_made() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let (dead, live, _lock) = planted_spools(&base_path);
    let yaml = format!("data:\n  upload_spool: {}\n", base_path.display());
    let mut cluster = Cluster::start_with(1, 1, &yaml);
    let pid = cluster.nodes[0].id().to_string();
    assert_eq!(spool_dirs(&base_path, &format!("{pid}-")).len(), 1);
    assert!(!dead.exists() && live.exists());
    let mut c = cluster.client();
    let bytes = npy("<i8", &[4], &[5i64, 6, 7, 8]);
    let up = c
        .upload_npy(None, None, bytes.len() as u64, &bytes[..])
        .unwrap();
    assert_eq!(
        compute(&mut c, &up, "sum(x)").get_flat(0).unwrap().as_i64(),
        26
    );
    assert_eq!(
        spool_files(&base_path),
        2,
        "the planted live spool's file, and the held upload's (kept until it is freed)"
    );
    stop_supervisor(&mut cluster);
    assert!(spool_dirs(&base_path, &format!("{pid}-")).is_empty());
}
