//! How a reduction folds: its identity and its combining step, once per dtype.
//!
//! Every kernel that folds values (a reduction map, the combine of partials, a scan, the
//! fused kernel's trailing reduction) is written once, generic over [`Fold`], and reached
//! through [`Monoid::visit`] so each loop is monomorphic and vectorizes. A reduction row of
//! the family's table names its monoid; a reduction that folds in a new way (a NaN-skipping
//! max, say) adds a variant here and an `impl Fold`, and no kernel changes.

use crate::ops::family::elementwise::math::{fmax, fmin};
use ndarray::ArrayD;

/// A fold: an associative step with an identity, for the dtypes kernels compute in.
pub trait Fold {
    /// The identity in float64 (also what an empty chunk contributes).
    const F64: f64;
    const I64: i64;
    const U64: u64;
    const BOOL: bool;
    fn f64(a: f64, b: f64) -> f64;
    fn i64(a: i64, b: i64) -> i64;
    fn u64(a: u64, b: u64) -> u64;
    fn bool(a: bool, b: bool) -> bool;

    /// Folds `seg` into `acc`, in order.
    #[inline]
    fn run(acc: f64, seg: &[f64]) -> f64 {
        seg.iter().fold(acc, |a, v| Self::f64(a, *v))
    }

    /// Folds a whole array into one value.
    fn whole(a: &ArrayD<f64>) -> f64 {
        a.iter().fold(Self::F64, |x, v| Self::f64(x, *v))
    }
}

/// A kernel generic over the fold ([`Monoid::visit`] calls it with the right one).
pub trait FoldVisitor {
    type Out;
    fn visit<F: Fold>(self) -> Self::Out;
}

/// The folds reductions use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monoid {
    Add,
    Mul,
    Min,
    Max,
}

impl Monoid {
    /// Runs `v` with this fold.
    #[inline]
    pub fn visit<V: FoldVisitor>(self, v: V) -> V::Out {
        match self {
            Monoid::Add => v.visit::<Add>(),
            Monoid::Mul => v.visit::<Mul>(),
            Monoid::Min => v.visit::<Min>(),
            Monoid::Max => v.visit::<Max>(),
        }
    }

    /// Whether NumPy reduces an empty array with it (`min`/`max` have no identity there,
    /// though partials use ±inf as one).
    pub fn reduces_empty(self) -> bool {
        matches!(self, Monoid::Add | Monoid::Mul)
    }

    /// The elementwise op that folds two arrays (a scan's carry into the next chunk).
    pub fn elementwise(self) -> crate::ops::Op {
        use crate::ops::Op;
        match self {
            Monoid::Add => Op::Add,
            Monoid::Mul => Op::Mul,
            Monoid::Min => Op::Minimum,
            Monoid::Max => Op::Maximum,
        }
    }

    /// The float64 identity.
    pub fn identity(self) -> f64 {
        struct Identity;
        impl FoldVisitor for Identity {
            type Out = f64;
            fn visit<F: Fold>(self) -> f64 {
                F::F64
            }
        }
        self.visit(Identity)
    }

    /// Folds `seg` into one accumulator.
    pub fn fold_run(self, acc: &mut f64, seg: &[f64]) {
        struct Run<'a>(&'a mut f64, &'a [f64]);
        impl FoldVisitor for Run<'_> {
            type Out = ();
            fn visit<F: Fold>(self) {
                *self.0 = F::run(*self.0, self.1);
            }
        }
        self.visit(Run(acc, seg))
    }

    /// Folds a whole block into `acc`: the block's values folded from the identity first,
    /// then that into `acc` (the order the fused kernel's full reductions have always used).
    pub fn fold_block(self, acc: &mut f64, seg: &[f64]) {
        struct Block<'a>(&'a mut f64, &'a [f64]);
        impl FoldVisitor for Block<'_> {
            type Out = ();
            fn visit<F: Fold>(self) {
                *self.0 = F::f64(*self.0, F::run(F::F64, self.1));
            }
        }
        self.visit(Block(acc, seg))
    }

    /// Folds `seg[i]` into `acc[i]`.
    pub fn fold_lanes(self, acc: &mut [f64], seg: &[f64]) {
        struct Lanes<'a>(&'a mut [f64], &'a [f64]);
        impl FoldVisitor for Lanes<'_> {
            type Out = ();
            fn visit<F: Fold>(self) {
                for (a, v) in self.0.iter_mut().zip(self.1) {
                    *a = F::f64(*a, *v);
                }
            }
        }
        self.visit(Lanes(acc, seg))
    }
}

