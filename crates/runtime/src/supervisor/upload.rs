//! Tensor uploads into the workers, shared by the web route (`PUT .../tensor/{name}`) and the
//! native protocol (`UploadBegin`, `UploadPiece`, `UploadEnd`).
//!
//! An upload is an `.npy` stream. It is written as it arrives to a spool file in the
//! supervisor's own spool directory ([`SpoolDir`]), so the supervisor never holds the array;
//! then a task reads it into the workers, each its own chunks. From then on the data lives on
//! the workers as the result of that task: an `Op::Fetch` with the task's
//! [`UploadedTensor::fetch`] arguments reads it in later graphs, a name binds it in its
//! session. The client needs no shared directory, and the cluster needs no `data.roots`.
//!
//! **The spool file lives as long as the upload.** The load task's lineage is
//! `from_spool(file)`: when a worker holding chunks of the upload dies, the supervisor
//! recomputes them from that lineage on a live worker, which reads the spool file again. So
//! the file is handed to the load task's processor with the submission
//! (`SubmitTask::spool`) and removed when the upload is freed: the task cancelled or
//! released by the client, its session deleted, the native connection that made it closed,
//! or the task evicted (`task.keep_finished`), or the load failed. Freed any earlier, a
//! worker's death would lose the client's data while live workers remain. An upload whose
//! load is abandoned before the client hears its task id (the native connection closed, or
//! the HTTP request's handler was dropped) is freed at once ([`Unclaimed`]): no one could
//! free it later.
//!
//! **Who may make a worker read the spool.** The spool directory lies outside the data roots
//! (by default in the system's temp dir), so the load task cannot be a client's
//! `from_npy(path)`: the supervisor builds it itself with the internal source form
//! `Format::Spool` ([`ares_core::tensor::from_spool`]), submitted as `Origin::Supervisor`. Every
//! graph a client submits or asks to explain, over the native protocol or HTTP, is refused
//! if it holds that form ([`super::admission::client_graph`]), so no client can name a path a
//! worker reads outside its roots; a worker gets graphs only from its authenticated
//! supervisor, and reads that form only as a spool file (`ares::io::roots::resolve_spool`:
//! a canonical `.npy` directly inside an `ares-supervisor-*` directory). A worker that cannot
//! open the file (another host without a shared filesystem, another user) fails the upload
//! with an error naming the fix: a data root shared by the supervisor and the workers (the
//! spool directory is then made under its `.ares-uploads/`).
//!
//! **The spool directory** is fresh for each supervisor: `ares-supervisor-<pid>-<random>`,
//! created with mode 0700 by a `mkdir` that fails if the name exists (never adopted), under
//! `data.upload_spool`, else the first data root's `.ares-uploads/`, else the system's temp
//! dir. The supervisor holds a lock on its `.lock` file while it runs and removes the
//! directory when it stops; at start it sweeps the directories of supervisors that died
//! without removing theirs (same owner, lock free).
//!
//! Limits: `limits.max_upload_bytes` caps one upload (checked against the declared size
//! before anything is spooled, and against the bytes as they arrive),
//! `limits.max_spool_bytes` caps the spool files of every upload held together, being
//! spooled or loaded and not freed (reserved from the declared size, or as bytes arrive, and
//! handed back when the file is removed), so it bounds the supervisor's disk, not only its
//! uploads in flight; a native upload that gets no piece for
//! `limits.upload_idle_timeout_ms` is dropped, and the load into the workers must end within
//! [`LOAD_TIMEOUT`].

use super::messages::{GetFetchArgs, WaitDone};
use super::service::{Service, ServiceError};
use super::task_processor::result_error::ResultError;
use crate::config::DataConfig;
use crate::protocol::{TaskStatus, UploadedTensor};
use ares_core::array::DType;
use ares_core::ids::TaskId;
use ares_core::io::roots::SPOOL_DIR_PREFIX;
use ares_core::ops::{ChunkSpec, OpArgs};
use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest an upload's load into the workers may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// Longest a failed load waits for its task to be freed before it answers.
const FREE_WAIT: Duration = Duration::from_secs(10);

/// Why an upload failed; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the supervisor has no upload spool directory ({0}): set data.upload_spool in its config to a writable directory")]
    NoSpool(String),
    #[error("the upload is {bytes} bytes, over limits.max_upload_bytes ({limit} bytes)")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("the supervisor holds {used} bytes of other uploads' spool files (kept until each upload is freed, so a worker's death loses none): {bytes} more would pass limits.max_spool_bytes ({limit} bytes); free uploads no longer needed (cancel their tasks) or raise limits.max_spool_bytes")]
    SpoolFull { bytes: u64, used: u64, limit: u64 },
    #[error("spooling the upload: {0}")]
    Spool(String),
    #[error("the upload ({bytes} bytes) is not a usable .npy: {why}")]
    BadNpy { bytes: u64, why: String },
    #[error("loading the upload into the workers: {status:?}: {error}")]
    Load { status: TaskStatus, error: String },
}

