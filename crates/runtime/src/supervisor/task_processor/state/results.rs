//! Where a task's chunks and results are, as its workers reported them: for streamed result
//! fetches and for later tasks that read a result.

use super::*;

impl TaskState {
    /// The bytes chunk `c` holds, as its worker reported (known once it is computed).
    pub fn size_of(&self, c: ChunkIdx) -> Option<u64> {
        self.location.get(c.index()).copied().flatten().map(|l| l.1)
    }

    /// The worker holding chunk `c`, if any (streamed result fetch).
    pub fn location_of(&self, c: ChunkIdx) -> Option<WorkerId> {
        self.location.get(c.index()).copied().flatten().map(|l| l.0)
    }

    /// Where each result chunk lives.
    pub fn result_locations(&self) -> Vec<(ChunkIdx, Option<WorkerId>)> {
        self.graph
            .chunks
            .results
            .iter()
            .flat_map(|r| r.chunks.iter())
            .map(|c| (*c, self.location[c.index()].map(|l| l.0)))
            .collect()
    }

    /// Layout and locations of result `output`, for later tasks that read it.
    pub fn result_layout(
        &self,
        output: usize,
    ) -> Option<(ares_core::graph::ResultTensor, Vec<(u32, u32)>)> {
        let r = self.graph.chunks.results.get(output)?;
        let chunks = r
            .chunks
            .iter()
            .map(|c| self.location[c.index()].map(|(w, _)| (c.0, w.0)))
            .collect::<Option<Vec<_>>>()?;
        let mut r = r.clone();
        if r.shape.len() == 1 {
            // As long as the workers found the chunks (`unique`, `x[mask]`: the planned
            // shape is a bound).
            let item = r.dtype.itemsize() as u64;
            r.splits[0] = r
                .chunks
                .iter()
                .map(|c| self.size_of(*c).map(|b| (b / item) as usize))
                .collect::<Option<Vec<_>>>()?;
            r.shape[0] = r.splits[0].iter().sum();
        }
        Some((r, chunks))
    }
}
