//! `ares run` on a cluster: submit over the native protocol, show progress, fetch the result,
//! free it. Without `--supervisor`, an embedded cluster is started for the run.

use crate::array::ArrayData;
use crate::cli::PrepareOpts;
use crate::config::Config;
use crate::node::EmbeddedCluster;
use crate::protocol::secret::Credentials;
use crate::protocol::TaskStatus;
use crate::tensor::Tensor;
use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

pub fn run_on_cluster(
    opts: &PrepareOpts,
    supervisor: Option<&str>,
    progress: bool,
    timings: &mut Map<String, Value>,
) -> Result<(ArrayData, Value)> {
    let config = match &opts.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let start = Instant::now();
    let tensor = crate::expr::evaluate(&opts.expr).map_err(|e| anyhow::anyhow!("--expr: {e}"))?;
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
    let mut client = crate::api::connect_with(&addr, Duration::from_secs(10), &secret)?;
    let graph = Tensor::graph(&[&tensor]);
    let start = Instant::now();
    let task = client.submit_tileable_graph(&graph, opts.no_fuse.then_some(false))?;
    let bar = if progress {
        indicatif::ProgressBar::new(1000)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:40}] {percent}% {elapsed} {msg}")
            .expect("valid template"),
    );
    let info = loop {
        let info = client.wait_task(task, Duration::from_millis(100))?;
        bar.set_position((info.progress * 1000.0) as u64);
        bar.set_message(format!("{} subtasks", info.subtasks));
        if info.status.is_terminal() {
            break info;
        }
    };
    bar.finish_and_clear();
    timings.insert("execute".into(), json!(start.elapsed().as_secs_f64()));
    match info.status {
        TaskStatus::Succeeded => {}
        TaskStatus::Cancelled => bail!("{task} was cancelled"),
        _ => bail!("{task} failed: {}", info.error.unwrap_or_default()),
    }
    let start = Instant::now();
    let mut results = client.fetch(task)?;
    timings.insert("fetch".into(), json!(start.elapsed().as_secs_f64()));
    client.cancel_task(task)?;
    let mut summary = json!({"task": task.to_string(), "subtasks": info.subtasks, "cluster": if embedded.is_some() { "embedded" } else if addr.starts_with("http") { "remote-http" } else { "remote" }});
    // The embedded workers' memory accounting (a remote cluster's is on its dashboard).
    if embedded.is_some() {
        let memory = crate::summary::memory_json(&crate::worker::storage::live_stats());
        summary["memory"] = memory;
    }
    Ok((results.remove(0), summary))
}
