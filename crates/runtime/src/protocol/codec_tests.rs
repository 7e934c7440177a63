//! Round trips of every message kind, wrong-direction and corrupt frames, length claims past
//! the bytes present, and chunk data.

use super::*;
use crate::ids::{SubtaskIdx, TaskId, WorkerId};
use crate::protocol::*;

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
    let graph = crate::tensor::Tensor::graph(&[&crate::tensor::ones(&[4], 2)
        .unwrap()
        .sum(None, false)
        .unwrap()]);
    round_trips(vec![
        FromWorker::Hello {
            version: PROTOCOL_VERSION,
            slots: 2,
            memory_limit: 1 << 30,
            data_addr: "127.0.0.1:1".into(),
        },
        FromWorker::Heartbeat {
            stored_chunks: 3,
            stored_bytes: 24,
            memory: Default::default(),
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
            graph,
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
    ]);
}

#[test]
fn frames_of_another_direction_do_not_decode() {
    let frame = encode_frame(&[FromWorker::Heartbeat {
        stored_chunks: 0,
        stored_bytes: 0,
        memory: Default::default(),
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
