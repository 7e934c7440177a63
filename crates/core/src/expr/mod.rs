//! The expression language of `ares explain` and `ares run`: a small numpy-like language.
//!
//! A program is `;`-separated statements, `name = expr` or `expr`; the last expression is the
//! result. Expressions use Python's operators and precedence (`+ - * / ** @`, comparisons,
//! unary `-`), numpy function names with positional and keyword arguments
//! (`sum(x, axis=0, keepdims=True)`), methods (`x.sum()`, `x.T`), tuples for shapes and chunk
//! sizes, and numpy basic slicing (`x[10:90000:7, ::-1]`, `x[-1]`). Every error names the
//! line and column where it happened.

mod args;
mod ast;
mod composed;
mod eval;
mod fft;
mod functions;
mod io;
mod lexer;
mod linalg;
mod parser;
mod rearrange;
mod shape;
mod statistics;
mod table;

pub use eval::Value;
pub use table::{call, CONSTANTS, FUNCTIONS, OPERATORS};

use crate::tensor::Tensor;
use std::fmt;

/// A position in the source, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// An error with its place in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.pos.line, self.pos.col, self.message
        )
    }
}

impl std::error::Error for ExprError {}

pub(crate) fn err<T>(pos: Pos, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        pos,
        message: message.into(),
    })
}

/// Parses and evaluates a program; returns the tensor of its last expression.
pub fn evaluate(source: &str) -> Result<Tensor, ExprError> {
    evaluate_with(source, &[])
}

/// Longest program accepted, in bytes.
pub const MAX_PROGRAM_BYTES: usize = 1 << 20;
pub use parser::MAX_DEPTH;

/// Functions of the language called by name (the Python package's entry).
pub mod call;

/// Evaluates with predefined names (a session's named results).
pub fn evaluate_with(source: &str, bindings: &[(String, Tensor)]) -> Result<Tensor, ExprError> {
    if source.len() > MAX_PROGRAM_BYTES {
        return err(
            Pos { line: 1, col: 1 },
            format!(
                "the program has {} bytes, more than the limit of {MAX_PROGRAM_BYTES}",
                source.len()
            ),
        );
    }
    let tokens = lexer::tokenize(source)?;
    let program = parser::parse(&tokens)?;
    eval::run(&program, bindings)
}

/// Chunks per input chunk of the preparation workload: rand a, rand b, multiply, add, exp,
/// subtract, sum map (7) plus about a third for the combine tree.
const CHUNKS_PER_INPUT_CHUNK: f64 = 7.0 + 1.0 / 3.0;

