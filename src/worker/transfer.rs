//! The data plane: workers serve chunks to peers (and the supervisor's result fetch) over
//! their own port, so chunk bytes never pass through the supervisor.
//!
//! A request is one frame `bincode((TaskId, Vec<ChunkIdx>))`; the answer is one frame: a
//! status byte (0 = ok) then the codec's raw chunk encoding, or the error text.

use super::storage::Storage;
use crate::array::ArrayData;
use crate::ids::{ChunkIdx, TaskId};
use crate::protocol::codec::{self, CodecError};
use futures_util::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::codec::Framed;

fn answer(storage: &Storage, request: &[u8]) -> Vec<u8> {
    let result = codec::decode::<(TaskId, Vec<ChunkIdx>)>(request)
        .map_err(|e| e.to_string())
        .and_then(|(task, chunks)| {
            let data: Vec<(ChunkIdx, Arc<ArrayData>)> = chunks
                .iter()
                .map(|c| {
                    storage
                        .get(task, *c)
                        .map(|d| (*c, d))
                        .ok_or_else(|| format!("chunk {c} of {task} is not here"))
                })
                .collect::<Result<_, _>>()?;
            let refs: Vec<(ChunkIdx, &ArrayData)> =
                data.iter().map(|(c, d)| (*c, d.as_ref())).collect();
            codec::encode_chunks(&refs).map_err(|e| e.to_string())
        });
    match result {
        Ok(mut bytes) => {
            bytes.insert(0, 0);
            bytes
        }
        Err(msg) => {
            let mut out = vec![1];
            out.extend_from_slice(msg.as_bytes());
            out
        }
    }
}

/// Answers above this many bytes are encoded on a blocking thread.
const INLINE_ANSWER_BYTES: usize = 1 << 20;

fn request_is_large(storage: &Storage, request: &[u8]) -> bool {
    match codec::decode::<(TaskId, Vec<ChunkIdx>)>(request) {
        Ok((task, chunks)) => {
            chunks
                .iter()
                .filter_map(|c| storage.get(task, *c))
                .map(|d| d.nbytes())
                .sum::<usize>()
                > INLINE_ANSWER_BYTES
        }
        Err(_) => false,
    }
}

/// Serves chunks until the runtime stops; returns the bound address.
pub async fn serve(
    listen: &str,
    storage: Arc<Storage>,
    max_frame: usize,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    actix_rt::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                continue;
            };
            let storage = storage.clone();
            actix_rt::spawn(async move {
                let mut framed = Framed::new(stream, codec::framing(max_frame));
                while let Some(frame) = framed.next().await {
                    match frame {
                        Ok(request) => {
                            // Small answers are cheaper inline than a hop to a blocking thread.
                            let large = request_is_large(&storage, &request);
                            let reply = if large {
                                let storage = storage.clone();
                                tokio::task::spawn_blocking(move || answer(&storage, &request))
                                    .await
                                    .unwrap_or_default()
                            } else {
                                answer(&storage, &request)
                            };
                            if framed.send(bytes::Bytes::from(reply)).await.is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            tracing::warn!(%peer, "data connection closed: {e}");
                            break;
                        }
                    }
                }
            });
        }
    });
    Ok(addr)
}

/// Idle data connections per peer address, reused across fetches (a connect per fetch costs
/// more than moving a small chunk).
#[derive(Default)]
pub struct Connections {
    idle: Mutex<HashMap<String, Vec<TcpStream>>>,
}

impl Connections {
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
        let stream = TcpStream::connect_timeout(&sock, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
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
        codec::write_frame(&mut stream, &codec::encode(&(task, chunks.to_vec()))?)?;
        let reply = codec::read_frame(&mut stream, max_frame)?;
        self.give_back(addr, stream);
        match reply.split_first() {
            Some((0, body)) => codec::decode_chunks(body),
            Some((_, msg)) => Err(CodecError::Corrupt(
                String::from_utf8_lossy(msg).into_owned(),
            )),
            None => Err(CodecError::Corrupt("empty answer".into())),
        }
    }
}

/// One fetch on a fresh connection.
pub fn fetch(
    addr: &str,
    task: TaskId,
    chunks: &[ChunkIdx],
    max_frame: usize,
) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    Connections::default().fetch(addr, task, chunks, max_frame)
}
