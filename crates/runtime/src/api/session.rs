//! `Session::execute(&tensor)`: the one-call way to compute a tensor on a cluster.

use super::{ApiError, ApiResult, TaskApi};
use ares_core::array::ArrayData;
use ares_core::tensor::Tensor;
use ndarray::ArrayD;
use std::time::Duration;

/// A client session on a cluster, over any [`TaskApi`].
pub struct Session {
    api: Box<dyn TaskApi>,
    /// How long one wait call may block before it is repeated.
    pub poll: Duration,
}

impl Session {
    pub fn new(api: Box<dyn TaskApi>) -> Self {
        Self {
            api,
            poll: Duration::from_secs(10),
        }
    }

    /// Connects to `HOST:PORT` (native protocol) or `http://HOST:PORT` (web API).
    pub fn connect(addr: &str) -> ApiResult<Self> {
        Ok(Self::new(super::connect(addr, Duration::from_secs(10))?))
    }

    /// Computes `tensor` and returns it; its data on the workers is freed afterwards.
    pub fn execute(&mut self, tensor: &Tensor) -> ApiResult<ArrayData> {
        execute_on(self.api.as_mut(), tensor, self.poll)
    }

    /// [`Session::execute`] as float64.
    pub fn execute_f64(&mut self, tensor: &Tensor) -> ApiResult<ArrayD<f64>> {
        Ok(self.execute(tensor)?.to_f64())
    }
}

/// [`Session::execute`] on any client: submits `tensor`, waits for it in calls of at most
/// `poll`, fetches its value and frees it on the workers (see [`super::run()`]).
pub fn execute_on(
    mut api: &mut dyn TaskApi,
    tensor: &Tensor,
    poll: Duration,
) -> ApiResult<ArrayData> {
    let mut ran = super::run(&mut api, &Tensor::graph(&[tensor]), None, 1, poll)?;
    let task = ran.task;
    ran.results
        .pop()
        .ok_or_else(|| ApiError::Unexpected(format!("{task} returned no result")))
}
