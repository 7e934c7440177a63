//! Admission and eviction of tasks: the limits a submission is checked against before
//! anything sized by it is built, and which ended tasks to forget.
//!
//! Pure state (no actor): the TaskManager asks [`Admission::admit`] before starting a task,
//! reports ends with [`Admission::ended`], and evicts what that returns. Survives nothing: a
//! restarted supervisor has no tasks to count.

use crate::config::LimitsConfig;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use ares_core::ops::OpArgs;
use std::collections::{HashMap, VecDeque};

/// Why a graph was not admitted: a limit it breaks, by how much, or a form a client may not
/// build. The text names the limit's key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdmissionError {
    #[error("node t{node} ({op}): an upload spool file is read only by the supervisor's own upload task; a client's graph cannot name one (use from_npy under data.roots, or upload the array)")]
    SpoolSource { node: usize, op: String },
    #[error("the graph runs clients' code ({}); this cluster does not: set cluster.allow_code: true in the supervisor's and the workers' config to allow it", .functions.join(", "))]
    CodeNotAllowed { functions: Vec<String> },
    #[error("the graph has {nodes} nodes, over limits.max_graph_nodes = {max}")]
    TooManyNodes { nodes: usize, max: usize },
    #[error("{in_flight} tasks are pending or running, the limit (limits.max_tasks_in_flight); retry when one ends")]
    TooManyTasks { in_flight: usize },
    #[error("session {session:?} has {tasks} tasks pending or running, the limit (limits.max_tasks_in_flight_per_session); retry when one ends")]
    SessionFull { session: String, tasks: usize },
    #[error("the task would create up to {projected} chunks, over limits.max_chunks_per_task = {max}; use larger chunks")]
    TooManyChunks { projected: u64, max: u64 },
}

/// Refuses a graph from a client (submitted, or sent to explain) that holds a form only the
/// supervisor builds: a file reference of an internal format (an upload's spool file, read
/// outside the data roots; see `super::upload`). Chunk-level forms are checked too, though
/// a tileable graph that holds them fails validation anyway.
pub fn client_graph(graph: &TileableGraph, allow_code: bool) -> Result<(), AdmissionError> {
    if !allow_code {
        let functions = ares_core::ops::family::python_call::uses_code(graph);
        if !functions.is_empty() {
            return Err(AdmissionError::CodeNotAllowed { functions });
        }
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        let data = match &node.args {
            OpArgs::Source { data, .. }
            | OpArgs::Read { data, .. }
            | OpArgs::Sink { data, .. }
            | OpArgs::Write { data, .. }
            | OpArgs::Commit { data, .. } => data,
            _ => continue,
        };
        if data.format.is_internal() {
            return Err(AdmissionError::SpoolSource {
                node: i,
                op: node.op.to_string(),
            });
        }
    }
    Ok(())
}

pub struct Admission {
    limits: LimitsConfig,
    keep_finished: usize,
    /// Tasks pending or running, with their session.
    in_flight: HashMap<TaskId, String>,
    /// Ended tasks, oldest first.
    finished: VecDeque<TaskId>,
}

impl Admission {
    pub fn new(limits: LimitsConfig, keep_finished: usize) -> Self {
        Self {
            limits,
            keep_finished,
            in_flight: HashMap::new(),
            finished: VecDeque::new(),
        }
    }

    /// Checks a submission against the limits, cheapest first; the error says which limit
    /// and by how much.
    pub fn admit(&self, session: &str, graph: &TileableGraph) -> Result<(), AdmissionError> {
        let l = &self.limits;
        self.admit_size(graph)?;
        if self.in_flight.len() >= l.max_tasks_in_flight {
            return Err(AdmissionError::TooManyTasks {
                in_flight: self.in_flight.len(),
            });
        }
        let mine = self.in_flight.values().filter(|s| *s == session).count();
        if mine >= l.max_tasks_in_flight_per_session {
            return Err(AdmissionError::SessionFull {
                session: session.to_string(),
                tasks: mine,
            });
        }
        Ok(())
    }

    /// Checks the graph's node count (`limits.max_graph_nodes`): a submission's first check,
    /// and an explain's.
    pub fn admit_size(&self, graph: &TileableGraph) -> Result<(), AdmissionError> {
        let max = self.limits.max_graph_nodes;
        if graph.nodes.len() > max {
            return Err(AdmissionError::TooManyNodes {
                nodes: graph.nodes.len(),
                max,
            });
        }
        Ok(())
    }

    /// Checks the projected chunk count (after the graph was validated: shapes are sound).
    pub fn admit_chunks(&self, graph: &TileableGraph) -> Result<(), AdmissionError> {
        let projected = ares_core::prepare::limits::projected_chunks(graph);
        let max = self.limits.max_chunks_per_task;
        if projected > max {
            return Err(AdmissionError::TooManyChunks { projected, max });
        }
        Ok(())
    }

    pub fn started(&mut self, task: TaskId, session: &str) {
        self.in_flight.insert(task, session.to_string());
    }

