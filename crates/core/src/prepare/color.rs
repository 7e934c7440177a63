//! Grouping chunks into subtasks by coloring (Mars `services/task/analyzer/fusion.py`).
//!
//! 1. Initial chunks, in the order a depth-first walk from the results reaches them (so the
//!    chunks feeding one consumer are neighbours), get a new color every
//!    `initial_same_color_num` chunks. That number is first lowered until there are at least
//!    as many initial colors as slots in the cluster (Xorbits' fix for idle slots).
//! 2. In topological order, a chunk joins its predecessors' color when they all share one,
//!    unless its single predecessor is a broadcaster (more successors than
//!    `as_broadcaster_successor_num`); otherwise it starts a new color.
//! 3. In reverse topological order, a chunk whose successors have several colors, one of them
//!    its own, hands fresh colors to its same-colored successors and their descendants, so no
//!    group both feeds and depends on another group.
//!
//! With fusion disabled, every chunk is its own subtask.
//!
//! Beyond Mars: with a memory budget (`memory_budget`, the smallest worker's
//! `worker.memory_limit`), a chunk joins a color (in steps 1 and 2) only while what the group
//! reads from other groups, its chunks and one more of its largest ([`Room`]: the runtime's
//! projection, less kernel scratch) stay within it: two 16 MiB row bands in one subtask
//! project 48 MiB, over a 32 MiB limit that each fits alone.
//!
//! Also beyond Mars: the many slices a rechunk cuts from one source chunk (a broadcaster,
//! whose successors step 2 gives a color each) share one color per source, within the
//! budget, so a source is read once for all its pieces, not once per piece.

use crate::config::TaskConfig;
use crate::error::Result;
use crate::graph::{ChunkGraph, SubtaskGraph};
use crate::ids::{ChunkIdx, StageId, TaskId};
use crate::ops::Op;
use std::collections::{HashMap, VecDeque};

/// Initial chunks (no inputs) in depth-first order from the results, predecessors first.
pub fn start_order(graph: &ChunkGraph) -> Vec<u32> {
    let n = graph.len();
    let mut visited = vec![false; n];
    let mut order = Vec::new();
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let roots = graph
        .results
        .iter()
        .flat_map(|r| r.chunks.iter().map(|c| c.0))
        .chain((0..n as u32).rev());
    for root in roots {
        if visited[root as usize] {
            continue;
        }
        visited[root as usize] = true;
        stack.push((root, 0));
        while let Some((node, pos)) = stack.last_mut() {
            let inputs = graph.inputs(ChunkIdx(*node));
            if inputs.is_empty() {
                order.push(*node);
            }
            if let Some(next) = inputs.get(*pos as usize) {
                *pos += 1;
                if !visited[next.index()] {
                    visited[next.index()] = true;
                    stack.push((next.0, 0));
                }
            } else {
                stack.pop();
            }
        }
    }
    order
}

