//! `Tensor`: a Python handle to a lazy `ares_core::tensor::Tensor`, and `call`, the one entry to
//! every function of the expression language.
//!
//! Shapes and dtypes are checked when a tensor is built, so a wrong shape raises
//! `ValueError` at the line that made it, as in NumPy; nothing runs until an engine computes
//! the tensor. Indexing is NumPy's basic indexing (integers, slices, `None`, `...`) plus one
//! tensor index: a bool mask (`x[x > 0]`) or int64 positions (`x[idx]`, `take` on axis 0).

use crate::errors::value_error;
use crate::values::{from_value, to_value};
use ares_core::array::DType;
use ares_core::expr::call::{self, Value};
use ares_core::tensor::{SliceArg, Tensor};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyEllipsis, PySlice, PyTuple};

#[pyclass(module = "ares._ares", name = "Tensor", frozen)]
pub struct PyTensor {
    pub tensor: Tensor,
}

impl PyTensor {
    pub fn new(tensor: Tensor) -> Self {
        Self { tensor }
    }
}

/// One Python index entry as a slice argument (`None` for `...`).
fn slice_arg(item: &Bound<'_, PyAny>) -> PyResult<Option<SliceArg>> {
    if item.is_none() {
        return Ok(Some(SliceArg::NewAxis));
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(None);
    }
    if let Ok(s) = item.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<i64>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                v.extract::<i64>().map(Some)
            }
        };
        return Ok(Some(SliceArg::Range {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?,
        }));
    }
    match item.extract::<i64>() {
        Ok(i) if !item.is_instance_of::<pyo3::types::PyBool>() => Ok(Some(SliceArg::Index(i))),
        _ => Err(PyIndexError::new_err(format!(
            "only integers, slices (`:`), ellipsis (`...`), None and one bool or int64 \
             tensor are valid indices, not {}",
            item.get_type().name()?
        ))),
    }
}

#[pymethods]
impl PyTensor {
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.tensor.shape())
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.tensor.dtype().name()
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.tensor.ndim()
    }

    #[getter]
    fn size(&self) -> usize {
        self.tensor.size()
    }

    /// The operation that makes this tensor (`add`, `sum`, `rand`...).
    #[getter]
    fn op(&self) -> &'static str {
        self.tensor.op().name()
    }

    /// Whether the length is known only once it has run (`unique`, `x[mask]`, and what is
    /// computed element by element from them): the shape is then an upper bound.
    #[getter]
    fn length_from_data(&self) -> bool {
        self.tensor.length_from_data()
    }

    /// Where an unknown length comes from (`x[mask]`, `unique(...)`), for error messages.
    #[getter]
    fn data_dependent_name(&self) -> Option<&'static str> {
        self.tensor.data_dependent_name()
    }

    /// The chunk lengths per dimension, as tiling would make them (dask's `chunks`).
    fn chunks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let graph = Tensor::graph(&[&self.tensor]);
        let config = ares::config::TaskConfig::default();
        let chunks = py
            .detach(|| ares_core::prepare::tile::tile(&graph, &config))
            .map_err(value_error)?;
        let splits = chunks
            .results
            .first()
            .map(|r| r.splits.clone())
            .unwrap_or_default();
        let dims = splits
            .iter()
            .map(|s| PyTuple::new(py, s))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, dims)
    }

    /// The tileable graph computing this tensor, as the JSON `POST /api/session/{sid}/task`
    /// accepts.
    fn graph_json(&self) -> PyResult<String> {
        serde_json::to_string(&Tensor::graph(&[&self.tensor])).map_err(value_error)
    }

    /// NumPy basic indexing, or one bool mask / int64 index tensor.
    fn getitem(&self, index: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        if let Ok(idx) = index.cast::<PyTensor>() {
            let idx = &idx.get().tensor;
            let r = match idx.dtype() {
                DType::Bool => self.tensor.mask_select(idx),
                DType::I64 => self.tensor.take(idx, Some(0)),
                // Positions of any integer dtype, as NumPy takes them (`take` reads int64).
                d if d.is_int() => idx
                    .astype(DType::I64)
                    .and_then(|i| self.tensor.take(&i, Some(0))),
                d => {
                    return Err(PyIndexError::new_err(format!(
                        "arrays used as indices must be of integer or boolean type, not {}",
                        d.name()
                    )))
                }
            };
            return r.map(PyTensor::new).map_err(value_error);
        }
        let items: Vec<Bound<'_, PyAny>> = match index.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![index.clone()],
        };
        if items.iter().any(|i| i.cast::<PyTensor>().is_ok()) {
            return Err(PyIndexError::new_err(
                "a tensor index must be the only index (x[mask], x[idx])",
            ));
        }
        let parsed = items.iter().map(slice_arg).collect::<PyResult<Vec<_>>>()?;
        let ellipses = parsed.iter().filter(|a| a.is_none()).count();
        if ellipses > 1 {
            return Err(PyIndexError::new_err(
                "an index can only have a single ellipsis ('...')",
            ));
        }
        let used = parsed
            .iter()
            .filter(|a| matches!(a, Some(SliceArg::Range { .. } | SliceArg::Index(_))))
            .count();
        let fill = self.tensor.ndim().saturating_sub(used);
        let mut args = Vec::with_capacity(parsed.len() + fill);
        for a in parsed {
            match a {
                Some(a) => args.push(a),
                None => args.extend(std::iter::repeat_n(SliceArg::FULL, fill)),
            }
        }
        self.tensor
            .slice_when_known(&args)
            .map(PyTensor::new)
            .map_err(value_error)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.tensor)
    }
}

