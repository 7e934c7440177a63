//! Graph plumbing, no function of the language: FUSE nodes (`prepare::fuse`) and fetches of
//! results other tasks left on the workers.

use crate::ops::registry::{Function, OpFamily};
use crate::ops::{Family, Op};

pub struct Graph;

impl OpFamily for Graph {
    fn name(&self) -> &'static str {
        "graph"
    }

    fn owns(&self, op: Op) -> bool {
        matches!(op.family(), Family::Fuse | Family::Fetch)
    }

    fn functions(&self) -> Vec<Function> {
        Vec::new()
    }
}
