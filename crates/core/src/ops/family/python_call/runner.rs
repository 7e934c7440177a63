//! Who calls a user's function: a process-wide runner, registered by whoever can.
//!
//! The core cannot run Python (it depends on no interpreter); the Python package registers
//! a [`ForeignCallRunner`] when its native module is imported, so the engine embedded in a
//! Python process, and a worker node started from Python (`python -m ares worker`), call
//! functions through it. A process without one (the `ares` binary) fails the block with an
//! error saying where such functions run. The kernel here checks what comes back against
//! what the graph declared, naming the block.

use super::call::{BlockCall, UserFunction};
use crate::array::{fmt_shape, ArrayData, DType};
use crate::kernels::{kerr, KResult, KernelError};
use std::sync::{Arc, RwLock};

/// Calls user functions on blocks.
pub trait ForeignCallRunner: Send + Sync {
    /// `function(*inputs)` for the block at `block` (its index in the output's chunk
    /// grid); the error is the function's own (an exception's last lines). The blocks are
    /// shared with the engine's store, so a runner can lend them to the function without a
    /// copy, keeping each alive (a clone of its `Arc`) as long as the function holds it.
    fn call(
        &self,
        function: &UserFunction,
        block: &[usize],
        inputs: &[Arc<ArrayData>],
    ) -> Result<ArrayData, String>;
}

static RUNNER: RwLock<Option<Arc<dyn ForeignCallRunner>>> = RwLock::new(None);

/// Makes `runner` the process's runner (replacing any other).
pub fn register_runner(runner: Arc<dyn ForeignCallRunner>) {
    *RUNNER.write().unwrap_or_else(|e| e.into_inner()) = Some(runner);
}

/// Whether this process can run user functions.
pub fn has_runner() -> bool {
    RUNNER.read().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// The message of a block refused for want of a runner.
pub const NO_RUNNER: &str = "this process cannot run Python functions: they run in the \
     engine embedded in a Python process, or on workers started with `python -m ares worker`";

/// Runs output block `position` of `call`, whose chunk is declared `shape` of `dtype`.
pub fn run_block(
    call: &BlockCall,
    position: u32,
    shape: &[usize],
    dtype: DType,
    inputs: &[Arc<ArrayData>],
) -> KResult<ArrayData> {
    let runner = RUNNER
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| KernelError(NO_RUNNER.to_string()))?;
    let block = call.block_index(position);
    let block_text = fmt_shape(&block);
    let out = runner.call(&call.function, &block, inputs).map_err(|e| {
        KernelError(format!(
            "{} raised on block {block_text}: {e}",
            call.function.name
        ))
    })?;
    if out.shape() != shape || out.dtype() != dtype {
        return kerr(format!(
            "{} returned a block {block_text} of shape {} {} where {} {} was declared \
             (pass `chunks=`/`dtype=` or `meta=` to say what it returns)",
            call.function.name,
            fmt_shape(out.shape()),
            out.dtype(),
            fmt_shape(shape),
            dtype
        ));
    }
    Ok(out)
}
