//! One actor per worker connection to the supervisor, created once the peer proved the worker
//! role in the handshake ([`crate::net`]); clients get a [`super::client_link::ClientLink`].
//! The link reads only [`FromWorker`] frames (anything else does not decode) and writes
//! [`ToWorker`]. The first message must be the worker's hello, which registers it with the
//! scheduler. A bad or oversized frame closes that connection only, with one rate-limited log
//! line; the connection closing tells the scheduler the worker is gone.

use super::messages::{
    Expel, Finished, Heartbeat, LinkHandle, RegisterWorker, SchedulerHandle, Send, WorkerDrain,
    WorkerGone,
};
use crate::guard::{guard, Guarded};
use crate::net::Admitted;
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::{codec, FromWorker, ToWorker, PROTOCOL_VERSION};
use crate::telemetry::peer_rejected;
use actix::prelude::*;
use ares_core::ids::WorkerId;
use bytes::BytesMut;
use std::net::SocketAddr;
use tokio_util::codec::FramedRead;

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Waiting for the hello.
    Unknown,
    /// Refused: the reason is being written, then the connection closes.
    Closing,
    Registered(WorkerId),
}

pub struct Link {
    out: Outbound<ToWorker>,
    state: State,
    peer: SocketAddr,
    _permit: tokio::sync::OwnedSemaphorePermit,
    scheduler: SchedulerHandle,
    /// Where each heartbeat's memory sample and subtask spans go (the dashboard's).
    history: super::history::ClusterHistory,
}

impl From<Addr<Link>> for LinkHandle {
    fn from(a: Addr<Link>) -> Self {
        LinkHandle {
            send: a.clone().recipient(),
            expel: a.recipient(),
        }
    }
}

impl Link {
    pub fn spawn(
        admitted: Admitted,
        max_frame: usize,
        scheduler: SchedulerHandle,
        history: super::history::ClusterHistory,
    ) -> Addr<Link> {
        let Admitted {
            stream,
            peer,
            permit,
            ..
        } = admitted;
        Supervisor::start(move |ctx: &mut Context<Self>| {
            let (read, write) = stream.into_split();
            let limit = codec::FrameLimit::new(max_frame);
            ctx.add_stream(FramedRead::new(read, codec::Framing::new(limit.clone())));
            Link {
                out: Outbound::new(write, limit, ctx),
                state: State::Unknown,
                peer,
                _permit: permit,
                scheduler,
                history,
            }
        })
    }

    fn refuse(&mut self, reason: String, ctx: &mut Context<Self>) {
        peer_rejected(self.peer, "refusing worker", &reason);
        self.out.push(ToWorker::Refused { reason }, ctx);
        self.state = State::Closing;
        if self.out.close().is_err() {
            ctx.stop();
        }
    }

