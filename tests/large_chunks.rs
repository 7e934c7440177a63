//! Chunks larger than a frame (issue 10): with `cluster.max_frame_bytes` at 64 KiB, chunks of
//! 128 KiB to 512 KiB travel between workers (a rechunk assembling pieces held by both) and
//! back to clients, native and HTTP, cut into pieces and row ranges; each answer is checked
//! bit for bit against the local executor. Before, a chunk over half a frame failed its
//! fetch ("an answer of 1 chunks exceeds the frame limit") and its result part ("the chunks
//! asked for exceed the part budget").

mod common;

use ares::api::{TaskApi, WebTaskApi};
use ares::protocol::TaskStatus;
use ares_core::array::ArrayData;
use ares_core::tensor::Tensor;
use common::cluster::Cluster;
use std::time::Duration;

const PROGRAM: &str =
    "x = rand((512, 256), chunk=(256, 256), seed=3); rechunk(x, (512, 64)) * 2 + 1";

fn bits(a: &ArrayData) -> Vec<u64> {
    a.iter_f64().map(f64::to_bits).collect()
}

#[test]
fn chunks_larger_than_a_frame_travel_between_workers_and_to_clients() {
    let yaml = "web:\n  listen: 127.0.0.1:0\n";
    let cluster = Cluster::start_full(2, 1, "  max_frame_bytes: 65536\n", yaml);
    let t = ares_core::expr::evaluate(PROGRAM).unwrap();
    let want = common::run(&t, &Default::default(), 1, 1);

    // Native: the 256 KiB result chunks come back in row ranges of at most half a frame.
    let mut c = cluster.client();
    let task = c
        .submit_tileable_graph(&Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = c.fetch(task).unwrap().remove(0);
    assert_eq!(got.shape(), &[512, 256]);
    assert_eq!(bits(&got), bits(&want));

    // HTTP: the same result, named, downloaded as .npy.
    let web_addr = cluster.web.clone().unwrap();
    let web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "big",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let base = format!("http://{web_addr}/api/session/big");
    let r: serde_json::Value = ureq::post(&format!("{base}/task"))
        .send_json(serde_json::json!({ "expr": PROGRAM, "name": "y" }))
        .unwrap()
        .into_json()
        .unwrap();
    let tid = r["task_id"].as_u64().unwrap();
    ureq::get(&format!("{base}/task/{tid}?action=wait&timeout=60"))
        .call()
        .unwrap();
    let mut npy = Vec::new();
    web.get_tensor_npy("y", &mut npy).unwrap();
    let f = npyz::NpyFile::new(&npy[..]).unwrap();
    assert_eq!(f.shape(), &[512, 256]);
    let back: Vec<f64> = f.into_vec().unwrap();
    assert_eq!(
        back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        bits(&want)
    );
}
