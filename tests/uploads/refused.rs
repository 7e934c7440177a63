//! Out-of-step, idle and unauthenticated uploads are refused or dropped, with their spool files.

use crate::*;

#[test]
fn out_of_step_idle_and_unauthenticated_uploads_go_nowhere() {
    let (cluster, root) = cluster("  upload_idle_timeout_ms: 300\n");
    // Without the client secret no upload message is even read: the connection closes.
    let mut s = raw(&cluster.addr);
    send(
        &mut s,
        &[ClientRequest::UploadBegin {
            request: 1,
            name: None,
            chunk: None,
            bytes: 8,
        }],
    );
    let _ = s.shutdown(std::net::Shutdown::Write);
    assert_closed(s);
    let wrong = ares::protocol::secret::Secret::from_text("not the secret").unwrap();
    assert!(NativeClient::connect_with(&cluster.addr, Duration::from_secs(2), &wrong).is_err());
    assert_eq!(spooled(&root), 0);

    // Authenticated, pieces out of step: each refused, and the upload dropped.
    let mut s = session(&cluster);
    let hello = ClientRequest::Hello {
        version: PROTOCOL_VERSION,
    };
    send(&mut s, &[hello]);
    assert!(matches!(
        receive::<ClientReply>(&mut s)[0],
        ClientReply::Welcome { .. }
    ));
    let begin = |bytes| ClientRequest::UploadBegin {
        request: 1,
        name: Some("s".into()),
        chunk: None,
        bytes,
    };
    let piece = |offset, n: usize| ClientRequest::UploadPiece {
        request: 2,
        offset,
        data: vec![0u8; n].into(),
    };
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, begin(16))
        .unwrap_err()
        .contains("already in progress"));
    assert!(ask(&mut s, piece(4, 4))
        .unwrap_err()
        .contains("a piece at byte 4"));
    assert!(ask(&mut s, piece(0, 4))
        .unwrap_err()
        .contains("no upload in progress"));
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, piece(0, 17))
        .unwrap_err()
        .contains("exceed the 16 bytes"));
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert!(ask(&mut s, piece(0, 8)).unwrap().contains("Received"));
    assert!(ask(&mut s, ClientRequest::UploadEnd { request: 3 })
        .unwrap_err()
        .contains("after 8 of the 16 bytes"));
    // Pieces sent without waiting for answers are written and answered in order, up to the
    // window the supervisor names; one more than that is refused and drops the upload.
    let ready = ask(&mut s, begin(1000)).unwrap();
    let window: u64 = ready
        .split("window: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" }")
        .parse()
        .unwrap();
    let answers = |s: &mut ares::protocol::secure::BlockingConn, n: usize| {
        let mut got = Vec::new();
        while got.len() < n {
            got.extend(receive::<ClientReply>(s).iter().map(|a| format!("{a:?}")));
        }
        got
    };
    let pieces: Vec<ClientRequest> = (0..window).map(|k| piece(k * 8, 8)).collect();
    send(&mut s, &pieces);
    let written = answers(&mut s, window as usize);
    for (k, a) in written.iter().enumerate() {
        assert!(
            a.contains(&format!("received: {}", (k + 1) * 8)),
            "{written:?}"
        );
    }
    // In one frame: one piece is being written, `window` wait, the next is one too many.
    let base = window * 8;
    let pieces: Vec<ClientRequest> = (0..window + 2).map(|k| piece(base + k * 8, 8)).collect();
    send(&mut s, &pieces);
    let refused = answers(&mut s, window as usize + 2);
    assert!(refused.iter().all(|a| a.contains("Err(")), "{refused:?}");
    assert!(refused
        .iter()
        .any(|a| a.contains(&format!("more than {window} pieces waiting"))));
    assert!(ask(&mut s, piece(base, 8))
        .unwrap_err()
        .contains("no upload in progress"));
    // Idle: no piece for upload_idle_timeout_ms drops the upload and its spool file.
    assert!(ask(&mut s, begin(16)).unwrap().contains("Ready"));
    assert_eq!(spooled(&root), 1);
    eventually("an idle upload is dropped", || spooled(&root) == 0);
    assert!(ask(&mut s, piece(0, 8))
        .unwrap_err()
        .contains("upload_idle_timeout_ms"));
    // The connection still serves.
    let mut c = cluster.client();
    let bytes = npy("<i8", &[3], &[1i64, 2, 3]);
    let up = c
        .upload_npy(None, None, bytes.len() as u64, &bytes[..])
        .unwrap();
    let got = compute(&mut c, &up, "sum(x)");
    assert_eq!(got.get_flat(0).unwrap().as_i64(), 6);
}
