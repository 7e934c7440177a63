//! Tensor uploads on a real cluster (a supervisor and two worker processes) over the native
//! protocol (`UploadBegin`/`UploadPiece`/`UploadEnd`) and HTTP (`PUT .../tensor/{name}`):
//! uploaded arrays of each dtype feed later graphs (an `Op::Fetch` of the answer) with the
//! results ndarray computes from the same values; `GET /api/session/{sid}/tensor` lists them
//! until they are freed; too large, out-of-step, idle and abandoned uploads are refused or
//! dropped with their spool files; an unauthenticated peer cannot upload at all. A cluster
//! without `data.roots` uploads too, through the supervisor's private spool directory, which
//! no client graph can name and which goes with the supervisor. A worker dying loses no
//! upload: its chunks are recomputed from the spool file, kept (and counted in
//! `limits.max_spool_bytes`) until the upload is freed.

mod common;

use ares::api::{ApiError, NativeClient, TaskApi, WebTaskApi};
use ares::protocol::{ClientReply, ClientRequest, TaskStatus, UploadedTensor, PROTOCOL_VERSION};
use ares_core::array::ArrayData;
use ares_core::ops::{ChunkSpec, Op};
use ares_core::tensor::Tensor;
use common::cluster::Cluster;
use common::hostile::{assert_closed, raw, receive, send, session};
use ndarray::{ArrayD, Axis, IxDyn};
use npyz::WriterBuilder;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A cluster with the web API, frames of 1 MiB (so uploads take several pieces), uploads
/// capped at 4 MB, and its own data root (where spool files go).
fn cluster(extra_limits: &str) -> (Cluster, PathBuf) {
    let root = tempfile::tempdir().unwrap().keep().canonicalize().unwrap();
    let yaml = format!(
        "web:\n  listen: 127.0.0.1:0\ndata:\n  roots: [{}]\nlimits:\n  max_upload_bytes: 4000000\n{extra_limits}",
        root.display()
    );
    let c = Cluster::start_full(2, 1, "  max_frame_bytes: 1048576\n", &yaml);
    (c, root)
}

fn npy<T: npyz::AutoSerialize + Clone>(descr: &str, shape: &[u64], values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    let ts: npyz::TypeStr = descr.parse().unwrap();
    let mut w = npyz::WriteOptions::<T>::new()
        .dtype(npyz::DType::Plain(ts))
        .shape(shape)
        .writer(&mut out)
        .begin_nd()
        .unwrap();
    w.extend(values.iter().cloned()).unwrap();
    w.finish().unwrap();
    out
}

/// Spool files in the supervisor's spool directories under `base`.
fn spool_files(base: &std::path::Path) -> usize {
    spool_dirs(base, "")
        .iter()
        .map(|d| {
            std::fs::read_dir(d).map_or(0, |e| {
                e.flatten().filter(|f| f.file_name() != ".lock").count()
            })
        })
        .sum()
}

/// The `ares-supervisor-{pid}*` directories under `base`.
fn spool_dirs(base: &std::path::Path, pid: &str) -> Vec<PathBuf> {
    let prefix = format!("ares-supervisor-{pid}");
    std::fs::read_dir(base).map_or(Vec::new(), |d| {
        d.flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect()
    })
}

fn spooled(root: &std::path::Path) -> usize {
    spool_files(&root.join(".ares-uploads"))
}

