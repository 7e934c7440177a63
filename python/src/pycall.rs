//! The runner of user functions (`map_blocks` & co.) in a Python process.
//!
//! Registered with the core when the module is imported, so every engine thread of this
//! process (the embedded engine's slots, or a worker node started by `python -m ares worker`)
//! calls Python functions through it. A block's call takes the GIL (slots share the
//! interpreter: NumPy-heavy functions release it inside NumPy, pure Python does not), finds
//! the function by its hash (the one `map_blocks` was given, in the process that built the
//! tensor; else unpickled once per process by `ares._blocks._load`), lends it the blocks of
//! 64 KiB or more as read-only NumPy arrays over the engine's own memory (no copy; a function
//! that writes into its arguments is called again with writable copies; smaller blocks are
//! copied, which costs less) and copies the array it returns back
//! (with the GIL released when it is large, so other slots' calls go on). An exception becomes the error text: the traceback's last
//! lines, which the core prefixes with the function's name and the block index.

use crate::errors::value_error;
use crate::tensor::PyTensor;
use ares_core::array::{ArrayData, DType};
use ares_core::ops::family::python_call::{self, BlockCall, ForeignCallRunner, UserFunction};
use ndarray::ArrayD;
use numpy::{PyArray, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Decoded functions kept per process; past this many the cache starts afresh.
const MAX_CACHED_FUNCTIONS: usize = 256;
/// Lines of a traceback kept in the error.
const TRACEBACK_LINES: usize = 6;

/// The process's runner: `map_blocks` puts the function it was given in its cache, so the
/// engine embedded in this process calls it directly, never unpickling it.
static RUNNER: std::sync::OnceLock<Arc<PythonRunner>> = std::sync::OnceLock::new();

#[derive(Default)]
pub struct PythonRunner {
    functions: Mutex<HashMap<u64, Py<PyAny>>>,
    times: CallTimes,
}

/// Where the time of this process's block calls went, summed since the last reset (a few
/// clock reads per call, against tens of microseconds of Python): waiting for the GIL,
/// making the arguments (lending or copying the blocks), the call itself (the
/// `ares._blocks` wrapper and the user's function), and taking the result back.
#[derive(Default)]
struct CallTimes {
    calls: AtomicU64,
    gil_ns: AtomicU64,
    arguments_ns: AtomicU64,
    call_ns: AtomicU64,
    result_ns: AtomicU64,
}

impl CallTimes {
    /// Adds the time since `*since` to `total` and moves `*since` to now.
    fn lap(total: &AtomicU64, since: &mut Instant) {
        let now = Instant::now();
        let ns = now.duration_since(*since).as_nanos();
        total.fetch_add(u64::try_from(ns).unwrap_or(u64::MAX), Ordering::Relaxed);
        *since = now;
    }

    fn take(&self, reset: bool) -> [(&'static str, u64); 5] {
        let read = |a: &AtomicU64| {
            if reset {
                a.swap(0, Ordering::Relaxed)
            } else {
                a.load(Ordering::Relaxed)
            }
        };
        [
            ("calls", read(&self.calls)),
            ("gil_ns", read(&self.gil_ns)),
            ("arguments_ns", read(&self.arguments_ns)),
            ("call_ns", read(&self.call_ns)),
            ("result_ns", read(&self.result_ns)),
        ]
    }
}

impl PythonRunner {
    fn function(&self, py: Python<'_>, f: &UserFunction) -> PyResult<Py<PyAny>> {
        if let Some(g) = self.cached(py, f.hash) {
            return Ok(g);
        }
        let g: Py<PyAny> = py
            .import("ares._blocks")?
            .call_method1("_load", (PyBytes::new(py, &f.payload),))?
            .unbind();
        self.keep(py, f.hash, &g);
        Ok(g)
    }

    fn keep(&self, py: Python<'_>, hash: u64, g: &Py<PyAny>) {
        let mut cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_CACHED_FUNCTIONS {
            cache.clear();
        }
        cache.insert(hash, g.clone_ref(py));
    }

    fn cached(&self, py: Python<'_>, hash: u64) -> Option<Py<PyAny>> {
        let cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(&hash).map(|g| g.clone_ref(py))
    }
}

impl ForeignCallRunner for PythonRunner {
    fn call(
        &self,
        function: &UserFunction,
        block: &[usize],
        inputs: &[Arc<ArrayData>],
    ) -> Result<ArrayData, String> {
        let times = &self.times;
        times.calls.fetch_add(1, Ordering::Relaxed);
        let mut clock = Instant::now();
        keep_a_thread_state();
        Python::attach(|py| {
            CallTimes::lap(&times.gil_ns, &mut clock);
            // Large blocks are lent without a copy; a function that writes into its arguments
            // (NumPy refuses: they are read-only) is called again with copies of its own.
            let mut call = |lent: bool| -> PyResult<ArrayData> {
                let g = self.function(py, function)?;
                let mut args: Vec<Bound<'_, PyAny>> = Vec::with_capacity(inputs.len() + 1);
                args.push(PyTuple::new(py, block)?.into_any());
                for a in inputs {
                    args.push(if lent && a.nbytes() >= LARGE_BLOCK_BYTES {
                        lend(py, a)?
                    } else {
                        copy_of(py, a)
                    });
                }
                let args = PyTuple::new(py, args)?;
                CallTimes::lap(&times.arguments_ns, &mut clock);
                let out = g.bind(py).call1(args)?;
                CallTimes::lap(&times.call_ns, &mut clock);
                let result = from_numpy(py, &out);
                CallTimes::lap(&times.result_ns, &mut clock);
                result
            };
            match call(true) {
                Err(e) if wrote_into_a_lent_block(py, &e) => call(false),
                other => other,
            }
            .map_err(|e| last_lines(py, &e))
        })
    }
}

thread_local! {
    static HAS_A_THREAD_STATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Gives this engine thread a Python thread state that outlives each call: taking the GIL
/// from a thread without one makes a thread state and drops it at the end of the call, and
/// the first Python frame on a fresh thread state maps its frame stack anew (about 5 µs of a
/// `lambda b: b` call measured from the engine, against 0.45 µs from Python). Held by the
/// `PyGILState` counter (one more `Ensure` than `Release`), without the GIL.
fn keep_a_thread_state() {
    HAS_A_THREAD_STATE.with(|has| {
        if !has.get() {
            // SAFETY: called without the GIL (the runner's calls start outside Python);
            // `PyGILState_Ensure` takes it, making the thread state, and `PyEval_SaveThread`
            // gives it back at once, leaving the thread state to later calls.
            unsafe {
                pyo3::ffi::PyGILState_Ensure();
                pyo3::ffi::PyEval_SaveThread();
            }
            has.set(true);
        }
    });
}

/// The tensor whose blocks are `function` (a callable taking the block index and the
/// blocks; `payload` is it pickled) applied to the inputs' blocks: `out_chunks` are the
/// output's chunk lengths per axis, `index` maps each input axis to an output axis (or
/// `None`: whole).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn map_blocks(
    py: Python<'_>,
    function: Py<PyAny>,
    name: String,
    payload: &[u8],
    inputs: Vec<PyRef<'_, PyTensor>>,
    out_chunks: Vec<Vec<usize>>,
    dtype: &str,
    index: Vec<Vec<Option<u32>>>,
) -> PyResult<PyTensor> {
    let dtype = DType::parse(dtype)
        .ok_or_else(|| value_error(format!("map_blocks: ares has no dtype {dtype}")))?;
    let call = BlockCall {
        function: UserFunction::new(name, payload.to_vec()),
        out_splits: out_chunks,
        dtype,
        inputs: index,
    };
    if let Some(runner) = RUNNER.get() {
        runner.keep(py, call.function.hash, &function);
    }
    let inputs = inputs.iter().map(|t| t.tensor.clone()).collect();
    python_call::map_blocks(call, inputs)
        .map(PyTensor::new)
        .map_err(value_error)
}

/// Where this process's block calls spent their time since the last reset (`calls`, and
/// `gil_ns`, `arguments_ns`, `call_ns`, `result_ns` summed over them: see [`CallTimes`]);
/// `reset` starts the sums afresh. `benches/python_map_blocks.py --part overhead` reads it.
#[pyfunction]
#[pyo3(signature = (reset = false))]
fn _block_call_times(reset: bool) -> HashMap<&'static str, u64> {
    RUNNER
        .get()
        .map(|r| r.times.take(reset).into_iter().collect())
        .unwrap_or_default()
}

/// Registers the runner with the core (at import) and the module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let runner = RUNNER.get_or_init(|| Arc::new(PythonRunner::default()));
    python_call::register_runner(runner.clone());
    m.add_function(wrap_pyfunction!(map_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(_block_call_times, m)?)?;
    Ok(())
}

/// A stored block, kept alive while a NumPy array lent from it lives (the array's `base`).
#[pyclass(frozen, name = "_StoredBlock", module = "ares._ares")]
struct StoredBlock(#[allow(dead_code)] Arc<ArrayData>);

/// Calls `numpy_array!(x)` on the ndarray inside every variant of an [`ArrayData`].
macro_rules! each_dtype {
    ($data:expr, $x:ident => $body:expr) => {
        match $data {
            ArrayData::F64($x) => $body,
            ArrayData::I64($x) => $body,
            ArrayData::Bool($x) => $body,
            ArrayData::F32($x) => $body,
            ArrayData::I32($x) => $body,
            ArrayData::C64($x) => $body,
            ArrayData::C128($x) => $body,
            ArrayData::I8($x) => $body,
            ArrayData::I16($x) => $body,
            ArrayData::U8($x) => $body,
            ArrayData::U16($x) => $body,
            ArrayData::U32($x) => $body,
            ArrayData::U64($x) => $body,
        }
    };
}

/// A stored block lent to a function without a copy: a read-only NumPy array over the
/// engine's own memory, whose base keeps the block alive however long the function holds it
/// (a block is shared with later subtasks, so the function must not write into it).
fn lend<'py>(py: Python<'py>, block: &Arc<ArrayData>) -> PyResult<Bound<'py, PyAny>> {
    let owner = Bound::new(py, StoredBlock(block.clone()))?.into_any();
    Ok(each_dtype!(&**block, x => {
        // SAFETY: the memory is the `Arc`'s, which `owner` holds, and the NumPy array keeps
        // `owner` as its base for as long as it lives; a stored block is never changed or
        // reallocated (it is immutable behind the `Arc`), and the array is made read-only
        // before anything else sees it.
        let array = unsafe { PyArray::borrow_from_array(x, owner) };
        array.readwrite().make_nonwriteable();
        array.into_any()
    }))
}

