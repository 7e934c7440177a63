//! Results larger than a frame stream over both protocols (native and HTTP).

use crate::*;

#[test]
fn results_larger_than_a_frame_stream_over_both_protocols() {
    // Frames of 1 MiB; the tensors are 3.2 MB (float64) and 400 kB (bool, in 64 kB chunks).
    let dir = common::data_root().canonicalize().unwrap().join("frames");
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = format!(
        "web:\n  listen: 127.0.0.1:0\ndata:\n  roots: [{}]\n",
        dir.display()
    );
    let cluster = Cluster::start_full(2, 1, "  max_frame_bytes: 1048576\n", &yaml);
    let mut c = cluster.client();
    // Native: a 400 × 1000 float64 result (3.2 MB) comes back whole, part by part.
    let x = ares_core::expr::evaluate("rand(400, 1000, chunk=(64, 300), seed=7) * 3").unwrap();
    let got = run(&mut c, &x).unwrap();
    let want = common::run(&x, &Default::default(), 1, 1);
    assert_eq!(got, want);
    // HTTP: upload an .npy larger than a frame, use it, download results as .npy.
    let mut web = ares::api::WebTaskApi::connect(
        &format!("http://{}", cluster.web.as_ref().unwrap()),
        "up",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let values: Vec<f64> = (0..500 * 800).map(|i| (i as f64).sqrt() - 300.0).collect();
    write_npy(&dir.join("big.npy"), "<f8", &[500, 800], false, &values);
    let answer = web
        .put_tensor(
            "big",
            Some("60,800"),
            std::fs::File::open(dir.join("big.npy")).unwrap(),
        )
        .unwrap();
    assert_eq!(answer["shape"], serde_json::json!([500, 800]));
    assert_eq!(
        answer["bytes"],
        std::fs::metadata(dir.join("big.npy")).unwrap().len()
    );
    let mut npy = Vec::new();
    web.get_tensor_npy("big", &mut npy).unwrap();
    let f = npyz::NpyFile::new(&npy[..]).unwrap();
    assert_eq!(f.shape(), &[500, 800]);
    let back: Vec<f64> = f.into_vec().unwrap();
    assert!(back
        .iter()
        .zip(&values)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // The uploaded tensor in an expression of the session, named, then downloaded.
    let agent = ureq::agent();
    let base_url = format!("http://{}/api/session/up", cluster.web.as_ref().unwrap());
    let r: serde_json::Value = agent
        .post(&format!("{base_url}/task"))
        .send_json(serde_json::json!({"expr": "big > 0", "name": "pos"}))
        .unwrap()
        .into_json()
        .unwrap();
    let tid = r["task_id"].as_u64().unwrap();
    agent
        .get(&format!("{base_url}/task/{tid}?action=wait&timeout=60"))
        .call()
        .unwrap();
    let mut npy = Vec::new();
    web.get_tensor_npy("pos", &mut npy).unwrap();
    let f = npyz::NpyFile::new(&npy[..]).unwrap();
    let pos: Vec<bool> = f.into_vec().unwrap();
    let want: Vec<bool> = values.iter().map(|v| *v > 0.0).collect();
    assert_eq!(pos, want);
    // The raw format assembles a result in the supervisor: refused above half a frame
    // (400 kB of bool fits; 3.2 MB of float64 does not), pointing to ?format=npy.
    let r: serde_json::Value = agent
        .get(&format!("{base_url}/task/{tid}/result?format=json"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(r["shape"], serde_json::json!([500, 800]));
    let r: serde_json::Value = agent
        .post(&format!("{base_url}/task"))
        .send_json(serde_json::json!({"expr": "big * 2"}))
        .unwrap()
        .into_json()
        .unwrap();
    let big = r["task_id"].as_u64().unwrap();
    agent
        .get(&format!("{base_url}/task/{big}?action=wait&timeout=60"))
        .call()
        .unwrap();
    match agent
        .get(&format!("{base_url}/task/{big}/result?format=raw"))
        .call()
    {
        Err(ureq::Error::Status(413, r)) => {
            let text = r.into_string().unwrap();
            assert!(text.contains("format=npy"), "{text}");
        }
        other => panic!("raw: {:?}", other.map(|r| r.status())),
    }
    // JSON streams band by band (web/json_stream.rs): any size.
    let json: serde_json::Value = agent
        .get(&format!("{base_url}/task/{big}/result?format=json"))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(json["shape"], serde_json::json!([500, 800]));
    assert_eq!(json["data"].as_array().unwrap().len(), 500);
    assert_eq!(json["data"][499].as_array().unwrap().len(), 800);
    // The TaskApi fetch over HTTP streams the same result as .npy.
    let fetched = web
        .fetch(ares_core::ids::TaskId(tid as u32))
        .unwrap()
        .remove(0);
    assert_eq!(fetched.shape(), &[500, 800]);
    assert!(matches!(&fetched, ArrayData::Bool(a) if a.iter().copied().eq(want.iter().copied())));
    // Bad uploads: not an .npy, a bad name, an unknown session; the spool is cleaned up.
    let e = web
        .put_tensor("junk", None, &b"not an npy at all"[..])
        .unwrap_err();
    assert!(e.to_string().contains("not a usable .npy"), "{e}");
    let e = web.put_tensor("1bad", None, &b""[..]).unwrap_err();
    assert!(e.to_string().contains("invalid tensor name"), "{e}");
    let missing = agent.get(&format!("{base_url}/tensor/nothing")).call();
    assert!(matches!(missing, Err(ureq::Error::Status(404, _))));
    // The supervisor's private spool directory under `.ares-uploads/` holds its lock and the
    // spool file of the one upload still held (`big`, kept for recovery until it is freed):
    // nothing of the refused ones.
    let spooled: Vec<String> = std::fs::read_dir(dir.join(".ares-uploads"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".lock")
        .collect();
    assert!(
        spooled.len() == 1 && spooled[0].ends_with("-big.npy"),
        "spool files left behind: {spooled:?}"
    );
}
