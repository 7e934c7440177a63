//! The runner of user functions (`map_blocks` & co.) in a Python process.
//!
//! Registered with the core when the module is imported, so every engine thread of this
//! process (the embedded engine's slots, or a worker node started by `python -m ares worker`)
//! calls Python functions through it. A block's call takes the GIL (slots share the
//! interpreter: NumPy-heavy functions release it inside NumPy, pure Python does not), finds
//! the function by its hash (the one `map_blocks` was given, in the process that built the
//! tensor; else unpickled once per process by `ares._blocks._load`), hands the blocks to it as NumPy arrays and takes
//! the NumPy array it returns back. An exception becomes the error text: the traceback's last
//! lines, which the core prefixes with the function's name and the block index.

use crate::errors::value_error;
use crate::tensor::PyTensor;
use ares_core::array::{ArrayData, DType};
use ares_core::ops::family::python_call::{self, BlockCall, ForeignCallRunner, UserFunction};
use numpy::{PyArray, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
        inputs: &[&ArrayData],
    ) -> Result<ArrayData, String> {
        Python::attach(|py| {
            let run = || -> PyResult<ArrayData> {
                let g = self.function(py, function)?;
                let mut args: Vec<Bound<'_, PyAny>> = Vec::with_capacity(inputs.len() + 1);
                args.push(PyTuple::new(py, block)?.into_any());
                for a in inputs {
                    args.push(to_numpy(py, a));
                }
                let out = g.bind(py).call1(PyTuple::new(py, args)?)?;
                from_numpy(&out)
            };
            run().map_err(|e| last_lines(py, &e))
        })
    }
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

/// Registers the runner with the core (at import) and the module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let runner = RUNNER.get_or_init(|| Arc::new(PythonRunner::default()));
    python_call::register_runner(runner.clone());
    m.add_function(wrap_pyfunction!(map_blocks, m)?)?;
    Ok(())
}

/// A block as a NumPy array (a copy: the engine keeps its chunk).
fn to_numpy<'py>(py: Python<'py>, a: &ArrayData) -> Bound<'py, PyAny> {
    match a {
        ArrayData::F64(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::I64(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::Bool(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::F32(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::I32(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::C64(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::C128(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::I8(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::I16(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::U8(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::U16(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::U32(x) => PyArray::from_array(py, x).into_any(),
        ArrayData::U64(x) => PyArray::from_array(py, x).into_any(),
    }
}

/// What a function returned, as a chunk (the Python wrapper made it an ndarray).
fn from_numpy(out: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, f64>>() {
        return Ok(ArrayData::F64(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, i64>>() {
        return Ok(ArrayData::I64(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, bool>>() {
        return Ok(ArrayData::Bool(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, f32>>() {
        return Ok(ArrayData::F32(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, i32>>() {
        return Ok(ArrayData::I32(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, i8>>() {
        return Ok(ArrayData::I8(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, i16>>() {
        return Ok(ArrayData::I16(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, u8>>() {
        return Ok(ArrayData::U8(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, u16>>() {
        return Ok(ArrayData::U16(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, u32>>() {
        return Ok(ArrayData::U32(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, u64>>() {
        return Ok(ArrayData::U64(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, ares_core::array::Complex64>>() {
        return Ok(ArrayData::C128(a.as_array().to_owned()));
    }
    if let Ok(a) = out.extract::<PyReadonlyArrayDyn<'_, ares_core::array::Complex32>>() {
        return Ok(ArrayData::C64(a.as_array().to_owned()));
    }
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
