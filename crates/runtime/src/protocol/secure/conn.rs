//! The connection a link holds once the handshake passed: the TCP stream itself, or sealed
//! in records when the handshake agreed to encrypt. Everything above reads and writes it
//! without knowing which.

use super::blocking::SealedStream;
use super::noise::Cipher;
use super::stream::{SealedRead, SealedWrite};
use std::io::{IoSlice, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// An async connection, already split into its reading and writing halves.
pub struct Conn {
    read: ConnRead,
    write: ConnWrite,
    local: Option<std::net::SocketAddr>,
}

pub enum ConnRead {
    Plain(OwnedReadHalf),
    Sealed(Box<SealedRead<OwnedReadHalf>>),
}

pub enum ConnWrite {
    Plain(OwnedWriteHalf),
    Sealed(Box<SealedWrite<OwnedWriteHalf>>),
}

impl Conn {
    /// `cipher`: the link's keys when it is sealed.
    pub fn new(stream: TcpStream, cipher: Option<Cipher>) -> Self {
        let local = stream.local_addr().ok();
        let (read, write) = stream.into_split();
        match cipher {
            None => Conn {
                read: ConnRead::Plain(read),
                write: ConnWrite::Plain(write),
                local,
            },
            Some(cipher) => {
                let (sealer, opener) = cipher.split();
                Conn {
                    read: ConnRead::Sealed(Box::new(SealedRead::new(read, opener))),
                    write: ConnWrite::Sealed(Box::new(SealedWrite::new(write, sealer))),
                    local,
                }
            }
        }
    }

    pub fn is_sealed(&self) -> bool {
        matches!(self.write, ConnWrite::Sealed(_))
    }

    /// This end's address.
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.local
            .ok_or_else(|| std::io::ErrorKind::NotConnected.into())
    }

    pub fn into_split(self) -> (ConnRead, ConnWrite) {
        (self.read, self.write)
    }
}

impl AsyncRead for ConnRead {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ConnRead::Plain(r) => Pin::new(r).poll_read(cx, buf),
            ConnRead::Sealed(r) => Pin::new(r.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ConnWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ConnWrite::Plain(w) => Pin::new(w).poll_write(cx, buf),
            ConnWrite::Sealed(w) => Pin::new(w.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ConnWrite::Plain(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            ConnWrite::Sealed(w) => Pin::new(w.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ConnWrite::Plain(w) => w.is_write_vectored(),
            ConnWrite::Sealed(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ConnWrite::Plain(w) => Pin::new(w).poll_flush(cx),
            ConnWrite::Sealed(w) => Pin::new(w.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ConnWrite::Plain(w) => Pin::new(w).poll_shutdown(cx),
            ConnWrite::Sealed(w) => Pin::new(w.as_mut()).poll_shutdown(cx),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().read).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().write).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().write).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.write.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().write).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().write).poll_shutdown(cx)
    }
}

/// A blocking connection (clients, the embedded engine's data-plane fetches).
pub enum BlockingConn {
    Plain(std::net::TcpStream),
    Sealed(Box<SealedStream<std::net::TcpStream>>),
}

impl std::fmt::Debug for BlockingConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingConn")
            .field("peer", &self.tcp().peer_addr().ok())
            .field("sealed", &self.is_sealed())
            .finish()
    }
}

impl BlockingConn {
    pub fn new(stream: std::net::TcpStream, cipher: Option<Cipher>) -> Self {
        match cipher {
            None => BlockingConn::Plain(stream),
            Some(cipher) => {
                let (sealer, opener) = cipher.split();
                BlockingConn::Sealed(Box::new(SealedStream::new(stream, sealer, opener)))
            }
        }
    }

    /// The socket underneath (for timeouts).
    pub fn tcp(&self) -> &std::net::TcpStream {
        match self {
            BlockingConn::Plain(s) => s,
            BlockingConn::Sealed(s) => s.get_ref(),
        }
    }

    pub fn is_sealed(&self) -> bool {
        matches!(self, BlockingConn::Sealed(_))
    }
}

impl Read for BlockingConn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            BlockingConn::Plain(s) => s.read(buf),
            BlockingConn::Sealed(s) => s.read(buf),
        }
    }
}

impl Write for BlockingConn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            BlockingConn::Plain(s) => s.write(buf),
            BlockingConn::Sealed(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            BlockingConn::Plain(s) => s.flush(),
            BlockingConn::Sealed(s) => s.flush(),
        }
    }
}
