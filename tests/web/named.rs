//! Named results: kept on the workers, reused by later tasks (also a `unique` with its real length) until released.

use crate::*;

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
