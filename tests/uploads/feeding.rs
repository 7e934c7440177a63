//! Uploads of each dtype, over both protocols, feed later graphs and are listed until freed.

use crate::*;

#[test]
fn uploads_feed_later_graphs_over_both_protocols_until_freed() {
    let (cluster, root) = cluster("");
    let web_addr = cluster.web.clone().unwrap();
    let mut native = cluster.client();
    let mut web = WebTaskApi::connect(
        &format!("http://{web_addr}"),
        "up",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    // 300 × 200 float64: 480 kB in pieces of at most 512 KiB (half a frame), six chunks.
    let f: Vec<f64> = (0..300 * 200)
        .map(|i| (i as f64 * 0.37).sin() * 1e3)
        .collect();
    let fa = ArrayD::from_shape_vec(IxDyn(&[300, 200]), f.clone()).unwrap();
    let i: Vec<i64> = (0..1000).map(|k| k * k - 5000).collect();
    let b: Vec<bool> = (0..4 * 5 * 6).map(|k| k % 3 == 0).collect();
    let ba = ArrayD::from_shape_vec(IxDyn(&[4, 5, 6]), b.clone()).unwrap();
    for over_web in [false, true] {
        let (p, side) = if over_web {
            ("w", "http")
        } else {
            ("n", "native")
        };
        // float64 in explicit uneven chunks: column sums and a scaled copy.
        let chunk = ChunkSpec::Explicit(vec![vec![100, 150, 50], vec![64, 136]]);
        let x = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}f"),
            Some(chunk),
            &npy("<f8", &[300, 200], &f),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &x, "sum(x * 2, axis=0)").to_f64();
        common::assert_close(&ArrayData::F64(got), &(fa.sum_axis(Axis(0)) * 2.0), side);
        let back = compute(api, &x, "x + 0").to_f64();
        assert!(
            back.iter().zip(&f).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{side}"
        );
        // int64 in uniform chunks, bool with the default chunking.
        let xi = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}i"),
            Some(ChunkSpec::Uniform(64)),
            &npy("<i8", &[1000], &i),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &xi, "sum(x)");
        assert_eq!(
            got.get_flat(0).unwrap().as_i64(),
            i.iter().sum::<i64>(),
            "{side}"
        );
        let xb = upload(
            &mut native,
            &web,
            over_web,
            &format!("{p}b"),
            None,
            &npy("|b1", &[4, 5, 6], &b),
        );
        let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
        let got = compute(api, &xb, "sum(astype(x, 'int64'), axis=2)");
        let want = ba.mapv(|v| v as i64).sum_axis(Axis(2));
        assert_eq!(got, ArrayData::I64(want), "{side}");
        // Listed in their session until freed; freeing unbinds the name and the data.
        let session = if over_web { "up" } else { "default" };
        let names = [format!("{p}b"), format!("{p}f"), format!("{p}i")];
        assert_eq!(listed(&web_addr, session), names, "{side}");
        for t in [&x, &xi, &xb] {
            let api: &mut dyn TaskApi = if over_web { &mut web } else { &mut native };
            api.cancel_task(t.task).unwrap();
        }
        assert!(listed(&web_addr, session).is_empty(), "{side}");
    }
    assert_eq!(spooled(&root), 0, "spool files left behind");

    // Too large: refused by the declared size before anything is spooled, on both sides.
    let big = vec![0u8; 4_000_001];
    let e = native
        .upload_npy(Some("big"), None, big.len() as u64, &big[..])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Upload(m) if m.contains("limits.max_upload_bytes")),
        "{e}"
    );
    let e = web
        .upload_npy("big", None, big.len() as u64, &big[..])
        .unwrap_err();
    assert!(matches!(&e, ApiError::Http { status: 413, .. }), "{e}");
    // Not an .npy: the load fails, naming it, and the connection goes on.
    let e = native
        .upload_npy(Some("junk"), None, 9, &b"not a npy"[..])
        .unwrap_err();
    assert!(e.to_string().contains("not a usable .npy"), "{e}");
    let ok = native.upload_npy(Some("ok"), None, 0, &[][..]).unwrap_err();
    assert!(ok.to_string().contains("not a usable .npy"), "{ok}");
    assert_eq!(spooled(&root), 0);

    // A reader that fails mid-upload: the client ends the upload, which the supervisor drops.
    let bytes = npy("<f8", &[10], &[1.0; 10]);
    let e = native
        .upload_npy(Some("short"), None, bytes.len() as u64 + 100, &bytes[..])
        .unwrap_err(); // the reader ends before the declared size
    assert!(e.to_string().contains("reading the upload"), "{e}");
    assert_eq!(spooled(&root), 0);
    // A client that leaves mid-upload: the spool file goes with its connection.
    let mut s = session(&cluster);
    send(
        &mut s,
        &[ClientRequest::Hello {
            version: PROTOCOL_VERSION,
        }],
    );
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Welcome { .. }
    ));
    send(
        &mut s,
        &[ClientRequest::UploadBegin {
            request: 1,
            name: None,
            chunk: None,
            bytes: 1000,
        }],
    );
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Upload { answer: Ok(_), .. }
    ));
    assert_eq!(spooled(&root), 1);
    drop(s);
    eventually("an abandoned upload's spool file is removed", || {
        spooled(&root) == 0
    });
    // A client that leaves without freeing: its connection's uploads are freed.
    let mut leaving = cluster.client();
    leaving
        .upload_npy(Some("left"), None, bytes.len() as u64, &bytes[..])
        .unwrap();
    assert_eq!(listed(&web_addr, "default"), ["left"]);
    drop(leaving);
    eventually("an abandoned connection's upload is freed", || {
        listed(&web_addr, "default").is_empty()
    });
}
