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
/// The cases, in `tests/uploads/`: each uses this file's helpers (`use crate::*`).
mod uploads {
    mod feeding;
    mod recovery;
    mod refused;
    mod spool;
}

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
fn ask(s: &mut ares::protocol::secure::BlockingConn, m: ClientRequest) -> Result<String, String> {
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
