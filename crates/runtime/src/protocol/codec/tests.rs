//! Round trips of every message kind, wrong-direction and corrupt frames, length claims past
//! the bytes present, and chunk data.

use super::*;
use crate::protocol::*;
use ares_core::ids::{SubtaskIdx, TaskId, WorkerId};

fn info() -> TaskInfo {
    TaskInfo {
        task: TaskId(1),
        status: TaskStatus::Running,
        progress: 0.5,
        subtasks: 3,
        error: None,
        retries: 2,
        prepare_seconds: Some(0.25),
        elapsed: 1.0,
    }
}

fn round_trips<M: Direction + Clone + std::fmt::Debug + PartialEq>(messages: Vec<M>) {
    let frame = encode_frame(&messages).unwrap();
    assert_eq!(decode_frame::<M>(&frame).unwrap(), messages);
    for m in &messages {
        let one = encode_frame(std::slice::from_ref(m)).unwrap();
        assert_eq!(decode_frame::<M>(&one).unwrap(), vec![m.clone()]);
    }
}

#[test]
fn every_message_round_trips_in_one_mixed_frame() {
    let graph = ares_core::tensor::Tensor::graph(&[&ares_core::tensor::ones(&[4], 2)
        .unwrap()
        .sum(None, false)
        .unwrap()]);
    round_trips(vec![
        FromWorker::Hello {
            version: PROTOCOL_VERSION,
            slots: 2,
            memory_limit: 1 << 30,
            data_addr: "127.0.0.1:1".into(),
            runs_code: true,
        },
        FromWorker::Heartbeat {
            stored_chunks: 3,
            stored_bytes: 24,
            memory: Default::default(),
            stream: Default::default(),
        },
        FromWorker::SubtasksFinished {
            task: TaskId(1),
            reports: vec![
                SubtaskReport {
                    subtask: SubtaskIdx(1),
                    outcome: Ok(vec![(ChunkIdx(1), 8)]),
                },
                SubtaskReport {
                    subtask: SubtaskIdx(2),
                    outcome: Err(crate::protocol::SubtaskError::Failed("boom".into())),
                },
            ],
        },
    ]);
    round_trips(vec![
        ToWorker::Welcome {
            version: PROTOCOL_VERSION,
            worker: WorkerId(3),
        },
        ToWorker::Refused {
            reason: "version".into(),
        },
        ToWorker::Peers {
            peers: vec![(WorkerId(0), "a:1".into())],
        },
        ToWorker::RegisterTask {
            task: TaskId(1),
            graph: vec![1, 2, 3].into(),
        },
        ToWorker::ExtendTask {
            task: TaskId(1),
            graph: vec![4, 5].into(),
        },
        ToWorker::RunSubtasks {
            task: TaskId(1),
            subtasks: vec![RunSubtask {
                subtask: SubtaskIdx(4),
                depth: 1,
                inputs: vec![(ChunkIdx(2), WorkerId(1))],
            }],
        },
        ToWorker::CancelSubtasks {
            task: TaskId(1),
            subtasks: vec![SubtaskIdx(1)],
        },
        ToWorker::ReleaseChunks {
            task: TaskId(1),
            chunks: vec![ChunkIdx(9)],
        },
        ToWorker::ForgetTask { task: TaskId(1) },
    ]);
    round_trips(vec![
        ClientRequest::Hello {
            version: PROTOCOL_VERSION,
        },
        ClientRequest::Submit {
            request: 1,
            graph: graph.clone(),
            fuse_enabled: Some(false),
            config: Some(crate::config::TaskConfig {
                combine_size: 8,
                ..Default::default()
            }),
        },
        ClientRequest::Wait {
            request: 2,
            task: TaskId(1),
            timeout_ms: 10,
        },
        ClientRequest::GetInfo {
            request: 3,
            task: TaskId(1),
        },
        ClientRequest::Cancel {
            request: 4,
            task: TaskId(1),
        },
        ClientRequest::FetchResult {
            request: 5,
            task: TaskId(1),
        },
        ClientRequest::Explain {
            request: 6,
            graph,
            limit: 50,
        },
    ]);
    round_trips(vec![
        ClientReply::Welcome {
            version: PROTOCOL_VERSION,
        },
        ClientReply::Refused { reason: "x".into() },
        ClientReply::Submitted {
            request: 1,
            task: Ok(TaskId(1)),
        },
        ClientReply::Info {
            request: 3,
            info: Ok(info()),
        },
        ClientReply::ResultData {
            request: 5,
            data: Err("gone".into()),
        },
        ClientReply::Explained {
            request: 6,
            text: Ok("== tileable graph: 1 operations ==\n".into()),
        },
        ClientReply::Explained {
            request: 7,
            text: Err("unknown session".into()),
        },
    ]);
}