/// Colors every chunk; returns the colors and how many there are.
pub fn color(graph: &ChunkGraph, config: &TaskConfig, total_slots: usize) -> (Vec<u32>, usize) {
    let n = graph.len();
    if !config.fuse_enabled {
        return ((0..n as u32).collect(), n);
    }
    let succ = graph.successors();
    let mut colors = vec![u32::MAX; n];
    let mut next_color = 0u32;

    // Step 1: initial colors.
    let starts = start_order(graph);
    let mut group = config.initial_same_color_num();
    while group > 1 && starts.len().div_ceil(group) < total_slots {
        group -= 1;
    }
    let mut room = Room::new(config.memory_budget, n);
    for (i, s) in starts.iter().enumerate() {
        if i > 0 && (i % group == 0 || !room.fits(graph, next_color, *s)) {
            next_color += 1;
        }
        room.add(graph, &colors, next_color, *s);
        colors[*s as usize] = next_color;
    }
    if !starts.is_empty() {
        next_color += 1;
    }

    // Step 2: propagate in topological order.
    let broadcaster = config.broadcaster_threshold();
    // Per source chunk, the color its overflowing slices share (see below).
    let mut slices_of: HashMap<u32, u32> = HashMap::new();
    for c in 0..n {
        let inputs = graph.inputs(ChunkIdx(c as u32));
        if inputs.is_empty() {
            continue;
        }
        let first = colors[inputs[0].index()];
        let single_pred = inputs.iter().all(|i| *i == inputs[0]);
        // A shuffle proxy is a subtask of its own (the supervisor completes it without a
        // worker), and so is every reducer reading it.
        let shuffle = crate::graph::shuffle::is_proxy(graph, ChunkIdx(c as u32))
            || inputs
                .iter()
                .any(|i| crate::graph::shuffle::is_proxy(graph, *i));
        let broadcast = single_pred && succ.row(inputs[0].index()).len() > broadcaster;
        // The many slices a rechunk cuts from one source chunk (a broadcaster) share one
        // color per source, a new one each time it is full: a slice alone reads its whole
        // source for a piece of it, and under a memory budget a source spilled between two
        // of its slices was read back for each (a 512 MiB rechunk on 64 MiB workers moved
        // 13.5 GB through spill files). Not the source's own color: step 3 would split a
        // color that both keeps some of the slices and feeds the others' color.
        let slice = broadcast && !shuffle && graph.node(ChunkIdx(c as u32)).op == Op::Slice;
        let joins = if shuffle || broadcast {
            false
        } else {
            inputs.iter().all(|i| colors[i.index()] == first) && room.fits(graph, first, c as u32)
        };
        // A slice joining its source's slice color adds no read: the color reads the source.
        let mut reads_counted = false;
        colors[c] = if joins {
            first
        } else {
            let source = inputs[0].0;
            match slice.then(|| slices_of.get(&source)).flatten() {
                Some(&k) if room.fits(graph, k, c as u32) => {
                    reads_counted = true;
                    k
                }
                _ => {
                    if slice {
                        slices_of.insert(source, next_color);
                    }
                    next_color += 1;
                    next_color - 1
                }
            }
        };
        if reads_counted {
            room.add_member(graph, colors[c], c as u32);
        } else {
            room.add(graph, &colors, colors[c], c as u32);
        }
    }

    // Step 3: split groups that feed another group and continue after it.
    for c in (0..n).rev() {
        let k = colors[c];
        let row = succ.row(c);
        let mixed = row.iter().any(|s| colors[*s as usize] != k);
        if !mixed || !row.iter().any(|s| colors[*s as usize] == k) {
            continue;
        }
        for &s in row {
            if colors[s as usize] != k {
                continue;
            }
            colors[s as usize] = next_color;
            next_color += 1;
            let mut queue: VecDeque<u32> = succ.row(s as usize).iter().copied().collect();
            while let Some(d) = queue.pop_front() {
                if colors[d as usize] != k {
                    continue;
                }
                let ins = graph.inputs(ChunkIdx(d));
                let pc = colors[ins[0].index()];
                colors[d as usize] = if ins.iter().all(|i| colors[i.index()] == pc) {
                    pc
                } else {
                    next_color += 1;
                    next_color - 1
                };
                queue.extend(succ.row(d as usize).iter().copied());
            }
        }
    }
    (colors, next_color as usize)
}

/// The bytes each color holds so far, against the memory budget: what its chunks read from
/// other colors, their sum and the largest (a shuffle piece, sized only at run time, counts
/// 0, as in the runtime).
struct Room {
    budget: u64,
    /// Per color: (inputs from other colors, chunks, largest chunk).
    held: Vec<(u64, u64, u64)>,
}

impl Room {
    fn new(budget: u64, chunks: usize) -> Room {
        // At most one color per chunk, and one more after the initial ones.
        let held = if budget == 0 {
            Vec::new()
        } else {
            vec![(0, 0, 0); chunks + 1]
        };
        Room { budget, held }
    }

    fn bytes(graph: &ChunkGraph, c: ChunkIdx) -> u64 {
        if crate::graph::shuffle::is_piece(c) {
            return 0;
        }
        let elements = graph.shape(c).iter().product::<usize>() as u64;
        elements * graph.node(c).dtype.itemsize() as u64
    }

    /// Whether chunk `c`, all of whose inputs are in color `k`, fits in it (always, without
    /// a budget).
    fn fits(&self, graph: &ChunkGraph, k: u32, c: u32) -> bool {
        let Some((inputs, sum, max)) = self.held.get(k as usize) else {
            return true;
        };
        let b = Self::bytes(graph, ChunkIdx(c));
        inputs + sum + b + (*max).max(b) <= self.budget
    }

    /// Records chunk `c` in color `k` whose inputs the color already reads (a slice joining
    /// its source's other slices).
    fn add_member(&mut self, graph: &ChunkGraph, k: u32, c: u32) {
        if let Some(slot) = self.held.get_mut(k as usize) {
            let b = Self::bytes(graph, ChunkIdx(c));
            slot.1 += b;
            slot.2 = slot.2.max(b);
        }
    }

