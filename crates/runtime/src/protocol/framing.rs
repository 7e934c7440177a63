//! Length-delimited frames (`u32 BE length | body`) read as the bytes arrive.
//!
//! A peer's length header is a claim, not a fact: tokio-util's `LengthDelimitedCodec` reserves
//! the whole claimed body as soon as it sees the header, so 20 connections that each send
//! `3F FF FF FF` and nothing more made a node reserve 20 GiB. Here a header is only checked
//! against the limit; the buffer grows with the bytes actually received (by at most what
//! already arrived, or [`READ_STEP`]: at most twice the bytes present), and the blocking
//! reader does the same. The limit is shared
//! ([`FrameLimit`]) so a connection can raise it once its peer is authenticated.

use super::codec::CodecError;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio_util::codec::{Decoder, Encoder};

/// The smallest step a frame buffer grows by ahead of the received bytes.
pub const READ_STEP: usize = 64 << 10;

/// The largest frame a connection accepts now; shared by its reader and writer.
#[derive(Clone, Debug)]
pub struct FrameLimit(Arc<AtomicUsize>);

impl FrameLimit {
    pub fn new(limit: usize) -> Self {
        Self(Arc::new(AtomicUsize::new(limit)))
    }
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
    pub fn set(&self, limit: usize) {
        self.0.store(limit, Ordering::Relaxed)
    }
}

/// The async frame codec.
#[derive(Clone, Debug)]
pub struct Framing {
    limit: FrameLimit,
}

impl Framing {
    pub fn new(limit: FrameLimit) -> Self {
        Self { limit }
    }
}

fn too_large(size: usize, limit: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        CodecError::TooLarge { size, limit },
    )
}

impl Decoder for Framing {
    type Item = BytesMut;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> std::io::Result<Option<BytesMut>> {
        let Some(head) = src.get(..4) else {
            return Ok(None);
        };
        let size = u32::from_be_bytes(head.try_into().expect("4 bytes")) as usize;
        let limit = self.limit.get();
        if size > limit {
            return Err(too_large(size, limit));
        }
        let missing = (4 + size).saturating_sub(src.len());
        if missing > 0 {
            // Grow geometrically with what arrived (amortized copies on multi-MB frames),
            // never by more than READ_STEP beyond the bytes present.
            src.reserve(missing.min(READ_STEP.max(src.len())));
            return Ok(None);
        }
        src.advance(4);
        Ok(Some(src.split_to(size)))
    }
}

impl Encoder<Bytes> for Framing {
    type Error = std::io::Error;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> std::io::Result<()> {
        let limit = self.limit.get().min(u32::MAX as usize);
        if item.len() > limit {
            return Err(too_large(item.len(), limit));
        }
        dst.reserve(4 + item.len());
        dst.put_u32(item.len() as u32);
        dst.extend_from_slice(&item);
        Ok(())
    }
}

/// Writes one frame (blocking).
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> Result<(), CodecError> {
    let len = u32::try_from(payload.len()).map_err(|_| CodecError::TooLarge {
        size: payload.len(),
        limit: u32::MAX as usize,
    })?;
    let mut buf = Vec::with_capacity(4 + payload.len());
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(payload);
    w.write_all(&buf)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame (blocking), refusing frames over `limit` and growing the buffer only as
/// the body arrives.
pub fn read_frame(r: &mut impl Read, limit: usize) -> Result<Vec<u8>, CodecError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let size = u32::from_be_bytes(len) as usize;
    if size > limit {
        return Err(CodecError::TooLarge { size, limit });
    }
    let mut buf = Vec::with_capacity(size.min(READ_STEP));
    r.take(size as u64).read_to_end(&mut buf)?;
    if buf.len() != size {
        return Err(CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("frame cut after {} of {size} bytes", buf.len()),
        )));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_header_reserves_nothing_like_its_claim() {
        let mut codec = Framing::new(FrameLimit::new(1 << 30));
        let mut buf = BytesMut::from(&[0x3f, 0xff, 0xff, 0xff][..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert!(buf.capacity() <= 4 + 2 * READ_STEP, "{}", buf.capacity());
    }

    #[test]
    fn frames_split_anywhere_decode_once_complete() {
        let mut wire = BytesMut::new();
        let mut codec = Framing::new(FrameLimit::new(1024));
        codec
            .encode(Bytes::from_static(b"hello"), &mut wire)
            .unwrap();
        codec.encode(Bytes::from_static(b""), &mut wire).unwrap();
        let mut got = Vec::new();
        let mut buf = BytesMut::new();
        for b in wire.iter() {
            buf.put_u8(*b);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                got.push(f.to_vec());
            }
        }
        assert_eq!(got, vec![b"hello".to_vec(), Vec::new()]);
    }

    #[test]
    fn the_limit_is_checked_on_the_header_and_can_be_raised() {
        let limit = FrameLimit::new(8);
        let mut codec = Framing::new(limit.clone());
        let mut buf = BytesMut::from(&[0, 0, 0, 9][..]);
        assert!(codec.decode(&mut buf).is_err());
        limit.set(9);
        let mut buf = BytesMut::from(&[0, 0, 0, 9][..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        let mut out = BytesMut::new();
        limit.set(2);
        assert!(codec.encode(Bytes::from_static(b"abc"), &mut out).is_err());
    }

    #[test]
    fn blocking_reader_refuses_big_claims_and_cut_bodies() {
        let mut big = std::io::Cursor::new((1u32 << 30).to_be_bytes().to_vec());
        assert!(matches!(
            read_frame(&mut big, 1024),
            Err(CodecError::TooLarge { .. })
        ));
        // A claim under the limit whose body never comes: an error, and no 1 GiB buffer.
        let mut cut = std::io::Cursor::new([&(1u32 << 29).to_be_bytes()[..], b"abc"].concat());
        assert!(matches!(
            read_frame(&mut cut, 1 << 30),
            Err(CodecError::Io(_))
        ));
        let mut wire = Vec::new();
        write_frame(&mut wire, b"xyz").unwrap();
        assert_eq!(
            read_frame(&mut std::io::Cursor::new(wire), 3).unwrap(),
            b"xyz"
        );
    }
}
