//! Every op, and composed expressions, through tile → optimize → fuse → color → assign →
//! local execution, compared with the independent whole-array evaluation, under several chunk
//! sizes (ragged last chunks and 1-element chunks included), fusion on and off.

mod common;

use ares_core::array::{DType, Scalar};
use ares_core::ops::Op;
use ares_core::tensor::{self, concatenate, SliceArg, Tensor};
use common::check;

const CHUNKS_1D: [usize; 4] = [1, 3, 7, 100];

fn r(shape: &[usize], chunk: impl Into<ares_core::ops::ChunkSpec>, seed: u64) -> Tensor {
    tensor::rand(shape, chunk, Some(seed)).unwrap()
}

fn range(a: i64, b: i64, step: i64, chunk: usize) -> Tensor {
    tensor::arange(Scalar::I64(a), Scalar::I64(b), Scalar::I64(step), chunk).unwrap()
}

#[test]
fn creation_ops() {
    for c in CHUNKS_1D {
        check(&r(&[23], c, 5), &format!("rand chunk {c}"));
        check(&tensor::randn(&[23], c, Some(9)).unwrap(), "randn");
        check(&tensor::zeros(&[23], c).unwrap(), "zeros");
        check(&tensor::ones(&[23], c).unwrap(), "ones");
        check(&tensor::full(&[23], Scalar::I64(7), c).unwrap(), "full int");
        check(&range(-5, 40, 2, c), "arange int");
        check(
            &tensor::arange(Scalar::F64(0.5), Scalar::F64(3.0), Scalar::F64(0.25), c).unwrap(),
            "arange float",
        );
        check(&tensor::linspace(-1.0, 1.0, 23, c).unwrap(), "linspace");
    }
    check(&r(&[5, 7], [2, 3], 1), "rand 2-D");
}

#[test]
fn unary_and_binary_elementwise() {
    for c in CHUNKS_1D {
        let a = r(&[31], c, 1);
        let b = r(&[31], c + 2, 2);
        for op in [
            Op::Neg,
            Op::Abs,
            Op::Sqrt,
            Op::Exp,
            Op::Log,
            Op::Sin,
            Op::Cos,
        ] {
            check(&a.unary(op).unwrap(), &format!("{op} chunk {c}"));
        }
        for op in [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Div,
            Op::Pow,
            Op::Maximum,
            Op::Minimum,
            Op::Eq,
            Op::Ne,
            Op::Lt,
            Op::Le,
            Op::Gt,
            Op::Ge,
        ] {
            check(&a.elementwise(op, &b).unwrap(), &format!("{op} chunk {c}"));
            check(
                &a.binary_scalar(op, Scalar::F64(0.5), false).unwrap(),
                &format!("{op} scalar right"),
            );
            check(
                &a.binary_scalar(op, Scalar::F64(0.5), true).unwrap(),
                &format!("{op} scalar left"),
            );
        }
        let i = range(0, 31, 1, c);
        check(&(&i * 3.0).unwrap(), "int * float");
        check(
            &i.binary_scalar(Op::Add, Scalar::I64(2), false).unwrap(),
            "int + int",
        );
        check(
            &i.binary_scalar(Op::Pow, Scalar::I64(2), false).unwrap(),
            "int ** int",
        );
        check(
            &i.binary_scalar(Op::Gt, Scalar::I64(10), false)
                .unwrap()
                .astype(DType::I64)
                .unwrap(),
            "bool astype int",
        );
    }
}

#[test]
fn broadcasting_unifies_chunks() {
    let a = r(&[6, 5], [4, 2], 1);
    let row = r(&[5], 3, 2);
    let col = r(&[6, 1], [5, 1], 3);
    check(&(&a + &row).unwrap(), "matrix + row");
    check(&(&a * &col).unwrap(), "matrix * column");
    check(&(&col - &row).unwrap(), "column - row (outer)");
}

