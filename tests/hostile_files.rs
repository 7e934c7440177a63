//! Hostile data files (issue "Hostile data files"): a file inside `data.roots` is as hostile as
//! a frame from the network. Each test runs the real `ares run` binary (an embedded cluster:
//! a supervisor and workers over loopback TCP, its data root the current directory) on files
//! built here, and checks the refusal, its message, and that nothing outside the root was read
//! or written. The rows of RELIABILITY.md ("Hostile data files") come from these tests.

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `ares run ARGS` in `dir` with a deadline; (success, stdout, stderr).
fn ares_run(dir: &Path, args: &[&str], deadline: Duration) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ares"))
        .arg("run")
        .args(["--workers", "1"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "ares run {args:?} still running after {deadline:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    (
        status.success(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn must_succeed(dir: &Path, args: &[&str]) -> String {
    let (ok, out, err) = ares_run(dir, args, Duration::from_secs(60));
    assert!(ok, "ares run {args:?}: {err}");
    out
}

/// A root and a directory beside it that is outside it.
fn root_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let (root, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    (d, root, outside)
}

/// Zarr chunk files and chunk directories that are links to an array outside the roots: the
/// read fails naming the link, and the outside values (a sum of 7s) never come back.
#[test]
fn zarr_chunks_linked_outside_the_roots_are_refused() {
    let (_d, root, outside) = root_and_outside();
    let write = |dir: &Path, fill: &str, name: &str| {
        must_succeed(
            dir,
            &[
                "--expr",
                &format!("full(10, {fill}, chunk=10)"),
                "--output",
                name,
            ],
        );
    };
    write(&outside, "7.0", "secret.zarr");
    write(&root, "1.0", "file.zarr");
    write(&root, "1.0", "dir.zarr");
    assert!(must_succeed(&root, &["--input", "x=file.zarr", "--expr", "sum(x)"]).contains("10"));
    // The chunk file `c/0`, then the directory `c`, replaced by links outside the root.
    let chunk = root.join("file.zarr/c/0");
    std::fs::remove_file(&chunk).unwrap();
    symlink(outside.join("secret.zarr/c/0"), &chunk).unwrap();
    let c = root.join("dir.zarr/c");
    std::fs::remove_dir_all(&c).unwrap();
    symlink(outside.join("secret.zarr/c"), &c).unwrap();
    for store in ["file.zarr", "dir.zarr"] {
        let t = Instant::now();
        let (ok, out, err) = ares_run(
            &root,
            &["--input", &format!("x={store}"), "--expr", "sum(x)"],
            Duration::from_secs(60),
        );
        eprintln!("{store}: refused in {:?}", t.elapsed());
        assert!(!ok, "{store}: read through the link: {out}");
        assert!(
            !out.contains("70"),
            "{store}: outside bytes returned: {out}"
        );
        assert!(
            err.contains(store) && err.contains("symbolic link"),
            "{store}: {err}"
        );
    }
}

/// A Zarr store whose metadata is larger than 1 MiB is refused before it is read whole.
#[test]
fn oversized_zarr_metadata_is_refused() {
    let (_d, root, _) = root_and_outside();
    must_succeed(
        &root,
        &["--expr", "ones(10, chunk=10)", "--output", "big.zarr"],
    );
    let meta = root.join("big.zarr/zarr.json");
    let mut json = std::fs::read_to_string(&meta).unwrap();
    json.push_str(&" ".repeat(2 << 20));
    std::fs::write(&meta, json).unwrap();
    let (ok, _, err) = ares_run(
        &root,
        &["--input", "x=big.zarr", "--expr", "sum(x)"],
        Duration::from_secs(60),
    );
    assert!(!ok);
    assert!(
        err.contains("zarr.json") && err.contains("larger than"),
        "{err}"
    );
}

/// A 264-byte header nesting lists 60 deep (the general parser took 47 s at depth 22 and
/// doubled per level): refused in well under a second, saying what is accepted.
#[test]
fn a_nested_npy_header_is_refused_at_once() {
    let (_d, root, _) = root_and_outside();
    let mut dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': {}1{}, }}",
        "[".repeat(60),
        "]".repeat(60)
    );
    dict.push_str(&" ".repeat(63 - (10 + dict.len()) % 64));
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((dict.len() as u16).to_le_bytes());
    bytes.extend(dict.as_bytes());
    bytes.extend([0u8; 8]);
    std::fs::write(root.join("nested.npy"), &bytes).unwrap();
    let t = Instant::now();
    let (ok, _, err) = ares_run(
        &root,
        &["--input", "x=nested.npy", "--expr", "sum(x)"],
        Duration::from_secs(20),
    );
    let took = t.elapsed();
    eprintln!("nested header ({} bytes): refused in {took:?}", bytes.len());
    assert!(!ok);
    assert!(
        err.contains("nested.npy") && err.contains("accepts only the dict NumPy writes"),
        "{err}"
    );
    // The whole run, a cluster started and stopped included.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A FIFO named `x.npy` (and a FIFO as a Zarr chunk): refused as not a regular file, no hang.
#[test]
fn fifos_are_refused_without_hanging() {
    let (_d, root, _) = root_and_outside();
    let mkfifo = |p: &Path| {
        let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
        assert!(ok, "mkfifo {}", p.display());
    };
    mkfifo(&root.join("x.npy"));
    must_succeed(
        &root,
        &["--expr", "ones(10, chunk=10)", "--output", "f.zarr"],
    );
    let chunk = root.join("f.zarr/c/0");
    std::fs::remove_file(&chunk).unwrap();
    mkfifo(&chunk);
    for (input, name) in [("x=x.npy", "x.npy"), ("x=f.zarr", "f.zarr")] {
        let t = Instant::now();
        let (ok, _, err) = ares_run(
            &root,
            &["--input", input, "--expr", "sum(x)"],
            Duration::from_secs(20),
        );
        eprintln!("{name}: refused in {:?}", t.elapsed());
        assert!(!ok);
        assert!(err.contains(name) && err.contains("is a FIFO"), "{err}");
    }
}

/// Peak resident memory of the finished children of this test process, in MiB (the largest
/// of them: `ares run` is one process holding the supervisor and the workers).
fn children_peak_rss_mib() -> u64 {
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a live, writable `rusage`.
    let status = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(status, 0);
    usage.ru_maxrss as u64 / 1024
}

/// A gzip chunk of 1,000 float64 (8 kB) replaced by a 1 MB stream inflating to 1 GiB, and a
/// zstd chunk replaced by a sparse 1 TB file: both refused at once, naming the chunk and the
/// bound, with the process far below the bomb's size (the gzip bomb took a worker to 2.1 GB,
/// the sparse file to 7.2 GB and growing).
#[test]
fn decompression_bombs_and_sparse_chunks_are_refused() {
    use std::io::Write;
    let (_d, root, _) = root_and_outside();
    must_succeed(
        &root,
        &[
            "--expr",
            "to_zarr(ones(1000, chunk=1000), 'g.zarr', codec='gzip')",
        ],
    );
    must_succeed(
        &root,
        &[
            "--expr",
            "to_zarr(ones(1000, chunk=1000), 'z.zarr', codec='zstd')",
        ],
    );
    assert!(must_succeed(&root, &["--input", "x=g.zarr", "--expr", "sum(x)"]).contains("1000"));
    // 1 GiB of zeros, gzipped: about 1 MB.
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        bomb.write_all(&zeros).unwrap();
    }
    let bomb = bomb.finish().unwrap();
    eprintln!("gzip bomb: {} bytes inflating to 1 GiB", bomb.len());
    std::fs::write(root.join("g.zarr/c/0"), &bomb).unwrap();
    let sparse = std::fs::File::create(root.join("z.zarr/c/0")).unwrap();
    sparse.set_len(1 << 40).unwrap();
    drop(sparse);
    for (store, expect) in [
        ("g.zarr", "decompresses to more than"),
        ("z.zarr", "is larger than this array's chunks can encode to"),
    ] {
        let t = Instant::now();
        let (ok, out, err) = ares_run(
            &root,
            &["--input", &format!("x={store}"), "--expr", "sum(x)"],
            Duration::from_secs(60),
        );
        let peak = children_peak_rss_mib();
        eprintln!(
            "{store}: refused in {:?}; peak RSS of the runs so far {peak} MiB",
            t.elapsed()
        );
        assert!(!ok, "{store}: {out}");
        assert!(
            err.contains(store) && err.contains(expect),
            "{store}: {err}"
        );
        assert!(peak < 512, "{store}: a run reached {peak} MiB");
    }
}

/// `--output out.npy` where the partial file `.out.npy.ares-partial` is a link to another file
/// in the root: refused, the linked file unchanged, not renamed away.
#[test]
fn a_linked_partial_output_file_is_refused_and_its_target_untouched() {
    let (_d, root, _) = root_and_outside();
    let precious = root.join("precious.dat");
    std::fs::write(&precious, b"keep me").unwrap();
    symlink(&precious, root.join(".out.npy.ares-partial")).unwrap();
    std::fs::create_dir(root.join("z")).unwrap();
    symlink(root.join("z"), root.join(".out.zarr.ares-partial")).unwrap();
    for out in ["out.npy", "out.zarr"] {
        let (ok, _, err) = ares_run(
            &root,
            &["--expr", "ones(10, chunk=5)", "--output", out],
            Duration::from_secs(60),
        );
        assert!(!ok, "{out}");
        assert!(err.contains("symbolic link"), "{out}: {err}");
        assert!(!root.join(out).exists(), "{out}");
    }
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    assert_eq!(std::fs::read_dir(root.join("z")).unwrap().count(), 0);
    // A stale partial that is a regular file is replaced, and the output is written 0644.
    std::fs::remove_file(root.join(".out.npy.ares-partial")).unwrap();
    std::fs::write(root.join(".out.npy.ares-partial"), b"stale").unwrap();
    must_succeed(
        &root,
        &["--expr", "ones(10, chunk=5)", "--output", "out.npy"],
    );
    let m = std::fs::symlink_metadata(root.join("out.npy")).unwrap();
    assert!(m.is_file() && m.len() > 80, "{m:?}");
}

/// Spill directories are created fresh, 0700 (a pre-created 0777 `worker-<pid>-N` is not
/// adopted), and spill files are 0600.
#[test]
fn spill_directories_are_private_and_never_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let cfg = dir.path().join("run.yml");
    std::fs::write(
        &cfg,
        format!(
            "worker:\n  memory_limit: 16MiB\n  spill_dir: {}\n",
            spill.display()
        ),
    )
    .unwrap();
    let program = "x = rand(8388608, chunk=262144, seed=3); y = x - mean(x); sum(y * y) / 8388608";
    let mut child = Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(["run", "--workers", "1", "--config", cfg.to_str().unwrap()])
        .args(["--expr", program])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Plant world-writable directories under the names the worker will pick first (the
    // embedded workers run in this process). Planting races the worker's start; what was
    // planted in time must stay unused.
    let pid = child.id();
    let planted: Vec<PathBuf> = (0..4)
        .map(|n| spill.join(format!("worker-{pid}-{n}")))
        .filter(|p| {
            std::fs::create_dir(p).is_ok()
                && std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).is_ok()
        })
        .collect();
    eprintln!(
        "planted {} of 4 directories before the worker started",
        planted.len()
    );
    let (mut dir_modes, mut file_modes) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the job did not finish");
        for d in std::fs::read_dir(&spill).unwrap().flatten() {
            if planted.contains(&d.path()) {
                continue;
            }
            if let Ok(m) = d.metadata() {
                dir_modes.push(m.mode() & 0o777);
            }
            for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
                if let Ok(m) = f.metadata() {
                    file_modes.push(m.mode() & 0o777);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Adopted, a planted directory would have held spill files and been removed at exit.
    for p in &planted {
        let untouched = std::fs::read_dir(p).is_ok_and(|d| d.count() == 0);
        assert!(untouched, "{} was adopted", p.display());
    }
    eprintln!(
        "saw {} directory and {} file observations",
        dir_modes.len(),
        file_modes.len()
    );
    assert!(
        !dir_modes.is_empty() && !file_modes.is_empty(),
        "nothing spilled"
    );
    let octal = |v: &[u32]| v.iter().map(|m| format!("{m:o}")).collect::<Vec<_>>();
    assert!(
        dir_modes.iter().all(|m| *m == 0o700),
        "{:?}",
        octal(&dir_modes)
    );
    assert!(
        file_modes.iter().all(|m| *m == 0o600),
        "{:?}",
        octal(&file_modes)
    );
}
