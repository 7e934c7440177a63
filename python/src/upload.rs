//! `from_numpy` against a remote cluster: the array's bytes uploaded to the supervisor.
//!
//! Without a directory shared with the workers (`ar.connect(..., upload_dir=)`), a NumPy array
//! reaches a remote cluster as an upload: an `.npy` stream (the header Python made, then the
//! array's own buffer, read in place with the GIL released) sent over the engine's protocol
//! (`NativeClient::upload_npy`, `WebTaskApi::upload_npy`). The supervisor spools it and its
//! workers load their chunks; the answer names the task holding the data, which an
//! `Op::Fetch` tensor reads in later graphs. [`Uploads`] remembers every upload an engine
//! made so `close` frees those still held; Python frees each one as soon as the last tensor
//! reading it is gone (`Engine.free_upload`).

use crate::client::Client;
use crate::errors::api_error;
use ares::api::ApiError;
use ares::protocol::UploadedTensor;
use ares_core::ids::TaskId;
use ares_core::ops::{ChunkSpec, Op};
use ares_core::tensor::Tensor;
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyConnectionError, PyValueError};
use pyo3::prelude::*;
use std::collections::BTreeSet;
use std::io::Read;
use std::sync::Mutex;

/// The array's bytes: the `.npy` header, then the bytes of a C-contiguous array (a flat
/// `uint8` view of it, so nothing is copied).
pub struct NpyBytes<'py> {
    pub header: Vec<u8>,
    pub data: PyReadonlyArray1<'py, u8>,
}

impl<'py> NpyBytes<'py> {
    pub fn new(header: Vec<u8>, data: PyReadonlyArray1<'py, u8>) -> PyResult<Self> {
        if !data.is_c_contiguous() {
            return Err(PyValueError::new_err(
                "from_numpy uploads a C-contiguous buffer",
            ));
        }
        Ok(Self { header, data })
    }

    /// The bytes' address and length, to read them once the GIL is released.
    pub fn raw(&self) -> (usize, usize) {
        let slice = self.data.as_slice().unwrap_or(&[]);
        (slice.as_ptr() as usize, slice.len())
    }
}

/// The uploads an engine made and the results it persisted, not freed yet (the tasks holding
/// them).
#[derive(Default)]
pub struct Uploads {
    held: Mutex<BTreeSet<u32>>,
}

impl Uploads {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u32>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers `task` as holding data for this engine (a persisted result).
    pub fn hold(&self, task: u32) {
        self.lock().insert(task);
    }

    pub fn held(&self) -> Vec<u32> {
        self.lock().iter().copied().collect()
    }

    /// Uploads `npy` over `client` (locked with the GIL released) as tensor `name`; the
    /// tensor reading it and the task holding it.
    pub fn send(
        &self,
        py: Python<'_>,
        client: &Mutex<Option<Client>>,
        address: &str,
        npy: NpyBytes<'_>,
        name: &str,
        chunk: Option<ChunkSpec>,
    ) -> PyResult<(Tensor, u32)> {
        let (header, raw) = (&npy.header, npy.raw());
        let uploaded = py
            .detach(|| {
                let mut guard = client.lock().unwrap_or_else(|p| p.into_inner());
                let c = guard
                    .as_mut()
                    .ok_or_else(|| ApiError::Refused("this engine is closed".into()))?;
                // SAFETY: `npy` holds the array's borrow until this returns.
                unsafe { upload(c, name, chunk, header, raw) }
            })
            .map_err(|e| upload_error(address, e))?;
        drop(npy);
        self.lock().insert(uploaded.task.0);
        let tensor = Tensor::new(Op::Fetch, uploaded.fetch.clone(), vec![])
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((tensor, uploaded.task.0))
    }

    /// Frees upload `task` if this engine still holds it: cancels its task. A closed engine
    /// or a lost connection has nothing to free (the native protocol's uploads go with their
    /// connection; a lost cluster holds nothing).
    pub fn free(&self, py: Python<'_>, client: &Mutex<Option<Client>>, task: u32) -> PyResult<()> {
        if !self.lock().remove(&task) {
            return Ok(());
        }
        py.detach(|| {
            let mut guard = client.lock().unwrap_or_else(|p| p.into_inner());
            match guard.as_mut().map(|c| c.api().cancel_task(TaskId(task))) {
                Some(Err(ApiError::Connect { .. } | ApiError::Codec(_))) | None => Ok(()),
                Some(r) => r.map(|_| ()),
            }
        })
        .map_err(api_error)
    }

    /// Frees every upload still held, best effort (on `close`).
    pub fn free_all(&self, py: Python<'_>, client: &Mutex<Option<Client>>) {
        for task in self.held() {
            let _ = self.free(py, client, task);
        }
    }
}

/// Uploads `header` + the `len` bytes at `ptr` as tensor `name`.
///
/// # Safety
/// `ptr..ptr+len` must stay a live, readable buffer for the whole call (the caller holds the
/// read-only borrow of the array, which keeps it alive and its memory in place).
unsafe fn upload(
    client: &mut Client,
    name: &str,
    chunk: Option<ChunkSpec>,
    header: &[u8],
    (ptr, len): (usize, usize),
) -> Result<UploadedTensor, ApiError> {
    // SAFETY: the caller's guarantee above.
    let data = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
    let total = (header.len() + len) as u64;
    let npy = header.chain(data);
    match client {
        Client::Native(c) => c.upload_npy(Some(name), chunk, total, npy),
        Client::Web(c) => c.upload_npy(name, chunk.as_ref(), total, npy),
    }
}

/// An upload's failure as the Python exception that names it: `ValueError` when the
/// cluster refuses the array (too large, not loadable), `ConnectionError` when the
/// connection is lost, `TaskError` otherwise.
pub fn upload_error(address: &str, e: ApiError) -> PyErr {
    let text = format!("uploading the array to {address}: {e}");
    match e {
        ApiError::Connect { .. } | ApiError::Codec(_) => PyConnectionError::new_err(format!(
            "uploading the array to {address}: connection lost: {e}"
        )),
        ApiError::Upload(_) => PyValueError::new_err(text),
        ApiError::Http { status, .. } if (400..500).contains(&status) => {
            PyValueError::new_err(text)
        }
        _ => crate::errors::TaskError::new_err(text),
    }
}
