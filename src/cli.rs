//! Command-line interface: `ares explain`, `ares run`, `ares bench`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "ares",
    version,
    about = "A distributed tensor-computing runtime"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by commands that prepare a graph.
#[derive(Args, Debug, Clone)]
pub struct PrepareOpts {
    /// The program, in the expression language (see README). It may start with `-`
    /// (`--expr '-x'`).
    #[arg(long, allow_hyphen_values = true)]
    pub expr: String,
    /// YAML config file (`task.default_config`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Workers the plan assigns initial subtasks to.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Slots per worker.
    #[arg(long, default_value_t = 2)]
    pub slots: usize,
    /// Disable fusion (overrides `task.default_config.fuse_enabled`).
    #[arg(long)]
    pub no_fuse: bool,
    /// Bind a name of the program to a file under the data roots: `NAME=PATH`, a `.npy` file
    /// or a Zarr array (repeatable).
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
    /// Write the program's result to PATH (`.npy`, else a Zarr array) from the workers, and
    /// print what was written instead of the values.
    #[arg(long, value_name = "PATH")]
    pub output: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print what every preparation pass produced.
    Explain {
        #[command(flatten)]
        prepare: PrepareOpts,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Entries listed per section (0 = all).
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Evaluate a program and print its result: on a running cluster (`--supervisor`), on an
    /// embedded cluster of `--workers` workers (the default), or in-process (`--local`).
    Run {
        #[command(flatten)]
        prepare: PrepareOpts,
        /// Run in this process with the local executor (`--workers × --slots` threads).
        #[arg(long, conflicts_with = "supervisor")]
        local: bool,
        /// Submit to a running supervisor at HOST:PORT (native protocol), or to its web API at
        /// http://HOST:PORT or https://HOST:PORT (bearer token from ARES_TOKEN).
        #[arg(long)]
        supervisor: Option<String>,
        /// Trust the certificates in this PEM file too (an https:// supervisor's self-signed
        /// certificate or its CA), besides SSL_CERT_FILE or the system's roots.
        #[arg(long, value_name = "PATH", requires = "supervisor")]
        ca_file: Option<PathBuf>,
        /// Print one JSON object (`result`, `shape`, `dtype`, `timings`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a supervisor or worker node until SIGINT/SIGTERM.
    Node {
        #[arg(long, value_enum)]
        role: ares::node::Role,
        /// YAML config (see config/); defaults apply when omitted.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Supervisor address for a worker (overrides `cluster.supervisor`).
        #[arg(long)]
        supervisor: Option<String>,
        /// Write `{"rpc": "HOST:PORT", "web": null, "role": ...}` here once accepting connections.
        #[arg(long)]
        ready_file: Option<PathBuf>,
    },
    /// Benchmarks that print one JSON line.
    Bench {
        #[command(subcommand)]
        bench: Bench,
    },
}

#[derive(Subcommand, Debug)]
pub enum Bench {
    /// Preparation throughput on an elementwise chain + reduction over two random inputs.
    Prepare {
        /// Approximate number of chunks after tiling.
        #[arg(long, default_value_t = 1_000_000)]
        chunks: usize,
        /// Runs; the median is reported.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Subtask throughput end to end: 1 supervisor + `--workers` worker processes on loopback.
    Tps {
        #[arg(long, value_enum, default_value_t = crate::bench_tps::Shape::Indep)]
        shape: crate::bench_tps::Shape,
        #[arg(long, default_value_t = 200_000)]
        subtasks: usize,
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Slots per worker.
        #[arg(long, default_value_t = 1)]
        slots: usize,
        /// `scheduling.worker_prefetch` for the run.
        #[arg(long, default_value_t = ares::config::SchedulingConfig::default().worker_prefetch)]
        prefetch: usize,
        /// Measured runs on the same cluster; the median is reported.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Prepares the graph in one piece even when it would stream
        /// (`task.default_config.stream_from_chunks: null`), for comparison.
        #[arg(long)]
        whole: bool,
        /// Seals every link (`cluster.encrypt: true`), for the cost of encryption.
        #[arg(long)]
        encrypt: bool,
        /// Runs without the dashboard's task stream (`web.task_stream_capacity: 0`: workers
        /// time no subtask and send no span), for its cost.
        #[arg(long)]
        no_task_stream: bool,
    },
    /// dask#3872's all-to-all shuffle end to end (`in_parts` mappers × `out_parts` reducers of
    /// `rows` int64 per mapper), checked against an independent computation.
    Shuffle(crate::bench_shuffle::ShuffleBench),
    /// Kernel throughput of `(rand(n) + rand(n)).sum()` with the local executor.
    Kernel {
        #[arg(long, default_value_t = 100_000_000)]
        elements: usize,
        #[arg(long, default_value_t = 1_000_000)]
        chunk: usize,
        /// Executor threads.
        #[arg(long, default_value_t = 1)]
        slots: usize,
    },
}

/// What `ares explain --format` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Dot,
    /// The tileable graph alone, as the JSON `POST /api/session/{sid}/task` accepts.
    Graph,
}
