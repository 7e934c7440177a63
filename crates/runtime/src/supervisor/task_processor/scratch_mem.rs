use super::*;
use crate::config::TaskConfig;
use crate::prepare::{prepare, uniform_cluster};
use crate::protocol::codec;
use crate::tensor::{self, Tensor};

fn rss() -> i64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    s.split_whitespace().nth(1).unwrap().parse::<i64>().unwrap() * 4096
}

#[test]
#[ignore]
fn scratch_memory_composition() {
    let n = 2_000_000usize;
    let t = tensor::rand(&[n], 1, Some(1)).unwrap();
    let config = TaskConfig {
        fuse_enabled: false,
        initial_same_color_num: Some(1),
        ..TaskConfig::default()
    };
    let g = Tensor::graph(&[&t]);
    let r0 = rss();
    let p = prepare(&g, &config, &uniform_cluster(2, 1), crate::ids::TaskId(7)).unwrap();
    let r1 = rss();
    eprintln!(
        "prepared: {} B/subtask (rss delta), subtasks {}",
        (r1 - r0) / n as i64,
        p.subtasks.len()
    );
    let sg = &p.subtasks;
    eprintln!(
        "sizes: node {} args {} subtask {}",
        std::mem::size_of::<crate::graph::ChunkNode>(),
        std::mem::size_of::<crate::ops::OpArgs>(),
        std::mem::size_of::<crate::graph::Subtask>()
    );
    eprintln!(
        "chunks {} args {} results {}",
        sg.chunks.len(),
        sg.chunks.args.len(),
        sg.chunks.results.len()
    );
    let bytes = codec::encode(&sg.worker_view()).unwrap();
    let r2 = rss();
    eprintln!(
        "encoded: {} B/subtask (len {} = {} B/subtask)",
        (r2 - r1) / n as i64,
        bytes.len(),
        bytes.len() / n
    );
    let mut state = TaskState::new(Arc::new(p.subtasks), 3);
    let r3 = rss();
    eprintln!("state: {} B/subtask", (r3 - r2) / n as i64);
    state.start();
    let r4 = rss();
    eprintln!(
        "ready items: {} B/subtask; size_of ReadySubtask {}",
        (r4 - r3) / n as i64,
        std::mem::size_of::<crate::supervisor::scheduler::state::ReadySubtask>()
    );
    let items = match state.outbox.pop().unwrap() {
        TaskOut::Submit(v) => v,
        _ => panic!(),
    };
    let mut sched = crate::supervisor::scheduler::state::SchedulerState::new(4096, 512);
    sched.add_worker(1, 0);
    sched.add_worker(1, 0);
    sched.enqueue(items);
    let r5 = rss();
    eprintln!("queued (items dropped): {} B/subtask", (r5 - r4) / n as i64);
    eprintln!("total after: {} B/subtask", (r5 - r0) / n as i64);
}
