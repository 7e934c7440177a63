//! The projected QR of `x` (m × n) by `w` (n × l): the QR of the sketch `Y = x·w`, Q
//! (m × l) and R (l × l), and `Qᵀ·x` (l × n) with it, reading each block of rows of x once.
//! It is the last step of `svd_compressed` (an orthonormal basis Q of x's range, and x
//! projected on it), which as two products read all of x twice, `x·w` and then `Qᵀ·x` once
//! Q was known: 1.6 GB from DRAM twice for 200,000 × 1,000, or a random x drawn twice.
//!
//! TSQR makes it one pass: with a leaf's block of rows factored as `Yᵢ = Qᵢ·Rᵢ` and the
//! tree's factor Fᵢ carrying Qᵢ to the final Q (its rows are `Qᵢ·Fᵢ`),
//! `Qᵀ·x = Σᵢ Fᵢᵀ·(Qᵢᵀ·xᵢ)`; so each leaf projects its own rows on its own Qᵢ while it
//! reads them (`projected_qr_kernels`: sequential TSQR within the block, 64 K values at a
//! time), and once the tree is known, `(Qᵀ·x)ᵀ` is the sum over the leaves of `(Qᵢᵀ·xᵢ)ᵀ·Fᵢ`
//! (a `tree_add`, like a product's partial sums). The tree is TSQR's (`tsqr`), unchanged:
//! the leaves keep their R in their last l rows.
//!
//! The tensor is packed as `(m + n + l) × l`: Q's row blocks, then `(Qᵀ·x)ᵀ` (n × l), then
//! R, sliced by the tensor API (whole chunks, no copy).

