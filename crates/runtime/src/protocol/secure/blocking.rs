//! Records under `std::io::Read` / `Write`, for the blocking clients (the native API, the
//! data-plane fetches of the embedded engine). A read that times out leaves a partial record
//! in the buffer and the next read goes on from it.

use super::inbox::{io_error, truncated, Inbox};
use super::record::{Opener, Sealer, MAX_PLAIN};
use std::io::{Read, Write};

/// The most plaintext one write seals and sends.
const BATCH: usize = 4 * MAX_PLAIN;

pub struct SealedStream<S> {
    inner: S,
    inbox: Inbox,
    sealer: Sealer,
    out: Vec<u8>,
}

impl<S> SealedStream<S> {
    pub fn new(inner: S, sealer: Sealer, opener: Opener) -> Self {
        SealedStream {
            inner,
            inbox: Inbox::new(opener),
            sealer,
            out: Vec::new(),
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: Read> Read for SealedStream<S> {
    fn read(&mut self, dst: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(plain) = self.inbox.plain().map_err(io_error)? {
                let n = plain.len().min(dst.len());
                dst[..n].copy_from_slice(&plain[..n]);
                self.inbox.consume(n);
                return Ok(n);
            }
            let n = self.inner.read(self.inbox.spare())?;
            if n == 0 {
                return if self.inbox.between_records() {
                    Ok(0)
                } else {
                    Err(truncated())
                };
            }
            self.inbox.filled(n);
        }
    }
}

impl<S: Write> Write for SealedStream<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let take = buf.len().min(BATCH);
        self.out.clear();
        self.sealer
            .seal(&buf[..take], &mut self.out)
            .map_err(io_error)?;
        self.inner.write_all(&self.out)?;
        Ok(take)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
