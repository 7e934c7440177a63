//! The `ares` binary: parse the command line, load config, dispatch.
//!
//! Everything the command line alone needs lives in this package, outside the library: the
//! argument definitions ([`cli`]), reading a program and running it on a cluster ([`runner`]),
//! each subcommand's work ([`commands`]), and the benchmarks of `ares bench` ([`bench`], [`bench_tps`],
//! [`bench_shuffle`]).

mod bench;
mod bench_shuffle;
mod bench_tps;
mod cli;
mod commands;
mod runner;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command};

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

fn main() -> Result<()> {
    tune_allocator();
    ares::telemetry::init();
    match Cli::parse().command {
        Command::Explain {
            prepare,
            format,
            limit,
        } => commands::explain(&prepare, format, limit),
        Command::Run {
            prepare,
            local,
            supervisor,
            json,
        } => commands::run(&prepare, local, supervisor.as_deref(), json),
        Command::Node {
            role,
            config,
            supervisor,
            ready_file,
        } => commands::node(role, config, supervisor, ready_file),
        Command::Bench { bench } => commands::bench(bench),
    }
}
