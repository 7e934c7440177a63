//! `solve` of one matrix chunked in both dimensions, by a blocked right-looking LU with
//! partial pivoting within each block column (LAPACK's `getrf` by block columns, as dask's
//! `lu` pivots within its panels), one subtask per block step.
//!
//! The matrix is rechunked to column panels (its row cuts as column cuts: square blocks on
//! the diagonal), T of them, each with every row. Step k factors its panel below the rows
//! already final (`panel`: the (n − o_k) × b_k block column, partial pivoting over all its
//! rows, faer's LU in place; the permutation packed as an extra column), then every panel
//! j > k is updated on its own (`update`: its rows permuted by the panel's pivots, its top
//! b_k rows solved against the unit-lower L_kk into U_kj, the rows below less L_ik · U_kj):
//! the updates of a step run in parallel, and step k + 1's panel starts as soon as its own
//! update is done. A chunk's rows that are final (the U rows of an earlier step) are skipped
//! by the next step (`skip`), so no chunk is sliced or copied between steps.
//!
//! The right-hand sides (n × K, one chunk) go through the same `update` after each panel
//! (forward substitution with the pivots applied in the factorization's order), then back
//! substitution runs from the last block up (`back`: x_k = U_kk⁻¹ (y_k − Σ_{j>k} U_kj x_j),
//! U_kj the top rows of panel j after step k). The result is x in T row chunks.
//!
//! A singular matrix (a zero pivot) fails the task naming it, as NumPy's `LinAlgError`.

use super::faer_bridge::{owned, view};
use super::kernels::as_f64;
use crate::array::{ArrayData, DType, Shape};
use crate::error::Result;
use crate::ids::ChunkIdx;
use crate::kernels::{kerr, KResult};
use crate::ops::{Op, OpArgs};
use crate::prepare::tile::{Tiled, Tiler};
use faer::{Accum, Mat, Par};
use ndarray::{s, Array2, ArrayView2, Ix2};
use serde::{Deserialize, Serialize};
use smallvec::smallvec;

/// One block step of the blocked LU solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LuStep {
    /// Factor a block column below its first `skip` rows: packed L\U then the pivots.
    Panel { skip: u32 },
    /// Apply a panel (input 0) to a block column or the right-hand sides (input 1) below
    /// their first `skip` rows: U_kj on top, the updated rows below.
    Update { skip: u32 },
    /// Back substitution of block k: inputs the panel, the forward result (y_k on top),
    /// then pairs (panel j after step k, x_j) for every j > k.
    Back,
    /// The n × n identity (no input): the right-hand sides of `inv`.
    Eye { n: u32 },
    /// The determinant from every panel (inputs in order): 0-d, or with `log` the sign and
    /// the log of the absolute value (`slogdet`).
    Det { log: bool },
}

fn matrix(x: &ArrayData) -> KResult<Array2<f64>> {
    as_f64(x)
        .into_owned()
        .into_dimensionality::<Ix2>()
        .or_else(|e| kerr(format!("linalg.solve: a block must be 2-D: {e}")))
}

/// A chunk's rows below the first `skip`, refusing a chunk too short.
fn below(x: &Array2<f64>, skip: u32) -> KResult<ArrayView2<'_, f64>> {
    let skip = skip as usize;
    match skip <= x.nrows() {
        true => Ok(x.slice(s![skip.., ..])),
        false => kerr(format!(
            "linalg.solve: a block of {} rows cannot skip {skip}",
            x.nrows()
        )),
    }
}

/// LU with partial pivoting of an m × b panel (m ≥ b): the packed factors, m × (b + 1),
/// the last column the pivots (row i of P·A is row `perm[i]` of A). A zero pivot (a
/// singular matrix) is kept: `det` reads it as 0, back substitution refuses it.
fn panel(a: ArrayView2<f64>) -> KResult<Array2<f64>> {
    use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
    let (m, b) = a.dim();
    if m < b {
        return kerr(format!(
            "linalg.solve: a panel of {m} rows cannot be factored in {b} columns"
        ));
    }
    let mut f: Mat<f64> = view(&a).to_owned();
    let (mut fwd, mut bwd) = (vec![0usize; m], vec![0usize; m]);
    let scratch = lu_in_place_scratch::<usize, f64>(m, b, Par::Seq, Default::default());
    let mut mem = faer::dyn_stack::MemBuffer::new(scratch);
    lu_in_place(
        f.as_mut(),
        &mut fwd,
        &mut bwd,
        Par::Seq,
        faer::dyn_stack::MemStack::new(&mut mem),
        Default::default(),
    );
    let mut out = Array2::zeros((m, b + 1));
    for i in 0..m {
        for j in 0..b {
            out[[i, j]] = f[(i, j)];
        }
        out[[i, b]] = fwd[i] as f64;
    }
    Ok(out)
}