/// Polls `ok` until it holds (the supervisor acts on its own clock); panics after 30 s.
fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn listed(web: &str, session: &str) -> Vec<String> {
    let v: serde_json::Value = ureq::get(&format!("http://{web}/api/session/{session}/tensor"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Sends one upload request on a raw client connection; its answer, as text.
fn ask(s: &mut std::net::TcpStream, m: ClientRequest) -> Result<String, String> {
    send(s, &[m]);
    match receive::<ClientReply>(s).remove(0) {
        ClientReply::Upload { answer, .. } => answer.map(|a| format!("{a:?}")),
        other => panic!("{other:?}"),
    }
}

/// Runs `expr` with `x` bound to the uploaded tensor; the one result.
fn compute(api: &mut dyn TaskApi, up: &UploadedTensor, expr: &str) -> ArrayData {
    let x = Tensor::new(Op::Fetch, up.fetch.clone(), vec![]).unwrap();
    let t = ares_core::expr::evaluate_with(expr, &[("x".to_string(), x)]).unwrap();
    let task = api
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = api.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{expr}: {info:?}");
    let r = api.fetch(task).unwrap().remove(0);
    api.cancel_task(task).unwrap();
    r
}

fn upload(
    native: &mut NativeClient,
    web: &WebTaskApi,
    over_web: bool,
    name: &str,
    chunk: Option<ChunkSpec>,
    bytes: &[u8],
) -> UploadedTensor {
    if over_web {
        web.upload_npy(name, chunk.as_ref(), bytes.len() as u64, bytes)
            .unwrap()
    } else {
        native
            .upload_npy(Some(name), chunk, bytes.len() as u64, bytes)
            .unwrap()
    }
}

#[test]
fn uploads_feed_later_graphs_over_both_protocols_until_freed() {
    let (cluster, root) = cluster("");
    let web_addr = cluster.web.clone().unwrap();
    let mut native = cluster.client();
    let mut web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "up",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    // 300 × 200 float64: 480 kB in pieces of at most 512 KiB (half a frame), six chunks.
    let f: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.37).sin() * 1e3)
        .collect();
    let fa = ArrayD::from_shape_vec(IxDyn(&[300, 200]), f.clone()).unwrap();
    let i: Vec<i64> = (0..1000).map(|k| k * k - 5000).collect();
    let b: Vec<bool> = (0..4 * 5 * 6).map(|k| k % 3 == 0).collect();
    let ba = ArrayD::from_shape_vec(IxDyn(&[4, 5, 6]), b.clone()).unwrap();
    for over_web in [false, true] {
        let (p, side) = if over_web {
            ("w", "http")
        } else {
            ("n", "native")
        };
        // float64 in explicit uneven chunks: column sums and a scaled copy.
        let chunk = ChunkSpec::Explicit(vec![vec![100, 150, 50], vec![64, 136]]);
        let x = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}f"),
            Some(chunk),
            &npy("<f8", &[300, 200], &f),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &x, "sum(x * 2, axis=0)").to_f64();
        common::assert_close(&ArrayData::F64(got), &(fa.sum_axis(Axis(0)) * 2.0), side);
        let back = compute(api, &x, "x + 0").to_f64();
        assert!(
            back.iter().zip(&f).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{side}"
        );
        // int64 in uniform chunks, bool with the default chunking.
        let xi = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}i"),
            Some(ChunkSpec::Uniform(64)),
            &npy("<i8", &[1000], &i),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &xi, "sum(x)");
        assert_eq!(
            got.get_flat(0).unwrap().as_i64(),
            i.iter().sum::<i64>(),
            "{side}"
        );
        let xb = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}b"),
            None,
            &npy("|b1", &[4, 5, 6], &b),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &xb, "sum(astype(x, 'int64'), axis=2)");
        let want = ba.mapv(|v| v as i64).sum_axis(Axis(2));
        assert_eq!(got, ArrayData::I64(want), "{side}");
        // Listed in their session until freed; freeing unbinds the name and the data.
        let session = if over_web { "up" } else { "default" };
        let names = [format!("{p}b"), format!("{p}f"), format!("{p}i")];
        assert_eq!(listed(&web_addr, session), names, "{side}");
        for t in [&x, &xi, &xb] {
            let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
            api.cancel_task(t.task).unwrap();
        }
        assert!(listed(&web_addr, session).is_empty(), "{side}");
    }
    assert_eq!(spooled(&root), 0, "spool files left behind");

    // Too large: refused by the declared size before anything is spooled, on both sides.
    let big = vec![0u8; 4_000_001];
    let e = native
        .upload_npy(Some("big"), None, big.len() as u64, &big[..])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Upload(m) if m.contains("limits.max_upload_bytes")),
        "{e}"
    );
    let e = web
        .upload_npy("big", None, big.len() as u64, &big[..])
        .unwrap_err();
    assert!(matches!(&e, ApiError::Http { status: 413, .. }), "{e}");
    // Not an .npy: the load fails, naming it, and the connection goes on.
    let e = native
        .upload_npy(Some("junk"), None, 9, &b"not a npy"[..])
        .unwrap_err();
    assert!(e.to_string().contains("not a usable .npy"), "{e}");
    let ok = native.upload_npy(Some("ok"), None, 0, &[][..]).unwrap_err();
    assert!(ok.to_string().contains("not a usable .npy"), "{ok}");
    assert_eq!(spooled(&root), 0);

    // A reader that fails mid-upload: the client ends the upload, which the supervisor drops.
    let bytes = npy("<f8", &[10], &[1.0; 10]);
    let e = native
        .upload_npy(Some("short"), None, bytes.len() as u64 + 100, &bytes[..])
        .unwrap_err(); // the reader ends before the declared size
    assert!(e.to_string().contains("reading the upload"), "{e}");
    assert_eq!(spooled(&root), 0);
    // A client that leaves mid-upload: the spool file goes with its connection.
    let mut s = session(&cluster);
    send(
        &mut s,
        &[ClientRequest::Hello {
            version: PROTOCOL_VERSION,
        }],
    );
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Welcome { .. }
    ));
    send(
        &mut s,
        &[ClientRequest::UploadBegin {
            request: 1,
            name: None,
            chunk: None,
            bytes: 1000,
        }],
    );
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Upload { answer: Ok(_), .. }
    ));
    assert_eq!(spooled(&root), 1);
    drop(s);
    eventually("an abandoned upload's spool file is removed", || {
        spooled(&root) == 0
    });
    // A client that leaves without freeing: its connection's uploads are freed.
    let mut leaving = cluster.client();
    leaving
        .upload_npy(Some("left"), None, bytes.len() as u64, &bytes[..])
        .unwrap();
    assert_eq!(listed(&web_addr, "default"), ["left"]);
    drop(leaving);
    eventually("an abandoned connection's upload is freed", || {
        listed(&web_addr, "default").is_empty()
    });
}