#[test]
fn frames_of_another_direction_do_not_decode() {
    let frame = encode_frame(&[FromWorker::Heartbeat {
        stored_chunks: 0,
        stored_bytes: 0,
        memory: Default::default(),
        stream: Default::default(),
    }])
    .unwrap();
    let err = decode_frame::<ClientRequest>(&frame).unwrap_err();
    assert!(err.to_string().contains("client-request"), "{err}");
    assert!(decode_frame::<ToWorker>(&frame).is_err());
    assert_eq!(decode_frame::<FromWorker>(&frame).unwrap().len(), 1);
}

#[test]
fn corrupt_and_truncated_frames_are_errors() {
    let frame = encode_frame(&[ClientReply::Info {
        request: 3,
        info: Ok(info()),
    }])
    .unwrap();
    assert!(decode_frame::<ClientReply>(&frame[..frame.len() / 2]).is_err());
    let mut garbage = frame.clone();
    garbage[1] = 0xff;
    garbage[2] = 0xff;
    assert!(decode_frame::<ClientReply>(&garbage).is_err());
    assert!(decode_frame::<ClientReply>(&[0xa4, 0xde, 0xad, 0xbe, 0xef, 0x01]).is_err());
    assert!(decode_frame::<ClientReply>(&[]).is_err());
}

#[test]
fn length_claims_past_the_bytes_present_are_refused_without_allocating() {
    // Row 1 of issue 8: a Vec of one Refused whose reason claims 2^56 bytes.
    for claim in [1u64 << 56, 1 << 29, 1 << 31, u32::MAX as u64] {
        let mut frame = vec![ToWorker::TAG, 0x01, 0x01, 0xfd];
        frame.extend_from_slice(&claim.to_le_bytes());
        assert!(decode_frame::<ToWorker>(&frame).is_err());
    }
    // Chunk shapes whose product overflows are corrupt, not a panic.
    let head = encode(&vec![ChunkHeader {
        chunk: ChunkIdx(0),
        dtype: DType::F64,
        shape: vec![u64::MAX, u64::MAX],
        bytes: 0,
    }])
    .unwrap();
    let mut bytes = (head.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&head);
    assert!(decode_chunks(&bytes).is_err());
}

#[test]
fn chunks_round_trip_as_raw_bytes() {
    let f =
        ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1.0, 2.5, -3.0, 4.0]).unwrap());
    let i = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![1, -2, 3]).unwrap());
    let b = ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[]), vec![true]).unwrap());
    let bytes = encode_chunks(&[(ChunkIdx(0), &f), (ChunkIdx(7), &i), (ChunkIdx(9), &b)]).unwrap();
    let back = decode_chunks(&bytes).unwrap();
    assert_eq!(
        back,
        vec![(ChunkIdx(0), f), (ChunkIdx(7), i), (ChunkIdx(9), b)]
    );
    assert!(decode_chunks(&bytes[..bytes.len() - 3]).is_err());
}

