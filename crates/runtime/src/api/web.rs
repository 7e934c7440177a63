//! [`TaskApi`] over the WebTaskAPI (HTTP/JSON), with ureq.

use super::{ApiError, ApiResult, TaskApi};
use crate::protocol::TaskInfo;
use ares_core::array::ArrayData;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a request may wait for the next byte (to read or to write) before it fails.
const IDLE: Duration = Duration::from_secs(120);

/// The session `ares run --supervisor http://...` submits to.
pub const DEFAULT_SESSION_FOR_RUN: &str = "default";

pub struct WebTaskApi {
    base: String,
    pub(super) session: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl WebTaskApi {
    /// Connects to `http://HOST:PORT` or `https://HOST:PORT` (trusting what
    /// [`super::tls`] describes), creating `session` if needed; retries until `wait`.
    pub fn connect(
        base: &str,
        session: &str,
        token: Option<String>,
        wait: Duration,
    ) -> ApiResult<Self> {
        Self::connect_with_ca(base, session, token, None, wait)
    }

    /// [`WebTaskApi::connect`], trusting the certificates of the PEM file `ca_file` too (the
    /// supervisor's self-signed certificate or its CA); refused for an `http://` address.
    pub fn connect_with_ca(
        base: &str,
        session: &str,
        token: Option<String>,
        ca_file: Option<&Path>,
        wait: Duration,
    ) -> ApiResult<Self> {
        // Every read and write has a deadline (a server that accepts and then goes silent,
        // mid-handshake or mid-answer, is an error after IDLE); a long wait's request gets
        // its own (see `wait_task`).
        let mut agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .timeout_read(IDLE)
            .timeout_write(IDLE);
        if base.starts_with("https://") {
            agent = agent.tls_config(super::tls::client_config(ca_file)?);
        } else if let Some(path) = ca_file {
            return Err(ApiError::Refused(format!(
                "a CA file ({}) is for an https:// supervisor, not {base}",
                path.display()
            )));
        }
        let agent = agent.build();
        let api = Self {
            base: base.trim_end_matches('/').to_string(),
            session: session.to_string(),
            token,
            agent,
        };
        let deadline = Instant::now() + wait;
        loop {
            match api.call("PUT", &format!("/api/session/{session}"), None) {
                Ok(_) => return Ok(api),
                Err(ApiError::Connect { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) fn request(&self, method: &str, path: &str) -> ureq::Request {
        let req = self.agent.request(method, &format!("{}{path}", self.base));
        match &self.token {
            Some(t) => req.set("Authorization", &format!("Bearer {t}")),
            None => req,
        }
    }

    pub(super) fn fail(&self, e: ureq::Error) -> ApiError {
        match e {
            ureq::Error::Status(status, resp) => {
                let body: Value = resp.into_json().unwrap_or(Value::Null);
                ApiError::Http {
                    status,
                    error: body["error"].as_str().unwrap_or("").to_string(),
                    detail: body["detail"].as_str().unwrap_or("").to_string(),
                }
            }
            ureq::Error::Transport(t) => match super::tls::classify(&self.base, &t) {
                Some(tls) => ApiError::Tls(tls),
                None => ApiError::Connect {
                    addr: self.base.clone(),
                    source: std::io::Error::other(t.to_string()),
                },
            },
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> ApiResult<Value> {
        self.call_within(method, path, body, None)
    }

    /// [`Self::call`] with a deadline for the whole request instead of [`IDLE`] per byte.
    fn call_within(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        deadline: Option<Duration>,
    ) -> ApiResult<Value> {
        let mut req = self.request(method, path);
        if let Some(d) = deadline {
            req = req.timeout(d);
        }
        let resp = match body {
            Some(b) => req.send_json(b),
            None => req.call(),
        }
        .map_err(|e| self.fail(e))?;
        resp.into_json()
            .map_err(|e| ApiError::Unexpected(e.to_string()))
    }

    fn task_path(&self, task: TaskId) -> String {
        format!("/api/session/{}/task/{}", self.session, task.0)
    }

    fn info(v: Value) -> ApiResult<TaskInfo> {
        serde_json::from_value(v).map_err(|e| ApiError::Unexpected(e.to_string()))
    }

    /// Submits a program in the expression language.
    pub fn submit_expr(&mut self, expr: &str, fuse_enabled: Option<bool>) -> ApiResult<TaskId> {
        let v = self.call(
            "POST",
            &format!("/api/session/{}/task", self.session),
            Some(json!({"expr": expr, "fuse_enabled": fuse_enabled})),
        )?;
        v["task_id"]
            .as_u64()
            .map(|t| TaskId(t as u32))
            .ok_or_else(|| ApiError::Unexpected(v.to_string()))
    }
}

impl TaskApi for WebTaskApi {
    fn submit_with_config(
        &mut self,
        graph: &TileableGraph,
        fuse_enabled: Option<bool>,
        extra_config: Option<crate::config::TaskConfig>,
    ) -> ApiResult<TaskId> {
        let mut body = json!({"graph": graph, "fuse_enabled": fuse_enabled});
        if let Some(c) = extra_config {
            body["extra_config"] =
                serde_json::to_value(c).map_err(|e| ApiError::Unexpected(e.to_string()))?;
        }
        let v = self.call(
            "POST",
            &format!("/api/session/{}/task", self.session),
            Some(body),
        )?;
        v["task_id"]
            .as_u64()
            .map(|t| TaskId(t as u32))
            .ok_or_else(|| ApiError::Unexpected(v.to_string()))
    }

    fn wait_task(&mut self, task: TaskId, timeout: Duration) -> ApiResult<TaskInfo> {
        Self::info(self.call_within(
            "GET",
            &format!(
                "{}?action=wait&timeout={}",
                self.task_path(task),
                timeout.as_secs_f64()
            ),
            None,
            Some(timeout + IDLE),
        )?)
    }

    fn get_task_result(&mut self, task: TaskId) -> ApiResult<TaskInfo> {
        Self::info(self.call("GET", &self.task_path(task), None)?)
    }

    fn cancel_task(&mut self, task: TaskId) -> ApiResult<TaskInfo> {
        Self::info(self.call("DELETE", &self.task_path(task), None)?)
    }

    /// Streamed as `.npy` (the supervisor passes it on band by band); output 0.
    /// The first result (see [`WebTaskApi::fetch_output`] for the others).
    fn fetch(&mut self, task: TaskId) -> ApiResult<Vec<ArrayData>> {
        Ok(vec![self.fetch_output(task, 0)?])
    }

    fn fetch_outputs(&mut self, task: TaskId, outputs: usize) -> ApiResult<Vec<ArrayData>> {
        (0..outputs as u32)
            .map(|i| self.fetch_output(task, i))
            .collect()
    }

    fn explain(&mut self, graph: &TileableGraph, limit: usize) -> ApiResult<String> {
        let v = self.call(
            "POST",
            &format!("/api/session/{}/explain", self.session),
            Some(json!({"graph": graph, "limit": limit})),
        )?;
        v["text"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ApiError::Unexpected(v.to_string()))
    }
}

impl WebTaskApi {
    /// Result `index` of a task of several outputs, streamed as `.npy`.
    pub fn fetch_output(&mut self, task: TaskId, index: u32) -> ApiResult<ArrayData> {
        let path = format!("{}/result?format=npy&index={index}", self.task_path(task));
        let resp = self
            .request("GET", &path)
            .call()
            .map_err(|e| self.fail(e))?;
        read_npy(resp.into_reader()).map_err(|e| ApiError::Unexpected(format!("GET {path}: {e}")))
    }
}

/// An `.npy` stream of one of ares' dtypes (the server writes little-endian, C order) into an
/// array.
fn read_npy(r: impl std::io::Read) -> std::io::Result<ArrayData> {
    let f = npyz::NpyFile::new(r)?;
    let shape: Vec<usize> = f.shape().iter().map(|d| *d as usize).collect();
    let descr = match f.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => other.descr(),
    };
    fn array<T: npyz::Deserialize>(
        f: npyz::NpyFile<impl std::io::Read>,
        shape: &[usize],
    ) -> std::io::Result<ndarray::ArrayD<T>> {
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), f.into_vec()?)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
    Ok(match descr.as_str() {
        "<f8" => ArrayData::F64(array(f, &shape)?),
        "<f4" => ArrayData::F32(array(f, &shape)?),
        "<i8" => ArrayData::I64(array(f, &shape)?),
        "<i4" => ArrayData::I32(array(f, &shape)?),
        "<i2" => ArrayData::I16(array(f, &shape)?),
        "|i1" => ArrayData::I8(array(f, &shape)?),
        "<u8" => ArrayData::U64(array(f, &shape)?),
        "<u4" => ArrayData::U32(array(f, &shape)?),
        "<u2" => ArrayData::U16(array(f, &shape)?),
        "|u1" => ArrayData::U8(array(f, &shape)?),
        "|b1" => ArrayData::Bool(array(f, &shape)?),
        "<c8" => ArrayData::C64(array(f, &shape)?),
        "<c16" => ArrayData::C128(array(f, &shape)?),
        other => return Err(std::io::Error::other(format!("unexpected dtype {other}"))),
    })
}

// Tensor uploads and downloads (branch io).
impl WebTaskApi {
    /// Uploads an `.npy` stream as tensor `name` of this session (usable in later `expr`s),
    /// chunked by `chunk` (`"64"`, `"64,800"`; `None`: whole rows of about 2^20 elements);
    /// returns the server's answer `{name, task_id, shape, dtype, bytes}`.
    pub fn put_tensor(
        &self,
        name: &str,
        chunk: Option<&str>,
        npy: impl std::io::Read,
    ) -> ApiResult<Value> {
        let query = chunk.map_or(String::new(), |c| format!("?chunk={c}"));
        let path = format!("/api/session/{}/tensor/{name}{query}", self.session);
        let resp = self
            .request("PUT", &path)
            .set("Content-Type", "application/octet-stream")
            .send(npy)
            .map_err(|e| self.fail(e))?;
        resp.into_json()
            .map_err(|e| ApiError::Unexpected(format!("answer to PUT {path}: {e}")))
    }

    /// Downloads tensor or named result `name` of this session as `.npy` into `out`, as it
    /// streams in; returns the bytes written.
    pub fn get_tensor_npy(&self, name: &str, mut out: impl std::io::Write) -> ApiResult<u64> {
        let path = format!("/api/session/{}/tensor/{name}?format=npy", self.session);
        let resp = self
            .request("GET", &path)
            .call()
            .map_err(|e| self.fail(e))?;
        let want: Option<u64> = resp.header("Content-Length").and_then(|l| l.parse().ok());
        let n = std::io::copy(&mut resp.into_reader(), &mut out)
            .map_err(|e| ApiError::Unexpected(format!("GET {path}: {e}")))?;
        match want {
            Some(w) if w != n => Err(ApiError::Unexpected(format!(
                "GET {path}: {n} of {w} bytes arrived"
            ))),
            _ => Ok(n),
        }
    }
}
