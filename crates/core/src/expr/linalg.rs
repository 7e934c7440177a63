//! The `linalg` namespace of the expression language: every function of the array API's
//! extension (2024.12) — `linalg.qr(x, mode='reduced')`, `linalg.svd(x,
//! full_matrices=False)`, `linalg.svdvals`, `linalg.cholesky(x, upper=False)`, `linalg.inv`,
//! `linalg.det`, `linalg.slogdet`, `linalg.eigh`, `linalg.eigvalsh`, `linalg.solve(x1, x2)`,
//! `linalg.pinv(x, rtol=None)`, `linalg.matrix_rank(x, rtol=None)`,
//! `linalg.matrix_transpose`, `linalg.diagonal(x, offset=0)`, `linalg.trace(x, offset=0,
//! dtype=None)`, `linalg.outer`, `linalg.vecdot(x1, x2, axis=-1)`, `linalg.cross(x1, x2,
//! axis=-1)`, `linalg.tensordot`, `linalg.matmul`, `linalg.vector_norm(x, axis=None,
//! keepdims=False, ord=2)`, `linalg.matrix_norm(x, keepdims=False, ord='fro')`,
//! `linalg.matrix_power(x, n)` — plus NumPy's `linalg.lstsq(a, b, rcond=None)` and dask's
//! `linalg.svd_compressed(x, k, n_power_iter=0, seed=None)`. A function with several results
//! returns a tuple, unpacked by `q, r = linalg.qr(x)`.

use super::args::{to_axes, to_bool, to_dtype, to_usize, Args};
use super::eval::{Ctx, Value};
use super::{err, ExprError, Pos};
use crate::ops::family::linalg::NormOrd;
use crate::tensor::Tensor;

/// A float argument (an int counts), `None` (or absent) as `None`.
fn opt_f64(v: Option<(Value, Pos)>, what: &str) -> Result<Option<f64>, ExprError> {
    match v {
        None | Some((Value::None, _)) => Ok(None),
        Some((Value::Num(s), _)) => Ok(Some(s.as_f64())),
        Some((_, p)) => err(p, format!("{what} must be a number or None")),
    }
}

fn wrap(r: crate::Result<Tensor>, p: super::Pos) -> Result<Value, ExprError> {
    r.map(Value::Tensor).or_else(|e| err(p, e.to_string()))
}

fn tuple(parts: crate::Result<Vec<Tensor>>, p: super::Pos) -> Result<Value, ExprError> {
    let parts = parts.or_else(|e| err(p, e.to_string()))?;
    Ok(Value::Tuple(parts.into_iter().map(Value::Tensor).collect()))
}