/// Applies a packed panel (m × (b + 1)) to `c` (m × w): rows permuted, the top b rows
/// solved against the unit-lower L_kk, the rows below less L_below · U.
fn update(p: &Array2<f64>, c: ArrayView2<f64>) -> KResult<Array2<f64>> {
    let (m, b1) = p.dim();
    let b = b1 - 1;
    if c.nrows() != m {
        return kerr(format!(
            "linalg.solve: a panel of {m} rows cannot update a block of {} rows",
            c.nrows()
        ));
    }
    let mut pc = Mat::<f64>::zeros(m, c.ncols());
    for i in 0..m {
        let from = p[[i, b]] as usize;
        if from >= m {
            return kerr("linalg.solve: a pivot is out of range");
        }
        for j in 0..c.ncols() {
            pc[(i, j)] = c[[from, j]];
        }
    }
    let lu = view(&p.slice(s![.., ..b]));
    let (l_kk, l_below) = lu.split_at_row(b);
    let (mut top, mut rest) = pc.as_mut().split_at_row_mut(b);
    faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place(
        l_kk,
        top.as_mut(),
        Par::Seq,
    );
    faer::linalg::matmul::matmul(
        rest.as_mut(),
        Accum::Add,
        l_below,
        top.as_ref(),
        -1.0,
        Par::Seq,
    );
    Ok(owned(pc.as_ref()))
}

/// x_k = U_kk⁻¹ (y_k − Σ_j U_kj · x_j).
fn back(inputs: &[&ArrayData]) -> KResult<Array2<f64>> {
    let [p, y, rest @ ..] = inputs else {
        return kerr("linalg.solve: back substitution needs a panel and a forward result");
    };
    if rest.len() % 2 != 0 {
        return kerr("linalg.solve: back substitution takes (panel, x) pairs");
    }
    let (p, y) = (matrix(p)?, matrix(y)?);
    let b = p.ncols() - 1;
    let mut rhs = view(&y.slice(s![..b, ..])).to_owned();
    for pair in rest.chunks(2) {
        let (u, x) = (matrix(pair[0])?, matrix(pair[1])?);
        faer::linalg::matmul::matmul(
            rhs.as_mut(),
            Accum::Add,
            view(&u.slice(s![..b, ..])),
            view(&x.view()),
            -1.0,
            Par::Seq,
        );
    }
    if (0..b).any(|i| p[[i, i]] == 0.0) {
        return kerr("linalg.solve: the matrix is singular");
    }
    let u_kk = view(&p.slice(s![..b, ..b]));
    faer::linalg::triangular_solve::solve_upper_triangular_in_place(u_kk, rhs.as_mut(), Par::Seq);
    Ok(owned(rhs.as_ref()))
}

/// The sign and log-magnitude of the determinant from the panels: the product of U's
/// diagonal and of the pivots' parities.
fn det(panels: &[&ArrayData]) -> KResult<(f64, f64)> {
    let (mut sign, mut logabs) = (1.0f64, 0.0f64);
    for p in panels {
        let p = matrix(p)?;
        let (m, b1) = p.dim();
        let b = b1 - 1;
        for i in 0..b {
            let d = p[[i, i]];
            if d == 0.0 {
                return Ok((0.0, f64::NEG_INFINITY));
            }
            sign *= d.signum();
            logabs += d.abs().ln();
        }
        // A permutation's parity: its length less its number of cycles.
        let perm: Vec<usize> = (0..m).map(|i| p[[i, b]] as usize).collect();
        let mut seen = vec![false; m];
        let mut cycles = 0;
        for start in 0..m {
            if seen[start] {
                continue;
            }
            cycles += 1;
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                i = *perm
                    .get(i)
                    .filter(|j| **j < m)
                    .map_or_else(|| kerr("linalg.det: a pivot is out of range"), Ok)?;
            }
        }
        if (m - cycles) % 2 == 1 {
            sign = -sign;
        }
    }
    Ok((sign, logabs))
}

