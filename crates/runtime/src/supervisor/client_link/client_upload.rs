//! A client connection's upload over the native protocol: `UploadBegin`, then `UploadPiece`s
//! in order, then `UploadEnd` (see `supervisor::upload` for where the bytes go).
//!
//! The connection holds at most one upload, and owns its spool file: when the client goes
//! away mid-upload the link stops and the file is removed with it. Pieces are written one at
//! a time on a blocking thread and each is answered once written; up to [`WINDOW`] more may
//! wait their turn, so the client's sending overlaps the writing while the supervisor holds
//! at most `WINDOW + 1` pieces of a connection. The declared size is checked against
//! `limits.max_upload_bytes` before anything is spooled, every piece must continue exactly
//! where the last one ended and stay inside the declared size (else the upload is dropped,
//! every waiting piece answered with the reason), and an upload with no piece for
//! `limits.upload_idle_timeout_ms` is dropped. Only a client that proved the client secret in
//! the handshake gets a [`ClientLink`] at all. A loaded upload is the named result of a task
//! in the session `default`; the connection cancels (frees) it, and its kept spool file, when
//! it closes, if the client has not.

use super::ClientLink;
use crate::protocol::{ClientReply, UploadAnswer};
use crate::supervisor::task_manager::{valid_result_name, DEFAULT_SESSION};
use crate::supervisor::upload::{Loader, Spool, UploadError};
use actix::prelude::*;
use ares_core::ops::ChunkSpec;
use bytes::Bytes;
use std::collections::VecDeque;
use std::io::Write;
use std::time::Duration;

/// What every upload on a connection is allowed, and where it loads.
#[derive(Clone)]
pub struct UploadSettings {
    pub loader: Loader,
    pub max_bytes: u64,
    pub idle: Duration,
    /// Largest piece a client may send (half a frame, at most [`MAX_PIECE`]).
    pub piece_bytes: u64,
}

/// The largest piece. Pieces of 32 MiB answered one at a time moved 800 MB at 200-290 MB/s
/// on loopback (the client idle while the supervisor wrote, and the other way round); 1-4 MiB
/// pieces with a window run about as fast as the HTTP upload.
pub const MAX_PIECE: usize = 4 << 20;

/// Pieces that may wait while one is written (the client's window): sending overlaps
/// writing, and a connection's upload holds at most `WINDOW + 1` pieces in the supervisor.
pub const WINDOW: usize = 8;

/// The upload in progress on a connection.
pub(super) struct Incoming {
    /// Tells this upload from a later one on the same connection.
    id: u64,
    spool: Spool,
    /// `None` while a piece is being written.
    file: Option<std::fs::File>,
    name: Option<String>,
    chunk: Option<ChunkSpec>,
    declared: u64,
    /// Bytes written.
    written: u64,
    /// Pieces waiting to be written (request, bytes).
    waiting: VecDeque<(u64, Bytes)>,
    /// Bytes received and not written yet (waiting, or being written).
    unwritten: u64,
    /// Bumped by every piece: tells a stale idle timer from the current one.
    activity: u64,
}

fn answer(request: u64, answer: Result<UploadAnswer, String>) -> ClientReply {
    ClientReply::Upload { request, answer }
}

impl ClientLink {
    pub(super) fn upload_begin(
        &mut self,
        request: u64,
        name: Option<String>,
        chunk: Option<ChunkSpec>,
        bytes: u64,
        ctx: &mut Context<Self>,
    ) {
        let settings = &self.uploads;
        let result = if self.upload.is_some() {
            Err("an upload is already in progress on this connection".to_string())
        } else if let Some(n) = name.as_ref().filter(|n| !valid_result_name(n)) {
            Err(format!(
                "invalid tensor name {n:?}: use [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"
            ))
        } else if bytes > settings.max_bytes {
            Err(UploadError::TooLarge {
                bytes,
                limit: settings.max_bytes,
            }
            .to_string())
        } else {
            let tag = format!("native-{}", name.as_deref().unwrap_or("unnamed"));
            settings
                .loader
                .spool(&tag, bytes)
                .map_err(|e| e.to_string())
        };
        let reply = result.map(|(spool, file)| {
            self.upload_count += 1;
            self.upload = Some(Incoming {
                id: self.upload_count,
                spool,
                file: Some(file),
                name,
                chunk,
                declared: bytes,
                written: 0,
                waiting: VecDeque::new(),
                unwritten: 0,
                activity: 0,
            });
            self.arm_idle_timer(ctx);
            UploadAnswer::Ready {
                piece_bytes: self.uploads.piece_bytes,
                window: WINDOW as u32,
            }
        });
        self.out.push(answer(request, reply), ctx);
    }

    /// Drops the upload if nothing happens to it within `limits.upload_idle_timeout_ms`.
    fn arm_idle_timer(&mut self, ctx: &mut Context<Self>) {
        let Some(u) = self.upload.as_mut() else {
            return;
        };
        u.activity += 1;
        let (id, activity, idle) = (u.id, u.activity, self.uploads.idle);
        // One timer at a time: a context polls every future it holds on each wakeup.
        if let Some(previous) = self.idle_timer.take() {
            ctx.cancel_future(previous);
        }
        self.idle_timer = Some(ctx.run_later(idle, move |act, ctx| {
            let idle_now = act.upload.as_ref().is_some_and(|u| {
                u.id == id && u.activity == activity && u.file.is_some() && u.waiting.is_empty()
            });
            if idle_now {
                tracing::warn!(peer = %act.peer, "upload dropped: no piece for {idle:?}");
                act.drop_upload("the upload was dropped: no piece in time", ctx);
            }
        }));
    }

