//! The dashboard's data and plots: the task stream and memory history of a job whose
//! subtasks are known, and the page rendered by a real browser (headless Chromium) during a
//! job, whose DOM must hold SVG bars for the job's subtasks and a memory line per worker.

use crate::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// Entries of `task` in the task stream, by subtask.
fn stream_of(api: &Http, task: u64, since: Option<f64>) -> (f64, BTreeMap<u64, Value>) {
    let path = match since {
        Some(s) => format!("/api/cluster/task_stream?since={s}"),
        None => "/api/cluster/task_stream".to_string(),
    };
    let (status, v) = api.get(&path);
    assert_eq!(status, 200, "{v}");
    let entries = v["entries"].as_array().unwrap();
    let mine = entries
        .iter()
        .filter(|e| e["task"] == task)
        .map(|e| (e["subtask"].as_u64().unwrap(), e.clone()))
        .collect();
    (v["now"].as_f64().unwrap(), mine)
}

fn submit(api: &Http, session: &str, expr: &str) -> u64 {
    let (status, v) = api.send(
        "POST",
        &format!("/api/session/{session}/task"),
        Some(json!({ "expr": expr })),
    );
    assert_eq!(status, 201, "{v}");
    v["task_id"].as_u64().unwrap()
}

#[test]
fn the_task_stream_and_memory_history_of_a_known_job() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/ts", None).0, 200);
    let (before, _) = stream_of(&api, 0, None);
    // 64 chunks of rand + 1, fused, in subtasks of one or more chunks.
    let tid = submit(&api, "ts", "x = rand(64000, chunk=1000, seed=3); x + 1");
    let (_, info) = api.get(&format!(
        "/api/session/ts/task/{tid}?action=wait&timeout=30"
    ));
    assert_eq!(info["status"], "succeeded", "{info}");
    let subtasks = info["subtasks"].as_u64().unwrap();
    assert!(subtasks > 0, "{info}");
    // Spans travel with the next heartbeat (every 100 ms in the test config).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let (now, runs) = loop {
        let (now, runs) = stream_of(&api, tid, Some(before));
        if runs.len() as u64 >= subtasks || std::time::Instant::now() > deadline {
            break (now, runs);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        runs.keys().copied().collect::<Vec<_>>(),
        (0..subtasks).collect::<Vec<_>>(),
        "every subtask once"
    );
    let mut workers = std::collections::BTreeSet::new();
    for e in runs.values() {
        let (start, end) = (e["start"].as_f64().unwrap(), e["end"].as_f64().unwrap());
        assert!(before <= start && start <= end && end <= now, "{e}");
        assert_eq!(e["status"], "succeeded", "{e}");
        assert_eq!(e["slot"], 0, "one slot per worker: {e}");
        assert!(e["op"].is_string() && e["family"].is_string(), "{e}");
        workers.insert(e["worker"].as_str().unwrap().to_string());
    }
    assert_eq!(workers.len(), 2, "both workers ran some: {workers:?}");
    let kept: u64 = runs
        .values()
        .map(|e| e["bytes_out"].as_u64().unwrap())
        .sum();
    assert_eq!(kept, 64_000 * 8, "the result's float64 bytes, all kept");
    // Incremental: nothing of it arrives again after `now`.
    assert!(stream_of(&api, tid, Some(now)).1.is_empty());
    assert_error(
        api.get("/api/cluster/task_stream?since=soon"),
        400,
        "bad_request",
    );
    let (_, limited) = api.get("/api/cluster/task_stream?limit=5");
    assert_eq!(limited["entries"].as_array().unwrap().len(), 5);

    let (status, mem) = api.get("/api/cluster/memory_history");
    assert_eq!(status, 200, "{mem}");
    let ws = mem["workers"].as_array().unwrap();
    assert_eq!(ws.len(), 2, "{mem}");
    for w in ws {
        let n = w["times"].as_array().unwrap().len();
        assert!(n >= 2, "a sample per heartbeat: {w}");
        for col in ["memory", "reserved", "spilled", "unmanaged"] {
            assert_eq!(w[col].as_array().unwrap().len(), n, "{col}: {w}");
        }
    }
}

