//! `ares explain`: what every preparation pass produced, as text, JSON or Graphviz DOT.
//!
//! Listings are capped at `limit` entries per section (0 = no cap) so a graph of a million
//! chunks prints its counts and a readable head. The JSON schema is documented in the README.

use crate::array::fmt_shape;
use crate::graph::{ChunkGraph, SubtaskGraph, TileableGraph};
use crate::ids::ChunkIdx;
use crate::ops::{Fill, Op, OpArgs};
use crate::prepare::Prepared;
use serde_json::{json, Value};
use std::fmt::Write;

/// Counts of every level, shared by all formats.
pub fn counts(p: &Prepared) -> Value {
    let g = &p.subtasks;
    json!({
        "tileables": p.tileable.nodes.len(),
        "chunks_tiled": p.tiled_chunks,
        "chunks": g.chunks.len(),
        "fuse_nodes": g.chunks.nodes.iter().filter(|n| n.op == Op::Fuse).count(),
        "subtasks": g.len(),
        "initial_subtasks": g.initial().count(),
    })
}

/// Short human description of an op's arguments.
pub fn describe_args(args: &OpArgs) -> String {
    match args {
        OpArgs::None => String::new(),
        OpArgs::Create { fill, shape, chunk } => format!(
            "{} shape={} chunk={chunk}",
            describe_fill(fill),
            fmt_shape(shape)
        ),
        OpArgs::Fill { fill, .. } => describe_fill(fill),
        OpArgs::Generated(g) => format!(
            "{} operand {} generated: {}",
            if g.left { "left" } else { "right" },
            fmt_shape(&g.shape),
            describe_fill(&g.fill)
        ),
        OpArgs::Scalar {
            value,
            scalar_left: false,
        } => format!("x, {value}"),
        OpArgs::Scalar {
            value,
            scalar_left: true,
        } => format!("{value}, x"),
        OpArgs::Cast { dtype } => format!("dtype={dtype}"),
        OpArgs::Reduce { axes, keepdims } => format!("axes={axes:?} keepdims={keepdims}"),
        OpArgs::Scan { axis } => format!("axis={axis}"),
        OpArgs::Arg {
            op,
            axis,
            offset,
            keepdims,
        } => format!("{op} axis={axis} offset={offset} keepdims={keepdims}"),
        OpArgs::Moments {
            axes,
            keepdims,
            ddof,
        } => format!("axes={axes:?} keepdims={keepdims} ddof={ddof}"),
        OpArgs::Combine { op, axes, keepdims } => format!("{op} axes={axes:?} keepdims={keepdims}"),
        OpArgs::Slice(dims) => format!("{dims:?}"),
        OpArgs::Tsqr { slot } => format!("slot={slot}"),
        OpArgs::TsqrRows { slot, start, len } => {
            format!("slot={slot} rows={start}..{}", start + len)
        }
        OpArgs::Dense(f) => f.name().to_string(),
        OpArgs::CholeskyStep(step) => format!("{step:?}"),
        OpArgs::LuStep(step) => format!("{step:?}"),
        OpArgs::MapBlocks(call) => format!(
            "{} ({} bytes) blocks={}",
            call.function.name,
            call.function.payload.len(),
            crate::array::fmt_shape(&call.grid())
        ),
        OpArgs::Fft(s) => format!("{} axis={} n={} norm={:?}", s.name(), s.axis, s.n, s.norm),
        OpArgs::Transpose(perm) => format!("axes={perm:?}"),
        OpArgs::Concat { axis } => format!("axis={axis}"),
        OpArgs::Rechunk(spec) => format!("chunk={spec}"),
        OpArgs::Reshape(shape) => format!("shape={}", fmt_shape(shape)),
        OpArgs::Deferred(d) => {
            use crate::tensor::wait::Call;
            match &d.call {
                Call::Op { op, args } => format!("{op} {}", describe_args(args)),
                Call::Slice(index) => format!("slice {index:?}"),
                Call::Reshape(shape) => format!("reshape {shape:?}"),
                Call::ExpandDims(axes) => format!("expand_dims {axes:?}"),
                Call::Matmul => "matmul".into(),
            }
        }
        OpArgs::Assemble { grid } => format!("grid={}", fmt_shape(grid)),
        OpArgs::FetchResult { task, output, .. } => format!("{task} output {output}"),
        OpArgs::FetchChunk {
            task,
            chunk,
            worker: crate::ops::UNPLACED,
        } => format!("{task} c{chunk}, placed when it runs (a persisted result)"),
        OpArgs::FetchChunk {
            task,
            chunk,
            worker,
        } => format!("{task} c{chunk} on w{worker}"),
        OpArgs::Source { data, chunk } => format!("{} chunk={chunk}", data.path),
        OpArgs::Read { data, offset, .. } | OpArgs::Write { data, offset, .. } => {
            format!("{} at {}", data.path, fmt_shape(offset))
        }
        OpArgs::Sink { data, .. } => data.path.clone(),
        OpArgs::Commit { data, partial } => format!("{partial} -> {}", data.path),
        OpArgs::Fuse(steps) => steps
            .iter()
            .map(|s| s.op.name())
            .collect::<Vec<_>>()
            .join(", "),
        // Shuffle (issue 11).
        OpArgs::ShuffleBench {
            in_parts,
            out_parts,
            rows,
        } => format!("in_parts={in_parts} out_parts={out_parts} rows={rows}"),
        OpArgs::Sort {
            arg,
            axis,
            descending,
        } => format!("arg={arg} axis={axis} descending={descending}"),
        OpArgs::ShuffleMap {
            kind,
            ordinal,
            reducers,
            ..
        } => format!("{kind:?} mapper {ordinal} of {reducers} reducers"),
        OpArgs::ShuffleProxy { reducers, .. } => format!("{reducers} reducers"),
        OpArgs::ShuffleReduce { kind, index } => format!("{kind:?} reducer {index}"),
        OpArgs::SortSample { count } => format!("count={count}"),
        OpArgs::StridedSample { count } => format!("count={count} strided"),
        OpArgs::SortSplitters { parts } => format!("parts={parts}"),
        OpArgs::Unique { counts } => format!("return_counts={counts}"),
        OpArgs::UniquePick { counts: true, .. } => "counts".to_string(),
        OpArgs::UniquePick { dtype, .. } => format!("values dtype={dtype}"),
        OpArgs::MaskSelect => String::new(),
        OpArgs::SearchSorted { right } => {
            format!("side={}", if *right { "right" } else { "left" })
        }
        OpArgs::SelectRanks { ranks } => format!("ranks={ranks:?}"),
        OpArgs::SelectStep(step) => format!("{step:?}"),
        OpArgs::TakeRows { axis: u32::MAX } => "axis=None".to_string(),
        OpArgs::TakeRows { axis } => format!("axis={axis}"),
    }
}

