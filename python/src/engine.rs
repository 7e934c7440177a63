//! `Engine`: where tensors are computed.
//!
//! * `Engine.embedded(workers, slots)`: an `EmbeddedCluster` in this process, as `ares run`
//!   starts it: a supervisor and `workers` workers as actors on background threads (each
//!   worker's on one of its own), their kernels on the workers' slot threads, talking over
//!   loopback TCP with a random secret that never leaves the process. Threads rather than
//!   child processes: the package then needs no second binary, starts in milliseconds, and
//!   the engine's threads never touch the interpreter, so they run in parallel with Python
//!   (the GIL is released while we wait).
//! * `Engine.native(addr, secret)` and `Engine.http(url, token)`: a running cluster, through
//!   `ares::api`'s native client and its HTTP client.
//!
//! `upload` sends a NumPy array's bytes to a remote cluster (see [`crate::upload`]);
//! `persist` leaves computed results on the workers (see [`crate::persist`]);
//! `free_upload` frees either, and `close` every one still held.
//!
//! `run` is `ares::api::run` (the client loop `ares run` uses too) for all requested tensors
//! as one graph: it waits in short slices with the GIL released, and between slices checks
//! for Ctrl-C (cancelling the task before the `KeyboardInterrupt` propagates) and reports
//! progress to an optional callback ([`PythonDrive`]); then fetches the results and frees
//! them on the workers.

use crate::client::Client;
use crate::errors::{api_error, value_error};
use crate::tensor::PyTensor;
use crate::values::array_to_py;
use ares::api::{ApiError, ApiResult, Drive, NativeClient, TaskApi, WebTaskApi};
use ares::config::Config;
use ares::node::EmbeddedCluster;
use ares::protocol::{secret::Credentials, secret::Secret, TaskInfo};
use ares_core::ids::TaskId;
use ares_core::ops::ChunkSpec;
use ares_core::tensor::Tensor;
use pyo3::exceptions::{PyConnectionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::{sync::Mutex, time::Duration};

#[pyclass(module = "ares._ares", name = "Engine", frozen)]
pub struct Engine {
    /// Locked only while the GIL is released (a thread waiting for the lock must not hold the
    /// GIL, or the holder could never re-attach).
    client: Mutex<Option<Client>>,
    cluster: Mutex<Option<EmbeddedCluster>>,
    kind: &'static str,
    address: String,
    /// The task `run` submitted last (for `task_status`).
    last_task: Mutex<Option<TaskId>>,
    /// This engine's uploads, freed by `close` if Python has not.
    uploads: crate::upload::Uploads,
}

fn load_config(path: Option<&str>) -> PyResult<Config> {
    match path {
        Some(p) => Config::load(std::path::Path::new(p)).map_err(value_error),
        None => Ok(Config::default()),
    }
}

fn connect_error(e: ApiError) -> PyErr {
    PyConnectionError::new_err(e.to_string())
}

impl Engine {
    /// Calls the client with the GIL released.
    fn call_client<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Client) -> Result<T, ApiError> + Send,
    ) -> Result<T, ApiError> {
        py.detach(|| {
            let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
            let client = guard
                .as_mut()
                .ok_or_else(|| ApiError::Refused("this engine is closed".into()))?;
            f(client)
        })
    }

    fn with_client<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Client) -> Result<T, ApiError> + Send,
    ) -> PyResult<T> {
        self.call_client(py, f).map_err(api_error)
    }

    fn new(
        client: Client,
        cluster: Option<EmbeddedCluster>,
        kind: &'static str,
        address: String,
    ) -> Self {
        Self {
            client: Mutex::new(Some(client)),
            cluster: Mutex::new(cluster),
            kind,
            address,
            last_task: Mutex::new(None),
            uploads: Default::default(),
        }
    }
}

#[pymethods]
impl Engine {
    /// Starts a supervisor and `workers` workers of `slots` slots each in this process;
    /// `roots` are the data roots (`data.roots`) its sources and sinks may use.
    #[staticmethod]
    #[pyo3(signature = (workers=2, slots=2, config=None, roots=Vec::new()))]
    fn embedded(
        py: Python<'_>,
        workers: usize,
        slots: usize,
        config: Option<&str>,
        roots: Vec<std::path::PathBuf>,
    ) -> PyResult<Engine> {
        if workers == 0 || slots == 0 {
            return Err(PyValueError::new_err(
                "workers and slots must be at least 1",
            ));
        }
        let mut config = load_config(config)?;
        if !roots.is_empty() {
            config.data.roots = roots;
        }
        // The engine runs in its user's own process: their functions are their own code.
        config.cluster.allow_code = true;
        let (cluster, client) = py
            .detach(|| -> anyhow::Result<_> {
                let cluster = EmbeddedCluster::start(&config, workers, slots)?;
                let client = cluster.client(Duration::from_secs(10))?;
                Ok((cluster, client))
            })
            .map_err(|e| {
                PyConnectionError::new_err(format!("starting the embedded engine: {e:#}"))
            })?;
        let address = cluster.rpc_addr.to_string();
        Ok(Engine::new(
            Client::Native(client),
            Some(cluster),
            "embedded",
            address,
        ))
    }

