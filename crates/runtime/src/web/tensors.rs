//! Tensor uploads and downloads (branch io).
//!
//! `PUT /api/session/{sid}/tensor/{name}` takes an `.npy` body, streamed to a spool file and
//! loaded into the workers as `supervisor::upload` describes (the native protocol's uploads
//! do the same); the answer carries the `Op::Fetch` arguments a client's graph reads it with.
//! `GET /api/session/{sid}/tensor` lists the session's named tensors.
//! `GET /api/session/{sid}/tensor/{name}?format=npy` streams a named result back as `.npy`,
//! band by band of chunks, each band read from the workers when the client is ready for it:
//! the supervisor holds at most one band.
//! `GET /api/session/{sid}/task/{tid}/result` returns one output of a task: `.npy` streamed
//! the same way, JSON (`format=json`) streamed band by band as well ([`super::json_stream`]),
//! raw bytes (and JSON by default, up to `JSON_RESULT_LIMIT` elements) assembled whole up to
//! half a frame.

use super::{mailbox, ApiError, WebState};
use crate::protocol::codec;
use crate::result_stream::{join_rows, le_bytes, Layout, Part};
use crate::supervisor::messages::GetFetchArgs;
use crate::supervisor::messages::TaskHandle;
use crate::supervisor::service::ServiceError;
use crate::supervisor::task_processor::{FetchPart, FetchResult};
use actix_web::{http::StatusCode, web, HttpResponse};
use ares_core::array::ArrayData;
use ares_core::ops::OpArgs;
use futures_util::StreamExt;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;

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
    let p = state.service.named(&path.0, &path.1).await?;
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
        .map_err(ServiceError::NoResult)?;
    let layout = Layout::from_part(&head).map_err(|e| ApiError::internal(e.to_string()))?;
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
    let band = band_data(p, layout, output, b, budget).await?;
    Ok(bytes::Bytes::from(le_bytes(&band)))
}

/// Band `b` of result `output`, read from the workers part by part and assembled.
async fn band_data(
    p: &TaskHandle,
    layout: &Layout,
    output: u32,
    b: usize,
    budget: u64,
) -> Result<ArrayData, actix_web::Error> {
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
            .map_err(|e| fail(e.to_string()))?;
        let decoded = codec::decode_chunks(&got.chunks).map_err(|e| fail(e.to_string()))?;
        let decoded = decoded.into_iter().map(|(_, d)| d);
        match part {
            Part::Chunks(_) => chunks.extend(decoded),
            Part::Rows(pos, ..) => {
                rows_of_chunk.extend(decoded);
                // The chunk's last range: it is whole again.
                if !matches!(parts.get(i + 1), Some(Part::Rows(q, ..)) if q == pos) {
                    chunks.push(join_rows(&rows_of_chunk).map_err(|e| fail(e.to_string()))?);
                    rows_of_chunk.clear();
                }
            }
        }
    }
    layout
        .assemble_band(b, &chunks)
        .map_err(|e| fail(e.to_string()))
}

