//! The WebTaskAPI against a real supervisor and workers: every route, every error path, auth
//! on and off, the dashboard, the HTTP client, and the OpenAPI description kept in sync.

mod common;
/// The cases, in `tests/web/`: each uses this file's helpers (`use crate::*`).
mod web {
    mod bounds;
    mod clients;
    mod dashboard;
    mod explain;
    mod named;
}

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
    let graph = ares_core::tensor::Tensor::graph(&[&ares_core::expr::evaluate(
        "ones((3, 4), chunk=2) * 2",
    )
    .unwrap()]);
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
