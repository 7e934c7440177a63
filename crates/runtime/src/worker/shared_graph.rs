//! Workers of one process share the decoded graph of a task.
//!
//! Every worker receives the whole subtask graph of a task (`ToWorker::RegisterTask`) and
//! decodes it: a few hundred bytes per subtask (218 at the peak of `ares bench tps` with two
//! million subtasks, the frame it came in included). In an embedded cluster (`ares run`
//! without `--supervisor`, the Python module) all workers live in one process, so each held its own copy of
//! the same immutable graph, and each spent the same seconds decoding it (for
//! `sum(ones(10**7, chunk=1))`, 13.3 million subtasks, sharing saved 380 MB of an 8.1 GB
//! peak and 6 CPU-seconds). Here the first worker decodes, a worker asking meanwhile waits
//! for that decode instead of doing its own, and later ones get the same `Arc` for as long
//! as any worker still holds it.
//!
//! Graphs are matched by task id, length and SHA-256 of their encoded bytes, so two
//! supervisors in one process (tests) whose task ids collide never share a graph by mistake.
//! A worker alone in its process (`ares node`) has no one to share with: it decodes without
//! hashing.

use crate::protocol::codec;
use ares_core::graph::{WorkerDelta, WorkerGraph};
use ares_core::ids::TaskId;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Task, the graph a part extends (its address; 0 for a whole graph), length and SHA-256 of
/// the bytes.
type Key = (TaskId, usize, usize, [u8; 32]);
type Decoded = Result<Arc<WorkerGraph>, String>;

enum Entry {
    /// A worker is decoding it: wait on the cell.
    Decoding(Arc<OnceLock<Decoded>>),
    /// Decoded and held by some worker (or dropped by all: decode again).
    Ready(Weak<WorkerGraph>),
}

static GRAPHS: Mutex<Option<HashMap<Key, Entry>>> = Mutex::new(None);

/// The decoded graph of `task` from its encoded `bytes`; with `share`, shared with the other
/// workers of this process that received the same bytes.
pub fn decode(task: TaskId, bytes: &[u8], share: bool) -> Decoded {
    shared((task, 0, bytes), share, || decode_alone(bytes))
}

/// `graph` extended by the encoded part `bytes` (a streamed task,
/// [`ares_core::graph::GraphDelta`]); with `share`, shared with the other workers of this process
/// that extend the same graph by the same part. The graph is copied once per part: parts
/// grow fourfold, so that is about a third of the graph's size over the whole task.
pub fn extend(task: TaskId, graph: &Arc<WorkerGraph>, bytes: &[u8], share: bool) -> Decoded {
    let extend_alone = || {
        let delta: WorkerDelta = codec::decode(bytes).map_err(|e| e.to_string())?;
        graph
            .extended(delta)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    };
    shared(
        (task, Arc::as_ptr(graph) as usize, bytes),
        share,
        extend_alone,
    )
}

fn shared(
    (task, base, bytes): (TaskId, usize, &[u8]),
    share: bool,
    make: impl FnOnce() -> Decoded,
) -> Decoded {
    if !share {
        return make();
    }
    let key: Key = (task, base, bytes.len(), Sha256::digest(bytes).into());
    let cell = {
        let mut graphs = GRAPHS.lock().unwrap_or_else(|p| p.into_inner());
        let graphs = graphs.get_or_insert_with(HashMap::new);
        // Forget graphs no worker holds any more.
        graphs.retain(|_, e| !matches!(e, Entry::Ready(w) if w.strong_count() == 0));
        match graphs.get(&key) {
            Some(Entry::Ready(w)) => {
                if let Some(g) = w.upgrade() {
                    return Ok(g);
                }
                unreachable!("dead entries were just removed");
            }
            Some(Entry::Decoding(cell)) => cell.clone(),
            None => {
                let cell = Arc::new(OnceLock::new());
                graphs.insert(key, Entry::Decoding(cell.clone()));
                cell
            }
        }
    };
    // The first caller decodes; any other blocks here until it has (no lock held).
    let decoded = cell.get_or_init(make).clone();
    let mut graphs = GRAPHS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(graphs) = graphs.as_mut() {
        match &decoded {
            Ok(g) => graphs.insert(key, Entry::Ready(Arc::downgrade(g))),
            Err(_) => graphs.remove(&key),
        };
    }
    decoded
}

