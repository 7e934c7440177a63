//! Lane operations of the fused kernel: the sources that fill a block of float64 values
//! (float64, float32 and bool inputs, or a generated stream), and one op applied to the
//! block in place (float32 values ride as float64, rounded back after each op).
//!
//! Kept apart from the block evaluator (`fused`) so each stays readable: this file is the
//! lanes' loops, each a ufunc's float64 loop reached through the ufunc table
//! (`with_unary`/`with_binary`) so every loop is monomorphic and vectorizes; `fused` decides
//! which lanes run and how blocks flow.

use super::generate::Stream;
use super::{kerr, KResult};
use crate::array::ArrayData;
use crate::ops::family::elementwise::math::{BinaryUfunc, BinaryVisitor, UnaryUfunc, UnaryVisitor};
use crate::ops::family::elementwise::{with_binary, with_unary};
use crate::ops::Op;
use ndarray::{ArrayD, IxDyn};
use std::borrow::Cow;

/// An input as a contiguous f64 or bool slice of the segment's full shape, or the values
/// of the creation step that heads the FUSE node, generated block by block.
pub(super) enum Source<'a> {
    F64(Cow<'a, [f64]>),
    F32(Cow<'a, [f32]>),
    Bool(Cow<'a, [bool]>),
    Stream(Stream),
}

impl Source<'_> {
    /// The next block: loads are made in order, from offset 0 on.
    pub(super) fn load(&mut self, off: usize, dst: &mut [f64]) {
        match self {
            Source::Stream(s) => s.fill(dst),
            Source::F64(s) => dst.copy_from_slice(&s[off..off + dst.len()]),
            Source::F32(s) => {
                let n = dst.len();
                for (d, x) in dst.iter_mut().zip(&s[off..off + n]) {
                    *d = *x as f64;
                }
            }
            Source::Bool(s) => {
                let n = dst.len();
                for (d, b) in dst.iter_mut().zip(&s[off..off + n]) {
                    *d = *b as u8 as f64;
                }
            }
        }
    }
}

fn contiguous<'a, T: Clone>(a: &'a ArrayD<T>, shape: &[usize]) -> KResult<Cow<'a, [T]>> {
    if a.shape() == shape {
        if let Some(s) = a.as_slice() {
            return Ok(Cow::Borrowed(s));
        }
    }
    let view = a
        .broadcast(IxDyn(shape))
        .ok_or_else(|| super::KernelError("operands cannot be broadcast".into()))?;
    Ok(Cow::Owned(view.iter().cloned().collect()))
}

pub(super) fn source<'a>(a: &'a ArrayData, shape: &[usize]) -> KResult<Source<'a>> {
    Ok(match a {
        ArrayData::F64(x) => Source::F64(contiguous(x, shape)?),
        ArrayData::F32(x) => Source::F32(contiguous(x, shape)?),
        ArrayData::Bool(x) => Source::Bool(contiguous(x, shape)?),
        ArrayData::I64(_)
        | ArrayData::I32(_)
        | ArrayData::I16(_)
        | ArrayData::I8(_)
        | ArrayData::U64(_)
        | ArrayData::U32(_)
        | ArrayData::U16(_)
        | ArrayData::U8(_) => return kerr("integer input in a float lane segment"),
        ArrayData::C64(_) | ArrayData::C128(_) => {
            return kerr("complex input in a float lane segment")
        }
    })
}

/// A lane of an op: `f32` when it computes in float32 (its values are float32 ones), so an
/// op whose float32 loop is not its float64 loop rounded (`nextafter`, `floor_divide`; see
/// `UnaryUfunc::F32_IS_ROUNDED_F64`) runs that loop.
#[derive(Clone, Copy, Debug)]
pub(super) enum Lane {
    Unary(Op, bool),
    Scalar {
        op: Op,
        value: f64,
        left: bool,
        f32: bool,
    },
    /// A binary op on the segment's two inputs (head only).
    Binary(Op, bool),
    /// `where` on the segment's three inputs (head only): the buffer holds the condition.
    Select,
    ToBool,
    /// Rounds to the nearest float32: runs after every float32 op, so a chain of them gives
    /// NumPy's float32 results (an f64 sum, difference, product, quotient or square root of
    /// two float32 values, rounded once to float32, is the correctly rounded float32 one).
    RoundF32,
    Nop,
}

