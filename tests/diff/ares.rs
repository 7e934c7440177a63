//! Runs programs through ares in each mode `ares run` offers, with a deadline on every wait:
//! the embedded cluster (one for the whole test, the same `EmbeddedCluster` and native client
//! `ares run` uses), the same cluster with fusion off (`--no-fuse`), and the local executor
//! (`--local`, with and without fusion). Panics become `Outcome::Panic`, timeouts `Outcome::Hang`; a cluster that
//! timed out is abandoned (not joined: it may be wedged) and a fresh one started.

use super::value::{Outcome, Res, Vals};
use ares::api::{NativeClient, TaskApi};
use ares::config::{Config, TaskConfig};
use ares::node::EmbeddedCluster;
use ares::protocol::TaskStatus;
use ares_core::array::ArrayData;
use ares_core::executor::execute;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor::Tensor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

/// How long one program may take in one mode.
pub const DEADLINE: Duration = Duration::from_secs(20);

pub const MODES: [&str; 4] = ["cluster", "cluster --no-fuse", "local", "local --no-fuse"];

pub fn to_res(a: &ArrayData) -> Res {
    let shape = a.shape().to_vec();
    let vals = match a {
        ArrayData::Bool(x) => Vals::B(x.iter().copied().collect()),
        ArrayData::I64(x) => Vals::I(x.iter().copied().collect()),
        ArrayData::F64(x) => Vals::F(x.iter().copied().collect()),
        ArrayData::I32(x) => Vals::I(x.iter().map(|v| *v as i64).collect()),
        ArrayData::F32(x) => Vals::F(x.iter().map(|v| *v as f64).collect()),
        // The generator draws no complex dtype (python/tests/test_complex.py checks them).
        ArrayData::C64(_) | ArrayData::C128(_) => {
            panic!("a complex result in the differential test")
        }
        // Nor the narrow integers (python/tests/test_int_dtypes.py): they compare as int64,
        // except uint64, whose values past 2^63 int64 cannot hold.
        ArrayData::U64(_) => panic!("a uint64 result in the differential test"),
        other => match other.clone().cast(ares_core::array::DType::I64) {
            ArrayData::I64(x) => Vals::I(x.iter().copied().collect()),
            _ => unreachable!("cast to int64"),
        },
    };
    Res { shape, vals }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Parses and evaluates `text` (ares' own front end); a panic is an error too.
pub fn parse(text: &str) -> Result<Tensor, Outcome> {
    match catch_unwind(|| ares_core::expr::evaluate(text)) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(Outcome::Err(format!("parse/eval: {e}"))),
        Err(p) => Err(Outcome::Panic(format!("in evaluate: {}", panic_text(p)))),
    }
}

/// `--local`: prepare and run on the local executor, on a thread with a deadline.
pub fn run_local(text: &str, fuse: bool) -> Outcome {
    let text = text.to_string();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(|| {
            let t = match parse(&text) {
                Ok(t) => t,
                Err(o) => return o,
            };
            let config = TaskConfig {
                fuse_enabled: fuse,
                ..TaskConfig::default()
            };
            let graph = Tensor::graph(&[&t]);
            let prepared = match prepare(&graph, &config, &uniform_cluster(2, 2), TaskId(1)) {
                Ok(p) => p,
                Err(e) => return Outcome::Err(format!("prepare: {e}")),
            };
            match execute(&prepared.subtasks, 2) {
                Ok((results, _)) => Outcome::Ok(to_res(&results[0])),
                Err(e) => Outcome::Err(format!("execute: {e}")),
            }
        }));
        let _ = tx.send(r.unwrap_or_else(|p| Outcome::Panic(panic_text(p))));
    });
    rx.recv_timeout(DEADLINE)
        .unwrap_or_else(|_| Outcome::Hang(format!("local: no result in {DEADLINE:?}")))
}

fn on_cluster(client: &mut NativeClient, text: &str, fuse: bool) -> Outcome {
    let t = match parse(text) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let graph = Tensor::graph(&[&t]);
    let task = match client.submit_tileable_graph(&graph, Some(fuse)) {
        Ok(t) => t,
        Err(e) => return Outcome::Err(format!("submit: {e}")),
    };
    let start = Instant::now();
    let info = loop {
        match client.wait_task(task, Duration::from_millis(500)) {
            Ok(info) if info.status.is_terminal() => break info,
            Ok(_) if start.elapsed() > DEADLINE => {
                let _ = client.cancel_task(task);
                return Outcome::Hang(format!("{task} still running after {DEADLINE:?}"));
            }
            Ok(_) => {}
            Err(e) => return Outcome::Err(format!("wait: {e}")),
        }
    };
    let out = match info.status {
        TaskStatus::Succeeded => match client.fetch(task) {
            Ok(r) => Outcome::Ok(to_res(&r[0])),
            Err(e) => Outcome::Err(format!("fetch: {e}")),
        },
        s => Outcome::Err(format!("{s:?}: {}", info.error.unwrap_or_default())),
    };
    let _ = client.cancel_task(task);
    out
}

type Job = (String, bool, Sender<Outcome>);

/// One embedded cluster and a client, driven from their own thread so that every wait has a
/// deadline even if a socket read would block forever.
pub struct ClusterRunner {
    jobs: Option<Sender<Job>>,
    pub restarts: usize,
}

fn start_driver() -> Sender<Job> {
    let (tx, rx): (Sender<Job>, Receiver<Job>) = channel();
    let (ready_tx, ready_rx) = channel();
    std::thread::spawn(move || {
        let cluster = EmbeddedCluster::start(&Config::default(), 2, 2).expect("embedded cluster");
        let mut client = cluster.client(Duration::from_secs(10)).expect("connect");
        ready_tx.send(()).unwrap();
        while let Ok((text, fuse, reply)) = rx.recv() {
            let r = catch_unwind(AssertUnwindSafe(|| on_cluster(&mut client, &text, fuse)));
            let _ = reply.send(r.unwrap_or_else(|p| Outcome::Panic(panic_text(p))));
        }
        drop(client);
        drop(cluster);
    });
    ready_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the embedded cluster did not start");
    tx
}

impl ClusterRunner {
    pub fn start() -> Self {
        Self {
            jobs: Some(start_driver()),
            restarts: 0,
        }
    }

    pub fn run(&mut self, text: &str, fuse: bool) -> Outcome {
        let (tx, rx) = channel();
        let jobs = self.jobs.get_or_insert_with(start_driver);
        if jobs.send((text.to_string(), fuse, tx)).is_err() {
            self.jobs = None;
            return Outcome::Panic("the cluster driver thread died".into());
        }
        match rx.recv_timeout(DEADLINE + Duration::from_secs(10)) {
            Ok(o) => o,
            Err(_) => {
                // Abandon the wedged cluster; the next program gets a new one.
                self.jobs = None;
                self.restarts += 1;
                Outcome::Hang(format!(
                    "no answer from the embedded cluster in {DEADLINE:?}"
                ))
            }
        }
    }

    /// The outcome in each of [`MODES`].
    pub fn all_modes(&mut self, text: &str) -> Vec<Outcome> {
        vec![
            self.run(text, true),
            self.run(text, false),
            run_local(text, true),
            run_local(text, false),
        ]
    }
}