#[test]
fn out_of_step_idle_and_unauthenticated_uploads_go_nowhere() {
    let (cluster, root) = cluster("  upload_idle_timeout_ms: 300\n");
    // Without the client secret no upload message is even read: the connection closes.
    let mut s = raw(&cluster.addr);
    send(
        &mut s,
        &[ClientRequest::UploadBegin {
            request: 1,
            name: None,
            chunk: None,
            bytes: 8,
        }],
    );
    let _ = s.shutdown(std::net::Shutdown::Write);
    assert_closed(s);
    let wrong = ares::protocol::secret::Secret::from_text("not the secret").unwrap();
    assert!(NativeClient::connect_with(&cluster.addr, Duration::from_secs(2), &wrong).is_err());
    assert_eq!(spooled(&root), 0);

    // Authenticated, pieces out of step: each refused, and the upload dropped.
    let mut s = session(&cluster);
    let hello = ClientRequest::Hello {
        version: PROTOCOL_VERSION,
    };
    send(&mut s, &[hello]);
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Welcome { .. }
    ));
    let begin = |bytes| ClientRequest::UploadBegin {
        request: 1,
        name: Some("s".into()),
        chunk: None,
        bytes,
    };
    let piece = |offset, n: usize| ClientRequest::UploadPiece {
        request: 2,
        offset,
        data: vec![0u8; n].into(),
    };
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, begin(16))
        .unwrap_err()
        .contains("already in progress"));
    assert!(ask(&mut s, piece(4, 4))
        .unwrap_err()
        .contains("a piece at byte 4"));
    assert!(ask(&mut s, piece(0, 4))
        .unwrap_err()
        .contains("no upload in progress"));
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, piece(0, 17))
        .unwrap_err()
        .contains("exceed the 16 bytes"));
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, piece(0, 8)).unwrap().contains("Received"));
    assert!(ask(&mut s, ClientRequest::UploadEnd { request: 3 })
        .unwrap_err()
        .contains("after 8 of the 16 bytes"));
    // Pieces sent without waiting for answers are written and answered in order, up to the
    // window the supervisor names; one more than that is refused and drops the upload.
    let ready = ask(&mut s, begin(1000)).unwrap();
    let window: u64 = ready
        .split("window: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" }")
        .parse()
        .unwrap();
    let answers = |s: &mut std::net::TcpStream, n: usize| {
        let mut got = Vec::new();
        while got.len() < n {
            got.extend(receive::<ClientReply>(s).iter().map(|a| format!("{a:?}")));
        }
        got
    };
    let pieces: Vec<ClientRequest> = (0..window).map(|k| piece(k * 8, 8)).collect();
    send(&mut s, &pieces);
    let written = answers(&mut s, window as usize);
    for (k, a) in written.iter().enumerate() {
        assert!(
            a.contains(&format!("received: {}", (k + 1) * 8)),
            "{written:?}"
        );
    }
    // In one frame: one piece is being written, `window` wait, the next is one too many.
    let base = window * 8;
    let pieces: Vec<ClientRequest> = (0..window + 2).map(|k| piece(base + k * 8, 8)).collect();
    send(&mut s, &pieces);
    let refused = answers(&mut s, window as usize + 2);
    assert!(refused.iter().all(|a| a.contains("Err(")), "{refused:?}");
    assert!(refused
        .iter()
        .any(|a| a.contains(&format!("more than {window} pieces waiting"))));
    assert!(ask(&mut s, piece(base, 8))
        .unwrap_err()
        .contains("no upload in progress"));
    // Idle: no piece for upload_idle_timeout_ms drops the upload and its spool file.
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert_eq!(spooled(&root), 1);
    eventually("an idle upload is dropped", || spooled(&root) == 0);
    assert!(ask(&mut s, piece(0, 8))
        .unwrap_err()
        .contains("upload_idle_timeout_ms"));
    // The connection still serves.
    let mut c = cluster.client();
    let bytes = npy("<i8", &[3], &[1i64, 2, 3]);
    let up = c
        .upload_npy(None, None, bytes.len() as u64, &bytes[..])
        .unwrap();
    let got = compute(&mut c, &up, "sum(x)");
    assert_eq!(got.get_flat(0).unwrap().as_i64(), 6);
}

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

