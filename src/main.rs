//! The `ares` binary: parse the command line, load config, dispatch.
//!
//! Everything the command line alone needs lives in this package, outside the library: the
//! argument definitions ([`cli`]), reading a program and running it on a cluster ([`runner`]),
//! and the benchmarks of `ares bench` ([`bench`], [`bench_tps`], [`bench_shuffle`]).

mod bench;
mod bench_shuffle;
mod bench_tps;
mod cli;
mod runner;

use crate::cli::{Bench, Cli, Command, PrepareOpts};
use anyhow::{Context, Result};
use ares::config::{Config, TaskConfig};
use ares::explain::{self, Format};
use ares::ids::TaskId;
use ares::prepare::{prepare, uniform_cluster, Prepared};
use ares::tensor::Tensor;
use clap::Parser;
use serde_json::json;
use std::time::Instant;

/// Chunks are large, short-lived buffers allocated from slot threads; mimalloc keeps them in
/// reusable pages where glibc maps and unmaps each one (half the kernel benchmark's time went
/// to page faults before).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's option enum (not exported by libmimalloc-sys).
const MI_OPTION_PURGE_DELAY: i32 = 15;
/// mimalloc's default purge delay, used to check that the enum value above is right.
const MI_DEFAULT_PURGE_DELAY: i64 = 10;

/// mimalloc returns freed pages to the OS after 10 ms, so the next pass or chunk faults them in
/// again (preparing 10^6 chunks took 3x longer). One second keeps memory in use across passes
/// and subtasks and still returns it soon after a job ends.
fn tune_allocator() {
    // SAFETY: plain option getters/setters of the C allocator; no pointers involved.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) as i64 == MI_DEFAULT_PURGE_DELAY {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000);
        }
    }
}

pub fn task_config(opts: &PrepareOpts) -> Result<TaskConfig> {
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
    let full = match &opts.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
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

fn main() -> Result<()> {
    tune_allocator();
    ares::telemetry::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Explain {
            prepare: opts,
            format,
            limit,
        } => {
            ares::io::set_plan_only(true);
            let (p, _) = plan(&opts, &mut Default::default())?;
            match format {
                Format::Text => print!("{}", explain::text(&p, limit)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&explain::to_json(&p, limit))?
                ),
                Format::Dot => print!("{}", explain::dot(&p, limit)),
                Format::Graph => {
                    let config = match &opts.config {
                        Some(path) => Config::load(path)?,
                        None => Config::default(),
                    };
                    let (t, _) = crate::runner::program(&opts, &config)?;
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&ares::tensor::Tensor::graph(&[&t]))?
                    );
                }
            }
        }
        Command::Run {
            prepare: opts,
            local,
            supervisor,
            json,
        } => {
            let total = Instant::now();
            let mut timings = serde_json::Map::new();
            let (result, summary) = if local {
                let (p, output) = plan(&opts, &mut timings)?;
                let start = Instant::now();
                let slots = opts.workers * opts.slots;
                let (mut results, stats) =
                    ares::executor::execute(&p.subtasks, slots).context("executing the graph")?;
                timings.insert("execute".into(), json!(start.elapsed().as_secs_f64()));
                let result = results.remove(0);
                let mut summary =
                    json!({"subtasks": stats.subtasks, "peak_bytes": stats.peak_bytes});
                crate::runner::add_output(&mut summary, output, &result);
                (result, summary)
            } else {
                crate::runner::run_on_cluster(&opts, supervisor.as_deref(), !json, &mut timings)?
            };
            timings.insert("total".into(), json!(total.elapsed().as_secs_f64()));
            if json {
                let mut out = json!({
                    "result": ares::summary::json_result(&result),
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
                    None => println!("{}", ares::summary::text(&result)),
                }
                let phases: Vec<String> = timings
                    .iter()
                    .map(|(k, v)| format!("{k}={:.4}s", v.as_f64().unwrap_or(0.0)))
                    .collect();
                eprintln!("timings: {}", phases.join(" "));
                eprintln!("{summary}");
            }
        }
        Command::Node {
            role,
            config,
            supervisor,
            ready_file,
        } => {
            let config = match &config {
                Some(path) => Config::load(path)?,
                None => Config::default(),
            };
            ares::node::run_node(role, config, supervisor, ready_file.as_deref())?;
        }
        Command::Bench { bench } => {
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
                } => {
                    crate::bench_tps::bench_tps(shape, subtasks, workers, slots, prefetch, repeat)?
                }
                Bench::Shuffle {
                    in_parts,
                    out_parts,
                    rows,
                    workers,
                    slots,
                    repeat,
                } => crate::bench_shuffle::bench_shuffle(crate::bench_shuffle::ShuffleBench {
                    in_parts,
                    out_parts,
                    rows,
                    workers,
                    slots,
                    repeat,
                })?,
            };
            println!("{out}");
        }
    }
    Ok(())
}
