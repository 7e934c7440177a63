//! The web API's bounds (RELIABILITY.md, "Web API bounds"): DNS rebinding without a token,
//! idle connections, superseded uploads, sessions, large JSON results and TLS files. Each
//! test starts real processes on loopback and checks `/api/health` still answers.

use crate::*;
use common::http::raw_get;
use std::io::{Read, Write};
use std::time::Instant;

/// Row 12: without a token, a request naming another host (DNS rebinding) is refused with
/// 403 naming `web.token`, in `Host` or in `Origin`; loopback names with the port pass.
#[test]
fn without_a_token_only_local_host_names_are_served() {
    let cluster = Cluster::start_with(1, 1, "web:\n  listen: 127.0.0.1:0\n");
    let web = cluster.web.clone().unwrap();
    let port = web.rsplit_once(':').unwrap().1;
    for host in [
        "attacker.example".to_string(),
        format!("attacker.example:{port}"),
        "127.0.0.1:1".to_string(),
    ] {
        let (code, answer) = raw_get(&web, "/api/session", &format!("Host: {host}\r\n"));
        assert_eq!(code, 403, "{host}: {answer}");
        assert!(
            answer.contains("forbidden_host") && answer.contains("web.token"),
            "{answer}"
        );
    }
    let (code, answer) = raw_get(
        &web,
        "/api/session",
        &format!("Host: 127.0.0.1:{port}\r\nOrigin: http://attacker.example:{port}\r\n"),
    );
    assert_eq!(code, 403, "{answer}");
    for (host, origin) in [
        (format!("127.0.0.1:{port}"), None),
        (
            format!("localhost:{port}"),
            Some(format!("http://localhost:{port}")),
        ),
        (format!("[::1]:{port}"), None),
    ] {
        let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
        let (code, answer) = raw_get(&web, "/api/session", &format!("Host: {host}\r\n{origin}"));
        assert_eq!(code, 200, "{host}: {answer}");
    }
    // Clients that name the address they connect to (ureq here) are served.
    assert_eq!(Http::of(&cluster, None).get("/api/session").0, 200);
}

/// `/api/health` answers within `within`; the time it took.
pub fn health_within(web: &str, within: Duration) -> Duration {
    let start = Instant::now();
    let mut s = std::net::TcpStream::connect(web).unwrap();
    s.set_read_timeout(Some(within)).unwrap();
    s.write_all(
        format!("GET /api/health HTTP/1.1\r\nHost: {web}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 200") && took <= within,
        "health after {took:?}: {text:?}"
    );
    took
}

