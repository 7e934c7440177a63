//! `ares._ares`: the native half of the `ares` Python package.
//!
//! The package is a thin Python layer (`python/ares/`) over this module, which binds the Rust
//! library rather than the CLI binary (a cdylib cannot be the binary):
//!
//! * [`tensor`]: `Tensor`, a handle to a lazy `ares_core::tensor::Tensor`, and `call`, which runs any
//!   function of the expression language by name (`ares_core::expr::call`). Binding that one entry
//!   instead of one function per NumPy name means every function the core adds appears in
//!   Python with the same argument checks and NEP 50 promotion as in a program.
//! * [`engine`]: `Engine`, where tensors are computed: an embedded cluster in this process
//!   (the supervisor and worker actors of `ares run`, on threads), or a remote supervisor over
//!   the native protocol or HTTP. It releases the GIL while the engine works and polls for
//!   Ctrl-C, cancelling the task.
//! * [`pycall`]: `map_blocks`, a tensor of a user's function on blocks, and the runner that
//!   calls such functions on this process's engine threads (registered at import).
//! * [`upload`]: `from_numpy`'s arrays sent to a remote cluster, freed with their tensors.
//! * [`values`]: Python values to and from the language's `Value`, and results to NumPy
//!   without a copy.
//! * `run_node`: `ares node`, for the package's console script.

mod client;
mod engine;
mod errors;
mod explain;
mod persist;
mod pycall;
mod tensor;
mod upload;
mod values;

use pyo3::prelude::*;

/// Chunks are large, short-lived buffers allocated from the engine's slot threads; mimalloc
/// keeps them in reusable pages (as the `ares` binary does). Arrays handed to NumPy without a
/// copy are freed through it too. Buffers of 4 MB or more are advised into huge pages
/// ([`ares_core::huge_pages`]).
#[global_allocator]
static GLOBAL: ares_core::huge_pages::HugePageAlloc<mimalloc::MiMalloc> =
    ares_core::huge_pages::HugePageAlloc(mimalloc::MiMalloc);

/// Runs a supervisor or worker node until SIGINT/SIGTERM, as `ares node` does (the GIL is
/// released meanwhile).
#[pyfunction]
#[pyo3(signature = (role, config=None, supervisor=None, ready_file=None))]
fn run_node(
    py: Python<'_>,
    role: &str,
    config: Option<String>,
    supervisor: Option<String>,
    ready_file: Option<String>,
) -> PyResult<()> {
    let role = match role {
        "supervisor" => ares::node::Role::Supervisor,
        "worker" => ares::node::Role::Worker,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "role must be 'supervisor' or 'worker', not {other:?}"
            )))
        }
    };
    py.detach(|| -> anyhow::Result<()> {
        let config = match &config {
            Some(path) => ares::config::Config::load(std::path::Path::new(path))?,
            None => ares::config::Config::default(),
        };
        let ready = ready_file.as_deref().map(std::path::Path::new);
        ares::node::run_node(role, config, supervisor, ready)
    })
    .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("{e:#}")))
}

#[pymodule]
fn _ares(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ares::allocator::tune_mimalloc();
    ares::telemetry::init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_node, m)?)?;
    errors::register(m)?;
    tensor::register(m)?;
    engine::register(m)?;
    pycall::register(m)?;
    Ok(())
}
