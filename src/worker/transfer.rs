//! The data plane: workers serve chunks to peers (and the supervisor's result fetch) over
//! their own port, so chunk bytes never pass through the supervisor.
//!
//! Every connection first proves the cluster secret (role `Peer`, [`crate::net`]); the bytes
//! of requests and answers are [`crate::protocol::data`]'s. An answer carries each distinct
//! chunk once and is refused with an error answer when it would not fit in one frame
//! (`cluster.max_frame_bytes`), before anything is encoded.

use super::storage::Storage;
use crate::array::ArrayData;
use crate::ids::{ChunkIdx, TaskId};
use crate::net::{accept_loop, Admitted, Gate};
use crate::protocol::codec::{self, CodecError};
use crate::protocol::handshake::Role;
use crate::protocol::secret::Secret;
use crate::protocol::{auth, data};
use crate::telemetry::peer_rejected;
use futures_util::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::codec::Framed;

/// What a node needs to read from data planes: the secret it proves and the frame limit.
#[derive(Clone, Debug)]
pub struct DataPlane {
    pub secret: Secret,
    pub max_frame: usize,
}

/// How long a fetch waits for the connect and the handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The chunks asked for, or why they cannot be sent.
fn gather(
    storage: &Storage,
    task: TaskId,
    chunks: &[ChunkIdx],
    max_frame: usize,
) -> Result<Vec<(ChunkIdx, Arc<ArrayData>)>, String> {
    let mut total = 1usize;
    let mut out = Vec::with_capacity(chunks.len());
    for c in chunks {
        let d = storage
            .get(task, *c)
            .ok_or_else(|| format!("chunk {c} of {task} is not here"))?;
        total = total.saturating_add(d.nbytes() + data::HEADER_BYTES_PER_CHUNK);
        if total > max_frame {
            return Err(format!(
                "an answer of {} chunks exceeds the frame limit of {max_frame} bytes",
                chunks.len()
            ));
        }
        out.push((*c, d));
    }
    Ok(out)
}

fn encode(found: Result<Vec<(ChunkIdx, Arc<ArrayData>)>, String>) -> Vec<u8> {
    let encoded = found.and_then(|data| {
        let refs: Vec<(ChunkIdx, &ArrayData)> =
            data.iter().map(|(c, d)| (*c, d.as_ref())).collect();
        data::ok_answer(&refs).map_err(|e| e.to_string())
    });
    encoded.unwrap_or_else(|msg| data::error_answer(&msg))
}

/// Answers above this many bytes are encoded on a blocking thread.
const INLINE_ANSWER_BYTES: usize = 1 << 20;

async fn serve_connection(admitted: Admitted, storage: Arc<Storage>, max_frame: usize) {
    let Admitted {
        stream,
        peer,
        permit,
        ..
    } = admitted;
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
        let found = gather(&storage, request.0, &request.1, max_frame);
        let size: usize = found
            .as_ref()
            .map_or(0, |f| f.iter().map(|(_, d)| d.nbytes()).sum());
        // Small answers are cheaper inline than a hop to a blocking thread.
        let reply = if size > INLINE_ANSWER_BYTES {
            tokio::task::spawn_blocking(move || encode(found))
                .await
                .unwrap_or_else(|e| data::error_answer(&e.to_string()))
        } else {
            encode(found)
        };
        if framed.send(bytes::Bytes::from(reply)).await.is_err() {
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
pub fn gate(keys: crate::protocol::secret::Keys, config: &crate::config::Config) -> Gate {
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
    idle: Mutex<HashMap<String, Vec<TcpStream>>>,
}

impl Connections {
    /// Connections that prove `secret` to the peers they open.
    pub fn new(secret: Secret) -> Self {
        Self {
            secret,
            idle: Mutex::default(),
        }
    }

    fn take(&self, addr: &str) -> Result<TcpStream, CodecError> {
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
            .map_err(|e| CodecError::Corrupt(format!("bad peer address {addr}: {e}")))?;
        let mut stream = TcpStream::connect_timeout(&sock, CONNECT_TIMEOUT)?;
        stream.set_nodelay(true)?;
        auth::connect_blocking(&mut stream, Role::Peer, &self.secret, CONNECT_TIMEOUT)
            .map_err(|e| CodecError::Corrupt(format!("{addr}: {e}")))?;
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
    /// threads). A connection that failed is dropped, never reused.
    pub fn fetch(
        &self,
        addr: &str,
        task: TaskId,
        chunks: &[ChunkIdx],
        max_frame: usize,
    ) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
        let mut stream = self.take(addr)?;
        codec::write_frame(&mut stream, &data::encode_request(task, chunks)?)?;
        let reply = codec::read_frame(&mut stream, max_frame)?;
        self.give_back(addr, stream);
        data::decode_answer(&reply)
    }
}

/// One fetch on a fresh connection.
pub fn fetch(
    addr: &str,
    secret: &Secret,
    task: TaskId,
    chunks: &[ChunkIdx],
    max_frame: usize,
) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    Connections::new(secret.clone()).fetch(addr, task, chunks, max_frame)
}
