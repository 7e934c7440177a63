//! One function of the expression language called by name, from outside a program.
//!
//! The Python package binds every NumPy-named function through this entry instead of one
//! binding per function: arguments are validated exactly as in a program (same names, same
//! keyword checks, same NEP 50 handling of Python numbers), and a function added to the
//! language appears in Python with no binding code. A call has no position in a source, so
//! errors carry only their message. [`call`] itself lives with the function table
//! (`table.rs`); this module adds what the binding needs around it.

pub use super::eval::Value;
use super::eval::{apply_binary, binary_op};
pub use super::table::call;
use super::{ExprError, Pos};

/// Whether `name` is a function of the language.
pub fn is_function(name: &str) -> bool {
    super::table::FUNCTIONS.contains(&name)
}

/// A binary operator by its function name (`add`, `less`...) on tensors or numbers, numbers
/// folded as in a program.
pub fn binary(name: &str, a: Value, b: Value) -> Result<Value, ExprError> {
    match binary_op(name) {
        Some(op) => apply_binary(op, a, b, Pos::default()),
        None => call(name, vec![a, b], vec![]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Scalar;

    #[test]
    fn calls_by_name_with_keywords_and_folds_numbers() {
        let x = match call("ones", vec![Value::Num(Scalar::I64(6))], vec![]) {
            Ok(Value::Tensor(t)) => t,
            _ => panic!("ones(6) is a tensor"),
        };
        let kw = vec![("axis".to_string(), Value::Num(Scalar::I64(0)))];
        match call("sum", vec![Value::Tensor(x.clone())], kw) {
            Ok(Value::Tensor(t)) => assert_eq!(t.shape(), &[] as &[usize]),
            _ => panic!("sum is a tensor"),
        }
        let three = binary(
            "add",
            Value::Num(Scalar::I64(1)),
            Value::Num(Scalar::I64(2)),
        );
        assert!(matches!(three, Ok(Value::Num(Scalar::I64(3)))));
        let e = call(
            "sum",
            vec![Value::Tensor(x)],
            vec![("colour".into(), Value::None)],
        );
        assert!(e.is_err_and(|e| e.message.contains("colour")));
        assert!(is_function("cumsum") && is_function("rand") && !is_function("frobnicate"));
    }
}
