//! Queues of subtasks ordered deepest first, first come first among equals (the scheduler's
//! per-worker queues and a worker's subtasks waiting to fetch their inputs).
//!
//! The order is that of a max-heap on `(depth, Reverse(sequence))`, but a heap pays
//! `O(log n)` moves of whole entries per pop, and a worker's queue holds up to every subtask of
//! a wide task (10^5 and more): with a heap, popping was a fifth of the supervisor's time in
//! `ares bench tps`. Sequence numbers only grow, so a FIFO per depth keeps the same order
//! with `O(1)` pushes and pops; tasks have few distinct depths, so the map of depths stays
//! small.

use std::collections::{BTreeMap, VecDeque};

/// FIFO queues keyed by depth; `pop` takes the front of the deepest.
#[derive(Debug)]
pub struct DepthQueue<T> {
    by_depth: BTreeMap<u32, VecDeque<T>>,
    len: usize,
}

impl<T> Default for DepthQueue<T> {
    fn default() -> Self {
        Self {
            by_depth: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<T> DepthQueue<T> {
    pub fn push(&mut self, depth: u32, item: T) {
        self.by_depth.entry(depth).or_default().push_back(item);
        self.len += 1;
    }

    /// The next item: the earliest of the deepest.
    pub fn peek(&self) -> Option<&T> {
        self.by_depth.values().next_back().and_then(VecDeque::front)
    }

    pub fn pop(&mut self) -> Option<T> {
        let mut deepest = self.by_depth.last_entry()?;
        let item = deepest.get_mut().pop_front();
        if deepest.get().is_empty() {
            deepest.remove();
        }
        self.len -= usize::from(item.is_some());
        item
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the items for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        for q in self.by_depth.values_mut() {
            q.retain(&mut keep);
        }
        self.by_depth.retain(|_, q| !q.is_empty());
        self.len = self.by_depth.values().map(VecDeque::len).sum();
    }

    /// Removes and returns every item, in queue order.
    pub fn take_all(&mut self) -> impl Iterator<Item = T> {
        self.len = 0;
        std::mem::take(&mut self.by_depth)
            .into_values()
            .rev()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Pops in exactly the order of the max-heap on (depth, Reverse(seq)) it replaces,
        /// with pushes and pops interleaved.
        #[test]
        fn pops_like_the_heap_on_depth_then_sequence(
            ops in prop::collection::vec(prop::option::of(0u32..5), 0..200)
        ) {
            let (mut queue, mut heap, mut seq) = (DepthQueue::default(), BinaryHeap::new(), 0u64);
            for op in ops {
                match op {
                    Some(depth) => {
                        seq += 1;
                        queue.push(depth, seq);
                        heap.push((depth, Reverse(seq)));
                    }
                    None => {
                        prop_assert_eq!(queue.peek().copied(), heap.peek().map(|h| h.1 .0));
                        prop_assert_eq!(queue.pop(), heap.pop().map(|h| h.1 .0));
                    }
                }
                prop_assert_eq!(queue.len(), heap.len());
            }
            let rest: Vec<u64> = queue.take_all().collect();
            let mut want = Vec::new();
            while let Some(h) = heap.pop() {
                want.push(h.1 .0);
            }
            prop_assert_eq!(rest, want);
            prop_assert!(queue.is_empty());
        }
    }

    #[test]
    fn retain_keeps_order_and_count() {
        let mut q = DepthQueue::default();
        for (depth, item) in [(0, 1), (2, 2), (0, 3), (2, 4), (1, 5)] {
            q.push(depth, item);
        }
        q.retain(|i| i % 2 == 0 || *i == 5);
        assert_eq!(q.len(), 3);
        assert_eq!(q.take_all().collect::<Vec<_>>(), vec![2, 4, 5]);
        assert_eq!(q.pop(), None);
    }
}
