//! Engine errors as Python exceptions, each with the engine's own message.
//!
//! * `ValueError`: building a tensor failed (shapes, dtypes, arguments: `AresError` and the
//!   expression language's argument checks), the same message `ares run` prints;
//!   `OverflowError` when a Python integer does not fit an integer tensor's dtype
//!   (`uint8 + 300`), as NumPy 2 raises.
//! * `ares.TaskError` (a `RuntimeError`): a submitted task failed, was refused or was
//!   cancelled; the message is the task's error.
//! * `ConnectionError`: the supervisor cannot be reached or refused the client.

use ares::api::ApiError;
use pyo3::exceptions::{PyConnectionError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    _ares,
    TaskError,
    PyRuntimeError,
    "A task failed on the engine (a kernel error, a lost cluster, a refusal), or was cancelled."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TaskError", m.py().get_type::<TaskError>())
}

/// A tensor could not be built. The core words a Python integer out of an integer dtype's
/// range as NumPy does ("Python integer 300 out of bounds for uint8": the elementwise
/// family's `check_scalar_fits`), which NumPy raises as `OverflowError`.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    let text = e.to_string();
    if text.contains("Python integer") && text.contains("out of bounds for") {
        return PyOverflowError::new_err(text);
    }
    PyValueError::new_err(text)
}

/// A client call failed.
pub fn api_error(e: ApiError) -> PyErr {
    match e {
        ApiError::Connect { .. } | ApiError::Codec(_) | ApiError::Tls(_) => {
            PyConnectionError::new_err(e.to_string())
        }
        ApiError::Refused(reason) => TaskError::new_err(reason),
        ApiError::Task(message) => TaskError::new_err(message),
        // The task's own error, as `run` has always raised it.
        ApiError::TaskFailed {
            error: Some(message),
            ..
        } => TaskError::new_err(message),
        ApiError::TaskFailed { task, .. } => TaskError::new_err(format!("{task} failed")),
        other => TaskError::new_err(other.to_string()),
    }
}
