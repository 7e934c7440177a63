//! Bytes on the wire: the only module that knows bincode.
//!
//! Control frames are `u32 BE length | bincode(Vec<Message>)`, read and written with
//! tokio-util's length-delimited codec (async) or the blocking helpers here (clients and the
//! data plane). A frame longer than the configured limit is refused before it is read; a frame
//! that does not decode is an error for that connection only. Chunk data travels as a small
//! bincode header followed by the raw little-endian element bytes: no per-element encoding.

use super::Message;
use crate::array::{ArrayData, DType};
use crate::ids::ChunkIdx;
use ndarray::{ArrayD, IxDyn};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{Read, Write};
use thiserror::Error;
use tokio_util::codec::LengthDelimitedCodec;

#[derive(Debug, Error)]
pub enum CodecError {
    #[error("frame of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("corrupt frame: {0}")]
    Corrupt(String),
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// Encodes into a buffer of exactly the right size (measured first: no regrowing copies).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let corrupt = |e: bincode::error::EncodeError| CodecError::Corrupt(e.to_string());
    let mut sizer = bincode::enc::write::SizeWriter::default();
    bincode::serde::encode_into_writer(value, &mut sizer, config()).map_err(corrupt)?;
    let mut buf = vec![0u8; sizer.bytes_written];
    let written = bincode::serde::encode_into_slice(value, &mut buf, config()).map_err(corrupt)?;
    buf.truncate(written);
    Ok(buf)
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let (value, used) = bincode::serde::decode_from_slice(bytes, config())
        .map_err(|e| CodecError::Corrupt(e.to_string()))?;
    if used != bytes.len() {
        return Err(CodecError::Corrupt(format!(
            "{} trailing bytes",
            bytes.len() - used
        )));
    }
    Ok(value)
}

pub fn encode_frame(messages: &[Message]) -> Result<Vec<u8>, CodecError> {
    encode(&messages)
}

pub fn decode_frame(bytes: &[u8]) -> Result<Vec<Message>, CodecError> {
    decode(bytes)
}

/// The async framing codec with a frame size limit.
pub fn framing(max_frame: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(max_frame)
        .new_codec()
}

/// Writes one length-delimited frame (blocking).
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> Result<(), CodecError> {
    let len = u32::try_from(payload.len()).map_err(|_| CodecError::TooLarge {
        size: payload.len(),
        limit: u32::MAX as usize,
    })?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(payload)?;
    w.flush()?;
    Ok(())
}

/// Reads one length-delimited frame (blocking), refusing frames over `limit`.
pub fn read_frame(r: &mut impl Read, limit: usize) -> Result<Vec<u8>, CodecError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let size = u32::from_be_bytes(len) as usize;
    if size > limit {
        return Err(CodecError::TooLarge { size, limit });
    }
    let mut buf = vec![0u8; size];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

#[derive(Serialize, Deserialize)]
struct ChunkHeader {
    chunk: ChunkIdx,
    dtype: DType,
    shape: Vec<u64>,
    bytes: u64,
}

