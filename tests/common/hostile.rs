//! Probes for the hostile suite: raw connections, a closed-connection check, a real job
//! after each attack, and the supervisor's memory from /proc.

use super::cluster::Cluster;
use ares::api::TaskApi;
use ares::protocol::auth;
use ares::protocol::codec;
use ares::protocol::handshake::{HandshakeError, Role};
use ares::protocol::secret::Secret;
use ares::protocol::secure::BlockingConn;
use ares::protocol::{ClientReply, ClientRequest, Direction, FromWorker, TaskStatus, ToWorker};
use ares_core::ids::TaskId;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Peak RSS the supervisor may reach through the whole suite.
pub const MAX_SUPERVISOR_RSS_KB: u64 = 300 << 10;

/// A raw connection, no handshake.
pub fn raw(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// A connection to `addr` after the handshake as `role` proving `secret` (in clear unless
/// the listener seals every link).
pub fn authed(addr: &str, role: Role, secret: &Secret) -> Result<BlockingConn, HandshakeError> {
    auth::connect_blocking(raw(addr), role, secret, false, Duration::from_secs(10))
}

/// An authenticated client connection to the supervisor (frames may follow).
pub fn session(cluster: &Cluster) -> BlockingConn {
    authed(&cluster.addr, Role::Client, &cluster.client_secret).unwrap()
}

/// Sends messages as one frame.
pub fn send<M: Direction>(s: &mut impl Write, messages: &[M]) {
    codec::write_frame(s, &codec::encode_frame(messages).unwrap()).unwrap();
}

/// The next frame's messages.
pub fn receive<M: Direction>(s: &mut impl Read) -> Vec<M> {
    codec::decode_frame(&codec::read_frame(s, 1 << 26).unwrap()).unwrap()
}

/// Submits `expr` and waits for it to succeed; the task stays (its result is kept).
pub fn submit_and_keep(cluster: &Cluster, expr: &str) -> TaskId {
    let mut c = cluster.client();
    let t = ares_core::expr::evaluate(expr).unwrap();
    let task = c
        .submit_tileable_graph(&ares_core::tensor::Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    task
}

/// Waits until the peer closes `s` (reading and dropping whatever it still sends, such as a
/// refusal); panics if it stays open for 10 s.
pub fn assert_closed(mut s: impl Read) {
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
    let t = ares_core::expr::evaluate("sum(arange(100, chunk=7))").unwrap();
    let task = c
        .submit_tileable_graph(&ares_core::tensor::Tensor::graph(&[&t]), None)
        .unwrap();
    let info = c.wait_task(task, Duration::from_secs(60)).unwrap();
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = c.fetch(task).unwrap().remove(0);
    assert_eq!(got.get_flat(0).unwrap().as_f64(), 4950.0);
    c.cancel_task(task).unwrap();
    let hwm = vm_kb(cluster.nodes[0].id(), "VmHWM:");
    eprintln!("supervisor peak RSS: {hwm} kB");
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

/// One message of every kind (about `task`), by direction.
pub struct Kinds {
    pub from_worker: Vec<FromWorker>,
    pub to_worker: Vec<ToWorker>,
    pub requests: Vec<ClientRequest>,
    pub replies: Vec<ClientReply>,
}

pub fn every_message(task: TaskId) -> Kinds {
    use ares::protocol::{RunSubtask, SubtaskReport, PROTOCOL_VERSION};
    use ares_core::ids::{ChunkIdx, SubtaskIdx, WorkerId};
    let graph = ares_core::tensor::Tensor::graph(&[&ares_core::tensor::ones(&[4], 2).unwrap()]);
    Kinds {
        from_worker: vec![
            FromWorker::Hello {
                version: PROTOCOL_VERSION,
                slots: 64,
                memory_limit: 0,
                data_addr: "127.0.0.1:1".into(),
                runs_code: true,
            },
            FromWorker::Heartbeat {
                stored_chunks: 0,
                stored_bytes: 0,
                memory: Default::default(),
                stream: Default::default(),
            },
            FromWorker::SubtasksFinished {
                task,
                reports: vec![SubtaskReport {
                    subtask: SubtaskIdx(0),
                    outcome: Ok(vec![(ChunkIdx(0), 8)]),
                }],
            },
        ],
        to_worker: vec![
            ToWorker::Welcome {
                version: PROTOCOL_VERSION,
                worker: WorkerId(0),
            },
            ToWorker::Refused { reason: "x".into() },
            ToWorker::Peers {
                peers: vec![(WorkerId(0), "127.0.0.1:1".into())],
            },
            ToWorker::RegisterTask {
                task,
                graph: vec![1, 2, 3].into(),
            },
            ToWorker::ExtendTask {
                task,
                graph: vec![4, 5, 6].into(),
            },
            ToWorker::RunSubtasks {
                task,
                subtasks: vec![RunSubtask {
                    subtask: SubtaskIdx(0),
                    depth: 0,
                    inputs: vec![],
                }],
            },
            ToWorker::CancelSubtasks {
                task,
                subtasks: vec![SubtaskIdx(0)],
            },
            ToWorker::ReleaseChunks {
                task,
                chunks: vec![ChunkIdx(0)],
            },
            ToWorker::ForgetTask { task },
        ],
        requests: vec![
            ClientRequest::Hello {
                version: PROTOCOL_VERSION,
            },
            ClientRequest::Submit {
                request: 1,
                graph: graph.clone(),
                fuse_enabled: None,
                config: None,
            },
            ClientRequest::Wait {
                request: 2,
                task,
                timeout_ms: 1,
            },
            ClientRequest::GetInfo { request: 3, task },
            ClientRequest::Cancel { request: 4, task },
            ClientRequest::FetchResult { request: 5, task },
            ClientRequest::UploadBegin {
                request: 6,
                name: Some("up".into()),
                chunk: None,
                bytes: 16,
            },
            ClientRequest::UploadPiece {
                request: 7,
                offset: 0,
                data: vec![0u8; 16].into(),
            },
            ClientRequest::UploadEnd { request: 8 },
            ClientRequest::Explain {
                request: 9,
                graph,
                limit: 0,
            },
        ],
        replies: vec![
            ClientReply::Welcome {
                version: PROTOCOL_VERSION,
            },
            ClientReply::Refused { reason: "x".into() },
            ClientReply::Submitted {
                request: 1,
                task: Ok(task),
            },
            ClientReply::Info {
                request: 3,
                info: Err("x".into()),
            },
            ClientReply::ResultData {
                request: 5,
                data: Err("x".into()),
            },
            ClientReply::Upload {
                request: 6,
                answer: Ok(ares::protocol::UploadAnswer::Ready {
                    piece_bytes: 16,
                    window: 4,
                }),
            },
            ClientReply::Explained {
                request: 9,
                text: Ok("x".into()),
            },
        ],
    }
}

fn frames<M: Direction + std::fmt::Debug>(ms: &[M]) -> Vec<(String, Vec<u8>)> {
    ms.iter()
        .map(|m| {
            let name = format!("{m:?}");
            let name = name.split([' ', '(', '{']).next().unwrap_or("").to_string();
            (
                format!("{}::{name}", M::NAME),
                codec::encode_frame(std::slice::from_ref(m)).unwrap(),
            )
        })
        .collect()
}

/// Each message of every kind as a frame of its own, with its direction and name.
pub fn every_frame(task: TaskId) -> Vec<(String, Vec<u8>)> {
    let k = every_message(task);
    let mut out = frames(&k.from_worker);
    out.extend(frames(&k.to_worker));
    out.extend(frames(&k.requests));
    out.extend(frames(&k.replies));
    out
}
