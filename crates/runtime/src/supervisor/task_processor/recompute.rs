//! Results lost after the task succeeded. The task keeps its results on the workers until it
//! is released; when one of those workers dies, or does not answer a result read, the
//! results it held are recomputed from lineage (the task runs again, `Running`, until they
//! are back: [`super::lifecycle`]), and every result read that came meanwhile, or that
//! found the holder unreachable, waits for that run and is asked again.

use super::result_error::ResultError;
use super::TaskProcessor;
use crate::supervisor::messages::PeerUnreachable;
use actix::prelude::*;
use ares_core::ids::{SubtaskIdx, WorkerId};
use tokio::sync::oneshot;

impl TaskProcessor {
    /// `worker` is gone for this task (`requeue`: what it ran or had queued of it). A task
    /// that had succeeded and held results there runs again to recompute them.
    pub(super) fn lose_worker(
        &mut self,
        worker: WorkerId,
        requeue: &[SubtaskIdx],
        why: &str,
        ctx: &mut Context<Self>,
    ) {
        let Some(s) = self.life.state_mut() else {
            return;
        };
        s.on_worker_lost(worker, requeue, why);
        if self.life.reopen_for_lost_results() {
            tracing::warn!(task = %self.task, %worker, "results lost with the worker after the task succeeded: recomputing them from lineage ({why})");
            self.recomputing = true;
        }
        self.flush(ctx);
    }

    /// While lost results are recomputed, a result read waits for that run to end, then
    /// asks again (`None` otherwise: read now); `lost` answers if this actor is gone by then.
    pub(super) fn after_recompute<M>(
        &mut self,
        ctx: &mut Context<Self>,
        m: M,
        lost: fn(MailboxError) -> M::Result,
    ) -> Option<ResponseActFuture<Self, M::Result>>
    where
        M: Message + Send + 'static,
        M::Result: Send + 'static,
        Self: Handler<M>,
    {
        if !self.recomputing {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        self.waiters.push(tx);
        let me = ctx.address();
        Some(Box::pin(
            async move {
                let _ = rx.await;
                me.send(m).await.unwrap_or_else(lost)
            }
            .into_actor(self),
        ))
    }

    /// The end of result read `m`. A holder that did not answer within the fetch timeout
    /// (tried twice) is reported unreachable, as a worker reports a peer, and lost to this
    /// task: its results are recomputed and `m` is asked again once they are back.
    pub(super) fn after_read<M, T>(
        &mut self,
        read: Result<T, ResultError>,
        ctx: &mut Context<Self>,
        m: M,
    ) -> ResponseActFuture<Self, Result<T, ResultError>>
    where
        M: Message<Result = Result<T, ResultError>> + Send + 'static,
        T: Send + 'static,
        Self: Handler<M>,
    {
        let error = match read {
            Ok(v) => return Box::pin(fut::ready(Ok(v))),
            Err(e) => e,
        };
        if let Some(worker) = error.unreachable() {
            let why = error.to_string();
            self.scheduler.peer_unreachable.do_send(PeerUnreachable {
                worker,
                why: why.clone(),
            });
            self.lose_worker(worker, &[], &why, ctx);
            if let Some(later) = self.after_recompute(ctx, m, |e| Err(e.into())) {
                return later;
            }
        }
        Box::pin(fut::ready(Err(error)))
    }
}