    /// Records that `task` ended; returns the ended tasks to evict now (oldest first),
    /// skipping those `named` says a session still refers to.
    pub fn ended(&mut self, task: TaskId, named: impl Fn(TaskId) -> bool) -> Vec<TaskId> {
        if self.in_flight.remove(&task).is_some() {
            self.finished.push_back(task);
        }
        let mut evict = Vec::new();
        let mut kept = VecDeque::new();
        while self.finished.len() + kept.len() > self.keep_finished {
            let Some(t) = self.finished.pop_front() else {
                break;
            };
            if named(t) {
                kept.push_back(t);
            } else {
                evict.push(t);
            }
        }
        while let Some(t) = kept.pop_back() {
            self.finished.push_front(t);
        }
        evict
    }

    /// Forgets a task removed by other means (its session was deleted).
    pub fn forget(&mut self, task: TaskId) {
        self.in_flight.remove(&task);
        self.finished.retain(|t| *t != task);
    }

    /// Whether `session` has a task pending or running.
    pub fn session_busy(&self, session: &str) -> bool {
        self.in_flight.values().any(|s| s == session)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> LimitsConfig {
        LimitsConfig {
            max_graph_nodes: 3,
            max_chunks_per_task: 1000,
            max_tasks_in_flight_per_session: 2,
            max_tasks_in_flight: 3,
            ..Default::default()
        }
    }

    fn graph(expr: &str) -> TileableGraph {
        ares_core::tensor::Tensor::graph(&[&ares_core::expr::evaluate(expr).unwrap()])
    }

    #[test]
    fn a_client_graph_naming_a_spool_file_is_refused() {
        let mut g = graph("sum(arange(10, chunk=5))");
        assert_eq!(client_graph(&g, false), Ok(()));
        let data = ares_core::io::DataRef {
            format: ares_core::io::Format::Spool,
            path: "/tmp/ares-supervisor-1-0/0-x.npy".into(),
            shape: [10usize][..].into(),
            dtype: ares_core::array::DType::F64,
        };
        g.nodes[0].args = OpArgs::Source {
            data: Box::new(data),
            chunk: ares_core::ops::ChunkSpec::Uniform(5),
        };
        let e = client_graph(&g, false).unwrap_err().to_string();
        assert!(e.contains("upload spool file"), "{e}");
    }

    #[test]
    fn a_graph_running_code_is_refused_unless_code_is_allowed() {
        use ares_core::ops::family::python_call::{map_blocks, BlockCall, UserFunction};
        let x = ares_core::expr::evaluate("arange(10, chunk=5)").unwrap();
        let call = BlockCall {
            function: UserFunction::new("smooth", b"pickled".to_vec()),
            out_splits: vec![vec![5, 5]],
            dtype: ares_core::array::DType::I64,
            inputs: vec![vec![Some(0)]],
        };
        let y = map_blocks(call, vec![x]).unwrap();
        let g = ares_core::tensor::Tensor::graph(&[&y]);
        let e = client_graph(&g, false).unwrap_err().to_string();
        assert!(
            e.contains("smooth") && e.contains("cluster.allow_code: true"),
            "{e}"
        );
        assert_eq!(client_graph(&g, true), Ok(()));
    }

    #[test]
    fn submissions_over_a_limit_are_refused_with_the_numbers() {
        let mut a = Admission::new(limits(), 10);
        let e = a
            .admit("s", &graph("ones(4) + 1 + 2 + 3"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_graph_nodes = 3"), "{e}");
        let e = a
            .admit_chunks(&graph("sum(ones(10**9, chunk=1))"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_chunks_per_task = 1000"), "{e}");
        assert!(e.contains("up to 3000000002 chunks"), "{e}");
        let small = graph("sum(ones(10, chunk=5))");
        assert!(a.admit_chunks(&small).is_ok());
        a.started(TaskId(1), "s");
        a.started(TaskId(2), "s");
        let e = a.admit("s", &small).unwrap_err().to_string();
        assert!(e.contains("max_tasks_in_flight_per_session"), "{e}");
        a.admit("t", &small).unwrap();
        a.started(TaskId(3), "t");
        let e = a.admit("u", &small).unwrap_err().to_string();
        assert!(e.contains("limits.max_tasks_in_flight"), "{e}");
        assert!(a.ended(TaskId(1), |_| false).is_empty());
        a.admit("s", &small).unwrap();
    }

    #[test]
    fn the_oldest_unnamed_finished_tasks_are_evicted() {
        let mut a = Admission::new(limits(), 2);
        for t in 1..=4 {
            a.started(TaskId(t), "s");
        }
        assert!(a.ended(TaskId(1), |_| false).is_empty());
        assert!(a.ended(TaskId(2), |_| false).is_empty());
        // Task 1 is named: task 2 goes instead.
        assert_eq!(a.ended(TaskId(3), |t| t == TaskId(1)), vec![TaskId(2)]);
        assert_eq!(a.ended(TaskId(4), |_| false), vec![TaskId(1)]);
        assert_eq!(a.in_flight(), 0);
    }
}