fn describe_fill(fill: &Fill) -> String {
    match fill {
        Fill::Uniform { seed } | Fill::Normal { seed } => format!("seed={seed}"),
        Fill::Const { value } => format!("value={value}"),
        Fill::Range {
            start,
            step,
            offset,
            end,
        } => {
            let mut s = format!("start={start} step={step}");
            if *offset > 0 {
                s += &format!(" offset={offset}");
            }
            if let Some((i, v)) = end {
                s += &format!(" end[{i}]={v}");
            }
            s
        }
    }
}

fn capped(n: usize, limit: usize) -> usize {
    if limit == 0 {
        n
    } else {
        n.min(limit)
    }
}

fn chunk_line(g: &ChunkGraph, i: usize) -> String {
    let idx = ChunkIdx(i as u32);
    let n = g.node(idx);
    let inputs: Vec<String> = g.inputs(idx).iter().map(|c| c.to_string()).collect();
    let args = match g.args_of(idx) {
        // What tells the chunks of one FUSE node apart: its creation steps' seeds or offsets.
        OpArgs::Fuse(steps) => steps
            .iter()
            .filter_map(|s| match g.args[s.args.index()].at(s.position).as_ref() {
                a @ OpArgs::Fill { .. } => Some(format!("{} {}", s.op.name(), describe_args(a))),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("; "),
        // A random chunk's own seed, derived from its op's and its position.
        args => describe_args(&args.at(n.key.index)),
    };
    format!(
        "c{i} {} key={} {} {} [{}] {args}",
        g.label(idx),
        n.key,
        fmt_shape(g.shape(idx)),
        n.dtype,
        inputs.join(", ")
    )
    .trim_end()
    .to_string()
}

fn ids(row: &[u32], prefix: &str) -> String {
    row.iter()
        .map(|c| format!("{prefix}{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of [`text`] for `graph` prepared for `workers`, stage by stage when it runs in
/// stages (`prepare::stages`): the first stage's plan in full, then what waits for the
/// lengths it computes, with each unknown length printed `?` (the later stages are planned
/// only once those lengths are known, as a submission plans them).
pub fn staged_text(
    graph: &TileableGraph,
    config: &crate::config::TaskConfig,
    workers: &[crate::prepare::WorkerSlots],
    limit: usize,
) -> crate::error::Result<String> {
    let task = crate::ids::TaskId(1);
    let Some(stage) = crate::prepare::stages::next_stage(graph)? else {
        let p = crate::prepare::prepare(graph, config, workers, task)?;
        return Ok(text(&p, limit));
    };
    let first = crate::ids::StageId(1);
    let p = crate::prepare::prepare_stage(&stage.graph, config, workers, task, first)?;
    let mut out = String::new();
    let waiting: Vec<String> = stage
        .boundary
        .iter()
        .map(|b| format!("t{} ({})", b.0, graph.node(*b).op))
        .collect();
    let _ = writeln!(
        out,
        "== stage 1: computes {} (lengths that depend on the data) ==",
        waiting.join(", ")
    );
    out.push_str(&text(&p, limit));
    let _ = writeln!(
        out,
        "== after stage 1: planned once those lengths are known (? = not known yet) =="
    );
    let unknown = crate::prepare::stages::unknown_lengths(graph)?;
    let shown = capped(graph.nodes.len(), limit);
    for (i, (n, unknown)) in graph.nodes.iter().zip(unknown).enumerate().take(shown) {
        let mut shape: Vec<String> = n.shape.iter().map(|d| d.to_string()).collect();
        if unknown && !shape.is_empty() {
            shape[0] = "?".into();
        }
        let inputs: Vec<String> = n.inputs.iter().map(|x| x.to_string()).collect();
        let comma = if shape.len() == 1 { "," } else { "" };
        let _ = writeln!(
            out,
            "t{i} {} ({}{comma}) {} [{}]",
            n.op,
            shape.join(", "),
            n.dtype,
            inputs.join(", ")
        );
    }
    Ok(out)
}

pub fn text(p: &Prepared, limit: usize) -> String {
    let mut out = String::new();
    let t: &TileableGraph = &p.tileable;
    let g: &SubtaskGraph = &p.subtasks;
    let c = counts(p);
    let _ = writeln!(out, "== tileable graph: {} operations ==", t.nodes.len());
    for (i, n) in t
        .nodes
        .iter()
        .enumerate()
        .take(capped(t.nodes.len(), limit))
    {
        let inputs: Vec<String> = n.inputs.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(
            out,
            "t{i} {} {} {} [{}] {}",
            n.op,
            fmt_shape(&n.shape),
            n.dtype,
            inputs.join(", "),
            describe_args(&n.args)
        );
    }
    let outs: Vec<String> = t.outputs.iter().map(|o| o.to_string()).collect();
    let _ = writeln!(out, "outputs: {}", outs.join(", "));
    let _ = writeln!(
        out,
        "\n== chunk graph: {} chunks tiled, {} after optimization and fusion ({} FUSE nodes) ==",
        c["chunks_tiled"], c["chunks"], c["fuse_nodes"]
    );
    for i in 0..capped(g.chunks.len(), limit) {
        let _ = writeln!(out, "{}", chunk_line(&g.chunks, i));
    }
    if capped(g.chunks.len(), limit) < g.chunks.len() {
        let _ = writeln!(
            out,
            "... {} more chunks",
            g.chunks.len() - capped(g.chunks.len(), limit)
        );
    }
    let _ = writeln!(
        out,
        "\n== subtasks: {} ({} initial) ==",
        g.len(),
        c["initial_subtasks"]
    );
    for s in 0..capped(g.len(), limit) {
        let st = &g.subtasks[s];
        let worker = st.worker.map_or("-".to_string(), |w| w.to_string());
        let _ = writeln!(
            out,
            "s{s} {} depth={} worker={worker} chunks=[{}] inputs=[{}] preds=[{}]",
            st.id,
            st.depth,
            ids(g.members.row(s), "c"),
            ids(g.inputs.row(s), "c"),
            ids(g.preds.row(s), "s")
        );
    }
    if capped(g.len(), limit) < g.len() {
        let _ = writeln!(
            out,
            "... {} more subtasks",
            g.len() - capped(g.len(), limit)
        );
    }
    let _ = writeln!(out, "\n== initial assignment ==");
    for (w, n) in &p.assignment {
        let _ = writeln!(out, "{} slots={} initial_subtasks={n}", w.worker, w.slots);
    }
    let _ = writeln!(out, "\n== passes ==");
    for r in &p.passes {
        let _ = writeln!(out, "{:<24} {:>10} nodes", r.pass, r.nodes);
    }
    out
}

pub fn to_json(p: &Prepared, limit: usize) -> Value {
    let t = &p.tileable;
    let g = &p.subtasks;
    let tileables: Vec<Value> = t
        .nodes
        .iter()
        .enumerate()
        .take(capped(t.nodes.len(), limit))
        .map(|(i, n)| {
            json!({"id": format!("t{i}"), "op": n.op.name(), "op_id": n.op.id().to_string(),
                   "family": crate::ops::registry::family_of(n.op).name(),
                   "inputs": n.inputs.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
                   "shape": n.shape.as_slice(), "dtype": n.dtype, "args": n.args})
        })
        .collect();
    let chunks: Vec<Value> = (0..capped(g.chunks.len(), limit))
        .map(|i| {
            let idx = ChunkIdx(i as u32);
            let n = g.chunks.node(idx);
            let fused: Option<Vec<&str>> = match g.chunks.args_of(idx) {
                OpArgs::Fuse(steps) => Some(steps.iter().map(|s| s.op.name()).collect()),
                _ => None,
            };
            json!({"id": format!("c{i}"), "key": n.key.to_string(), "op": n.op.name(), "fused": fused,
                   "inputs": g.chunks.inputs(idx).iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                   "shape": g.chunks.shape(idx).as_slice(), "dtype": n.dtype})
        })
        .collect();
    let subtasks: Vec<Value> = (0..capped(g.len(), limit))
        .map(|s| {
            let st = &g.subtasks[s];
            json!({"index": s, "id": st.id.to_string(), "depth": st.depth,
                   "worker": st.worker.map(|w| w.to_string()),
                   "chunks": g.members.row(s).iter().map(|c| format!("c{c}")).collect::<Vec<_>>(),
                   "inputs": g.inputs.row(s).iter().map(|c| format!("c{c}")).collect::<Vec<_>>(),
                   "outputs": g.outputs.row(s).iter().map(|c| format!("c{c}")).collect::<Vec<_>>(),
                   "preds": g.preds.row(s).iter().map(|x| g.subtasks[*x as usize].id.to_string()).collect::<Vec<_>>()})
        })
        .collect();
    json!({
        "counts": counts(p),
        "truncated": limit != 0 && (t.nodes.len() > limit || g.chunks.len() > limit || g.len() > limit),
        "tileable_graph": {"nodes": tileables, "outputs": t.outputs.iter().map(|o| o.to_string()).collect::<Vec<_>>()},
        "chunk_graph": {"nodes": chunks},
        "subtasks": subtasks,
        "assignment": p.assignment.iter().map(|(w, n)| json!({"worker": w.worker.to_string(), "slots": w.slots, "initial_subtasks": n})).collect::<Vec<_>>(),
        "passes": p.passes,
    })
}

/// Subtasks as clusters of their chunks; edges between chunks.
pub fn dot(p: &Prepared, limit: usize) -> String {
    let g = &p.subtasks;
    let n = capped(g.len(), limit);
    let mut out = String::from("digraph ares {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n");
    let mut shown = vec![false; g.chunks.len()];
    for s in 0..n {
        let st = &g.subtasks[s];
        let worker = st.worker.map_or(String::new(), |w| format!(" @{w}"));
        let _ = writeln!(
            out,
            "  subgraph cluster_s{s} {{\n    label=\"s{s} {}{worker}\";",
            st.id
        );
        for &c in g.members.row(s) {
            shown[c as usize] = true;
            let node = g.chunks.node(ChunkIdx(c));
            let _ = writeln!(
                out,
                "    c{c} [label=\"{}\\n{}\"];",
                g.chunks.label(ChunkIdx(c)),
                fmt_shape(g.chunks.shape_of_node(node))
            );
        }
        out.push_str("  }\n");
    }
    for c in 0..g.chunks.len() {
        if !shown[c] {
            continue;
        }
        for i in g.chunks.inputs(ChunkIdx(c as u32)) {
            if shown[i.index()] {
                let _ = writeln!(out, "  c{} -> c{c};", i.0);
            }
        }
    }
    out.push_str("}\n");
    out
}