/// The kernel of one block step.
pub fn apply(step: LuStep, inputs: &[&ArrayData]) -> KResult<ArrayData> {
    let out = match (step, inputs) {
        (LuStep::Panel { skip }, [a]) => panel(below(&matrix(a)?, skip)?)?,
        (LuStep::Update { skip }, [p, c]) => update(&matrix(p)?, below(&matrix(c)?, skip)?)?,
        (LuStep::Back, ins) => back(ins)?,
        (LuStep::Eye { n }, []) => Array2::eye(n as usize),
        (LuStep::Det { log }, panels) => {
            let (sign, logabs) = det(panels)?;
            let values = match log {
                true => vec![sign, logabs],
                false => vec![sign * logabs.exp()],
            };
            let shape: &[usize] = if log { &[2] } else { &[] };
            return ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), values)
                .map(ArrayData::F64)
                .or_else(|e| kerr(format!("linalg.det: {e}")));
        }
        _ => {
            return kerr(format!(
                "linalg.solve: step {step:?} does not take {} inputs",
                inputs.len()
            ))
        }
    };
    Ok(ArrayData::F64(out.into_dyn()))
}

impl Tiler {
    /// Tiles `det` (or `slogdet`, with `log`) of an n × n matrix chunked as `a_t`: the
    /// panels of its blocked LU, and one chunk from all of them.
    pub(super) fn tile_blocked_det(&mut self, a_t: &Tiled, n: usize, log: bool) -> Result<Tiled> {
        let (panels, _, _, _) = self.blocked_lu(a_t, n, None)?;
        let key = self.key();
        let args = self.graph.intern_args(OpArgs::LuStep(LuStep::Det { log }));
        let shape: Shape = if log { smallvec![2] } else { smallvec![] };
        let splits = shape.iter().map(|l| vec![*l]).collect();
        let chunk = self.push(key, Op::LuBlock, args, shape, DType::F64, &panels);
        Ok(Tiled {
            splits,
            chunks: vec![chunk],
        })
    }

    /// Tiles `inv` of an n × n matrix chunked as `a_t`: `solve` against the identity.
    pub(super) fn tile_blocked_inv(&mut self, a_t: &Tiled, n: usize) -> Result<Tiled> {
        let key = self.key();
        let rows = u32::try_from(n).map_err(|_| {
            crate::error::AresError::arg("linalg.inv", format!("{n} rows are too many"))
        })?;
        let args = self
            .graph
            .intern_args(OpArgs::LuStep(LuStep::Eye { n: rows }));
        let eye = self.push(key, Op::LuBlock, args, smallvec![n, n], DType::F64, &[]);
        let eye = Tiled {
            splits: vec![vec![n], vec![n]],
            chunks: vec![eye],
        };
        self.tile_blocked_solve(a_t, &eye, n, n)
    }

    /// Tiles `solve(a, b)` for an n × n matrix `a` chunked as `a_t` and right-hand sides
    /// `b` (n × k).
    pub(super) fn tile_blocked_solve(
        &mut self,
        a_t: &Tiled,
        b_t: &Tiled,
        n: usize,
        k: usize,
    ) -> Result<Tiled> {
        super::dense::check_matrix("linalg.solve", n, k)?;
        let b = self.rechunk_to(b_t, &[vec![n], vec![k]], DType::F64);
        let (panels, after, forward, key) = self.blocked_lu(a_t, n, Some((b.chunks[0], k)))?;
        let cuts = a_t.splits[0].clone();
        let t = cuts.len();
        let args = |tiler: &mut Tiler, step| tiler.graph.intern_args(OpArgs::LuStep(step));
        let back_args = args(self, LuStep::Back);
        let mut xs: Vec<ChunkIdx> = vec![forward[0]; t];
        for kk in (0..t).rev() {
            let mut ins = vec![panels[kk], forward[kk]];
            for (i, j) in (kk + 1..t).enumerate() {
                ins.extend([after[kk][i], xs[j]]);
            }
            let shape: Shape = smallvec![cuts[kk], k];
            xs[kk] = self.push(key, Op::LuBlock, back_args, shape, DType::F64, &ins);
        }
        Ok(Tiled {
            splits: vec![cuts, vec![k]],
            chunks: xs,
        })
    }