    /// Drops the upload (its spool file goes), answering its waiting pieces with `why`.
    fn drop_upload(&mut self, why: &str, ctx: &mut Context<Self>) {
        if let Some(u) = self.upload.take() {
            for (request, _) in u.waiting {
                self.out.push(answer(request, Err(why.to_string())), ctx);
            }
        }
    }

    pub(super) fn upload_piece(
        &mut self,
        request: u64,
        offset: u64,
        data: Bytes,
        ctx: &mut Context<Self>,
    ) {
        let refused = match self.upload.as_mut() {
            None => Some(format!(
                "no upload in progress (none began, or it was dropped: a piece out of step, or \
                 none for {} ms, limits.upload_idle_timeout_ms)",
                self.uploads.idle.as_millis()
            )),
            Some(u) if offset != u.written + u.unwritten => Some(format!(
                "a piece at byte {offset}, but {} bytes arrived before it",
                u.written + u.unwritten
            )),
            Some(u) if u.written + u.unwritten + data.len() as u64 > u.declared => Some(format!(
                "the pieces exceed the {} bytes the upload declared",
                u.declared
            )),
            Some(u) if u.waiting.len() >= WINDOW => Some(format!(
                "more than {WINDOW} pieces waiting to be written: wait for their answers"
            )),
            Some(u) => {
                u.unwritten += data.len() as u64;
                u.waiting.push_back((request, data));
                None
            }
        };
        match refused {
            Some(why) => {
                // The stream is out of step: nothing later can be trusted.
                self.drop_upload(&why, ctx);
                self.out.push(answer(request, Err(why)), ctx);
            }
            None => {
                self.arm_idle_timer(ctx);
                self.write_next(ctx);
            }
        }
    }

    /// Writes the next waiting piece unless one is being written; answers it once written.
    fn write_next(&mut self, ctx: &mut Context<Self>) {
        let Some(u) = self.upload.as_mut().filter(|u| u.file.is_some()) else {
            return;
        };
        let Some((request, data)) = u.waiting.pop_front() else {
            return;
        };
        let (id, len) = (u.id, data.len() as u64);
        let mut file = u.file.take().expect("checked above");
        self.pending += 1;
        let write = tokio::task::spawn_blocking(move || file.write_all(&data).map(|_| file));
        ctx.spawn(write.into_actor(self).map(move |written, act, ctx| {
            act.pending -= 1;
            let current = act.upload.as_mut().filter(|u| u.id == id);
            let reply = match (written, current) {
                (Ok(Ok(file)), Some(u)) => {
                    u.file = Some(file);
                    u.written += len;
                    u.unwritten -= len;
                    Ok(UploadAnswer::Received {
                        received: u.written,
                    })
                }
                (Ok(Ok(_)), None) => Err("the upload was dropped while a piece was written".into()),
                (Ok(Err(e)), _) => Err(UploadError::Spool(e.to_string()).to_string()),
                (Err(e), _) => Err(UploadError::Spool(e.to_string()).to_string()),
            };
            if reply.is_err() && act.upload.as_ref().is_some_and(|u| u.id == id) {
                act.drop_upload("the upload was dropped: a piece could not be written", ctx);
            }
            act.out.push(answer(request, reply), ctx);
            act.arm_idle_timer(ctx);
            act.write_next(ctx);
        }));
    }

    pub(super) fn upload_end(&mut self, request: u64, ctx: &mut Context<Self>) {
        let upload = match self.upload.take() {
            None => Err("no upload in progress".to_string()),
            Some(u) if u.file.is_none() || !u.waiting.is_empty() => {
                self.upload = Some(u);
                self.drop_upload("the upload ended before its pieces were written", ctx);
                Err("the upload ended before its pieces were written".to_string())
            }
            Some(u) if u.written != u.declared => Err(format!(
                "the upload ended after {} of the {} bytes it declared",
                u.written, u.declared
            )),
            Some(u) => Ok(u),
        };
        let u = match upload {
            Ok(u) => u,
            Err(e) => {
                self.out.push(answer(request, Err(e)), ctx);
                return;
            }
        };
        let Incoming {
            spool,
            file,
            name,
            chunk,
            written,
            ..
        } = u;
        drop(file);
        self.pending += 1;
        let loader = self.uploads.loader.clone();
        let load = async move {
            loader
                .load(DEFAULT_SESSION.to_string(), name, spool, chunk, written)
                .await
        };
        ctx.spawn(load.into_actor(self).map(move |loaded, act, ctx| {
            act.pending -= 1;
            if let Ok(l) = &loaded {
                act.uploaded.push(l.tensor.task);
            }
            let reply = loaded
                .map(|l| UploadAnswer::Loaded(l.tensor))
                .map_err(|e| e.to_string());
            act.out.push(answer(request, reply), ctx);
        }));
    }
}
