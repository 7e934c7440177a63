//! The worker's compute pool: `slots` threads taking jobs deepest-first from one queue.
//!
//! The supervisor keeps several subtasks in flight per slot; they wait here, and the
//! priority follows the scheduler's (deeper first, then first come). Idle threads sleep on a
//! condition variable instead of spinning, which matters on small machines where the
//! supervisor and workers share cores.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

pub type Work = Box<dyn FnOnce() + Send>;

struct Job {
    depth: u32,
    seq: Reverse<u64>,
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

#[derive(Default)]
struct Queue {
    jobs: BinaryHeap<Job>,
    seq: u64,
    closed: bool,
}

pub struct ComputePool {
    queue: Arc<(Mutex<Queue>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

impl ComputePool {
    pub fn new(slots: usize) -> std::io::Result<Self> {
        let queue = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let threads = (0..slots.max(1))
            .map(|i| {
                let queue = queue.clone();
                std::thread::Builder::new()
                    .name(format!("ares-compute-{i}"))
                    .spawn(move || loop {
                        let job = {
                            let (lock, ready) = &*queue;
                            let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
                            loop {
                                if let Some(job) = q.jobs.pop() {
                                    break job;
                                }
                                if q.closed {
                                    return;
                                }
                                q = ready.wait(q).unwrap_or_else(|p| p.into_inner());
                            }
                        };
                        (job.work)();
                    })
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Self { queue, threads })
    }

    /// Queues `work`; deeper jobs run first, equal depths in arrival order.
    pub fn submit(&self, depth: u32, work: impl FnOnce() + Send + 'static) {
        self.submit_all(std::iter::once((depth, Box::new(work) as Work)));
    }

    /// Queues many jobs under one lock, waking at most one thread per job.
    pub fn submit_all(&self, jobs: impl IntoIterator<Item = (u32, Work)>) {
        let (lock, ready) = &*self.queue;
        let mut q = lock.lock().unwrap_or_else(|p| p.into_inner());
        let before = q.jobs.len();
        for (depth, work) in jobs {
            q.seq += 1;
            let seq = Reverse(q.seq);
            q.jobs.push(Job { depth, seq, work });
        }
        let added = q.jobs.len() - before;
        drop(q);
        if added >= self.threads.len() {
            ready.notify_all();
        } else {
            (0..added).for_each(|_| ready.notify_one());
        }
    }
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
        self.threads.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn runs_deepest_first_then_in_order() {
        let pool = ComputePool::new(1).unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel();
        // Block the only thread so the next jobs queue up.
        pool.submit(0, move || gate_rx.recv().unwrap());
        for (depth, name) in [(0, "a"), (2, "b"), (1, "c"), (2, "d")] {
            let tx = tx.clone();
            pool.submit(depth, move || tx.send(name).unwrap());
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
        pool.submit(0, move || {
            started_tx.send(()).unwrap();
            gate_rx.recv().unwrap()
        });
        started_rx.recv().unwrap();
        pool.submit(0, move || tx.send("queued job ran").unwrap());
        drop(pool); // returns although the only thread is blocked
        gate_tx.send(()).unwrap();
        assert!(rx.recv().is_err(), "the queued job was dropped, not run");
    }
}