/// A block as a NumPy array of its own (a writable copy), for a function that writes into
/// its arguments.
fn copy_of<'py>(py: Python<'py>, block: &ArrayData) -> Bound<'py, PyAny> {
    each_dtype!(block, x => PyArray::from_array(py, x).into_any())
}

/// Whether `e` is NumPy refusing a write into a read-only array (a function that changes its
/// argument in place: it gets writable copies instead).
fn wrote_into_a_lent_block(py: Python<'_>, e: &PyErr) -> bool {
    e.is_instance_of::<pyo3::exceptions::PyValueError>(py)
        && e.value(py).to_string().contains("read-only")
}

/// Blocks at least this large are lent to a function rather than copied, and what it
/// returns is copied back with the GIL released (other slots' calls go on meanwhile); for
/// smaller ones a copy costs less than lending (a base object, the read-only flag) and the
/// GIL is not worth giving up.
const LARGE_BLOCK_BYTES: usize = 1 << 16;

/// An array a function returned, as the engine's own (a copy: NumPy owns its memory).
fn owned<T>(py: Python<'_>, a: &PyReadonlyArrayDyn<'_, T>) -> ArrayD<T>
where
    T: numpy::Element + Clone + Send + Sync,
{
    let view = a.as_array();
    if view.len() * std::mem::size_of::<T>() < LARGE_BLOCK_BYTES {
        view.to_owned()
    } else {
        py.detach(move || view.to_owned())
    }
}

