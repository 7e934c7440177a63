//! Unit tests of the fused kernel's planner and block evaluator.

use super::*;
use crate::ids::ArgsIdx;

/// Step `op` of a FUSE node with its arguments at `args` of the table, on the first input.
fn step(op: Op, args: u32) -> FuseStep {
    FuseStep {
        op,
        args: ArgsIdx(args),
        position: 0,
    }
}

/// A reduction over axis 0, dropping it.
fn sum_axis0() -> OpArgs {
    OpArgs::Reduce {
        axes: [0].into_iter().collect(),
        keepdims: false,
    }
}

/// `where` heads a lane segment: FUSE[where, multiply by 2, sum] in one pass, NaN kept.
#[test]
fn where_heads_a_lane_segment() {
    let table = vec![
        OpArgs::None,
        OpArgs::Scalar {
            value: crate::array::Scalar::F64(2.0),
            scalar_left: false,
        },
        sum_axis0(),
    ];
    let steps = [step(Op::Where, 0), step(Op::Mul, 1), step(Op::Sum, 2)];
    let dtypes = [DType::Bool, DType::F64, DType::F64];
    let plan = plan_segment(&steps, 0, &table, &dtypes, false).expect("a lane plan");
    assert_eq!((plan.lanes.len(), plan.end), (2, 3));
    let c = ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[3]), vec![true, false, true]).unwrap());
    let x = ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![1.0, f64::NAN, 4.0]).unwrap());
    let y = ArrayData::F64(ArrayD::from_elem(IxDyn(&[]), -1.0));
    let got = run_fused(&steps, &table, &[&c, &x, &y]).unwrap();
    assert_eq!(got.get_flat(0), Some(crate::array::Scalar::F64(8.0)));
    let x = ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![1.0, 0.0, f64::NAN]).unwrap());
    let got = run_fused(&steps, &table, &[&c, &x, &y]).unwrap();
    assert!(got.get_flat(0).unwrap().as_f64().is_nan());
}

/// Generated operands (`prepare::fuse` puts two creation steps before their binary step):
/// streamed block by block, the values are those of the creation kernels made whole and the
/// binary kernel applied to them; with a reduction after, the fold of those values (to
/// rounding: the two folds group their sums differently).
#[test]
fn generated_operands_equal_the_whole_kernels() {
    use crate::array::Scalar;
    use crate::ops::Fill;
    let shape: crate::array::Shape = [5, 3000].into_iter().collect();
    let (a, b) = (Fill::Uniform { seed: 7 }, Fill::Normal { seed: 8 });
    let table = vec![
        OpArgs::Fill {
            fill: a,
            shape: shape.clone(),
        },
        OpArgs::Fill {
            fill: b,
            shape: shape.clone(),
        },
        OpArgs::None,
        OpArgs::Reduce {
            axes: [1].into_iter().collect(),
            keepdims: false,
        },
    ];
    // The operands are chunks 4 and 9 of their ops: each generates with its own seed.
    let step = |op, i| FuseStep {
        op,
        args: ArgsIdx(i),
        position: [4, 9, 0, 0][i as usize],
    };
    let (seed_a, seed_b) = (crate::ops::chunk_seed(7, 4), crate::ops::chunk_seed(8, 9));
    let x = crate::ops::family::creation::kernels::fill(&Fill::Uniform { seed: seed_a }, &shape)
        .unwrap();
    let y = crate::ops::family::creation::kernels::fill(&Fill::Normal { seed: seed_b }, &shape)
        .unwrap();
    let want = crate::kernels::apply(Op::Sub, &OpArgs::None, &table, &[&x, &y]).unwrap();
    let steps = [step(Op::Rand, 0), step(Op::Randn, 1), step(Op::Sub, 2)];
    assert_eq!(run_fused(&steps, &table, &[]).unwrap(), want, "x - y");
    let steps = [
        step(Op::Rand, 0),
        step(Op::Randn, 1),
        step(Op::Sub, 2),
        step(Op::Sum, 3),
    ];
    let got = run_fused(&steps, &table, &[]).unwrap();
    let want = crate::kernels::apply(Op::Sum, &table[3], &table, &[&want]).unwrap();
    for i in 0..5 {
        let (g, w) = (got.get_flat(i).unwrap(), want.get_flat(i).unwrap());
        let (g, w) = (g.as_f64(), w.as_f64());
        // The fused fold adds in eight partial sums, the reduction kernel in its own order.
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "row {i}: {g} vs {w}"
        );
    }
    assert!(matches!(got.get_flat(0), Some(Scalar::F64(_))));
    // Made whole when they do not stream: the same values.
    let (out, end) = generated_operands_whole(&steps, &table).unwrap().unwrap();
    assert_eq!(
        (out, end),
        (
            crate::kernels::apply(Op::Sub, &OpArgs::None, &table, &[&x, &y]).unwrap(),
            3
        )
    );
}

/// Shifts never join a lane segment (their values are integers): FUSE[multiply, greater,
/// left_shift, sum] plans the first two as lanes, then runs the shift and the sum in the
/// ordinary kernels, with the values of the unfused chain.
#[test]
fn shifts_run_outside_the_lanes() {
    use crate::array::Scalar;
    let scalar = |value| OpArgs::Scalar {
        value,
        scalar_left: false,
    };
    let table = vec![
        scalar(Scalar::F64(2.0)),
        scalar(Scalar::F64(1.0)),
        scalar(Scalar::I64(62)),
        sum_axis0(),
    ];
    let steps = [
        step(Op::Mul, 0),
        step(Op::Gt, 1),
        step(Op::LeftShift, 2),
        step(Op::Sum, 3),
    ];
    let plan = plan_segment(&steps, 0, &table, &[DType::F64], false).expect("a lane plan");
    assert_eq!(
        (plan.lanes.len(), plan.end),
        (2, 2),
        "multiply and greater only"
    );
    assert!(plan_segment(&steps, 2, &table, &[DType::Bool], false).is_none());
    let x = ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0, -1.0, 2.0, 0.5]).unwrap());
    let mut want = x.clone();
    for s in &steps {
        want = crate::kernels::apply(s.op, &table[s.args.index()], &table, &[&want]).unwrap();
    }
    let got = run_fused(&steps, &table, &[&x]).unwrap();
    assert_eq!(got, want);
    // Two elements are greater than 1 after doubling: 2^62 + 2^62 wraps to i64::MIN.
    assert_eq!(got.get_flat(0), Some(Scalar::I64(i64::MIN)));
}
