//! The data plane's client: how any node (a worker fetching a subtask's inputs, the
//! supervisor fetching results) reads chunks from the worker holding them. It lives below both
//! roles; the serving side is the worker's ([`crate::worker::transfer`]).
//!
//! Every connection first proves the cluster secret (role `Peer`, [`crate::net`]); the bytes
//! of requests and answers are [`crate::protocol::data`]'s.
//!
//! No fetch waits forever: the connect, the handshake and every read and write on a fetch's
//! blocking socket time out after `worker.fetch_timeout_ms`. A fetch that times out or loses
//! its connection is tried again once after a short backoff, then fails as
//! [`FetchError::Unreachable`], which the worker reports as the peer being unreachable: a
//! frozen (SIGSTOP), partitioned or dead peer costs a subtask at most
//! `2 × fetch_timeout_ms + backoff`, then its chunks are recomputed elsewhere. A timeout is
//! per read or write, not per answer, so a large answer that keeps arriving never fails.

use crate::protocol::codec::{self, CodecError};
use crate::protocol::handshake::Role;
use crate::protocol::secret::Secret;
use crate::protocol::secure::BlockingConn;
use crate::protocol::{auth, data, pieces};
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

/// What a node needs to read from data planes: the secret it proves, the frame limit and how
/// long a stalled fetch may wait.
#[derive(Clone, Debug)]
pub struct DataPlane {
    pub secret: Secret,
    /// Ask for encrypted links (`cluster.encrypt`).
    pub seal: bool,
    pub max_frame: usize,
    pub timeout: Duration,
}

/// Tries of one fetch before the peer counts as unreachable.
const FETCH_TRIES: u32 = 2;
/// Wait before the second try (doubling after each further one).
const FETCH_BACKOFF: Duration = Duration::from_millis(100);

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No answer in time, or the connection failed, on every try.
    #[error("no answer within the fetch timeout after {FETCH_TRIES} tries: {0}")]
    Unreachable(String),
    /// The peer answered, but not with the chunks (missing, over the frame limit, corrupt).
    #[error("{0}")]
    Refused(String),
}

/// Idle data connections per peer address, reused across fetches (a connect per fetch costs
/// more than moving a small chunk).
pub struct Connections {
    secret: Secret,
    seal: bool,
    timeout: Duration,
    idle: Mutex<HashMap<String, Vec<BlockingConn>>>,
}

impl Connections {
    /// Connections that prove `secret` to the peers they open (asking for encryption when
    /// `seal`); a stalled connect, handshake, read or write fails after `timeout`.
    pub fn new(secret: Secret, seal: bool, timeout: Duration) -> Self {
        Self {
            secret,
            seal,
            timeout,
            idle: Mutex::default(),
        }
    }

    fn take(&self, addr: &str) -> Result<BlockingConn, FetchError> {
        if let Some(s) = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(addr)
            .and_then(Vec::pop)
        {
            return Ok(s);
        }
        let sock: SocketAddr = addr
            .parse()
            .map_err(|e| FetchError::Refused(format!("bad peer address {addr}: {e}")))?;
        let unreachable = |e: &dyn std::fmt::Display| FetchError::Unreachable(format!("{e}"));
        let stream =
            TcpStream::connect_timeout(&sock, self.timeout).map_err(|e| unreachable(&e))?;
        stream.set_nodelay(true).map_err(|e| unreachable(&e))?;
        let conn =
            auth::connect_blocking(stream, Role::Peer, &self.secret, self.seal, self.timeout)
                .map_err(|e| match e {
                    crate::protocol::handshake::HandshakeError::Timeout
                    | crate::protocol::handshake::HandshakeError::Io(_) => unreachable(&e),
                    e => FetchError::Refused(format!("{addr}: {e}")),
                })?;
        let tcp = conn.tcp();
        tcp.set_read_timeout(Some(self.timeout))
            .and_then(|_| tcp.set_write_timeout(Some(self.timeout)))
            .map_err(|e| unreachable(&e))?;
        Ok(conn)
    }

