//! Tensor uploads and downloads (branch io).
//!
//! `PUT /api/session/{sid}/tensor/{name}` takes an `.npy` body. The body is streamed to a
//! spool file under the first data root (`.ares-uploads/`), never held in memory; a task
//! `from_npy(spool)` named `name` then has the workers read their own chunks of it, and the
//! spool file is removed once they have (the data lives on the workers from then on, as any
//! named result). So the workers must see the supervisor's first data root (same machine or
//! a shared volume). `GET /api/session/{sid}/tensor/{name}?format=npy` streams a named result
//! back as `.npy`, band by band of chunks, each band read from the workers when the client
//! is ready for it: the supervisor holds at most one band.

use super::routes::find;
use super::{ApiError, WebState};
use crate::protocol::{codec, TaskStatus};
use crate::result_stream::{join_rows, le_bytes, Layout, Part};
use crate::supervisor::messages::TaskHandle;
use crate::supervisor::task_manager::{ListSessions, Names, SubmitError, SubmitTask};
use crate::supervisor::task_processor::{FetchPart, WaitDone};
use actix_web::{http::StatusCode, web, HttpResponse};
use futures_util::StreamExt;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

/// Longest an upload's load into the workers may take.
const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

fn mailbox(e: actix::MailboxError) -> ApiError {
    ApiError::internal(format!("supervisor actor unavailable: {e}"))
}

/// A name an expression can use: `[A-Za-z_][A-Za-z0-9_]*`, at most 64 characters.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

async fn named(state: &WebState, sid: &str, name: &str) -> Result<TaskHandle, ApiError> {
    let names = state
        .manager
        .send(Names(sid.to_string()))
        .await
        .map_err(mailbox)?;
    names
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, _, p)| p)
        .ok_or_else(|| ApiError::not_found(format!("no tensor {name:?} in session {sid:?}")))
}

/// `GET /api/session/{sid}/tensor/{name}?format=npy`.
pub async fn get_tensor(
    state: web::Data<WebState>,
    path: web::Path<(String, String)>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    match q.get("format").map(String::as_str) {
        None | Some("npy") => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unknown format {other:?} (npy)"
            )))
        }
    }
    let p = named(&state, &path.0, &path.1).await?;
    npy_response(p, 0).await
}

/// The layout of result `output` of a task, and the most bytes one part may carry.
pub async fn result_layout(p: &TaskHandle, output: u32) -> Result<(Layout, u64), ApiError> {
    let head = p
        .send(FetchPart {
            output,
            positions: vec![],
            rows: None,
        })
        .await
        .map_err(mailbox)?
        .map_err(|e| ApiError::new(StatusCode::CONFLICT, "no_result", e))?;
    let layout = Layout::from_part(&head).map_err(ApiError::internal)?;
    Ok((layout, head.budget))
}

/// Result `output` of a task as a streamed `.npy` answer (also `GET .../result?format=npy`).
pub async fn npy_response(p: TaskHandle, output: u32) -> Result<HttpResponse, ApiError> {
    let (layout, budget) = result_layout(&p, output).await?;
    let header = layout.npy_header();
    let total = header.len() as u64 + layout.nbytes();
    let first = futures_util::stream::once(async move { Ok(bytes::Bytes::from(header)) });
    let bands = futures_util::stream::iter(0..layout.bands()).then(move |b| {
        let (p, layout) = (p.clone(), layout.clone());
        async move { band_bytes(&p, &layout, output, b, budget).await }
    });
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .no_chunking(total)
        .streaming(first.chain(bands)))
}

async fn band_bytes(
    p: &TaskHandle,
    layout: &Layout,
    output: u32,
    b: usize,
    budget: u64,
) -> Result<bytes::Bytes, actix_web::Error> {
    let fail = |e: String| {
        tracing::warn!("tensor download failed at band {b}: {e}");
        actix_web::error::ErrorInternalServerError(e)
    };
    let mut chunks = Vec::new();
    let mut rows_of_chunk = Vec::new();
    let parts = layout.parts(&layout.band_positions(b), budget);
    for (i, part) in parts.iter().enumerate() {
        let (positions, rows) = match part {
            Part::Chunks(positions) => (positions.clone(), None),
            Part::Rows(pos, start, end) => (vec![*pos], Some((*start, *end))),
        };
        let got = p
            .send(FetchPart {
                output,
                positions,
                rows,
            })
            .await
            .map_err(|e| fail(e.to_string()))?
            .map_err(fail)?;
        let decoded = codec::decode_chunks(&got.chunks).map_err(|e| fail(e.to_string()))?;
        let decoded = decoded.into_iter().map(|(_, d)| d);
        match part {
            Part::Chunks(_) => chunks.extend(decoded),
            Part::Rows(pos, ..) => {
                rows_of_chunk.extend(decoded);
                // The chunk's last range: it is whole again.
                if !matches!(parts.get(i + 1), Some(Part::Rows(q, ..)) if q == pos) {
                    chunks.push(join_rows(&rows_of_chunk).map_err(fail)?);
                    rows_of_chunk.clear();
                }
            }
        }
    }
    let band = layout.assemble_band(b, &chunks).map_err(fail)?;
    Ok(bytes::Bytes::from(le_bytes(&band)))
}

