//! Records under tokio's `AsyncRead` / `AsyncWrite`: one reading and one writing half, as a
//! TCP stream splits, so a link's reader and writer run apart.
//!
//! The writer is write-through: `poll_write` returns only once the records of what it
//! accepted are in the socket, so no caller has to remember a flush (the plain socket never
//! needed one). A caller that gets `Pending` must call again with the same bytes (as
//! `write_all` and tokio-util's framed writer do): they were sealed already.

use super::inbox::{io_error, truncated, Inbox};
use super::record::{Opener, Sealer, MAX_PLAIN};
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most plaintext one write seals (then writes out before it accepts more).
const BATCH: usize = 4 * MAX_PLAIN;

pub struct SealedRead<R> {
    inner: R,
    inbox: Inbox,
}

impl<R> SealedRead<R> {
    pub fn new(inner: R, opener: Opener) -> Self {
        SealedRead {
            inner,
            inbox: Inbox::new(opener),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SealedRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            match this.inbox.plain().map_err(io_error)? {
                Some(plain) => {
                    let n = plain.len().min(buf.remaining());
                    buf.put_slice(&plain[..n]);
                    this.inbox.consume(n);
                    return Poll::Ready(Ok(()));
                }
                None => {
                    let mut spare = ReadBuf::new(this.inbox.spare());
                    ready!(Pin::new(&mut this.inner).poll_read(cx, &mut spare))?;
                    let n = spare.filled().len();
                    if n == 0 {
                        return Poll::Ready(if this.inbox.between_records() {
                            Ok(())
                        } else {
                            Err(truncated())
                        });
                    }
                    this.inbox.filled(n);
                }
            }
        }
    }
}

pub struct SealedWrite<W> {
    inner: W,
    sealer: Sealer,
    out: Vec<u8>,
    sent: usize,
    /// Plaintext bytes sealed into `out` and not yet reported as written.
    owed: Option<usize>,
}

impl<W> SealedWrite<W> {
    pub fn new(inner: W, sealer: Sealer) -> Self {
        SealedWrite {
            inner,
            sealer,
            out: Vec::new(),
            sent: 0,
            owed: None,
        }
    }
}

impl<W: AsyncWrite + Unpin> SealedWrite<W> {
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.sent < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.out.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    fn poll_sealed(
        &mut self,
        cx: &mut Context<'_>,
        seal: impl FnOnce(&mut Sealer, &mut Vec<u8>) -> Result<usize, super::SealError>,
    ) -> Poll<std::io::Result<usize>> {
        if self.owed.is_none() {
            ready!(self.poll_drain(cx))?;
            self.owed = Some(seal(&mut self.sealer, &mut self.out).map_err(io_error)?);
        }
        ready!(self.poll_drain(cx))?;
        Poll::Ready(Ok(self.owed.take().unwrap_or(0)))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for SealedWrite<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut().poll_sealed(cx, |sealer, out| {
            let take = buf.len().min(BATCH);
            sealer.seal(&buf[..take], out)?;
            Ok(take)
        })
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        // Small pieces share records: gathered up to one batch, then sealed at once.
        self.get_mut().poll_sealed(cx, |sealer, out| {
            let mut gathered = Vec::new();
            for b in bufs {
                let take = b.len().min(BATCH - gathered.len());
                gathered.extend_from_slice(&b[..take]);
                if gathered.len() == BATCH {
                    break;
                }
            }
            sealer.seal(&gathered, out)?;
            Ok(gathered.len())
        })
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