/// The worker ids holding the chunks of an upload, as its fetch arguments list them.
fn holders(up: &UploadedTensor) -> Vec<u32> {
    let ares_core::ops::OpArgs::FetchResult { chunks, .. } = &up.fetch else {
        panic!("not a fetch: {:?}", up.fetch);
    };
    let mut w: Vec<u32> = chunks.iter().map(|(_, w)| *w).collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// The live workers as the supervisor lists them: (id such as `w2`, data address, chunks).
fn live_workers(web: &str) -> Vec<(String, String, u64)> {
    let v: serde_json::Value = ureq::get(&format!("http://{web}/api/cluster/nodes"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["alive"] != false)
        .map(|n| {
            (
                n["worker"].as_str().unwrap().to_string(),
                n["data_addr"].as_str().unwrap().to_string(),
                n["stored_chunks"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// SIGKILLs the worker process at `addr` (an index into `addrs`, the order they were added)
/// and waits until the supervisor no longer lists it.
fn kill_worker(nodes: &mut common::nodes::Nodes, addrs: &[String], addr: &str, web: &str) {
    let i = addrs.iter().position(|a| a == addr).unwrap();
    nodes.workers[i].kill().unwrap();
    let _ = nodes.workers[i].wait();
    eventually("the killed worker is dropped", || {
        live_workers(web).iter().all(|(_, a, _)| a != addr)
    });
}

fn exact(got: ArrayData, want: &[f64], what: &str) {
    let got = got.to_f64();
    assert_eq!(got.len(), want.len(), "{what}");
    assert!(
        got.iter()
            .zip(want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{what}: values differ"
    );
}

/// "Nothing is lost": an upload's chunks are recomputed from its spool file when the worker
/// holding them dies, so a later task reading the upload (with the fetch arguments the client
/// got before the death) returns the exact values, over both protocols, while a live worker
/// remains. The spool file stays until the upload is freed, counted in
/// `limits.max_spool_bytes` until then.
#[test]
fn a_worker_dying_loses_no_upload_until_it_is_freed() {
    // 300 × 200 float64 is 480,128 bytes as .npy: two fit in the budget, not three.
    let mut nodes = common::nodes::Nodes::supervisor(
        "  max_frame_bytes: 1048576\n",
        "web:\n  listen: 127.0.0.1:0\nlimits:\n  max_upload_bytes: 4000000\n  max_spool_bytes: 1000000\n",
    );
    let web_addr = nodes.web.clone().unwrap();
    let mut addrs = vec![nodes.add_worker(), nodes.add_worker()];
    eventually("both workers registered", || {
        live_workers(&web_addr).len() == 2
    });
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    let dirs = spool_dirs(&tmp, &format!("{}-", nodes.supervisor.id()));
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let spool = dirs[0].clone();
    let held = || {
        std::fs::read_dir(&spool)
            .unwrap()
            .flatten()
            .filter(|f| f.file_name() != ".lock")
            .count()
    };
    let mut native = nodes.client();
    let mut web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "keep",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let f: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.53).sin() * 1e3)
        .collect();
    let g: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.29).cos() - 7.5)
        .collect();
    let (fb, gb) = (npy("<f8", &[300, 200], &f), npy("<f8", &[300, 200], &g));
    let chunk = || {
        Some(ChunkSpec::Explicit(vec![
            vec![100, 100, 100],
            vec![120, 80],
        ]))
    };
    let xn = native
        .upload_npy(Some("kn"), chunk(), fb.len() as u64, &fb[..])
        .unwrap();
    let xw = web
        .upload_npy("kw", chunk().as_ref(), gb.len() as u64, &gb[..])
        .unwrap();
    assert_eq!(held(), 2, "each held upload keeps its spool file");
    // The budget holds the kept files: a third upload is refused, naming the limit.
    let e = native
        .upload_npy(Some("third"), None, fb.len() as u64, &fb[..])
        .unwrap_err();
    assert!(e.to_string().contains("limits.max_spool_bytes"), "{e}");
    let e = web
        .upload_npy("third", None, gb.len() as u64, &gb[..])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Http { status: 503, .. })
            && e.to_string().contains("limits.max_spool_bytes"),
        "{e}"
    );
    assert_eq!(held(), 2);

    // Round 1: the worker holding the native upload's first chunk dies.
    let id = |w: u32| format!("w{w}");
    let addr_of = |worker: &str| {
        live_workers(&web_addr)
            .into_iter()
            .find(|(w, _, _)| w == worker)
            .map(|(_, a, _)| a)
            .unwrap()
    };
    let victim = addr_of(&id(holders(&xn)[0]));
    let killed = Instant::now();
    kill_worker(&mut nodes, &addrs, &victim, &web_addr);
    exact(
        compute(&mut native, &xn, "x + 0"),
        &f,
        "native, one holder killed",
    );
    let took = killed.elapsed();
    exact(
        compute(&mut web, &xw, "x + 0"),
        &g,
        "http, one holder killed",
    );
    eprintln!(
        "upload survives a holder's SIGKILL: right answer {took:?} after the kill (native; \
         holders {:?} and {:?} of 2 workers)",
        holders(&xn),
        holders(&xw)
    );

    // Round 2: two new workers join, then the one holding every chunk now dies. Two live
    // workers remain, so a read placed on the one not holding a chunk fetches it from where
    // it was recomputed, not from the worker the client's fetch arguments name (dead).
    let survivor = addrs.iter().find(|a| **a != victim).unwrap().clone();
    addrs.push(nodes.add_worker());
    addrs.push(nodes.add_worker());
    eventually("the new workers registered", || {
        live_workers(&web_addr).len() == 3
    });
    let killed = Instant::now();
    kill_worker(&mut nodes, &addrs, &survivor, &web_addr);
    exact(
        compute(&mut web, &xw, "x + 0"),
        &g,
        "http, every holder killed",
    );
    let took = killed.elapsed();
    exact(
        compute(&mut native, &xn, "x + 0"),
        &f,
        "native, every holder killed",
    );
    eprintln!("upload survives losing every chunk: right answer {took:?} after the kill (http)");

    // Freed, the spool file goes and its bytes are free again: two uploads fit once more.
    native.cancel_task(xn.task).unwrap();
    eventually("a cancelled upload's spool file is removed", || held() == 1);
    web.cancel_task(xw.task).unwrap();
    eventually("a released upload's spool file is removed", || held() == 0);
    let again = native
        .upload_npy(Some("again"), None, fb.len() as u64, &fb[..])
        .unwrap();
    web.upload_npy("again", None, gb.len() as u64, &gb[..])
        .unwrap();
    assert_eq!(held(), 2);
    exact(compute(&mut native, &again, "x + 0"), &f, "after freeing");
    // Deleting the session frees its uploads; closing the connection frees the native ones.
    ureq::delete(&format!("http://{web_addr}/api/session/keep"))
        .call()
        .unwrap();
    eventually("a deleted session's upload spool file is removed", || {
        held() == 1
    });
    drop(native);
    eventually("a closed connection's upload spool file is removed", || {
        held() == 0
    });
}