/// `?chunk=64` (every dimension) or `?chunk=64,800` (one length per dimension).
fn parse_chunk(text: &str) -> Result<crate::ops::ChunkSpec, ApiError> {
    let dims = text
        .split(',')
        .map(|d| d.trim().parse::<usize>().ok().filter(|n| *n > 0))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "chunk {text:?}: give positive integers, one or one per dimension"
            ))
        })?;
    Ok(match dims.as_slice() {
        [one] => crate::ops::ChunkSpec::Uniform(*one),
        _ => crate::ops::ChunkSpec::PerDim(dims.into_iter().collect()),
    })
}

/// Removes the spool file when the upload ends, however it ends.
struct Spool(std::path::PathBuf);

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `PUT /api/session/{sid}/tensor/{name}` with an `.npy` body.
pub async fn put_tensor(
    state: web::Data<WebState>,
    path: web::Path<(String, String)>,
    q: web::Query<HashMap<String, String>>,
    mut body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (sid, name) = path.into_inner();
    let chunk = q.get("chunk").map(|c| parse_chunk(c)).transpose()?;
    if !valid_name(&name) {
        return Err(ApiError::bad_request(format!(
            "invalid tensor name {name:?}: use [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"
        )));
    }
    let sessions = state
        .manager
        .send(ListSessions(Some(sid.clone())))
        .await
        .map_err(mailbox)?;
    if sessions.is_empty() {
        return Err(ApiError::not_found(format!("unknown session {sid:?}")));
    }
    let roots = crate::io::roots::global();
    let root = roots.roots().first().ok_or_else(|| {
        ApiError::bad_request("uploads need a data root: set data.roots in the config")
    })?;
    let dir = root.join(".ares-uploads");
    std::fs::create_dir_all(&dir)
        .map_err(|e| ApiError::internal(format!("{}: {e}", dir.display())))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let spool = Spool(dir.join(format!("{sid}-{name}-{nanos}.npy")));
    let mut file = Some(
        std::fs::File::create(&spool.0)
            .map_err(|e| ApiError::internal(format!("{}: {e}", spool.0.display())))?,
    );
    let mut received = 0u64;
    while let Some(piece) = body.next().await {
        let piece = piece.map_err(|e| ApiError::bad_request(format!("upload interrupted: {e}")))?;
        received += piece.len() as u64;
        let mut f = file
            .take()
            .ok_or_else(|| ApiError::internal("spool file lost"))?;
        let written = web::block(move || f.write_all(&piece).map(|_| f))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .map_err(|e| ApiError::internal(format!("spooling the upload: {e}")))?;
        file = Some(written);
    }
    drop(file);
    let spool_path = spool.0.to_string_lossy().into_owned();
    let t = web::block(move || crate::tensor::from_npy(&spool_path, chunk))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| {
            ApiError::bad_request(format!(
                "the body ({received} bytes) is not a usable .npy: {e}"
            ))
        })?;
    let (shape, dtype) = (t.shape().to_vec(), t.dtype());
    let submit = SubmitTask {
        session: sid.clone(),
        graph: crate::tensor::Tensor::graph(&[&t]),
        config: None,
        fuse_enabled: None,
        name: Some(name.clone()),
    };
    let task = match state.manager.send(submit).await.map_err(mailbox)? {
        Ok(task) => task,
        Err(e @ SubmitError::UnknownSession(_)) => return Err(ApiError::not_found(e.to_string())),
        Err(e @ SubmitError::Refused(_)) => return Err(ApiError::bad_request(e.to_string())),
    };
    let p = find(&state, &sid, task.0).await?;
    let info = p.send(WaitDone(LOAD_TIMEOUT)).await.map_err(mailbox)?;
    if info.status != TaskStatus::Succeeded {
        return Err(ApiError::bad_request(format!(
            "loading {name:?} into the workers: {:?}: {}",
            info.status,
            info.error.unwrap_or_default()
        )));
    }
    drop(spool);
    Ok(HttpResponse::Created().json(json!({
        "name": name,
        "task_id": task.0,
        "shape": shape,
        "dtype": dtype,
        "bytes": received,
    })))
}
