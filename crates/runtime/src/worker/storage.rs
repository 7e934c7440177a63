//! The worker's chunk store: chunks keyed by task and chunk, shared by the compute pool and
//! the data server, in memory or spilled to disk. Deleted when the supervisor releases them.
//!
//! The shell around [`Ledger`] (the accounting and every decision): it holds the chunks in
//! memory, writes and reads the spill files ([`SpillDir`]) outside the ledger's lock, and
//! lets subtasks wait for room on a condition variable. A subtask runs under a [`Lease`]: its
//! reservation and input pins, returned when the lease drops.

use super::memory::human;
use super::memory::{Admit, Committed, Key, LeaseId, Ledger, MemoryStats, UNTRACKED_BELOW};
use super::spill::SpillDir;
use crate::config::memory::default_spill_dir;
use crate::config::WorkerConfig;
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use dashmap::DashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// Keys are hashed on every subtask, laid out so consecutive chunks stay near each other
/// ([`super::key_hash`]).
type Chunks = DashMap<Key, Arc<ArrayData>, super::key_hash::ChunkKeyHash>;

/// How long a subtask waiting for room sleeps before it looks again (it is also woken when
/// any subtask ends).
const RECHECK: Duration = Duration::from_millis(200);

#[derive(Default)]
pub struct Storage {
    chunks: Chunks,
    ledger: Mutex<Ledger>,
    room: Condvar,
    /// Subtasks waiting on `room`. Counted under the ledger's lock, so a change made under
    /// that lock and followed by [`Storage::wake`] never misses one; without waiters no
    /// wake is sent (std's condvar makes a `futex` syscall on every notify, waiters or not:
    /// once per chunk released and per subtask ended, on the hot path).
    waiting: AtomicUsize,
    spill: Option<SpillDir>,
}

