//! One actor per connection to the supervisor. The first frame says who is calling: a
//! worker (registered with the scheduler) or a client (whose requests go to the task
//! manager). A bad or oversized frame closes that connection only, with the reason logged;
//! a worker's connection closing tells the scheduler the worker is gone.

use super::scheduler::{Finished, Heartbeat, RegisterWorker, Scheduler, WorkerGone};
use super::task_manager::{ClientRequest, TaskManager};
use crate::ids::WorkerId;
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::{codec, Message, PROTOCOL_VERSION};
use actix::prelude::*;
use bytes::BytesMut;
use std::net::SocketAddr;
use tokio::net::TcpStream;
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
    peer: SocketAddr,
    scheduler: Addr<Scheduler>,
    manager: Addr<TaskManager>,
}

/// Queues a message on the link.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Send(pub Message);

impl Link {
    pub fn spawn(
        stream: TcpStream,
        peer: SocketAddr,
        max_frame: usize,
        scheduler: Addr<Scheduler>,
        manager: Addr<TaskManager>,
    ) -> Addr<Link> {
        let _ = stream.set_nodelay(true);
        Link::create(move |ctx| {
            let (read, write) = stream.into_split();
            let limit = codec::FrameLimit::new(max_frame);
            ctx.add_stream(FramedRead::new(read, codec::Framing::new(limit.clone())));
            Link {
                out: Outbound::new(write, limit, ctx),
                role: Role::Unknown,
                peer,
                scheduler,
                manager,
            }
        })
    }

    fn refuse(&mut self, reason: String, ctx: &mut Context<Self>) {
        tracing::warn!(peer = %self.peer, "refusing connection: {reason}");
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
            (Role::Unknown, other) => self.refuse(format!("expected a hello, got {other:?}"), ctx),
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
            (Role::Client, m) => {
                ctx.spawn(self.manager.send(ClientRequest(m)).into_actor(self).map(
                    |reply, act, ctx| match reply {
                        Ok(reply) => act.out.push(reply, ctx),
                        Err(e) => act.refuse(format!("task manager unavailable: {e}"), ctx),
                    },
                ));
            }
            (role, m) => {
                tracing::warn!(peer = %self.peer, ?role, "ignoring unexpected message {m:?}")
            }
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
