//! One actor per client connection to the supervisor, created once the peer proved the client
//! role in the handshake ([`crate::net`]). It reads only [`ClientRequest`] frames (a client
//! sending worker messages does not get past decoding) and writes [`ClientReply`]. The first
//! message must be the client's hello; requests then go to the task manager, each answered
//! when ready, at most `limits.max_requests_in_flight_per_connection` at once (a waiting
//! request holds memory in its task's processor). A bad frame closes that connection only,
//! with one rate-limited log line. Uploads are the link's own ([`client_upload`]): the
//! connection owns the upload's spool file.

pub mod client_upload;

use super::messages::FromClient;
use crate::guard::{guard, Guarded};
use crate::net::Admitted;
use crate::protocol::outbound::{Flush, Outbound};
use crate::protocol::{codec, ClientReply, ClientRequest, PROTOCOL_VERSION};
use crate::telemetry::peer_rejected;
use actix::prelude::*;
use bytes::BytesMut;
use client_upload::{Incoming, UploadSettings};
use std::net::SocketAddr;
use tokio_util::codec::FramedRead;

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Unknown,
    Closing,
    Welcomed,
}

pub struct ClientLink {
    out: Outbound<ClientReply>,
    state: State,
    /// Requests sent to the task manager and not answered yet, and the most allowed.
    pending: usize,
    max_pending: usize,
    peer: SocketAddr,
    _permit: tokio::sync::OwnedSemaphorePermit,
    manager: Recipient<FromClient>,
    uploads: UploadSettings,
    upload: Option<Incoming>,
    upload_count: u64,
    /// The idle timer of the upload in progress.
    idle_timer: Option<SpawnHandle>,
    /// The tasks holding this connection's uploads, not cancelled yet: cancelled (freed)
    /// when the connection closes.
    uploaded: Vec<ares_core::ids::TaskId>,
}

impl ClientLink {
    pub fn spawn(
        admitted: Admitted,
        max_frame: usize,
        max_pending: usize,
        manager: Recipient<FromClient>,
        uploads: UploadSettings,
    ) {
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
            ClientLink {
                out: Outbound::new(write, limit, ctx),
                state: State::Unknown,
                pending: 0,
                max_pending,
                peer,
                _permit: permit,
                manager,
                uploads,
                upload: None,
                upload_count: 0,
                idle_timer: None,
                uploaded: Vec::new(),
            }
        });
    }

    fn refuse(&mut self, reason: String, ctx: &mut Context<Self>) {
        peer_rejected(self.peer, "refusing client", &reason);
        self.out.push(ClientReply::Refused { reason }, ctx);
        self.state = State::Closing;
        if self.out.close().is_err() {
            ctx.stop();
        }
    }

    fn on_message(&mut self, m: ClientRequest, ctx: &mut Context<Self>) {
        match (self.state, m) {
            (State::Unknown, ClientRequest::Hello { version }) if version != PROTOCOL_VERSION => {
                self.refuse(
                    format!(
                        "protocol version {version}, this supervisor speaks {PROTOCOL_VERSION}"
                    ),
                    ctx,
                )
            }
            (State::Unknown, ClientRequest::Hello { .. }) => {
                self.state = State::Welcomed;
                let welcome = ClientReply::Welcome {
                    version: PROTOCOL_VERSION,
                };
                self.out.push(welcome, ctx);
            }
            (State::Unknown, _) => self.refuse("expected the client's hello first".into(), ctx),
            (State::Welcomed, ClientRequest::Hello { .. }) => {
                self.refuse("a second hello".into(), ctx)
            }
            (State::Welcomed, _) if self.pending >= self.max_pending => self.refuse(
                format!(
                    "more than {} requests in flight on one connection (limits.max_requests_in_flight_per_connection)",
                    self.max_pending
                ),
                ctx,
            ),
            (
                State::Welcomed,
                ClientRequest::UploadBegin {
                    request,
                    name,
                    chunk,
                    bytes,
                },
            ) => self.upload_begin(request, name, chunk, bytes, ctx),
            (
                State::Welcomed,
                ClientRequest::UploadPiece {
                    request,
                    offset,
                    data,
                },
            ) => self.upload_piece(request, offset, data, ctx),
            (State::Welcomed, ClientRequest::UploadEnd { request }) => {
                self.upload_end(request, ctx)
            }
            (State::Welcomed, request) => {
                if let ClientRequest::Cancel { task, .. } = &request {
                    self.uploaded.retain(|t| t != task);
                }
                self.pending += 1;
                ctx.spawn(self.manager.send(FromClient(request)).into_actor(self).map(
                    |reply, act, ctx| match reply {
                        Ok(reply) => {
                            act.pending -= 1;
                            act.out.push(reply, ctx)
                        }
                        Err(e) => act.refuse(format!("task manager unavailable: {e}"), ctx),
                    },
                ));
            }
            (State::Closing, _) => {}
        }
    }
}

impl Actor for ClientLink {
    type Context = Context<Self>;

    /// An upload lives as long as the connection that made it: a client that goes away
    /// without freeing its uploads leaves nothing behind on the workers.
    fn stopped(&mut self, _: &mut Context<Self>) {
        for task in self.uploaded.drain(..) {
            self.manager
                .do_send(FromClient(ClientRequest::Cancel { request: 0, task }));
        }
    }
}

impl Guarded for ClientLink {
    const NAME: &'static str = "ClientLink";
    fn panicked(&mut self, _: &'static str, _: &str) {}
}

impl Supervised for ClientLink {
    /// A connection cannot be rebuilt (its read half went with the stopped context): the
    /// restarted link only closes, and the client reconnects; its tasks live on in their
    /// processors.
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.state = State::Closing;
    }
}

impl actix::io::WriteHandler<std::io::Error> for ClientLink {}

impl Handler<Flush> for ClientLink {
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

impl StreamHandler<Result<BytesMut, std::io::Error>> for ClientLink {
    fn handle(&mut self, frame: Result<BytesMut, std::io::Error>, ctx: &mut Context<Self>) {
        guard(self, ctx, "frame", |act, ctx| {
            match frame
                .map_err(|e| e.to_string())
                .and_then(|f| codec::decode_frame::<ClientRequest>(&f).map_err(|e| e.to_string()))
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
                    peer_rejected(act.peer, "closing client connection", e);
                    ctx.stop();
                }
            }
        });
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
