//! Probes for the hostile suite: raw connections, a closed-connection check, a real job
//! after each attack, and the supervisor's memory from /proc.

use super::cluster::Cluster;
use ares::api::TaskApi;
use ares::protocol::TaskStatus;
use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Peak RSS the supervisor may reach through the whole suite.
pub const MAX_SUPERVISOR_RSS_KB: u64 = 300 << 10;

/// A connection to the supervisor's RPC port, past whatever the cluster asks before frames.
pub fn session(cluster: &Cluster) -> TcpStream {
    let s = TcpStream::connect(&cluster.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Waits until the peer closes `s` (reading and dropping whatever it still sends, such as a
/// refusal); panics if it stays open for 10 s.
pub fn assert_closed(mut s: TcpStream) {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                panic!("connection still open after {:?}", start.elapsed())
            }
            Err(_) => return, // reset
            Ok(_) => continue,
        }
    }
}

/// A `kB` field of /proc/PID/status.
pub fn vm_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} of {pid}"))
}

/// The supervisor is alive, computes a real job correctly, and its peak RSS stayed bounded.
pub fn still_serves(cluster: &Cluster) {
    let mut c = cluster.client();
    let t = ares::expr::evaluate("sum(arange(100, chunk=7))").unwrap();
    let task = c
        .submit_tileable_graph(&ares::tensor::Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = c.fetch(task).unwrap().remove(0);
    assert_eq!(got.get_flat(0).unwrap().as_f64(), 4950.0);
    c.cancel_task(task).unwrap();
    let hwm = vm_kb(cluster.nodes[0].id(), "VmHWM:");
    assert!(hwm < MAX_SUPERVISOR_RSS_KB, "supervisor peak RSS {hwm} kB");
}

/// A small deterministic generator for random bytes (no seed files to keep).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn byte(&mut self) -> u8 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
}