    fn on_message(&mut self, m: FromWorker, ctx: &mut Context<Self>) {
        match (self.state, m) {
            (State::Unknown, FromWorker::Hello { version, .. }) if version != PROTOCOL_VERSION => {
                self.refuse(
                    format!(
                        "protocol version {version}, this supervisor speaks {PROTOCOL_VERSION}"
                    ),
                    ctx,
                )
            }
            (
                State::Unknown,
                FromWorker::Hello {
                    slots,
                    data_addr,
                    memory_limit,
                    runs_code,
                    ..
                },
            ) => {
                let register = RegisterWorker {
                    link: ctx.address().into(),
                    slots: slots.max(1) as usize,
                    data_addr,
                    memory_limit,
                    runs_code,
                };
                ctx.wait(self.scheduler.register.send(register).into_actor(self).map(
                    |id, act, ctx| match id {
                        Ok(Some(id)) => {
                            act.state = State::Registered(id);
                            let welcome = ToWorker::Welcome {
                                version: PROTOCOL_VERSION,
                                worker: id,
                            };
                            act.out.push(welcome, ctx);
                        }
                        Ok(None) => act.refuse("the scheduler is restarting; retry".into(), ctx),
                        Err(e) => act.refuse(format!("scheduler unavailable: {e}"), ctx),
                    },
                ));
            }
            (State::Unknown, _) => self.refuse("expected the worker's hello first".into(), ctx),
            (
                State::Registered(w),
                FromWorker::Heartbeat {
                    stored_chunks,
                    stored_bytes,
                    memory,
                    stream,
                },
            ) => {
                self.history.record(w, &memory, stream);
                self.scheduler.heartbeat.do_send(Heartbeat {
                    worker: w,
                    stored_chunks,
                    stored_bytes,
                    memory,
                });
                self.out.push(ToWorker::HeartbeatAck, ctx);
            }
            (State::Registered(w), FromWorker::Spans { stream }) => {
                self.history.record_spans(w, stream)
            }
            (State::Registered(w), FromWorker::SubtasksFinished { task, reports }) => {
                self.scheduler.finished.do_send(Finished {
                    worker: w,
                    task,
                    reports,
                })
            }
            (State::Registered(w), m @ (FromWorker::Draining | FromWorker::Leaving)) => {
                let left = m == FromWorker::Leaving;
                self.scheduler
                    .drain
                    .do_send(WorkerDrain { worker: w, left });
            }
            (State::Registered(_), FromWorker::Hello { .. }) => {
                self.refuse("a second hello".into(), ctx)
            }
            (State::Closing, _) => {}
        }
    }
}

impl Actor for Link {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let State::Registered(w) = self.state {
            self.scheduler.gone.do_send(WorkerGone(w));
        }
    }
}

impl Guarded for Link {
    const NAME: &'static str = "Link";
    fn panicked(&mut self, _: &'static str, _: &str) {}
}

impl Supervised for Link {
    /// A connection cannot be rebuilt: its read half went with the stopped context, and the
    /// scheduler was told the worker is gone (`stopped`), so the worker's work is re-queued.
    /// The restarted link only closes: once the scheduler drops its handle it stops, the
    /// socket closes, and the worker starts afresh and registers again.
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.state = State::Closing;
    }
}

impl actix::io::WriteHandler<std::io::Error> for Link {}

impl Handler<Flush> for Link {
    type Result = ();
    fn handle(&mut self, _: Flush, ctx: &mut Context<Self>) {
        guard(self, ctx, "Flush", |act, ctx| {
            if let Err(e) = act.out.flush() {
                tracing::error!(peer = %act.peer, "cannot encode a frame: {e}");
                ctx.stop();
            }
        });
    }
}

impl Handler<Expel> for Link {
    type Result = ();
    fn handle(&mut self, Expel(reason): Expel, ctx: &mut Context<Self>) {
        guard(self, ctx, "Expel", |act, ctx| {
            if act.state != State::Closing {
                act.refuse(reason, ctx);
            }
        });
    }
}

impl Handler<Send> for Link {
    type Result = ();
    fn handle(&mut self, Send(m): Send, ctx: &mut Context<Self>) {
        guard(self, ctx, "Send", |act, ctx| {
            act.out.push(m, ctx);
        });
    }
}

impl StreamHandler<Result<BytesMut, std::io::Error>> for Link {
    fn handle(&mut self, frame: Result<BytesMut, std::io::Error>, ctx: &mut Context<Self>) {
        guard(self, ctx, "frame", |act, ctx| {
            match frame
                .map_err(|e| e.to_string())
                .and_then(|f| codec::decode_frame::<FromWorker>(&f).map_err(|e| e.to_string()))
            {
                Ok(messages) => {
                    for m in messages {
                        if act.state == State::Closing {
                            break;
                        }
                        act.on_message(m, ctx);
                    }
                }
                Err(e) => {
                    peer_rejected(act.peer, "closing worker connection", e);
                    ctx.stop();
                }
            }
        });
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
