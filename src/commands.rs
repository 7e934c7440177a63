//! What each subcommand does, once the command line is parsed: `main` only dispatches here.

use crate::cli::Format;
use crate::cli::{Bench, PrepareOpts};
use anyhow::{Context, Result};
use ares::config::{Config, TaskConfig};
use ares_core::explain;
use ares_core::ids::TaskId;
use ares_core::prepare::{prepare, uniform_cluster, Prepared};
use ares_core::tensor::Tensor;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The full config of `--config`, or the defaults.
fn load_config(path: Option<&Path>) -> Result<Config> {
    Ok(match path {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    })
}

fn task_config(opts: &PrepareOpts) -> Result<TaskConfig> {
    let mut config = match &opts.config {
        Some(path) => Config::load(path)?.task.default_config,
        None => TaskConfig::default(),
    };
    if opts.no_fuse {
        config.fuse_enabled = false;
    }
    Ok(config)
}

fn plan(
    opts: &PrepareOpts,
    timings: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(Prepared, Option<crate::runner::Output>)> {
    if opts.workers == 0 || opts.slots == 0 {
        anyhow::bail!("--workers and --slots must be at least 1");
    }
    let config = task_config(opts)?;
    let start = Instant::now();
    let full = load_config(opts.config.as_deref())?;
    let (tensor, output) = crate::runner::program(opts, &full)?;
    timings.insert("parse".into(), json!(start.elapsed().as_secs_f64()));
    let graph = Tensor::graph(&[&tensor]);
    let prepared = prepare(
        &graph,
        &config,
        &uniform_cluster(opts.workers, opts.slots),
        TaskId(1),
    )
    .context("preparing the graph")?;
    for r in &prepared.passes {
        timings.insert(r.pass.into(), json!(r.seconds));
    }
    Ok((prepared, output))
}

/// `ares explain`: the prepared plan as text, JSON or dot, or the tileable graph as JSON.
pub fn explain(opts: &PrepareOpts, format: Format, limit: usize) -> Result<()> {
    ares_core::io::set_plan_only(true);
    if format == Format::Graph {
        let (t, _) = crate::runner::program(opts, &load_config(opts.config.as_deref())?)?;
        println!("{}", serde_json::to_string_pretty(&Tensor::graph(&[&t]))?);
        return Ok(());
    }
    if format == Format::Text {
        // Stage by stage when the program goes on from a data-dependent length.
        let (t, _) = crate::runner::program(opts, &load_config(opts.config.as_deref())?)?;
        let cluster = uniform_cluster(opts.workers, opts.slots);
        let text =
            explain::staged_text(&Tensor::graph(&[&t]), &task_config(opts)?, &cluster, limit)
                .context("preparing the graph")?;
        print!("{text}");
        return Ok(());
    }
    let (p, _) = plan(opts, &mut Default::default())?;
    match format {
        Format::Text => unreachable!("handled above"),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&explain::to_json(&p, limit))?
        ),
        Format::Dot => print!("{}", explain::dot(&p, limit)),
        Format::Graph => unreachable!("handled above"),
    }
    Ok(())
}

/// `ares run`: on local slot threads (`--local`), the embedded cluster, or a running
/// supervisor; prints the result (or what was written) and the timings.
pub fn run(
    opts: &PrepareOpts,
    local: bool,
    supervisor: Option<&str>,
    ca_file: Option<&std::path::Path>,
    json: bool,
) -> Result<()> {
    let total = Instant::now();
    let mut timings = serde_json::Map::new();
    let (result, summary) = if local {
        let (p, output) = plan(opts, &mut timings)?;
        let start = Instant::now();
        let slots = opts.workers * opts.slots;
        let (mut results, stats) =
            ares_core::executor::execute(&p.subtasks, slots).context("executing the graph")?;
        timings.insert("execute".into(), json!(start.elapsed().as_secs_f64()));
        let result = results.remove(0);
        let mut summary = json!({"subtasks": stats.subtasks, "peak_bytes": stats.peak_bytes});
        crate::runner::add_output(&mut summary, output, &result);
        (result, summary)
    } else {
        crate::runner::run_on_cluster(opts, supervisor, ca_file, !json, &mut timings)?
    };
    timings.insert("total".into(), json!(total.elapsed().as_secs_f64()));
    if json {
        let mut out = json!({
            "result": ares_core::summary::json_result(&result),
            "shape": result.shape(),
            "dtype": result.dtype(),
            "timings": timings,
        });
        if let (Some(o), Some(extra)) = (out.as_object_mut(), summary.as_object()) {
            o.extend(extra.clone());
        }
        println!("{out}");
    } else {
        match summary.get("output") {
            Some(o) => println!("wrote {o}"),
            None => println!("{}", ares_core::summary::text(&result)),
        }
        let phases: Vec<String> = timings
            .iter()
            .map(|(k, v)| format!("{k}={:.4}s", v.as_f64().unwrap_or(0.0)))
            .collect();
        eprintln!("timings: {}", phases.join(" "));
        eprintln!("{summary}");
    }
    Ok(())
}

/// `ares node`: a supervisor or worker until stopped.
pub fn node(
    role: ares::node::Role,
    config: Option<PathBuf>,
    supervisor: Option<String>,
    ready_file: Option<PathBuf>,
) -> Result<()> {
    let config = load_config(config.as_deref())?;
    ares::node::run_node(role, config, supervisor, ready_file.as_deref())
}

/// `ares bench`: one JSON line per benchmark.
pub fn bench(bench: Bench) -> Result<()> {
    let out = match bench {
        Bench::Prepare { chunks, repeat } => crate::bench::bench_prepare(chunks, repeat)?,
        Bench::Kernel {
            elements,
            chunk,
            slots,
        } => crate::bench::bench_kernel(elements, chunk, slots)?,
        Bench::Tps {
            shape,
            subtasks,
            workers,
            slots,
            prefetch,
            repeat,
            whole,
            encrypt,
            no_task_stream,
        } => {
            let spec = crate::bench_tps::NodeSpec {
                workers,
                slots,
                prefetch,
                encrypt,
                task_stream: !no_task_stream,
            };
            crate::bench_tps::bench_tps(shape, subtasks, spec, repeat, whole)?
        }
        Bench::Shuffle(b) => crate::bench_shuffle::bench_shuffle(b)?,
    };
    println!("{out}");
    Ok(())
}