    /// The blocked LU of an n × n matrix chunked as `a_t` (its row cuts as block columns),
    /// with the forward substitution of right-hand sides `rhs` (a chunk of k columns): the
    /// panels, every panel after each step (`after[k]`: panels k+1.. after step k), the
    /// forward results per step, and the op key of the chunks.
    #[allow(clippy::type_complexity)]
    fn blocked_lu(
        &mut self,
        a_t: &Tiled,
        n: usize,
        rhs: Option<(ChunkIdx, usize)>,
    ) -> Result<(
        Vec<ChunkIdx>,
        Vec<Vec<ChunkIdx>>,
        Vec<ChunkIdx>,
        crate::ids::OpKey,
    )> {
        let cuts = a_t.splits[0].clone();
        for c in &cuts {
            super::dense::check_matrix("linalg.solve", n, *c)?;
        }
        let a = self.rechunk_to(a_t, &[vec![n], cuts.clone()], DType::F64);
        let t = cuts.len();
        let key = self.key();
        let mut offsets = vec![0usize];
        for c in &cuts {
            offsets.push(offsets.last().expect("starts with 0") + c);
        }
        let args = |tiler: &mut Tiler, step| tiler.graph.intern_args(OpArgs::LuStep(step));
        let skip_of = |k: usize| -> u32 {
            // The rows a chunk of step k holds above those it works on: the previous
            // step's U rows (its chunks start at the previous step's offset).
            if k == 0 {
                0
            } else {
                cuts[k - 1] as u32
            }
        };
        // The current version of each panel and of the right-hand sides, and the rows each
        // holds from (its first `skip` rows then being final).
        let mut cols: Vec<ChunkIdx> = a.chunks.clone();
        let mut rhs = rhs;
        let mut panels = Vec::with_capacity(t);
        let mut forward = Vec::with_capacity(t);
        // after[k][j]: panel j after step k (its top rows U_kj).
        let mut after: Vec<Vec<ChunkIdx>> = vec![Vec::new(); t];
        for kk in 0..t {
            let rows = n - offsets[kk];
            let skip = skip_of(kk);
            let panel_args = args(self, LuStep::Panel { skip });
            let shape: Shape = smallvec![rows, cuts[kk] + 1];
            let p = self.push(key, Op::LuBlock, panel_args, shape, DType::F64, &[cols[kk]]);
            panels.push(p);
            let update_args = args(self, LuStep::Update { skip });
            for j in kk + 1..t {
                let shape: Shape = smallvec![rows, cuts[j]];
                cols[j] = self.push(
                    key,
                    Op::LuBlock,
                    update_args,
                    shape,
                    DType::F64,
                    &[p, cols[j]],
                );
                after[kk].push(cols[j]);
            }
            if let Some((chunk, k)) = rhs {
                let shape: Shape = smallvec![rows, k];
                let next = self.push(
                    key,
                    Op::LuBlock,
                    update_args,
                    shape,
                    DType::F64,
                    &[p, chunk],
                );
                rhs = Some((next, k));
                forward.push(next);
            }
        }
        Ok((panels, after, forward, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::family::linalg::kernels::gemm_f64;

    /// A panel's pivots put P·A = L·U; an update of the rest by it, then the factor of
    /// what remains, then back substitution solve the whole system (a 2-block LU by hand).
    #[test]
    fn two_block_steps_solve_the_system() {
        let n = 7;
        let a = Array2::from_shape_fn((n, n), |(i, j)| ((i * 5 + j * 3) % 11) as f64 - 5.0);
        let b = Array2::from_shape_fn((n, 2), |(i, j)| (i + 3 * j) as f64 - 2.0);
        let data = |x: Array2<f64>| ArrayData::F64(x.into_dyn());
        let col0 = data(a.slice(s![.., ..3]).to_owned());
        let col1 = data(a.slice(s![.., 3..]).to_owned());
        let p0 = apply(LuStep::Panel { skip: 0 }, &[&col0]).unwrap();
        let col1 = apply(LuStep::Update { skip: 0 }, &[&p0, &col1]).unwrap();
        let y0 = apply(LuStep::Update { skip: 0 }, &[&p0, &data(b.clone())]).unwrap();
        let p1 = apply(LuStep::Panel { skip: 3 }, &[&col1]).unwrap();
        let y1 = apply(LuStep::Update { skip: 3 }, &[&p1, &y0]).unwrap();
        let x1 = apply(LuStep::Back, &[&p1, &y1]).unwrap();
        let x0 = apply(LuStep::Back, &[&p0, &y0, &col1, &x1]).unwrap();
        let x0 = matrix(&x0).unwrap();
        let x1 = matrix(&x1).unwrap();
        let x = ndarray::concatenate![ndarray::Axis(0), x0, x1];
        let back = gemm_f64(a.view(), x.view());
        let worst = back
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "A x - b off by {worst}");
        let zeros = apply(LuStep::Panel { skip: 0 }, &[&data(Array2::zeros((4, 2)))]).unwrap();
        let e = apply(LuStep::Back, &[&zeros, &data(Array2::ones((4, 1)))]).unwrap_err();
        assert!(e.0.contains("singular"), "{}", e.0);
        let d = apply(LuStep::Det { log: true }, &[&p0, &zeros])
            .unwrap()
            .to_f64();
        assert_eq!((d[[0]], d[[1]]), (0.0, f64::NEG_INFINITY));
        let e = apply(LuStep::Update { skip: 9 }, &[&p0, &col0]).unwrap_err();
        assert!(e.0.contains("cannot skip 9"), "{}", e.0);
    }

    /// A 23 × 23 system in chunks of 5 (a 5 × 5 grid, a short last block) on the local
    /// executor, against NumPy-free elimination: `a @ solve(a, b)` gives `b` back, vector
    /// and matrix right-hand sides, and a singular matrix fails by name.
    #[test]
    fn blocked_solve_on_the_local_executor() {
        let got = super::super::products::tests::run(
            "a = rand((23, 23), chunk=5, seed=1) + 3 * linalg.matrix_power(ones((23, 23)), 0); \
             b = rand((23, 3), chunk=4, seed=2); v = rand(23, chunk=4, seed=3)",
            &[
                "a",
                "b",
                "v",
                "linalg.solve(a, b)",
                "linalg.solve(a, v)",
                "linalg.inv(a)",
                "linalg.det(a)",
                "s, l = linalg.slogdet(a); s",
                "s, l = linalg.slogdet(a); l",
                "linalg.det(a[:5, :5])",
            ],
        );
        let (whole_det, (sign, logabs)) = {
            let a = got[0].clone().into_dimensionality::<Ix2>().unwrap();
            let d = super::super::faer_bridge::det(a.view());
            (d, super::super::faer_bridge::slogdet(a.view()))
        };
        let scalar = |x: &ndarray::ArrayD<f64>| x.iter().copied().next().unwrap();
        let det = scalar(&got[6]);
        assert!(
            (det - whole_det).abs() <= 1e-10 * whole_det.abs(),
            "{det} vs {whole_det}"
        );
        assert_eq!(scalar(&got[7]), sign);
        assert!((scalar(&got[8]) - logabs).abs() < 1e-10);
        let small = got[0].slice(ndarray::s![..5, ..5]).to_owned();
        let small = small.into_dimensionality::<Ix2>().unwrap();
        let want = super::super::faer_bridge::det(small.view());
        assert!((scalar(&got[9]) - want).abs() <= 1e-12 * want.abs());
        let m = |x: &ndarray::ArrayD<f64>| x.clone().into_dimensionality::<Ix2>().unwrap();
        let (a, b, x) = (m(&got[0]), m(&got[1]), m(&got[3]));
        let worst = gemm_f64(a.view(), x.view())
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "A x - b off by {worst}");
        let inv = m(&got[5]);
        let eye = gemm_f64(a.view(), inv.view());
        let worst = eye
            .indexed_iter()
            .map(|((i, j), v)| (v - f64::from(u8::from(i == j))).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "A inv(A) off the identity by {worst}");
        let xv = got[4].clone().insert_axis(ndarray::Axis(1));
        let xv = xv.into_dimensionality::<Ix2>().unwrap();
        let av = gemm_f64(a.view(), xv.view());
        assert!(av
            .iter()
            .zip(got[2].iter())
            .all(|(p, q)| (p - q).abs() < 1e-10));
        let t = crate::expr::evaluate("linalg.solve(ones((12, 12), chunk=4), ones(12))").unwrap();
        let e = crate::executor::compute(&[&t], &Default::default(), 2).unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
    }
}
