//! Exact order statistics: `median`, `quantile` and `percentile` by selection.
//!
//! Over every axis (the flattened tensor, of a real dtype) the ranks the formulas read are
//! selected without sorting ([`crate::ops::family::statistics::select`]: O(n) and a gather
//! of about 1 % of the values, where a sort is O(n log n) and moves them all). Over some
//! axes, the reduced axes are moved last and merged into one lane per result element, each
//! lane is sorted (the shuffle's sort, one chunk per lane) and the ranks needed are sliced
//! out of it. The numbers are NumPy's to the bit: the `linear` method's virtual
//! index `(n - 1) q`, its neighbours and weight, `_lerp`'s two formulas (`a + (b - a) t`
//! below one half, `b - (b - a) (1 - t)` from there), a median as the mean of the middle
//! one or two, NaN wherever a lane holds one (it sorts last). A single `q` is NumPy's weak
//! Python float (a float32 tensor stays float32); a list of them is a float64 array (the
//! result is float64, with a leading axis of their number); an integer `q` (0 or 1) takes
//! the rank itself, in the tensor's dtype.

use crate::array::{DType, Scalar};
use crate::error::{AresError, Result};
use crate::ops::Op;
use crate::tensor::{select, stack, SliceArg, Tensor};

/// The quantiles asked for, as NumPy distinguishes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantiles {
    /// Each quantile, in [0, 1].
    pub values: Vec<f64>,
    /// One number (the result has no axis for it) rather than a list.
    pub scalar: bool,
    /// Integers (0 or 1): ranks taken without interpolation, in the tensor's dtype.
    pub integer: bool,
}

impl Quantiles {
    /// One quantile, a Python float.
    pub fn one(q: f64) -> Quantiles {
        Quantiles {
            values: vec![q],
            scalar: true,
            integer: false,
        }
    }

    /// Percentiles as quantiles: `p / 100`, NumPy's `true_divide`.
    fn percentiles_as_quantiles(&self) -> Result<Quantiles> {
        if self.values.iter().any(|p| !(0.0..=100.0).contains(p)) {
            return Err(AresError::arg(
                "percentile",
                "Percentiles must be in the range [0, 100]",
            ));
        }
        Ok(Quantiles {
            values: self.values.iter().map(|p| p / 100.0).collect(),
            scalar: self.scalar,
            integer: false,
        })
    }
}

/// The lanes to take ranks from: the reduced axes merged last and sorted, or, for the
/// flattened tensor, the ranks asked for selected ([`Tensor::select_ranks`]).
struct Lanes {
    source: Source,
    /// Values per lane.
    n: usize,
    /// The result's shape for one quantile (reduced axes dropped, or kept as 1).
    shape: Vec<i64>,
}

enum Source {
    Sorted(Tensor),
    /// The values at `ranks` (ascending, distinct) of the one lane.
    Selected {
        values: Tensor,
        ranks: Vec<usize>,
    },
}

impl Lanes {
    /// The lanes of `x` over `axes`; `wanted(n)` lists the ranks the caller will read
    /// (selected, not sorted, when every axis is reduced).
    fn of(
        x: &Tensor,
        name: &'static str,
        axes: Option<&[i64]>,
        keepdims: bool,
        wanted: impl Fn(usize) -> Vec<usize>,
    ) -> Result<Lanes> {
        if x.length_from_data() {
            return Err(AresError::arg(
                name,
                "the tensor's length depends on the data: compute its chunk sizes first",
            ));
        }
        let reduced = x.normalize_axes(name, axes)?;
        let kept: Vec<usize> = (0..x.ndim()).filter(|d| !reduced.contains(d)).collect();
        let n: usize = reduced.iter().map(|d| x.shape()[*d]).product();
        // NumPy merges several reduced axes by a reshape with -1, which fails on no values.
        if n == 0 || x.size() == 0 && reduced.len() != 1 {
            return Err(AresError::arg(
                name,
                "cannot take a quantile of an empty axis (NumPy: index -1 is out of bounds)",
            ));
        }
        let shape: Vec<i64> = (0..x.ndim())
            .filter(|d| keepdims || !reduced.contains(d))
            .map(|d| {
                if reduced.contains(&d) {
                    1
                } else {
                    x.shape()[d] as i64
                }
            })
            .collect();
        if kept.is_empty() && !x.dtype().is_complex() {
            let mut ranks = wanted(n);
            if x.dtype().is_float() {
                ranks.push(n - 1);
            }
            ranks.sort_unstable();
            ranks.dedup();
            let asked: Vec<u64> = ranks.iter().map(|r| *r as u64).collect();
            let values = x.flatten()?.select_ranks(&asked)?;
            return Ok(Lanes {
                source: Source::Selected { values, ranks },
                n,
                shape,
            });
        }
        let lanes = if kept.is_empty() {
            x.flatten()?
        } else {
            let order: Vec<usize> = kept.iter().chain(reduced.iter()).copied().collect();
            let moved = match order.iter().enumerate().all(|(i, d)| i == *d) {
                true => x.clone(),
                false => x.transpose(Some(&order))?,
            };
            let mut merged: Vec<i64> = kept.iter().map(|d| x.shape()[*d] as i64).collect();
            merged.push(n as i64);
            match reduced.len() {
                1 => moved,
                _ => moved.reshape(&merged)?,
            }
        };
        Ok(Lanes {
            source: Source::Sorted(lanes.sort_along(-1, false, false)?),
            n,
            shape,
        })
    }