/// The graph route of a small finished task: counts per op that add up to its subtasks, and
/// its chunk graph (every chunk's subtask and inputs in range, inputs before the chunk).
#[test]
fn the_graph_route_counts_subtasks_by_op_and_holds_a_small_tasks_chunk_graph() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/g", None).0, 200);
    let tid = submit(&api, "g", "x = rand(8000, chunk=1000, seed=3); sum(x + 1)");
    let (_, info) = api.get(&format!("/api/session/g/task/{tid}?action=wait&timeout=30"));
    assert_eq!(info["status"], "succeeded", "{info}");
    let (status, g) = api.get(&format!("/api/session/g/task/{tid}/graph?limit=100"));
    assert_eq!(status, 200, "{g}");
    let total = g["subtasks_total"].as_u64().unwrap();
    let by_op = g["by_op"].as_array().unwrap();
    let done: u64 = by_op.iter().map(|r| r["done"].as_u64().unwrap()).sum();
    assert_eq!(done, total, "every subtask done, counted once: {g}");
    let ops: Vec<&str> = by_op.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert!(ops.contains(&"sum"), "the reduction's subtasks: {ops:?}");
    let chunks = g["chunks"].as_array().unwrap();
    assert!(chunks.len() >= 9, "8 chunks of x + 1 and the sum's: {g}");
    for (i, c) in chunks.iter().enumerate() {
        assert!(c["subtask"].as_u64().unwrap() < total, "{c}");
        for input in c["inputs"].as_array().unwrap() {
            assert!(
                (input.as_u64().unwrap() as usize) < i,
                "inputs come first: {c}"
            );
        }
        assert!(c["family"].is_string() && c["label"].is_string(), "{c}");
    }
    // A limit below the task's size leaves the chunk graph out, the counts in.
    let (_, small) = api.get(&format!("/api/session/g/task/{tid}/graph?limit=1"));
    assert!(small["chunks"].as_array().unwrap().is_empty(), "{small}");
    assert_eq!(small["by_op"], g["by_op"]);
}

/// A task that runs in stages: each stage's subtasks carry its number as the `stage_id` of
/// their ids (`task | stage | seq`, little-endian hex: the stage is characters 8..12).
#[test]
fn each_stage_of_a_staged_task_is_the_stage_id_of_its_subtasks() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/st", None).0, 200);
    let tid = submit(
        &api,
        "st",
        // The slice needs the selection's length: a stage computes it first.
        "x = rand(8000, chunk=1000, seed=1); v = x[x > 0.5]; sum(v[1:] * 2)",
    );
    let (_, info) = api.get(&format!(
        "/api/session/st/task/{tid}?action=wait&timeout=30"
    ));
    assert_eq!(info["status"], "succeeded", "{info}");
    let (_, tasks) = api.get("/api/session/st/task");
    let mut stages = Vec::new();
    for t in tasks["tasks"].as_array().unwrap() {
        let id = t["task"].as_u64().unwrap();
        let (_, g) = api.get(&format!("/api/session/st/task/{id}/graph?limit=1000"));
        let of_task: std::collections::BTreeSet<u16> = (g["subtasks"].as_array().unwrap())
            .iter()
            .map(|s| {
                let hex = s["id"].as_str().unwrap();
                u16::from_str_radix(&hex[10..12], 16).unwrap() << 8
                    | u16::from_str_radix(&hex[8..10], 16).unwrap()
            })
            .collect();
        if id != tid {
            stages.push((id, of_task));
        }
    }
    stages.sort();
    let numbers: Vec<Vec<u16>> = stages
        .iter()
        .map(|(_, s)| s.iter().copied().collect())
        .collect();
    assert_eq!(numbers, vec![vec![1], vec![2]], "{stages:?}");
}

