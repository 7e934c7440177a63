//! Tensor uploads into the workers, shared by the web route (`PUT .../tensor/{name}`) and the
//! native protocol (`UploadBegin`, `UploadPiece`, `UploadEnd`).
//!
//! An upload is an `.npy` stream. It is written as it arrives to a spool file under the
//! supervisor's first data root (`.ares-uploads/`), so the supervisor never holds the array;
//! then a `from_npy(spool)` task has the workers read their own chunks of it, and the spool
//! file is removed once they have, however the upload ends ([`Spool`]'s drop). From then on
//! the data lives on the workers as the result of that task: an `Op::Fetch` with the task's
//! [`UploadedTensor::fetch`] arguments reads it in later graphs, a name binds it in its
//! session, and cancelling the task frees it. The workers must therefore see the
//! supervisor's first data root (same machine or a shared volume); the client needs no
//! shared directory.
//!
//! Limits: `limits.max_upload_bytes` caps one upload (checked against the declared size
//! before anything is spooled, and against the bytes as they arrive), a native upload that
//! gets no piece for `limits.upload_idle_timeout_ms` is dropped, and the load into the
//! workers must end within [`LOAD_TIMEOUT`].

use super::messages::{FindTask, GetFetchArgs, SubmitError, SubmitTask, WaitDone};
use super::task_manager::TaskManager;
use crate::array::DType;
use crate::ops::{ChunkSpec, OpArgs};
use crate::protocol::{TaskStatus, UploadedTensor};
use actix::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// Longest an upload's load into the workers may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// Why an upload failed; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("uploads need a data root on the supervisor: set data.roots in its config")]
    NoRoot,
    #[error("the upload is {bytes} bytes, over limits.max_upload_bytes ({limit} bytes)")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("spooling the upload: {0}")]
    Spool(String),
    #[error("the upload ({bytes} bytes) is not a usable .npy: {why}")]
    BadNpy { bytes: u64, why: String },
    #[error("unknown session {0:?}")]
    UnknownSession(String),
    #[error("{0}")]
    Refused(String),
    #[error("loading the upload into the workers: {status:?}: {error}")]
    Load { status: TaskStatus, error: String },
    #[error("supervisor actor unavailable: {0}")]
    Mailbox(String),
}

fn mailbox(e: MailboxError) -> UploadError {
    UploadError::Mailbox(e.to_string())
}

/// An upload's spool file: removed when this is dropped, however the upload ends.
pub struct Spool(PathBuf);

impl Spool {
    /// A new spool file under the first data root, named after `tag` (a session and a name),
    /// opened for writing.
    pub fn create(tag: &str) -> Result<(Spool, std::fs::File), UploadError> {
        let roots = crate::io::roots::global();
        let root = roots.roots().first().ok_or(UploadError::NoRoot)?;
        let dir = root.join(".ares-uploads");
        std::fs::create_dir_all(&dir)
            .map_err(|e| UploadError::Spool(format!("{}: {e}", dir.display())))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let spool = Spool(dir.join(format!("{tag}-{nanos}.npy")));
        let file = std::fs::File::create(&spool.0)
            .map_err(|e| UploadError::Spool(format!("{}: {e}", spool.0.display())))?;
        Ok((spool, file))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A loaded upload: the tensor, with its shape and dtype.
pub struct Loaded {
    pub tensor: UploadedTensor,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// What an upload asks of the TaskManager: the submission of its load task and the task's
/// processor.
#[derive(Clone)]
pub struct Loader {
    submit: Recipient<SubmitTask>,
    find: Recipient<FindTask>,
}

impl Loader {
    pub fn new(manager: &Addr<TaskManager>) -> Self {
        Self {
            submit: manager.clone().recipient(),
            find: manager.clone().recipient(),
        }
    }

    /// Has the workers load the spooled `.npy` (`received` bytes) as tensor `name` of
    /// `session`, chunked by `chunk`; the spool file goes once they have, or on failure.
    pub async fn load(
        &self,
        session: String,
        name: Option<String>,
        spool: Spool,
        chunk: Option<ChunkSpec>,
        received: u64,
    ) -> Result<Loaded, UploadError> {
        let path = spool.0.to_string_lossy().into_owned();
        let t = tokio::task::spawn_blocking(move || crate::tensor::from_npy(&path, chunk))
            .await
            .map_err(|e| UploadError::Spool(e.to_string()))?
            .map_err(|e| UploadError::BadNpy {
                bytes: received,
                why: e.to_string(),
            })?;
        let (shape, dtype) = (t.shape().to_vec(), t.dtype());
        let submit = SubmitTask {
            session: session.clone(),
            graph: crate::tensor::Tensor::graph(&[&t]),
            config: None,
            fuse_enabled: None,
            name: name.clone(),
        };
        let task = match self.submit.send(submit).await.map_err(mailbox)? {
            Ok(task) => task,
            Err(SubmitError::UnknownSession(s)) => return Err(UploadError::UnknownSession(s)),
            Err(SubmitError::Refused(why)) => return Err(UploadError::Refused(why)),
        };
        let p = self
            .find
            .send(FindTask { session, task })
            .await
            .map_err(mailbox)?
            .ok_or_else(|| UploadError::Refused(format!("task {task} is gone")))?;
        let info = p.send(WaitDone(LOAD_TIMEOUT)).await.map_err(mailbox)?;
        if info.status != TaskStatus::Succeeded {
            // Still running after the deadline: stop it and free what it loaded.
            let _ = p.send(super::messages::Cancel).await;
            return Err(UploadError::Load {
                status: info.status,
                error: info
                    .error
                    .unwrap_or_else(|| format!("not done after {} s", LOAD_TIMEOUT.as_secs())),
            });
        }
        drop(spool);
        let fetch: OpArgs = p
            .send(GetFetchArgs)
            .await
            .map_err(mailbox)?
            .ok_or_else(|| UploadError::Refused(format!("task {task} holds no result")))?;
        Ok(Loaded {
            tensor: UploadedTensor { task, name, fetch },
            shape,
            dtype,
        })
    }
}
