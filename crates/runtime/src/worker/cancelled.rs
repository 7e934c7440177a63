//! Subtasks cancelled while they were on the compute pool: the pool skips them or drops
//! their reports.
//!
//! Every subtask looks itself up twice (before and after it runs), and cancels are rare, so
//! the set counts its entries and a lookup in an empty set touches only that counter, not a
//! lock and a hash. A cancel that lands just after a lookup found the set empty is the same
//! race as one that arrives after the subtask ended: its report is sent, and the supervisor
//! ignores reports of subtasks it no longer waits for. Subtasks are cancelled only when their
//! task ends, so an entry left behind is never matched by a later run; it goes when the task
//! is forgotten.

use crate::ids::{SubtaskIdx, TaskId};
use dashmap::DashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
pub struct Cancelled {
    set: DashSet<(TaskId, SubtaskIdx), rustc_hash::FxBuildHasher>,
    len: AtomicUsize,
}

impl Cancelled {
    pub fn insert(&self, task: TaskId, subtask: SubtaskIdx) {
        if self.set.insert((task, subtask)) {
            self.len.fetch_add(1, Ordering::Release);
        }
    }

    /// Whether the subtask was cancelled; it is taken out of the set.
    pub fn take(&self, task: TaskId, subtask: SubtaskIdx) -> bool {
        if self.len.load(Ordering::Acquire) == 0 {
            return false;
        }
        let taken = self.set.remove(&(task, subtask)).is_some();
        if taken {
            self.len.fetch_sub(1, Ordering::Release);
        }
        taken
    }

    /// Drops the entries of a forgotten task.
    pub fn forget(&self, task: TaskId) {
        self.set.retain(|(t, _)| {
            let keep = *t != task;
            if !keep {
                self.len.fetch_sub(1, Ordering::Release);
            }
            keep
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_taken_once_and_forgotten_per_task() {
        let c = Cancelled::default();
        assert!(!c.take(TaskId(1), SubtaskIdx(0)), "empty");
        c.insert(TaskId(1), SubtaskIdx(0));
        c.insert(TaskId(1), SubtaskIdx(0));
        c.insert(TaskId(1), SubtaskIdx(1));
        c.insert(TaskId(2), SubtaskIdx(0));
        assert!(c.take(TaskId(1), SubtaskIdx(0)));
        assert!(!c.take(TaskId(1), SubtaskIdx(0)), "taken already");
        c.forget(TaskId(1));
        assert!(!c.take(TaskId(1), SubtaskIdx(1)), "forgotten with its task");
        assert!(
            c.take(TaskId(2), SubtaskIdx(0)),
            "another task's entry stays"
        );
        assert_eq!(c.len.load(Ordering::Relaxed), 0);
    }
}
