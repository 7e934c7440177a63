//! Hostile and broken input against real nodes (issue 8): each test replays what an attacker
//! on the network tried, then checks that the node still answers a real job correctly and
//! that the supervisor's peak RSS stayed under 300 MB.

mod common;

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
        let _ = s.shutdown(std::net::Shutdown::Write);
        assert_closed(s);
    }
    // A header promising 1000 bytes, then 10 and a half-close.
    let mut s = session(&cluster);
    s.write_all(&1000u32.to_be_bytes()).unwrap();
    s.write_all(&[0u8; 10]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_closed(s);
    still_serves(&cluster);
}