use super::tsqr::{check_block, row_blocks};
use crate::array::{fmt_shape, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use smallvec::smallvec;

const NAME: &str = "linalg.svd_compressed";

/// The packed tensor's shape: `(m + n + l) × l`, refusing anything but float64 `x` (m × n)
/// and `w` (n × l) with m ≥ l ≥ 1.
pub(super) fn infer(inputs: &[(&Shape, DType)]) -> Result<(Shape, DType)> {
    let [(xs, xd), (ws, wd)] = inputs else {
        return Err(AresError::arg(
            NAME,
            format!("a projected QR takes 2 inputs, got {}", inputs.len()),
        ));
    };
    let (&[m, n], &[n2, l]) = (xs.as_slice(), ws.as_slice()) else {
        return Err(AresError::shape(
            NAME,
            format!(
                "a projected QR needs two matrices, got {} and {}",
                fmt_shape(xs),
                fmt_shape(ws)
            ),
        ));
    };
    if n != n2 || l == 0 || m < l || (*xd, *wd) != (DType::F64, DType::F64) {
        return Err(AresError::shape(
            NAME,
            format!(
                "a projected QR needs float64 x (m × n) and w (n × l), m ≥ l ≥ 1, got \
                 {} {xd} and {} {wd}",
                fmt_shape(xs),
                fmt_shape(ws)
            ),
        ));
    }
    Ok((smallvec![m + n + l, l], DType::F64))
}

impl Tiler {
    pub(crate) fn tile_projected_qr(
        &mut self,
        x: &Tiled,
        w: &Tiled,
        x_shape: &[usize],
        l: usize,
    ) -> Result<Tiled> {
        let (m, n) = (x_shape[0], x_shape[1]);
        let rows = row_blocks(&x.splits[0], l);
        for r in &rows {
            check_block(NAME, *r, n)?;
        }
        let x = self.rechunk_to(x, &[rows.clone(), vec![n]], DType::F64);
        let w = self.rechunk_to(w, &[vec![n], vec![l]], DType::F64);
        let none = self.graph.intern_args(OpArgs::None);
        let leaf_key = self.key();
        let leaves: Vec<ChunkIdx> = rows
            .iter()
            .zip(&x.chunks)
            .map(|(r, xi)| {
                let shape: Shape = smallvec![r + n + l, l];
                let ins = [*xi, w.chunks[0]];
                self.push(leaf_key, Op::QrProjectLeaf, none, shape, DType::F64, &ins)
            })
            .collect();
        let mut splits = rows.clone();
        splits.extend([n, l]);
        let splits = vec![splits, vec![l]];
        if let [only] = leaves[..] {
            let chunks = vec![
                self.rows_of(only, 0, m, l),
                self.rows_of(only, m, n, l),
                self.rows_of(only, m + n, l, l),
            ];
            return Ok(Tiled { splits, chunks });
        }
        let tree = self.tsqr_tree(&leaves, l);
        let (q_key, term_key) = (self.key(), self.key());
        let mut chunks: Vec<ChunkIdx> = Vec::with_capacity(leaves.len() + 2);
        let mut terms = Vec::with_capacity(leaves.len());
        for ((leaf, (above, slot)), r) in leaves.iter().zip(&tree.leaves).zip(&rows) {
            let mut ins = vec![*leaf];
            ins.extend(above);
            let mut apply = |key, start: usize, len: usize| {
                let args = self.graph.intern_args(OpArgs::TsqrRows {
                    slot: *slot,
                    start: start as u64,
                    len: len as u64,
                });
                let shape: Shape = smallvec![len, l];
                self.push(key, Op::QrProjectApply, args, shape, DType::F64, &ins)
            };
            chunks.push(apply(q_key, 0, *r));
            terms.push(apply(term_key, *r, n));
        }
        let shape: Shape = smallvec![n, l];
        chunks.push(self.tree(
            Op::TreeAdd,
            terms,
            &mut Vec::new(),
            (none, shape.clone()),
            (none, shape),
            DType::F64,
        ));
        chunks.push(self.last_rows(tree.root, l, l));
        Ok(Tiled { splits, chunks })
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::{Op, OpArgs};
    use crate::tensor::{self, Tensor};
    use ndarray::{s, Array2, Ix2};

    /// The packed tensor on the local executor, over 12 row chunks (two levels of the tree)
    /// and over one: Q·R = x·w, QᵀQ = I, and its `(Qᵀ·x)ᵀ` is xᵀ·Q.
    #[test]
    fn the_projection_is_q_transposed_times_x() {
        for rows in [20, 230] {
            let x = tensor::randn(&[230, 9], [rows, 4], Some(1)).unwrap();
            let w = tensor::rand(&[9, 5], [9, 5], Some(2)).unwrap();
            let packed =
                Tensor::new(Op::QrProject, OpArgs::None, vec![x.clone(), w.clone()]).unwrap();
            assert_eq!(packed.shape(), &[230 + 9 + 5, 5]);
            let [p, x, w]: [Array2<f64>; 3] = run(&[&packed, &x, &w]).try_into().unwrap();
            let (q, wt, r) = (
                p.slice(s![..230, ..]),
                p.slice(s![230..239, ..]),
                p.slice(s![239.., ..]),
            );
            let gemm = crate::ops::family::linalg::kernels::gemm_f64;
            let close = |a: &Array2<f64>, b: &Array2<f64>, what: &str| {
                let err = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(err < 1e-12, "{rows}: {what} off by {err}");
            };
            close(&gemm(q, r), &gemm(x.view(), w.view()), "Q·R");
            close(&gemm(q.t(), q), &Array2::eye(5), "QᵀQ");
            close(&wt.to_owned(), &gemm(x.t(), q), "(Qᵀx)ᵀ");
        }
        let x = tensor::randn(&[4, 9], [4, 9], Some(1)).unwrap();
        let w = tensor::rand(&[9, 5], [9, 5], Some(2)).unwrap();
        let e = Tensor::new(Op::QrProject, OpArgs::None, vec![x, w]).unwrap_err();
        assert!(e.to_string().contains("m ≥ l ≥ 1"), "{e}");
    }

    fn run(outputs: &[&Tensor]) -> Vec<Array2<f64>> {
        let results = crate::executor::compute(outputs, &Default::default(), 2).unwrap();
        results
            .into_iter()
            .map(|a| a.to_f64().into_dimensionality::<Ix2>().unwrap())
            .collect()
    }
}
