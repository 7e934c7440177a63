//! The data plane: workers serve chunks to peers (and the supervisor's result fetch) over
//! their own port, so chunk bytes never pass through the supervisor.
//!
//! Every connection first proves the cluster secret (role `Peer`, [`crate::net`]); the bytes
//! of requests and answers are [`crate::protocol::data`]'s. An answer carries each distinct
//! chunk once and is refused with an error answer when it would not fit in one frame
//! (`cluster.max_frame_bytes`), before anything is encoded.
//!
//! No fetch waits forever: the connect, the handshake and every read and write on a fetch's
//! blocking socket time out after `worker.fetch_timeout_ms`. A fetch that times out or loses
//! its connection is tried again once after a short backoff, then fails as
//! [`FetchError::Unreachable`], which the worker reports as the peer being unreachable: a
//! frozen (SIGSTOP), partitioned or dead peer costs a subtask at most
//! `2 × fetch_timeout_ms + backoff`, then its chunks are recomputed elsewhere. A timeout is
//! per read or write, not per answer, so a large answer that keeps arriving never fails.

use super::storage::Storage;
use crate::net::{accept_loop, Admitted, Gate};
use crate::protocol::codec::{self, CodecError};
use crate::protocol::handshake::Role;
use crate::protocol::secret::Secret;
use crate::protocol::{auth, data, pieces};
use crate::telemetry::peer_rejected;
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use futures_util::{SinkExt, StreamExt};
use std::borrow::Cow;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::codec::Framed;

