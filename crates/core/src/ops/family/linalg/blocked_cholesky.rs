//! The Cholesky factor of a matrix chunked in both dimensions, by the right-looking tile
//! algorithm (LAPACK's `potrf` by blocks; Buttari, Langou, Kurzak, Dongarra 2009), one
//! subtask per block step, so no chunk ever holds more than one block.
//!
//! The matrix is rechunked to square blocks (its row cuts on both axes), T × T of them. Step
//! k factors the diagonal block (`factor`: L_kk, faer's Cholesky), solves the blocks below it
//! against L_kkᵀ (`panel`: L_ik = A_ik · L_kk⁻ᵀ, a triangular solve), and updates the trailing
//! lower triangle (`update`: A_ij ← A_ij − L_ik · L_jkᵀ, a product, `syrk` on the diagonal).
//! The blocks of step k + 1 depend only on those they read, so the panels of a step and its
//! T(T−1)/2 updates run in parallel; a step starts as soon as its diagonal block is updated.
//! The upper blocks of L are zeros (`zero`). Only the lower triangle is read, as NumPy's.
//!
//! Chunks: T²(T+1)/6-ish updates, T(T−1)/2 panels, T factors, for T = 4 (an 8000² matrix in
//! 2000² blocks) 30 subtasks, each at most three blocks in and one out.

use super::faer_bridge::{owned, view};
use super::kernels::as_f64;
use crate::array::{ArrayData, DType, Shape};
use crate::error::{AresError, Result};
use crate::ids::ChunkIdx;
use crate::kernels::{kerr, KResult};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use ndarray::{Array2, Ix2};
use serde::{Deserialize, Serialize};
use smallvec::smallvec;

/// One block step of the tile Cholesky.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CholeskyStep {
    /// L_kk of the (updated) diagonal block.
    Factor,
    /// L_ik = A_ik · L_kk⁻ᵀ (inputs A_ik, L_kk).
    Panel,
    /// A_ij − L_ik · L_jkᵀ (inputs A_ij, L_ik, L_jk).
    Update,
    /// A block of zeros above the diagonal.
    Zero { rows: u32, cols: u32 },
}

fn matrix(x: &ArrayData) -> KResult<Array2<f64>> {
    as_f64(x)
        .into_owned()
        .into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("linalg.cholesky: a block must be 2-D: {e}")))
}

/// The kernel of one block step.
pub fn apply(step: CholeskyStep, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let out = match (step, inputs) {
        (CholeskyStep::Factor, [a]) => super::faer_bridge::cholesky(matrix(a)?.view(), false)?,
        (CholeskyStep::Panel, [a, l]) => {
            let (a, l) = (matrix(a)?, matrix(l)?);
            // X · Lᵀ = A  ⇔  L · Xᵀ = Aᵀ.
            let mut xt = view(&a.t()).to_owned();
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                view(&l.view()),
                xt.as_mut(),
                faer::Par::Seq,
            );
            owned(xt.as_ref().transpose())
        }
        (CholeskyStep::Update, [a, li, lj]) => {
            let (a, li, lj) = (matrix(a)?, matrix(li)?, matrix(lj)?);
            let mut c = view(&a.view()).to_owned();
            faer::linalg::matmul::matmul(
                c.as_mut(),
                faer::Accum::Add,
                view(&li.view()),
                view(&lj.t()),
                -1.0,
                faer::Par::Seq,
            );
            owned(c.as_ref())
        }
        (CholeskyStep::Zero { rows, cols }, []) => Array2::zeros((rows as usize, cols as usize)),
        _ => {
            return kerr(format!(
                "linalg.cholesky: step {step:?} does not take {} inputs",
                inputs.len()
            ))
        }
    };
    Ok(ArrayData::F64(out.into_dyn()))
}

impl Tiler {
    /// Tiles the Cholesky factor (lower) of an n × n float64 matrix chunked as `x`.
    pub(super) fn tile_blocked_cholesky(&mut self, x: &Tiled, n: usize) -> Result<Tiled> {
        let cuts = x.splits[0].clone();
        for b in &cuts {
            super::dense::check_matrix("linalg.cholesky", *b, *b)?;
        }
        let x = self.rechunk_to(x, &[cuts.clone(), cuts.clone()], DType::F64);
        let t = cuts.len();
        let key = self.key();
        let step_args =
            |tiler: &mut Tiler, step| tiler.graph.intern_args(OpArgs::CholeskyStep(step));
        let factor = step_args(self, CholeskyStep::Factor);
        let panel = step_args(self, CholeskyStep::Panel);
        let update = step_args(self, CholeskyStep::Update);
        let shape = |i: usize, j: usize| -> Shape { smallvec![cuts[i], cuts[j]] };
        // The current value of each lower block, replaced by its factor once final.
        let mut cur: Vec<ChunkIdx> = x.chunks.clone();
        let at = |i: usize, j: usize| i * t + j;
        for k in 0..t {
            let l_kk = self.push(
                key,
                Op::CholeskyBlock,
                factor,
                shape(k, k),
                DType::F64,
                &[cur[at(k, k)]],
            );
            cur[at(k, k)] = l_kk;
            for i in k + 1..t {
                let ins = [cur[at(i, k)], l_kk];
                cur[at(i, k)] =
                    self.push(key, Op::CholeskyBlock, panel, shape(i, k), DType::F64, &ins);
            }
            for j in k + 1..t {
                for i in j..t {
                    let ins = [cur[at(i, j)], cur[at(i, k)], cur[at(j, k)]];
                    cur[at(i, j)] = self.push(
                        key,
                        Op::CholeskyBlock,
                        update,
                        shape(i, j),
                        DType::F64,
                        &ins,
                    );
                }
            }
        }
        for i in 0..t {
            for j in i + 1..t {
                let zero = CholeskyStep::Zero {
                    rows: u32::try_from(cuts[i]).map_err(|_| too_big(n))?,
                    cols: u32::try_from(cuts[j]).map_err(|_| too_big(n))?,
                };
                let args = step_args(self, zero);
                cur[at(i, j)] =
                    self.push(key, Op::CholeskyBlock, args, shape(i, j), DType::F64, &[]);
            }
        }
        Ok(Tiled {
            splits: vec![cuts.clone(), cuts],
            chunks: cur,
        })
    }
}

