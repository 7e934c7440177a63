//! One outbound queue per connection, drained into one frame per write.
//!
//! `push` appends and, if no flush is pending, asks the actor to flush; everything queued
//! before the flush runs goes into the same frame. Under load many messages share a frame;
//! when idle a message leaves right away.

use super::codec::{self, CodecError};
use super::Direction;
use actix::io::{FramedWrite, WriteHandler};
use actix::prelude::*;
use bytes::Bytes;
use tokio::net::tcp::OwnedWriteHalf;

/// Asks the owning actor to write its queue out.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Flush;

pub struct Outbound<M: Direction> {
    writer: FramedWrite<Bytes, OwnedWriteHalf, codec::Framing>,
    queue: Vec<M>,
    scheduled: bool,
    pub frames: u64,
    pub messages: u64,
}

impl<M: Direction> Outbound<M> {
    pub fn new<A>(write: OwnedWriteHalf, limit: codec::FrameLimit, ctx: &mut Context<A>) -> Self
    where
        A: Actor<Context = Context<A>> + WriteHandler<std::io::Error>,
    {
        Self {
            writer: FramedWrite::new(write, codec::Framing::new(limit), ctx),
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
        self.flush()?;
        self.writer.close();
        Ok(())
    }

    /// Writes everything queued as one frame.
    pub fn flush(&mut self) -> Result<(), CodecError> {
        self.scheduled = false;
        if self.queue.is_empty() {
            return Ok(());
        }
        let frame = codec::encode_frame(&self.queue)?;
        self.frames += 1;
        self.messages += self.queue.len() as u64;
        self.queue.clear();
        self.writer.write(Bytes::from(frame));
        Ok(())
    }
}