/// Calls the expression language's function `name(*args, **kwargs)`; returns a `Tensor`, a
/// number, or a tuple of them (`split`, `unique(..., return_counts=True)`).
#[pyfunction]
#[pyo3(signature = (name, args, kwargs=None))]
fn call_function(
    py: Python<'_>,
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let positional = args
        .iter()
        .map(|a| to_value(&a))
        .collect::<PyResult<Vec<_>>>()?;
    let mut keywords = Vec::new();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            keywords.push((k.extract::<String>()?, to_value(&v)?));
        }
    }
    let v = call::call(name, positional, keywords).map_err(|e| value_error(e.message))?;
    from_value(py, v)
}

/// A binary operator by function name (`add`, `less`, `matmul`...), numbers as weak scalars.
#[pyfunction]
fn binary(
    py: Python<'_>,
    name: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let v = call::binary(name, to_value(a)?, to_value(b)?).map_err(|e| value_error(e.message))?;
    from_value(py, v)
}

/// Whether the expression language has a function `name`.
#[pyfunction]
fn is_function(name: &str) -> bool {
    call::is_function(name)
}

/// Every function of the expression language, by name (the package publishes them).
#[pyfunction]
fn functions() -> Vec<&'static str> {
    ares_core::expr::FUNCTIONS.to_vec()
}

/// The dtypes the core has, among NumPy's names.
#[pyfunction]
fn dtypes() -> Vec<&'static str> {
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]
    .into_iter()
    .filter(|n| DType::parse(n).is_some_and(|d| d.name() == *n))
    .collect()
}

/// A source tensor reading a `.npy` file (under the data roots) lazily.
#[pyfunction]
#[pyo3(signature = (path, chunks=None))]
fn from_npy(path: &str, chunks: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let mut kw = vec![];
    if let Some(c) = chunks {
        kw.push(("chunk".to_string(), to_value(c)?));
    }
    match call::call("from_npy", vec![Value::Str(path.into())], kw) {
        Ok(Value::Tensor(t)) => Ok(PyTensor::new(t)),
        Ok(_) => Err(PyTypeError::new_err("from_npy did not return a tensor")),
        Err(e) => Err(value_error(e.message)),
    }
}

/// Sets the directories data paths may use (`data.roots`; relative paths resolve against the
/// first), for this process: tensor sources check their paths when they are built.
#[pyfunction]
fn set_data_roots(roots: Vec<std::path::PathBuf>) -> PyResult<()> {
    let roots = ares_core::io::roots::DataRoots::new(&roots).map_err(value_error)?;
    ares_core::io::roots::set_global(roots);
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTensor>()?;
    m.add_function(wrap_pyfunction!(call_function, m)?)?;
    m.add_function(wrap_pyfunction!(binary, m)?)?;
    m.add_function(wrap_pyfunction!(is_function, m)?)?;
    m.add_function(wrap_pyfunction!(functions, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(from_npy, m)?)?;
    m.add_function(wrap_pyfunction!(set_data_roots, m)?)?;
    Ok(())
}
