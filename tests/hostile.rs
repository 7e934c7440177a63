//! Hostile and broken input against real nodes (issue 8), part one: the wire. Each test
//! replays what an attacker on the network tried (length claims, bare headers, random and
//! truncated bytes, no or wrong secret, wrong-direction frames, slowloris, live fuzz), then
//! checks that the node still answers a real job correctly and that the supervisor's peak RSS
//! stayed under 300 MB. Limits and HTTP are in `hostile_limits.rs`.

mod common;

use ares::api::TaskApi;
use ares::protocol::codec;
use ares::protocol::handshake::{HandshakeError, Role};
use ares::protocol::secret::Secret;
use ares::protocol::{ClientReply, ClientRequest};
use ares_core::ids::TaskId;
use common::cluster::Cluster;
use common::hostile::*;
use std::io::Write;
use std::time::Duration;

/// Row 1: a frame whose string claims 2^56 bytes (and claims of 2^29..2^31) cost nothing.
#[test]
fn huge_length_claims_in_a_frame_allocate_nothing() {
    let cluster = Cluster::start(1, 1);
    for claim in [1u64 << 56, 1 << 29, 1 << 30, 1 << 31] {
        let mut body = vec![0x01, 0x03, 0xfd];
        body.extend_from_slice(&claim.to_le_bytes());
        let mut s = session(&cluster);
        s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
        s.write_all(&body).unwrap();
        assert_closed(s);
    }
    still_serves(&cluster);
}

