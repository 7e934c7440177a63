//! What a subtask whose inputs are ready carries to the scheduler: each input chunk with the
//! worker holding it and its size (a reducer's shuffle pieces where their mappers are, sized
//! 0 so reducers spread by load), the worker it should go to (the holder of another task's
//! result it reads, else its initial assignment on a first run), the worker its siblings'
//! outputs are on when its inputs are spread (see [`super::super::affinity`]), its
//! projected memory, and whether it calls a client's function (`map_blocks`: only workers
//! that run code take it).

use super::*;

impl TaskState {
    pub(super) fn ready_item(&self, s: usize) -> ReadySubtask {
        let chunks = &self.graph.chunks;
        let mut inputs = Vec::new();
        for &c in self.graph.inputs.row(s) {
            let c = ChunkIdx(c);
            // A reducer reads its pieces where their mappers are; size 0 so the scheduler
            // spreads reducers by load rather than following one mapper.
            if let Some(r) = shuffle::is_proxy(chunks, c)
                .then(|| shuffle::reducer_of(chunks, self.graph.members.row(s), c))
                .flatten()
            {
                inputs.extend(shuffle::reducer_pieces(chunks, c, r).map(|(key, m)| {
                    let (w, _) = self.location[m.index()].expect("a located proxy has its mappers");
                    (key, w, 0)
                }));
                continue;
            }
            let (w, size) = self.location[c.index()].expect("ready subtasks have their inputs");
            inputs.push((c, w, size));
        }
        // Only inputs on several workers can tie (see `affinity`).
        let spread = inputs.windows(2).any(|p| p[0].1 != p[1].1);
        ReadySubtask {
            task: self.graph.task,
            subtask: SubtaskIdx(s as u32),
            depth: self.graph.subtasks[s].depth,
            preferred: self.fetch_source(s).or_else(|| self.bound_worker(s)),
            siblings: spread
                .then(|| super::super::affinity::sibling_worker(&self.graph, &self.location, s))
                .flatten(),
            inputs,
            memory: crate::footprint::projected_bytes(
                &self.graph.chunks,
                self.graph.members.row(s),
                self.graph.inputs.row(s).iter().map(|c| ChunkIdx(*c)),
            ),
            needs_code: self.calls_code
                && self
                    .graph
                    .members
                    .row(s)
                    .iter()
                    .any(|m| chunks.node(ChunkIdx(*m)).op == ares_core::ops::Op::MapBlocks),
        }
    }

    /// The worker holding another task's result this subtask reads, if any.
    fn fetch_source(&self, s: usize) -> Option<WorkerId> {
        self.graph.members.row(s).iter().find_map(|c| {
            match self.graph.chunks.args_of(ChunkIdx(*c)) {
                ares_core::ops::OpArgs::FetchChunk { worker, .. } => Some(WorkerId(*worker)),
                _ => None,
            }
        })
    }
}
