//! `np.compress(condition, x, axis)`: the slices of `x` along `axis` where a 1-D condition
//! is true, built from `x[mask]` ([`Tensor::mask_select`]), whose length along axis 0
//! depends on the data (the engine runs it in stages).
//!
//! Only axis 0 (and `axis=None`, which flattens `x` first) can be data-dependent: a tensor's
//! unknown length is always that of its axis 0 (`Tensor::length_from_data`), and every op
//! that accepts one (`select::tensor::check_inputs`) relies on it staying there. Letting any
//! one axis be the unknown one would change that contract for every op family (elementwise
//! broadcasting, reductions, reshape, the stage substitution), which is not a bounded change;
//! another axis is refused with the workaround, the axis moved first (`transpose`, NumPy's
//! `moveaxis(x, axis, 0)`), whose result has the selected slices along axis 0.

use crate::array::DType;
use crate::error::{AresError, Result};
use crate::tensor::{SliceArg, Tensor};

impl Tensor {
    /// `np.compress(condition, self, axis)`. The condition is 1-D, read as truthiness (any
    /// dtype); shorter than the axis it counts as false beyond its end (NumPy's rule), longer
    /// is an error (NumPy accepts it when the extra elements are all false, a check on the
    /// data that the shape cannot wait for). `axis=None` selects from the flattened tensor.
    pub fn compress(&self, condition: &Tensor, axis: Option<i64>) -> Result<Tensor> {
        const NAME: &str = "compress";
        if condition.ndim() != 1 {
            return Err(AresError::arg(
                NAME,
                format!(
                    "condition must be a 1-d array, got {} dimensions",
                    condition.ndim()
                ),
            ));
        }
        let x = match axis {
            None => self.reshape(&[self.size() as i64])?,
            Some(_) if self.ndim() == 0 => {
                return Err(AresError::arg(
                    NAME,
                    "a 0-d tensor has no axis to select along (use axis=None)",
                ))
            }
            Some(a) => {
                let nd = self.ndim() as i64;
                let k = if a < 0 { a + nd } else { a };
                if !(0..nd).contains(&k) {
                    return Err(AresError::arg(
                        NAME,
                        format!("axis {a} is out of bounds for array of dimension {nd}"),
                    ));
                }
                if k != 0 {
                    let perm: Vec<String> = std::iter::once(k)
                        .chain((0..nd).filter(|d| *d != k))
                        .map(|d| d.to_string())
                        .collect();
                    return Err(AresError::arg(
                        NAME,
                        format!(
                            "only axis 0 (or axis=None) can have a length that depends on the \
                             data, not axis {k}: compress along axis 0 of transpose(a, ({})) \
                             instead (the axis moved first; the selected slices then come \
                             first)",
                            perm.join(", ")
                        ),
                    ));
                }
                self.clone()
            }
        };
        if x.length_from_data() || condition.length_from_data() {
            return Err(AresError::arg(
                NAME,
                "the condition's length is checked against the axis while the expression is \
                 built, and one of them depends on the data: compute it first (Python: \
                 `x.compute_chunk_sizes()`)",
            ));
        }
        let (n, len) = (x.shape()[0], condition.shape()[0]);
        if len > n {
            return Err(AresError::arg(
                NAME,
                format!(
                    "the condition has {len} elements, more than the {n} of the axis (NumPy \
                     accepts it when those beyond are all False, which is known only from \
                     the data: pass condition[:{n}])"
                ),
            ));
        }
        let mask = if condition.dtype() == DType::Bool {
            condition.clone()
        } else {
            condition.astype(DType::Bool)?
        };
        // Beyond the condition's end nothing is selected: those slices are cut off first.
        let x = if len < n {
            let mut index = vec![SliceArg::FULL; x.ndim()];
            index[0] = SliceArg::Range {
                start: None,
                stop: Some(len as i64),
                step: None,
            };
            x.slice(&index)?
        } else {
            x
        };
        x.mask_select(&mask)
    }
}
