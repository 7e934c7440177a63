//! Ares' one documented deviation from NumPy: `reshape` must be chunk-aligned ("each input
//! chunk must map to whole rows of the new shape"; otherwise preparation fails and says to
//! rechunk). The reference reads the input's chunking from the program text, for the forms
//! the generator emits: `rechunk(x, c)` and creation calls with or without `chunk=`.

use super::ast::Expr;
use super::refarr::{unsupported, R};
use super::refshape::ares_only;

/// Chunk lengths along each dim of a shape for a `chunk=` value (int or tuple), as the README
/// describes: equal chunks, the last one may be smaller.
fn splits(shape: &[usize], chunk: &Expr) -> Option<Vec<Vec<usize>>> {
    let per_dim: Vec<usize> = match chunk {
        Expr::Int(c) => vec![*c as usize; shape.len()],
        Expr::Tuple(items) => items
            .iter()
            .map(|i| match i {
                Expr::Int(c) => Some(*c as usize),
                _ => None,
            })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    if per_dim.len() != shape.len() || per_dim.contains(&0) {
        return None;
    }
    Some(
        shape
            .iter()
            .zip(&per_dim)
            .map(|(n, c)| {
                let mut v = vec![*c; n / c];
                if n % c != 0 {
                    v.push(n % c);
                }
                v
            })
            .collect(),
    )
}

/// The chunking of `e`, when the program text says it.
fn layout(e: &Expr, shape: &[usize]) -> Option<Vec<Vec<usize>>> {
    let Expr::Call {
        func, args, kwargs, ..
    } = e
    else {
        return None;
    };
    let chunk = kwargs.iter().find(|(k, _)| k == "chunk").map(|(_, v)| v);
    match (func.as_str(), chunk) {
        ("rechunk", _) => splits(shape, args.get(1)?),
        ("arange" | "zeros" | "ones" | "full" | "linspace", Some(c)) => splits(shape, c),
        // Without `chunk=`, chunks hold about 2^20 elements: one chunk for test sizes.
        ("arange" | "zeros" | "ones" | "full" | "linspace", None) => {
            Some(shape.iter().map(|n| vec![*n]).collect())
        }
        _ => None,
    }
}

/// Ok if ares can reshape `input` (of `in_shape`) to `target`; `Fail::AresOnly` if its
/// chunks do not hold whole rows of the new shape.
pub fn check_reshape(input: &Expr, in_shape: &[usize], target: &[usize]) -> R<()> {
    if in_shape.contains(&0) {
        return Ok(()); // no data: NumPy accepts, so must ares
    }
    let Some(splits) = layout(input, in_shape) else {
        return unsupported("reshape of an input whose chunking the test does not know");
    };
    if splits.iter().all(|s| s.len() <= 1) {
        return Ok(());
    }
    if in_shape.len() != 1 {
        return unsupported("reshape of a multi-chunk N-D input");
    }
    // 1-D: every chunk must hold whole rows, rows being the product of the target's dims
    // after its first dim of length != 1.
    let outs: Vec<usize> = target.iter().copied().filter(|d| *d != 1).collect();
    let row: usize = outs.iter().skip(1).product();
    if splits[0].iter().all(|s| s % row == 0) {
        Ok(())
    } else {
        ares_only(format!(
            "reshape {in_shape:?} -> {target:?} is not chunk-aligned"
        ))
    }
}
