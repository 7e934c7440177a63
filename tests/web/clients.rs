//! The HTTP client (`ares::api::WebTaskApi`), `ares run --supervisor http://...`, and the OpenAPI description listing exactly the served routes.

use crate::*;

#[test]
fn the_http_client_and_ares_run_over_http() {
    let cluster = web_cluster(Some(TOKEN), 1 << 20);
    let base = format!("http://{}", cluster.web.as_ref().unwrap());
    let mut client =
        WebTaskApi::connect(&base, "client", Some(TOKEN.into()), Duration::from_secs(5)).unwrap();
    let t = ares_core::expr::evaluate("m = ones((30, 20), chunk=(7, 6)); sum(m @ m.T)").unwrap();
    let task = client
        .submit_tileable_graph(&ares_core::tensor::Tensor::graph(&[&t]), None)
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