#[inline]
pub(super) fn map1(buf: &mut [f64], f: impl Fn(f64) -> f64) {
    for x in buf {
        *x = f(*x);
    }
}

#[inline]
pub(super) fn map2(buf: &mut [f64], other: &[f64], f: impl Fn(f64, f64) -> f64) {
    for (x, y) in buf.iter_mut().zip(other) {
        *x = f(*x, *y);
    }
}

/// A unary ufunc's float64 loop over the block (its float32 loop when the block holds
/// float32 values and the op has one of its own).
struct UnaryLane<'a>(&'a mut [f64], bool);

impl UnaryVisitor for UnaryLane<'_> {
    type Out = ();
    fn visit<K: UnaryUfunc>(self) {
        if self.1 && !K::F32_IS_ROUNDED_F64 {
            map1(self.0, |x| f64::from(K::f32(x as f32)))
        } else {
            map1(self.0, K::f64)
        }
    }
}

/// A binary ufunc's float64 loop over the block and the other operand: a block of the
/// segment's second input, or a number on the right or on the left.
enum BinaryLane<'a> {
    Pair(&'a mut [f64], &'a [f64]),
    Right(&'a mut [f64], f64),
    Left(&'a mut [f64], f64),
}

/// `K`'s float32 loop on float64 values that are float32 ones.
fn f32_loop<K: BinaryUfunc>(x: f64, y: f64) -> f64 {
    f64::from(K::f32(x as f32, y as f32))
}

impl BinaryVisitor for BinaryLane<'_> {
    type Out = ();
    fn visit<K: BinaryUfunc>(self) {
        self.run(K::f64)
    }
}

impl BinaryLane<'_> {
    fn run(self, f: impl Fn(f64, f64) -> f64) {
        match self {
            BinaryLane::Pair(buf, other) => map2(buf, other, f),
            BinaryLane::Right(buf, value) => map1(buf, |x| f(x, value)),
            BinaryLane::Left(buf, value) => map1(buf, |x| f(value, x)),
        }
    }
}

/// A binary lane of float32 values: the op's float32 loop if it has one of its own.
struct BinaryLane32<'a>(BinaryLane<'a>);

impl BinaryVisitor for BinaryLane32<'_> {
    type Out = ();
    fn visit<K: BinaryUfunc>(self) {
        if K::F32_IS_ROUNDED_F64 {
            self.0.run(K::f64)
        } else {
            self.0.run(f32_loop::<K>)
        }
    }
}

fn binary_lane(op: Op, f32: bool, lane: BinaryLane<'_>) {
    // Shifts are never planned: their operands are integers, which no lane carries.
    let ran = if f32 {
        with_binary(op, BinaryLane32(lane))
    } else {
        with_binary(op, lane)
    };
    ran.unwrap_or_else(|| unreachable!("{op} is not planned as a lane"))
}

/// Applies `lane` to `buf` in place; `others` holds the head step's other inputs.
pub(super) fn run_lane(lane: Lane, buf: &mut [f64], others: &[&[f64]]) {
    let other = others.first().copied().unwrap_or_default();
    match lane {
        Lane::Select => {
            let (x, y) = (others[0], others[1]);
            for (i, c) in buf.iter_mut().enumerate() {
                *c = if *c != 0.0 { x[i] } else { y[i] };
            }
        }
        Lane::Nop => {}
        Lane::RoundF32 => map1(buf, |x| x as f32 as f64),
        Lane::ToBool => map1(buf, |x| (x != 0.0) as u8 as f64),
        Lane::Unary(op, f32) => with_unary(op, UnaryLane(buf, f32))
            .unwrap_or_else(|| unreachable!("{op} is not planned as a lane")),
        Lane::Binary(op, f32) => binary_lane(op, f32, BinaryLane::Pair(buf, other)),
        Lane::Scalar {
            op,
            value,
            left: false,
            f32,
        } => binary_lane(op, f32, BinaryLane::Right(buf, value)),
        Lane::Scalar {
            op,
            value,
            left: true,
            f32,
        } => binary_lane(op, f32, BinaryLane::Left(buf, value)),
    }
}