/// A prepared task's graph as the workers get it: nodes, edges and index lists go as packed
/// records ([`ares_core::graph::packed`]); everything reads back the same, and a record list cut
/// short or naming an unknown operation is an error, not a wrong graph.
#[test]
fn a_task_graph_round_trips_through_its_packed_arenas() {
    use ares_core::graph::WorkerGraph;
    let a = ares_core::tensor::rand(&[40, 30], 7, Some(1)).unwrap();
    let x = a.exp().unwrap().sum(Some(&[0]), false).unwrap();
    let config = crate::config::TaskConfig::default();
    let workers = ares_core::prepare::uniform_cluster(2, 2);
    let p = ares_core::prepare::prepare(
        &ares_core::tensor::Tensor::graph(&[&x]),
        &config,
        &workers,
        TaskId(3),
    )
    .unwrap();
    let g = &p.subtasks;
    let bytes = encode(&g.worker_view()).unwrap();
    let back: WorkerGraph = decode(&bytes).unwrap();
    assert_eq!(back.chunks.nodes, g.chunks.nodes);
    assert_eq!(back.chunks.args, g.chunks.args);
    assert_eq!(back.chunks.results, g.chunks.results);
    for c in 0..g.chunks.len() as u32 {
        let c = ares_core::ids::ChunkIdx(c);
        assert_eq!(back.chunks.inputs(c), g.chunks.inputs(c));
        assert_eq!(back.chunks.shape(c), g.chunks.shape(c));
    }
    assert_eq!(back.members, g.members);
    assert_eq!(back.outputs, g.outputs);
    // The human-readable form (explain's JSON) keeps one value per field.
    let json = serde_json::to_value(&g.chunks).unwrap();
    assert!(json["nodes"][0]["op"].is_string(), "{}", json["nodes"][0]);

    // The node arena comes first: bincode's varint length prefix, then 29-byte records.
    let packed = ares_core::graph::packed::NODE_BYTES * g.chunks.len();
    let len_prefix = match packed {
        0..251 => 1,
        251..65536 => 3,
        _ => 5,
    };
    let head = &bytes[..bytes.len() - 1];
    assert!(
        decode::<WorkerGraph>(head).is_err(),
        "a graph cut short decodes"
    );
    let mut corrupt = bytes.clone();
    // The first record's op id is its bytes 8..12.
    corrupt[len_prefix + 8..len_prefix + 12].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    let e = decode::<WorkerGraph>(&corrupt).unwrap_err().to_string();
    assert!(e.contains("chunk node 0: unknown op id"), "{e}");
}

/// A frame in pieces is the frame `encode_frame` makes, with its length in front; a large
/// shared byte string in it is the caller's own buffer, not a copy, and small ones are copied.
#[test]
fn large_shared_bytes_are_spliced_into_a_frame_not_copied() {
    let graph = bytes::Bytes::from(
        (0..SPLICE_MIN as u32 * 2)
            .map(|i| i as u8)
            .collect::<Vec<_>>(),
    );
    let messages = vec![
        ToWorker::HeartbeatAck,
        ToWorker::RegisterTask {
            task: TaskId(3),
            graph: graph.clone(),
        },
        ToWorker::RegisterTask {
            task: TaskId(4),
            graph: bytes::Bytes::from_static(b"small"),
        },
        ToWorker::ForgetTask { task: TaskId(3) },
    ];
    let pieces = encode_frame_pieces(&messages, usize::MAX).unwrap();
    assert_eq!(pieces.len(), 3, "head, the graph, the rest");
    assert_eq!(pieces[1].as_ptr(), graph.as_ptr(), "the same buffer");
    let wire: Vec<u8> = pieces.concat();
    let frame = encode_frame(&messages).unwrap();
    assert_eq!(wire[..4], (frame.len() as u32).to_be_bytes());
    assert_eq!(wire[4..], frame[..]);
    assert_eq!(decode_frame::<ToWorker>(&wire[4..]).unwrap(), messages);
    // The limit counts the tag and the body, as the reader does.
    assert!(matches!(
        encode_frame_pieces(&messages, frame.len() - 1),
        Err(CodecError::TooLarge { .. })
    ));
    assert!(encode_frame_pieces(&messages, frame.len()).is_ok());
}

/// Every dtype, each value of an integer's range edges included, reads back bit for bit.
#[test]
fn chunks_of_every_dtype_round_trip() {
    use ares_core::array::DTYPES;
    let values = ArrayData::F64(
        ArrayD::from_shape_vec(
            IxDyn(&[2, 3]),
            vec![-129.0, -1.0, 0.0, 127.0, 255.0, 65_537.5],
        )
        .unwrap(),
    );
    let extremes = vec![
        ArrayData::U64(ArrayD::from_shape_vec(IxDyn(&[2]), vec![u64::MAX, 1 << 63]).unwrap()),
        ArrayData::I8(ArrayD::from_shape_vec(IxDyn(&[2]), vec![i8::MIN, i8::MAX]).unwrap()),
    ];
    let chunks: Vec<ArrayData> = DTYPES
        .iter()
        .map(|d| values.clone().cast(*d))
        .chain(extremes)
        .collect();
    let refs: Vec<(ChunkIdx, &ArrayData)> = chunks
        .iter()
        .enumerate()
        .map(|(i, a)| (ChunkIdx(i as u32), a))
        .collect();
    let back = decode_chunks(&encode_chunks(&refs).unwrap()).unwrap();
    assert_eq!(back.len(), chunks.len());
    for ((c, got), want) in back.iter().zip(&chunks) {
        assert_eq!(got, want, "chunk {c}");
        assert_eq!(got.dtype(), want.dtype());
    }
}