/// The supervisor's private spool directory and the bytes spooled in it (see the module doc).
pub struct SpoolDir {
    /// The directory and its held lock file, or why it could not be made (uploads then fail
    /// with that).
    dir: Result<(PathBuf, File), String>,
    limit: u64,
    used: AtomicU64,
    next: AtomicU64,
    removed: Mutex<bool>,
}

/// Where spool directories are made: `data.upload_spool`, else the first data root's
/// `.ares-uploads/`, else the system's temp dir.
fn spool_base(data: &DataConfig) -> std::io::Result<PathBuf> {
    if let Some(dir) = &data.upload_spool {
        return dir.canonicalize();
    }
    match data.roots.first() {
        Some(root) => {
            let dir = root.canonicalize()?.join(".ares-uploads");
            std::fs::create_dir_all(&dir)?;
            Ok(dir)
        }
        None => std::env::temp_dir().canonicalize(),
    }
}

/// A fresh `ares-supervisor-<pid>-<random>` under `base`, mode 0700, locked; a name that
/// exists is never adopted (another is drawn).
fn make_spool_dir(base: &Path) -> std::io::Result<(PathBuf, File)> {
    let mut tries = 0;
    loop {
        let name = format!(
            "{SPOOL_DIR_PREFIX}{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        );
        let dir = base.join(name);
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                let lock = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(dir.join(".lock"))?;
                lock.try_lock().map_err(std::io::Error::other)?;
                return Ok((dir, lock));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Removes the spool directories under `base` that their supervisor left behind: owned by
/// `uid`, with a lock file nobody holds (its process is gone). A directory whose lock cannot
/// be tried is left alone.
fn sweep(base: &Path, uid: u32, mine: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut swept = 0;
    for e in entries.flatten() {
        let path = e.path();
        let ours = e
            .file_name()
            .to_string_lossy()
            .starts_with(SPOOL_DIR_PREFIX)
            && path != mine
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if !ours {
            continue;
        }
        let Ok(lock) = OpenOptions::new().write(true).open(path.join(".lock")) else {
            continue;
        };
        if lock.try_lock().is_ok() && std::fs::remove_dir_all(&path).is_ok() {
            tracing::info!(dir = %path.display(), "removed a dead supervisor's upload spool");
            swept += 1;
        }
    }
    swept
}

impl SpoolDir {
    /// Makes this supervisor's spool directory (see the module doc) after sweeping dead
    /// supervisors' ones; at most `limit` bytes spooled at once. A directory that cannot be
    /// made does not stop the supervisor: uploads then fail saying why.
    pub fn open(data: &DataConfig, limit: u64) -> Arc<SpoolDir> {
        let dir = spool_base(data)
            .and_then(|base| {
                let (dir, lock) = make_spool_dir(&base)?;
                let uid = std::fs::metadata(&dir)?.uid();
                sweep(&base, uid, &dir);
                Ok((dir, lock))
            })
            .map_err(|e| e.to_string());
        match &dir {
            Ok((d, _)) => tracing::info!(dir = %d.display(), "upload spool"),
            Err(e) => tracing::warn!("no upload spool directory: {e}"),
        }
        Arc::new(SpoolDir {
            dir,
            limit,
            used: AtomicU64::new(0),
            next: AtomicU64::new(0),
            removed: Mutex::new(false),
        })
    }

    /// The directory, if it was made.
    pub fn path(&self) -> Option<&Path> {
        self.dir.as_ref().ok().map(|(d, _)| d.as_path())
    }

    /// A new spool file named after `tag` (a session and a name), opened for writing, with
    /// `reserve` bytes of `limits.max_spool_bytes` held for it.
    pub fn file(self: &Arc<Self>, tag: &str, reserve: u64) -> Result<(Spool, File), UploadError> {
        let dir = match &self.dir {
            Ok((d, _)) => d,
            Err(why) => return Err(UploadError::NoSpool(why.clone())),
        };
        let mut spool = Spool {
            path: None,
            dir: self.clone(),
            reserved: 0,
        };
        spool.reserve(reserve)?;
        let tag: String = tag
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .take(96)
            .collect();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{n}-{tag}.npy"));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| UploadError::Spool(format!("{}: {e}", path.display())))?;
        spool.path = Some(path);
        Ok((spool, file))
    }

    /// Removes the directory and everything in it (the supervisor stops); later uploads fail.
    pub fn remove(&self) {
        let mut removed = self.removed.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(dir), false) = (self.path(), *removed) {
            let _ = std::fs::remove_dir_all(dir);
            *removed = true;
        }
    }
}

impl Drop for SpoolDir {
    fn drop(&mut self) {
        self.remove();
    }
}

/// An upload's spool file: removed, and its bytes handed back to `limits.max_spool_bytes`,
/// when this is dropped: by the upload if it ends before its load task is submitted, else by
/// the load task's processor when the upload is freed (see the module doc).
pub struct Spool {
    path: Option<PathBuf>,
    dir: Arc<SpoolDir>,
    reserved: u64,
}

impl Spool {
    /// Holds `total` bytes of `limits.max_spool_bytes` for this file (more than it holds so
    /// far), or refuses.
    pub fn reserve(&mut self, total: u64) -> Result<(), UploadError> {
        let more = total.saturating_sub(self.reserved);
        if more == 0 {
            return Ok(());
        }
        let (limit, used) = (self.dir.limit, &self.dir.used);
        used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
            u.checked_add(more).filter(|n| *n <= limit)
        })
        .map_err(|u| UploadError::SpoolFull {
            bytes: more,
            used: u,
            limit,
        })?;
        self.reserved = total;
        Ok(())
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
        self.dir.used.fetch_sub(self.reserved, Ordering::AcqRel);
    }
}

