//! A worker dying loses no upload: its chunks are recomputed from the spool file.

use crate::*;

/// The worker ids holding the chunks of an upload, as its fetch arguments list them.
fn holders(up: &UploadedTensor) -> Vec<u32> {
    let ares_core::ops::OpArgs::FetchResult { chunks, .. } = &up.fetch else {
        panic!("not a fetch: {:?}", up.fetch);
    };
    let mut w: Vec<u32> = chunks.iter().map(|(_, w)| *w).collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// The live workers as the supervisor lists them: (id such as `w2`, data address, chunks).
fn live_workers(web: &str) -> Vec<(String, String, u64)> {
    let v: serde_json::Value = ureq::get(&format!("http://{web}/api/cluster/nodes"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["alive"] != false)
        .map(|n| {
            (
                n["worker"].as_str().unwrap().to_string(),
                n["data_addr"].as_str().unwrap().to_string(),
                n["stored_chunks"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// SIGKILLs the worker process at `addr` (an index into `addrs`, the order they were added)
/// and waits until the supervisor no longer lists it.
fn kill_worker(nodes: &mut common::nodes::Nodes, addrs: &[String], addr: &str, web: &str) {
    let i = addrs.iter().position(|a| a == addr).unwrap();
    nodes.workers[i].kill().unwrap();
    let _ = nodes.workers[i].wait();
    eventually("the killed worker is dropped", || {
        live_workers(web).iter().all(|(_, a, _)| a != addr)
    });
}

fn exact(got: ArrayData, want: &[f64], what: &str) {
    let got = got.to_f64();
    assert_eq!(got.len(), want.len(), "{what}");
    assert!(
        got.iter()
            .zip(want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{what}: values differ"
    );
}

/// "Nothing is lost": an upload's chunks are recomputed from its spool file when the worker
/// holding them dies, so a later task reading the upload (with the fetch arguments the client
/// got before the death) returns the exact values, over both protocols, while a live worker
/// remains. The spool file stays until the upload is freed, counted in
/// `limits.max_spool_bytes` until then.
#[test]
fn a_worker_dying_loses_no_upload_until_it_is_freed() {
    // 300 × 200 float64 is 480,128 bytes as .npy: two fit in the budget, not three.
    let mut nodes = common::nodes::Nodes::supervisor(
        "  max_frame_bytes: 1048576\n",
        "web:\n  listen: 127.0.0.1:0\nlimits:\n  max_upload_bytes: 4000000\n  max_spool_bytes: 1000000\n",
    );
    let web_addr = nodes.web.clone().unwrap();
    let mut addrs = vec![nodes.add_worker(), nodes.add_worker()];
    eventually("both workers registered", || {
        live_workers(&web_addr).len() == 2
    });
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    let dirs = spool_dirs(&tmp, &format!("{}-", nodes.supervisor.id()));
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let spool = dirs[0].clone();
    let held = || {
        std::fs::read_dir(&spool)
            .unwrap()
            .flatten()
            .filter(|f| f.file_name() != ".lock")
            .count()
    };
    let mut native = nodes.client();
    let mut web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "keep",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let f: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.53).sin() * 1e3)
        .collect();
    let g: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.29).cos() - 7.5)
        .collect();
    let (fb, gb) = (npy("<f8", &[300, 200], &f), npy("<f8", &[300, 200], &g));
    let chunk = || {
        Some(ChunkSpec::Explicit(vec![
            vec![100, 100, 100],
            vec![120, 80],
        ]))
    };
    let xn = native
        .upload_npy(Some("kn"), chunk(), fb.len() as u64, &fb[..])
        .unwrap();
    let xw = web
        .upload_npy("kw", chunk().as_ref(), gb.len() as u64, &gb[..])
        .unwrap();
    assert_eq!(held(), 2, "each held upload keeps its spool file");
    // The budget holds the kept files: a third upload is refused, naming the limit.
    let e = native
        .upload_npy(Some("third"), None, fb.len() as u64, &fb[..])
        .unwrap_err();
    assert!(e.to_string().contains("limits.max_spool_bytes"), "{e}");
    let e = web
        .upload_npy("third", None, gb.len() as u64, &gb[..])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Http { status: 503, .. })
            && e.to_string().contains("limits.max_spool_bytes"),
        "{e}"
    );
    assert_eq!(held(), 2);

    // Round 1: the worker holding the native upload's first chunk dies.
    let id = |w: u32| format!("w{w}");
    let addr_of = |worker: &str| {
        live_workers(&web_addr)
            .into_iter()
            .find(|(w, _, _)| w == worker)
            .map(|(_, a, _)| a)
            .unwrap()
    };
    let victim = addr_of(&id(holders(&xn)[0]));
    let killed = Instant::now();
    kill_worker(&mut nodes, &addrs, &victim, &web_addr);
    exact(
        compute(&mut native, &xn, "x + 0"),
        &f,
        "native, one holder killed",
    );
    let took = killed.elapsed();
    exact(
        compute(&mut web, &xw, "x + 0"),
        &g,
        "http, one holder killed",
    );
    eprintln!(
        "upload survives a holder's SIGKILL: right answer {took:?} after the kill (native; \
         holders {:?} and {:?} of 2 workers)",
        holders(&xn),
        holders(&xw)
    );

    // Round 2: two new workers join, then the one holding every chunk now dies. Two live
    // workers remain, so a read placed on the one not holding a chunk fetches it from where
    // it was recomputed, not from the worker the client's fetch arguments name (dead).
    let survivor = addrs.iter().find(|a| **a != victim).unwrap().clone();
    addrs.push(nodes.add_worker());
    addrs.push(nodes.add_worker());
    eventually("the new workers registered", || {
        live_workers(&web_addr).len() == 3
    });
    let killed = Instant::now();
    kill_worker(&mut nodes, &addrs, &survivor, &web_addr);
    exact(
        compute(&mut web, &xw, "x + 0"),
        &g,
        "http, every holder killed",
    );
    let took = killed.elapsed();
    exact(
        compute(&mut native, &xn, "x + 0"),
        &f,
        "native, every holder killed",
    );
    eprintln!("upload survives losing every chunk: right answer {took:?} after the kill (http)");

    // Freed, the spool file goes and its bytes are free again: two uploads fit once more.
    native.cancel_task(xn.task).unwrap();
    eventually("a cancelled upload's spool file is removed", || held() == 1);
    web.cancel_task(xw.task).unwrap();
    eventually("a released upload's spool file is removed", || held() == 0);
    let again = native
        .upload_npy(Some("again"), None, fb.len() as u64, &fb[..])
        .unwrap();
    web.upload_npy("again", None, gb.len() as u64, &gb[..])
        .unwrap();
    assert_eq!(held(), 2);
    exact(compute(&mut native, &again, "x + 0"), &f, "after freeing");
    // Deleting the session frees its uploads; closing the connection frees the native ones.
    ureq::delete(&format!("http://{web_addr}/api/session/keep"))
        .call()
        .unwrap();
    eventually("a deleted session's upload spool file is removed", || {
        held() == 1
    });
    drop(native);
    eventually("a closed connection's upload spool file is removed", || {
        held() == 0
    });
}