/// Row 11: 40 idle connections (nothing sent) against `web.max_connections: 16`: each is
/// closed after `web.request_timeout_ms`, `/api/health` answers within 1 s, the RPC port
/// still serves; an upload whose body stalls fails after `web.idle_timeout_ms`.
#[test]
fn idle_connections_and_stalled_uploads_cannot_hold_the_web_port() {
    let cluster = Cluster::start_with(
        1,
        1,
        "web:\n  listen: 127.0.0.1:0\n  max_connections: 16\n  request_timeout_ms: 200\n  idle_timeout_ms: 500\n",
    );
    let web = cluster.web.clone().unwrap();
    let idle: Vec<_> = (0..40)
        .map(|_| std::net::TcpStream::connect(&web).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    let took = health_within(&web, Duration::from_secs(1));
    eprintln!("health with 40 idle connections over a cap of 16: {took:?}");
    // Every idle connection is closed by the server (at most a 408 first).
    let start = Instant::now();
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        match s.read_to_end(&mut got) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("an idle connection stayed open: {e}"),
        }
        let got = String::from_utf8_lossy(&got);
        assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "{got}");
    }
    eprintln!("all 40 idle connections closed {:?} later", start.elapsed());
    // A stalled upload: its head and 100 of 1,000,000 body bytes, then nothing.
    let mut up = std::net::TcpStream::connect(&web).unwrap();
    up.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let started = Instant::now();
    up.write_all(
        format!(
            "PUT /api/session/default/tensor/stalled HTTP/1.1\r\nHost: {web}\r\nContent-Length: 1000000\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();
    up.write_all(&[0u8; 100]).unwrap();
    let mut answer = Vec::new();
    let _ = up.read_to_end(&mut answer);
    let stalled = started.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    eprintln!("stalled upload answered after {stalled:?}");
    assert!(
        answer.starts_with("HTTP/1.1 408") && answer.contains("web.idle_timeout_ms"),
        "{answer}"
    );
    assert!(stalled < Duration::from_secs(3), "{stalled:?}");
    health_within(&web, Duration::from_secs(1));
    let mut c = cluster.client();
    let t = c
        .submit_tileable_graph(
            &ares_core::tensor::Tensor::graph(&[&ares_core::expr::evaluate(
                "sum(arange(100, chunk=7))",
            )
            .unwrap()]),
            None,
        )
        .unwrap();
    assert_eq!(
        c.wait_task(t, Duration::from_secs(30)).unwrap().status,
        TaskStatus::Succeeded
    );
}

/// An `.npy` of `n` float64 values.
fn npy_f64(n: usize) -> Vec<u8> {
    let header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}");
    let pad = 64 - (10 + header.len() + 1) % 64;
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend(((header.len() + pad + 1) as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    for i in 0..n {
        out.extend((i as f64).to_le_bytes());
    }
    out
}

/// Row 8: uploading the same name again frees the previous upload at once: its task leaves
/// the tensor and task listings and its spool file is removed; the name reads the last one.
#[test]
fn re_uploading_a_name_frees_the_previous_upload() {
    let spool = tempfile::tempdir().unwrap();
    let cluster = Cluster::start_with(
        1,
        1,
        &format!(
            "web:\n  listen: 127.0.0.1:0\ndata:\n  upload_spool: {}\n",
            spool.path().display()
        ),
    );
    let web = format!("http://{}", cluster.web.as_ref().unwrap());
    let api = Http::of(&cluster, None);
    let spool_files = || {
        std::fs::read_dir(spool.path())
            .unwrap()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .filter(|f| f.file_name().to_string_lossy().ends_with(".npy"))
            .count()
    };
    let mut ids = Vec::new();
    for round in 0..4 {
        let r = ureq::put(&format!("{web}/api/session/default/tensor/a?chunk=500"))
            .send_bytes(&npy_f64(1000 + round))
            .unwrap();
        assert_eq!(r.status(), 201);
        let body: Value = r.into_json().unwrap();
        ids.push(body["task_id"].as_u64().unwrap());
        let tensors = api.get("/api/session/default/tensor").1;
        assert_eq!(
            tensors["tensors"],
            json!([{"name": "a", "task_id": ids[round], "shape": [1000 + round], "dtype": "float64"}]),
            "{tensors}"
        );
        // The superseded uploads' tasks are gone, at once.
        let tasks = api.get("/api/session/default/task").1;
        let listed: Vec<u64> = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task"].as_u64().unwrap())
            .collect();
        for old in &ids[..round] {
            assert!(!listed.contains(old), "task {old} still listed: {listed:?}");
        }
        assert!(listed.contains(&ids[round]), "{listed:?}");
    }
    // Freed on the workers too: one spool file left (the cancel removes it promptly).
    let deadline = Instant::now() + Duration::from_secs(5);
    while spool_files() > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(spool_files(), 1);
    let sum = api.send(
        "POST",
        "/api/session/default/task",
        Some(json!({"expr": "sum(a)"})),
    );
    assert_eq!(sum.0, 201, "{sum:?}");
    let t = sum.1["task_id"].as_u64().unwrap();
    api.get(&format!(
        "/api/session/default/task/{t}?action=wait&timeout=30"
    ));
    let result = api.get(&format!("/api/session/default/task/{t}/result")).1;
    assert_eq!(result["data"], json!(1002.0 * 1003.0 / 2.0), "{result}");
}

/// Row 13: `web.max_sessions: 3` refuses a fourth session (429 naming the key), `default`
/// aside; a session unused for `web.session_idle_timeout_ms` is deleted with its tasks,
/// while one in use stays.
#[test]
fn sessions_are_limited_and_idle_ones_expire() {
    let cluster = Cluster::start_with(
        1,
        1,
        "web:\n  listen: 127.0.0.1:0\n  max_sessions: 3\n  session_idle_timeout_ms: 600\n",
    );
    let api = Http::of(&cluster, None);
    for s in ["s1", "s2", "s3"] {
        assert_eq!(api.send("PUT", &format!("/api/session/{s}"), None).0, 200);
    }
    // Idempotent for an existing one; refused for a fourth.
    assert_eq!(api.send("PUT", "/api/session/s3", None).0, 200);
    let refused = api.send("PUT", "/api/session/s4", None);
    assert_error(refused.clone(), 429, "too_many_sessions");
    assert!(
        refused.1["detail"]
            .as_str()
            .unwrap()
            .contains("web.max_sessions"),
        "{refused:?}"
    );
    let done = api.send(
        "POST",
        "/api/session/s1/task",
        Some(json!({"expr": "ones(1000, chunk=100) * 2", "name": "x"})),
    );
    assert_eq!(done.0, 201, "{done:?}");
    let t = done.1["task_id"].as_u64().unwrap();
    api.get(&format!("/api/session/s1/task/{t}?action=wait&timeout=30"));
    // s2 stays in use; s1 and s3 go idle.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1500) {
        assert_eq!(api.get("/api/session/s2/task").0, 200);
        std::thread::sleep(Duration::from_millis(100));
    }
    let sessions = api.get("/api/session").1;
    let mut names: Vec<&str> = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["default", "s2"], "{sessions}");
    assert_error(
        api.get(&format!("/api/session/s1/task/{t}")),
        404,
        "not_found",
    );
    // Its result was freed on the worker (as reported by its heartbeats).
    let deadline = Instant::now() + Duration::from_secs(3);
    let held = || api.get("/api/cluster/nodes").1["nodes"][0]["stored_chunks"].clone();
    while held() != json!(0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(held(), json!(0));
    // Room again.
    assert_eq!(api.send("PUT", "/api/session/s4", None).0, 200);
    assert_eq!(api.get("/api/health").0, 200);
}

/// Row 13: a TLS key that is not the certificate's stops the supervisor at startup with one
/// line naming both keys and exit code 1, no panic and no backtrace (even with
/// `RUST_BACKTRACE=1`).
#[test]
fn a_mismatched_tls_key_is_a_one_line_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, other) = (
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
        dir.path().join("other.pem"),
    );
    for args in [
        vec![
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            key.to_str().unwrap(),
            "-out",
            cert.to_str().unwrap(),
        ],
        vec![
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            other.to_str().unwrap(),
        ],
    ] {
        let made = std::process::Command::new("openssl")
            .args(&args)
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
    }
    let config = dir.path().join("c.yml");
    std::fs::write(
        &config,
        format!(
            "cluster:\n  listen: 127.0.0.1:0\nweb:\n  listen: 127.0.0.1:0\n  tls_cert: {}\n  tls_key: {}\n",
            cert.display(),
            other.display()
        ),
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("ares")
        .unwrap()
        .env("RUST_BACKTRACE", "1")
        .args(["node", "--role", "supervisor", "--config"])
        .arg(&config)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("web.tls_key")
            && err.contains("not the private key")
            && !err.contains("panicked"),
        "{err}"
    );
}