/// A loaded upload: the tensor, with its shape and dtype.
pub struct Loaded {
    pub tensor: UploadedTensor,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// A submitted load task no client has been told of yet: freed when dropped armed (the
/// request or connection waiting for it went away, or the load failed), so its spool file
/// and data do not outlive every holder of its id.
struct Unclaimed {
    service: Service,
    session: String,
    task: Option<TaskId>,
}

impl Unclaimed {
    /// The client is told of the task: it frees it from now on.
    fn claim(mut self) {
        self.task = None;
    }

    /// Frees the task now and waits until it is (its spool file removed), at most
    /// [`FREE_WAIT`], so the client that hears of the failure finds nothing left of the
    /// upload (past the deadline the cancel is still queued, and runs).
    async fn free(mut self) {
        if let Some(task) = self.task.take() {
            let cancel = self.service.cancel(Some(&self.session), task);
            let _ = tokio::time::timeout(FREE_WAIT, cancel).await;
        }
    }
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            tracing::info!(%task, "upload abandoned or failed: freeing its load task");
            // As a cancel: the name goes, the task is cancelled, its spool file removed.
            self.service.free(Some(&self.session), task);
        }
    }
}

/// Has the workers load the spooled `.npy` (`received` bytes) as tensor `name` of
/// `session`, chunked by `chunk`. The spool file goes with the load task: kept while the
/// upload is held, removed on failure, or at once if this future is dropped (the client
/// went away) before it answers.
pub(super) async fn load(
    service: &Service,
    session: &str,
    name: Option<String>,
    spool: Spool,
    chunk: Option<ChunkSpec>,
    received: u64,
) -> Result<Loaded, ServiceError> {
    let path = spool
        .path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let path = path.ok_or_else(|| UploadError::Spool("no spool file".into()))?;
    // The internal form only the supervisor may build (see the module doc).
    let t = tokio::task::spawn_blocking(move || ares_core::tensor::from_spool(&path, chunk))
        .await
        .map_err(|e| UploadError::Spool(e.to_string()))?
        .map_err(|e| UploadError::BadNpy {
            bytes: received,
            why: e.to_string(),
        })?;
    let (shape, dtype) = (t.shape().to_vec(), t.dtype());
    let graph = ares_core::tensor::Tensor::graph(&[&t]);
    let task = service
        .submit_load(session, graph, name.clone(), spool)
        .await?;
    let unclaimed = Unclaimed {
        service: service.clone(),
        session: session.to_string(),
        task: Some(task),
    };
    let p = service.find(Some(session), task).await?;
    let info = p.send(WaitDone(LOAD_TIMEOUT)).await?;
    if info.status != TaskStatus::Succeeded {
        // Failed, or still running after the deadline: free it, what it loaded, and its
        // spool file.
        unclaimed.free().await;
        return Err(UploadError::Load {
            status: info.status,
            error: info
                .error
                .unwrap_or_else(|| format!("not done after {} s", LOAD_TIMEOUT.as_secs())),
        }
        .into());
    }
    let fetch: OpArgs = p
        .send(GetFetchArgs::FIRST)
        .await?
        .ok_or(ServiceError::NoResult(ResultError::NoneHeld(task)))?;
    unclaimed.claim();
    Ok(Loaded {
        tensor: UploadedTensor { task, name, fetch },
        shape,
        dtype,
    })
}
