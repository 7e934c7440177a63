//! Graceful drain on SIGTERM: the worker stops taking work, finishes what runs (bounded by
//! `worker.drain_timeout_ms`), reports it, tells the supervisor it leaves, and `ares node`
//! exits 0. Subtasks not yet started are handed back (`SubtaskError::NotRun`, run elsewhere
//! without counting a retry); the supervisor recomputes from lineage whatever of this
//! worker's chunks is still needed once it has left.

use super::dispatch::Drain;
use super::Worker;
use crate::protocol::FromWorker;
use actix::prelude::*;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// SIGTERM: drain and leave. The worker tells the supervisor it drains (no new work comes),
/// hands back the subtasks it has not started ([`SubtaskError::NotRun`]), lets the running
/// ones finish for up to the given time, sends their reports, says it leaves and closes the
/// link; the supervisor recomputes from lineage whatever of its chunks is still needed.
/// Answers `true` if every running subtask finished in time.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct DrainAndLeave(pub Duration);

impl Handler<DrainAndLeave> for Worker {
    type Result = ResponseActFuture<Self, bool>;
    fn handle(
        &mut self,
        DrainAndLeave(limit): DrainAndLeave,
        ctx: &mut Context<Self>,
    ) -> Self::Result {
        tracing::warn!(
            running = self.shared.in_pool.load(Ordering::Acquire),
            "SIGTERM: draining for up to {} ms (worker.drain_timeout_ms)",
            limit.as_millis()
        );
        self.shared.draining.store(true, Ordering::Release);
        self.core.drain();
        self.carry_out(ctx);
        self.out.push(FromWorker::Draining, ctx);
        let shared = self.shared.clone();
        let deadline = tokio::time::Instant::now() + limit;
        Box::pin(
            async move {
                while shared.in_pool.load(Ordering::Acquire) > 0 {
                    if tokio::time::Instant::now() >= deadline {
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                true
            }
            .into_actor(self)
            .map(|drained, act, ctx| {
                <Self as Handler<Drain>>::handle(act, Drain, ctx);
                for (task, reports) in std::mem::take(&mut act.reports) {
                    act.out
                        .push(FromWorker::SubtasksFinished { task, reports }, ctx);
                }
                act.out.push(FromWorker::Leaving, ctx);
                act.leaving = true;
                if act.out.close().is_err() {
                    ctx.stop();
                }
                tracing::warn!(drained, "drain over: leaving the cluster");
                drained
            }),
        )
    }
}