/// `VmHWM` (peak resident set) of a process, in kB.
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Row 6: `?format=json` of a 16 MB result (2·10^6 float64 in 8 chunks) is streamed band by
/// band: the whole answer is right, and the supervisor's peak RSS grows by less than 4
/// times the result (assembled as a JSON tree it grew about 22 times; what grows now is one
/// band in its encoded, decoded and assembled forms, a piece of text, and what mimalloc keeps
/// for its 1 s purge delay).
#[test]
fn a_large_json_result_is_streamed_in_bounded_memory() {
    let cluster = Cluster::start_with(1, 1, "web:\n  listen: 127.0.0.1:0\n");
    let api = Http::of(&cluster, None);
    let n = 2_000_000u64;
    let (code, body) = api.send(
        "POST",
        "/api/session/default/task",
        Some(json!({"expr": format!("arange({n}, chunk=250000) * 1.5")})),
    );
    assert_eq!(code, 201, "{body}");
    let t = body["task_id"].as_u64().unwrap();
    let done = api
        .get(&format!(
            "/api/session/default/task/{t}?action=wait&timeout=60"
        ))
        .1;
    assert_eq!(done["status"], "succeeded", "{done}");
    let pid = cluster.nodes[0].id();
    let before = peak_kb(pid);
    let started = Instant::now();
    let r = ureq::get(&format!(
        "http://{}/api/session/default/task/{t}/result?format=json",
        cluster.web.as_ref().unwrap()
    ))
    .call()
    .unwrap();
    let content_type = r.header("content-type").map(str::to_string);
    let mut text = Vec::new();
    r.into_reader().read_to_end(&mut text).unwrap();
    let took = started.elapsed();
    let grew = peak_kb(pid).saturating_sub(before);
    eprintln!(
        "json of {} MB: {} MB of text in {took:?}; supervisor peak RSS {} MB -> +{} MB",
        (n * 8) >> 20,
        text.len() >> 20,
        before >> 10,
        grew >> 10
    );
    assert_eq!(content_type.as_deref(), Some("application/json"));
    let v: Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(v["shape"], json!([n]));
    assert_eq!(v["dtype"], "float64");
    let data = v["data"].as_array().unwrap();
    assert_eq!(data.len() as u64, n);
    assert_eq!(data[0], json!(0.0));
    assert_eq!(data[1_999_999], json!(1_999_999.0 * 1.5));
    assert!(
        grew < 64 << 10,
        "the supervisor grew {grew} kB for a 16 MB result"
    );
    health_within(cluster.web.as_ref().unwrap(), Duration::from_secs(1));
}