/// What a node needs to read from data planes: the secret it proves, the frame limit and how
/// long a stalled fetch may wait.
#[derive(Clone, Debug)]
pub struct DataPlane {
    pub secret: Secret,
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

/// The raw bytes and shape of rows `rows` of a chunk (all of it without rows).
fn rows_of(d: &ArrayData, rows: data::Rows) -> Result<(Cow<'_, [u8]>, Vec<usize>), String> {
    let raw = pieces::raw_bytes(d);
    let Some((start, end)) = rows else {
        return Ok((raw, d.shape().to_vec()));
    };
    let mut shape = d.shape().to_vec();
    let n = shape.first().copied().unwrap_or(0) as u64;
    if start >= end || end > n {
        return Err(format!("rows {start}..{end} of a chunk of {n} rows"));
    }
    let row = raw.len() / n as usize;
    shape[0] = (end - start) as usize;
    let (a, b) = (start as usize * row, end as usize * row);
    Ok(match raw {
        Cow::Borrowed(r) => (Cow::Borrowed(&r[a..b]), shape),
        Cow::Owned(r) => (Cow::Owned(r[a..b].to_vec()), shape),
    })
}

/// Answers one request: each chunk read (a spilled one from its file, one at a time) and
/// sent in pieces, a frame as soon as a part is full; an error frame ends the answer when a
/// chunk is not here. A chunk of at least half a part goes in frames of its own, written from
/// the chunk itself ([`pieces::piece_frame_head`]): its bytes are copied only by the kernel.
/// Returns false when the connection failed.
async fn answer(
    framed: &mut Framed<tokio::net::TcpStream, codec::Framing>,
    storage: &Storage,
    (task, chunks, rows): (TaskId, Vec<ChunkIdx>, data::Rows),
    part: usize,
) -> bool {
    let mut packer = data::Packer::new(part);
    if rows.is_some() && chunks.len() != 1 {
        let msg = format!("rows of {} chunks asked for (one at a time)", chunks.len());
        return framed.send(data::error_answer(&msg).into()).await.is_ok();
    }
    for c in &chunks {
        let found = storage
            .read(task, *c)
            .ok_or_else(|| format!("chunk {c} of {task} is not here"));
        let d = match found {
            Ok(d) => d,
            Err(msg) => return framed.send(data::error_answer(&msg).into()).await.is_ok(),
        };
        let (raw, shape) = match rows_of(&d, rows) {
            Ok(r) => r,
            Err(msg) => return framed.send(data::error_answer(&msg).into()).await.is_ok(),
        };
        if raw.len() >= part / 2 {
            if !packer.is_empty() {
                let Ok(f) = packer.frame(data::MORE) else {
                    return false;
                };
                if framed.send(f.into()).await.is_err() {
                    return false;
                }
            }
            if !send_whole(framed.get_mut(), *c, (d.dtype(), &shape), &raw, part).await {
                return false;
            }
            continue;
        }
        let mut off = 0;
        loop {
            if packer.full() {
                let Ok(f) = packer.frame(data::MORE) else {
                    return false;
                };
                if framed.send(f.into()).await.is_err() {
                    return false;
                }
            }
            off += packer.fill(*c, (d.dtype(), &shape), &raw, off);
            if off >= raw.len() {
                break;
            }
        }
    }
    match packer.frame(data::OK) {
        Ok(f) => framed.send(f.into()).await.is_ok(),
        Err(e) => framed
            .send(data::error_answer(&e.to_string()).into())
            .await
            .is_ok(),
    }
}

/// Sends a large chunk's raw bytes in frames of one piece each (status [`data::MORE`]),
/// straight from where they lie. The framed writer is flushed here: everything before went
/// out with `send`.
async fn send_whole(
    stream: &mut tokio::net::TcpStream,
    chunk: ChunkIdx,
    layout: (ares_core::array::DType, &[usize]),
    raw: &[u8],
    part: usize,
) -> bool {
    use tokio::io::AsyncWriteExt;
    let item = layout.0.itemsize().max(1);
    let step = (part - pieces::HEADER_BYTES) / item * item;
    let mut off = 0;
    while off < raw.len() {
        let take = step.min(raw.len() - off);
        let Ok(head) = pieces::piece_frame_head(data::MORE, chunk, layout, off, take) else {
            return false;
        };
        if stream.write_all(&head).await.is_err()
            || stream.write_all(&raw[off..off + take]).await.is_err()
        {
            return false;
        }
        off += take;
    }
    true
}

async fn serve_connection(admitted: Admitted, storage: Arc<Storage>, max_frame: usize) {
    let Admitted {
        stream,
        peer,
        permit,
        ..
    } = admitted;
    let part = pieces::part_bytes(max_frame, data::PART_CAP);
    let mut framed = Framed::new(stream, codec::framing(max_frame));
    while let Some(frame) = framed.next().await {
        let request = match frame
            .map_err(CodecError::from)
            .and_then(|r| data::decode_request(&r))
        {
            Ok(r) => r,
            Err(e) => {
                peer_rejected(peer, "data connection closed", e);
                break;
            }
        };
        if !answer(&mut framed, &storage, request, part).await {
            break;
        }
    }
    drop(permit);
}

/// Serves chunks until the runtime stops; returns the bound address.
pub async fn serve(
    listen: &str,
    storage: Arc<Storage>,
    max_frame: usize,
    gate: Gate,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    accept_loop(listener, gate, move |admitted| {
        actix_rt::spawn(serve_connection(admitted, storage.clone(), max_frame));
    });
    Ok(addr)
}

/// The gate of a data plane: peers proving the cluster secret.
pub fn gate(keys: crate::protocol::secret::Keys, config: &ares_core::config::Config) -> Gate {
    Gate {
        what: "data plane",
        keys,
        serves: &[Role::Peer],
        handshake_timeout: Duration::from_millis(config.cluster.handshake_timeout_ms),
        max_connections: config.limits.max_connections,
    }
}

/// Idle data connections per peer address, reused across fetches (a connect per fetch costs
/// more than moving a small chunk).
pub struct Connections {
    secret: Secret,
    timeout: Duration,
    idle: Mutex<HashMap<String, Vec<TcpStream>>>,
}

impl Connections {
    /// Connections that prove `secret` to the peers they open; a stalled connect, handshake,
    /// read or write fails after `timeout`.
    pub fn new(secret: Secret, timeout: Duration) -> Self {
        Self {
            secret,
            timeout,
            idle: Mutex::default(),
        }
    }

    fn take(&self, addr: &str) -> Result<TcpStream, FetchError> {
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
        let mut stream =
            TcpStream::connect_timeout(&sock, self.timeout).map_err(|e| unreachable(&e))?;
        stream.set_nodelay(true).map_err(|e| unreachable(&e))?;
        auth::connect_blocking(&mut stream, Role::Peer, &self.secret, self.timeout).map_err(
            |e| match e {
                crate::protocol::handshake::HandshakeError::Timeout
                | crate::protocol::handshake::HandshakeError::Io(_) => unreachable(&e),
                e => FetchError::Refused(format!("{addr}: {e}")),
            },
        )?;
        stream
            .set_read_timeout(Some(self.timeout))
            .and_then(|_| stream.set_write_timeout(Some(self.timeout)))
            .map_err(|e| unreachable(&e))?;
        Ok(stream)
    }

    fn give_back(&self, addr: &str, stream: TcpStream) {
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
    Connections::new(plane.secret.clone(), plane.timeout).fetch(addr, task, chunks, plane.max_frame)
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
    let got = Connections::new(plane.secret.clone(), plane.timeout).fetch_request(
        addr,
        &request,
        plane.max_frame,
    )?;
    got.into_iter()
        .find(|(c, _)| *c == chunk)
        .map(|(_, d)| d)
        .ok_or_else(|| FetchError::Refused(format!("{addr} did not send chunk {chunk}")))
}
