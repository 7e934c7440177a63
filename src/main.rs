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

/// Chunks are large, short-lived buffers allocated from slot threads: see
/// [`ares::allocator`]; those of 4 MB or more are advised into huge pages
/// ([`ares_core::huge_pages`]).
#[global_allocator]
static GLOBAL: ares_core::huge_pages::HugePageAlloc<mimalloc::MiMalloc> =
    ares_core::huge_pages::HugePageAlloc(mimalloc::MiMalloc);

/// An error ends the process with one line on stderr (the causes joined by `: `) and exit
/// code 1, whatever `RUST_BACKTRACE` says: a configuration mistake is not a crash, and a
/// backtrace would bury the key to fix.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    ares::allocator::tune_mimalloc();
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
            ca_file,
            json,
        } => commands::run(
            &prepare,
            local,
            supervisor.as_deref(),
            ca_file.as_deref(),
            json,
        ),
        Command::Node {
            role,
            config,
            supervisor,
            ready_file,
        } => commands::node(role, config, supervisor, ready_file),
        Command::Bench { bench } => commands::bench(bench),
    }
}
