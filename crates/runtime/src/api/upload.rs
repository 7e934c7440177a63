//! Tensor uploads from a client: [`NativeClient::upload_npy`] over the native protocol and
//! [`WebTaskApi::upload_npy`] over HTTP, both answering with an [`UploadedTensor`] whose
//! `fetch` arguments make an `Op::Fetch` tensor that later graphs can read (see
//! `supervisor::upload` for what the supervisor does with the bytes).

use super::{ApiError, ApiResult, NativeClient, WebTaskApi};
use crate::protocol::{ClientReply, ClientRequest, UploadAnswer, UploadedTensor};
use ares_core::ids::TaskId;
use ares_core::ops::{ChunkSpec, OpArgs};
use std::io::Read;

impl NativeClient {
    fn upload_call(&mut self, build: impl FnOnce(u64) -> ClientRequest) -> ApiResult<UploadAnswer> {
        match self.call(build)? {
            ClientReply::Upload { answer, .. } => answer.map_err(ApiError::Upload),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Uploads an `.npy` stream of exactly `bytes` bytes, chunked by `chunk` (none: whole
    /// rows of about 2^20 elements), as tensor `name` of the session `default` (none:
    /// unnamed). Pieces of the size the supervisor asks for go in order, up to its window of
    /// them unanswered, so reading, sending and the supervisor's writing overlap.
    pub fn upload_npy(
        &mut self,
        name: Option<&str>,
        chunk: Option<ChunkSpec>,
        bytes: u64,
        mut npy: impl Read,
    ) -> ApiResult<UploadedTensor> {
        let name = name.map(str::to_string);
        let (piece, window) = match self.upload_call(|request| ClientRequest::UploadBegin {
            request,
            name,
            chunk,
            bytes,
        })? {
            UploadAnswer::Ready {
                piece_bytes,
                window,
            } => (piece_bytes.max(1), window.max(1)),
            other => return Err(ApiError::Unexpected(format!("{other:?}"))),
        };
        let mut in_flight = std::collections::VecDeque::new();
        let sent = self.send_pieces(&mut npy, bytes, piece, window as usize, &mut in_flight);
        // Every answer is read, even after a failure, so none is left for a later call.
        let mut result = sent;
        while let Some((request, after)) = in_flight.pop_front() {
            let acked = self.acknowledged(request, after);
            result = result.and(acked);
        }
        if let Err(e) = result {
            // Ends the upload early: the supervisor drops it (and its spool file).
            let _ = self.upload_call(|request| ClientRequest::UploadEnd { request });
            return Err(e);
        }
        match self.upload_call(|request| ClientRequest::UploadEnd { request })? {
            UploadAnswer::Loaded(t) => Ok(t),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Sends the pieces of `npy`, reading an answer whenever `window` are unanswered;
    /// `in_flight` keeps the unanswered ones (request, bytes written once it is).
    fn send_pieces(
        &mut self,
        npy: &mut impl Read,
        bytes: u64,
        piece: u64,
        window: usize,
        in_flight: &mut std::collections::VecDeque<(u64, u64)>,
    ) -> ApiResult<()> {
        let mut offset = 0u64;
        while offset < bytes {
            if in_flight.len() >= window {
                let (request, after) = in_flight.pop_front().expect("window >= 1");
                self.acknowledged(request, after)?;
            }
            let want = (bytes - offset).min(piece) as usize;
            let mut data = bytes::BytesMut::zeroed(want);
            npy.read_exact(&mut data).map_err(|e| {
                ApiError::Upload(format!("reading the upload at byte {offset}: {e}"))
            })?;
            let data = data.freeze();
            let request = self.send(|request| ClientRequest::UploadPiece {
                request,
                offset,
                data,
            })?;
            offset += want as u64;
            in_flight.push_back((request, offset));
        }
        Ok(())
    }

    /// Reads the answer to piece `request`, which must say `after` bytes are written.
    fn acknowledged(&mut self, request: u64, after: u64) -> ApiResult<()> {
        match self.receive(request)? {
            ClientReply::Upload {
                answer: Ok(UploadAnswer::Received { received }),
                ..
            } if received == after => Ok(()),
            ClientReply::Upload { answer: Err(e), .. } => Err(ApiError::Upload(e)),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }
}

/// `ChunkSpec` as the web route's `?chunk=` takes it.
fn chunk_query(chunk: &ChunkSpec) -> String {
    let join = |v: &[usize], sep: &str| {
        v.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(sep)
    };
    match chunk {
        ChunkSpec::Uniform(n) => n.to_string(),
        ChunkSpec::PerDim(v) => join(v, ","),
        ChunkSpec::Explicit(dims) => dims
            .iter()
            .map(|d| join(d, "%2B"))
            .collect::<Vec<_>>()
            .join(","),
    }
}

impl WebTaskApi {
    /// Uploads an `.npy` stream of exactly `bytes` bytes as tensor `name` of this session
    /// ([`WebTaskApi::put_tensor`] with its `Content-Length`, so a too large upload is
    /// refused before its body is read, and a typed answer).
    pub fn upload_npy(
        &self,
        name: &str,
        chunk: Option<&ChunkSpec>,
        bytes: u64,
        npy: impl Read,
    ) -> ApiResult<UploadedTensor> {
        let query = chunk.map_or(String::new(), |c| format!("?chunk={}", chunk_query(c)));
        let path = format!("/api/session/{}/tensor/{name}{query}", self.session);
        let v: serde_json::Value = self
            .request("PUT", &path)
            .set("Content-Type", "application/octet-stream")
            .set("Content-Length", &bytes.to_string())
            .send(npy)
            .map_err(|e| self.fail(e))?
            .into_json()
            .map_err(|e| ApiError::Unexpected(format!("answer to PUT {path}: {e}")))?;
        let bad = |what: &str| ApiError::Unexpected(format!("upload answer without {what}: {v}"));
        let task = v["task_id"].as_u64().ok_or_else(|| bad("task_id"))?;
        let fetch: OpArgs =
            serde_json::from_value(v["fetch"].clone()).map_err(|_| bad("fetch arguments"))?;
        Ok(UploadedTensor {
            task: TaskId(task as u32),
            name: Some(name.to_string()),
            fetch,
        })
    }
}