#[test]
fn reductions() {
    let a = r(&[9, 13], [2, 5], 4);
    for op in [Op::Sum, Op::Prod, Op::Min, Op::Max] {
        for axes in [None, Some(vec![0]), Some(vec![1]), Some(vec![-1, 0])] {
            for keep in [false, true] {
                let t = a.reduce(op, axes.as_deref(), keep).unwrap();
                check(&t, &format!("{op} axes {axes:?} keepdims {keep}"));
            }
        }
    }
    for c in CHUNKS_1D {
        let v = r(&[50], c, 8);
        check(&v.mean(None, false).unwrap(), &format!("mean chunk {c}"));
        check(&v.var(None, false, 0).unwrap(), "var");
        check(&v.std(None, false, 1).unwrap(), "std ddof 1");
        check(&range(0, 50, 1, c).sum(None, false).unwrap(), "int sum");
        check(
            &v.binary_scalar(Op::Gt, Scalar::F64(0.5), false)
                .unwrap()
                .sum(None, false)
                .unwrap(),
            "count",
        );
    }
    check(&a.mean(Some(&[0]), true).unwrap(), "mean axis 0 keepdims");
    check(&a.var(Some(&[1]), false, 0).unwrap(), "var axis 1");
}

#[test]
fn matmul_and_transpose() {
    let a = r(&[7, 9], [3, 4], 1);
    let b = r(&[9, 5], [2, 5], 2);
    check(&a.matmul(&b).unwrap(), "matmul with mismatched k splits");
    check(&a.transpose(None).unwrap(), "transpose");
    check(&a.matmul(&a.transpose(None).unwrap()).unwrap(), "a @ a.T");
    let m = tensor::ones(&[30, 20], [7, 6]).unwrap();
    check(
        &m.dot(&m.transpose(None).unwrap())
            .unwrap()
            .sum(None, false)
            .unwrap(),
        "sum(m @ m.T)",
    );
    // Stacks of matrices: batch dims chunked unevenly, broadcast on either side, against a
    // plain matrix, and with the shared axis cut differently on the two sides.
    let s = r(&[5, 1, 6, 4], [2, 1, 4, 3], 4);
    let t = r(&[3, 4, 7], [2, 2, 3], 5);
    check(&s.matmul(&t).unwrap(), "(5, 1, 6, 4) @ (3, 4, 7)");
    check(
        &t.matmul(&r(&[7, 2], [7, 1], 6)).unwrap(),
        "(3, 4, 7) @ (7, 2)",
    );
    let u = r(&[2, 7, 4], [1, 7, 1], 7);
    check(&u.matmul_nd(&r(&[4], [3], 8)).unwrap(), "stack @ vector");
}

#[test]
fn slicing() {
    let a = r(&[20, 11], [6, 4], 3);
    let s = |start, stop, step| SliceArg::Range { start, stop, step };
    let cases: Vec<Vec<SliceArg>> = vec![
        vec![s(Some(2), Some(17), Some(3))],
        vec![s(None, None, Some(-1)), s(None, None, Some(-2))],
        vec![SliceArg::Index(-1)],
        vec![s(Some(5), Some(6), None), SliceArg::Index(3)],
        vec![s(Some(-3), None, None), s(Some(1), Some(10), Some(4))],
        vec![s(Some(15), Some(2), Some(-4))],
        vec![s(Some(4), Some(4), None)],
    ];
    for idx in cases {
        check(&a.slice(&idx).unwrap(), &format!("slice {idx:?}"));
    }
    for c in CHUNKS_1D {
        let v = range(0, 100, 1, c);
        check(
            &v.slice(&[s(Some(10), Some(90), Some(7))]).unwrap(),
            "1-D step slice",
        );
        check(
            &v.slice(&[s(None, None, Some(-3))])
                .unwrap()
                .sum(None, false)
                .unwrap(),
            "sum of reversed",
        );
    }
}

