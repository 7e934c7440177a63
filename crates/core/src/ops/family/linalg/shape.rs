//! The shape rule of the `matmul` primitive: stacks of matrices, `(..., n, k) @ (..., k, m)`,
//! whose batch dimensions broadcast as NumPy's do. 1-D operands are NumPy's too, but the
//! tensor API turns them into one-row or one-column matrices before they get here, so the
//! primitive only ever sees two or more dimensions on each side.

use crate::array::{fmt_shape, Shape};
use crate::error::{AresError, Result};

/// Shape of `a @ b` for operands of at least 2 dimensions each.
pub fn matmul_shape(a: &[usize], b: &[usize]) -> Result<Shape> {
    if a.len() < 2 || b.len() < 2 {
        return Err(AresError::shape(
            "matmul",
            format!(
                "the primitive multiplies operands of 2 or more dimensions, got {} and {}",
                fmt_shape(a),
                fmt_shape(b)
            ),
        ));
    }
    let (na, nb) = (a.len(), b.len());
    if a[na - 1] != b[nb - 2] {
        return Err(AresError::shape(
            "matmul",
            format!(
                "inner dimensions differ: {} @ {} ({} != {})",
                fmt_shape(a),
                fmt_shape(b),
                a[na - 1],
                b[nb - 2]
            ),
        ));
    }
    let batch =
        crate::ops::infer::broadcast("matmul", &a[..na - 2], &b[..nb - 2]).map_err(|_| {
            AresError::shape(
                "matmul",
                format!(
                    "the batch dimensions of {} and {} do not broadcast",
                    fmt_shape(a),
                    fmt_shape(b)
                ),
            )
        })?;
    let mut out = batch;
    out.extend([a[na - 2], b[nb - 1]]);
    crate::ops::infer::check_shape("matmul", &out)?;
    Ok(out)
}

/// For each batch dimension of the result (`out_batch`), the operand's own dimension there
/// and whether it is broadcast (missing, or of length 1 against a longer result).
pub fn batch_dims(operand: &[usize], out_batch: &[usize]) -> Vec<Option<usize>> {
    let own = operand.len() - 2;
    let skip = out_batch.len() - own;
    (0..out_batch.len())
        .map(|d| {
            let at = d.checked_sub(skip)?;
            (operand[at] == out_batch[d]).then_some(at)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_dimensions_broadcast_and_core_dimensions_align() {
        assert_eq!(matmul_shape(&[2, 3], &[3, 4]).unwrap().as_slice(), &[2, 4]);
        let s = matmul_shape(&[5, 1, 2, 3], &[4, 3, 7]).unwrap();
        assert_eq!(s.as_slice(), &[5, 4, 2, 7]);
        assert_eq!(
            matmul_shape(&[0, 2, 3], &[3, 1]).unwrap().as_slice(),
            &[0, 2, 1]
        );
        let e = matmul_shape(&[2, 2, 3], &[3, 3, 1])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(2, 2, 3) and (3, 3, 1) do not broadcast"),
            "{e}"
        );
        let e = matmul_shape(&[2, 3], &[4, 1]).unwrap_err().to_string();
        assert!(e.contains("3 != 4"), "{e}");
        assert!(matmul_shape(&[3], &[3, 1]).is_err());
        assert_eq!(batch_dims(&[1, 2, 3], &[5, 4]), vec![None, None]);
        assert_eq!(batch_dims(&[5, 4, 2, 3], &[5, 4]), vec![Some(0), Some(1)]);
        assert_eq!(batch_dims(&[4, 2, 3], &[5, 4]), vec![None, Some(0)]);
    }
}
