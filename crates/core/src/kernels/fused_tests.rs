//! Unit tests of the fused kernel's planner and block evaluator.

use super::*;
use crate::ids::ArgsIdx;

/// `where` heads a lane segment: FUSE[where, multiply by 2, sum] in one pass, NaN kept.
#[test]
fn where_heads_a_lane_segment() {
    let table = vec![
        OpArgs::None,
        OpArgs::Scalar {
            value: crate::array::Scalar::F64(2.0),
            scalar_left: false,
        },
        OpArgs::Reduce {
            axes: [0].into_iter().collect(),
            keepdims: false,
        },
    ];
    let step = |op, i| FuseStep {
        op,
        args: ArgsIdx(i),
    };
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