/// `sum`: sums in eight partial sums ([`sum`]); integers wrap; bools or.
pub struct Add;
/// `prod`: integers wrap; bools and.
pub struct Mul;
/// `min`: NaN propagates; bools and (`all`).
pub struct Min;
/// `max`: NaN propagates; bools or (`any`).
pub struct Max;

impl Fold for Add {
    const F64: f64 = 0.0;
    const I64: i64 = 0;
    const U64: u64 = 0;
    const BOOL: bool = false;
    #[inline]
    fn f64(a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline]
    fn i64(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    #[inline]
    fn u64(a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    #[inline]
    fn bool(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline]
    fn run(acc: f64, seg: &[f64]) -> f64 {
        acc + sum(seg)
    }
    fn whole(a: &ArrayD<f64>) -> f64 {
        a.sum()
    }
}

impl Fold for Mul {
    const F64: f64 = 1.0;
    const I64: i64 = 1;
    const U64: u64 = 1;
    const BOOL: bool = true;
    #[inline]
    fn f64(a: f64, b: f64) -> f64 {
        a * b
    }
    #[inline]
    fn i64(a: i64, b: i64) -> i64 {
        a.wrapping_mul(b)
    }
    #[inline]
    fn u64(a: u64, b: u64) -> u64 {
        a.wrapping_mul(b)
    }
    #[inline]
    fn bool(a: bool, b: bool) -> bool {
        a & b
    }
    fn whole(a: &ArrayD<f64>) -> f64 {
        a.product()
    }
}

impl Fold for Min {
    const F64: f64 = f64::INFINITY;
    const I64: i64 = i64::MAX;
    const U64: u64 = u64::MAX;
    const BOOL: bool = true;
    #[inline]
    fn f64(a: f64, b: f64) -> f64 {
        fmin(a, b)
    }
    #[inline]
    fn i64(a: i64, b: i64) -> i64 {
        a.min(b)
    }
    #[inline]
    fn u64(a: u64, b: u64) -> u64 {
        a.min(b)
    }
    #[inline]
    fn bool(a: bool, b: bool) -> bool {
        a & b
    }
}

impl Fold for Max {
    const F64: f64 = f64::NEG_INFINITY;
    const I64: i64 = i64::MIN;
    const U64: u64 = 0;
    const BOOL: bool = false;
    #[inline]
    fn f64(a: f64, b: f64) -> f64 {
        fmax(a, b)
    }
    #[inline]
    fn i64(a: i64, b: i64) -> i64 {
        a.max(b)
    }
    #[inline]
    fn u64(a: u64, b: u64) -> u64 {
        a.max(b)
    }
    #[inline]
    fn bool(a: bool, b: bool) -> bool {
        a | b
    }
}

/// The sum of `seg`, in eight interleaved partial sums added pairwise at the end. A sum in
/// order waits for each add (4 cycles a value, half of `(rand + rand).sum()`'s time); eight
/// side by side fill the vector registers, and round no worse.
pub fn sum(seg: &[f64]) -> f64 {
    let mut part = [0.0f64; 8];
    let groups = seg.chunks_exact(8);
    let tail: f64 = groups.remainder().iter().sum();
    for group in groups {
        for (p, v) in part.iter_mut().zip(group) {
            *p += v;
        }
    }
    let [a, b, c, d, e, f, g, h] = part;
    (((a + b) + (c + d)) + ((e + f) + (g + h))) + tail
}
