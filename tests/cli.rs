//! The `ares` binary end to end: run, explain, bench, config errors.

use assert_cmd::Command;
use serde_json::Value;

fn ares() -> Command {
    Command::cargo_bin("ares").unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = ares().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ares {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn run_prints_a_scalar_and_timings() {
    let out = ares()
        .args([
            "run",
            "--local",
            "--expr",
            "x = arange(1000, chunk=64); sum(x)",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "499500");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("timings:") && err.contains("execute="),
        "{err}"
    );
}

#[test]
fn run_prints_an_array_summary() {
    let out = stdout_of(&["run", "--local", "--expr", "arange(10, chunk=3) * 2"]);
    assert_eq!(
        out.trim(),
        "array(shape=(10,), dtype=int64) [0, 2, 4, ..., 14, 16, 18]"
    );
}

#[test]
fn run_json_has_result_shape_dtype_timings() {
    let out = stdout_of(&[
        "run",
        "--local",
        "--json",
        "--expr",
        "m = ones((4, 3), chunk=2); sum(m, axis=0)",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], serde_json::json!([4.0, 4.0, 4.0]));
    assert_eq!(v["shape"], serde_json::json!([3]));
    assert_eq!(v["dtype"], "float64");
    assert!(v["timings"]["tile"].is_number() && v["timings"]["execute"].is_number());
}

#[test]
fn syntax_and_shape_errors_name_line_and_column() {
    let out = ares()
        .args([
            "run",
            "--local",
            "--expr",
            "a = ones(3, chunk=1);\nsum(a +)",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2, column 8"), "{err}");
    let out = ares()
        .args([
            "run",
            "--local",
            "--expr",
            "ones(3, chunk=1) + ones(4, chunk=1)",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 1, column 18") && err.contains("(3,) (4,)"),
        "{err}"
    );
}

#[test]
fn explain_formats() {
    // Two chunks each: the operands fuse into their add (one FUSE node per chunk), and a
    // combine reads both.
    let expr = "a = rand(100, chunk=50, seed=1); b = rand(100, chunk=50, seed=2); sum(a + b)";
    let text = stdout_of(&["explain", "--expr", expr]);
    assert!(
        text.contains("FUSE[rand, rand, add, sum]") && text.contains("== initial assignment =="),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&stdout_of(&["explain", "--expr", expr, "--format", "json"])).unwrap();
    assert_eq!(json["counts"]["fuse_nodes"], 2);
    assert_eq!(json["counts"]["subtasks"], 3);
    assert_eq!(
        json["chunk_graph"]["nodes"][0]["fused"],
        serde_json::json!(["rand", "rand", "add", "sum"])
    );
    let dot = stdout_of(&["explain", "--expr", expr, "--format", "dot"]);
    assert!(
        dot.starts_with("digraph ares {") && dot.contains("c0 -> c2;"),
        "{dot}"
    );
    let nofuse: Value = serde_json::from_str(&stdout_of(&[
        "explain",
        "--no-fuse",
        "--expr",
        expr,
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(nofuse["counts"]["fuse_nodes"], 0);
    assert_eq!(nofuse["counts"]["subtasks"], 9);
}

#[test]
fn config_file_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yml");
    std::fs::write(&path, "task:\n  default_config:\n    fuse_enabld: false\n").unwrap();
    let out = ares()
        .args([
            "explain",
            "--expr",
            "ones(2, chunk=1)",
            "--config",
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("fuse_enabld") && err.contains("line 3"),
        "{err}"
    );
    let good = dir.path().join("good.yml");
    std::fs::write(&good, "task:\n  default_config:\n    fuse_enabled: false\n").unwrap();
    let json: Value = serde_json::from_str(&stdout_of(&[
        "explain",
        "--format",
        "json",
        "--expr",
        "sum(ones(4, chunk=1) + 1)",
        "--config",
        good.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(json["counts"]["fuse_nodes"], 0);
}

#[test]
fn shipped_configs_load() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/config")).unwrap() {
        let path = entry.unwrap().path();
        ares::config::Config::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn bench_prepare_prints_one_json_line() {
    let out = stdout_of(&["bench", "prepare", "--chunks", "2000", "--repeat", "1"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    for key in ["chunks", "subtasks", "seconds", "chunks_per_s"] {
        assert!(v[key].is_number(), "{key} missing in {out}");
    }
    assert!(v["chunks"].as_u64().unwrap() > 1500);
    assert!(v["passes"]["tile"]["seconds"].is_number());
}

fn ready_addr(path: &std::path::Path) -> String {
    let ready = ares::node::wait_ready_file(path, std::time::Duration::from_secs(30)).unwrap();
    assert!(ready.web.is_none());
    ready.rpc
}

#[test]
fn run_uses_an_embedded_cluster_by_default() {
    let out = stdout_of(&[
        "run",
        "--json",
        "--workers",
        "2",
        "--slots",
        "1",
        "--expr",
        "x = arange(1000, chunk=64); sum(x)",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], 499500);
    assert_eq!(v["cluster"], "embedded");
    assert!(v["timings"]["cluster_start"].is_number());
}

#[test]
fn nodes_serve_run_supervisor_and_stop_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.yml");
    std::fs::write(
        &config,
        "cluster:\n  listen: 127.0.0.1:0\nworker:\n  slots: 1\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ares");
    let sup_ready = dir.path().join("s.json");
    let mut sup = std::process::Command::new(&bin)
        .args([
            "node",
            "--role",
            "supervisor",
            "--config",
            config.to_str().unwrap(),
            "--ready-file",
            sup_ready.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = ready_addr(&sup_ready);
    let w_ready = dir.path().join("w.json");
    let mut worker = std::process::Command::new(&bin)
        .args([
            "node",
            "--role",
            "worker",
            "--config",
            config.to_str().unwrap(),
            "--supervisor",
            &addr,
            "--ready-file",
            w_ready.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ready_addr(&w_ready);
    let out = stdout_of(&[
        "run",
        "--supervisor",
        &addr,
        "--json",
        "--expr",
        "m = ones((40, 30), chunk=7); sum(m @ m.T)",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], 48000.0);
    assert_eq!(v["cluster"], "remote");
    // SIGTERM: the supervisor shuts down cleanly; its worker notices and exits.
    std::process::Command::new("kill")
        .args(["-TERM", &sup.id().to_string()])
        .status()
        .unwrap();
    assert!(sup.wait().unwrap().success());
    let status = worker.wait().unwrap();
    assert!(
        !status.success(),
        "a worker that lost its supervisor exits non-zero"
    );
}

#[test]
fn a_worker_without_a_supervisor_is_a_clear_error() {
    let out = ares().args(["node", "--role", "worker"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--supervisor"));
}
