//! The `linalg` namespace of the expression language: `linalg.qr(x, mode='reduced')`,
//! `linalg.svd(x, full_matrices=False)`, `linalg.svdvals(x)`, the one-chunk `linalg.cholesky(x,
//! upper=False)`, `linalg.inv`, `linalg.det`, `linalg.eigh`, `linalg.eigvalsh`, and
//! `linalg.svd_compressed(x, k, n_power_iter=0, seed=None)`. A function with several
//! results returns a tuple, unpacked by `q, r = linalg.qr(x)`.

use super::args::{to_bool, to_usize, Args};
use super::eval::{Ctx, Value};
use super::{err, ExprError};
use crate::tensor::Tensor;

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
                match a.get(1, "mode") {
                    None => {}
                    Some((Value::Str(m), _)) if m == "reduced" => {}
                    Some((_, mp)) => return err(mp, "linalg.qr: only mode='reduced' is supported"),
                }
                tuple(x.qr().map(|p| p.to_vec()), p)
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
            "linalg.svdvals" | "linalg.inv" | "linalg.det" | "linalg.eigvalsh" => {
                a.check(1, &["x"])?;
                let x = a.tensor(0, "x")?;
                let r = match name {
                    "linalg.svdvals" => x.svdvals(),
                    "linalg.inv" => x.inv(),
                    "linalg.det" => x.det(),
                    _ => x.eigvalsh(),
                };
                r.map(Value::Tensor).or_else(|e| err(p, e.to_string()))
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
                "linalg.qr(ones((4, 2)), mode='complete')",
                "only mode='reduced'",
            ),
            (
                "linalg.svd(ones((4, 2)), full_matrices=True)",
                "only full_matrices=False",
            ),
            (
                "linalg.svd_compressed(ones((4, 2)), 3)",
                "k must be in 1..=2",
            ),
            ("linalg.qr(ones(4))", "needs a matrix (2-D), got shape (4,)"),
            (
                "linalg.frobnicate(ones(4))",
                "unknown function linalg.frobnicate",
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
