//! `ares run` on a cluster: the client loop of `ares::api::run` (submit, wait, fetch, free)
//! with a progress bar drawn between its waits. Without `--supervisor`, an embedded cluster
//! is started for the run.

use crate::cli::PrepareOpts;
use anyhow::{bail, Context, Result};
use ares::api::{ApiError, ApiResult, Drive, TaskApi};
use ares::config::Config;
use ares::node::EmbeddedCluster;
use ares::protocol::secret::Credentials;
use ares::protocol::TaskInfo;
use ares_core::array::ArrayData;
use ares_core::tensor::Tensor;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

pub fn run_on_cluster(
    opts: &PrepareOpts,
    supervisor: Option<&str>,
    ca_file: Option<&std::path::Path>,
    progress: bool,
    timings: &mut Map<String, Value>,
) -> Result<(ArrayData, Value)> {
    let config = match &opts.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let start = Instant::now();
    let (tensor, output) = program(opts, &config)?;
    timings.insert("parse".into(), json!(start.elapsed().as_secs_f64()));
    let embedded = match supervisor {
        Some(_) => None,
        None => {
            let start = Instant::now();
            let cluster = EmbeddedCluster::start(&config, opts.workers, opts.slots)
                .context("starting the embedded cluster")?;
            timings.insert("cluster_start".into(), json!(start.elapsed().as_secs_f64()));
            Some(cluster)
        }
    };
    let addr = supervisor
        .map(str::to_string)
        .unwrap_or_else(|| embedded.as_ref().expect("embedded").rpc_addr.to_string());
    let secret = match &embedded {
        Some(cluster) => cluster.credentials.client_secret(),
        None => Credentials::load(&config.cluster)?.client_secret(),
    };
    let mut client = ares::api::connect_with(&addr, Duration::from_secs(10), &secret, ca_file)?;
    let graph = Tensor::graph(&[&tensor]);
    let bar = if progress {
        indicatif::ProgressBar::new(1000)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:40}] {percent}% {elapsed} {msg}")
            .expect("valid template"),
    );
    let mut drive = WithBar {
        api: client.as_mut(),
        bar: &bar,
    };
    let fuse = opts.no_fuse.then_some(false);
    let ran = ares::api::run(&mut drive, &graph, fuse, 1, Duration::from_millis(100));
    bar.finish_and_clear();
    let ares::api::Ran {
        task,
        info,
        mut results,
        executed,
        fetched,
    } = ran?;
    timings.insert("execute".into(), json!(executed.as_secs_f64()));
    timings.insert("fetch".into(), json!(fetched.as_secs_f64()));
    let mut summary = json!({"task": task.to_string(), "subtasks": info.subtasks, "cluster": if embedded.is_some() { "embedded" } else if addr.starts_with("http") { "remote-http" } else { "remote" }});
    // The embedded workers' memory accounting (a remote cluster's is on its dashboard).
    if embedded.is_some() {
        let memory = memory_json(&ares::worker::storage::live_stats());
        summary["memory"] = memory;
    }
    let result = results.remove(0);
    add_output(&mut summary, output, &result);
    Ok((result, summary))
}

/// `ares run`'s client, with the progress bar drawn between waits.
struct WithBar<'a> {
    api: &'a mut dyn TaskApi,
    bar: &'a indicatif::ProgressBar,
}

impl Drive for WithBar<'_> {
    type Error = ApiError;

    fn call<T: Send>(
        &mut self,
        call: impl FnOnce(&mut dyn TaskApi) -> ApiResult<T> + Send,
    ) -> ApiResult<T> {
        call(&mut *self.api)
    }

    fn waited(&mut self, info: &TaskInfo) -> ApiResult<()> {
        self.bar.set_position((info.progress * 1000.0) as u64);
        self.bar.set_message(format!("{} subtasks", info.subtasks));
        Ok(())
    }
}

/// What `--output` wrote, for the run's summary.
pub struct Output {
    pub path: String,
    pub format: &'static str,
    pub shape: Vec<usize>,
    pub dtype: ares_core::array::DType,
}

/// Adds `"output": {path, format, shape, dtype, bytes}` to a run's summary (`result` is the
/// byte count the sink returned).
pub fn add_output(summary: &mut Value, output: Option<Output>, result: &ArrayData) {
    if let (Some(o), Some(map)) = (output, summary.as_object_mut()) {
        let bytes = result.get_flat(0).map_or(0, |b| b.as_i64());
        map.insert(
            "output".into(),
            json!({"path": o.path, "format": o.format, "shape": o.shape, "dtype": o.dtype, "bytes": bytes}),
        );
    }
}

/// The program of `--expr` with its `--input` bindings, writing to `--output` if given. Data
/// paths are checked against `data.roots`, or the current directory when none is configured.
pub fn program(opts: &PrepareOpts, config: &Config) -> Result<(Tensor, Option<Output>)> {
    ares_core::io::roots::init_global(&config.data.roots, std::env::current_dir().ok().as_deref())?;
    let mut bindings = Vec::new();
    for input in &opts.inputs {
        let Some((name, path)) = input.split_once('=') else {
            bail!("--input {input:?}: expected NAME=PATH");
        };
        let t = if is_npy(path) {
            ares_core::tensor::from_npy(path, None)
        } else {
            ares_core::tensor::from_zarr(path, None)
        }
        .with_context(|| format!("--input {name}"))?;
        bindings.push((name.to_string(), t));
    }
    let tensor = ares_core::expr::evaluate_with(&opts.expr, &bindings)
        .map_err(|e| anyhow::anyhow!("--expr: {e}"))?;
    let Some(path) = &opts.output else {
        return Ok((tensor, None));
    };
    let (format, sink) = if is_npy(path) {
        ("npy", tensor.to_npy(path))
    } else {
        let codec = ares_core::io::Codec::Zstd { level: 1 };
        ("zarr", tensor.to_zarr(path, None, codec))
    };
    let sink = sink.with_context(|| format!("--output {path}"))?;
    let output = Output {
        path: ares_core::io::sink_path(path)?,
        format,
        shape: tensor.shape().to_vec(),
        dtype: tensor.dtype(),
    };
    Ok((sink, Some(output)))
}

fn is_npy(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".npy")
}

/// The `memory` object of `ares run --json`: each worker's accounting (limit, peak, spilled,
/// pauses) and the totals.
pub fn memory_json(workers: &[ares::worker::memory::MemoryStats]) -> Value {
    let sum = |f: fn(&ares::worker::memory::MemoryStats) -> u64| workers.iter().map(f).sum::<u64>();
    json!({
        "workers": workers,
        "peak_bytes": workers.iter().map(|w| w.peak_bytes).max().unwrap_or(0),
        "spills": sum(|w| w.spills),
        "spilled_bytes_total": sum(|w| w.spilled_bytes_total),
        "unspills": sum(|w| w.unspills),
        "pauses": sum(|w| w.pauses),
        "fetched_bytes_total": sum(|w| w.fetched_bytes_total),
    })
}