    /// Records chunk `c` in color `k`; `colors`: the inputs' colors, to count those read from
    /// other colors.
    fn add(&mut self, graph: &ChunkGraph, colors: &[u32], k: u32, c: u32) {
        let Some(slot) = self.held.get_mut(k as usize) else {
            return;
        };
        let b = Self::bytes(graph, ChunkIdx(c));
        let mut read: Vec<ChunkIdx> = graph
            .inputs(ChunkIdx(c))
            .iter()
            .copied()
            .filter(|i| colors[i.index()] != k)
            .collect();
        read.sort_unstable();
        read.dedup();
        slot.0 += read.iter().map(|i| Self::bytes(graph, *i)).sum::<u64>();
        slot.1 += b;
        slot.2 = slot.2.max(b);
    }
}

/// Colors the graph and builds the subtask graph.
pub fn group_subtasks(
    graph: ChunkGraph,
    config: &TaskConfig,
    total_slots: usize,
    task: TaskId,
    stage: StageId,
) -> Result<SubtaskGraph> {
    let (colors, n_colors) = color(&graph, config, total_slots);
    // Colors created and then entirely recolored leave gaps: compact them.
    let mut dense = vec![u32::MAX; n_colors];
    let mut count = 0u32;
    let compact: Vec<u32> = colors
        .iter()
        .map(|k| {
            if dense[*k as usize] == u32::MAX {
                dense[*k as usize] = count;
                count += 1;
            }
            dense[*k as usize]
        })
        .collect();
    SubtaskGraph::from_colors(graph, &compact, count as usize, task, stage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::{fuse::fuse, tile::tile};
    use crate::tensor::{self, Tensor};

    fn subtasks_of(t: &Tensor, config: &TaskConfig, slots: usize) -> SubtaskGraph {
        let g = fuse(
            tile(&Tensor::graph(&[t]), config).unwrap(),
            config.fuse_generated_operands,
        );
        group_subtasks(g, config, slots, TaskId(1), StageId(0)).unwrap()
    }

    #[test]
    fn chunks_from_the_same_initial_chunks_share_a_subtask() {
        //  a0 b0   a1 b1   a2 b2   a3 b3        4 chunks per input (FUSE[rand, exp]: not
        //   FUSE0   FUSE1   FUSE2   FUSE3       bare creations, which fuse into the add),
        //      \_____|_______|_______/          1 slot, 2 per color:
        //               combine                 {a0 b0 F0} {a1 b1 F1} {a2 b2 F2} {a3 b3 F3}
        //                                       combine: new subtask (preds differ)
        let a = tensor::rand(&[8], 2, Some(1)).unwrap().exp().unwrap();
        let b = tensor::rand(&[8], 2, Some(2)).unwrap().exp().unwrap();
        let c = (&a + &b).unwrap().sum(None, false).unwrap();
        let sg = subtasks_of(&c, &TaskConfig::default(), 1);
        assert_eq!(sg.len(), 5);
        for s in 0..4 {
            assert_eq!(
                sg.members.row(s).len(),
                3,
                "subtask {s}: a_i, b_i, FUSE[add, sum]_i"
            );
        }
        assert_eq!(sg.preds.row(4), &[0, 1, 2, 3]);
        assert_eq!(sg.subtasks[4].depth, 1);
    }

    #[test]
    fn initial_group_shrinks_to_fill_slots() {
        // 8 initial chunks, default group 2 → 4 colors; with 8 slots the group drops to 1.
        let a = tensor::rand(&[8], 1, Some(1)).unwrap();
        let c = a.exp().unwrap().sum(None, false).unwrap();
        assert_eq!(
            subtasks_of(&c, &TaskConfig::default(), 2).initial().count(),
            4
        );
        assert_eq!(
            subtasks_of(&c, &TaskConfig::default(), 8).initial().count(),
            8
        );
    }

    #[test]
    fn a_memory_budget_keeps_groups_within_it() {
        //  a0  a1  a2  a3     4 chunks of 16 B (2 float64) each read by exp and add, so
        //  |\  |\  |\  |\     nothing fuses; group 2 on 1 slot: {a0 a1 e0 e1 +0 +1} and
        //  e0| e1| e2| e3|    {a2 a3 e2 e3 +2 +3} without a budget. A group projects its
        //  +0  +1  +2  +3     chunks and one more of the largest: within 48 B, two chunks
        //                     (48 B) fit and a third (64 B) does not; within 32 B, one.
        let a = tensor::rand(&[8], 2, Some(1)).unwrap();
        let c = (&a.exp().unwrap() + &a).unwrap();
        let groups = |budget| {
            let config = TaskConfig {
                memory_budget: budget,
                ..TaskConfig::default()
            };
            let sg = subtasks_of(&c, &config, 1);
            let mut sizes: Vec<usize> = (0..sg.len()).map(|s| sg.members.row(s).len()).collect();
            sizes.sort_unstable_by(|x, y| y.cmp(x));
            sizes
        };
        assert_eq!(groups(0), vec![6, 6]);
        let mut two = vec![2, 2];
        two.extend([1; 8]);
        assert_eq!(groups(48), two);
        assert_eq!(groups(32), vec![1; 12]);
    }

    #[test]
    fn the_slices_of_a_source_stay_with_it_or_together() {
        //  r0   r1  ...  r15     16 row bands (1 x 16 float64, 128 B) to 16 column bands
        //  |\\..  (16 slices    (16 x 1): each band is a broadcaster of 16 slices of 8 B,
        //  s s s    each)        and each column band assembles one slice of every band.
        //     \__ a0 ... a15
        // A band's slices share one subtask (not the band's: it feeds many), or two under a
        // budget too small for all of them: no subtask slices two bands.
        let x = tensor::rand(&[16, 16], [1, 16], Some(1)).unwrap();
        let y = x.rechunk([16, 1]).unwrap();
        for budget in [0, 1 << 20, 400, 220] {
            let config = TaskConfig {
                memory_budget: budget,
                ..TaskConfig::default()
            };
            let sg = subtasks_of(&y, &config, 4);
            let g = &sg.chunks;
            let mut holders: HashMap<u32, Vec<usize>> = HashMap::new();
            for s in 0..sg.len() {
                let mut sources: Vec<u32> = Vec::new();
                for &m in sg.members.row(s) {
                    if g.node(ChunkIdx(m)).op == Op::Slice {
                        sources.push(g.inputs(ChunkIdx(m))[0].0);
                    }
                }
                sources.sort_unstable();
                sources.dedup();
                for src in &sources {
                    holders.entry(*src).or_default().push(s);
                }
                let bands = sources.len();
                assert!(
                    bands <= 1,
                    "budget {budget}: subtask {s} slices {bands} bands"
                );
            }
            assert_eq!(holders.len(), 16, "budget {budget}");
            for (src, subtasks) in &holders {
                assert!(
                    subtasks.len() <= 2,
                    "budget {budget}: band {src}'s slices in {subtasks:?}"
                );
            }
            let split = holders.values().filter(|h| h.len() > 1).count();
            if budget == 0 || budget == 1 << 20 || budget == 400 {
                assert_eq!(split, 0, "budget {budget}: room for a band's 16 slices");
            } else {
                // 220 B: the band read (128 B), the slices so far, one more and the largest
                // (8 B each): 10 slices, then the other 6 in a second subtask.
                assert_eq!(split, 16, "budget {budget}");
            }
        }
    }

    #[test]
    fn fusion_disabled_gives_one_chunk_per_subtask() {
        let a = tensor::rand(&[8], 2, Some(1)).unwrap();
        let c = (&a + 1.0).unwrap().sum(None, false).unwrap();
        let config = TaskConfig {
            fuse_enabled: false,
            ..TaskConfig::default()
        };
        let g = tile(&Tensor::graph(&[&c]), &config).unwrap();
        let n = g.len();
        let sg = group_subtasks(g, &config, 1, TaskId(1), StageId(0)).unwrap();
        assert_eq!(sg.len(), n);
        assert!((0..sg.len()).all(|s| sg.members.row(s).len() == 1));
    }

    #[test]
    fn broadcaster_consumers_start_new_subtasks() {
        //  m = mean(x) (1 chunk) feeds 10 subtractions: each starts its own color
        let x = tensor::rand(&[10], 1, Some(1)).unwrap();
        let d = (&x - &x.mean(None, true).unwrap()).unwrap();
        let v = (&d * &d).unwrap().sum(None, false).unwrap();
        let sg = subtasks_of(&v, &TaskConfig::default(), 1);
        assert!(sg.len() > 10, "{} subtasks", sg.len());
    }
}
