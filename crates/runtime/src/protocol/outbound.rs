//! One outbound queue per connection, drained into one frame per write.
//!
//! `push` appends and, if no flush is pending, asks the actor to flush; everything queued
//! before the flush runs goes into the same frame. Under load many messages share a frame;
//! when idle a message leaves right away.
//!
//! Frames go to a writer future of the actor's own, as pieces
//! ([`codec::encode_frame_pieces`]): a large byte string the messages share (a task's graph
//! sent to every worker) is written from its one buffer, never copied into a frame or a write
//! buffer per connection. The writer reports to the actor's [`WriteHandler`] as actix's
//! `FramedWrite` did: `error` when a write fails, `finished` once closed and written out.

use super::codec::{self, CodecError};
use super::secure::ConnWrite;
use super::Direction;
use actix::io::WriteHandler;
use actix::prelude::*;
use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Asks the owning actor to write its queue out.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Flush;

pub struct Outbound<M: Direction> {
    /// Frames, as pieces, to the writer; `None` once closed.
    frames_tx: Option<mpsc::UnboundedSender<Vec<Bytes>>>,
    limit: codec::FrameLimit,
    queue: Vec<M>,
    scheduled: bool,
    pub frames: u64,
    pub messages: u64,
}

impl<M: Direction> Outbound<M> {
    pub fn new<A>(write: ConnWrite, limit: codec::FrameLimit, ctx: &mut Context<A>) -> Self
    where
        A: Actor<Context = Context<A>> + WriteHandler<std::io::Error>,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        ctx.spawn(
            actix::fut::wrap_future::<_, A>(write_frames(write, rx)).map(|result, act, ctx| {
                if let Err(e) = result {
                    if act.error(e, ctx) == Running::Continue {
                        return;
                    }
                }
                act.finished(ctx);
            }),
        );
        Self {
            frames_tx: Some(tx),
            limit,
            queue: Vec::new(),
            scheduled: false,
            frames: 0,
            messages: 0,
        }
    }

    pub fn push<A>(&mut self, message: M, ctx: &mut Context<A>)
    where
        A: Actor<Context = Context<A>> + Handler<Flush>,
    {
        self.queue.push(message);
        if !self.scheduled {
            self.scheduled = true;
            ctx.notify(Flush);
        }
    }

    /// Writes what is queued, then closes the connection; the owning actor stops once the
    /// bytes are out.
    pub fn close(&mut self) -> Result<(), CodecError> {
        let flushed = self.flush();
        self.frames_tx = None;
        flushed
    }

    /// Writes everything queued as one frame.
    pub fn flush(&mut self) -> Result<(), CodecError> {
        self.scheduled = false;
        if self.queue.is_empty() {
            return Ok(());
        }
        let pieces = codec::encode_frame_pieces(&self.queue, self.limit.get())?;
        self.frames += 1;
        self.messages += self.queue.len() as u64;
        self.queue.clear();
        if let Some(tx) = &self.frames_tx {
            // A closed writer already told the actor (error or finished).
            let _ = tx.send(pieces);
        }
        Ok(())
    }
}

/// Writes each frame's pieces in order until the queue closes, then shuts the write half.
async fn write_frames(
    mut write: ConnWrite,
    mut frames: mpsc::UnboundedReceiver<Vec<Bytes>>,
) -> std::io::Result<()> {
    while let Some(pieces) = frames.recv().await {
        for piece in pieces {
            write.write_all(&piece).await?;
        }
    }
    write.shutdown().await
}