/// Chunks as `bincode(headers) | raw bytes of each chunk in order`, prefixed by the header length.
pub fn encode_chunks(chunks: &[(ChunkIdx, &ArrayData)]) -> Result<Vec<u8>, CodecError> {
    let mut headers = Vec::with_capacity(chunks.len());
    let mut body: Vec<u8> = Vec::with_capacity(chunks.iter().map(|(_, a)| a.nbytes()).sum());
    for (chunk, data) in chunks {
        let start = body.len();
        match data {
            ArrayData::F64(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::I64(a) => body.extend_from_slice(bytemuck::cast_slice(
                a.as_standard_layout().as_slice().expect("standard layout"),
            )),
            ArrayData::Bool(a) => body.extend(a.iter().map(|b| *b as u8)),
        }
        headers.push(ChunkHeader {
            chunk: *chunk,
            dtype: data.dtype(),
            shape: data.shape().iter().map(|d| *d as u64).collect(),
            bytes: (body.len() - start) as u64,
        });
    }
    let head = encode(&headers)?;
    let mut out = Vec::with_capacity(8 + head.len() + body.len());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    Ok(out)
}

pub fn decode_chunks(bytes: &[u8]) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    let corrupt = |m: &str| CodecError::Corrupt(format!("chunk data: {m}"));
    let head_len = u64::from_le_bytes(
        bytes
            .get(..8)
            .ok_or_else(|| corrupt("short header"))?
            .try_into()
            .expect("8 bytes"),
    ) as usize;
    let head_end = 8usize
        .checked_add(head_len)
        .filter(|e| *e <= bytes.len())
        .ok_or_else(|| corrupt("header past the end"))?;
    let headers: Vec<ChunkHeader> = decode(&bytes[8..head_end])?;
    let mut pos = head_end;
    let mut out = Vec::with_capacity(headers.len());
    for h in headers {
        let end = pos
            .checked_add(h.bytes as usize)
            .filter(|e| *e <= bytes.len())
            .ok_or_else(|| corrupt("body past the end"))?;
        let raw = &bytes[pos..end];
        pos = end;
        let shape: Vec<usize> = h.shape.iter().map(|d| *d as usize).collect();
        let n: usize = shape.iter().product();
        if raw.len() != n * h.dtype.itemsize() {
            return Err(corrupt("size does not match shape"));
        }
        let shaped = |e: ndarray::ShapeError| CodecError::Corrupt(e.to_string());
        let data = match h.dtype {
            DType::F64 => ArrayData::F64(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, f64>(raw))
                    .map_err(shaped)?,
            ),
            DType::I64 => ArrayData::I64(
                ArrayD::from_shape_vec(IxDyn(&shape), bytemuck::pod_collect_to_vec::<u8, i64>(raw))
                    .map_err(shaped)?,
            ),
            DType::Bool => ArrayData::Bool(
                ArrayD::from_shape_vec(IxDyn(&shape), raw.iter().map(|b| *b != 0).collect())
                    .map_err(shaped)?,
            ),
        };
        out.push((h.chunk, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{SubtaskIdx, TaskId, WorkerId};
    use crate::protocol::{RunSubtask, SubtaskReport, TaskInfo, TaskStatus, PROTOCOL_VERSION};

    fn every_message() -> Vec<Message> {
        let graph = crate::tensor::Tensor::graph(&[&crate::tensor::ones(&[4], 2)
            .unwrap()
            .sum(None, false)
            .unwrap()]);
        let info = TaskInfo {
            task: TaskId(1),
            status: TaskStatus::Running,
            progress: 0.5,
            subtasks: 3,
            error: None,
            retries: 2,
            prepare_seconds: Some(0.25),
            elapsed: 1.0,
        };
        vec![
            Message::HelloWorker {
                version: PROTOCOL_VERSION,
                slots: 2,
                memory_limit: 1 << 30,
                data_addr: "127.0.0.1:1".into(),
            },
            Message::HelloClient {
                version: PROTOCOL_VERSION,
            },
            Message::Welcome {
                version: PROTOCOL_VERSION,
                worker: Some(WorkerId(3)),
            },
            Message::Refused {
                reason: "version".into(),
            },
            Message::Peers {
                peers: vec![(WorkerId(0), "a:1".into())],
            },
            Message::RegisterTask {
                task: TaskId(1),
                graph: vec![1, 2, 3].into(),
            },
            Message::RunSubtasks {
                task: TaskId(1),
                subtasks: vec![RunSubtask {
                    subtask: SubtaskIdx(4),
                    depth: 1,
                    inputs: vec![(ChunkIdx(2), WorkerId(1))],
                }],
            },
            Message::CancelSubtasks {
                task: TaskId(1),
                subtasks: vec![SubtaskIdx(1)],
            },
            Message::ReleaseChunks {
                task: TaskId(1),
                chunks: vec![ChunkIdx(9)],
            },
            Message::ForgetTask { task: TaskId(1) },
            Message::Heartbeat {
                stored_chunks: 3,
                stored_bytes: 24,
            },
            Message::SubtasksFinished {
                task: TaskId(1),
                reports: vec![
                    SubtaskReport {
                        subtask: SubtaskIdx(1),
                        outcome: Ok(vec![(ChunkIdx(1), 8)]),
                    },
                    SubtaskReport {
                        subtask: SubtaskIdx(2),
                        outcome: Err("boom".into()),
                    },
                ],
            },
            Message::Submit {
                request: 1,
                graph,
                fuse_enabled: Some(false),
                config: Some(crate::config::TaskConfig {
                    combine_size: 8,
                    ..Default::default()
                }),
            },
            Message::Submitted {
                request: 1,
                task: Ok(TaskId(1)),
            },
            Message::Wait {
                request: 2,
                task: TaskId(1),
                timeout_ms: 10,
            },
            Message::GetInfo {
                request: 3,
                task: TaskId(1),
            },
            Message::Info {
                request: 3,
                info: Ok(info),
            },
            Message::Cancel {
                request: 4,
                task: TaskId(1),
            },
            Message::FetchResult {
                request: 5,
                task: TaskId(1),
            },
            Message::ResultData {
                request: 5,
                data: Err("gone".into()),
            },
        ]
    }

    #[test]
    fn every_message_round_trips_in_one_mixed_frame() {
        let messages = every_message();
        let frame = encode_frame(&messages).unwrap();
        assert_eq!(decode_frame(&frame).unwrap(), messages);
        for m in &messages {
            assert_eq!(
                decode_frame(&encode_frame(std::slice::from_ref(m)).unwrap()).unwrap(),
                vec![m.clone()]
            );
        }
    }

    #[test]
    fn corrupt_and_truncated_frames_are_errors() {
        let frame = encode_frame(&every_message()).unwrap();
        assert!(decode_frame(&frame[..frame.len() / 2]).is_err());
        let mut garbage = frame.clone();
        garbage[0] = 0xff;
        garbage[1] = 0xff;
        assert!(decode_frame(&garbage).is_err());
        assert!(decode_frame(&[0xde, 0xad, 0xbe, 0xef, 0x01]).is_err());
    }

    #[test]
    fn blocking_frames_split_and_oversized() {
        let payload = encode_frame(&[Message::Heartbeat {
            stored_chunks: 0,
            stored_bytes: 0,
        }])
        .unwrap();
        let mut wire = Vec::new();
        write_frame(&mut wire, &payload).unwrap();
        write_frame(&mut wire, &payload).unwrap();
        let mut reader = std::io::Cursor::new(wire.clone());
        assert_eq!(read_frame(&mut reader, 1024).unwrap(), payload);
        assert_eq!(read_frame(&mut reader, 1024).unwrap(), payload);
        // A frame cut in the middle is an error, not a hang or a panic.
        let mut cut = std::io::Cursor::new(wire[..wire.len() - 1].to_vec());
        read_frame(&mut cut, 1024).unwrap();
        assert!(read_frame(&mut cut, 1024).is_err());
        // A length over the limit is refused before reading the body.
        let mut big = std::io::Cursor::new((1u32 << 30).to_be_bytes().to_vec());
        assert!(matches!(
            read_frame(&mut big, 1024),
            Err(CodecError::TooLarge { .. })
        ));
    }

    #[test]
    fn chunks_round_trip_as_raw_bytes() {
        let f = ArrayData::F64(
            ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1.0, 2.5, -3.0, 4.0]).unwrap(),
        );
        let i = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![1, -2, 3]).unwrap());
        let b = ArrayData::Bool(ArrayD::from_shape_vec(IxDyn(&[]), vec![true]).unwrap());
        let bytes =
            encode_chunks(&[(ChunkIdx(0), &f), (ChunkIdx(7), &i), (ChunkIdx(9), &b)]).unwrap();
        let back = decode_chunks(&bytes).unwrap();
        assert_eq!(
            back,
            vec![(ChunkIdx(0), f), (ChunkIdx(7), i), (ChunkIdx(9), b)]
        );
        assert!(decode_chunks(&bytes[..bytes.len() - 3]).is_err());
    }
}
