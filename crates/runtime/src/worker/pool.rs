//! The worker's compute pool: `slots` threads taking jobs deepest-first from one queue.
//!
//! The supervisor keeps several subtasks in flight per slot; they wait here, and the
//! priority follows the scheduler's (deeper first, then first come). Idle threads sleep on a
//! condition variable instead of spinning, which matters on small machines where the
//! supervisor and workers share cores.
//!
//! Each job names its task. When a task ends on the worker (cancelled, failed, forgotten),
//! [`ComputePool::discard`] drops its queued jobs at once (a job's own `Drop` gives back what
//! it held), and [`ComputePool::abandon`] hands the slots of its running ones to new threads:
//! a kernel cannot be interrupted, but the next task need not wait for it.

use ares_core::ids::TaskId;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};

pub type Work = Box<dyn FnOnce() + Send>;

struct Job {
    depth: u32,
    seq: Reverse<u64>,
    task: TaskId,
    work: Work,
}

impl PartialEq for Job {
    fn eq(&self, other: &Self) -> bool {
        (self.depth, self.seq) == (other.depth, other.seq)
    }
}
impl Eq for Job {}
impl Ord for Job {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.depth, self.seq).cmp(&(other.depth, other.seq))
    }
}
impl PartialOrd for Job {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A job being run, by the thread running it.
struct Running {
    thread: u64,
    /// The slot the thread runs as (a new thread taking an abandoned job's slot inherits it).
    slot: u32,
    task: TaskId,
    /// Its task ended: a new thread took its slot, and this one stops after the job.
    abandoned: bool,
}

#[derive(Default)]
struct Queue {
    jobs: BinaryHeap<Job>,
    seq: u64,
    closed: bool,
    running: Vec<Running>,
    next_thread: u64,
}

type Shared = Arc<(Mutex<Queue>, Condvar)>;

pub struct ComputePool {
    queue: Shared,
    slots: usize,
}

impl ComputePool {
    pub fn new(slots: usize) -> std::io::Result<Self> {
        let queue: Shared = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let slots = slots.max(1);
        {
            let mut q = queue.0.lock().unwrap_or_else(|p| p.into_inner());
            for slot in 0..slots {
                spawn_thread(&queue, &mut q, slot as u32)?;
            }
        }
        Ok(Self { queue, slots })
    }

    /// Queues `work` of `task`; deeper jobs run first, equal depths in arrival order.
    pub fn submit(&self, depth: u32, task: TaskId, work: impl FnOnce() + Send + 'static) {
        self.submit_all(std::iter::once((depth, task, Box::new(work) as Work)));
    }

    /// Queues many jobs under one lock, waking at most one thread per job.
    pub fn submit_all(&self, jobs: impl IntoIterator<Item = (u32, TaskId, Work)>) {
        let (lock, ready) = &*self.queue;
        let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
        let before = q.jobs.len();
        for (depth, task, work) in jobs {
            q.seq += 1;
            let seq = Reverse(q.seq);
            q.jobs.push(Job {
                depth,
                seq,
                task,
                work,
            });
        }
        let added = q.jobs.len() - before;
        drop(q);
        if added >= self.slots {
            ready.notify_all();
        } else {
            (0..added).for_each(|_| ready.notify_one());
        }
    }
}

impl ComputePool {
    /// Drops the queued jobs of `task` without running them (the running ones go on); the
    /// others keep their order. Returns how many were dropped. The jobs are dropped after the
    /// queue's lock is released: their `Drop` may take the store's locks.
    pub fn discard(&self, task: TaskId) -> usize {
        let (lock, _) = &*self.queue;
        let dropped: Vec<Job> = {
            let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
            if !q.jobs.iter().any(|j| j.task == task) {
                return 0;
            }
            let (dropped, kept): (Vec<Job>, Vec<Job>) = std::mem::take(&mut q.jobs)
                .into_iter()
                .partition(|j| j.task == task);
            q.jobs = BinaryHeap::from(kept);
            dropped
        };
        dropped.len()
    }