    /// A supervisor's native protocol at `HOST:PORT`, proving `secret` (else the client
    /// secret from the environment, as `ares run --supervisor` does).
    #[staticmethod]
    #[pyo3(signature = (addr, secret=None, timeout=10.0))]
    fn native(
        py: Python<'_>,
        addr: String,
        secret: Option<String>,
        timeout: f64,
    ) -> PyResult<Engine> {
        let config = Config::default();
        let secret = match secret {
            Some(text) => Secret::from_text(&text)
                .ok_or_else(|| PyValueError::new_err("the secret is empty"))?,
            None => Credentials::load(&config.cluster)
                .map_err(value_error)?
                .client_secret(),
        };
        let wait = Duration::from_secs_f64(timeout.max(0.0));
        let client = py
            .detach(|| NativeClient::connect_with(&addr, wait, &secret))
            .map_err(connect_error)?;
        Ok(Engine::new(Client::Native(client), None, "native", addr))
    }

    /// The web API at `http://HOST:PORT` or `https://HOST:PORT`, with a bearer `token`, in
    /// session `session`; over https, the PEM file `ca_file` is trusted besides
    /// `SSL_CERT_FILE` or the system's roots.
    #[staticmethod]
    #[pyo3(signature = (url, token=None, session="python".to_string(), timeout=10.0, ca_file=None))]
    fn http(
        py: Python<'_>,
        url: String,
        token: Option<String>,
        session: String,
        timeout: f64,
        ca_file: Option<std::path::PathBuf>,
    ) -> PyResult<Engine> {
        let wait = Duration::from_secs_f64(timeout.max(0.0));
        let client = py
            .detach(|| WebTaskApi::connect_with_ca(&url, &session, token, ca_file.as_deref(), wait))
            .map_err(connect_error)?;
        Ok(Engine::new(Client::Web(client), None, "http", url))
    }

    /// `embedded`, `native` or `http`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The supervisor's address (the embedded one's loopback port too).
    #[getter]
    fn address(&self) -> String {
        self.address.clone()
    }

