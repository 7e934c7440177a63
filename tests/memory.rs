//! Larger than memory (issue 10): real `ares node` processes with small `worker.memory_limit`s
//! run jobs on 4x more data than all their limits together, spilling to `worker.spill_dir`;
//! answers are checked against the independent ndarray reference, and every worker's
//! accounted peak (from its heartbeat, `/api/cluster/nodes`) against its limit. Also: the
//! refusal at submission (native and HTTP), a full disk while spilling, spill files gone on exit, and the
//! `memory` object of `ares run --json`. Issue 29: any rechunk fits limits of twice its
//! larger chunk, as prepared and checked at submission and on real processes.

mod common;

use ares::api::TaskApi;
use ares::footprint;
use ares::protocol::TaskStatus;
use ares_core::config::TaskConfig;
use ares_core::ids::TaskId;
use ares_core::ops::ChunkSpec;
use ares_core::prepare::{prepare, uniform_cluster};
use ares_core::tensor;
use ares_core::tensor::Tensor;
use common::cluster::{wait_ready, Cluster};
use common::nodes::{scalar, signal, submit, wait_end, Nodes};
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// The two-pass variance of 2^25 random floats (256 MiB) in chunks of 4 MiB: every chunk of
/// `x` must be kept until `mean(x)` is known.
const VARIANCE: &str =
    "x = rand(33554432, chunk=524288, seed=7); y = x - mean(x); sum(y * y) / 33554432";

fn reference(program: &str) -> f64 {
    let t = ares_core::expr::evaluate(program).unwrap();
    common::reference::evaluate(&Tensor::graph(&[&t]))
        .pop()
        .unwrap()
        .first()
        .copied()
        .unwrap()
}

