//! `task.default_config`: the knobs of the preparation pipeline, with the names Mars uses.
//! The rest of the configuration file (cluster, workers, web, limits, data) is the runtime's
//! (`ares::config`), which loads this section with it.

use crate::error::{AresError, Result};
use serde::{Deserialize, Serialize};

/// `task.default_config`: how graphs are prepared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaskConfig {
    /// Common subexpression elimination, dead-op pruning and trivial algebra on the tileable graph.
    pub optimize_tileable_graph: bool,
    /// Cull unneeded chunks and merge duplicate chunks.
    pub optimize_chunk_graph: bool,
    /// Fuse single chains into FUSE nodes and group chunks into subtasks by coloring.
    pub fuse_enabled: bool,
    /// With `fuse_enabled`: a binary elementwise chunk takes in the creation chunks only it
    /// reads (`rand`, `ones`...), which then stream block by block and never exist whole.
    /// `false` keeps Mars' rule: they stay chunks of their own, outside the FUSE chain.
    pub fuse_generated_operands: bool,
    /// Initial chunks per initial subtask; `null` = `max(combine_size / 2, 1)`, lowered until
    /// there are at least as many initial subtasks as slots.
    pub initial_same_color_num: Option<usize>,
    /// A chunk with more successors than this is a broadcaster: its consumers start new
    /// subtasks. `null` = `combine_size * 2`.
    pub as_broadcaster_successor_num: Option<usize>,
    /// Fan-in of reduction and matmul-sum trees.
    pub combine_size: usize,
    /// A graph that streams ([`crate::prepare::stream`]) and projects at least this many
    /// chunks is prepared and scheduled part by part; `null` = never.
    pub stream_from_chunks: Option<u64>,
    /// Chunks of a streamed graph's first part (each next part is twice as large).
    pub stream_first_chunks: usize,
    /// Bytes a subtask may project on the smallest worker (its `worker.memory_limit`; 0 =
    /// none). Not a setting: the supervisor fills it from its workers before preparing, so
    /// coloring groups initial chunks only while they fit (skipped on the wire and in files).
    #[serde(skip)]
    pub memory_budget: u64,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            optimize_tileable_graph: true,
            optimize_chunk_graph: true,
            fuse_enabled: true,
            fuse_generated_operands: true,
            initial_same_color_num: None,
            as_broadcaster_successor_num: None,
            combine_size: 4,
            stream_from_chunks: Some(1_000_000),
            stream_first_chunks: 65_536,
            memory_budget: 0,
        }
    }
}

impl TaskConfig {
    pub fn validate(&self) -> Result<()> {
        if self.combine_size < 2 {
            return Err(AresError::Config(format!(
                "task.default_config.combine_size must be at least 2, got {}",
                self.combine_size
            )));
        }
        if self.initial_same_color_num == Some(0) {
            return Err(AresError::Config(
                "task.default_config.initial_same_color_num must be at least 1".into(),
            ));
        }
        if self.as_broadcaster_successor_num == Some(0) {
            return Err(AresError::Config(
                "task.default_config.as_broadcaster_successor_num must be at least 1".into(),
            ));
        }
        Ok(())
    }

    pub fn initial_same_color_num(&self) -> usize {
        self.initial_same_color_num
            .unwrap_or((self.combine_size / 2).max(1))
    }

    pub fn broadcaster_threshold(&self) -> usize {
        self.as_broadcaster_successor_num
            .unwrap_or(self.combine_size * 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_mars() {
        let c = TaskConfig::default();
        assert_eq!(c.initial_same_color_num(), 2);
        assert_eq!(c.broadcaster_threshold(), 8);
    }
}