fn decode_alone(bytes: &[u8]) -> Decoded {
    codec::decode::<WorkerGraph>(bytes)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ares_core::prepare::{prepare, uniform_cluster};
    use ares_core::tensor::{self, Tensor};

    fn encoded(n: usize, task: TaskId) -> Vec<u8> {
        let t = tensor::ones(&[n], 1).unwrap().sum(None, false).unwrap();
        let p = prepare(
            &Tensor::graph(&[&t]),
            &Default::default(),
            &uniform_cluster(2, 1),
            task,
        )
        .unwrap();
        codec::encode(&p.subtasks.worker_view()).unwrap().to_vec()
    }

    #[test]
    fn workers_of_one_process_share_a_graph_while_one_holds_it() {
        let (task, other) = (TaskId(9001), TaskId(9002));
        let bytes = encoded(40, task);
        let a = decode(task, &bytes, true).unwrap();
        let b = decode(task, &bytes, true).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second worker shares the first one's graph"
        );
        let c = decode(other, &bytes, true).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "another task id: another graph");
        let different = encoded(41, task);
        let d = decode(task, &different, true).unwrap();
        let alone = decode(task, &bytes, false).unwrap();
        assert!(
            !Arc::ptr_eq(&a, &alone),
            "a worker alone in its process decodes its own"
        );
        assert!(
            !Arc::ptr_eq(&a, &d),
            "other bytes under the same task id: another graph"
        );
        assert_ne!(d.chunks.len(), a.chunks.len());
        drop((a, b));
        let again = decode(task, &bytes, true).unwrap();
        assert_eq!(
            again.chunks.len(),
            c.chunks.len(),
            "decoded afresh once no worker held it"
        );
        assert!(decode(task, &bytes[..bytes.len() / 2], true).is_err());
    }

    #[test]
    fn concurrent_decodes_of_one_graph_yield_one_copy() {
        let task = TaskId(9003);
        let bytes = Arc::new(encoded(3000, task));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let bytes = bytes.clone();
                std::thread::spawn(move || decode(task, &bytes, true).unwrap())
            })
            .collect();
        let graphs: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(graphs.iter().all(|g| Arc::ptr_eq(g, &graphs[0])));
    }

    /// A streamed graph's parts, as the supervisor sends them: the first as a whole graph,
    /// the next ones as deltas; and the whole graph they make.
    fn streamed_parts(task: TaskId) -> (Vec<Vec<u8>>, ares_core::graph::SubtaskGraph) {
        use ares_core::prepare::stream::{prepare_streamed, stream_plan};
        let t = tensor::rand(&[3000], 1, Some(3))
            .unwrap()
            .sum(None, false)
            .unwrap();
        let config = crate::config::TaskConfig {
            stream_from_chunks: Some(0),
            stream_first_chunks: 100,
            ..Default::default()
        };
        let plan = stream_plan(&Tensor::graph(&[&t]), &config)
            .unwrap()
            .unwrap();
        let mut whole = ares_core::graph::SubtaskGraph::empty(task, ares_core::ids::StageId(0));
        let mut parts = Vec::new();
        let workers = uniform_cluster(2, 1);
        prepare_streamed(
            &plan,
            &config,
            &workers,
            (task, ares_core::ids::StageId(0)),
            |_| Ok(()),
            |d| {
                parts.push(
                    if parts.is_empty() {
                        codec::encode(&ares_core::graph::WorkerView {
                            chunks: &d.chunks,
                            members: &d.members,
                            outputs: &d.outputs,
                        })
                    } else {
                        codec::encode(&d.worker_view())
                    }
                    .unwrap()
                    .to_vec(),
                );
                whole.append(d).unwrap();
                Ok(true)
            },
        )
        .unwrap();
        (parts, whole)
    }

    #[test]
    fn a_graph_extended_part_by_part_is_the_whole_graph_and_shared_like_one() {
        let task = TaskId(9004);
        let (parts, whole) = streamed_parts(task);
        assert!(parts.len() >= 3, "{} parts", parts.len());
        let mut a = decode(task, &parts[0], true).unwrap();
        let mut b = decode(task, &parts[0], true).unwrap();
        for part in &parts[1..] {
            a = extend(task, &a, part, true).unwrap();
            b = extend(task, &b, part, true).unwrap();
            assert!(Arc::ptr_eq(&a, &b), "both workers share each extension");
        }
        let alone = parts[1..]
            .iter()
            .fold(decode(task, &parts[0], false).unwrap(), |g, p| {
                extend(task, &g, p, false).unwrap()
            });
        let view = |g: &WorkerGraph| {
            codec::encode(&ares_core::graph::WorkerView {
                chunks: &g.chunks,
                members: &g.members,
                outputs: &g.outputs,
            })
            .unwrap()
        };
        let want = codec::encode(&whole.worker_view()).unwrap();
        assert_eq!(view(&a), want, "the extended graph is the whole graph");
        assert_eq!(view(&alone), want);
        // A part applied twice, or out of order, is refused (its base is not the graph's end).
        assert!(extend(task, &a, &parts[1], false).is_err());
        let first = decode(task, &parts[0], false).unwrap();
        assert!(extend(task, &first, &parts[2], false).is_err());
    }
}