/// Every worker's `memory` object, once each has sent a heartbeat after `since`.
fn worker_memory(web: &str, workers: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let body: Value = ureq::get(&format!("http://{web}/api/cluster/nodes"))
            .call()
            .unwrap()
            .into_json()
            .unwrap();
        let nodes: Vec<Value> = body["nodes"].as_array().unwrap().to_vec();
        let memory: Vec<Value> = nodes.iter().map(|n| n["memory"].clone()).collect();
        if memory.len() == workers && memory.iter().all(|m| m["limit"].as_u64() > Some(0)) {
            return memory;
        }
        assert!(
            Instant::now() < deadline,
            "no heartbeats with memory: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn spill_files(root: &Path) -> usize {
    walk(root).len()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}

#[test]
fn a_job_on_4x_the_memory_limits_completes_within_them() {
    let spill = tempfile::tempdir().unwrap();
    let yaml = format!(
        "  memory_limit: 32MiB\n  spill_dir: {}\nweb:\n  listen: 127.0.0.1:0\n",
        spill.path().display()
    );
    let mut cluster = Cluster::start_with(2, 2, &yaml);
    let web = cluster.web.clone().unwrap();
    let mut c = cluster.client();
    let start = Instant::now();
    let task = submit(&mut c, VARIANCE);
    let info = wait_end(&mut c, task, Duration::from_secs(240));
    eprintln!("variance of 256 MiB on 2 x 32 MiB: {:?}", start.elapsed());
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let got = scalar(&mut c, task);
    let want = reference(VARIANCE);
    assert!((got - want).abs() <= 1e-9 * want.abs(), "{got} != {want}");

    std::thread::sleep(Duration::from_millis(300)); // a heartbeat after the end
    let memory = worker_memory(&web, 2);
    eprintln!("{memory:#?}");
    for m in &memory {
        let (peak, limit) = (
            m["peak_bytes"].as_u64().unwrap(),
            m["limit"].as_u64().unwrap(),
        );
        assert_eq!(limit, 32 * MIB);
        assert!(
            peak <= limit,
            "accounted peak {peak} over the limit {limit}"
        );
        assert!(m["spills"].as_u64().unwrap() > 0, "{m}");
        assert!(m["unspills"].as_u64().unwrap() > 0, "{m}");
    }
    let spilled: u64 = memory
        .iter()
        .map(|m| m["spilled_bytes_total"].as_u64().unwrap())
        .sum();
    assert!(
        spilled >= 128 * MIB,
        "at least half of x went to disk: {spilled}"
    );

    // Released, the chunks' files go.
    c.cancel_task(task).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while spill_files(spill.path()) > 0 {
        assert!(Instant::now() < deadline, "{:?}", walk(spill.path()));
        std::thread::sleep(Duration::from_millis(50));
    }

    // A subtask that fits in no worker's limit is refused at submission, with the numbers,
    // over the native protocol and over HTTP.
    let too_big = "sum(rand(8388608, chunk=8388608, seed=1))";
    let graph = Tensor::graph(&[&ares_core::expr::evaluate(too_big).unwrap()]);
    let refused = |error: &str| {
        error.contains("projected memory 128 MiB > allowed 32 MiB")
            && error.contains("reduce chunk=")
    };
    let error = c
        .submit_tileable_graph(&graph, None)
        .unwrap_err()
        .to_string();
    assert!(refused(&error), "{error}");
    let (code, body) = match ureq::post(&format!("http://{web}/api/session/default/task"))
        .send_json(serde_json::json!({ "expr": too_big }))
    {
        Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap_or_default()),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(code, 400, "{body}");
    assert!(refused(&body), "{body}");
    let task = submit(&mut c, "sum(arange(1000, chunk=100))");
    assert_eq!(
        wait_end(&mut c, task, Duration::from_secs(30)).status,
        TaskStatus::Succeeded
    );
    assert_eq!(scalar(&mut c, task), 499_500.0);

    // Workers stopped by a signal remove their spill directories.
    for w in &cluster.nodes[1..] {
        signal(w, "TERM");
    }
    for w in &mut cluster.nodes[1..] {
        let deadline = Instant::now() + Duration::from_secs(10);
        while w.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "worker did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let left: Vec<_> = std::fs::read_dir(spill.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_worker_above_the_pause_threshold_starts_nothing_new_until_back_under() {
    // Spilling down to 30 % leaves a running subtask's reservation (8 MiB of fused scratch
    // and its 4 MiB input: 37.5 %) above a pause threshold of 35 %: the second slot waits.
    let spill = tempfile::tempdir().unwrap();
    let yaml = format!(
        "  memory_limit: 32MiB\n  memory:\n    spill: 0.3\n    pause: 0.35\n  spill_dir: {}\nweb:\n  listen: 127.0.0.1:0\n",
        spill.path().display()
    );
    let cluster = Cluster::start_with(1, 2, &yaml);
    let mut c = cluster.client();
    let program = "x = rand(8388608, chunk=524288, seed=5); y = x - mean(x); sum(y * y)";
    let task = submit(&mut c, program);
    assert_eq!(
        wait_end(&mut c, task, Duration::from_secs(120)).status,
        TaskStatus::Succeeded
    );
    let (got, want) = (scalar(&mut c, task), reference(program));
    assert!((got - want).abs() <= 1e-9 * want, "{got} != {want}");
    std::thread::sleep(Duration::from_millis(300));
    let m = &worker_memory(cluster.web.as_ref().unwrap(), 1)[0];
    eprintln!("pause test: {m}");
    assert!(m["pauses"].as_u64().unwrap() > 0, "{m}");
    // A worker process's monitor reports what its accounting does not see (0 here: the
    // debug worker's growth stays within the monitor's allowance).
    assert!(m["unmanaged_bytes"].is_u64(), "{m}");
    assert!(m["peak_bytes"].as_u64().unwrap() <= 32 * MIB, "{m}");
}

#[test]
fn a_full_disk_while_spilling_fails_the_task_and_the_worker_keeps_serving() {
    let mut nodes = Nodes::supervisor("", "");
    let spill = nodes.dir.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    // The worker's own config: 16 MiB, spilling into a 1 MiB tmpfs of its own mount namespace.
    let cfg = nodes.dir.path().join("worker.yml");
    let base = std::fs::read_to_string(&nodes.cfg).unwrap();
    let yaml = format!(
        "{base}  memory_limit: 16MiB\n  spill_dir: {}\n",
        spill.display()
    );
    std::fs::write(&cfg, yaml).unwrap();
    let ready = nodes.dir.path().join("w0.json");
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs {} && exec \"$0\" \"$@\"",
        spill.display()
    );
    let child = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script, env!("CARGO_BIN_EXE_ares")])
        .args([
            "node",
            "--role",
            "worker",
            "--config",
            cfg.to_str().unwrap(),
        ])
        .args([
            "--supervisor",
            &nodes.addr,
            "--ready-file",
            ready.to_str().unwrap(),
        ])
        .stderr(std::fs::File::create(ready.with_extension("log")).unwrap())
        .spawn()
        .expect("unshare (util-linux) runs the worker in its own mount namespace; needs root");
    nodes.workers.push(child);
    wait_ready(&ready);
    let mut c = nodes.client();
    let program = "x = rand(4194304, chunk=262144, seed=3); y = x - mean(x); sum(y * y)";
    let task = submit(&mut c, program);
    let info = wait_end(&mut c, task, Duration::from_secs(120));
    let error = info.error.clone().unwrap_or_default();
    assert_eq!(info.status, TaskStatus::Failed, "{info:?}");
    assert!(
        error.contains("cannot spill chunk") && error.contains("No space left on device"),
        "{error}"
    );
    let task = submit(&mut c, "sum(arange(1000, chunk=100))");
    let info = wait_end(&mut c, task, Duration::from_secs(30));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    assert_eq!(scalar(&mut c, task), 499_500.0);
}

