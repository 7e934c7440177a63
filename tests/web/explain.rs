//! `explain` asks the connected cluster: over the native protocol (`ClientRequest::Explain`,
//! `NativeClient::explain`) and HTTP (`POST /api/session/{sid}/explain`,
//! `WebTaskApi::explain`), a supervisor with 3 workers × 2 slots and a non-default
//! `combine_size` prints what `ares explain` prints for that cluster and config, not for the
//! client's defaults; the route sits behind the token, checks the graph as a submission does,
//! and refuses the supervisor's internal upload form.

use crate::*;
use ares::api::NativeClient;
use ares_core::tensor::Tensor;

const EXPR: &str = "a = rand(64, chunk=2, seed=1); sum(a * 2)";

#[test]
fn explain_plans_for_the_clusters_workers_slots_and_config() {
    let config_extra = "task:\n  default_config:\n    combine_size: 8\n";
    let cluster = Cluster::start_with(
        3,
        2,
        &format!("web:\n  listen: 127.0.0.1:0\n  token: {TOKEN}\n{config_extra}"),
    );
    let graph = Tensor::graph(&[&ares_core::expr::evaluate(EXPR).unwrap()]);
    let mut native: NativeClient = cluster.client();
    let base = format!("http://{}", cluster.web.as_ref().unwrap());
    let mut web =
        WebTaskApi::connect(&base, "ex", Some(TOKEN.into()), Duration::from_secs(5)).unwrap();
    let over_native = native.explain(&graph, 0).unwrap();
    let over_http = web.explain(&graph, 0).unwrap();
    assert_eq!(over_native, over_http);
    // The cluster's workers and slots in the assignment, its combine_size in the tree: what
    // `ares explain` prints given the same size and config file.
    for w in ["w0 slots=2", "w1 slots=2", "w2 slots=2"] {
        assert!(over_native.contains(w), "{w}:\n{over_native}");
    }
    let config_file = cluster.dir.path().join("explain.yml");
    std::fs::write(&config_file, config_extra).unwrap();
    let cli = |limit: &str, args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("ares")
            .unwrap()
            .args(["explain", "--expr", EXPR, "--limit", limit])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let config_path = config_file.to_str().unwrap();
    let same = cli(
        "0",
        &["--workers", "3", "--slots", "2", "--config", config_path],
    );
    assert_eq!(over_native, same);
    // Not what a client planning for itself (2 × 2, combine_size 4) would print.
    assert_ne!(over_native, cli("0", &[]));
    // ... nor for this cluster's size with the default combine_size (4).
    assert_ne!(over_native, cli("0", &["--workers", "3", "--slots", "2"]));
    // The limit caps each listing, as the CLI's does.
    let short = native.explain(&graph, 2).unwrap();
    let cluster_args = ["--workers", "3", "--slots", "2", "--config", config_path];
    assert_eq!(short, cli("2", &cluster_args));
    assert!(short.contains("more subtasks"), "{short}");

    // HTTP: behind the token, the session must exist, the body is checked.
    let api = Http::of(&cluster, Some(TOKEN));
    let body = json!({"graph": graph, "limit": 5});
    assert_error(
        Http::of(&cluster, None).send("POST", "/api/session/ex/explain", Some(body.clone())),
        401,
        "unauthorized",
    );
    let (status, v) = api.send("POST", "/api/session/ex/explain", Some(body.clone()));
    assert_eq!(status, 200, "{v}");
    assert!(
        v["text"].as_str().unwrap().starts_with("== tileable graph"),
        "{v}"
    );
    assert_error(
        api.send("POST", "/api/session/nope/explain", Some(body)),
        404,
        "not_found",
    );
    assert_error(
        api.send(
            "POST",
            "/api/session/ex/explain",
            Some(json!({"expr": "1"})),
        ),
        400,
        "bad_request",
    );
    // Refused as a submission would be: an invalid graph, and the internal spool form.
    let mut bad = graph.clone();
    bad.nodes[0].shape = [65usize][..].into();
    assert!(native
        .explain(&bad, 0)
        .unwrap_err()
        .to_string()
        .contains("declares"));
    let data = ares_core::io::DataRef {
        format: ares_core::io::Format::Spool,
        path: "/tmp/ares-supervisor-1-0/0-x.npy".into(),
        shape: [3usize][..].into(),
        dtype: ares_core::array::DType::I64,
    };
    let args = ares_core::ops::OpArgs::Source {
        data: Box::new(data),
        chunk: ares_core::ops::ChunkSpec::Uniform(3),
    };
    let spool = Tensor::graph(&[&Tensor::new(ares_core::ops::Op::FromNpy, args, vec![]).unwrap()]);
    let e = native.explain(&spool, 0).unwrap_err();
    assert!(e.to_string().contains("upload spool file"), "{e}");
    let e = web.explain(&spool, 0).unwrap_err();
    assert!(
        e.to_string().contains("upload spool file") && e.to_string().contains("400"),
        "{e}"
    );
    // Nothing ran: no task was created by any of it.
    assert_eq!(api.get("/api/session/ex/task").1["tasks"], json!([]));
}
