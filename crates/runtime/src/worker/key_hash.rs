//! The hash of a stored chunk's key, `(task, chunk)`, laid out for the chunk table's memory.
//!
//! A task's chunk indices are dense, and a worker stores its chunks in roughly increasing
//! order. With a mixing hash (Fx) each insert lands on a random bucket of a table of several
//! megabytes, a cache miss per stored chunk: in `ares bench tps`, 19% of a compute thread
//! stalled on it. Here the bucket bits keep the order instead:
//!
//! * bits 0-31, the bucket within a table: the chunk index XOR a per-task offset.
//!   Consecutive chunks fill neighbouring buckets (the same aligned blocks).
//! * bits 32-56, the `DashMap` shard (its top bits): mixed from the task and the chunk's run
//!   of 256. A run shares a shard and different runs spread over all of them, so compute
//!   threads storing at once rarely wait on one shard's lock.
//! * bits 57-63, hashbrown's tag, compared before a key is: mixed from the whole key, so
//!   neighbours in a group of buckets rarely share it.
//!
//! Keys come from the supervisor, an authenticated peer, so there is no flooding to resist.
//! Fx did not resist it either.

use std::hash::{BuildHasherDefault, Hasher};

/// The `BuildHasher` of the chunk table.
pub type ChunkKeyHash = BuildHasherDefault<KeyHasher>;

const BUCKET: u64 = 0xFFFF_FFFF;
const SHARD: u64 = 0x01FF_FFFF_0000_0000;
const TAG: u64 = !(BUCKET | SHARD);
/// Chunks in a run that share a shard.
const RUN_BITS: u32 = 8;

/// Reads the two `u32` ids that `(TaskId, ChunkIdx)` writes, in that order.
#[derive(Default)]
pub struct KeyHasher {
    ids: [u64; 2],
    written: usize,
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }

    fn write_u64(&mut self, i: u64) {
        // Anything past two words (another key type) is folded into the second.
        let at = self.written.min(1);
        self.ids[at] = self.ids[at].rotate_left(5) ^ i;
        self.written += 1;
    }

    fn finish(&self) -> u64 {
        let [task, chunk] = self.ids;
        let task_mix = task.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bucket = (chunk ^ (task_mix >> 32)) & BUCKET;
        let run = ((chunk >> RUN_BITS) ^ task_mix).wrapping_mul(0x2545_F491_4F6C_DD1D);
        let tag = (chunk ^ task_mix).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        bucket | (run & SHARD) | (tag & TAG)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ares_core::ids::{ChunkIdx, TaskId};
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    fn hash(task: u32, chunk: u32) -> u64 {
        ChunkKeyHash::default().hash_one((TaskId(task), ChunkIdx(chunk)))
    }

    #[test]
    fn consecutive_chunks_take_neighbouring_buckets() {
        for task in [0, 1, 7, 123_456] {
            for c in [0u32, 1, 1000, 65_535, 1 << 20] {
                assert_eq!(
                    (hash(task, c) & BUCKET) ^ (hash(task, c + 1) & BUCKET),
                    (c as u64) ^ (c as u64 + 1),
                    "task {task} chunk {c}"
                );
            }
        }
        assert_ne!(hash(1, 5) & BUCKET, hash(2, 5) & BUCKET, "tasks are offset");
    }

    #[test]
    fn runs_spread_over_shards_and_tags_differ_between_neighbours() {
        let shards: HashSet<u64> = (0..64u32)
            .map(|run| (hash(3, run << RUN_BITS) & SHARD) >> 49)
            .collect();
        assert!(
            shards.len() >= 32,
            "64 runs fall in {} of 256 shards",
            shards.len()
        );
        assert_eq!(
            hash(3, 256) & SHARD,
            hash(3, 300) & SHARD,
            "one run, one shard"
        );
        let tags: HashSet<u64> = (0..16u32).map(|c| hash(3, c) & TAG).collect();
        assert!(tags.len() >= 8, "16 neighbours share {} tags", tags.len());
    }
}