    /// Lets the running jobs of `task` (which ended) finish on their own, off the pool: a
    /// new thread takes each one's slot at once, and the thread running it stops when it is
    /// done. A kernel cannot be interrupted; this way the next task does not wait for it.
    /// Returns how many were abandoned. While they run, the worker runs more threads than it
    /// has slots (at most one more per slot and ended task).
    pub fn abandon(&self, task: TaskId) -> usize {
        // Under the lock: a thread cannot see its job abandoned before its replacement exists.
        let mut q = self.queue.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut abandoned = 0;
        for i in 0..q.running.len() {
            if q.running[i].task != task || q.running[i].abandoned {
                continue;
            }
            let slot = q.running[i].slot;
            if let Err(e) = spawn_thread(&self.queue, &mut q, slot) {
                // No thread to take its slot: this one keeps it.
                tracing::warn!("cannot start a compute thread: {e}");
                break;
            }
            q.running[i].abandoned = true;
            abandoned += 1;
        }
        abandoned
    }

    /// Jobs queued and not started, for tests.
    pub fn queued(&self) -> usize {
        let (lock, _) = &*self.queue;
        lock.lock().unwrap_or_else(|p| p.into_inner()).jobs.len()
    }
}

thread_local! {
    /// The slot this compute thread runs as (0 off the pool).
    static SLOT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The slot of the compute thread calling this, `0..slots` (the task stream's row).
pub fn current_slot() -> u32 {
    SLOT.with(|s| s.get())
}

/// Starts a compute thread: it takes jobs deepest-first until the pool closes, or until the
/// job it ran was abandoned ([`ComputePool::abandon`]: another thread has its slot).
/// `q` is the queue, locked by the caller (the new thread waits for it).
fn spawn_thread(queue: &Shared, q: &mut Queue, slot: u32) -> std::io::Result<()> {
    let queue = queue.clone();
    q.next_thread += 1;
    let me = q.next_thread;
    std::thread::Builder::new()
        .name(format!("ares-compute-{me}"))
        .spawn(move || {
            SLOT.with(|s| s.set(slot));
            let mut ran = false;
            loop {
                let job = {
                    let (lock, ready) = &*queue;
                    let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
                    if ran {
                        if let Some(i) = q.running.iter().position(|r| r.thread == me) {
                            if q.running.swap_remove(i).abandoned {
                                return;
                            }
                        }
                    }
                    loop {
                        if let Some(job) = q.jobs.pop() {
                            let task = job.task;
                            q.running.push(Running {
                                thread: me,
                                slot,
                                task,
                                abandoned: false,
                            });
                            break job;
                        }
                        if q.closed {
                            return;
                        }
                        q = ready.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                };
                ran = true;
                // A job's own errors are its reports; a panic here must not cost the slot.
                let work = std::panic::AssertUnwindSafe(job.work);
                if std::panic::catch_unwind(work).is_err() {
                    tracing::error!("a compute job panicked");
                }
            }
        })?;
    Ok(())
}

/// Closing the pool drops the queued jobs and lets the threads finish on their own; it does
/// not join them. A running job may be blocked on a peer of the same process (the embedded
/// cluster) whose data server only closes its sockets after this pool is dropped: joining here
/// would deadlock the shutdown of a cluster whose task had just failed.
impl Drop for ComputePool {
    fn drop(&mut self) {
        let (lock, ready) = &*self.queue;
        let queued = {
            let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
            q.closed = true;
            std::mem::take(&mut q.jobs)
        };
        ready.notify_all();
        drop(queued);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    const T: TaskId = TaskId(1);

    #[test]
    fn runs_deepest_first_then_in_order() {
        let pool = ComputePool::new(1).unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel();
        // Block the only thread so the next jobs queue up.
        pool.submit(0, T, move || gate_rx.recv().unwrap());
        for (depth, name) in [(0, "a"), (2, "b"), (1, "c"), (2, "d")] {
            let tx = tx.clone();
            pool.submit(depth, T, move || tx.send(name).unwrap());
        }
        gate_tx.send(()).unwrap();
        let order: Vec<&str> = (0..4).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(order, vec!["b", "d", "c", "a"]);
    }

    #[test]
    fn dropping_does_not_wait_for_a_blocked_job_and_discards_the_queue() {
        let pool = ComputePool::new(1).unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel::<&str>();
        pool.submit(0, T, move || {
            started_tx.send(()).unwrap();
            gate_rx.recv().unwrap()
        });
        started_rx.recv().unwrap();
        pool.submit(0, T, move || tx.send("queued job ran").unwrap());
        drop(pool); // returns although the only thread is blocked
        gate_tx.send(()).unwrap();
        assert!(rx.recv().is_err(), "the queued job was dropped, not run");
    }

    /// A cancelled task's jobs queued behind a running one are dropped at once (each one's
    /// `Drop` runs: what it held is given back), and the next task's job runs as soon as the
    /// running one ends, instead of after all of them.
    #[test]
    fn discarding_a_task_drops_its_queued_jobs_and_keeps_the_others_in_order() {
        struct Unrun(mpsc::Sender<&'static str>);
        impl Drop for Unrun {
            fn drop(&mut self) {
                let _ = self.0.send("dropped");
            }
        }
        let pool = ComputePool::new(1).unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel::<&str>();
        pool.submit(0, T, move || {
            started_tx.send(()).unwrap();
            gate_rx.recv().unwrap()
        });
        started_rx.recv().unwrap();
        for _ in 0..1000 {
            let unrun = Unrun(tx.clone());
            pool.submit(0, T, move || {
                let _ = unrun.0.send("cancelled job ran");
            });
        }
        let (next, other) = (tx.clone(), tx.clone());
        pool.submit(0, TaskId(2), move || next.send("next task").unwrap());
        pool.submit(1, TaskId(3), move || {
            other.send("deeper, other task").unwrap()
        });
        assert_eq!(pool.queued(), 1002);
        assert_eq!(pool.discard(T), 1000);
        assert_eq!(pool.discard(T), 0, "nothing of it is left");
        assert_eq!(pool.queued(), 2);
        let dropped: Vec<&str> = (0..1000).map(|_| rx.recv().unwrap()).collect();
        assert!(dropped.iter().all(|m| *m == "dropped"), "{dropped:?}");
        gate_tx.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), "deeper, other task");
        assert_eq!(rx.recv().unwrap(), "next task");
    }

    /// A running job of an ended task keeps its thread until its kernel returns, but not its
    /// slot: the next task's job starts at once, and once the abandoned job is done the pool
    /// runs `slots` jobs at a time again.
    #[test]
    fn an_abandoned_job_gives_its_slot_to_a_new_thread_at_once() {
        let pool = ComputePool::new(1).unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel::<&str>();
        let started = tx.clone();
        pool.submit(0, T, move || {
            started.send("cancelled job started").unwrap();
            gate_rx.recv().unwrap();
            started.send("cancelled job done").unwrap();
        });
        assert_eq!(rx.recv().unwrap(), "cancelled job started");
        let next = tx.clone();
        pool.submit(0, TaskId(2), move || next.send("next task").unwrap());
        assert_eq!(pool.abandon(TaskId(2)), 0, "nothing of it runs");
        assert_eq!(pool.abandon(T), 1);
        assert_eq!(pool.abandon(T), 0, "abandoned once");
        let wait = Duration::from_secs(10);
        assert_eq!(rx.recv_timeout(wait).unwrap(), "next task");
        gate_tx.send(()).unwrap();
        assert_eq!(rx.recv_timeout(wait).unwrap(), "cancelled job done");
        // One slot again: a blocked job holds back the next one.
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (first, second) = (tx.clone(), tx.clone());
        pool.submit(0, TaskId(3), move || {
            first.send("blocking").unwrap();
            gate_rx.recv().unwrap();
        });
        assert_eq!(rx.recv_timeout(wait).unwrap(), "blocking");
        pool.submit(0, TaskId(3), move || second.send("after it").unwrap());
        let early = rx.recv_timeout(Duration::from_millis(300));
        assert!(
            early.is_err(),
            "two jobs ran at once on one slot: {early:?}"
        );
        gate_tx.send(()).unwrap();
        assert_eq!(rx.recv_timeout(wait).unwrap(), "after it");
    }
}
