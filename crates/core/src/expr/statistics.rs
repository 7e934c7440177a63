//! Expression-language names for the statistics family (`ops::family::statistics`): the
//! NaN-skipping reductions and `median`, `percentile`, `quantile`.

use super::args::{to_axes, to_bool, to_usize, ufunc_reduce_axes, Args};
use super::eval::{Ctx, Value};
use super::{err, ExprError, Pos};
use crate::array::Scalar;
use crate::ops::family::statistics::Quantiles;
use crate::ops::Op;
use crate::tensor::Tensor;

/// Whether `name` is one of the family's functions.
pub(super) fn is_statistic(name: &str) -> bool {
    crate::ops::registry::function(name).is_some_and(|l| l.family == "statistics")
}

impl Ctx {
    pub(super) fn call_statistics(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap =
            |r: crate::Result<Tensor>| r.map(Value::Tensor).or_else(|e| err(p, e.to_string()));
        match name {
            "nansum" | "nanprod" | "nanmin" | "nanmax" | "nanmean" => {
                a.check(2, &["a", "axis", "keepdims"])?;
                let x = a.tensor(0, "a")?;
                let axes = nan_axes(name, &x, a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let axes = axes.as_deref();
                wrap(match name {
                    "nansum" => x.nansum(axes, keep),
                    "nanprod" => x.nanprod(axes, keep),
                    "nanmin" => x.nan_extreme(false, axes, keep),
                    "nanmax" => x.nan_extreme(true, axes, keep),
                    _ => x.nanmean(axes, keep),
                })
            }
            "nanvar" | "nanstd" => {
                a.check(2, &["a", "axis", "keepdims", "ddof"])?;
                let x = a.tensor(0, "a")?;
                let axes = nan_axes(name, &x, a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let ddof = match a.get(usize::MAX, "ddof") {
                    Some((v, p)) => to_usize(&v, p)?,
                    None => 0,
                };
                wrap(match name {
                    "nanvar" => x.nanvar(axes.as_deref(), keep, ddof),
                    _ => x.nanstd(axes.as_deref(), keep, ddof),
                })
            }
            "nanargmin" | "nanargmax" => {
                a.check(2, &["a", "axis", "keepdims"])?;
                let x = a.tensor(0, "a")?;
                let axis = a.opt_int(1, "axis")?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let op = match name {
                    "nanargmin" => Op::ArgMin,
                    _ => Op::ArgMax,
                };
                wrap(x.nan_arg_reduce(op, axis, keep))
            }
            "median" => {
                a.check(2, &["a", "axis", "keepdims"])?;
                let x = a.tensor(0, "a")?;
                let axes = to_axes(a.get(1, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                wrap(x.median(axes.as_deref(), keep))
            }
            "percentile" | "quantile" => {
                a.check(3, &["a", "q", "axis", "keepdims", "method"])?;
                let x = a.tensor(0, "a")?;
                let (qv, qp) = a.need(1, "q")?;
                let q = to_quantiles(&qv, qp)?;
                let axes = to_axes(a.get(2, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                match a.get(usize::MAX, "method") {
                    None => {}
                    Some((Value::Str(m), _)) if m == "linear" => {}
                    Some((_, mp)) => {
                        return err(mp, format!("{name}: only method='linear' is supported"))
                    }
                }
                wrap(match name {
                    "percentile" => x.percentile(&q, axes.as_deref(), keep),
                    _ => x.quantile(&q, axes.as_deref(), keep),
                })
            }
            _ => err(p, format!("unknown function {name}")),
        }
    }
}

/// The axes of a nan-reduction. NumPy's reduce through ufuncs (`np.add.reduce`), which take
/// axis 0 or -1 of a 0-d tensor (a legacy rule); its `nanmean`, `nanvar` and `nanstd` of
/// integers are `mean`, `var` and `std`, which refuse it.
fn nan_axes(
    name: &str,
    x: &Tensor,
    axis: Option<(Value, Pos)>,
) -> Result<Option<Vec<i64>>, ExprError> {
    let ufunc = x.dtype().is_float()
        || x.dtype().is_complex()
        || matches!(name, "nansum" | "nanprod" | "nanmin" | "nanmax");
    match ufunc {
        true => ufunc_reduce_axes(x, axis),
        false => to_axes(axis),
    }
}

/// `q`: a number or a tuple of numbers (all integers, or floats).
fn to_quantiles(v: &Value, p: Pos) -> Result<Quantiles, ExprError> {
    let number = |v: &Value| match v {
        Value::Num(Scalar::I64(i)) => Ok((*i as f64, true)),
        Value::Num(Scalar::F64(f)) => Ok((*f, false)),
        _ => err(p, "q must be a number or a tuple of numbers"),
    };
    match v {
        Value::Tuple(items) => {
            let parsed = items.iter().map(number).collect::<Result<Vec<_>, _>>()?;
            Ok(Quantiles {
                integer: !parsed.is_empty() && parsed.iter().all(|(_, int)| *int),
                values: parsed.into_iter().map(|(q, _)| q).collect(),
                scalar: false,
            })
        }
        v => {
            let (q, integer) = number(v)?;
            Ok(Quantiles {
                values: vec![q],
                scalar: true,
                integer,
            })
        }
    }
}
