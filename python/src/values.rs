//! Python values to the expression language's `Value` and back, and results to NumPy.
//!
//! Python numbers stay numbers (`Value::Num`), so `x * 2.5` follows NEP 50's weak scalars
//! exactly as in a program; the pure-Python layer turns NumPy scalars into Python numbers
//! and NumPy arrays into source tensors before they get here. A fetched result becomes a
//! NumPy array that owns the fetched buffer (no copy), or a Python scalar when it is 0-d
//! (a NumPy scalar for the dtypes but float64, int64 and bool, whose precision and wrapping
//! a Python number would not show).

use crate::tensor::PyTensor;
use ares_core::array::{ArrayData, DType, Scalar};
use ares_core::expr::call::Value;
use numpy::PyArray;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

/// A Python argument as a `Value`.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::None);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Value::Tensor(t.get().tensor.clone()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Num(Scalar::Bool(b.is_true())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Value::Num(Scalar::I64(obj.extract::<i64>()?)));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Value::Num(Scalar::F64(obj.extract::<f64>()?)));
    }
    if obj.is_instance_of::<pyo3::types::PyComplex>() {
        return Err(PyTypeError::new_err(
            "ares has no complex Python numbers in expressions yet: make a complex tensor (ar.asarray(z, dtype='complex128')) and use it instead",
        ));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_str()?.to_string()));
    }
    if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let items = obj
            .try_iter()?
            .map(|item| to_value(&item?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Tuple(items));
    }
    Err(PyTypeError::new_err(format!(
        "ares cannot take a {} here (tensors, numbers, strings, tuples and None)",
        obj.get_type().name()?
    )))
}

/// A scalar as a Python bool, int or float.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    #[allow(unreachable_patterns)]
    match s {
        Scalar::Bool(b) => b.into_py_any(py),
        Scalar::I64(i) => i.into_py_any(py),
        Scalar::F64(x) => x.into_py_any(py),
        other => other.as_f64().into_py_any(py),
    }
}

/// A `Value` as a Python object (tensors become `Tensor` handles).
pub fn from_value(py: Python<'_>, v: Value) -> PyResult<Py<PyAny>> {
    #[allow(unreachable_patterns)]
    match v {
        Value::Tensor(t) => PyTensor::new(t).into_py_any(py),
        Value::Num(s) => scalar_to_py(py, s),
        Value::Str(s) => s.into_py_any(py),
        Value::Tuple(items) => {
            let items = items
                .into_iter()
                .map(|v| from_value(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_py_any(py)
        }
        Value::None => Ok(py.None()),
        _ => Err(PyTypeError::new_err("a value ares cannot return to Python")),
    }
}

/// A fetched result: a Python scalar when 0-d, else a NumPy array owning the buffer.
pub fn array_to_py(py: Python<'_>, data: ArrayData) -> PyResult<Py<PyAny>> {
    if data.shape().is_empty() {
        let s = data
            .get_flat(0)
            .ok_or_else(|| PyTypeError::new_err("a 0-d result without a value"))?;
        // A complex result is a Python complex (complex128) or a NumPy complex64.
        match &data {
            ArrayData::C128(a) => {
                let z = a.iter().next().copied().unwrap_or_default();
                return pyo3::types::PyComplex::from_doubles(py, z.re, z.im).into_py_any(py);
            }
            ArrayData::C64(a) => {
                let z = a.iter().next().copied().unwrap_or_default();
                let numpy = py.import("numpy")?;
                let value = pyo3::types::PyComplex::from_doubles(py, z.re.into(), z.im.into());
                return Ok(numpy.getattr("complex64")?.call1((value,))?.unbind());
            }
            _ => {}
        }
        // A Python float or int would claim float64/int64: the other results are NumPy
        // scalars of their dtype, as NumPy's reductions return (a uint64 from its exact
        // value, which the language's int64 scalar may not hold).
        let dtype = data.dtype();
        if !matches!(dtype, DType::F64 | DType::I64 | DType::Bool) {
            let value = match &data {
                ArrayData::U64(a) => a
                    .iter()
                    .next()
                    .copied()
                    .unwrap_or_default()
                    .into_py_any(py)?,
                _ => scalar_to_py(py, s)?,
            };
            let numpy = py.import("numpy")?;
            return Ok(numpy.getattr(dtype.name())?.call1((value,))?.unbind());
        }
        return scalar_to_py(py, s);
    }
    match data {
        ArrayData::F64(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::I64(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::Bool(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::F32(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::I32(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::C64(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::C128(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::I8(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::I16(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::U8(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::U16(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::U32(a) => PyArray::from_owned_array(py, a).into_py_any(py),
        ArrayData::U64(a) => PyArray::from_owned_array(py, a).into_py_any(py),
    }
}
