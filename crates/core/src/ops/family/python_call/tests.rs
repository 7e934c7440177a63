//! `map_blocks` on the local executor with a Rust runner standing in for Python: the
//! tiling (aligned, broadcast and concatenated inputs), the block index, the result checks.

use super::*;
use crate::array::{ArrayData, DType};
use crate::ops::ChunkSpec;
use crate::tensor::{self, Tensor};
use ndarray::{ArrayD, Axis};
use std::sync::{Arc, Once};

/// Interprets a payload as the name of a test function.
struct TestRunner;

impl ForeignCallRunner for TestRunner {
    fn call(
        &self,
        function: &UserFunction,
        block: &[usize],
        inputs: &[Arc<ArrayData>],
    ) -> std::result::Result<ArrayData, String> {
        let f64s: Vec<ArrayD<f64>> = inputs.iter().map(|a| (**a).clone().to_f64()).collect();
        match function.payload.as_slice() {
            b"add" => Ok(ArrayData::F64(&f64s[0] + &f64s[1])),
            b"sum_axis1" => Ok(ArrayData::F64(f64s[0].sum_axis(Axis(1)))),
            // The block's index, flattened, as a (1, 1) block.
            b"block_id" => {
                let v = block.iter().fold(0usize, |n, b| n * 10 + b) as i64;
                Ok(ArrayData::I64(ArrayD::from_elem(vec![1, 1], v)))
            }
            b"raise" => Err("ValueError: boom".into()),
            _ => Err(format!("unknown test function {:?}", function.name)),
        }
    }
}

fn runner() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| register_runner(Arc::new(TestRunner)));
}

fn call(
    name: &str,
    out_splits: Vec<Vec<usize>>,
    dtype: DType,
    inputs: Vec<Vec<Option<u32>>>,
) -> BlockCall {
    BlockCall {
        function: UserFunction::new(name, name.as_bytes().to_vec()),
        out_splits,
        dtype,
        inputs,
    }
}

fn run(outputs: &[&Tensor]) -> crate::error::Result<Vec<ArrayData>> {
    runner();
    let graph = Tensor::graph(outputs);
    graph.validate()?;
    crate::executor::compute(outputs, &Default::default(), 2)
}

fn rand(shape: &[usize], chunks: &[usize], seed: u64) -> Tensor {
    tensor::rand(shape, ChunkSpec::PerDim(chunks.into()), Some(seed)).unwrap()
}

#[test]
fn two_inputs_block_by_block_match_the_whole_sum() {
    let (x, y) = (rand(&[7, 5], &[3, 2], 1), rand(&[7, 5], &[3, 2], 2));
    let c = call(
        "add",
        vec![vec![3, 3, 1], vec![2, 2, 1]],
        DType::F64,
        vec![vec![Some(0), Some(1)]; 2],
    );
    let z = map_blocks(c, vec![x.clone(), y.clone()]).unwrap();
    let got = run(&[&x, &y, &z]).unwrap();
    let want = &got[0].clone().to_f64() + &got[1].clone().to_f64();
    assert_eq!(got[2].clone().to_f64(), want);
}

#[test]
fn a_one_block_input_is_broadcast_and_an_unmapped_axis_is_whole() {
    // y: one row in one block, broadcast to every block of x.
    let (x, y) = (rand(&[6, 4], &[2, 4], 3), rand(&[1, 4], &[1, 4], 4));
    let add = call(
        "add",
        vec![vec![2, 2, 2], vec![4]],
        DType::F64,
        vec![vec![Some(0), Some(1)]; 2],
    );
    let z = map_blocks(add, vec![x.clone(), y.clone()]).unwrap();
    let got = run(&[&x, &y, &z]).unwrap();
    assert_eq!(
        got[2].clone().to_f64(),
        &got[0].clone().to_f64() + &got[1].clone().to_f64()
    );
    // drop_axis: axis 1 of x (two chunks) is concatenated, the function sums it away.
    let x2 = rand(&[6, 4], &[2, 3], 5);
    let sum = call(
        "sum_axis1",
        vec![vec![2, 2, 2]],
        DType::F64,
        vec![vec![Some(0), None]],
    );
    let s = map_blocks(sum, vec![x2.clone()]).unwrap();
    let got = run(&[&x2, &s]).unwrap();
    assert_eq!(
        got[1].clone().to_f64(),
        got[0].clone().to_f64().sum_axis(Axis(1))
    );
}