/// Result `output` of a task as streamed JSON `{"shape", "dtype", "data"}` (see
/// [`super::json_stream`]): at most one band and one piece of text held at a time.
pub async fn json_response(p: TaskHandle, output: u32) -> Result<HttpResponse, ApiError> {
    use futures_util::stream;
    let (layout, budget) = result_layout(&p, output).await?;
    let shape: Vec<usize> = layout.shape.to_vec();
    let head = format!(
        "{{\"shape\":{},\"dtype\":{},\"data\":",
        serde_json::to_string(&shape).map_err(|e| ApiError::internal(e.to_string()))?,
        serde_json::to_string(&layout.dtype).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    let numel: usize = shape.iter().product();
    if shape.is_empty() || numel == 0 {
        // A scalar or an empty array: one small band, assembled as before.
        let data = band_data(&p, &layout, output, 0, budget)
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let data = if numel == 0 {
            ares_core::summary::json_nested(&data)
        } else {
            ares_core::summary::json_result(&data)
        };
        return Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(format!("{head}{data}}}")));
    }
    let inner: usize = shape[1..].iter().product();
    let starts: Vec<usize> = layout.splits[0]
        .iter()
        .scan(0, |row, n| {
            let start = *row;
            *row += n;
            Some(start * inner)
        })
        .collect();
    let first = stream::once(async move { Ok(bytes::Bytes::from(head)) });
    let bands = stream::iter(0..layout.bands())
        .then(move |b| {
            let (p, layout, shape, offset) = (p.clone(), layout.clone(), shape.clone(), starts[b]);
            async move {
                let band = band_data(&p, &layout, output, b, budget).await?;
                Ok::<_, actix_web::Error>(std::sync::Arc::new(super::json_stream::Band::new(
                    band, offset, &shape,
                )))
            }
        })
        .map(|band| match band {
            Ok(band) => stream::iter(
                band.pieces()
                    .into_iter()
                    .map(move |r| Ok::<_, actix_web::Error>(bytes::Bytes::from(band.text(r)))),
            )
            .left_stream(),
            Err(e) => stream::once(async move { Err(e) }).right_stream(),
        })
        .flatten();
    let last = stream::once(async { Ok(bytes::Bytes::from_static(b"}")) });
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .streaming(first.chain(bands).chain(last)))
}

/// `?chunk=64` (every dimension), `?chunk=64,800` (one length per dimension) or
/// `?chunk=2+3+5,4+4` (every chunk length of every dimension; `+` may arrive decoded as a
/// space).
fn parse_chunk(text: &str) -> Result<ares_core::ops::ChunkSpec, ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "chunk {text:?}: give positive integers, one or one per dimension, or every \
             chunk's length per dimension joined by + (2+3+5,4+4)"
        ))
    };
    let dims = text
        .split(',')
        .map(|d| {
            d.split(['+', ' '])
                .map(|n| n.trim().parse::<usize>().ok().filter(|n| *n > 0))
                .collect::<Option<Vec<usize>>>()
        })
        .collect::<Option<Vec<Vec<usize>>>>()
        .ok_or_else(bad)?;
    if dims.iter().any(|d| d.len() > 1) {
        return Ok(ares_core::ops::ChunkSpec::Explicit(dims));
    }
    let lengths: Vec<usize> = dims.into_iter().flatten().collect();
    Ok(match lengths.as_slice() {
        [one] => ares_core::ops::ChunkSpec::Uniform(*one),
        _ => ares_core::ops::ChunkSpec::PerDim(lengths.into_iter().collect()),
    })
}

/// `PUT /api/session/{sid}/tensor/{name}` with an `.npy` body (see `supervisor::upload`).
pub async fn put_tensor(
    state: web::Data<WebState>,
    path: web::Path<(String, String)>,
    q: web::Query<HashMap<String, String>>,
    req: actix_web::HttpRequest,
    mut body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (sid, name) = path.into_inner();
    let service = &state.service;
    let chunk = q.get("chunk").map(|c| parse_chunk(c)).transpose()?;
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    service.check_upload(Some(&name), declared)?;
    service.session_tasks(&sid).await?;
    let tag = format!("{sid}-{name}");
    let (mut spool, file) = service.spool(&tag, declared.unwrap_or(0))?;
    let mut file = Some(file);
    let mut received = 0u64;
    // Every wait for the next piece has a deadline: a stalled body gives its spool back.
    loop {
        let piece = match tokio::time::timeout(state.body_idle, body.next()).await {
            Ok(Some(piece)) => piece,
            Ok(None) => break,
            Err(_) => {
                return Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "upload_stalled",
                    format!(
                        "no upload data for {} ms (web.idle_timeout_ms) after {received} bytes",
                        state.body_idle.as_millis()
                    ),
                ))
            }
        };
        let piece = piece.map_err(|e| ApiError::bad_request(format!("upload interrupted: {e}")))?;
        received += piece.len() as u64;
        service.check_upload_size(received)?;
        spool.reserve(received).map_err(ServiceError::from)?;
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
    let loaded = service
        .upload(&sid, Some(name.clone()), spool, chunk, received)
        .await?;
    Ok(HttpResponse::Created().json(json!({
        "name": name,
        "task_id": loaded.tensor.task.0,
        "shape": loaded.shape,
        "dtype": loaded.dtype,
        "bytes": received,
        "fetch": loaded.tensor.fetch,
    })))
}