/// What a function returned, as a chunk (the Python wrapper made it an ndarray).
fn from_numpy(py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    macro_rules! try_dtype {
        ($($t:ty => $variant:ident),* $(,)?) => {$(
            if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, $t>>() {
                return Ok(ArrayData::$variant(owned(py, &a)));
            }
        )*};
    }
    try_dtype!(
        f64 => F64, i64 => I64, bool => Bool, f32 => F32, i32 => I32, i8 => I8, i16 => I16,
        u8 => U8, u16 => U16, u32 => U32, u64 => U64,
        ares_core::array::Complex64 => C128, ares_core::array::Complex32 => C64,
    );
    let what = match out.cast::<numpy::PyUntypedArray>() {
        Ok(a) => format!("an array of dtype {}", a.dtype()),
        Err(_) => format!("a {}", out.get_type().name()?),
    };
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "returned {what}; blocks must be arrays of bool, int8 to int64, uint8 to uint64, \
         float32, float64, complex64 or complex128"
    )))
}

/// The last lines of an exception's traceback, one string.
fn last_lines(py: Python<'_>, e: &PyErr) -> String {
    let formatted = (|| -> PyResult<String> {
        let tb = py.import("traceback")?;
        let lines = tb.call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )?;
        Ok(lines.extract::<Vec<String>>()?.concat())
    })();
    match formatted {
        Ok(text) => {
            let lines: Vec<&str> = text.trim_end().lines().collect();
            lines[lines.len().saturating_sub(TRACEBACK_LINES)..].join("\n")
        }
        Err(_) => e.to_string(),
    }
}
