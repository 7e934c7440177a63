//! What a task's subtasks on the compute pool check before and after they run: one per task
//! on this worker, shared by the worker (until it forgets the task) and the task's jobs on
//! the pool (an `Arc`), so it lives exactly as long as something may still look at it.
//!
//! * A subtask cancelled while it was on the pool ([`Cancelled::cancel`]) is skipped if it
//!   has not started, and its report dropped if it has.
//! * A task that ends here as a whole ([`Cancelled::end`]: the supervisor forgot it, after a
//!   cancel, a failure or an eviction) starts none of its subtasks any more, and a subtask of
//!   it that was running keeps nothing: the worker removes what it stored.
//!
//! A task's end is never undone, whatever came before. The cancelled subtasks used to be one
//! set of the worker's, which forgetting the task emptied; the forget comes right after the
//! cancel, so the subtasks still queued on the pool (up to `slots × worker_prefetch`, 1024 on
//! two slots) found nothing there and ran in full, and the next task waited behind them
//! (minutes in a debug build).
//!
//! Every subtask looks itself up twice, and cancels are rare, so a lookup in a task with no
//! cancelled subtask touches two atomics, not a lock and a hash. A cancel that lands just
//! after a lookup found nothing is the same race as one that arrives after the subtask ended:
//! its report is sent, and the supervisor ignores reports of subtasks it no longer waits for.

use ares_core::ids::SubtaskIdx;
use rustc_hash::FxHashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Default)]
pub struct Cancelled {
    /// The task ended here: nothing of it runs or is kept.
    ended: AtomicBool,
    subtasks: Mutex<FxHashSet<SubtaskIdx>>,
    len: AtomicUsize,
}

impl Cancelled {
    /// One subtask of the task is cancelled.
    pub fn cancel(&self, subtask: SubtaskIdx) {
        if self.ended() {
            return; // every subtask is skipped already
        }
        let mut set = self.subtasks.lock().unwrap_or_else(|p| p.into_inner());
        if set.insert(subtask) {
            self.len.fetch_add(1, Ordering::Release);
        }
    }

    /// The whole task ended on this worker: every subtask of it is skipped from now on.
    pub fn end(&self) {
        // SeqCst: a subtask that stored its outputs and then finds the task not ended is
        // certain that the worker's removal of the task's chunks comes after its store.
        self.ended.store(true, Ordering::SeqCst);
        let mut set = self.subtasks.lock().unwrap_or_else(|p| p.into_inner());
        set.clear();
        set.shrink_to_fit();
        self.len.store(0, Ordering::Release);
    }

    /// Whether the task ended here.
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Whether the subtask must not run (or report): its task ended, or it was cancelled (its
    /// entry is then taken out).
    pub fn take(&self, subtask: SubtaskIdx) -> bool {
        if self.ended() {
            return true;
        }
        if self.len.load(Ordering::Acquire) == 0 {
            return false;
        }
        let mut set = self.subtasks.lock().unwrap_or_else(|p| p.into_inner());
        let taken = set.remove(&subtask);
        if taken {
            self.len.fetch_sub(1, Ordering::Release);
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelled_subtasks_are_taken_once() {
        let c = Cancelled::default();
        assert!(!c.take(SubtaskIdx(0)), "nothing cancelled");
        c.cancel(SubtaskIdx(0));
        c.cancel(SubtaskIdx(0));
        c.cancel(SubtaskIdx(1));
        assert!(c.take(SubtaskIdx(0)));
        assert!(!c.take(SubtaskIdx(0)), "taken already");
        assert!(!c.take(SubtaskIdx(2)), "never cancelled");
        assert!(c.take(SubtaskIdx(1)));
        assert_eq!(c.len.load(Ordering::Relaxed), 0);
    }

    /// The regression: the supervisor cancels a task's subtasks and forgets the task right
    /// after. Its subtasks still queued on the pool must stay skipped, however many there are
    /// and whether or not each was named in the cancel; before, forgetting emptied the set
    /// and all of them ran in full ahead of the next task.
    #[test]
    fn an_ended_task_skips_every_subtask_cancelled_or_not() {
        let c = Cancelled::default();
        c.cancel(SubtaskIdx(3));
        c.end();
        assert!(c.ended());
        for s in [3, 3, 4, 1 << 20] {
            assert!(c.take(SubtaskIdx(s)), "subtask {s} of an ended task runs");
        }
        c.cancel(SubtaskIdx(5));
        assert!(c.take(SubtaskIdx(6)), "an end is never undone");
    }
}
