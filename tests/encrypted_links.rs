//! `cluster.encrypt` with real processes on loopback: a sealed cluster computes exactly what
//! a plain one does (shuffles and result fetches cross the sealed data plane), a recording
//! proxy between a client and the supervisor sees no plaintext (and does see it on a plain
//! cluster, so the check can fail), and a byte altered in flight closes that one link while
//! the supervisor keeps serving.

mod common;

use ares::api::{NativeClient, TaskApi};
use ares::protocol::TaskStatus;
use ares_core::array::{ArrayData, Scalar};
use ares_core::tensor::{self, Tensor};
use common::cluster::Cluster;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SEALED: &str = "  encrypt: true\n";
/// A fill value whose 8 bytes are easy to find in a recording.
const MARKER: f64 = 1_234.567_890_123;

fn run(c: &mut NativeClient, t: &Tensor) -> ArrayData {
    let task = c.submit_tileable_graph(&Tensor::graph(&[t]), None).unwrap();
    let info = c.wait_task(task, Duration::from_secs(120)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = c.fetch(task).unwrap().remove(0);
    c.cancel_task(task).unwrap();
    got
}

/// A sum across workers (partial sums cross the data plane), a sort (a shuffle: every
/// worker reads from every other) and a 16 MB result fetched by the supervisor.
fn jobs() -> Vec<Tensor> {
    let x = tensor::rand(&[400_000], 25_000, Some(7)).unwrap();
    let sum = x
        .binary_scalar(ares_core::ops::Op::Add, Scalar::F64(1.0), false)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let sorted = tensor::rand(&[200_000], 20_000, Some(8))
        .unwrap()
        .sort()
        .unwrap();
    let big = tensor::randn(&[2_000_000], 250_000, Some(9)).unwrap();
    vec![sum, sorted, big]
}

#[test]
fn a_sealed_cluster_computes_exactly_what_a_plain_one_does() {
    let plain = Cluster::start_full(2, 2, "  encrypt: false\n", "");
    let sealed = Cluster::start_full(2, 2, SEALED, "");
    let (mut p, mut s) = (plain.client(), sealed.client());
    for t in jobs() {
        let (want, got) = (run(&mut p, &t), run(&mut s, &t));
        assert_eq!(want.shape(), got.shape());
        assert!(
            want.clone()
                .to_f64()
                .iter()
                .zip(got.to_f64().iter())
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "the sealed cluster's result differs"
        );
    }
}

/// Forwards one connection at a time from a local port to `to`, recording what the client
/// sends; `flip_at`: the offset of a client byte to alter on its way.
struct Proxy {
    addr: String,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Proxy {
    fn start(to: &str, flip_at: Option<usize>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (to, record) = (to.to_string(), seen.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let Ok(mut server) = TcpStream::connect(&to) else {
                    return;
                };
                let (mut client_r, mut server_w) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let record = record.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 65536];
                    let mut offset = 0usize;
                    while let Ok(n) = client_r.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if let Some(at) = flip_at.filter(|at| (offset..offset + n).contains(at)) {
                            buf[at - offset] ^= 0x40;
                        }
                        offset += n;
                        record.lock().unwrap().extend_from_slice(&buf[..n]);
                        if server_w.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = server_w.shutdown(std::net::Shutdown::Write);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server, &mut client);
                    let _ = client.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        Proxy { addr, seen }
    }

    fn saw(&self, needle: &[u8]) -> bool {
        self.seen
            .lock()
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
    }
}

/// What a client sends through a proxy to `cluster`: a graph holding [`MARKER`].
fn record_a_job(cluster: &Cluster) -> Proxy {
    let proxy = Proxy::start(&cluster.addr, None);
    let mut c =
        NativeClient::connect_with(&proxy.addr, Duration::from_secs(10), &cluster.client_secret)
            .unwrap();
    let t = tensor::full(&[1000], Scalar::F64(MARKER), 100)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let got = run(&mut c, &t).to_f64();
    assert!((got.iter().next().unwrap() - 1000.0 * MARKER).abs() < 1e-6);
    proxy
}

#[test]
fn a_recording_proxy_sees_no_plaintext_on_a_sealed_link() {
    let marker = MARKER.to_le_bytes();
    // The check can fail: on a plain link the graph's fill value travels as its 8 bytes.
    let plain = Cluster::start_full(1, 1, "  encrypt: false\n", "");
    assert!(
        record_a_job(&plain).saw(&marker),
        "the marker is not in the plain recording"
    );
    drop(plain);
    // Sealed by the supervisor, though the client (on loopback) did not ask.
    let sealed = Cluster::start_full(1, 1, SEALED, "");
    let proxy = record_a_job(&sealed);
    assert!(
        !proxy.saw(&marker),
        "the fill value crossed the sealed link in clear"
    );
    assert!(!proxy.saw(b"Hello"), "a message name crossed in clear");
}

#[test]
fn a_byte_altered_in_flight_closes_the_link_and_the_supervisor_keeps_serving() {
    let cluster = Cluster::start_full(1, 1, SEALED, "");
    // The handshake is 42 + 32 + 48 bytes from the client; byte 200 is inside its first
    // sealed record (the Hello frame or the submission).
    let proxy = Proxy::start(&cluster.addr, Some(200));
    let outcome =
        NativeClient::connect_with(&proxy.addr, Duration::from_secs(10), &cluster.client_secret)
            .and_then(|mut c| {
                let t = tensor::ones(&[10_000], 1000)
                    .unwrap()
                    .sum(None, false)
                    .unwrap();
                let task = c.submit_tileable_graph(&Tensor::graph(&[&t]), None)?;
                c.wait_task(task, Duration::from_secs(10))
            });
    assert!(
        outcome.is_err(),
        "an altered record was accepted: {outcome:?}"
    );
    // Others are served as before.
    let mut c = cluster.client();
    let t = tensor::ones(&[10_000], 1000)
        .unwrap()
        .sum(None, false)
        .unwrap();
    assert_eq!(
        run(&mut c, &t).to_f64().iter().next().copied(),
        Some(10_000.0)
    );
    let log = std::fs::read_to_string(cluster.dir.path().join("supervisor.log")).unwrap();
    assert!(
        log.contains("failed authentication"),
        "the supervisor did not say why: {log}"
    );
}
