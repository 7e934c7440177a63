//! One actor per connection to the supervisor, created once the peer passed the handshake
//! ([`crate::net`]) as a worker or a client. Its first frame must be the hello of that role:
//! a worker's registers it with the scheduler, a client's opens the way to the task manager;
//! a client credential can never register a worker. A bad or oversized frame closes that
//! connection only, with one rate-limited log line; a worker's connection closing tells the
//! scheduler the worker is gone.

use super::scheduler::{Finished, Heartbeat, RegisterWorker, Scheduler, WorkerGone};
use super::task_manager::{ClientRequest, TaskManager};
use crate::ids::WorkerId;
use crate::net::Admitted;
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::{codec, handshake, Message, PROTOCOL_VERSION};
use actix::prelude::*;
use bytes::BytesMut;
use std::net::SocketAddr;
use tokio_util::codec::FramedRead;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Unknown,
    /// Refused: the reason is being written, then the connection closes.
    Closing,
    Worker(WorkerId),
    Client,
}

pub struct Link {
    out: Outbound,
    role: Role,
    /// The role the peer proved in the handshake.
    proved: handshake::Role,
    peer: SocketAddr,
    _permit: tokio::sync::OwnedSemaphorePermit,
    scheduler: Addr<Scheduler>,
    manager: Addr<TaskManager>,
}

/// Queues a message on the link.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Send(pub Message);

impl Link {
    pub fn spawn(
        admitted: Admitted,
        max_frame: usize,
        scheduler: Addr<Scheduler>,
        manager: Addr<TaskManager>,
    ) -> Addr<Link> {
        let Admitted {
            stream,
            peer,
            role,
            permit,
        } = admitted;
        Link::create(move |ctx| {
            let (read, write) = stream.into_split();
            let limit = codec::FrameLimit::new(max_frame);
            ctx.add_stream(FramedRead::new(read, codec::Framing::new(limit.clone())));
            Link {
                out: Outbound::new(write, limit, ctx),
                role: Role::Unknown,
                proved: role,
                peer,
                _permit: permit,
                scheduler,
                manager,
            }
        })
    }

    fn refuse(&mut self, reason: String, ctx: &mut Context<Self>) {
        crate::telemetry::peer_rejected(self.peer, "refusing connection", &reason);
        self.out.push(Message::Refused { reason }, ctx);
        self.role = Role::Closing;
        if self.out.close().is_err() {
            ctx.stop();
        }
    }

    fn on_message(&mut self, m: Message, ctx: &mut Context<Self>) {
        match (self.role, m) {
            (
                Role::Unknown,
                Message::HelloWorker { version, .. } | Message::HelloClient { version },
            ) if version != PROTOCOL_VERSION => self.refuse(
                format!("protocol version {version}, this supervisor speaks {PROTOCOL_VERSION}"),
                ctx,
            ),
            (Role::Unknown, Message::HelloWorker { .. })
                if self.proved != handshake::Role::Worker =>
            {
                self.refuse(
                    format!("a {:?} credential cannot register a worker", self.proved),
                    ctx,
                )
            }
            (Role::Unknown, Message::HelloClient { .. })
                if self.proved != handshake::Role::Client =>
            {
                self.refuse(
                    format!("a {:?} connection cannot act as a client", self.proved),
                    ctx,
                )
            }
            (
                Role::Unknown,
                Message::HelloWorker {
                    slots, data_addr, ..
                },
            ) => {
                let register = RegisterWorker {
                    link: ctx.address(),
                    slots: slots.max(1) as usize,
                    data_addr,
                };
                ctx.wait(self.scheduler.send(register).into_actor(self).map(
                    |id, act, ctx| match id {
                        Ok(id) => {
                            act.role = Role::Worker(id);
                            act.out.push(
                                Message::Welcome {
                                    version: PROTOCOL_VERSION,
                                    worker: Some(id),
                                },
                                ctx,
                            );
                        }
                        Err(e) => act.refuse(format!("scheduler unavailable: {e}"), ctx),
                    },
                ));
            }
            (Role::Unknown, Message::HelloClient { .. }) => {
                self.role = Role::Client;
                self.out.push(
                    Message::Welcome {
                        version: PROTOCOL_VERSION,
                        worker: None,
                    },
                    ctx,
                );
            }
            (Role::Unknown, other) => {
                self.refuse(format!("expected a hello, got {}", other.kind()), ctx)
            }
            (
                Role::Worker(w),
                Message::Heartbeat {
                    stored_chunks,
                    stored_bytes,
                },
            ) => self.scheduler.do_send(Heartbeat {
                worker: w,
                stored_chunks,
                stored_bytes,
            }),
            (Role::Worker(w), Message::SubtasksFinished { task, reports }) => {
                self.scheduler.do_send(Finished {
                    worker: w,
                    task,
                    reports,
                })
            }
            (Role::Client, m) if m.is_client_request() => {
                ctx.spawn(self.manager.send(ClientRequest(m)).into_actor(self).map(
                    |reply, act, ctx| match reply {
                        Ok(reply) => act.out.push(reply, ctx),
                        Err(e) => act.refuse(format!("task manager unavailable: {e}"), ctx),
                    },
                ));
            }
            (role, m) => self.refuse(
                format!("{role:?} sent a message it may not send: {}", m.kind()),
                ctx,
            ),
        }
    }
}

impl Actor for Link {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Role::Worker(w) = self.role {
            self.scheduler.do_send(WorkerGone(w));
        }
    }
}

impl actix::io::WriteHandler<std::io::Error> for Link {}

impl Handler<Flush> for Link {
    type Result = ();
    fn handle(&mut self, _: Flush, ctx: &mut Context<Self>) {
        if let Err(e) = self.out.flush() {
            tracing::error!(peer = %self.peer, "cannot encode a frame: {e}");
            ctx.stop();
        }
    }
}

impl Handler<Send> for Link {
    type Result = ();
    fn handle(&mut self, Send(m): Send, ctx: &mut Context<Self>) {
        self.out.push(m, ctx);
    }
}

impl StreamHandler<Result<BytesMut, std::io::Error>> for Link {
    fn handle(&mut self, frame: Result<BytesMut, std::io::Error>, ctx: &mut Context<Self>) {
        match frame
            .map_err(|e| e.to_string())
            .and_then(|f| codec::decode_frame(&f).map_err(|e| e.to_string()))
        {
            Ok(messages) => {
                for m in messages {
                    if self.role == Role::Closing {
                        break;
                    }
                    self.on_message(m, ctx);
                }
            }
            Err(e) => {
                crate::telemetry::peer_rejected(self.peer, "closing connection", e);
                ctx.stop();
            }
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
