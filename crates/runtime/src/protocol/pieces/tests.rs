use super::*;
use crate::protocol::data::{add_answer_frame, MORE, OK};

fn f64s(n: usize) -> ArrayData {
    ArrayData::F64(ArrayD::from_shape_fn(IxDyn(&[n / 4, 4]), |i| {
        (i[0] * 4 + i[1]) as f64 * 0.5
    }))
}

/// Frames of an answer packed the way the data server packs them.
fn pack(chunks: &[(ChunkIdx, ArrayData)], part: usize) -> Vec<Vec<u8>> {
    let mut packer = Packer::new(part);
    let mut frames = Vec::new();
    for (c, d) in chunks {
        let raw = raw_bytes(d);
        let mut off = 0;
        loop {
            if packer.full() {
                frames.push(packer.frame(MORE).unwrap());
            }
            off += packer.fill(*c, (d.dtype(), d.shape()), &raw, off);
            if off >= raw.len() {
                break;
            }
        }
    }
    frames.push(packer.frame(OK).unwrap());
    frames
}

fn unpack(frames: &[Vec<u8>]) -> Result<Vec<(ChunkIdx, ArrayData)>, CodecError> {
    let mut a = Assembler::default();
    for (i, f) in frames.iter().enumerate() {
        let last = add_answer_frame(&mut a, f)?;
        assert_eq!(last, i + 1 == frames.len());
    }
    a.finish()
}

#[test]
fn a_chunk_larger_than_a_part_travels_in_pieces_bit_for_bit() {
    let big = f64s(40_000); // 320 KB, parts of 4 KiB
    let small = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![-1, 0, 7]).unwrap());
    let flags = ArrayData::Bool(ArrayD::from_shape_fn(IxDyn(&[1001]), |i| i[0] % 3 == 0));
    let empty = ArrayData::F64(ArrayD::zeros(IxDyn(&[0, 5])));
    let chunks = vec![
        (ChunkIdx(4), small),
        (ChunkIdx(9), big),
        (ChunkIdx(1), flags),
        (ChunkIdx(2), empty),
    ];
    let frames = pack(&chunks, 4096);
    assert!(frames.len() > 70, "{} frames", frames.len());
    assert!(
        frames.iter().all(|f| f.len() <= 4096 + 16),
        "a frame over its part"
    );
    assert_eq!(unpack(&frames).unwrap(), chunks);
}

#[test]
fn pieces_that_do_not_continue_their_chunk_are_refused() {
    let chunks = vec![(ChunkIdx(3), f64s(4000))];
    let frames = pack(&chunks, 4096);
    // A frame lost: the next piece does not start where the chunk stopped.
    let mut skipped = frames.clone();
    skipped.remove(1);
    let e = unpack(&skipped).unwrap_err().to_string();
    assert!(e.contains("does not continue"), "{e}");
    // The answer ends early: the chunk is cut.
    let mut cut = frames[..2].to_vec();
    cut[1][0] = OK;
    let mut a = Assembler::default();
    for f in &cut {
        add_answer_frame(&mut a, f).unwrap();
    }
    let e = a.finish().unwrap_err().to_string();
    assert!(
        e.contains("chunk c3 cut after") || e.contains("chunk 3 cut after"),
        "{e}"
    );
    // A chunk sent twice, and trailing garbage.
    let whole = pack(&[(ChunkIdx(5), f64s(8))], 1 << 20);
    let mut a = Assembler::default();
    add_answer_frame(&mut a, &whole[0]).unwrap();
    assert!(add_answer_frame(&mut a, &whole[0]).is_err());
    let mut long = whole[0].clone();
    long.push(0);
    assert!(unpack(&[long]).is_err());
}

#[test]
fn one_piece_frames_written_from_the_chunk_read_like_packed_ones() {
    // A large chunk in three one-piece frames (head, then its bytes as they lie), a small one
    // packed after them: the receiver assembles both bit for bit.
    let (big, small) = (f64s(3000), f64s(8));
    let raw = raw_bytes(&big);
    let mut frames = Vec::new();
    for off in (0..raw.len()).step_by(8000) {
        let take = 8000.min(raw.len() - off);
        let mut f =
            piece_frame_head(MORE, ChunkIdx(1), (big.dtype(), big.shape()), off, take).unwrap();
        let size = u32::from_be_bytes(f[..4].try_into().unwrap()) as usize;
        f.extend_from_slice(&raw[off..off + take]);
        assert_eq!(size, f.len() - 4, "the length prefix counts head and bytes");
        frames.push(f.split_off(4));
    }
    frames.extend(pack(&[(ChunkIdx(2), small.clone())], 1 << 16));
    assert_eq!(frames.len(), 4);
    let got = unpack(&frames).unwrap();
    assert_eq!(got, vec![(ChunkIdx(1), big), (ChunkIdx(2), small)]);
}

/// Every dtype travels in pieces (a part smaller than one chunk) bit for bit.
#[test]
fn chunks_of_every_dtype_travel_in_pieces() {
    let values = ArrayData::F64(ArrayD::from_shape_fn(IxDyn(&[300]), |i| {
        i[0] as f64 * 1.5 - 200.0
    }));
    let chunks: Vec<(ChunkIdx, ArrayData)> = ares_core::array::DTYPES
        .iter()
        .enumerate()
        .map(|(i, d)| (ChunkIdx(i as u32), values.clone().cast(*d)))
        .collect();
    assert_eq!(unpack(&pack(&chunks, 256)).unwrap(), chunks);
}
