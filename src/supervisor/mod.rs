//! The supervisor: TaskManager, one TaskProcessor per task, the Scheduler and one link per
//! connection, each a thin actix shell over a pure state machine.

pub mod scheduler;
pub mod task_processor;