impl Ctx {
    pub(super) fn call_linalg(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        match name {
            "linalg.qr" => {
                a.check(2, &["x", "mode"])?;
                let x = a.tensor(0, "x")?;
                let complete = match a.get(1, "mode") {
                    None => false,
                    Some((Value::Str(m), _)) if m == "reduced" => false,
                    Some((Value::Str(m), _)) if m == "complete" => true,
                    Some((_, mp)) => {
                        return err(mp, "linalg.qr: mode must be 'reduced' or 'complete'")
                    }
                };
                let factors = if complete { x.qr_complete() } else { x.qr() };
                tuple(factors.map(|p| p.to_vec()), p)
            }
            "linalg.svd" => {
                a.check(2, &["x", "full_matrices"])?;
                let x = a.tensor(0, "x")?;
                // NumPy defaults to True; a chunked SVD gives the thin factors (as dask).
                if let Some((v, vp)) = a.get(1, "full_matrices") {
                    if to_bool(Some((v, vp)))? {
                        return err(
                            vp,
                            "linalg.svd: only full_matrices=False is supported (the thin U and Vh)",
                        );
                    }
                }
                tuple(x.svd().map(|p| p.to_vec()), p)
            }
            "linalg.svdvals"
            | "linalg.inv"
            | "linalg.det"
            | "linalg.eigvalsh"
            | "linalg.matrix_transpose" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                let r = match name {
                    "linalg.svdvals" => x.svdvals(),
                    "linalg.inv" => x.inv(),
                    "linalg.det" => x.det(),
                    "linalg.matrix_transpose" => x.matrix_transpose(),
                    _ => x.eigvalsh(),
                };
                r.map(Value::Tensor).or_else(|e| err(p, e.to_string()))
            }
            "linalg.slogdet" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                tuple(x.slogdet().map(|p| p.to_vec()), p)
            }
            "linalg.solve" | "linalg.outer" => {
                a.check(2, &["x1", "x2"])?;
                let (x, y) = (a.tensor(0, "x1")?, a.tensor(1, "x2")?);
                let r = match name {
                    "linalg.solve" => x.solve(&y),
                    _ => x.outer(&y),
                };
                wrap(r, p)
            }
            "linalg.vecdot" | "linalg.cross" => {
                a.check(3, &["x1", "x2", "axis"])?;
                let (x, y) = (a.tensor(0, "x1")?, a.tensor(1, "x2")?);
                let axis = a.int_or(2, "axis", -1)?;
                let r = match name {
                    "linalg.vecdot" => x.vecdot(&y, axis),
                    _ => x.cross(&y, axis),
                };
                wrap(r, p)
            }
            "linalg.pinv" | "linalg.matrix_rank" => {
                a.check(2, &["x", "rtol"])?;
                let x = a.tensor(0, "x")?;
                let rtol = match a.get(1, "rtol") {
                    None | Some((Value::None, _)) => None,
                    Some((v @ (Value::Num(_) | Value::Tensor(_)), vp)) => {
                        Some(super::args::to_tensor(v, vp)?)
                    }
                    Some((_, vp)) => return err(vp, "rtol must be a number, a tensor or None"),
                };
                let r = match name {
                    "linalg.pinv" => x.pinv(rtol.as_ref()),
                    _ => x.matrix_rank(rtol.as_ref()),
                };
                wrap(r, p)
            }
            "linalg.lstsq" => {
                a.check(3, &["a", "b", "rcond"])?;
                let (x, y) = (a.tensor(0, "a")?, a.tensor(1, "b")?);
                let rcond = opt_f64(a.get(2, "rcond"), "rcond")?;
                tuple(x.lstsq(&y, rcond).map(|p| p.to_vec()), p)
            }
            "linalg.diagonal" => {
                a.check(2, &["x", "offset"])?;
                let x = a.tensor(0, "x")?;
                wrap(x.diagonal(a.int_or(1, "offset", 0)?), p)
            }
            "linalg.trace" => {
                a.check(2, &["x", "offset", "dtype"])?;
                let x = a.tensor(0, "x")?;
                let offset = a.int_or(1, "offset", 0)?;
                let dtype = to_dtype(a.get(usize::MAX, "dtype"))?;
                wrap(x.trace(offset, dtype), p)
            }
            "linalg.matrix_power" => {
                a.check(2, &["x", "n"])?;
                let x = a.tensor(0, "x")?;
                let (nv, np) = a.need(1, "n")?;
                let n = super::args::to_int(&nv, np)?;
                wrap(x.matrix_power(n), p)
            }
            "linalg.vector_norm" => {
                a.check(1, &["x", "axis", "keepdims", "ord"])?;
                let x = a.tensor(0, "x")?;
                let axes = to_axes(a.get(usize::MAX, "axis"))?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let ord = opt_f64(a.get(usize::MAX, "ord"), "ord")?.unwrap_or(2.0);
                wrap(x.vector_norm(axes.as_deref(), keep, ord), p)
            }
            "linalg.matrix_norm" => {
                a.check(1, &["x", "keepdims", "ord"])?;
                let x = a.tensor(0, "x")?;
                let keep = to_bool(a.get(usize::MAX, "keepdims"))?;
                let ord = match a.get(usize::MAX, "ord") {
                    None | Some((Value::None, _)) => NormOrd::Fro,
                    Some((Value::Str(s), _)) if s == "fro" => NormOrd::Fro,
                    Some((Value::Str(s), _)) if s == "nuc" => NormOrd::Nuc,
                    Some((Value::Num(v), _)) => NormOrd::P(v.as_f64()),
                    Some((_, op)) => return err(
                        op,
                        "linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf",
                    ),
                };
                wrap(x.matrix_norm(keep, ord), p)
            }
            "linalg.tensordot" | "linalg.matmul" => {
                let plain = name.trim_start_matches("linalg.");
                self.call(plain, a)
            }
            "linalg.cholesky" => {
                a.check(2, &["x", "upper"])?;
                let x = a.tensor(0, "x")?;
                let upper = to_bool(a.get(1, "upper"))?;
                x.cholesky(upper)
                    .map(Value::Tensor)
                    .or_else(|e| err(p, e.to_string()))
            }
            "linalg.eigh" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                tuple(x.eigh().map(|p| p.to_vec()), p)
            }
            "linalg.svd_compressed" => {
                a.check(4, &["x", "k", "n_power_iter", "seed"])?;
                let x = a.tensor(0, "x")?;
                let (kv, kp) = a.need(1, "k")?;
                let k = to_usize(&kv, kp)?;
                let iters = match a.get(2, "n_power_iter") {
                    Some((v, vp)) => to_usize(&v, vp)?,
                    None => 0,
                };
                let seed = match a.get(3, "seed") {
                    None | Some((Value::None, _)) => {
                        self.next_seed += 1;
                        Some(self.next_seed - 1)
                    }
                    Some((v, vp)) => Some(to_usize(&v, vp)? as u64),
                };
                tuple(x.svd_compressed(k, iters, seed).map(|p| p.to_vec()), p)
            }
            _ => err(p, format!("unknown function {name}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::expr::evaluate;

    #[test]
    fn results_unpack_into_names_and_arguments_are_checked() {
        let r = evaluate("x = ones((40, 3), chunk=(10, 2)); q, r = linalg.qr(x); r").unwrap();
        assert_eq!(r.shape(), &[3, 3]);
        let vh = evaluate(
            "x = ones((3, 40), chunk=10); u, s, vh = linalg.svd(x, full_matrices=False); vh",
        );
        assert_eq!(vh.unwrap().shape(), &[3, 40]);
        for (program, message) in [
            (
                "a, b, c = linalg.qr(ones((4, 2)))",
                "cannot unpack a tuple of 2 into 3 names",
            ),
            ("a, b = ones(3)", "cannot unpack one value into 2 names"),
            (
                "linalg.qr(ones((4, 2)), mode='r')",
                "mode must be 'reduced' or 'complete'",
            ),
            (
                "linalg.svd(ones((4, 2)), full_matrices=True)",
                "only full_matrices=False",
            ),
            (
                "linalg.svd_compressed(ones((4, 2)), 3)",
                "k must be in 1..=2",
            ),
            (
                "linalg.qr(ones(4))",
                "needs a matrix (at least 2-D), got shape (4,)",
            ),
            (
                "linalg.frobnicate(ones(4))",
                "unknown function linalg.frobnicate",
            ),
        ] {
            let e = evaluate(program).unwrap_err();
            assert!(e.message.contains(message), "{program}: {e}");
        }
        let shapes = [
            (
                "q, r = linalg.qr(ones((4, 2)), mode='complete'); q",
                &[4usize, 4][..],
            ),
            (
                "q, r = linalg.qr(ones((4, 2)), mode='complete'); r",
                &[4, 2],
            ),
            (
                "a = ones((2, 4, 4)); b = ones((4, 3)); linalg.solve(a, b)",
                &[2, 4, 3],
            ),
            ("linalg.solve(ones((4, 4)), ones(4))", &[4]),
            ("s, l = linalg.slogdet(ones((3, 5, 5))); l", &[3]),
            (
                "x, res, rank, s = linalg.lstsq(ones((9, 3)), ones(9)); res",
                &[1],
            ),
            (
                "x, res, rank, s = linalg.lstsq(ones((9, 3)), ones((9, 2))); x",
                &[3, 2],
            ),
            ("linalg.diagonal(ones((2, 3, 5)), offset=-1)", &[2, 2]),
            ("linalg.trace(ones((3, 5)), offset=2, dtype='float32')", &[]),
            (
                "linalg.matrix_norm(ones((2, 3, 5)), ord='nuc', keepdims=True)",
                &[2, 1, 1],
            ),
            ("linalg.matrix_norm(ones((3, 5)), ord=-inf)", &[]),
            ("linalg.vector_norm(ones((3, 5)), axis=0, ord=inf)", &[5]),
            ("linalg.matrix_power(ones((2, 3, 3)), -2)", &[2, 3, 3]),
            ("linalg.pinv(ones((7, 3)), rtol=0.1)", &[3, 7]),
            ("linalg.matrix_rank(ones((2, 7, 3)))", &[2]),
            ("linalg.cross(ones((4, 3)), ones(3))", &[4, 3]),
            ("linalg.vecdot(ones((4, 3)), ones(3), axis=-1)", &[4]),
            ("linalg.outer(ones(4), ones(2))", &[4, 2]),
            ("linalg.matrix_transpose(ones((2, 4, 3)))", &[2, 3, 4]),
            (
                "linalg.tensordot(ones((2, 4)), ones((4, 3)), axes=1)",
                &[2, 3],
            ),
            ("linalg.matmul(ones((2, 4)), ones((4, 3)))", &[2, 3]),
        ];
        for (program, shape) in shapes {
            let t = evaluate(program).unwrap_or_else(|e| panic!("{program}: {e}"));
            assert_eq!(t.shape(), shape, "{program}");
        }
        for (program, message) in [
            (
                "linalg.matrix_norm(ones((3, 3)), ord='max')",
                "ord must be 'fro'",
            ),
            ("linalg.matrix_norm(ones((3, 3)), ord=3)", "got 3"),
            (
                "linalg.solve(ones((3, 3)), ones((2, 1)))",
                "do not have the matrices' 3 rows",
            ),
            (
                "linalg.pinv(ones((3, 3)), rtol='x')",
                "rtol must be a number",
            ),
            (
                "linalg.matrix_rank(ones((2, 3, 3)), rtol=ones(3))",
                "broadcast",
            ),
            (
                "linalg.lstsq(ones((3, 3, 3)), ones(3))",
                "needs a matrix (2-D)",
            ),
            (
                "linalg.matrix_power(ones((3, 2)), 2)",
                "needs square matrices",
            ),
        ] {
            let e = evaluate(program).unwrap_err();
            assert!(e.message.contains(message), "{program}: {e}");
        }
        // A program's own `linalg` is a value like any other.
        let t = evaluate("linalg = ones((2, 3)); linalg.T").unwrap();
        assert_eq!(t.shape(), &[3, 2]);
    }
}
