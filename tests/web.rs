//! The WebTaskAPI against a real supervisor and workers: every route, every error path, auth
//! on and off, the dashboard, the HTTP client, and the OpenAPI description kept in sync.

mod common;

use ares::api::{TaskApi, WebTaskApi};
use ares::protocol::TaskStatus;
use common::cluster::Cluster;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "t0ps3cret";

struct Http {
    base: String,
    token: Option<&'static str>,
}

impl Http {
    fn of(c: &Cluster, token: Option<&'static str>) -> Http {
        Http {
            base: format!("http://{}", c.web.as_ref().expect("web enabled")),
            token,
        }
    }

    /// (status, JSON body or Null, raw body)
    fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = ureq::request(method, &format!("{}{path}", self.base));
        if let Some(t) = self.token {
            req = req.set("Authorization", &format!("Bearer {t}"));
        }
        let resp = match body {
            Some(b) => req.send_json(b),
            None => req.call(),
        };
        match resp {
            Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
            Err(ureq::Error::Status(code, r)) => (code, r.into_json().unwrap_or(Value::Null)),
            Err(e) => panic!("{method} {path}: {e}"),
        }
    }

    fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, None)
    }
}

fn assert_error(got: (u16, Value), status: u16, kind: &str) {
    assert_eq!(got.0, status, "{got:?}");
    assert_eq!(got.1["error"], kind, "{got:?}");
    assert!(
        got.1["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{got:?}"
    );
}

fn web_cluster(token: Option<&str>, max_body: usize) -> Cluster {
    let token_line = token.map_or(String::new(), |t| format!("  token: {t}\n"));
    Cluster::start_with(
        2,
        1,
        &format!("web:\n  listen: 127.0.0.1:0\n  max_body_bytes: {max_body}\n{token_line}"),
    )
}

#[test]
fn every_route_with_auth() {
    let cluster = web_cluster(Some(TOKEN), 1 << 20);
    let api = Http::of(&cluster, Some(TOKEN));
    let anonymous = Http::of(&cluster, None);

    // Open routes, and the token everywhere else.
    assert_eq!(anonymous.get("/api/health").0, 200);
    assert_eq!(anonymous.get("/api/openapi.json").1["openapi"], "3.0.3");
    assert_error(anonymous.get("/api/session"), 401, "unauthorized");
    assert_error(
        Http {
            token: Some("wrong"),
            ..Http::of(&cluster, None)
        }
        .get("/api/cluster/nodes"),
        401,
        "unauthorized",
    );

    let nodes = api.get("/api/cluster/nodes");
    assert_eq!(nodes.0, 200);
    assert_eq!(nodes.1["nodes"].as_array().unwrap().len(), 2);
    assert_eq!(nodes.1["nodes"][0]["slots"], 1);

    // Sessions.
    assert_eq!(
        api.send("PUT", "/api/session/s1", None),
        (200, json!({"session": "s1"}))
    );
    assert_error(
        api.send("PUT", "/api/session/bad%20id", None),
        400,
        "bad_request",
    );
    let sessions = api.get("/api/session").1;
    assert!(
        sessions["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["session"] == "s1"),
        "{sessions}"
    );

    // Submit by expression and by JSON graph.
    let (code, body) = api.send(
        "POST",
        "/api/session/s1/task",
        Some(json!({"expr": "x = arange(1000, chunk=64); sum(x)"})),
    );
    assert_eq!(code, 201, "{body}");
    let t1 = body["task_id"].as_u64().unwrap();
    let graph =
        ares::tensor::Tensor::graph(&[&ares::expr::evaluate("ones((3, 4), chunk=2) * 2").unwrap()]);
    let (code, body) = api.send(
        "POST",
        "/api/session/s1/task",
        Some(json!({"graph": graph, "fuse_enabled": false, "extra_config": {"combine_size": 2}})),
    );
    assert_eq!(code, 201, "{body}");
    let t2 = body["task_id"].as_u64().unwrap();

    // Wait (long poll), status, progress, list.
    let done = api
        .get(&format!("/api/session/s1/task/{t1}?action=wait&timeout=30"))
        .1;
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(
        api.get(&format!("/api/session/s1/task/{t2}?action=wait&timeout=30"))
            .1["status"],
        "succeeded"
    );
    assert_eq!(
        api.get(&format!("/api/session/s1/task/{t1}")).1["subtasks"],
        done["subtasks"]
    );
    assert_eq!(
        api.get(&format!("/api/session/s1/task/{t1}?action=progress"))
            .1,
        json!({"progress": 1.0})
    );
    assert_eq!(
        api.get("/api/session/s1/task?progress=1").1["tasks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Results: JSON and raw bytes.
    assert_eq!(
        api.get(&format!("/api/session/s1/task/{t1}/result")).1,
        json!({"shape": [], "dtype": "int64", "data": 499500})
    );
    assert_eq!(
        api.get(&format!("/api/session/s1/task/{t2}/result")).1["data"],
        json!([
            [2.0, 2.0, 2.0, 2.0],
            [2.0, 2.0, 2.0, 2.0],
            [2.0, 2.0, 2.0, 2.0]
        ])
    );
    let raw = ureq::get(&format!(
        "{}/api/session/s1/task/{t2}/result?format=raw",
        api.base
    ))
    .set("Authorization", &format!("Bearer {TOKEN}"))
    .call()
    .unwrap();
    assert_eq!(raw.header("X-Ares-Shape"), Some("3,4"));
    assert_eq!(raw.header("X-Ares-Dtype"), Some("float64"));
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut raw.into_reader(), &mut bytes).unwrap();
    let decoded = ares::protocol::codec::decode_chunks(&bytes).unwrap();
    assert_eq!(decoded[0].1.iter_f64().sum::<f64>(), 24.0);

    // Graph with per-node status.
    let g = api
        .get(&format!("/api/session/s1/task/{t1}/graph?limit=3"))
        .1;
    assert_eq!(g["tileable"]["nodes"][0]["op"], "arange");
    assert_eq!(g["subtasks"].as_array().unwrap().len(), 3);
    assert!(
        g["by_depth"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row[1] == 0 && row[2] == 0),
        "all done: {g}"
    );

    // Error paths, none of which reach the scheduler.
    let bad_posts = [
        (
            "s1",
            json!({"expr": "sum(ones(3, chunk=1) +"}),
            400,
            "bad_request",
        ),
        (
            "s1",
            json!({"expr": "ones(3, chunk=1) + ones(4, chunk=1)"}),
            400,
            "bad_request",
        ),
        ("s1", json!({}), 400, "bad_request"),
        (
            "s1",
            json!({"graph": {"nodes": [{"op": "frobnicate"}], "outputs": [0]}}),
            400,
            "bad_request",
        ),
        (
            "s1",
            json!({"expr": "1", "extra_config": {"combine_size": 1}}),
            400,
            "bad_request",
        ),
        ("s1", json!({"expr": "1", "colour": 3}), 400, "bad_request"),
        ("nope", json!({"expr": "1"}), 404, "not_found"),
    ];
    for (sid, body, status, kind) in bad_posts {
        assert_error(
            api.send("POST", &format!("/api/session/{sid}/task"), Some(body)),
            status,
            kind,
        );
    }
    let mut broken = graph.clone();
    broken.nodes[1].shape = smallvec::smallvec![9, 9];
    let bad = api.send(
        "POST",
        "/api/session/s1/task",
        Some(json!({"graph": broken})),
    );
    assert_error(bad.clone(), 400, "bad_request");
    assert!(
        bad.1["detail"]
            .as_str()
            .unwrap()
            .contains("malformed graph"),
        "{bad:?}"
    );
    let bad_gets = [
        ("/api/session/s1/task/999".to_string(), 404, "not_found"),
        (format!("/api/session/other/task/{t1}"), 404, "not_found"),
        (
            format!("/api/session/s1/task/{t1}?action=dance"),
            400,
            "bad_request",
        ),
        (
            format!("/api/session/s1/task/{t1}?action=wait&timeout=-1"),
            400,
            "bad_request",
        ),
        (
            format!("/api/session/s1/task/{t1}/result?format=xml"),
            400,
            "bad_request",
        ),
        ("/api/nothing/here".to_string(), 404, "not_found"),
    ];
    for (path, status, kind) in bad_gets {
        assert_error(api.get(&path), status, kind);
    }
    let huge = "1 + ".repeat(300_000) + "1";
    assert_error(
        api.send("POST", "/api/session/s1/task", Some(json!({"expr": huge}))),
        413,
        "payload_too_large",
    );
    let failed = api
        .send(
            "POST",
            "/api/session/s1/task",
            Some(json!({"expr": "arange(10, chunk=3) ** -1"})),
        )
        .1["task_id"]
        .as_u64()
        .unwrap();
    let info = api
        .get(&format!(
            "/api/session/s1/task/{failed}?action=wait&timeout=30"
        ))
        .1;
    assert_eq!(info["status"], "failed");
    assert!(
        info["error"]
            .as_str()
            .unwrap()
            .contains("negative integer powers"),
        "{info}"
    );
    assert_error(
        api.get(&format!("/api/session/s1/task/{failed}/result")),
        409,
        "no_result",
    );

    // Cancel frees results; deleting the session removes its tasks.
    assert_eq!(
        api.send("DELETE", &format!("/api/session/s1/task/{t1}"), None)
            .1["status"],
        "succeeded"
    );
    assert_error(
        api.get(&format!("/api/session/s1/task/{t1}/result")),
        409,
        "no_result",
    );
    assert_eq!(api.send("DELETE", "/api/session/s1", None).0, 200);
    assert_error(
        api.get(&format!("/api/session/s1/task/{t2}")),
        404,
        "not_found",
    );
    assert_error(
        api.send("DELETE", "/api/session/s1", None),
        404,
        "not_found",
    );
}

#[test]
fn no_token_needed_when_auth_is_off_and_the_dashboard_shows_work() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/dash", None).0, 200);
    let slow = api
        .send(
            "POST",
            "/api/session/dash/task",
            Some(json!({"expr": "x = rand(30000000, chunk=100000, seed=1); sum(exp(sin(x)))"})),
        )
        .1;
    let tid = slow["task_id"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let html = ureq::get(&format!("{}/", api.base))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    assert!(
        html.contains("<h2>Cluster</h2>") && html.contains("w0") && html.contains("w1"),
        "{html}"
    );
    assert!(
        html.contains(&format!("/dashboard/dash/{tid}")) && html.contains("running"),
        "{html}"
    );
    let page = ureq::get(&format!("{}/dashboard/dash/{tid}", api.base))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    assert!(
        page.contains("Subtasks by depth") && page.contains("class=\"sq"),
        "{page}"
    );
    assert_eq!(
        api.send("DELETE", &format!("/api/session/dash/task/{tid}"), None)
            .1["status"],
        "cancelled"
    );
}

#[test]
fn the_http_client_and_ares_run_over_http() {
    let cluster = web_cluster(Some(TOKEN), 1 << 20);
    let base = format!("http://{}", cluster.web.as_ref().unwrap());
    let mut client =
        WebTaskApi::connect(&base, "client", Some(TOKEN.into()), Duration::from_secs(5)).unwrap();
    let t = ares::expr::evaluate("m = ones((30, 20), chunk=(7, 6)); sum(m @ m.T)").unwrap();
    let task = client
        .submit_tileable_graph(&ares::tensor::Tensor::graph(&[&t]), None)
        .unwrap();
    assert_eq!(
        client
            .wait_task(task, Duration::from_secs(30))
            .unwrap()
            .status,
        TaskStatus::Succeeded
    );
    assert_eq!(
        client.fetch(task).unwrap()[0].get_flat(0).unwrap().as_f64(),
        18000.0
    );
    let e = WebTaskApi::connect(
        &base,
        "client",
        Some("wrong".into()),
        Duration::from_secs(1),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("401"), "{e}");

    let out = assert_cmd::Command::cargo_bin("ares")
        .unwrap()
        .env("ARES_TOKEN", TOKEN)
        .args([
            "run",
            "--json",
            "--supervisor",
            &base,
            "--expr",
            "sum(arange(100, chunk=9))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], 4950);
    assert_eq!(v["cluster"], "remote-http");
}

#[test]
fn openapi_lists_exactly_the_served_routes() {
    let doc: Value = serde_json::from_str(ares::web::routes::OPENAPI).unwrap();
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (m.clone(), path.clone()))
        })
        .collect();
    let mut served: Vec<(String, String)> = ares::web::routes::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    documented.sort();
    served.sort();
    assert_eq!(
        documented, served,
        "src/web/openapi.json and ROUTES disagree"
    );
}

#[test]
fn named_results_are_reused_by_later_tasks_until_released() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/work", None).0, 200);
    let wait = |tid: u64| {
        api.get(&format!(
            "/api/session/work/task/{tid}?action=wait&timeout=60"
        ))
        .1
    };
    let submit = |body: Value| {
        let (code, v) = api.send("POST", "/api/session/work/task", Some(body));
        assert_eq!(code, 201, "{v}");
        v["task_id"].as_u64().unwrap()
    };

    let x = submit(json!({"expr": "rand(100000, chunk=7000, seed=3) * 2", "name": "x"}));
    assert_eq!(wait(x)["status"], "succeeded");
    let held = || -> u64 {
        api.get("/api/cluster/nodes").1["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["stored_chunks"].as_u64().unwrap())
            .sum()
    };
    // Workers report what they hold with each heartbeat (every 100 ms here).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while held() < 15 {
        assert!(
            std::time::Instant::now() < deadline,
            "x's 15 chunks never showed up as held"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let reuse = submit(json!({"expr": "sum(x) + max(x[::3])"}));
    let fresh =
        submit(json!({"expr": "y = rand(100000, chunk=7000, seed=3) * 2; sum(y) + max(y[::3])"}));
    assert_eq!(wait(reuse)["status"], "succeeded", "{}", wait(reuse));
    assert_eq!(wait(fresh)["status"], "succeeded");
    let a = api.get(&format!("/api/session/work/task/{reuse}/result")).1["data"]
        .as_f64()
        .unwrap();
    let b = api.get(&format!("/api/session/work/task/{fresh}/result")).1["data"]
        .as_f64()
        .unwrap();
    assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} vs {b}");
    // The later task read x's chunks instead of recomputing them.
    let g = api.get(&format!("/api/session/work/task/{reuse}/graph")).1;
    assert_eq!(g["tileable"]["nodes"][0]["op"], "fetch", "{g}");

    // Released: the name is gone, and so is the data on the workers.
    assert_eq!(
        api.send("DELETE", &format!("/api/session/work/task/{x}"), None)
            .0,
        200
    );
    for t in [reuse, fresh] {
        api.send("DELETE", &format!("/api/session/work/task/{t}"), None);
    }
    let (code, v) = api.send(
        "POST",
        "/api/session/work/task",
        Some(json!({"expr": "sum(x)"})),
    );
    assert_eq!(code, 400, "{v}");
    assert!(
        v["detail"].as_str().unwrap().contains("unknown name 'x'"),
        "{v}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let held = held();
        if held == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "workers still hold {held} chunks after release"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_error(
        api.send(
            "POST",
            "/api/session/work/task",
            Some(json!({"expr": "1", "name": "not valid"})),
        ),
        400,
        "bad_request",
    );
}

/// A result whose length depends on the data (`unique`, `x[mask]`) is a result only within
/// its task; named, later tasks read it with the length its workers found.
#[test]
fn a_named_unique_is_reused_with_its_real_length() {
    let cluster = web_cluster(None, 1 << 20);
    let api = Http::of(&cluster, None);
    assert_eq!(api.send("PUT", "/api/session/u", None).0, 200);
    let run = |body: Value| -> Value {
        let (code, v) = api.send("POST", "/api/session/u/task", Some(body));
        assert_eq!(code, 201, "{v}");
        let tid = v["task_id"].as_u64().unwrap();
        let done = api
            .get(&format!("/api/session/u/task/{tid}?action=wait&timeout=60"))
            .1;
        assert_eq!(done["status"], "succeeded", "{done}");
        api.get(&format!("/api/session/u/task/{tid}/result")).1["data"].clone()
    };
    let x = "astype(rand(5000, chunk=700, seed=1) * 50, 'int64')";
    run(json!({"expr": format!("unique({x})"), "name": "u"}));
    let n = run(json!({"expr": "u.shape[0] + 0 * sum(u)"}));
    assert_eq!(n.as_f64(), Some(50.0), "{n}");
    let s = run(json!({"expr": "sum(u)"}));
    assert_eq!(s.as_f64(), Some((0..50).sum::<i64>() as f64), "{s}");
}