/// `GET /api/session/{sid}/tensor`: the session's named tensors whose data the workers hold
/// (uploads and named results), with their task, shape and dtype.
pub async fn list_tensors(
    state: web::Data<WebState>,
    sid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    state.service.session_tasks(&sid).await?;
    let names = state.service.names(&sid).await?;
    let mut tensors = Vec::new();
    for (name, task, p) in names {
        if let Some(OpArgs::FetchResult { shape, dtype, .. }) =
            p.send(GetFetchArgs::FIRST).await.map_err(mailbox)?
        {
            tensors.push(json!({"name": name, "task_id": task.0, "shape": shape, "dtype": dtype}));
        }
    }
    Ok(HttpResponse::Ok().json(json!({ "tensors": tensors })))
}

fn dims(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `GET /api/session/{sid}/task/{tid}/result`: one output as JSON, raw bytes or `.npy`.
pub async fn task_result(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let p = super::routes::find(&state, &path.0, path.1).await?;
    if q.get("format").map(String::as_str) == Some("npy") {
        let index: u32 = q
            .get("index")
            .map_or(Ok(0), |i| i.parse())
            .map_err(|_| ApiError::bad_request("index must be an integer"))?;
        return npy_response(p, index).await;
    }
    let index: usize = q
        .get("index")
        .map_or(Ok(0), |i| i.parse())
        .map_err(|_| ApiError::bad_request("index must be an integer"))?;
    if q.get("format").map(String::as_str) == Some("json") {
        let output = u32::try_from(index).map_err(|_| ApiError::bad_request("index too large"))?;
        return json_response(p, output).await;
    }
    // The raw format, and json by default up to JSON_RESULT_LIMIT elements, assemble the whole result here: only up to half a frame
    // (`cluster.max_frame_bytes`); a larger one streams with ?format=npy.
    let output = u32::try_from(index).map_err(|_| ApiError::bad_request("index too large"))?;
    let (layout, budget) = result_layout(&p, output).await?;
    if layout.nbytes() > budget {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "result_too_large",
            format!(
                "the result is {} ({} bytes), over the {} the json and raw formats assemble in the supervisor (half of cluster.max_frame_bytes); download it with ?format=npy, which streams it chunk by chunk",
                crate::footprint::human(layout.nbytes()),
                layout.nbytes(),
                crate::footprint::human(budget),
            ),
        ));
    }
    let bytes = p
        .send(FetchResult)
        .await
        .map_err(mailbox)?
        .map_err(ServiceError::NoResult)?;
    let mut tensors =
        codec::decode_chunks(&bytes).map_err(|e| ApiError::internal(e.to_string()))?;
    if index >= tensors.len() {
        return Err(ApiError::bad_request(format!(
            "index {index} but the task has {} result(s)",
            tensors.len()
        )));
    }
    let data: ArrayData = tensors.swap_remove(index).1;
    let raw = match q.get("format").map(String::as_str) {
        None => data.len() > super::routes::JSON_RESULT_LIMIT,
        Some("raw") => true,
        Some("json") => false,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unknown format {other:?} (json, raw, npy)"
            )))
        }
    };
    if raw {
        let body = codec::encode_chunks(&[(ares_core::ids::ChunkIdx(0), &data)])
            .map_err(|e| ApiError::internal(e.to_string()))?;
        // Raw little-endian elements after the codec header; shape and dtype also in headers.
        Ok(HttpResponse::Ok()
            .content_type("application/octet-stream")
            .insert_header(("X-Ares-Shape", dims(data.shape())))
            .insert_header(("X-Ares-Dtype", data.dtype().name()))
            .body(body))
    } else {
        Ok(HttpResponse::Ok().json(json!({"shape": data.shape(), "dtype": data.dtype(), "data": ares_core::summary::json_nested(&data)})))
    }
}