#[test]
fn concatenate_rechunk_reshape() {
    let a = r(&[7, 4], [3, 4], 1);
    let b = range(0, 12, 1, 8).reshape(&[3, 4]).unwrap();
    check(
        &concatenate(&[a.clone(), b.clone()], 0).unwrap(),
        "concat mixed dtypes",
    );
    check(
        &concatenate(&[a.clone(), a.clone()], 1).unwrap(),
        "concat axis 1",
    );
    check(&a.rechunk([2, 3]).unwrap(), "rechunk");
    check(
        &a.rechunk(1).unwrap().sum(Some(&[0]), false).unwrap(),
        "rechunk to single elements",
    );
    let v = range(0, 24, 1, 6);
    check(&v.reshape(&[4, 6]).unwrap(), "reshape split");
    check(
        &v.reshape(&[4, -1]).unwrap().reshape(&[24]).unwrap(),
        "reshape round trip",
    );
    let m = r(&[6, 4], [2, 4], 3);
    check(&m.reshape(&[24]).unwrap(), "reshape merge");
    check(&m.reshape(&[3, 2, 4]).unwrap(), "reshape split leading");
    // Chunks of 5 cannot hold whole rows of 4: the reshape goes through whole rows.
    for c in [5, 7] {
        let v = range(0, 60, 1, c);
        check(&v.reshape(&[3, 4, 5]).unwrap(), "reshape through rows");
        let m = v.reshape(&[3, 4, 5]).unwrap().rechunk([2, 3, 2]).unwrap();
        check(&m.reshape(&[5, 12]).unwrap(), "reshape regridded");
        check(&m.reshape(&[1, 60, 1]).unwrap(), "reshape to unit dims");
    }
}

#[test]
fn composed_expressions() {
    for c in [1, 4, 10, 64] {
        let a = r(&[64], c, 11);
        let b = r(&[64], c, 12);
        let e1 = (&a + &b).unwrap().sum(None, false).unwrap();
        check(&e1, &format!("(a + b).sum() chunk {c}"));
        let e2 = (&(&a * 2.0).unwrap() - &b.exp().unwrap())
            .unwrap()
            .abs()
            .unwrap()
            .sqrt()
            .unwrap()
            .max(None, false)
            .unwrap();
        check(&e2, "chain with reduction");
        let e3 = (&(&a - &a.mean(None, true).unwrap()).unwrap() / &b.std(None, true, 0).unwrap())
            .unwrap();
        check(&e3, "standardize");
    }
    let m = tensor::ones(&[300, 200], [64, 50]).unwrap();
    let mt = m.matmul(&m.transpose(None).unwrap()).unwrap();
    let sl = mt
        .slice(&[
            SliceArg::Range {
                start: None,
                stop: None,
                step: Some(2),
            },
            SliceArg::Range {
                start: Some(10),
                stop: None,
                step: None,
            },
        ])
        .unwrap();
    check(
        &sl.sum(None, false).unwrap(),
        "sum(matmul(m, m.T)[::2, 10:])",
    );
}

#[test]
fn shape_errors_name_the_operation_and_shapes() {
    let a = r(&[3, 4], 2, 1);
    let b = r(&[5], 2, 1);
    let err = (&a + &b).unwrap_err().to_string();
    assert!(
        err.contains("add") && err.contains("(3, 4)") && err.contains("(5,)"),
        "{err}"
    );
    let err = a.matmul(&a).unwrap_err().to_string();
    assert!(err.contains("matmul") && err.contains("4 != 3"), "{err}");
    assert!(a
        .sum(Some(&[2]), false)
        .unwrap_err()
        .to_string()
        .contains("axis 2"));
    assert!(a
        .slice(&[SliceArg::Index(3)])
        .unwrap_err()
        .to_string()
        .contains("out of bounds"));
    assert!(tensor::rand(&[1 << 30, 1 << 30], 1, Some(1))
        .unwrap_err()
        .to_string()
        .contains("limit"));
    assert!(tensor::rand(&[4], 0, Some(1))
        .unwrap_err()
        .to_string()
        .contains("chunk size"));
    assert!(b
        .reshape(&[2, 3])
        .unwrap_err()
        .to_string()
        .contains("cannot reshape"));
    let neg = tensor::ones(&[2], 1)
        .unwrap()
        .binary_scalar(Op::Gt, Scalar::F64(0.0), false)
        .unwrap();
    assert!((-&neg).unwrap_err().to_string().contains("negat"));
}
