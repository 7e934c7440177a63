//! The op registry: every family of operations, behind one trait, in one table.
//!
//! [`OP_REGISTRY`] lists the families (`impl OpFamily for` finds each one; its folder or file
//! is under `ops/family/`). A family owns a set of [`Op`]s (every op belongs to exactly one)
//! and the functions it gives the expression language. Whoever needs the list of functions
//! reads it here, never a hand-made list of its own: the expression language
//! (`expr::FUNCTIONS`, `expr::call`), the Python package (`_ares.functions()`), the README
//! check (`tests/numpy_basics.rs`) and the differential test's generator.

use super::family::{
    creation::Creation, elementwise::Elementwise, fft::FftFamily, graph::Graph, io::Io,
    linalg::Linalg, manipulation::Manipulation, python_call::PythonCall, reduction::Reduction,
    shuffle::Shuffle, statistics::Statistics,
};
use super::Op;
use std::sync::OnceLock;

/// A family of ops: what it owns and what it offers the expression language.
pub trait OpFamily: Sync {
    /// Short name (`elementwise`, `reduction`...).
    fn name(&self) -> &'static str;

    /// Whether `op` is one of this family's.
    fn owns(&self, op: Op) -> bool;

    /// The family's functions in the expression language, in the order the docs list them
    /// (aliases such as `absolute` are functions of their own).
    fn functions(&self) -> Vec<Function>;
}

/// A function of the expression language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: &'static str,
    /// How it is called (what a generator of programs needs to know).
    pub form: Form,
    /// One line, NumPy's summary where NumPy has the function.
    pub doc: &'static str,
}

/// How a function is called, for those that share a calling convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `f(x)`, element by element.
    Unary,
    /// `f(x1, x2)`, element by element with broadcasting.
    Binary,
    /// `f(a, axis=None, keepdims=False)`.
    Reduce,
    /// `f(a, axis=None, keepdims=False)`, giving int64 positions.
    ArgReduce,
    /// `f(a, axis=None)`, keeping the shape (flattened without an axis).
    Scan,
    /// Its own arguments (see the README).
    Other,
}

impl Function {
    pub const fn new(name: &'static str, form: Form, doc: &'static str) -> Function {
        Function { name, form, doc }
    }

    /// A function with arguments of its own ([`Form::Other`]).
    pub const fn other(name: &'static str, doc: &'static str) -> Function {
        Function::new(name, Form::Other, doc)
    }
}

/// Every family, in the docs' order.
pub static OP_REGISTRY: &[&dyn OpFamily] = &[
    &Creation,
    &Elementwise,
    &Reduction,
    &Statistics,
    &Linalg,
    &FftFamily,
    &Manipulation,
    &Io,
    &Shuffle,
    &PythonCall,
    &Graph,
];

/// A function with the family that offers it.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub function: Function,
    pub family: &'static str,
}

/// Every function of the expression language, family by family.
pub fn functions() -> &'static [Listed] {
    static ALL: OnceLock<Vec<Listed>> = OnceLock::new();
    ALL.get_or_init(|| {
        OP_REGISTRY
            .iter()
            .flat_map(|f| {
                f.functions().into_iter().map(|function| Listed {
                    function,
                    family: f.name(),
                })
            })
            .collect()
    })
}

/// The function the expression language calls `name`.
pub fn function(name: &str) -> Option<&'static Listed> {
    functions().iter().find(|l| l.function.name == name)
}

/// The family that owns `op`.
pub fn family_of(op: Op) -> &'static dyn OpFamily {
    *OP_REGISTRY
        .iter()
        .find(|f| f.owns(op))
        .expect("every op belongs to a family (checked by a test)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_op_belongs_to_exactly_one_family() {
        for op in Op::ALL {
            let owners: Vec<&str> = OP_REGISTRY
                .iter()
                .filter(|f| f.owns(*op))
                .map(|f| f.name())
                .collect();
            assert_eq!(owners.len(), 1, "{op}: {owners:?}");
        }
    }

    #[test]
    fn function_names_are_unique_and_documented() {
        let mut seen = HashSet::new();
        for l in functions() {
            assert!(seen.insert(l.function.name), "{} twice", l.function.name);
            assert!(!l.function.doc.is_empty(), "{}", l.function.name);
        }
        assert_eq!(function("absolute").unwrap().family, "elementwise");
        assert_eq!(family_of(Op::CumSum).name(), "reduction");
    }
}