    /// Rank `i` of every lane (the lane axis removed).
    fn rank(&self, i: usize) -> Result<Tensor> {
        match &self.source {
            Source::Sorted(sorted) => {
                let mut index = vec![SliceArg::FULL; sorted.ndim() - 1];
                index.push(SliceArg::Index(i as i64));
                sorted.slice(&index)
            }
            Source::Selected { values, ranks } => {
                let at = ranks.binary_search(&i).map_err(|_| {
                    AresError::arg("quantile", format!("internal: rank {i} was not selected"))
                })?;
                values.slice(&[SliceArg::Index(at as i64)])
            }
        }
    }

    /// `value`, but NaN (the lane's last rank) wherever a lane of a float tensor holds NaN.
    fn nan_where_nan(&self, value: Tensor) -> Result<Tensor> {
        let dtype = match &self.source {
            Source::Sorted(t) | Source::Selected { values: t, .. } => t.dtype(),
        };
        if !dtype.is_float() {
            return Ok(value);
        }
        let last = self.rank(self.n - 1)?;
        select(&last.unary(Op::IsNan)?, &last, &value)
    }
}

/// NumPy's `_get_indexes` for the virtual index `(n - 1) q`: the neighbours' ranks and the
/// index the weight is computed from. At or past the last rank both neighbours are the last
/// (index -1), below 0 both are the first.
fn neighbours(n: usize, q: f64) -> (usize, usize, f64) {
    let last = n - 1;
    let virtual_index = last as f64 * q;
    if virtual_index >= last as f64 {
        (last, last, -1.0)
    } else if virtual_index < 0.0 {
        (0, 0, 0.0)
    } else {
        let floor = virtual_index.floor();
        (floor as usize, floor as usize + 1, floor)
    }
}

/// The ranks `asked`'s quantiles read of a lane of `n` values.
fn ranks_of(asked: &Quantiles, n: usize) -> Vec<usize> {
    asked
        .values
        .iter()
        .flat_map(|&q| match asked.integer {
            true => vec![((n - 1) as f64 * q) as usize],
            false => {
                let (previous, next, _) = neighbours(n, q);
                vec![previous, next]
            }
        })
        .collect()
}

impl Tensor {
    /// NumPy's `median` over `axes` (`None`: all): the mean of the middle one or two values
    /// of each sorted lane, float64 for integers and bools.
    pub fn median(&self, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        let x = match self.dtype() {
            DType::Bool => self.astype(DType::F64)?,
            _ => self.clone(),
        };
        let middle = |n: usize| vec![n / 2, (n - 1) / 2];
        let lanes = Lanes::of(&x, "median", axes, keepdims, middle)?;
        let n = lanes.n;
        // NumPy's `mean` of the one or two: a sum from +0.0 (so -0.0 gives 0.0), over n.
        let sum_from_zero =
            |t: Tensor| t.as_float()?.binary_scalar(Op::Add, Scalar::F64(0.0), true);
        let middle = lanes.rank(n / 2)?;
        let value = match n % 2 {
            1 => sum_from_zero(middle)?,
            _ => sum_from_zero(lanes.rank(n / 2 - 1)?)?
                .elementwise(Op::Add, &middle.as_float()?)?
                .binary_scalar(Op::Div, Scalar::F64(2.0), false)?,
        };
        lanes.nan_where_nan(value)?.reshape(&lanes.shape)
    }

