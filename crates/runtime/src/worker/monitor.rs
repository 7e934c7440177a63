//! The memory monitor of a worker process: the resident bytes the ledgers do not see.
//!
//! A worker's [`super::memory::Ledger`] counts its chunks, the reservations of running
//! subtasks and its fetches. The process holds more: frames being encoded and decoded, a
//! zarr codec's buffers, and pages the allocator keeps after they were freed (mimalloc
//! returns them after its purge delay, ten times longer for its arenas). In a rechunk of
//! 64 MiB bands, those put workers 2-13 MB above `memory_limit` + 200 MB with the accounting
//! itself under the limit. As Dask's memory monitor does, a thread samples the resident set
//! every [`INTERVAL`]: what exceeds the process's baseline (its resident bytes when the
//! monitor started, before any chunk), every store's accounted bytes and an [`ALLOWANCE`]
//! for the runtime's own growth is shared among the limited stores as their
//! `unmanaged_bytes`, which count toward the spill and pause thresholds. Above the stores' spill thresholds together, the allocator is also asked to
//! return its freed pages at once ([`crate::allocator::return_freed_pages`]).
//!
//! Only `ares node --role worker` starts it: in an embedded cluster the process also holds
//! the supervisor and the client, whose memory is none of a worker's business.

use super::storage;
use std::sync::Once;
use std::time::{Duration, Instant};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

/// How often the resident set is sampled (Dask's `memory.monitor-interval` is 100 ms).
pub const INTERVAL: Duration = Duration::from_millis(50);

/// Resident bytes above the baseline that are never counted: the runtime's own growth once
/// it works (thread stacks and heaps of the slots, buffers of the links: 4 MB idle and 12 MB
/// after a small job in a debug build). Counting them would make a worker with a small
/// limit spill everything it makes; the target allows 200 MB above the limit.
pub const ALLOWANCE: u64 = 64 << 20;

/// The least time between two forced returns of freed pages (each costs `madvise` calls
/// over the allocator's free ranges, and pages returned are faulted in again when reused).
const PURGE_EVERY: Duration = Duration::from_millis(200);

/// Starts the monitor thread once per process; later calls do nothing.
pub fn start() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let Ok(pid) = sysinfo::get_current_pid() else {
            tracing::warn!("no process id: the memory monitor is off");
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("memory-monitor".into())
            .spawn(move || watch(pid));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the memory monitor: {e}");
        }
    });
}

/// The process's resident bytes, or `None` when they cannot be read.
fn resident(sys: &mut System, pid: Pid) -> Option<u64> {
    let kind = ProcessRefreshKind::nothing().with_memory();
    sys.refresh_processes_specifics(ProcessesToUpdate::Some(&[pid]), false, kind);
    sys.process(pid).map(|p| p.memory())
}

fn watch(pid: Pid) {
    let mut sys = System::new();
    let Some(baseline) = resident(&mut sys, pid) else {
        tracing::warn!("cannot read this process's resident set: the memory monitor is off");
        return;
    };
    tracing::debug!(baseline, "memory monitor started");
    let mut last_purge: Option<Instant> = None;
    loop {
        std::thread::sleep(INTERVAL);
        let Some(rss) = resident(&mut sys, pid) else {
            continue;
        };
        let (mut stores, mut accounted) = (Vec::new(), 0);
        for s in storage::live() {
            let stats = s.stats();
            if stats.limit > 0 {
                accounted += stats.accounted();
                stores.push(s);
            }
        }
        if stores.is_empty() {
            continue;
        }
        let share = unmanaged(rss, baseline, accounted) / stores.len() as u64;
        let mut above = false;
        for s in &stores {
            above |= s.observe_unmanaged(share);
        }
        if above && last_purge.is_none_or(|t| t.elapsed() >= PURGE_EVERY) {
            crate::allocator::return_freed_pages();
            last_purge = Some(Instant::now());
        }
    }
}

/// Resident bytes above the baseline and the allowance that no store accounts for.
pub fn unmanaged(rss: u64, baseline: u64, accounted: u64) -> u64 {
    rss.saturating_sub(baseline + ALLOWANCE)
        .saturating_sub(accounted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmanaged_bytes_are_what_the_stores_do_not_account_above_the_baseline() {
        let (base, mb) = (100 << 20, 1 << 20);
        let rss = base + ALLOWANCE + 400 * mb;
        assert_eq!(unmanaged(rss, base, 300 * mb), 100 * mb);
        assert_eq!(
            unmanaged(rss, base, 450 * mb),
            0,
            "reservations not yet touched"
        );
        assert_eq!(
            unmanaged(base + ALLOWANCE, base, 0),
            0,
            "within the allowance"
        );
        assert_eq!(unmanaged(base / 2, base, 0), 0, "below the baseline");
    }

    #[test]
    fn the_process_resident_set_can_be_read() {
        let pid = sysinfo::get_current_pid().unwrap();
        let rss = resident(&mut System::new(), pid).unwrap();
        assert!(rss > 1 << 20, "{rss}");
    }
}