impl Storage {
    /// A store holding at most `limit` bytes (0 = no limit), spilling into `spill`.
    pub fn with_limit(limit: u64, spill_at: f64, pause_at: f64, spill: Option<SpillDir>) -> Self {
        Self {
            ledger: Mutex::new(Ledger::new(limit, spill_at, pause_at)),
            spill,
            ..Self::default()
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the subtasks waiting for room, if any (call after releasing the ledger's lock).
    fn wake(&self) {
        if self.waiting.load(Ordering::Acquire) > 0 {
            self.room.notify_all();
        }
    }

    pub fn stats(&self) -> MemoryStats {
        self.ledger().stats()
    }

    /// Takes the memory monitor's share of unaccounted resident bytes, spilling when that puts
    /// the worker above its spill threshold, and wakes subtasks waiting for room (the share
    /// may have fallen). Returns true when the worker is above the threshold.
    pub fn observe_unmanaged(&self, bytes: u64) -> bool {
        let (planned, above) = {
            let mut ledger = self.ledger();
            let planned = ledger.observed_unmanaged(bytes);
            (planned, ledger.above_spill())
        };
        self.wake();
        self.spill_planned(planned);
        above
    }

    /// Removes the spill files now (the worker is going).
    pub fn close(&self) {
        if let Some(dir) = &self.spill {
            dir.remove_all();
        }
    }

    /// Stores a chunk computed outside any lease (tests, uploads).
    pub fn put(&self, task: TaskId, chunk: ChunkIdx, data: Arc<ArrayData>) {
        self.store((task, chunk), data, None);
        self.spill_over_threshold();
    }

    fn store(&self, key: Key, data: Arc<ArrayData>, lease: Option<LeaseId>) {
        let size = data.nbytes() as u64;
        let mut ledger = self.ledger();
        let old = self.chunks.insert(key, data);
        let old_size = old.map(|d| d.nbytes() as u64);
        if let Some(b) = old_size.filter(|b| *b < UNTRACKED_BELOW) {
            ledger.removed_untracked(b);
        }
        if size < UNTRACKED_BELOW {
            // A tracked version (in memory, or on disk when not in the map) goes first.
            let tracked = old_size.is_some_and(|b| b >= UNTRACKED_BELOW)
                || (old_size.is_none() && ledger.stats().spilled_chunks > 0);
            if tracked && ledger.removed(key) {
                self.delete_file(key);
            }
            ledger.stored_untracked(size, lease);
        } else if ledger.stored(key, size, lease) {
            self.delete_file(key);
        }
    }

    /// A chunk for computing here: read back from disk (and kept in memory) if spilled.
    pub fn get(&self, task: TaskId, chunk: ChunkIdx) -> Option<Arc<ArrayData>> {
        let key = (task, chunk);
        if let Some(d) = self.chunks.get(&key).map(|c| c.clone()) {
            if d.nbytes() as u64 >= UNTRACKED_BELOW {
                self.ledger().touch(key);
            }
            return Some(d);
        }
        let data = Arc::new(self.read_spilled(key)?);
        let mut ledger = self.ledger();
        if ledger.loaded(key) {
            self.chunks.insert(key, data.clone());
            drop(ledger);
            self.delete_file(key);
            return Some(data);
        }
        drop(ledger);
        // Loaded by another reader meanwhile: use that copy.
        self.chunks.get(&key).map(|c| c.clone())
    }

    /// Whether a chunk is here, in memory or on disk.
    pub fn holds(&self, task: TaskId, chunk: ChunkIdx) -> bool {
        let key = (task, chunk);
        self.chunks.contains_key(&key) || self.ledger().spilled_size(key).is_some()
    }

    /// A chunk for a peer: a spilled one is read from disk for the answer and stays spilled.
    pub fn read(&self, task: TaskId, chunk: ChunkIdx) -> Option<Arc<ArrayData>> {
        let key = (task, chunk);
        if let Some(d) = self.chunks.get(&key).map(|c| c.clone()) {
            return Some(d);
        }
        // Loaded back (and its file deleted) meanwhile: it is in memory again.
        self.read_spilled(key)
            .map(Arc::new)
            .or_else(|| self.chunks.get(&key).map(|c| c.clone()))
    }

    fn read_spilled(&self, key: Key) -> Option<ArrayData> {
        let dir = self.spill.as_ref()?;
        let bytes = self.ledger().spilled_size(key)?;
        dir.read(key, bytes)
            .map_err(|e| tracing::error!("{e}"))
            .ok()
    }

    fn delete_file(&self, key: Key) {
        if let Some(dir) = &self.spill {
            dir.delete(key);
        }
    }

    /// Forgets chunks (released by the supervisor), under one lock.
    pub fn remove(&self, task: TaskId, chunks: &[ChunkIdx]) {
        let mut ledger = self.ledger();
        for c in chunks {
            let key = (task, *c);
            match self.chunks.remove(&key) {
                Some((_, d)) if (d.nbytes() as u64) < UNTRACKED_BELOW => {
                    ledger.removed_untracked(d.nbytes() as u64)
                }
                _ => {
                    if ledger.removed(key) {
                        self.delete_file(key);
                    }
                }
            }
        }
        drop(ledger);
        self.wake();
    }

    pub fn remove_task(&self, task: TaskId) {
        let mut ledger = self.ledger();
        self.chunks.retain(|k, d| {
            let small = (d.nbytes() as u64) < UNTRACKED_BELOW;
            if k.0 == task && small {
                ledger.removed_untracked(d.nbytes() as u64);
            }
            k.0 != task
        });
        for key in ledger.removed_task(task) {
            self.delete_file(key);
        }
        drop(ledger);
        self.wake();
    }

    /// Queued subtasks will read these local chunks (or no longer will).
    pub fn want(&self, task: TaskId, chunks: &[ChunkIdx], wanted: bool) {
        if chunks.is_empty() {
            return;
        }
        let keys: Vec<Key> = chunks.iter().map(|c| (task, *c)).collect();
        self.ledger().want(&keys, wanted);
    }

    /// Bytes of chunks in memory.
    pub fn bytes(&self) -> usize {
        self.ledger().stats().memory_bytes as usize
    }

    /// Chunks held, in memory or on disk.
    pub fn len(&self) -> usize {
        self.chunks.len() + self.ledger().stats().spilled_chunks as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes planned spills; the first failure is returned (its chunk stays in memory).
    fn write_spills(&self, planned: Vec<(Key, u64)>) -> Result<(), String> {
        let mut first_error = None;
        for (key, _) in planned {
            let written = match (&self.spill, self.chunks.get(&key).map(|c| c.clone())) {
                (Some(dir), Some(data)) => dir.write(key, &data).map_err(|e| e.to_string()),
                (None, _) => Err("no spill directory".to_string()),
                // Released meanwhile: nothing to write, and no error for whoever needed room.
                (_, None) => {
                    self.ledger().commit_spill(key, false);
                    continue;
                }
            };
            let mut ledger = self.ledger();
            match ledger.commit_spill(key, written.is_ok()) {
                Committed::OnDisk => {
                    self.chunks.remove(&key);
                }
                Committed::Discard if written.is_ok() => self.delete_file(key),
                Committed::Discard => {}
            }
            drop(ledger);
            if let Err(e) = written {
                first_error.get_or_insert(e);
            }
        }
        self.wake();
        first_error.map_or(Ok(()), Err)
    }

    /// Spills least recently used chunks while above `worker.memory.spill`.
    pub fn spill_over_threshold(&self) {
        let planned = self.ledger().spill_over_threshold();
        self.spill_planned(planned);
    }

    fn spill_planned(&self, planned: Vec<(Key, u64)>) {
        if planned.is_empty() {
            return;
        }
        if let Err(e) = self.write_spills(planned) {
            tracing::error!("{e}");
        }
    }

    /// Waits until a subtask reading `inputs` (local chunks) and needing `run_bytes` more may
    /// start, spilling to make room; its fetched inputs, `transit` bytes already counted, go
    /// into its lease. Fails when a spill needed for that fails (a full disk); its transit
    /// bytes are then given back.
    pub fn begin(
        &self,
        task: TaskId,
        inputs: &[ChunkIdx],
        run_bytes: u64,
        transit: u64,
    ) -> Result<Lease<'_>, String> {
        let inputs: Vec<Key> = inputs.iter().map(|c| (task, *c)).collect();
        let mut ledger = self.ledger();
        ledger.pin(&inputs);
        loop {
            match ledger.admit(&inputs, run_bytes, transit) {
                Admit::Go(lease) => {
                    return Ok(Lease {
                        storage: self,
                        task,
                        inputs,
                        lease,
                    })
                }
                Admit::Spill(planned) => {
                    drop(ledger);
                    let written = self.write_spills(planned);
                    ledger = self.ledger();
                    if let Err(e) = written {
                        ledger.unpin(&inputs);
                        ledger.transit_released(transit);
                        return Err(e);
                    }
                }
                Admit::Wait => {
                    self.waiting.fetch_add(1, Ordering::AcqRel);
                    ledger = self
                        .room
                        .wait_timeout(ledger, RECHECK)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
    }
}

/// A running subtask's reservation and input pins; returned on drop, which also spills if the
/// worker is above `worker.memory.spill`.
pub struct Lease<'a> {
    storage: &'a Storage,
    task: TaskId,
    inputs: Vec<Key>,
    lease: LeaseId,
}

impl Lease<'_> {
    /// Stores an output, taking its bytes from this lease's reservation.
    pub fn put(&self, chunk: ChunkIdx, data: Arc<ArrayData>) {
        self.storage
            .store((self.task, chunk), data, Some(self.lease));
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let planned = {
            let mut ledger = self.storage.ledger();
            ledger.finished(self.lease, &self.inputs);
            ledger.spill_over_threshold()
        };
        self.storage.wake();
        self.storage.spill_planned(planned);
    }
}

/// Stores of the workers running in this process, for `ares run --json`.
static LIVE: Mutex<Vec<Weak<Storage>>> = Mutex::new(Vec::new());

/// The store of a worker configured by `config`: its limit resolved (`auto` against this
/// machine), its spill directory created when there is a limit.
pub fn open(config: &WorkerConfig) -> std::io::Result<Arc<Storage>> {
    let limit = config.memory_limit_bytes();
    let root = config.spill_dir.clone().unwrap_or_else(default_spill_dir);
    let spill = match (limit > 0).then(|| SpillDir::create(&root)) {
        None => None,
        Some(Ok(dir)) => Some(dir),
        // The default directory unusable (a read-only image): account and pause, no spilling.
        Some(Err(e)) if config.spill_dir.is_none() => {
            tracing::warn!("cannot create {}: {e}; spilling is off", root.display());
            None
        }
        Some(Err(e)) => {
            let what = format!("worker.spill_dir {}: {e}", root.display());
            return Err(std::io::Error::new(e.kind(), what));
        }
    };
    tracing::info!(limit = %human(limit), "worker memory limit");
    let m = &config.memory;
    let storage = Arc::new(Storage::with_limit(limit, m.spill, m.pause, spill));
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    live.retain(|w| w.strong_count() > 0);
    live.push(Arc::downgrade(&storage));
    Ok(storage)
}

/// Every worker store alive in this process (the embedded cluster's workers).
pub fn live() -> Vec<Arc<Storage>> {
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    live.iter().filter_map(Weak::upgrade).collect()
}

/// Memory of every worker store alive in this process.
pub fn live_stats() -> Vec<MemoryStats> {
    live().iter().map(|s| s.stats()).collect()
}

mod transit;

#[cfg(test)]
mod tests;
