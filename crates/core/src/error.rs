//! Errors of the core: building expressions, preparing graphs, running kernels.
//!
//! Every variant names the operation (and, where known, the shapes) so a user can find the
//! place that went wrong without a backtrace. `anyhow` is only used at the binary's edge.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum AresError {
    /// An operation was built with incompatible shapes.
    #[error("{op}: {detail}")]
    Shape { op: &'static str, detail: String },
    /// An operation was built with an unsupported dtype.
    #[error("{op}: {detail}")]
    DType { op: &'static str, detail: String },
    /// An argument is out of range or malformed.
    #[error("{op}: invalid argument: {detail}")]
    InvalidArgument { op: &'static str, detail: String },
    /// A graph is malformed (deserialized from outside or built by hand).
    #[error("malformed graph: {0}")]
    MalformedGraph(String),
    /// A preparation pass failed.
    #[error("{pass}: {detail}")]
    Prepare { pass: &'static str, detail: String },
    /// A kernel failed while computing a chunk.
    #[error("kernel {op} failed on chunk {chunk}: {detail}")]
    Kernel {
        op: &'static str,
        chunk: String,
        detail: String,
    },
    /// Invalid configuration.
    #[error("config: {0}")]
    Config(String),
}

pub type Result<T, E = AresError> = std::result::Result<T, E>;

impl AresError {
    pub fn shape(op: &'static str, detail: impl Into<String>) -> Self {
        Self::Shape {
            op,
            detail: detail.into(),
        }
    }
    pub fn dtype(op: &'static str, detail: impl Into<String>) -> Self {
        Self::DType {
            op,
            detail: detail.into(),
        }
    }
    pub fn arg(op: &'static str, detail: impl Into<String>) -> Self {
        Self::InvalidArgument {
            op,
            detail: detail.into(),
        }
    }
    pub fn prepare(pass: &'static str, detail: impl Into<String>) -> Self {
        Self::Prepare {
            pass,
            detail: detail.into(),
        }
    }
}
