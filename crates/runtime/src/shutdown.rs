//! The process-wide stop flag: set by SIGTERM or SIGINT, read where no signal stream
//! listens (a worker between two actor systems). Below every role, so the worker need not
//! import the node that starts it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Set by SIGTERM or SIGINT whenever they arrive. A worker that lost its supervisor is
/// between two actor systems, or connecting, with no signal stream listening: as when a
/// whole cluster is stopped at once and the supervisor goes first (`docker compose down`).
/// It reads this instead of trying to rejoin until `cluster.node_timeout_ms`.
static TERMINATING: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Whether this process was asked to stop (see [`TERMINATING`]).
pub fn terminating() -> bool {
    TERMINATING.get().is_some_and(|f| f.load(Ordering::Acquire))
}

/// Sets [`TERMINATING`] on SIGTERM and SIGINT from now on.
pub fn watch_termination() {
    let flag = TERMINATING.get_or_init(Default::default);
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, flag.clone()) {
            tracing::warn!("cannot watch signal {signal}: {e}");
        }
    }
}