#[test]
fn ares_run_json_reports_memory_apart_from_timings() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("run.yml");
    let spill = dir.path().join("spill");
    let yaml = format!(
        "worker:\n  memory_limit: 16MiB\n  spill_dir: {}\n",
        spill.display()
    );
    std::fs::write(&cfg, yaml).unwrap();
    let program = "x = rand(4194304, chunk=262144, seed=3); y = x - mean(x); sum(y * y) / 4194304";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .args([
            "run",
            "--json",
            "--workers",
            "1",
            "--config",
            cfg.to_str().unwrap(),
        ])
        .args(["--expr", program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = reference(program);
    let got = v["result"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-9 * want, "{got} != {want}");
    assert!(v["timings"].get("memory").is_none());
    let m = &v["memory"];
    let w = &m["workers"][0];
    assert_eq!(w["limit"].as_u64(), Some(16 * MIB), "{v}");
    assert!(w["peak_bytes"].as_u64().unwrap() <= 16 * MIB, "{v}");
    assert!(m["spills"].as_u64().unwrap() > 0, "{v}");
    assert!(m["spilled_bytes_total"].as_u64().unwrap() >= 8 * MIB, "{v}");
    assert_eq!(
        spill_files(&spill),
        0,
        "the run's workers removed their files"
    );
}

/// Issue 10's benchmark (c) in small: a rechunk from row bands to column bands across 2
/// workers, each column band assembled from pieces half of which its worker fetches from the
/// other. The accounting counts fetched bytes as they land; a worker that fetched before
/// reserving their room (as it once did) held them on top of everything else and passed its
/// limit (26.1 MB accounted against 25.2). Spilling only above 90 % keeps the workers near
/// their limits, where that shows. Every worker's accounted peak stays under its limit, no
/// bytes stay in transit, and the answer is right.
#[test]
fn a_rechunk_across_workers_fetches_within_the_memory_limits() {
    let spill = tempfile::tempdir().unwrap();
    let yaml = format!(
        "  memory_limit: 24MiB\n  memory:\n    spill: 0.9\n    pause: 0.95\n  spill_dir: {}\nweb:\n  listen: 127.0.0.1:0\n",
        spill.path().display()
    );
    let cluster = Cluster::start_with(2, 3, &yaml);
    let mut c = cluster.client();
    let program = "x = rand((8192, 1024), chunk=(256, 1024), seed=11); \
                   y = rechunk(x, (8192, 32)); sum(y * y)";
    let task = submit(&mut c, program);
    let info = wait_end(&mut c, task, Duration::from_secs(240));
    assert_eq!(info.status, TaskStatus::Succeeded, "{info:?}");
    let (got, want) = (scalar(&mut c, task), reference(program));
    assert!((got - want).abs() <= 1e-9 * want, "{got} != {want}");
    std::thread::sleep(Duration::from_millis(300)); // a heartbeat after the end
    let memory = worker_memory(cluster.web.as_ref().unwrap(), 2);
    eprintln!("rechunk on 2 x 24 MiB: {memory:#?}");
    for m in &memory {
        let peak = m["peak_bytes"].as_u64().unwrap();
        assert!(
            peak <= 24 * MIB,
            "accounted peak {peak} over the limit: {m}"
        );
        assert_eq!(m["transit_bytes"].as_u64(), Some(0), "{m}");
    }
}

/// Issue 29's rechunk at a smaller scale: 32 MiB of float64 from row bands (128, 2048) to
/// column bands (2048, 128), 2 MiB chunks both, on 2 workers whose `memory_limit` is twice
/// the chunk (4 MiB). It was refused at submission (two row bands grouped in one subtask,
/// 6 MiB, and each column band's assemble projected a third copy of itself, 6 MiB); it runs,
/// spilling, within the limits, and moves no value: the column bands hold, bit for bit, the
/// array the row bands computed in a task of their own.
#[test]
fn a_rechunk_runs_on_workers_limited_to_twice_its_chunk() {
    rechunk_on_two_limited_workers((2048, 2048), (128, 2048), (2048, 128), "4MiB", 4 * MIB);
}

/// Issue 29's case on real processes: 512 MiB of float64 from row bands (256, 8192) to
/// column bands (8192, 256), 16 MiB chunks, on 2 workers of `memory_limit: 64MiB` (once
/// refused: "projected memory 80 MiB > allowed 64 MiB"). Ignored: a minute or more in the
/// debug build; BENCHMARKS.md has its time and peaks in release (`cargo test --release
/// --test memory -- --ignored issue_29_rechunk_of_512_mib --nocapture`).
#[test]
#[ignore]
fn issue_29_rechunk_of_512_mib_runs_on_two_workers_of_64_mib() {
    rechunk_on_two_limited_workers((8192, 8192), (256, 8192), (8192, 256), "64MiB", 64 * MIB);
}

/// `rand(shape)` in `from` chunks rechunked to `to` on 2 workers of 2 slots limited to
/// `limit` (spilling to a temporary directory): the result equals, bit for bit, the array
/// computed in a task of its own and the independent reference's `rand`, and every worker's
/// accounted peak stays within the limit.
fn rechunk_on_two_limited_workers(
    shape: (usize, usize),
    from: (usize, usize),
    to: (usize, usize),
    limit_yaml: &str,
    limit: u64,
) {
    let spill = tempfile::tempdir().unwrap();
    let yaml = format!(
        "  memory_limit: {limit_yaml}\n  spill_dir: {}\nweb:\n  listen: 127.0.0.1:0\n",
        spill.path().display()
    );
    let cluster = Cluster::start_with(2, 2, &yaml);
    let mut c = cluster.client();
    let x = format!(
        "rand(({}, {}), chunk=({}, {}), seed=13)",
        shape.0, shape.1, from.0, from.1
    );
    let mut values = Vec::new();
    for program in [format!("rechunk({x}, ({}, {}))", to.0, to.1), x.clone()] {
        let started = Instant::now();
        let task = submit(&mut c, &program);
        let info = wait_end(&mut c, task, Duration::from_secs(600));
        assert_eq!(info.status, TaskStatus::Succeeded, "{program}: {info:?}");
        eprintln!("{program}: {:.2} s", started.elapsed().as_secs_f64());
        values.push(c.fetch(task).unwrap().remove(0));
        c.cancel_task(task).unwrap();
    }
    let (rechunked, source) = (&values[0], &values[1]);
    assert_eq!(rechunked.shape(), &[shape.0, shape.1]);
    let bits =
        |a: &ares_core::array::ArrayData| -> Vec<u64> { a.iter_f64().map(f64::to_bits).collect() };
    assert!(
        bits(rechunked) == bits(source),
        "the rechunk changed values"
    );
    // And the source is the independent reference's.
    let t = ares_core::expr::evaluate(&x).unwrap();
    let want = common::reference::evaluate(&Tensor::graph(&[&t]))
        .pop()
        .unwrap();
    assert!(
        want.iter().map(|v| v.to_bits()).eq(bits(source)),
        "rand differs from the reference"
    );

    std::thread::sleep(Duration::from_millis(300)); // a heartbeat after the end
    let memory = worker_memory(cluster.web.as_ref().unwrap(), 2);
    eprintln!("rechunk on 2 x {limit_yaml}: {memory:#?}");
    for m in &memory {
        let peak = m["peak_bytes"].as_u64().unwrap();
        assert!(peak <= limit, "accounted peak {peak} over the limit: {m}");
    }
}

/// The smallest limit set is the coloring's budget.
#[test]
fn the_memory_budget_is_the_smallest_limit_set() {
    assert_eq!(footprint::budget(&[]), 0);
    assert_eq!(footprint::budget(&[0, 0]), 0);
    assert_eq!(footprint::budget(&[64, 0, 32]), 32);
}

/// `rand(shape, from)` rechunked to `to`, prepared for 2 workers of 2 slots whose
/// `memory_limit` is `limit`, then checked as the supervisor checks it.
fn rechunk_fits(
    shape: &[usize],
    from: ChunkSpec,
    to: ChunkSpec,
    limit: u64,
) -> Result<(), footprint::DoesNotFit> {
    let x = tensor::rand(shape, from, Some(3)).unwrap();
    let y = x.rechunk(to).unwrap();
    let config = TaskConfig {
        memory_budget: footprint::budget(&[limit, limit]),
        ..TaskConfig::default()
    };
    let p = prepare(
        &Tensor::graph(&[&y]),
        &config,
        &uniform_cluster(2, 2),
        TaskId(1),
    );
    footprint::check_fits(&p.unwrap().subtasks, &[limit, limit])
}

/// Issue 29's case: 512 MiB of float64 from row bands (256, 8192) to column bands
/// (8192, 256), 16 MiB chunks both. Each column band is assembled from 32 pieces of
/// 512 KiB: 16 MiB of blocks and 16 MiB assembled. Two row bands once shared a subtask
/// (48 MiB) and an assemble projected a third copy; now 2x the chunk (32 MiB) is enough,
/// and one byte less is refused, naming the limit.
#[test]
fn issue_29_rechunk_fits_in_twice_its_chunk() {
    let (from, to) = (
        ChunkSpec::PerDim(vec![256, 8192].into()),
        ChunkSpec::PerDim(vec![8192, 256].into()),
    );
    for limit in [64 * MIB, 32 * MIB] {
        let fits = rechunk_fits(&[8192, 8192], from.clone(), to.clone(), limit);
        assert!(fits.is_ok(), "{limit}: {}", fits.unwrap_err());
    }
    let e = rechunk_fits(&[8192, 8192], from, to, 32 * MIB - 1).unwrap_err();
    assert_eq!(e.projected, 32 * MIB, "{e}");
}

/// Through the shuffle (64 x 64 pairs, more than 4 per chunk): each mapper holds its
/// chunk and each reducer its target chunk, within 2x the chunk.
#[test]
fn a_shuffled_rechunk_fits_in_twice_its_chunk() {
    let (from, to) = (
        ChunkSpec::PerDim(vec![1, 4096].into()),
        ChunkSpec::PerDim(vec![64, 64].into()),
    );
    let chunk = 4096 * 8;
    let fits = rechunk_fits(&[64, 4096], from, to, 2 * chunk);
    assert!(fits.is_ok(), "{}", fits.unwrap_err());
}

/// Chunk lengths along one dimension of `len`: a regular chunk or ragged lengths.
fn lengths(len: usize) -> impl Strategy<Value = Vec<usize>> {
    let regular = (1..=len).prop_map(move |c| ares_core::prepare::tile::split_dim(len, c));
    let ragged = proptest::collection::vec(1..=len, 1..=len).prop_map(move |cuts| {
        let mut bounds: Vec<usize> = cuts.into_iter().filter(|c| *c < len).collect();
        bounds.extend([0, len]);
        bounds.sort_unstable();
        bounds.dedup();
        bounds.windows(2).map(|w| w[1] - w[0]).collect()
    });
    prop_oneof![regular, ragged]
}

/// Shapes of 1 or 2 dimensions up to 40, or 3 up to 15: at most 3375 overlapping pairs, so
/// the grid method (the shuffle's mappers carry a table of their pieces, 8 B per target
/// chunk, which 1-element chunks would not fit twice; see the shuffled test above).
fn shapes() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        proptest::collection::vec(1..=40usize, 1..=2),
        proptest::collection::vec(1..=15usize, 3),
    ]
}

fn case() -> impl Strategy<Value = (Vec<usize>, Vec<Vec<usize>>, Vec<Vec<usize>>)> {
    shapes().prop_flat_map(|shape| {
        let dims = |shape: &Vec<usize>| shape.iter().map(|n| lengths(*n)).collect::<Vec<_>>();
        (Just(shape.clone()), dims(&shape), dims(&shape))
    })
}

fn largest_chunk(splits: &[Vec<usize>]) -> u64 {
    splits
        .iter()
        .map(|s| *s.iter().max().unwrap() as u64)
        .product::<u64>()
        * 8
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// Issue 29's target: any rechunk of float64 fits when the limit is 2x the larger
    /// of its source and target chunks (by the grid method; the shuffle is tested above).
    #[test]
    fn any_rechunk_fits_in_twice_the_larger_chunk((shape, from, to) in case()) {
        let limit = 2 * largest_chunk(&from).max(largest_chunk(&to));
        let fits = rechunk_fits(
            &shape,
            ChunkSpec::Explicit(from.clone()),
            ChunkSpec::Explicit(to.clone()),
            limit,
        );
        prop_assert!(fits.is_ok(), "{shape:?} {from:?} -> {to:?}: {}", fits.unwrap_err());
    }
}
