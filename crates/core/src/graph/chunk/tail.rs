//! The chunk graph as parts of a streamed graph ([`crate::graph::delta`]): a part's nodes and
//! new table entries split off as a delta, a delta's appended, a copy with room for one.

use super::*;

impl ChunkGraph {
    /// Room for about `nodes` nodes in all (edges and arguments as [`Self::with_capacity`]).
    pub(crate) fn reserve(&mut self, nodes: usize) {
        self.nodes.reserve(nodes.saturating_sub(self.nodes.len()));
        self.edges
            .reserve((nodes * 2).saturating_sub(self.edges.len()));
    }

    /// A copy (tables included, lookups left out) with room for `tail`'s nodes, edges and
    /// entries as well.
    pub(crate) fn copy_with_room(&self, tail: &ChunkGraph) -> ChunkGraph {
        let mut copy = ChunkGraph {
            nodes: Vec::with_capacity(self.nodes.len() + tail.nodes.len()),
            edges: Vec::with_capacity(self.edges.len() + tail.edges.len()),
            args: Vec::with_capacity(self.args.len() + tail.args.len()),
            shapes: self.shapes.clone(),
            results: self.results.clone(),
            ..ChunkGraph::default()
        };
        copy.nodes.extend_from_slice(&self.nodes);
        copy.edges.extend_from_slice(&self.edges);
        copy.args.extend_from_slice(&self.args);
        copy
    }

    pub(crate) fn shapes_len(&self) -> usize {
        self.shapes.len()
    }

    /// Appends the nodes, edges and table entries of `tail` (a delta's graph, whose inputs,
    /// arguments and shapes already index this graph); its results, if any, become this
    /// graph's. Checked by [`ChunkGraph::append_tail`].
    pub(crate) fn append_nodes(&mut self, tail: ChunkGraph) {
        let edge_base = self.edges.len() as u32;
        self.nodes.extend(tail.nodes.into_iter().map(|mut n| {
            n.inputs_start += edge_base;
            n
        }));
        self.edges.extend(tail.edges);
        self.args.extend(tail.args);
        self.shapes.extend(tail.shapes);
        if !tail.results.is_empty() {
            self.results = tail.results;
        }
    }

    /// This graph (a part prepared alone, whose chunk 0 is the whole graph's chunk
    /// `offset`) as a delta from `base`, its nodes and edges moved, not copied (inputs
    /// shifted by `offset`, results dropped), and its tables, whole, for the next part.
    pub(crate) fn into_tail(
        mut self,
        base: crate::graph::DeltaBase,
        offset: u32,
    ) -> (ChunkGraph, ChunkGraph) {
        let tables = self.take_tables();
        for e in &mut self.edges {
            e.0 += offset;
        }
        let tail = ChunkGraph {
            nodes: std::mem::take(&mut self.nodes),
            edges: std::mem::take(&mut self.edges),
            args: tables.args[base.args as usize..].to_vec(),
            shapes: tables.shapes[base.shapes as usize..].to_vec(),
            ..ChunkGraph::default()
        };
        (tail, tables)
    }

    /// The delta of this graph's nodes from `skip` on and of its table entries from `base`
    /// on (the tables stay whole here, for the next part): each node's inputs through `map`
    /// (to whole-graph indices), and the results too.
    pub(crate) fn split_tail(
        &self,
        base: crate::graph::DeltaBase,
        skip: usize,
        map: impl Fn(ChunkIdx) -> ChunkIdx,
    ) -> ChunkGraph {
        let mut tail = ChunkGraph::with_capacity(0);
        tail.nodes.reserve(self.nodes.len() - skip);
        tail.edges.reserve(self.edges.len());
        for node in &self.nodes[skip..] {
            let (start, len) = (node.inputs_start as usize, node.inputs_len as usize);
            let inputs_start = tail.edges.len() as u32;
            tail.edges
                .extend(self.edges[start..start + len].iter().map(|c| map(*c)));
            tail.nodes.push(ChunkNode {
                inputs_start,
                ..node.clone()
            });
        }
        tail.args = self.args[base.args as usize..].to_vec();
        tail.shapes = self.shapes[base.shapes as usize..].to_vec();
        tail.results = Self::remap_results(&self.results, map);
        tail
    }
}