    fn give_back(&self, addr: &str, stream: BlockingConn) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(addr.to_string())
            .or_default()
            .push(stream);
    }

    /// Fetches chunks of `task` from the worker serving at `addr` (blocking; for compute
    /// threads), trying [`FETCH_TRIES`] times with backoff while the peer does not answer.
    /// A connection that failed is dropped, never reused.
    pub fn fetch(
        &self,
        addr: &str,
        task: TaskId,
        chunks: &[ChunkIdx],
        max_frame: usize,
    ) -> Result<Vec<(ChunkIdx, ArrayData)>, FetchError> {
        let request =
            data::encode_request(task, chunks).map_err(|e| FetchError::Refused(e.to_string()))?;
        self.fetch_request(addr, &request, max_frame)
    }

    /// Sends an encoded request (see [`Connections::fetch`]).
    fn fetch_request(
        &self,
        addr: &str,
        request: &[u8],
        max_frame: usize,
    ) -> Result<Vec<(ChunkIdx, ArrayData)>, FetchError> {
        let mut backoff = FETCH_BACKOFF;
        let mut tries = 1;
        loop {
            match self.fetch_once(addr, request, max_frame) {
                Err(FetchError::Unreachable(e)) if tries < FETCH_TRIES => {
                    tracing::warn!(peer = addr, "fetch try {tries} failed: {e}; retrying");
                    std::thread::sleep(backoff);
                    backoff *= 2;
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    fn fetch_once(
        &self,
        addr: &str,
        request: &[u8],
        max_frame: usize,
    ) -> Result<Vec<(ChunkIdx, ArrayData)>, FetchError> {
        let mut stream = self.take(addr)?;
        let io = |e: CodecError| match e {
            CodecError::Io(e) => FetchError::Unreachable(format!("{addr}: {e}")),
            e => FetchError::Refused(format!("{addr}: {e}")),
        };
        codec::write_frame(&mut stream, request).map_err(io)?;
        let mut chunks = pieces::Assembler::default();
        loop {
            let frame = codec::read_frame(&mut stream, max_frame).map_err(io)?;
            match data::add_answer_frame(&mut chunks, &frame) {
                Ok(true) => break,
                Ok(false) => {}
                // The rest of the answer is not read: the connection is not reused.
                Err(e) => return Err(FetchError::Refused(e.to_string())),
            }
        }
        self.give_back(addr, stream);
        chunks
            .finish()
            .map_err(|e| FetchError::Refused(e.to_string()))
    }
}

/// One fetch on a fresh connection.
pub fn fetch(
    addr: &str,
    plane: &DataPlane,
    task: TaskId,
    chunks: &[ChunkIdx],
) -> Result<Vec<(ChunkIdx, ArrayData)>, FetchError> {
    Connections::new(plane.secret.clone(), plane.seal, plane.timeout).fetch(
        addr,
        task,
        chunks,
        plane.max_frame,
    )
}

/// Rows `rows` of one chunk on a fresh connection (a result chunk larger than a part).
pub fn fetch_rows(
    addr: &str,
    plane: &DataPlane,
    task: TaskId,
    chunk: ChunkIdx,
    rows: (u64, u64),
) -> Result<ArrayData, FetchError> {
    let request = data::encode_rows_request(task, chunk, rows)
        .map_err(|e| FetchError::Refused(e.to_string()))?;
    let got = Connections::new(plane.secret.clone(), plane.seal, plane.timeout).fetch_request(
        addr,
        &request,
        plane.max_frame,
    )?;
    got.into_iter()
        .find(|(c, _)| *c == chunk)
        .map(|(_, d)| d)
        .ok_or_else(|| FetchError::Refused(format!("{addr} did not send chunk {chunk}")))
}
