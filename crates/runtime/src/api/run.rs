//! The one client loop: submit a graph, wait for it in slices, fetch its results, free them
//! on the workers. `ares run`, [`super::Session::execute`] and the Python engine each had
//! their own copy of it, and they had drifted (which one cancelled a failed task, which one
//! freed the results after a failed fetch, what a failure said). Each now says only how it
//! reaches the cluster and what it does between two waits ([`Drive`]): the CLI draws its
//! progress bar, Python checks for Ctrl-C and calls its progress callback.

use super::{ApiError, ApiResult, TaskApi};
use crate::protocol::{TaskInfo, TaskStatus};
use ares_core::array::ArrayData;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use std::time::{Duration, Instant};

/// How a run reaches the cluster, and what happens between its waits.
pub trait Drive {
    type Error: From<ApiError>;

    /// Makes one client call (Python makes it with the GIL released).
    fn call<T: Send>(
        &mut self,
        call: impl FnOnce(&mut dyn TaskApi) -> ApiResult<T> + Send,
    ) -> Result<T, Self::Error>;

    /// The task was submitted.
    fn submitted(&mut self, _task: TaskId) {}

    /// After each wait that found the task still running: an error cancels the task and
    /// ends the run with it.
    fn waited(&mut self, _info: &TaskInfo) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A run with nothing to do between waits.
impl Drive for &mut dyn TaskApi {
    type Error = ApiError;

    fn call<T: Send>(
        &mut self,
        call: impl FnOnce(&mut dyn TaskApi) -> ApiResult<T> + Send,
    ) -> ApiResult<T> {
        call(&mut **self)
    }
}

/// What a run gives back.
pub struct Ran {
    pub task: TaskId,
    /// The task's final state (succeeded).
    pub info: TaskInfo,
    /// One array per output of the graph.
    pub results: Vec<ArrayData>,
    /// From the submission to the end of the task.
    pub executed: Duration,
    /// The fetch of the results (not their freeing).
    pub fetched: Duration,
}

/// Runs `graph` (of `outputs` outputs): submits it (`fuse_enabled` overrides the
/// supervisor's fusion switch), waits in calls of at most `poll`, fetches every output and
/// frees them on the workers, whether the fetch worked or not. A task that fails is
/// cancelled (what it computed is freed) and its error returned.
pub fn run<D: Drive>(
    drive: &mut D,
    graph: &TileableGraph,
    fuse_enabled: Option<bool>,
    outputs: usize,
    poll: Duration,
) -> Result<Ran, D::Error> {
    let start = Instant::now();
    let (task, info) = run_to_end(drive, graph, fuse_enabled, poll)?;
    let executed = start.elapsed();
    let (results, fetched) = drive.call(|api| {
        let start = Instant::now();
        let results = api.fetch_outputs(task, outputs);
        let fetched = start.elapsed();
        let freed = api.cancel_task(task);
        Ok((results?, fetched)).and_then(|r| freed.map(|_| r))
    })?;
    Ok(Ran {
        task,
        info,
        results,
        executed,
        fetched,
    })
}

/// Runs `graph` as [`run`] does but leaves its results on the workers (dask's `persist`):
/// the task that holds them, whose outputs later graphs read with `Op::Fetch`, and which
/// `cancel_task` frees. A task that fails is cancelled and its error returned.
pub fn persist<D: Drive>(
    drive: &mut D,
    graph: &TileableGraph,
    fuse_enabled: Option<bool>,
    poll: Duration,
) -> Result<TaskId, D::Error> {
    run_to_end(drive, graph, fuse_enabled, poll).map(|(task, _)| task)
}

/// Submits `graph` and waits for its task to succeed; a task that fails, or a hook error,
/// cancels it.
fn run_to_end<D: Drive>(
    drive: &mut D,
    graph: &TileableGraph,
    fuse_enabled: Option<bool>,
    poll: Duration,
) -> Result<(TaskId, TaskInfo), D::Error> {
    let task = drive.call(|api| api.submit_tileable_graph(graph, fuse_enabled))?;
    drive.submitted(task);
    let info = loop {
        let info = drive.call(|api| api.wait_task(task, poll))?;
        if info.status.is_terminal() {
            break info;
        }
        if let Err(e) = drive.waited(&info) {
            // Best effort: the run ends with the hook's error either way.
            let _ = drive.call(|api| api.cancel_task(task));
            return Err(e);
        }
    };
    match info.status {
        TaskStatus::Succeeded => Ok((task, info)),
        TaskStatus::Cancelled => Err(ApiError::Cancelled { task }.into()),
        status => {
            let _ = drive.call(|api| api.cancel_task(task));
            let error = info.error;
            Err(ApiError::TaskFailed {
                task,
                status,
                error,
            }
            .into())
        }
    }
}
