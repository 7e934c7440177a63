//! Streamed result fetch over the native protocol: a result comes part by part (each at most
//! the supervisor's part budget, half a frame), band by band in C order, so neither the
//! supervisor nor a frame ever holds it whole. [`NativeClient::fetch`] assembles the bands in
//! the client; [`NativeClient::fetch_npy`] writes them to an `.npy` stream as they come.

use super::{ApiError, ApiResult, NativeClient};
use crate::protocol::{codec, ClientReply, ClientRequest, ResultPart};
use crate::result_stream::{join_rows, le_bytes, Layout, Part};
use ares_core::array::ArrayData;
use ares_core::ids::TaskId;

impl NativeClient {
    /// The layout of result `output` and its chunks at `positions` (in that order).
    pub fn fetch_part(
        &mut self,
        task: TaskId,
        output: u32,
        positions: &[u32],
    ) -> ApiResult<(ResultPart, Vec<ArrayData>)> {
        self.fetch_rows(task, output, positions, None)
    }

    /// As [`NativeClient::fetch_part`], or with `rows` only rows `start..end` (first axis) of
    /// the one chunk at `positions` (a chunk larger than a part).
    pub fn fetch_rows(
        &mut self,
        task: TaskId,
        output: u32,
        positions: &[u32],
        rows: Option<(u64, u64)>,
    ) -> ApiResult<(ResultPart, Vec<ArrayData>)> {
        let reply = self.call(|request| ClientRequest::FetchPart {
            request,
            task,
            output,
            positions: positions.to_vec(),
            rows,
        })?;
        let part = match reply {
            ClientReply::ResultPart { part: Ok(p), .. } => p,
            ClientReply::ResultPart { part: Err(e), .. } => return Err(ApiError::Task(e)),
            other => return Err(ApiError::Unexpected(format!("{other:?}"))),
        };
        let chunks = codec::decode_chunks(&part.chunks)?;
        if chunks.len() != positions.len()
            || chunks.iter().zip(positions).any(|((c, _), p)| c.0 != *p)
        {
            return Err(ApiError::Unexpected(format!(
                "asked for chunks {positions:?}, got {:?}",
                chunks.iter().map(|(c, _)| c.0).collect::<Vec<_>>()
            )));
        }
        Ok((part, chunks.into_iter().map(|(_, d)| d).collect()))
    }

    /// Result `output` band by band: `f(layout, band index, band)`; returns the layout and
    /// how many results the task has.
    pub fn fetch_bands(
        &mut self,
        task: TaskId,
        output: u32,
        mut f: impl FnMut(&Layout, usize, ArrayData) -> ApiResult<()>,
    ) -> ApiResult<(Layout, u32)> {
        let (head, _) = self.fetch_part(task, output, &[])?;
        let layout = Layout::from_part(&head).map_err(|e| ApiError::Unexpected(e.to_string()))?;
        for b in 0..layout.bands() {
            let mut chunks = Vec::new();
            let mut rows = Vec::new();
            let parts = layout.parts(&layout.band_positions(b), head.budget);
            for (i, part) in parts.iter().enumerate() {
                match part {
                    Part::Chunks(positions) => {
                        chunks.extend(self.fetch_part(task, output, positions)?.1)
                    }
                    Part::Rows(p, start, end) => {
                        let got = self.fetch_rows(task, output, &[*p], Some((*start, *end)))?;
                        rows.extend(got.1);
                        // The chunk's last range: it is whole again.
                        if !matches!(parts.get(i + 1), Some(Part::Rows(q, ..)) if q == p) {
                            let whole = join_rows(&rows)
                                .map_err(|e| ApiError::Unexpected(e.to_string()))?;
                            chunks.push(whole);
                            rows.clear();
                        }
                    }
                }
            }
            let band = layout
                .assemble_band(b, &chunks)
                .map_err(|e| ApiError::Unexpected(e.to_string()))?;
            f(&layout, b, band)?;
        }
        Ok((layout, head.outputs))
    }

    /// Writes result `output` as an `.npy` stream (header, then the data band by band);
    /// returns the bytes written.
    pub fn fetch_npy(
        &mut self,
        task: TaskId,
        output: u32,
        mut w: impl std::io::Write,
    ) -> ApiResult<u64> {
        let mut written = 0u64;
        let io = |e: std::io::Error| ApiError::Unexpected(format!("writing the .npy: {e}"));
        self.fetch_bands(task, output, |layout, b, band| {
            if b == 0 {
                let h = layout.npy_header();
                w.write_all(&h).map_err(io)?;
                written += h.len() as u64;
            }
            let bytes = le_bytes(&band);
            w.write_all(&bytes).map_err(io)?;
            written += bytes.len() as u64;
            Ok(())
        })?;
        w.flush().map_err(io)?;
        Ok(written)
    }

    /// Every result of `task`, streamed and assembled here.
    pub(super) fn fetch_streamed(&mut self, task: TaskId) -> ApiResult<Vec<ArrayData>> {
        let mut out = Vec::new();
        let mut output = 0;
        loop {
            let mut bands = Vec::new();
            let (_, outputs) = self.fetch_bands(task, output, |_, _, band| {
                bands.push(band);
                Ok(())
            })?;
            out.push(concat_rows(bands)?);
            output += 1;
            if output >= outputs {
                return Ok(out);
            }
        }
    }
}

/// Bands stacked along the first axis.
fn concat_rows(mut bands: Vec<ArrayData>) -> ApiResult<ArrayData> {
    if bands.len() == 1 {
        return Ok(bands.remove(0));
    }
    join_rows(&bands).map_err(|e| ApiError::Unexpected(format!("bands do not stack: {e}")))
}
