//! The client behind an engine: the native protocol or the web API, each through
//! `ares::api`'s `TaskApi`, plus what the trait cannot say (the web API fetches one output of a
//! task per request).

use ares::api::{ApiError, NativeClient, TaskApi, WebTaskApi};
use ares_core::array::ArrayData;
use ares_core::ids::TaskId;

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
}
