//! The function table: every function of the expression language by name, and [`call`] to
//! run one on values directly, without writing a program.
//!
//! This is the surface a binding uses (the Python package calls `call("where", ...)` with
//! tensors and numbers it already holds): a function added to the language is in the table,
//! and so available to every binding with no code of its own. The names come from the op
//! registry; `tests` check them against the names the evaluator dispatches (by name, or
//! through the ufunc table), so the two cannot drift apart.

use super::eval::{Ctx, Value};
use super::{args::Args, ExprError, Pos};
use std::sync::LazyLock;

/// Every function name the expression language knows, family by family as the op registry
/// ([`crate::ops::registry::OP_REGISTRY`]) lists them. Methods (`x.sum()`) are the same
/// functions with the object as the first argument.
pub static FUNCTIONS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    crate::ops::registry::functions()
        .iter()
        .map(|l| l.function.name)
        .collect()
});

/// Names of values the language predefines (a program's own names shadow the last four).
pub const CONSTANTS: &[&str] = &["True", "False", "None", "nan", "inf", "pi", "e"];

/// The operators of the language and the function each one calls (`-x` is `negative`).
pub const OPERATORS: &[(&str, &str)] = &[
    ("+", "add"),
    ("-", "subtract"),
    ("*", "multiply"),
    ("/", "divide"),
    ("//", "floor_divide"),
    ("%", "remainder"),
    ("**", "power"),
    ("@", "matmul"),
    ("==", "equal"),
    ("!=", "not_equal"),
    ("<", "less"),
    ("<=", "less_equal"),
    (">", "greater"),
    (">=", "greater_equal"),
    ("&", "bitwise_and"),
    ("|", "bitwise_or"),
    ("^", "bitwise_xor"),
    ("<<", "left_shift"),
    (">>", "right_shift"),
    ("~", "invert"),
];

/// Calls function `name` of [`FUNCTIONS`] on values, as `name(positional..., key=value...)`
/// in a program would. A random function without `seed=` gets a fresh seed (different on
/// every call and in every process, as NumPy's unseeded generator), where a program numbers
/// its random calls 0, 1, 2...; pass `seed=` for repeatable numbers. Errors carry position
/// 0:0; their message names the function and the argument.
pub fn call(
    name: &str,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
) -> Result<Value, ExprError> {
    let at = Pos::default();
    if !FUNCTIONS.contains(&name) {
        return super::err(at, format!("unknown function {name}"));
    }
    let args = Args {
        func: name.to_string(),
        pos: at,
        positional: positional.into_iter().map(|v| (v, at)).collect(),
        keywords: keywords.into_iter().map(|(k, v)| (k, v, at)).collect(),
    };
    let mut ctx = Ctx::default();
    ctx.next_seed = fresh_seed();
    ctx.call(name, args)
}

/// A seed no earlier call of this process got: a process-wide counter started from the
/// clock and the process id, stepped by the golden ratio (splitmix64's increment).
fn fresh_seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        AtomicU64::new(clock ^ (u64::from(std::process::id()) << 32))
    });
    next.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Scalar;

    /// The quoted names the evaluator's `match` arms dispatch on, read from its source.
    fn dispatched_names() -> Vec<String> {
        let sources = [
            include_str!("functions.rs"),
            include_str!("composed.rs"),
            include_str!("rearrange.rs"),
            include_str!("io.rs"),
            include_str!("linalg.rs"),
            include_str!("fft.rs"),
            include_str!("statistics.rs"),
            include_str!("eval.rs"),
        ];
        let mut names = Vec::new();
        for line in sources.iter().flat_map(|s| s.lines()) {
            let arm = line.trim_start();
            if !arm.starts_with('"') || !(arm.contains("=>") || arm.ends_with('|')) {
                continue;
            }
            let pattern = arm.split("=>").next().unwrap_or("");
            for part in pattern.split('|') {
                let part = part.trim();
                if part.len() > 2 && part.starts_with('"') && part.ends_with('"') {
                    names.push(part.trim_matches('"').to_string());
                }
            }
        }
        names
    }

    #[test]
    fn the_table_lists_exactly_the_dispatched_functions() {
        // Besides constants: `T` and `shape` are attributes, `matmul` also `@`.
        let other = ["T", "shape", "matmul"];
        let mut missing: Vec<String> = dispatched_names()
            .into_iter()
            .filter(|n| {
                let n = n.as_str();
                !FUNCTIONS.contains(&n) && !CONSTANTS.contains(&n) && !other.contains(&n)
            })
            .collect();
        missing.dedup();
        assert!(
            missing.is_empty(),
            "dispatched but not in FUNCTIONS: {missing:?}"
        );
        for name in FUNCTIONS.iter() {
            let e = call(name, vec![], vec![]);
            let message = e.err().map(|e| e.message).unwrap_or_default();
            assert!(!message.contains("unknown function"), "{name}: {message}");
        }
        for (_, f) in OPERATORS {
            assert!(FUNCTIONS.contains(f), "{f}");
        }
    }

    fn seed_of(v: Value) -> u64 {
        let Value::Tensor(t) = v else {
            panic!("rand gives a tensor")
        };
        match &crate::tensor::Tensor::graph(&[&t]).nodes[0].args {
            crate::ops::OpArgs::Create {
                fill: crate::ops::Fill::Uniform { seed },
                ..
            } => *seed,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unseeded_random_calls_differ_and_seeded_ones_repeat() {
        let three = || vec![Value::Num(Scalar::I64(3))];
        let (a, b) = (call("rand", three(), vec![]), call("rand", three(), vec![]));
        assert_ne!(seed_of(a.unwrap()), seed_of(b.unwrap()));
        let seeded = || {
            call(
                "rand",
                three(),
                vec![("seed".into(), Scalar::I64(5).into())],
            )
        };
        assert_eq!(seed_of(seeded().unwrap()), 5);
        assert_eq!(seed_of(seeded().unwrap()), 5);
    }

    #[test]
    fn call_runs_a_function_on_values() {
        let x = match call(
            "arange",
            vec![Value::Num(Scalar::I64(6))],
            vec![("chunk".into(), Value::Num(Scalar::I64(4)))],
        ) {
            Ok(Value::Tensor(t)) => t,
            _ => panic!("arange gives a tensor"),
        };
        let parts = call(
            "split",
            vec![Value::Tensor(x.clone()), Value::Num(Scalar::I64(3))],
            vec![],
        );
        match parts {
            Ok(Value::Tuple(p)) => assert_eq!(p.len(), 3),
            _ => panic!("split gives a tuple"),
        }
        let kw = vec![("keepdims".to_string(), Scalar::Bool(true).into())];
        match call("any", vec![x.clone().into()], kw) {
            Ok(Value::Tensor(t)) => assert_eq!(t.shape(), &[1]),
            _ => panic!("any gives a tensor"),
        }
        let e = call("where", vec![Value::Tensor(x)], vec![]).err().unwrap();
        assert!(e.message.contains("where"), "{}", e.message);
        assert!(call("frobnicate", vec![], vec![]).is_err());
    }
}