fn too_big(n: usize) -> AresError {
    AresError::arg(
        "linalg.cholesky",
        format!("a block of a {n} × {n} matrix has more than 2^32 rows"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::linalg::kernels::gemm_f64;

    /// The three block steps on a 2 × 2 grid of blocks give the factor of the whole matrix
    /// (faer's, computed whole), and zeros above it.
    #[test]
    fn block_steps_compose_to_the_whole_factor() {
        let n = 7;
        let b = Array2::from_shape_fn((n, n), |(i, j)| ((i * 5 + j * 3) % 7) as f64 - 3.0);
        let a = gemm_f64(b.t(), b.view()) + Array2::<f64>::eye(n) * 4.0;
        let whole = super::super::faer_bridge::cholesky(a.view(), false).unwrap();
        let block = |r: std::ops::Range<usize>, c: std::ops::Range<usize>| {
            ArrayData::F64(a.slice(ndarray::s![r, c]).to_owned().into_dyn())
        };
        let (a00, a10, a11) = (block(0..3, 0..3), block(3..7, 0..3), block(3..7, 3..7));
        let l00 = apply(CholeskyStep::Factor, &[&a00]).unwrap();
        let l10 = apply(CholeskyStep::Panel, &[&a10, &l00]).unwrap();
        let a11 = apply(CholeskyStep::Update, &[&a11, &l10, &l10]).unwrap();
        let l11 = apply(CholeskyStep::Factor, &[&a11]).unwrap();
        let zero = apply(CholeskyStep::Zero { rows: 3, cols: 4 }, &[]).unwrap();
        let got = |d: &ArrayData| d.clone().to_f64().into_dimensionality::<Ix2>().unwrap();
        let want = |r: std::ops::Range<usize>, c: std::ops::Range<usize>| {
            whole.slice(ndarray::s![r, c]).to_owned()
        };
        for (g, w) in [
            (got(&l00), want(0..3, 0..3)),
            (got(&l10), want(3..7, 0..3)),
            (got(&l11), want(3..7, 3..7)),
            (got(&zero), want(0..3, 3..7)),
        ] {
            assert!(
                g.iter().zip(&w).all(|(x, y)| (x - y).abs() < 1e-12),
                "{g} vs {w}"
            );
        }
        let e = apply(CholeskyStep::Update, &[&a00]).unwrap_err();
        assert!(e.0.contains("does not take 1 inputs"), "{}", e.0);
    }

    /// A 23 × 23 matrix in chunks of 5 (a 5 × 5 grid with a short last block) is factored
    /// by blocks on the local executor: L equals faer's factor of the whole matrix, U its
    /// transpose, and a matrix that is not positive definite fails by name.
    #[test]
    fn blocked_factor_on_the_local_executor_equals_the_whole_one() {
        let got = super::super::products::tests::run(
            "x = rand((23, 23), chunk=5, seed=1); a = matmul(x, transpose(x)) + 23 * linalg.matrix_power(x, 0)",
            &["a", "linalg.cholesky(a)", "linalg.cholesky(a, upper=True)"],
        );
        let a = got[0].clone().into_dimensionality::<Ix2>().unwrap();
        let whole = super::super::faer_bridge::cholesky(a.view(), false).unwrap();
        for (k, g) in got[1..].iter().enumerate() {
            let g = g.clone().into_dimensionality::<Ix2>().unwrap();
            let g = if k == 1 { g.t().to_owned() } else { g };
            let worst = g
                .iter()
                .zip(&whole)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(worst < 1e-12, "off by {worst}");
        }
        let t = crate::expr::evaluate(
            "x = rand((12, 12), chunk=4, seed=1); linalg.cholesky(-matmul(x, transpose(x)))",
        )
        .unwrap();
        let e = crate::executor::compute(&[&t], &Default::default(), 2).unwrap_err();
        assert!(e.to_string().contains("not positive definite"), "{e}");
    }
}
