//! `explain` on the cluster: what `ares explain` prints for a client's graph, prepared by the
//! supervisor for what a submission of it would be prepared for now: its real
//! `task.default_config` and its live workers with their slots (native
//! `ClientRequest::Explain`, HTTP `POST /api/session/{sid}/explain`, `TaskApi::explain`).
//! A client on another machine cannot know either, so planning there (as the Python package
//! once did, for a placeholder 2×2 cluster) printed a plan the cluster would never run.
//!
//! The graph is checked as a submission is, before anything sized by it is built: the same
//! node and projected-chunk limits, validation, and the refusal of forms only the supervisor
//! may build ([`super::admission::client_graph`]: an explain must not read a spool file's
//! header either). The preparation then runs on a blocking thread, never on an actor's,
//! under [`EXPLAIN_TIMEOUT`], at most [`MAX_EXPLAINS`] at once, with sinks planned only
//! (`ares::io::plan_only`: no file is created). Nothing is scheduled and no task id is used:
//! the plan is made for task 1, as `ares explain` makes it, so the two print the same text
//! for the same cluster and config.
//!
//! A graph of the streamed kind (projecting `stream_from_chunks` chunks or more) is refused:
//! a submission prepares it part by part, and preparing it whole here would hold the whole
//! chunk graph in the supervisor's memory while it serves other tasks.

use crate::config::TaskConfig;
use ares_core::graph::TileableGraph;
use ares_core::prepare::WorkerSlots;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest an explain's preparation may take before the client is answered with an error.
pub const EXPLAIN_TIMEOUT: Duration = Duration::from_secs(120);

/// Explains prepared at once; one more is refused until one ends.
pub const MAX_EXPLAINS: usize = 2;

/// Why an explain has no text; callers decide on the variant (HTTP status), not the text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExplainError {
    #[error("unknown session {0:?}")]
    UnknownSession(String),
    /// The graph breaks a limit, is invalid, or its preparation failed: the message says
    /// which.
    #[error("{0}")]
    Refused(String),
    /// The supervisor cannot prepare it now (no live worker, too many explains, timeout).
    #[error("{0}")]
    Unavailable(String),
}

/// Counts the explains being prepared; a slot is held until its preparation ends, even one
/// whose client was answered at the timeout.
#[derive(Clone, Default)]
pub struct Explains(Arc<AtomicUsize>);

/// One explain's place among [`MAX_EXPLAINS`].
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Explains {
    pub fn take(&self) -> Result<Slot, ExplainError> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_EXPLAINS).then_some(n + 1)
            })
            .map_err(|n| {
                ExplainError::Unavailable(format!(
                    "{n} explains are being prepared, the most at once; retry when one ends"
                ))
            })?;
        Ok(Slot(self.0.clone()))
    }
}

/// Prepares `graph` (already checked as a submission) for `workers` under `config`, on the
/// calling (blocking) thread; the text of `ares explain`, at most `max_bytes` long.
pub fn prepare_text(
    graph: &TileableGraph,
    config: &TaskConfig,
    workers: &[WorkerSlots],
    limit: usize,
    max_bytes: usize,
) -> Result<String, ExplainError> {
    if workers.is_empty() {
        return Err(ExplainError::Unavailable(
            "the cluster has no live worker to plan for; retry once one has joined".into(),
        ));
    }
    let refused = |e: ares_core::error::AresError| ExplainError::Refused(e.to_string());
    if ares_core::prepare::stream::stream_plan(graph, config)
        .map_err(refused)?
        .is_some()
    {
        return Err(ExplainError::Refused(format!(
            "the graph projects at least task.default_config.stream_from_chunks ({}) chunks, so a submission prepares it part by part; the supervisor does not prepare it whole to explain it (run `ares explain` on a machine of your own)",
            config.stream_from_chunks.unwrap_or_default()
        )));
    }
    let text =
        ares_core::io::plan_only(|| ares_core::explain::staged_text(graph, config, workers, limit))
            .map_err(refused)?;
    if text.len() > max_bytes {
        return Err(ExplainError::Refused(format!(
            "the explanation is {} bytes, over {max_bytes} (half of cluster.max_frame_bytes): ask with a smaller limit",
            text.len()
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ares_core::ids::TaskId;

    fn graph(expr: &str) -> TileableGraph {
        ares_core::tensor::Tensor::graph(&[&ares_core::expr::evaluate(expr).unwrap()])
    }

    #[test]
    fn the_text_is_what_ares_explain_prints_for_the_workers_and_config() {
        let g = graph("sum(arange(64, chunk=1))");
        let config = TaskConfig {
            combine_size: 8,
            ..Default::default()
        };
        let workers = ares_core::prepare::uniform_cluster(3, 2);
        let text = prepare_text(&g, &config, &workers, 0, 1 << 20).unwrap();
        let local = ares_core::prepare::prepare(&g, &config, &workers, TaskId(1)).unwrap();
        assert_eq!(text, ares_core::explain::text(&local, 0));
        assert!(text.contains("w2 slots=2"), "{text}");
        let e = prepare_text(&g, &config, &workers, 0, 100).unwrap_err();
        assert!(e.to_string().contains("smaller limit"), "{e}");
        let e = prepare_text(&g, &config, &[], 0, 1 << 20).unwrap_err();
        assert!(matches!(e, ExplainError::Unavailable(_)), "{e}");
    }

    #[test]
    fn explains_at_once_are_bounded() {
        let explains = Explains::default();
        let held: Vec<Slot> = (0..MAX_EXPLAINS)
            .map(|_| explains.take().unwrap())
            .collect();
        assert!(matches!(explains.take(), Err(ExplainError::Unavailable(_))));
        drop(held);
        assert!(explains.take().is_ok());
    }
}