/// Chromium, if this machine has it (`ARES_CHROMIUM` names another binary).
fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("ARES_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Runs headless Chromium on `url` with `args` (root needs `--no-sandbox`); the page's
/// timers and fetches run for 5 s of virtual time first.
fn headless(browser: &PathBuf, profile: &std::path::Path, url: &str, args: &[&str]) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--virtual-time-budget=5000",
            "--window-size=1300,1700",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where the screenshot goes: `ARES_SCREENSHOT_DIR`, else `target/screenshots/` (TESTING.md).
fn screenshot_path() -> PathBuf {
    let dir = std::env::var_os("ARES_SCREENSHOT_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("dashboard.png")
}

#[test]
fn the_dashboard_in_headless_chromium_draws_the_jobs_bars_and_memory_lines() {
    let Some(browser) = chromium() else {
        eprintln!(
            "SKIPPED: no chromium binary on PATH (apt-get install chromium, or set ARES_CHROMIUM): the dashboard was not rendered"
        );
        return;
    };
    let cluster = web_cluster(Some(TOKEN), 1 << 20);
    let api = Http::of(&cluster, Some(TOKEN));
    assert_eq!(api.send("PUT", "/api/session/view", None).0, 200);
    // A small task, done: the page draws its chunk graph.
    let small = submit(
        &api,
        "view",
        "x = rand(4000, chunk=1000, seed=2); sum(x + 1)",
    );
    let (_, info) = api.get(&format!(
        "/api/session/view/task/{small}?action=wait&timeout=30"
    ));
    assert_eq!(info["status"], "succeeded", "{info}");
    // Long enough to be running while the browser looks, however loaded the machine (tens
    // of seconds in a debug build; cancelled at the end).
    let tid = submit(
        &api,
        "view",
        "x = rand(200000000, chunk=100000, seed=1); sum(exp(sin(x)))",
    );
    // Some of its subtasks have run and been reported.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while stream_of(&api, tid, None).1.is_empty() {
        assert!(std::time::Instant::now() < deadline, "no subtask reported");
        std::thread::sleep(Duration::from_millis(100));
    }
    let profile = tempfile::tempdir().unwrap();
    // The token once in the URL, as a person opens it: the cookie carries it from then on.
    let url = format!("{}/?token={TOKEN}", api.base);
    let dom = headless(&browser, profile.path(), &url, &["--dump-dom"]);
    let ran = stream_of(&api, tid, None).1.len();
    let bars = dom.matches(&format!("data-task=\"{tid}\"")).count();
    assert!(
        ran > 0 && bars > 0,
        "the page shows no bar of task {tid} while {ran} of its subtasks ran:\n{dom}"
    );
    assert!(dom.contains("class=\"bar\""), "{dom}");
    for w in ["w0", "w1"] {
        let plot = dom
            .find(&format!("class=\"memory\" data-worker=\"{w}\""))
            .unwrap_or_else(|| panic!("no memory plot of {w}:\n{dom}"));
        assert!(
            dom[plot..].contains("<polyline class=\"mem mem-managed\""),
            "no memory line of {w}:\n{dom}"
        );
    }
    assert!(dom.contains("id=\"task-stream-svg\""), "{dom}");
    // The running task's progress by op, and the small task's chunk graph.
    assert!(
        dom.contains(&format!(
            "class=\"op-progress\" data-op=\"sum\" data-task=\"{tid}\""
        )),
        "no progress row of the running task's sum:\n{dom}"
    );
    assert!(
        dom.contains(&format!(
            "id=\"graph-svg\" data-task=\"{small}\" data-nodes=\"chunks\""
        )),
        "no chunk graph of the small task {small}:\n{dom}"
    );
    assert!(dom.matches("class=\"node chunk\"").count() >= 5, "{dom}");
    let shot = screenshot_path();
    let _ = std::fs::remove_file(&shot);
    headless(
        &browser,
        profile.path(),
        &url,
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot at {}",
        shot.display()
    );
    eprintln!("dashboard screenshot: {}", shot.display());
    api.send("DELETE", &format!("/api/session/view/task/{tid}"), None);
}
