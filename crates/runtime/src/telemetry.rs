//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default `warn`).
//!
//! Lines caused by peers (rejected frames, failed handshakes, refused connections) go through
//! [`peer_rejected`], which writes at most [`REJECT_LINES_PER_SECOND`] a second and counts the
//! rest: a flood of bad connections must not become a flood of log (an accept loop that failed
//! on EMFILE once logged 98 MB/s).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub fn init() {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Peer-caused log lines written per second, process-wide.
pub const REJECT_LINES_PER_SECOND: u64 = 5;

/// Second of the current window (since the epoch) and lines written in it.
static WINDOW: AtomicU64 = AtomicU64::new(0);
static IN_WINDOW: AtomicU64 = AtomicU64::new(0);
static SUPPRESSED: AtomicU64 = AtomicU64::new(0);

/// Whether a peer-caused line may be written now; `Some(n)` with the lines suppressed since
/// the last one written.
pub fn rejection_budget() -> Option<u64> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if WINDOW.swap(now, Ordering::Relaxed) != now {
        IN_WINDOW.store(0, Ordering::Relaxed);
    }
    if IN_WINDOW.fetch_add(1, Ordering::Relaxed) < REJECT_LINES_PER_SECOND {
        Some(SUPPRESSED.swap(0, Ordering::Relaxed))
    } else {
        SUPPRESSED.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// Logs (rate-limited) that a peer's connection was closed or refused, and why.
pub fn peer_rejected(peer: impl std::fmt::Display, what: &str, reason: impl std::fmt::Display) {
    if let Some(suppressed) = rejection_budget() {
        if suppressed > 0 {
            tracing::warn!(%peer, suppressed, "{what}: {reason}");
        } else {
            tracing::warn!(%peer, "{what}: {reason}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_gets_a_few_lines_and_a_count() {
        let allowed = (0..1000).filter(|_| rejection_budget().is_some()).count() as u64;
        // The burst may straddle a second boundary, and other tests may log too.
        assert!(allowed <= 2 * REJECT_LINES_PER_SECOND, "{allowed}");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert!(rejection_budget().unwrap() > 0);
    }
}
