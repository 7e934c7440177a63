//! The client behind an engine: the native protocol or the web API, each through
//! `ares::api`'s `TaskApi`, plus what the trait cannot say (the web API fetches one output of a
//! task per request).

use ares::api::{ApiError, NativeClient, TaskApi, WebTaskApi};
use ares::array::ArrayData;
use ares::ids::TaskId;
use ares::protocol::TaskStatus;
use ares::tensor::Tensor;
use std::time::Duration;

/// The client of an engine: the native protocol fetches every output of a task at once, the
/// web API one output per request.
pub enum Client {
    Native(NativeClient),
    Web(WebTaskApi),
}

impl Client {
    pub fn api(&mut self) -> &mut dyn TaskApi {
        match self {
            Client::Native(c) => c,
            Client::Web(c) => c,
        }
    }

    /// The `outputs` results of `task`.
    pub fn fetch_all(&mut self, task: TaskId, outputs: usize) -> Result<Vec<ArrayData>, ApiError> {
        match self {
            Client::Native(c) => c.fetch(task),
            Client::Web(c) => (0..outputs as u32)
                .map(|i| c.fetch_output(task, i))
                .collect(),
        }
    }

    /// Submits `tensor`, waits for it, fetches its value and frees it on the workers: what
    /// `Session::execute` does, with no Python between the calls.
    pub fn compute(&mut self, tensor: &Tensor) -> Result<ArrayData, ApiError> {
        let task = self
            .api()
            .submit_tileable_graph(&Tensor::graph(&[tensor]), None)?;
        let info = loop {
            let info = self.api().wait_task(task, Duration::from_millis(100))?;
            if info.status.is_terminal() {
                break info;
            }
        };
        if info.status != TaskStatus::Succeeded {
            return Err(ApiError::Task(info.error.unwrap_or_default()));
        }
        let result = self.fetch_all(task, 1);
        self.api().cancel_task(task)?;
        (result?.into_iter().next()).ok_or_else(|| ApiError::Task(format!("{task} has no result")))
    }
}
