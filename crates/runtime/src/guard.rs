//! Panics in actor handlers become restarts.
//!
//! actix 0.13 does not catch panics: one in a handler unwinds out of the arbiter, and the
//! actor (with whatever it owned) is gone while its clients wait forever. Every handler of
//! the supervisor's actors and of the worker runs its body through [`guard`]: a panic is
//! caught, logged with the actor and the message being handled, counted (`/metrics`:
//! `ares_actor_restarts_total`), handed to [`Guarded::panicked`], and the context stops. The
//! actors run under `actix::Supervisor`, which then calls `Supervised::restarting` and starts
//! the same actor again: `restarting` rebuilds what the actor owned from what survives, or
//! fails what it cannot rebuild with a clear error. Each actor's module doc says which.
//!
//! What survives a restart, per actor, and why:
//!
//! | actor | survives | rebuilt or failed |
//! |---|---|---|
//! | Scheduler | workers (ids, slots, links, data addresses), the tasks' processors | queues and in-flight sets dropped (a half-done pass may have left them inconsistent); every processor re-drives what it submitted ([`super::messages::Redrive`]), first report wins |
//! | TaskManager | sessions, names, task processors (separate actors) | admission counts recounted from the processors' statuses |
//! | TaskProcessor | an ended task (end, results) | a running task fails with the panic's message: its subtask states may be half-updated; its chunks are released |
//! | Link, ClientLink | nothing: the read half of the socket went with the stopped context | the connection closes; a worker starts afresh and registers again (its work re-queued, its chunks recomputed), a client reconnects |
//! | Worker (not under `actix::Supervisor`) | nothing | the whole worker starts afresh in the same process and registers again |
//!
//! With the `fault-injection` cargo feature (never in release builds by default),
//! `ARES_INJECT_PANIC=Actor:Message:N[,..]` makes the N-th `Message` handled by `Actor` panic,
//! once per process, so tests can prove each restart path on real processes.

use actix::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// An actor whose handlers run through [`guard`].
pub trait Guarded: Actor<Context = Context<Self>> {
    /// The actor's name in logs, metrics and `ARES_INJECT_PANIC`.
    const NAME: &'static str;

    /// A handler panicked while handling `message` (`cause` is the panic's text); called
    /// before the context stops, so the actor can note what `restarting` must rebuild.
    fn panicked(&mut self, message: &'static str, cause: &str);
}

/// Runs a handler body; `None` if it panicked (the actor is then restarting).
pub fn guard<A: Guarded, R>(
    act: &mut A,
    ctx: &mut Context<A>,
    message: &'static str,
    body: impl FnOnce(&mut A, &mut Context<A>) -> R,
) -> Option<R> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        inject(A::NAME, message);
        body(act, ctx)
    }));
    match result {
        Ok(r) => Some(r),
        Err(panic) => {
            let cause = ares_core::prepare::panic_message(panic.as_ref());
            tracing::error!(
                actor = A::NAME,
                message,
                "handler panicked: {cause}; restarting the actor"
            );
            crate::metrics::actor_restarted(A::NAME);
            act.panicked(message, &cause);
            ctx.stop();
            None
        }
    }
}

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
fn inject(_: &'static str, _: &'static str) {}

/// Panics on the N-th `message` handled by `actor` if `ARES_INJECT_PANIC` asks for it.
#[cfg(feature = "fault-injection")]
fn inject(actor: &'static str, message: &'static str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    type Plan = Vec<(String, String, u64, AtomicU64)>;
    static PLAN: OnceLock<Plan> = OnceLock::new();
    let plan = PLAN.get_or_init(|| {
        let spec = std::env::var("ARES_INJECT_PANIC").unwrap_or_default();
        spec.split(',')
            .filter_map(|one| {
                let mut parts = one.trim().split(':');
                let (a, m) = (parts.next()?, parts.next()?);
                let n = parts.next().map_or(Some(1), |n| n.parse().ok())?;
                Some((a.to_string(), m.to_string(), n, AtomicU64::new(0)))
            })
            .collect()
    });
    for (a, m, n, seen) in plan {
        if a == actor && m == message && seen.fetch_add(1, Ordering::Relaxed) + 1 == *n {
            panic!("fault injection: {actor} panics handling {message} #{n}");
        }
    }
}
