//! The reference's reductions, indexing, creation and shape functions, from NumPy's
//! documentation: `sum`/`prod` of bools and ints are int64 (wrapping), `mean`/`var`/`std` of
//! anything accumulate in float64, `min`/`max` over an empty axis raise, `var` divides by
//! `max(n - ddof, 0)`, slices follow Python's `slice.indices`, `None` is a new axis.

use super::refarr::{np_err, Arr, R};
use super::value::DT;
use ndarray::{ArrayD, Axis, IxDyn};

/// Normalises an axis against `ndim`, as `numpy.lib.array_utils.normalize_axis_index`.
pub fn norm_axis(axis: i64, ndim: usize) -> R<usize> {
    let n = ndim as i64;
    if axis < -n || axis >= n {
        return np_err(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        ));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

/// Rows of `a` with the reduced axes last: returns (kept shape, n_reduced, row-major values).
fn rows<T: Clone>(a: &ArrayD<T>, reduced: &[bool]) -> (Vec<usize>, usize, Vec<T>) {
    let nd = a.ndim();
    let mut perm: Vec<usize> = (0..nd).filter(|d| !reduced[*d]).collect();
    let kept: Vec<usize> = perm.iter().map(|d| a.shape()[*d]).collect();
    perm.extend((0..nd).filter(|d| reduced[*d]));
    let nred = (0..nd)
        .filter(|d| reduced[*d])
        .map(|d| a.shape()[d])
        .product();
    let p = a.view().permuted_axes(IxDyn(&perm));
    (kept, nred, p.iter().cloned().collect())
}

fn collect<T: Clone, U>(
    a: &ArrayD<T>,
    reduced: &[bool],
    keepdims: bool,
    f: impl Fn(&[T]) -> U,
) -> ArrayD<U> {
    let (kept, nred, vals) = rows(a, reduced);
    let out: Vec<U> = if nred == 0 {
        (0..kept.iter().product()).map(|_| f(&[])).collect()
    } else {
        vals.chunks(nred).map(f).collect()
    };
    let shape: Vec<usize> = if keepdims {
        (0..a.ndim())
            .map(|d| if reduced[d] { 1 } else { a.shape()[d] })
            .collect()
    } else {
        kept
    };
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("shape")
}

fn mean(v: &[f64]) -> f64 {
    // NumPy's sums start from +0.0 (Rust's `sum` starts from -0.0).
    v.iter().fold(0.0, |s, x| s + x) / v.len() as f64
}

/// `func(a, axis=axes, keepdims=keepdims, ddof=ddof)`; `axes` None means all axes.
pub fn reduce(func: &str, a: &Arr, axes: Option<&[i64]>, keepdims: bool, ddof: i64) -> R<Arr> {
    let nd = a.shape().len();
    let mut reduced = vec![axes.is_none(); nd];
    for ax in axes.unwrap_or(&[]) {
        let d = norm_axis(*ax, nd)?;
        if reduced[d] {
            return np_err("duplicate value in 'axis'");
        }
        reduced[d] = true;
    }
    let shape = a.shape();
    let empty_axis = (0..nd).any(|d| reduced[d] && shape[d] == 0);
    Ok(match func {
        "sum" | "prod" => {
            let prod = func == "prod";
            match a {
                Arr::F(x) => Arr::F(collect(x, &reduced, keepdims, |v| {
                    if prod {
                        v.iter().product()
                    } else {
                        v.iter().fold(0.0, |s, x| s + x)
                    }
                })),
                _ => Arr::I(collect(&a.to_i(), &reduced, keepdims, |v| {
                    if prod {
                        v.iter().fold(1i64, |s, x| s.wrapping_mul(*x))
                    } else {
                        v.iter().fold(0i64, |s, x| s.wrapping_add(*x))
                    }
                })),
            }
        }
        "min" | "max" | "amin" | "amax" => {
            if empty_axis {
                return np_err("zero-size array to reduction operation which has no identity");
            }
            let max = func.ends_with("max");
            match a {
                Arr::B(x) => Arr::B(collect(x, &reduced, keepdims, |v| {
                    if max {
                        v.iter().any(|b| *b)
                    } else {
                        v.iter().all(|b| *b)
                    }
                })),
                Arr::I(x) => Arr::I(collect(x, &reduced, keepdims, |v| {
                    let it = v.iter().copied();
                    if max {
                        it.max().unwrap()
                    } else {
                        it.min().unwrap()
                    }
                })),
                Arr::F(x) => Arr::F(collect(x, &reduced, keepdims, |v| {
                    if v.iter().any(|f| f.is_nan()) {
                        return f64::NAN;
                    }
                    let it = v.iter().copied();
                    if max {
                        it.fold(f64::NEG_INFINITY, f64::max)
                    } else {
                        it.fold(f64::INFINITY, f64::min)
                    }
                })),
            }
        }
        "mean" => Arr::F(collect(&a.to_f(), &reduced, keepdims, mean)),
        "var" | "std" => {
            let std = func == "std";
            Arr::F(collect(&a.to_f(), &reduced, keepdims, |v| {
                let m = mean(v);
                let ss: f64 = v.iter().fold(0.0, |s, x| s + (x - m) * (x - m));
                let var = ss / (v.len() as i64 - ddof).max(0) as f64;
                if std {
                    var.sqrt()
                } else {
                    var
                }
            }))
        }
        "all" => Arr::B(collect(&a.to_b(), &reduced, keepdims, |v| {
            v.iter().all(|b| *b)
        })),
        "any" => Arr::B(collect(&a.to_b(), &reduced, keepdims, |v| {
            v.iter().any(|b| *b)
        })),
        f => unreachable!("reduction {f}"),
    })
}

/// One index item after parsing: an integer, a slice, or a new axis.
#[derive(Clone, Debug)]
pub enum Item {
    At(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
}

/// Python's `slice(start, stop, step).indices(n)`, as the list of selected positions.
pub fn slice_positions(n: usize, a: Option<i64>, b: Option<i64>, c: Option<i64>) -> R<Vec<usize>> {
    let n = n as i64;
    let step = c.unwrap_or(1);
    if step == 0 {
        return np_err("slice step cannot be zero");
    }
    let fix = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let mut out = vec![];
    if step > 0 {
        let (mut i, stop) = (a.map_or(0, |v| fix(v, 0, n)), b.map_or(n, |v| fix(v, 0, n)));
        while i < stop {
            out.push(i as usize);
            i += step;
        }
    } else {
        let mut i = a.map_or(n - 1, |v| fix(v, -1, n - 1));
        let stop = b.map_or(-1, |v| fix(v, -1, n - 1));
        while i > stop {
            out.push(i as usize);
            i += step;
        }
    }
    Ok(out)
}

/// Basic indexing: integers drop an axis, slices keep it, `None` inserts a length-1 axis,
/// missing trailing items select everything.
pub fn index(a: &Arr, items: &[Item]) -> R<Arr> {
    let shape = a.shape();
    let consumed = items.iter().filter(|i| !matches!(i, Item::NewAxis)).count();
    if consumed > shape.len() {
        return np_err(format!(
            "too many indices for array: array is {}-dimensional, but {consumed} were indexed",
            shape.len()
        ));
    }
    // For each source axis: the selected positions and its output axis (None if dropped).
    let mut sel: Vec<(Vec<usize>, Option<usize>)> = vec![];
    let mut out_shape = vec![];
    let mut d = 0;
    let all = items
        .iter()
        .cloned()
        .chain((consumed..shape.len()).map(|_| Item::Slice(None, None, None)));
    for it in all {
        match it {
            Item::NewAxis => out_shape.push(1),
            Item::At(i) => {
                let n = shape[d] as i64;
                if i < -n || i >= n {
                    return np_err(format!(
                        "index {i} is out of bounds for axis {d} with size {n}"
                    ));
                }
                sel.push((vec![(if i < 0 { i + n } else { i }) as usize], None));
                d += 1;
            }
            Item::Slice(x, y, z) => {
                let pos = slice_positions(shape[d], x, y, z)?;
                out_shape.push(pos.len());
                sel.push((pos, Some(out_shape.len() - 1)));
                d += 1;
            }
        }
    }
    let src = |ix: &IxDyn| -> Vec<usize> {
        sel.iter()
            .map(|(pos, o)| pos[o.map_or(0, |o| ix[o])])
            .collect()
    };
    let sh = IxDyn(&out_shape);
    Ok(match a {
        Arr::B(x) => Arr::B(ArrayD::from_shape_fn(sh, |ix| x[IxDyn(&src(&ix))])),
        Arr::I(x) => Arr::I(ArrayD::from_shape_fn(sh, |ix| x[IxDyn(&src(&ix))])),
        Arr::F(x) => Arr::F(ArrayD::from_shape_fn(sh, |ix| x[IxDyn(&src(&ix))])),
    })
}

pub fn transpose(a: &Arr, axes: Option<&[i64]>) -> R<Arr> {
    let nd = a.shape().len();
    let perm: Vec<usize> = match axes {
        None => (0..nd).rev().collect(),
        Some(ax) => {
            if ax.len() != nd {
                return np_err("axes don't match array");
            }
            let p: Vec<usize> = ax.iter().map(|x| norm_axis(*x, nd)).collect::<R<_>>()?;
            if (0..nd).any(|d| !p.contains(&d)) {
                return np_err("repeated axis in transpose");
            }
            p
        }
    };
    fn t<T: Clone>(x: &ArrayD<T>, perm: &[usize]) -> ArrayD<T> {
        x.view().permuted_axes(IxDyn(perm)).to_owned()
    }
    Ok(match a {
        Arr::B(x) => Arr::B(t(x, &perm)),
        Arr::I(x) => Arr::I(t(x, &perm)),
        Arr::F(x) => Arr::F(t(x, &perm)),
    })
}

pub fn concatenate(items: &[Arr], axis: i64) -> R<Arr> {
    let Some(first) = items.first() else {
        return np_err("need at least one array to concatenate");
    };
    let nd = first.shape().len();
    if nd == 0 {
        return np_err("zero-dimensional arrays cannot be concatenated");
    }
    let ax = norm_axis(axis, nd)?;
    for it in items {
        let s = it.shape();
        if s.len() != nd || (0..nd).any(|d| d != ax && s[d] != first.shape()[d]) {
            return np_err("all the input array dimensions except for the concatenation axis must match exactly");
        }
    }
    let dt = items
        .iter()
        .map(Arr::dtype)
        .fold(DT::Bool, super::refarr::promote);
    let cat = |v: Vec<ArrayD<f64>>| {
        let views: Vec<_> = v.iter().map(|x| x.view()).collect();
        ndarray::concatenate(Axis(ax), &views).expect("concatenate")
    };
    let f = cat(items.iter().map(Arr::to_f).collect());
    // Values are converted through float64 only for layout; cast back exactly below.
    Ok(match dt {
        DT::F64 => Arr::F(f),
        DT::Bool => Arr::B(f.mapv(|x| x != 0.0)),
        DT::I64 => {
            let views: Vec<ArrayD<i64>> = items.iter().map(Arr::to_i).collect();
            let v: Vec<_> = views.iter().map(|x| x.view()).collect();
            Arr::I(ndarray::concatenate(Axis(ax), &v).expect("concatenate"))
        }
    })
}

/// `reshape(a, dims)` with at most one -1, as NumPy checks it.
pub fn reshape_shape(len: usize, dims: &[i64]) -> R<Vec<usize>> {
    let unknown = dims.iter().filter(|d| **d == -1).count();
    if unknown > 1 || dims.iter().any(|d| *d < -1) {
        return np_err("can only specify one unknown dimension");
    }
    let known: usize = dims
        .iter()
        .filter(|d| **d >= 0)
        .map(|d| *d as usize)
        .product();
    let out: Vec<usize> = if unknown == 1 {
        if known == 0 || !len.is_multiple_of(known) {
            return np_err(format!(
                "cannot reshape array of size {len} into shape {dims:?}"
            ));
        }
        dims.iter()
            .map(|d| if *d == -1 { len / known } else { *d as usize })
            .collect()
    } else {
        dims.iter().map(|d| *d as usize).collect()
    };
    if out.iter().product::<usize>() != len {
        return np_err(format!(
            "cannot reshape array of size {len} into shape {dims:?}"
        ));
    }
    Ok(out)
}

pub fn reshape(a: &Arr, shape: &[usize]) -> Arr {
    fn r<T: Clone>(x: &ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
        ArrayD::from_shape_vec(IxDyn(shape), x.iter().cloned().collect()).expect("reshape")
    }
    match a {
        Arr::B(x) => Arr::B(r(x, shape)),
        Arr::I(x) => Arr::I(r(x, shape)),
        Arr::F(x) => Arr::F(r(x, shape)),
    }
}