/// Row 2: bare length headers reserve nothing, and nothing is retained after they close.
#[test]
fn bare_length_headers_reserve_nothing() {
    let cluster = Cluster::start(1, 1);
    let pid = cluster.nodes[0].id();
    let before = vm_kb(pid, "VmSize:");
    let held: Vec<_> = (0..20)
        .map(|_| {
            let mut s = session(&cluster);
            s.write_all(&[0x3f, 0xff, 0xff, 0xff]).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let during = vm_kb(pid, "VmSize:");
    eprintln!("VmSize: {before} kB before, {during} kB with 20 header-only connections");
    assert!(
        during < before + (1 << 20),
        "20 header-only connections grew virtual memory from {before} kB to {during} kB"
    );
    drop(held);
    still_serves(&cluster);
}

/// Truncated frames, random bytes and a frame cut mid-body: each closes its connection only.
#[test]
fn truncated_and_random_bytes_close_one_connection() {
    let cluster = Cluster::start(1, 1);
    let mut rng = Lcg(7);
    for len in [1usize, 3, 17, 256, 4096, 70_000] {
        let mut s = session(&cluster);
        let bytes: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        let _ = s.write_all(&bytes);
        let _ = s.tcp().shutdown(std::net::Shutdown::Write);
        assert_closed(s);
    }
    // A header promising 1000 bytes, then 10 and a half-close.
    let mut s = session(&cluster);
    s.write_all(&1000u32.to_be_bytes()).unwrap();
    s.write_all(&[0u8; 10]).unwrap();
    s.tcp().shutdown(std::net::Shutdown::Write).unwrap();
    assert_closed(s);
    still_serves(&cluster);
}

/// Row 5: without the secret nothing but the handshake is read, on either port. Valid frames
/// of every client kind sent first are never answered, and a real task is left alone.
#[test]
fn without_the_secret_nothing_reaches_a_handler() {
    let cluster = Cluster::start(1, 1);
    let task = submit_and_keep(&cluster, "ones(10, chunk=5) * 3");
    let k = every_message(task);
    let mut frames: Vec<Vec<u8>> = every_frame(task).into_iter().map(|f| f.1).collect();
    frames.push(codec::encode_frame(&k.requests).unwrap());
    frames.push(codec::encode_frame(&k.from_worker).unwrap());
    for frame in frames {
        let mut s = raw(&cluster.addr);
        let _ = codec::write_frame(&mut s, &frame);
        // Shorter than a hello: the listener waits for the rest until the write side ends.
        let _ = s.shutdown(std::net::Shutdown::Write);
        assert_closed(s);
    }
    // The wrong secret, for every role, on the RPC port and the data plane.
    let wrong = Secret::from_text("not the secret").unwrap();
    for (addr, role) in [
        (&cluster.addr, Role::Client),
        (&cluster.addr, Role::Worker),
        (&cluster.workers[0], Role::Peer),
    ] {
        let err = authed(addr, role, &wrong).unwrap_err();
        assert!(matches!(err, HandshakeError::ListenerProof), "{err}");
    }
    // A raw data-plane request for the result: closed without an answer.
    let mut s = raw(&cluster.workers[0]);
    let req = ares::protocol::data::encode_request(task, &[ares_core::ids::ChunkIdx(0)]).unwrap();
    let _ = codec::write_frame(&mut s, &req);
    let _ = s.shutdown(std::net::Shutdown::Write);
    assert_closed(s);
    // The RPC port serves no Peer role, the data plane no Client role.
    let err = authed(&cluster.workers[0], Role::Client, &cluster.client_secret).unwrap_err();
    assert!(matches!(err, HandshakeError::RoleNotServed(_)), "{err}");
    // The owner still has the task and its result.
    let mut c = cluster.client();
    let got = c.fetch(task).unwrap().remove(0);
    assert_eq!(got.get_flat(9).unwrap().as_f64(), 3.0);
    still_serves(&cluster);
}

/// Row 5: a client credential never registers a worker (a fake HelloWorker with 64 slots
/// once swallowed all work), and no side may send the other side's messages.
#[test]
fn messages_from_the_wrong_side_are_refused() {
    let cluster = Cluster::start(1, 1);
    let client = cluster.client_secret.clone();
    // The client secret does not open the worker role.
    assert!(authed(&cluster.addr, Role::Worker, &client).is_err());
    // On a client connection, a frame of any other direction (a worker's hello with 64 slots,
    // a heartbeat, supervisor-to-worker commands, replies) does not decode: closed, unanswered,
    // whether sent first or after the client's hello.
    let hello = ClientRequest::Hello {
        version: ares::protocol::PROTOCOL_VERSION,
    };
    for (kind, frame) in every_frame(TaskId(1))
        .into_iter()
        .filter(|(k, _)| !k.starts_with("client-request"))
    {
        for welcomed in [false, true] {
            let mut s = authed(&cluster.addr, Role::Client, &client).unwrap();
            if welcomed {
                send(&mut s, std::slice::from_ref(&hello));
                assert!(matches!(
                    &receive::<ClientReply>(&mut s)[0],
                    ClientReply::Welcome { .. }
                ));
            }
            codec::write_frame(&mut s, &frame).unwrap();
            let answer = codec::read_frame(&mut s, 1 << 20);
            assert!(
                answer.is_err(),
                "{kind} (welcomed: {welcomed}) was answered"
            );
        }
    }
    // Requests before the hello are refused.
    let mut s = authed(&cluster.addr, Role::Client, &client).unwrap();
    send(
        &mut s,
        &[ClientRequest::Cancel {
            request: 1,
            task: TaskId(1),
        }],
    );
    assert!(matches!(
        &receive::<ClientReply>(&mut s)[0],
        ClientReply::Refused { .. }
    ));
    assert_closed(s);
    // The worker role on the cluster secret cannot send client requests.
    let mut s = authed(&cluster.addr, Role::Worker, &cluster.secret).unwrap();
    send(&mut s, std::slice::from_ref(&hello));
    assert_closed(s);
    let mut c =
        ares::api::NativeClient::connect_with(&cluster.addr, Duration::from_secs(5), &client)
            .unwrap();
    let t = ares_core::expr::evaluate("sum(ones(6, chunk=2))").unwrap();
    let task = c
        .submit_tileable_graph(&ares_core::tensor::Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(30)).unwrap();
    assert_eq!(info.status, ares::protocol::TaskStatus::Succeeded);
    still_serves(&cluster);
}

/// Row 5: the data plane sends each distinct chunk once per request, however often listed.
#[test]
fn the_data_plane_answers_each_chunk_once() {
    let cluster = Cluster::start(1, 1);
    let task = submit_and_keep(&cluster, "ones(100000, chunk=100000) + 1");
    let mut found = 0;
    for c in 0..8 {
        let mut s = authed(&cluster.workers[0], Role::Peer, &cluster.secret).unwrap();
        let req =
            ares::protocol::data::encode_request(task, &vec![ares_core::ids::ChunkIdx(c); 20_000])
                .unwrap();
        codec::write_frame(&mut s, &req).unwrap();
        let answer = codec::read_frame(&mut s, 1 << 26).unwrap_or_else(|e| {
            panic!(
                "{e}: {}",
                std::fs::read_to_string(cluster.dir.path().join("w0.log")).unwrap()
            )
        });
        assert!(
            answer.len() < 1 << 20,
            "{} bytes for one chunk",
            answer.len()
        );
        if let Ok(chunks) = ares::protocol::data::decode_answer(&answer) {
            assert_eq!(chunks.len(), 1);
            found += 1;
        }
    }
    assert_eq!(found, 1, "the result chunk is on the worker");
    still_serves(&cluster);
}

/// Slowloris: connections that trickle their hello are dropped at the handshake timeout,
/// and others are served meanwhile.
#[test]
fn slow_handshakes_are_dropped_at_the_timeout() {
    let cluster = Cluster::start_full(1, 1, "  handshake_timeout_ms: 500\n", "");
    let slow: Vec<_> = (0..30)
        .map(|_| {
            let mut s = raw(&cluster.addr);
            s.write_all(b"AR").unwrap();
            s
        })
        .collect();
    still_serves(&cluster);
    let start = std::time::Instant::now();
    for s in slow {
        assert_closed(s);
    }
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // The wrong protocol version is told so.
    let (_, mut hello) = ares::protocol::handshake::Connector::hello(Role::Client, false);
    hello[4..8].copy_from_slice(&999u32.to_be_bytes());
    let mut s = raw(&cluster.addr);
    s.write_all(&hello).unwrap();
    let mut status = [0u8; 1];
    std::io::Read::read_exact(&mut s, &mut status).unwrap();
    assert_eq!(status[0], 2, "version refusal");
    assert_closed(s);
}

/// Live fuzz: mutated frames of every kind over authenticated connections to a real
/// supervisor (as a client) and a worker's data plane (as a peer): a few hundred connections,
/// not 10^5 connects. Each connection gets an answer or is closed; the cluster keeps serving.
#[test]
fn live_fuzz_over_authenticated_connections() {
    let cluster = Cluster::start(1, 1);
    let task = submit_and_keep(&cluster, "ones(100, chunk=10) + 2");
    let mut rng = Lcg(11);
    // Every kind but Cancel, which would (legitimately) free the result checked at the end.
    let seeds: Vec<Vec<u8>> = every_frame(task)
        .into_iter()
        .filter(|(kind, _)| !kind.ends_with("::Cancel"))
        .map(|(_, frame)| frame)
        .chain((0..8u32).map(|c| {
            ares::protocol::data::encode_request(task, &[ares_core::ids::ChunkIdx(c); 3]).unwrap()
        }))
        .collect();
    let (mut answered, mut closed) = (0, 0);
    for i in 0..300 {
        let (addr, role, secret) = if i % 3 == 0 {
            (&cluster.workers[0], Role::Peer, &cluster.secret)
        } else {
            (&cluster.addr, Role::Client, &cluster.client_secret)
        };
        let mut s = authed(addr, role, secret).unwrap();
        let mut frame = seeds[usize::from(rng.byte()) % seeds.len()].clone();
        for _ in 0..usize::from(rng.byte() % 4) {
            let at = usize::from(rng.byte()) % frame.len().max(1);
            if let Some(b) = frame.get_mut(at) {
                *b = rng.byte();
            }
        }
        let _ = codec::write_frame(&mut s, &frame);
        let _ = s.tcp().shutdown(std::net::Shutdown::Write);
        s.tcp()
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        match codec::read_frame(&mut s, 1 << 26) {
            Ok(_) => answered += 1,
            Err(_) => closed += 1,
        }
    }
    eprintln!("live fuzz: 300 connections, {answered} answered, {closed} closed");
    assert!(
        answered > 0 && closed > 0,
        "{answered} answered, {closed} closed"
    );
    let mut c = cluster.client();
    assert_eq!(
        c.fetch(task).unwrap()[0].get_flat(99).unwrap().as_f64(),
        3.0
    );
    still_serves(&cluster);
}