    /// Computes `tensors` as one task and returns their values (NumPy arrays, or Python
    /// scalars for 0-d results). `progress(fraction, subtasks)` is called after each wait of
    /// `poll` seconds while the task runs.
    #[pyo3(signature = (tensors, progress=None, poll=0.1))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        tensors: Vec<PyRef<'py, PyTensor>>,
        progress: Option<Bound<'py, PyAny>>,
        poll: f64,
    ) -> PyResult<Bound<'py, PyList>> {
        let refs: Vec<&Tensor> = tensors.iter().map(|t| &t.tensor).collect();
        let graph = Tensor::graph(&refs);
        let poll = Duration::from_secs_f64(poll.clamp(0.001, 60.0));
        let mut drive = PythonDrive {
            engine: self,
            py,
            progress: progress.as_ref(),
        };
        let results = ares::api::run(&mut drive, &graph, None, refs.len(), poll)
            .map_err(Stopped::into_py)?
            .results;
        let values = results
            .into_iter()
            .map(|a| array_to_py(py, a))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, values)
    }

    /// What `ares explain` prints for these tensors, prepared by this engine's supervisor
    /// (embedded, native or HTTP alike) for its live workers and slots with its
    /// `task.default_config`: the plan a `run` of them would get.
    #[pyo3(signature = (tensors, limit=50))]
    fn explain(
        &self,
        py: Python<'_>,
        tensors: Vec<PyRef<'_, PyTensor>>,
        limit: usize,
    ) -> PyResult<String> {
        let refs: Vec<&Tensor> = tensors.iter().map(|t| &t.tensor).collect();
        let graph = Tensor::graph(&refs);
        self.with_client(py, move |c| c.api().explain(&graph, limit))
    }

    /// The id of the task `run` submitted last, if any.
    #[getter]
    fn last_task(&self) -> Option<u32> {
        self.last_task
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|t| t.0)
    }

    /// A task's status on the engine: `Pending`, `Running`, `Succeeded`, `Failed` or
    /// `Cancelled`.
    fn task_status(&self, py: Python<'_>, task: u32) -> PyResult<String> {
        let info = self.with_client(py, move |c| c.api().get_task_result(TaskId(task)))?;
        Ok(format!("{:?}", info.status))
    }

    /// For the benchmark of the Python layer's cost: runs `tensor` `repeat` times through the
    /// Rust client alone (submit, wait, fetch, free: what `Session::execute` does), with no
    /// Python between the calls; returns the seconds of each run.
    fn time_rust(
        &self,
        py: Python<'_>,
        tensor: PyRef<'_, PyTensor>,
        repeat: usize,
    ) -> PyResult<Vec<f64>> {
        let t = tensor.tensor.clone();
        self.with_client(py, move |c| {
            let mut times = Vec::with_capacity(repeat);
            for _ in 0..repeat {
                let start = std::time::Instant::now();
                drop(ares::api::execute_on(
                    c.api(),
                    &t,
                    Duration::from_millis(100),
                )?);
                times.push(start.elapsed().as_secs_f64());
            }
            Ok(times)
        })
    }

    /// Uploads an array (`header`: its `.npy` header, `data`: its C-contiguous bytes) to
    /// the cluster as tensor `name`, in chunks of `chunks` (every chunk length per dimension;
    /// none: the server's default); returns the tensor reading it and the task holding it.
    #[pyo3(signature = (header, data, name, chunks=None))]
    fn upload(
        &self,
        py: Python<'_>,
        header: Vec<u8>,
        data: numpy::PyReadonlyArray1<'_, u8>,
        name: String,
        chunks: Option<Vec<Vec<usize>>>,
    ) -> PyResult<(PyTensor, u32)> {
        let npy = crate::upload::NpyBytes::new(header, data)?;
        let chunk = chunks.map(ChunkSpec::Explicit);
        let (tensor, task) =
            self.uploads
                .send(py, &self.client, &self.address, npy, &name, chunk)?;
        Ok((PyTensor::new(tensor), task))
    }

    /// Computes `tensors` as one task and leaves the results on the workers (dask's
    /// `persist`): returns one tensor reading each result, and the task holding them, which
    /// `free_upload` frees (see [`crate::persist`]).
    #[pyo3(signature = (tensors, progress=None, poll=0.1))]
    fn persist<'py>(
        &self,
        py: Python<'py>,
        tensors: Vec<PyRef<'py, PyTensor>>,
        progress: Option<Bound<'py, PyAny>>,
        poll: f64,
    ) -> PyResult<(Vec<PyTensor>, u32)> {
        let refs: Vec<&Tensor> = tensors.iter().map(|t| &t.tensor).collect();
        let graph = Tensor::graph(&refs);
        let poll = Duration::from_secs_f64(poll.clamp(0.001, 60.0));
        let mut drive = PythonDrive {
            engine: self,
            py,
            progress: progress.as_ref(),
        };
        let task = ares::api::persist(&mut drive, &graph, None, poll).map_err(Stopped::into_py)?;
        self.uploads.hold(task.0);
        let reads = crate::persist::reads_of(task, &refs).map_err(|e| {
            let _ = self.uploads.free(py, &self.client, task.0);
            value_error(e)
        })?;
        Ok((reads.into_iter().map(PyTensor::new).collect(), task.0))
    }

    /// Frees an upload on the cluster (its task's data); nothing if this engine is closed,
    /// lost its connection or already freed it.
    fn free_upload(&self, py: Python<'_>, task: u32) -> PyResult<()> {
        self.uploads.free(py, &self.client, task)
    }

    /// The tasks holding uploads this engine made and has not freed.
    #[getter]
    fn uploads(&self) -> Vec<u32> {
        self.uploads.held()
    }

    /// Frees the uploads still held, disconnects, and stops the embedded cluster if this
    /// engine started one.
    fn close(&self, py: Python<'_>) {
        self.uploads.free_all(py, &self.client);
        py.detach(|| {
            self.client.lock().unwrap_or_else(|p| p.into_inner()).take();
            self.cluster
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
        });
    }

    fn __repr__(&self) -> String {
        format!("Engine(kind={:?}, address={:?})", self.kind, self.address)
    }
}

/// `run`'s way to the cluster: each call with the GIL released; between waits, Ctrl-C and
/// the progress callback.
struct PythonDrive<'a, 'py> {
    engine: &'a Engine,
    py: Python<'py>,
    progress: Option<&'a Bound<'py, PyAny>>,
}

/// Why a run stopped: the client's error, or Python's (Ctrl-C, a raising callback).
enum Stopped {
    Api(ApiError),
    Python(PyErr),
}

impl From<ApiError> for Stopped {
    fn from(e: ApiError) -> Self {
        Stopped::Api(e)
    }
}

impl Stopped {
    fn into_py(self) -> PyErr {
        match self {
            Stopped::Api(e) => api_error(e),
            Stopped::Python(e) => e,
        }
    }
}

impl Drive for PythonDrive<'_, '_> {
    type Error = Stopped;

    fn call<T: Send>(
        &mut self,
        call: impl FnOnce(&mut dyn TaskApi) -> ApiResult<T> + Send,
    ) -> Result<T, Stopped> {
        Ok(self.engine.call_client(self.py, |c| call(c.api()))?)
    }

    fn submitted(&mut self, task: TaskId) {
        *self
            .engine
            .last_task
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    fn waited(&mut self, info: &TaskInfo) -> Result<(), Stopped> {
        self.py.check_signals().map_err(Stopped::Python)?;
        if let Some(cb) = self.progress {
            cb.call1((info.progress, info.subtasks))
                .map_err(Stopped::Python)?;
        }
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(crate::explain::explain, m)?)?;
    m.add_function(wrap_pyfunction!(crate::explain::explain_graph, m)?)
}
