//! The reference for the functions issue 12 added (logical functions, clip, expand_dims,
//! squeeze, broadcast_to, stack, split, inner), from NumPy's documentation: logical
//! functions treat any nonzero (and NaN) as true, `clip` is `minimum(maximum(a, lo), hi)`,
//! `stack` inserts a new axis, `split` by sections needs an equal division, `inner` sums over
//! the last axes.

use super::ast::BinOp;
use super::refarr::{self, np_err, unsupported, Arr, R};
use super::refeval::{arr, int, ints, shape, V};
use super::refshape::{self, norm_axis};
use ndarray::{IxDyn, Zip};

type Get<'a> = &'a dyn Fn(usize, &str) -> Option<V>;

fn logical(f: &str, a: &Arr, b: &Arr) -> R<Arr> {
    let sh = refarr::broadcast_shape(&a.shape(), &b.shape())?;
    let (x, y) = (a.to_b(), b.to_b());
    let (x, y) = (
        x.broadcast(IxDyn(&sh)).unwrap(),
        y.broadcast(IxDyn(&sh)).unwrap(),
    );
    Ok(Arr::B(Zip::from(&x).and(&y).map_collect(|p, q| match f {
        "logical_and" => *p && *q,
        "logical_or" => *p || *q,
        _ => *p != *q,
    })))
}

pub fn call(f: &str, pos: &[V], get: Get) -> R<Arr> {
    let a0 = || arr(pos[0].clone());
    match f {
        "logical_and" | "logical_or" | "logical_xor" => logical(f, &a0()?, &arr(pos[1].clone())?),
        "logical_not" => Ok(Arr::B(a0()?.to_b().mapv(|b| !b))),
        "clip" => {
            let mut x = a0()?;
            let given = |i, name| !matches!(get(i, name), None | Some(V::None));
            if !given(1, "a_min") && !given(2, "a_max") {
                // NumPy 2.0 raises, 2.1 and later return the input: not compared.
                return unsupported("clip without bounds");
            }
            for (i, name, op) in [(1, "a_min", BinOp::Max), (2, "a_max", BinOp::Min)] {
                match get(i, name) {
                    None | Some(V::None) => {}
                    Some(v) => x = refarr::binary(op, &x, &arr(v)?)?,
                }
            }
            Ok(x)
        }
        "expand_dims" => {
            let x = a0()?;
            let axes = ints(&get(1, "axis").expect("axis"))?;
            let nd = x.shape().len() + axes.len();
            let mut new = vec![false; nd];
            for a in axes {
                let d = norm_axis(a, nd)?;
                if new[d] {
                    return np_err("repeated axis");
                }
                new[d] = true;
            }
            let mut it = x.shape().into_iter();
            let sh: Vec<usize> = new
                .iter()
                .map(|n| if *n { 1 } else { it.next().unwrap() })
                .collect();
            Ok(refshape::reshape(&x, &sh))
        }
        "squeeze" => {
            let x = a0()?;
            let s = x.shape();
            let drop: Vec<bool> = match get(1, "axis") {
                None | Some(V::None) => s.iter().map(|d| *d == 1).collect(),
                Some(v) => {
                    let mut drop = vec![false; s.len()];
                    for a in ints(&v)? {
                        let d = norm_axis(a, s.len())?;
                        if s[d] != 1 {
                            return np_err("cannot select an axis to squeeze out which has size not equal to one");
                        }
                        if drop[d] {
                            return np_err("repeated axis");
                        }
                        drop[d] = true;
                    }
                    drop
                }
            };
            let sh: Vec<usize> = (0..s.len()).filter(|d| !drop[*d]).map(|d| s[d]).collect();
            Ok(refshape::reshape(&x, &sh))
        }
        "broadcast_to" => {
            let x = a0()?;
            let target = shape(&pos[1])?;
            let s = x.shape();
            let ok = s.len() <= target.len()
                && s.iter()
                    .rev()
                    .zip(target.iter().rev())
                    .all(|(a, b)| a == b || *a == 1);
            if !ok {
                return np_err("operands could not be broadcast together with remapped shapes");
            }
            let t = IxDyn(&target);
            Ok(match &x {
                Arr::B(a) => Arr::B(a.broadcast(t).unwrap().to_owned()),
                Arr::I(a) => Arr::I(a.broadcast(t).unwrap().to_owned()),
                Arr::F(a) => Arr::F(a.broadcast(t).unwrap().to_owned()),
            })
        }
        "stack" => {
            let V::Tuple(items) = &pos[0] else {
                return unsupported("stack of a non-tuple");
            };
            let items: Vec<Arr> = items.iter().cloned().map(arr).collect::<R<_>>()?;
            let axis = get(1, "axis").map_or(Ok(0), |v| int(&v))?;
            let Some(first) = items.first() else {
                return np_err("need at least one array to stack");
            };
            let s = first.shape();
            if items.iter().any(|x| x.shape() != s) {
                return np_err("all input arrays must have the same shape");
            }
            let d = norm_axis(axis, s.len() + 1)?;
            let mut sh = s.clone();
            sh.insert(d, 1);
            let parts: Vec<Arr> = items.iter().map(|x| refshape::reshape(x, &sh)).collect();
            refshape::concatenate(&parts, d as i64)
        }
        "inner" => {
            let (a, b) = (a0()?, arr(pos[1].clone())?);
            let (sa, sb) = (a.shape(), b.shape());
            if sa.is_empty() || sb.is_empty() {
                return refarr::binary(BinOp::Mul, &a, &b);
            }
            let k = *sa.last().unwrap();
            if k != *sb.last().unwrap() {
                return np_err("shapes not aligned");
            }
            let m: usize = sa[..sa.len() - 1].iter().product();
            let n: usize = sb[..sb.len() - 1].iter().product();
            let a2 = refshape::reshape(&a, &[m, k]);
            let b2 = refshape::transpose(&refshape::reshape(&b, &[n, k]), None)?;
            let r = refarr::matmul(&a2, &b2)?;
            let mut out: Vec<usize> = sa[..sa.len() - 1].to_vec();
            out.extend(&sb[..sb.len() - 1]);
            Ok(refshape::reshape(&r, &out))
        }
        f => super::refnew::call(f, pos, get),
    }
}

/// `split(ary, sections | (indices...), axis=0)`: a tuple of arrays.
pub fn split(pos: &[V], get: Get) -> R<V> {
    let x = arr(pos[0].clone())?;
    let axis = get(2, "axis").map_or(Ok(0), |v| int(&v))?;
    let s = x.shape();
    let d = norm_axis(axis, s.len())?;
    let n = s[d];
    // NumPy slices `ary[cut_i:cut_{i+1}]` along the axis with the raw cut points.
    let cuts: Vec<i64> = match &pos[1] {
        V::Tuple(items) => {
            let mut cuts = vec![0];
            for it in items {
                cuts.push(int(it)?);
            }
            cuts.push(n as i64);
            cuts
        }
        v => {
            let k = int(v)?;
            if k <= 0 || n % k as usize != 0 {
                return np_err("array split does not result in an equal division");
            }
            let len = (n / k as usize) as i64;
            (0..=k).map(|i| i * len).collect()
        }
    };
    let parts = cuts
        .windows(2)
        .map(|w| {
            let mut items: Vec<refshape::Item> = (0..d)
                .map(|_| refshape::Item::Slice(None, None, None))
                .collect();
            items.push(refshape::Item::Slice(Some(w[0]), Some(w[1]), None));
            refshape::index(&x, &items).map(V::A)
        })
        .collect::<R<_>>()?;
    Ok(V::Tuple(parts))
}
