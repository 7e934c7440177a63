//! Peer fetches on the worker's runtime, never on a compute thread, behind [`PeerFetch`]: a
//! fetch is a future, so cancelling it is dropping it (the worker does when the subtask that
//! needed it fails or is cancelled), and a compute slot never waits on a socket.
//!
//! [`TcpFetch`] reads from peers' data planes (see [`super::transfer`] for the server and the
//! bytes). The connect, the handshake and every read and write time out after
//! `worker.fetch_timeout_ms` (per read, not per answer: a large answer that keeps arriving
//! never fails); a fetch that times out or loses its connection is tried once more after a
//! short backoff, then fails as [`FetchError::Unreachable`]. Idle connections are reused; one
//! that failed or whose fetch was dropped midway is closed, never reused.

use crate::data_plane::FetchError;
use crate::protocol::codec::CodecError;
use crate::protocol::handshake::{HandshakeError, Role};
use crate::protocol::secret::Secret;
use crate::protocol::secure::Conn;
use crate::protocol::{auth, data, pieces};
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Chunks of a task read from a peer.
pub type Fetched = Result<Vec<(ChunkIdx, ArrayData)>, FetchError>;

/// Reads chunks of `task` from the data plane at `addr`. Dropping the future cancels it.
pub trait PeerFetch: Send + Sync + 'static {
    fn fetch(
        &self,
        addr: String,
        task: TaskId,
        chunks: Vec<ChunkIdx>,
    ) -> BoxFuture<'static, Fetched>;
}

/// Tries of one fetch before the peer counts as unreachable.
const TRIES: u32 = 2;
/// Wait before the second try (doubling after each further one).
const BACKOFF: Duration = Duration::from_millis(100);
/// Bytes read per step: the buffer grows with what arrives.
const READ_STEP: usize = 64 << 10;

/// Fetches over TCP with the cluster secret.
#[derive(Clone)]
pub struct TcpFetch(Arc<Inner>);

struct Inner {
    secret: Secret,
    /// Ask the peers for encrypted links.
    seal: bool,
    timeout: Duration,
    max_frame: usize,
    idle: Mutex<HashMap<String, Vec<Conn>>>,
}

impl TcpFetch {
    pub fn new(secret: Secret, seal: bool, timeout: Duration, max_frame: usize) -> Self {
        TcpFetch(Arc::new(Inner {
            secret,
            seal,
            timeout,
            max_frame,
            idle: Mutex::default(),
        }))
    }
}

impl PeerFetch for TcpFetch {
    fn fetch(
        &self,
        addr: String,
        task: TaskId,
        chunks: Vec<ChunkIdx>,
    ) -> BoxFuture<'static, Fetched> {
        let inner = self.0.clone();
        Box::pin(async move {
            let request = data::encode_request(task, &chunks)
                .map_err(|e| FetchError::Refused(e.to_string()))?;
            let mut backoff = BACKOFF;
            let mut tries = 1;
            loop {
                match inner.fetch_once(&addr, &request).await {
                    Err(FetchError::Unreachable(e)) if tries < TRIES => {
                        tracing::warn!(peer = addr, "fetch try {tries} failed: {e}; retrying");
                        tokio::time::sleep(backoff).await;
                        backoff *= 2;
                        tries += 1;
                    }
                    other => return other,
                }
            }
        })
    }
}

impl Inner {
    /// Runs `io` with the fetch timeout; a timeout or an I/O error means unreachable.
    async fn timed<T>(
        &self,
        addr: &str,
        what: &str,
        io: impl Future<Output = std::io::Result<T>>,
    ) -> Result<T, FetchError> {
        match tokio::time::timeout(self.timeout, io).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(FetchError::Unreachable(format!("{addr}: {what}: {e}"))),
            Err(_) => Err(FetchError::Unreachable(format!(
                "{addr}: {what}: no answer in {} ms (worker.fetch_timeout_ms)",
                self.timeout.as_millis()
            ))),
        }
    }

    async fn connect(&self, addr: &str) -> Result<Conn, FetchError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(addr)
            .and_then(Vec::pop);
        if let Some(s) = idle {
            return Ok(s);
        }
        let s = self
            .timed(addr, "connect", TcpStream::connect(addr))
            .await?;
        s.set_nodelay(true)
            .map_err(|e| FetchError::Unreachable(format!("{addr}: {e}")))?;
        auth::connect_async(s, Role::Peer, &self.secret, self.seal, self.timeout)
            .await
            .map_err(|e| match e {
                HandshakeError::Timeout | HandshakeError::Io(_) => {
                    FetchError::Unreachable(format!("{addr}: handshake: {e}"))
                }
                e => FetchError::Refused(format!("{addr}: {e}")),
            })
    }

    /// One try: the request, then the answer's frames, each piece appended to its chunk as
    /// it arrives (one frame's part held beyond the chunks).
    async fn fetch_once(&self, addr: &str, request: &[u8]) -> Fetched {
        let mut s = self.connect(addr).await?;
        let len = u32::try_from(request.len())
            .map_err(|_| FetchError::Refused("request too large".into()))?;
        let mut frame = Vec::with_capacity(4 + request.len());
        frame.extend_from_slice(&len.to_be_bytes());
        frame.extend_from_slice(request);
        self.timed(addr, "send", s.write_all(&frame)).await?;
        let mut chunks = pieces::Assembler::default();
        let mut reply = Vec::new();
        loop {
            self.read_frame(addr, &mut s, &mut reply).await?;
            match data::add_answer_frame(&mut chunks, &reply) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(FetchError::Refused(format!("{addr}: {e}"))),
            }
        }
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(addr.to_string())
            .or_default()
            .push(s);
        chunks
            .finish()
            .map_err(|e| FetchError::Refused(format!("{addr}: {e}")))
    }

    /// Reads one frame into `buf`, which grows only as bytes arrive (never to a size the
    /// peer announced before sending it).
    async fn read_frame(
        &self,
        addr: &str,
        s: &mut Conn,
        buf: &mut Vec<u8>,
    ) -> Result<(), FetchError> {
        let mut head = [0u8; 4];
        self.timed(addr, "read", s.read_exact(&mut head)).await?;
        let size = u32::from_be_bytes(head) as usize;
        if size > self.max_frame {
            let e = CodecError::TooLarge {
                size,
                limit: self.max_frame,
            };
            return Err(FetchError::Refused(format!("{addr}: {e}")));
        }
        // Reads land in the spare capacity (never zeroed first); the capacity a frame
        // reached serves the next frames of the answer.
        buf.clear();
        while buf.len() < size {
            let filled = buf.len();
            if filled == buf.capacity() {
                buf.reserve_exact(size.min(filled.max(READ_STEP) * 2) - filled);
            }
            let mut rest = (&mut *s).take((size - filled) as u64);
            let n = self.timed(addr, "read", rest.read_buf(buf)).await?;
            if n == 0 {
                return Err(FetchError::Unreachable(format!(
                    "{addr}: answer cut after {filled} of {size} bytes"
                )));
            }
        }
        Ok(())
    }
}
