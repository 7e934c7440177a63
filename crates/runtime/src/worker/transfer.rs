//! The data plane: workers serve chunks to peers (and the supervisor's result fetch) over
//! their own port, so chunk bytes never pass through the supervisor.
//!
//! Every connection first proves the cluster secret (role `Peer`, [`crate::net`]); the bytes
//! of requests and answers are [`crate::protocol::data`]'s. An answer carries each distinct
//! chunk once and is refused with an error answer when it would not fit in one frame
//! (`cluster.max_frame_bytes`), before anything is encoded.
//!
//! Fetching (the client) is [`crate::data_plane`]'s, below both roles.

use super::storage::Storage;
use crate::net::{accept_loop, Admitted, Gate};
use crate::protocol::codec::{self, CodecError};
use crate::protocol::handshake::Role;
use crate::protocol::secure::Conn;
use crate::protocol::{data, pieces};
use crate::telemetry::peer_rejected;
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use futures_util::{SinkExt, StreamExt};
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::codec::Framed;

/// A peer asked for rows a chunk does not have.
#[derive(Debug, thiserror::Error)]
#[error("rows {start}..{end} of a chunk of {rows} rows")]
struct RowsOutOfRange {
    start: u64,
    end: u64,
    rows: u64,
}

/// The raw bytes and shape of rows `rows` of a chunk (all of it without rows).
fn rows_of(d: &ArrayData, rows: data::Rows) -> Result<(Cow<'_, [u8]>, Vec<usize>), RowsOutOfRange> {
    let raw = pieces::raw_bytes(d);
    let Some((start, end)) = rows else {
        return Ok((raw, d.shape().to_vec()));
    };
    let mut shape = d.shape().to_vec();
    let n = shape.first().copied().unwrap_or(0) as u64;
    if start >= end || end > n {
        return Err(RowsOutOfRange {
            start,
            end,
            rows: n,
        });
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
    framed: &mut Framed<Conn, codec::Framing>,
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
            Err(e) => {
                return framed
                    .send(data::error_answer(&e.to_string()).into())
                    .await
                    .is_ok()
            }
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
    stream: &mut Conn,
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

/// The gate of a data plane: peers proving the cluster secret; `seal`: encrypt every link.
pub fn gate(
    keys: crate::protocol::secret::Keys,
    config: &crate::config::Config,
    seal: bool,
) -> Gate {
    Gate {
        what: "data plane",
        keys,
        serves: &[Role::Peer],
        handshake_timeout: Duration::from_millis(config.cluster.handshake_timeout_ms),
        max_connections: config.limits.max_connections,
        seal,
    }
}
