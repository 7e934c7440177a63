//! The stop flag of a node: set by SIGTERM or SIGINT, read where no signal stream listens (a
//! worker between two actor systems, or connecting). The node makes it at start and passes
//! it to what needs it; it is a value, not a process-wide global, so an embedded cluster's
//! workers (which no signal stops) simply get one that is never set.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether this node was asked to stop. Cheap to clone; clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct Shutdown(Arc<AtomicBool>);

impl Shutdown {
    /// A flag set on SIGTERM and SIGINT from now on. A worker that lost its supervisor reads
    /// it instead of trying to rejoin until `cluster.node_timeout_ms`: as when a whole
    /// cluster is stopped at once and the supervisor goes first (`docker compose down`).
    pub fn on_signals() -> Self {
        let flag = Self::default();
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            if let Err(e) = signal_hook::flag::register(signal, flag.0.clone()) {
                tracing::warn!("cannot watch signal {signal}: {e}");
            }
        }
        flag
    }

    /// A flag nothing sets (an embedded cluster's nodes stop with their process).
    pub fn never() -> Self {
        Self::default()
    }

    /// Whether the node was asked to stop.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