/// The preparation workload with about `chunks` chunks.
pub fn prepare_workload(chunks: usize) -> crate::Result<Tensor> {
    let k = ((chunks as f64 / CHUNKS_PER_INPUT_CHUNK).round() as usize).max(1);
    let program = format!(
        "a = rand({n}, chunk=100, seed=1); b = rand({n}, chunk=100, seed=2); sum(exp(a * 2 + b) - 1)",
        n = k * 100
    );
    evaluate(&program).map_err(|e| crate::AresError::arg("bench", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_the_issue_examples() {
        let t = evaluate("a = rand(1000000, chunk=100000, seed=1); b = rand(1000000, chunk=100000, seed=2); sum(a + b)").unwrap();
        assert_eq!(t.shape(), &[] as &[usize]);
        let t = evaluate(
            "m = ones((300, 200), chunk=(64, 50)); sum(matmul(m, transpose(m))[::2, 10:])",
        )
        .unwrap();
        assert_eq!(t.shape(), &[] as &[usize]);
        let t = evaluate("x = arange(100000, chunk=1000); x[10:90000:7]").unwrap();
        assert_eq!(t.shape(), &[12856]);
        let t =
            evaluate("x = rand(10, 20, chunk=5); y = x.T @ x; y[::-1, 3] ** 2 / 2 - -1").unwrap();
        assert_eq!(t.shape(), &[20]);
    }

    /// Runs `f` on a thread with a 2 MiB stack, the size of the web and runtime threads.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .expect("no stack overflow")
    }

    #[test]
    fn nesting_is_bounded_and_never_overflows_the_stack() {
        let deep =
            |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
        let cases = [
            (deep("(", ")", 200), true),
            (deep("(", ")", 900), false),
            (deep("(", ")", 100_000), false),
            (format!("1{}", "+1".repeat(200)), true),
            (format!("1{}", "+1".repeat(2_200)), false),
            (format!("{}1", "-".repeat(5_000)), false),
            (format!("{}1", "2**".repeat(5_000)), false),
            (deep("sum(", ")", 300), false),
            (format!("ones(3){}", ".T".repeat(5_000)), false),
            (format!("ones(3){}", "[::1]".repeat(5_000)), false),
        ];
        for (source, ok) in cases {
            let what = source[..20.min(source.len())].to_string();
            let result = on_small_stack(move || evaluate(&source).map(|_| ()));
            match (ok, result) {
                (true, Ok(())) => {}
                (false, Err(e)) => assert!(e.message.contains("nested deeper than 256"), "{e}"),
                (ok, r) => panic!("{what}...: expected ok={ok}, got {r:?}"),
            }
        }
        let huge = "1".repeat(MAX_PROGRAM_BYTES + 1);
        assert!(evaluate(&huge).unwrap_err().message.contains("limit"));
    }

    #[test]
    fn a_long_chain_of_statements_builds_and_drops_on_a_small_stack() {
        let source = format!(
            "a = ones(3, chunk=2); {} sum(a)",
            "a = a + 1; ".repeat(60_000)
        );
        let (shape, nodes) = on_small_stack(move || {
            let t = evaluate(&source).unwrap();
            let graph = Tensor::graph(&[&t]);
            let cluster = crate::prepare::uniform_cluster(1, 2);
            let config = crate::config::TaskConfig::default();
            let prepared =
                crate::prepare::prepare(&graph, &config, &cluster, crate::ids::TaskId(1));
            let (results, _) = crate::executor::execute(&prepared.unwrap().subtasks, 2).unwrap();
            assert_eq!(
                results[0].get_flat(0),
                Some(crate::array::Scalar::F64(180_003.0))
            );
            (t.shape().to_vec(), graph.nodes.len())
        });
        assert_eq!((shape, nodes), (vec![], 60_002));
    }

    #[test]
    fn lengths_that_depend_on_the_data_cannot_be_read() {
        let x = "x = sin(arange(20000, chunk=3000))";
        for (read, what) in [
            (
                "x[x > 0].shape[0]",
                "x[mask].shape[0]: the length of x[mask]",
            ),
            (
                "x[x > 0].shape[-1]",
                "x[mask].shape[-1]: the length of x[mask]",
            ),
            ("x[x > 0].shape", "x[mask].shape: the length of x[mask]"),
            ("ones(x[x > 0].shape, chunk=2)", "x[mask].shape: "),
            (
                "unique(x).shape[0] + 1",
                "unique(...).shape[0]: the length of unique(...)",
            ),
            (
                "unique(x, return_counts=True)[1].shape[0]",
                "unique(...).shape[0]",
            ),
        ] {
            let e = evaluate(&format!("{x}; {read}")).unwrap_err();
            assert!(e.message.starts_with(what), "{read}: {e}");
            assert!(
                e.message
                    .contains("depends on the data and is not known before it runs")
                    && e.message.contains("compute the result first"),
                "{e}"
            );
        }
        // Known lengths stay readable, and out-of-range reads are the tuple's error.
        let t = evaluate("x = ones((3, 4), chunk=2); arange(x.shape[-1] * x.shape[0])").unwrap();
        assert_eq!(t.shape(), &[12]);
        let t = evaluate("x = ones((3, 4), chunk=2); zeros(x.shape, chunk=2)").unwrap();
        assert_eq!(t.shape(), &[3, 4]);
        let e = evaluate(&format!("{x}; x[x > 0].shape[1]")).unwrap_err();
        assert!(e.message.contains("index 1 out of range"), "{e}");
        let e = evaluate("(2.5).shape[0]").unwrap_err();
        assert!(e.message.contains("index 0 out of range"), "{e}");
        // The selection itself is still a result.
        assert!(evaluate(&format!("{x}; x[x > 0]")).is_ok());
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = evaluate("a = ones(3, chunk=1);\nb = ones(4, chunk=2);\na + b").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (3, 3), "{e}");
        assert!(
            e.message.contains("(3,)") && e.message.contains("(4,)"),
            "{e}"
        );
        let e = evaluate("sum(ones(3, chunk=1), axis=)").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (1, 28), "{e}");
        let e = evaluate("frobnicate(1)").unwrap_err();
        assert!(e.message.contains("unknown function frobnicate"), "{e}");
        let e = evaluate("ones(3, chunk=1, colour=2)").unwrap_err();
        assert!(e.message.contains("colour"), "{e}");
        let e = evaluate("x = 1 $ 2").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (1, 7), "{e}");
    }
}
