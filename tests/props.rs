//! Property tests: random expression trees and chunk sizes evaluate like the whole-array
//! reference; fusion never changes results; initial assignment is balanced.

mod common;

use ares::config::TaskConfig;
use ares_core::ids::TaskId;
use ares_core::ops::Op;
use ares_core::prepare::{prepare, WorkerSlots};
use ares_core::tensor::{self, SliceArg, Tensor};
use common::{assert_close, reference, run};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Node {
    Leaf {
        seed: u64,
        chunk: (usize, usize),
        normal: bool,
    },
    Unary(usize, Box<Node>),
    Binary(usize, Box<Node>, Box<Node>),
    Scalar(usize, f64, bool, Box<Node>),
}

#[derive(Clone, Debug)]
enum Tail {
    Nothing,
    Reduce {
        op: usize,
        axis: Option<i64>,
        keepdims: bool,
    },
    Slice {
        start: i64,
        step: i64,
    },
    Transpose,
}

const UNARY: [Op; 5] = [Op::Neg, Op::Abs, Op::Sin, Op::Cos, Op::Exp];
const BINARY: [Op; 8] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Maximum,
    Op::Minimum,
    Op::Lt,
    Op::Ge,
    Op::Eq,
];
const REDUCE: [Op; 4] = [Op::Sum, Op::Prod, Op::Min, Op::Max];

fn node() -> impl Strategy<Value = Node> {
    let leaf =
        (any::<u64>(), (1usize..9, 1usize..9), any::<bool>()).prop_map(|(seed, chunk, normal)| {
            Node::Leaf {
                seed,
                chunk,
                normal,
            }
        });
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (0..UNARY.len(), inner.clone()).prop_map(|(o, a)| Node::Unary(o, Box::new(a))),
            (0..BINARY.len(), inner.clone(), inner.clone()).prop_map(|(o, a, b)| Node::Binary(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (0..BINARY.len(), -2.0f64..2.0, any::<bool>(), inner)
                .prop_map(|(o, v, l, a)| Node::Scalar(o, v, l, Box::new(a))),
        ]
    })
}

fn tail() -> impl Strategy<Value = Tail> {
    prop_oneof![
        Just(Tail::Nothing),
        (0..REDUCE.len(), prop::option::of(-2i64..2), any::<bool>())
            .prop_map(|(op, axis, keepdims)| Tail::Reduce { op, axis, keepdims }),
        (-5i64..5, prop_oneof![-3i64..0, 1i64..4])
            .prop_map(|(start, step)| Tail::Slice { start, step }),
        Just(Tail::Transpose),
    ]
}

fn build(n: &Node, shape: &[usize]) -> Tensor {
    match n {
        Node::Leaf {
            seed,
            chunk,
            normal,
        } => {
            let c = [chunk.0, chunk.1];
            if *normal {
                tensor::randn(shape, c, Some(*seed))
            } else {
                tensor::rand(shape, c, Some(*seed))
            }
            .unwrap()
        }
        Node::Unary(o, a) => {
            let x = build(a, shape);
            // numpy rejects negating bools too: cast first.
            let x = if x.dtype() == ares_core::array::DType::Bool {
                x.astype(ares_core::array::DType::F64).unwrap()
            } else {
                x
            };
            x.unary(UNARY[*o]).unwrap()
        }
        Node::Binary(o, a, b) => {
            let (x, y) = (build(a, shape), build(b, shape));
            // numpy rejects subtracting bools from bools too: cast one first.
            let x = if BINARY[*o] == Op::Sub
                && x.dtype() == y.dtype()
                && x.dtype() == ares_core::array::DType::Bool
            {
                x.astype(ares_core::array::DType::F64).unwrap()
            } else {
                x
            };
            x.elementwise(BINARY[*o], &y).unwrap()
        }
        Node::Scalar(o, v, left, a) => build(a, shape)
            .binary_scalar(BINARY[*o], ares_core::array::Scalar::F64(*v), *left)
            .unwrap(),
    }
}

fn apply_tail(t: Tensor, tail: &Tail) -> Tensor {
    match tail {
        Tail::Nothing => t,
        Tail::Reduce { op, axis, keepdims } => t
            .reduce(
                REDUCE[*op],
                axis.as_ref().map(std::slice::from_ref),
                *keepdims,
            )
            .unwrap(),
        Tail::Slice { start, step } => t
            .slice(&[SliceArg::Range {
                start: Some(*start),
                stop: None,
                step: Some(*step),
            }])
            .unwrap(),
        Tail::Transpose => t.transpose(None).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_expressions_match_the_reference(tree in node(), tail in tail(), rows in 1usize..12, cols in 1usize..12, combine in 2usize..6) {
        let t = apply_tail(build(&tree, &[rows, cols]), &tail);
        let want = reference::evaluate(&Tensor::graph(&[&t])).remove(0);
        for fuse in [true, false] {
            let config = TaskConfig { fuse_enabled: fuse, combine_size: combine, ..TaskConfig::default() };
            let got = run(&t, &config, 2, 2);
            assert_close(&got, &want, &format!("{tree:?} {tail:?} fuse={fuse}"));
        }
    }

    /// The chunk-count projection behind `limits.max_chunks_per_task` never undercounts.
    #[test]
    fn projected_chunks_bound_what_tiling_creates(tree in node(), tail in tail(), rows in 1usize..12, cols in 1usize..12, combine in 2usize..6) {
        let t = apply_tail(build(&tree, &[rows, cols]), &tail);
        let graph = Tensor::graph(&[&t]);
        let config = TaskConfig { combine_size: combine, ..TaskConfig::default() };
        let p = prepare(&graph, &config, &[WorkerSlots { worker: ares_core::ids::WorkerId(0), slots: 1 }], TaskId(1)).unwrap();
        let projected = ares_core::prepare::limits::projected_chunks(&graph);
        prop_assert!(projected >= p.tiled_chunks as u64, "{tree:?} {tail:?}: projected {projected} < tiled {}", p.tiled_chunks);
    }

    #[test]
    fn initial_assignment_is_balanced(tree in node(), rows in 1usize..40, slots in prop::collection::vec(1usize..5, 1..5)) {
        let t = build(&tree, &[rows, 3]).sum(None, false).unwrap();
        let workers: Vec<WorkerSlots> = slots.iter().enumerate().map(|(i, s)| WorkerSlots { worker: ares_core::ids::WorkerId(i as u32), slots: *s }).collect();
        let p = prepare(&Tensor::graph(&[&t]), &TaskConfig::default(), &workers, TaskId(1)).unwrap();
        let initial = p.subtasks.initial().count();
        let total: usize = slots.iter().sum();
        let mut assigned = 0;
        for (w, n) in &p.assignment {
            let share = initial as f64 * w.slots as f64 / total as f64;
            prop_assert!((*n as f64 - share).abs() < 1.0, "worker {} got {} of {} (share {:.2})", w.worker, n, initial, share);
            assigned += n;
        }
        prop_assert_eq!(assigned, initial);
        prop_assert!(p.subtasks.initial().all(|s| p.subtasks.subtasks[s.index()].worker.is_some()));
    }
}
