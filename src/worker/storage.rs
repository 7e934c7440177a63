//! The worker's chunk store: chunks in memory, keyed by task and chunk, shared by the compute
//! pool and the data server. Deleted when the supervisor releases them.

use crate::array::ArrayData;
use crate::ids::{ChunkIdx, TaskId};
use dashmap::DashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Keys are small integers hashed on every subtask: Fx instead of SipHash.
type Chunks = DashMap<(TaskId, ChunkIdx), Arc<ArrayData>, rustc_hash::FxBuildHasher>;

#[derive(Default)]
pub struct Storage {
    chunks: Chunks,
    bytes: AtomicUsize,
}

impl Storage {
    pub fn put(&self, task: TaskId, chunk: ChunkIdx, data: Arc<ArrayData>) {
        let size = data.nbytes();
        if let Some(old) = self.chunks.insert((task, chunk), data) {
            self.bytes.fetch_sub(old.nbytes(), Ordering::Relaxed);
        }
        self.bytes.fetch_add(size, Ordering::Relaxed);
    }

    pub fn get(&self, task: TaskId, chunk: ChunkIdx) -> Option<Arc<ArrayData>> {
        self.chunks.get(&(task, chunk)).map(|c| c.clone())
    }

    pub fn remove(&self, task: TaskId, chunk: ChunkIdx) {
        if let Some((_, old)) = self.chunks.remove(&(task, chunk)) {
            self.bytes.fetch_sub(old.nbytes(), Ordering::Relaxed);
        }
    }

    pub fn remove_task(&self, task: TaskId) {
        let keys: Vec<_> = self
            .chunks
            .iter()
            .filter(|e| e.key().0 == task)
            .map(|e| *e.key())
            .collect();
        for (t, c) in keys {
            self.remove(t, c);
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}
