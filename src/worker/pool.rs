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

impl Drop for ComputePool {
    fn drop(&mut self) {
        let (lock, ready) = &*self.queue;
        lock.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        ready.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
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
}