    /// NumPy's `percentile` (`method='linear'`): `quantile` of `q / 100`.
    pub fn percentile(
        &self,
        q: &Quantiles,
        axes: Option<&[i64]>,
        keepdims: bool,
    ) -> Result<Tensor> {
        self.quantile_named("percentile", &q.percentiles_as_quantiles()?, axes, keepdims)
    }

    /// NumPy's `quantile` (`method='linear'`) over `axes` (`None`: all).
    pub fn quantile(&self, q: &Quantiles, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        if q.values.iter().any(|v| !(0.0..=1.0).contains(v)) {
            return Err(AresError::arg(
                "quantile",
                "Quantiles must be in the range [0, 1]",
            ));
        }
        self.quantile_named("quantile", q, axes, keepdims)
    }

    fn quantile_named(
        &self,
        name: &'static str,
        q: &Quantiles,
        axes: Option<&[i64]>,
        keepdims: bool,
    ) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(AresError::arg(
                name,
                "a bool tensor has no quantiles (NumPy cannot subtract bools); cast it first",
            ));
        }
        if q.values.is_empty() {
            return Err(AresError::arg(name, "needs at least one quantile"));
        }
        let lanes = Lanes::of(self, name, axes, keepdims, |n| ranks_of(q, n))?;
        let values = q
            .values
            .iter()
            .map(|&v| lanes.interpolate(v, q)?.reshape(&lanes.shape))
            .collect::<Result<Vec<_>>>()?;
        match q.scalar {
            true => Ok(values.into_iter().next().expect("one quantile")),
            false => stack(&values, 0),
        }
    }
}

impl Lanes {
    /// The quantile `q` of every lane, as NumPy's `_quantile` computes it.
    fn interpolate(&self, q: f64, asked: &Quantiles) -> Result<Tensor> {
        let last = self.n - 1;
        let virtual_index = last as f64 * q;
        if asked.integer {
            // An integer virtual index: the rank itself (NumPy's `take`), NaN lanes NaN.
            return self.nan_where_nan(self.rank(virtual_index as usize)?);
        }
        let (previous, next, previous_index) = neighbours(self.n, q);
        let gamma = virtual_index - previous_index;
        let (mut a, mut b) = (self.rank(previous)?, self.rank(next)?);
        let mut diff = b.elementwise(Op::Sub, &a)?;
        if !asked.scalar {
            // A float64 array of weights: the interpolation is float64 (after `b - a`).
            (a, b, diff) = (a.as_f64()?, b.as_f64()?, diff.as_f64()?);
        }
        let value = if gamma >= 0.5 {
            let step = diff.binary_scalar(Op::Mul, Scalar::F64(1.0 - gamma), false)?;
            b.elementwise(Op::Sub, &step)?
        } else {
            let step = diff.binary_scalar(Op::Mul, Scalar::F64(gamma), false)?;
            a.elementwise(Op::Add, &step)?
        };
        self.nan_where_nan(value)
    }
}

impl Tensor {
    /// The tensor as float64.
    fn as_f64(&self) -> Result<Tensor> {
        match self.dtype() {
            DType::F64 => Ok(self.clone()),
            _ => self.astype(DType::F64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_numpy() {
        let x = crate::expr::evaluate("rand((3, 4, 5), chunk=2, seed=1)").unwrap();
        let q = Quantiles {
            values: vec![0.1, 0.5],
            scalar: false,
            integer: false,
        };
        assert_eq!(
            x.quantile(&q, Some(&[0, 2]), false).unwrap().shape(),
            &[2, 4]
        );
        assert_eq!(
            x.quantile(&q, Some(&[1]), true).unwrap().shape(),
            &[2, 3, 1, 5]
        );
        assert_eq!(x.median(None, false).unwrap().shape(), &[] as &[usize]);
        assert_eq!(x.median(None, true).unwrap().shape(), &[1, 1, 1]);
        let e = x.quantile(&Quantiles::one(1.5), None, false).unwrap_err();
        assert!(e.to_string().contains("[0, 1]"), "{e}");
        let e = x
            .percentile(&Quantiles::one(-1.0), None, false)
            .unwrap_err();
        assert!(e.to_string().contains("[0, 100]"), "{e}");
    }
}