#[test]
fn the_function_sees_its_block_index() {
    let x = rand(&[4, 6], &[2, 2], 1);
    let c = call(
        "block_id",
        vec![vec![1, 1], vec![1, 1, 1]],
        DType::I64,
        vec![vec![Some(0), Some(1)]],
    );
    let z = map_blocks(c, vec![x]).unwrap();
    let got = run(&[&z]).unwrap();
    let want = ArrayD::from_shape_vec(vec![2, 3], vec![0i64, 1, 2, 10, 11, 12]).unwrap();
    assert_eq!(got[0], ArrayData::I64(want));
}

#[test]
fn a_block_of_another_shape_or_dtype_fails_naming_the_block() {
    let x = rand(&[4], &[2], 1);
    // Blocks declared (2,) and (3,); the function returns (2,) for both: only block 1 fails.
    let c = call("add", vec![vec![2, 3]], DType::F64, vec![vec![Some(0)]; 2]);
    let z = map_blocks(c, vec![x.clone(), x.clone()]).unwrap();
    let err = run(&[&z]).unwrap_err().to_string();
    assert!(
        err.contains("block (1,)") && err.contains("(2,) float64") && err.contains("(3,) float64"),
        "{err}"
    );
    let c = call("add", vec![vec![2, 2]], DType::I64, vec![vec![Some(0)]; 2]);
    let z = map_blocks(c, vec![x.clone(), x]).unwrap();
    let err = run(&[&z]).unwrap_err().to_string();
    assert!(err.contains("float64") && err.contains("int64"), "{err}");
}

#[test]
fn an_exception_fails_the_task_with_its_text_and_block() {
    let x = rand(&[4], &[2], 1);
    let c = call("raise", vec![vec![2, 2]], DType::F64, vec![vec![Some(0)]]);
    let z = map_blocks(c, vec![x]).unwrap();
    let err = run(&[&z]).unwrap_err().to_string();
    assert!(
        err.contains("ValueError: boom") && err.contains("raise raised on block"),
        "{err}"
    );
}

#[test]
fn bad_calls_are_refused_when_built() {
    let x = rand(&[4, 4], &[2, 2], 1);
    // Index of the wrong length, an axis named twice, a payload that is not its hash.
    let c = call("add", vec![vec![4]], DType::F64, vec![vec![Some(0)]]);
    assert!(map_blocks(c, vec![x.clone()])
        .unwrap_err()
        .to_string()
        .contains("names 1 axes"));
    let c = call(
        "add",
        vec![vec![2, 2], vec![4]],
        DType::F64,
        vec![vec![Some(0), Some(0)]],
    );
    assert!(map_blocks(c, vec![x.clone()])
        .unwrap_err()
        .to_string()
        .contains("twice"));
    let mut c = call(
        "add",
        vec![vec![2, 2], vec![2, 2]],
        DType::F64,
        vec![vec![Some(0), Some(1)]],
    );
    c.function.payload.push(0);
    assert!(map_blocks(c, vec![x.clone()])
        .unwrap_err()
        .to_string()
        .contains("hash"));
    // Block counts that do not line up fail at tiling, naming the input and axes.
    let c = call(
        "add",
        vec![vec![1, 1, 1, 1], vec![4]],
        DType::F64,
        vec![vec![Some(0), None]],
    );
    let z = map_blocks(c, vec![x]).unwrap();
    let err = run(&[&z]).unwrap_err().to_string();
    assert!(
        err.contains("input 0") && err.contains("2 blocks on axis 0"),
        "{err}"
    );
}

#[test]
fn the_function_bytes_are_in_the_chunk_graph_once() {
    let x = rand(&[100], &[1], 1);
    let c = call(
        "add",
        vec![vec![1; 100]],
        DType::F64,
        vec![vec![Some(0)]; 2],
    );
    let z = map_blocks(c, vec![x.clone(), x]).unwrap();
    let graph = Tensor::graph(&[&z]);
    let chunks = crate::prepare::tile::tile(&graph, &crate::config::TaskConfig::default()).unwrap();
    let calls = chunks
        .args
        .iter()
        .filter(|a| matches!(a, OpArgs::MapBlocks(_)))
        .count();
    assert_eq!(calls, 1);
    assert_eq!(uses_code(&graph), vec!["add".to_string()]);
}
