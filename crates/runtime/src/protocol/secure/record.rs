//! Records of a sealed link, without any I/O: [`Sealer`] turns plaintext into records,
//! [`Opener`] turns the records at the front of a buffer back into plaintext.
//!
//! ```text
//! record = length u16 BE | ciphertext (length bytes: at most MAX_PLAIN of plaintext + a 16-byte tag)
//! ```
//!
//! The nonce of a record is its position in its direction (0, 1, 2, ...), never sent: a
//! record dropped, replayed or moved fails authentication, and so does a length a peer
//! lied about. A record is at most [`MAX_RECORD`] bytes, so nothing a peer sends makes
//! either end buffer more than that.

use super::noise::SealError;
use snow::StatelessTransportState;
use std::sync::Arc;

/// The Noise limit on one message (ciphertext and tag).
pub const MAX_CIPHERTEXT: usize = 65_535;
/// AES-GCM's tag.
pub const TAG: usize = 16;
/// The most plaintext one record carries.
pub const MAX_PLAIN: usize = MAX_CIPHERTEXT - TAG;
/// A record's length prefix.
pub const HEADER: usize = 2;
/// The largest record on the wire.
pub const MAX_RECORD: usize = HEADER + MAX_CIPHERTEXT;

/// Seals one direction.
pub struct Sealer {
    keys: Arc<StatelessTransportState>,
    nonce: u64,
}

impl Sealer {
    pub(super) fn new(keys: Arc<StatelessTransportState>) -> Self {
        Sealer { keys, nonce: 0 }
    }

    /// Appends `plain` to `out` as records of at most [`MAX_PLAIN`] plaintext bytes each.
    pub fn seal(&mut self, plain: &[u8], out: &mut Vec<u8>) -> Result<(), SealError> {
        for piece in plain.chunks(MAX_PLAIN) {
            let len = piece.len() + TAG;
            let start = out.len();
            out.resize(start + HEADER + len, 0);
            out[start..start + HEADER].copy_from_slice(&(len as u16).to_be_bytes());
            let nonce = self.next_nonce()?;
            self.keys
                .write_message(nonce, piece, &mut out[start + HEADER..])
                .map_err(|_| SealError::Forged)?;
        }
        Ok(())
    }

    fn next_nonce(&mut self) -> Result<u64, SealError> {
        let n = self.nonce;
        self.nonce = n.checked_add(1).ok_or(SealError::NoncesSpent)?;
        Ok(n)
    }
}

/// Opens the other direction.
pub struct Opener {
    keys: Arc<StatelessTransportState>,
    nonce: u64,
}

/// Where the next record in a buffer stands.
pub enum Next {
    /// A whole record: its total length on the wire.
    Whole(usize),
    /// Not all of it has arrived; at least this many more bytes are needed.
    Partial(usize),
}

impl Opener {
    pub(super) fn new(keys: Arc<StatelessTransportState>) -> Self {
        Opener { keys, nonce: 0 }
    }

    /// Whether `wire` starts with a whole record.
    pub fn next(wire: &[u8]) -> Result<Next, SealError> {
        if wire.len() < HEADER {
            return Ok(Next::Partial(HEADER - wire.len()));
        }
        let len = u16::from_be_bytes([wire[0], wire[1]]) as usize;
        if len < TAG {
            return Err(SealError::Forged);
        }
        let total = HEADER + len;
        Ok(if wire.len() >= total {
            Next::Whole(total)
        } else {
            Next::Partial(total - wire.len())
        })
    }

    /// Opens the record at the start of `wire` (whole, as [`Opener::next`] said) into
    /// `plain`, which must hold [`MAX_PLAIN`] bytes; the plaintext's length.
    pub fn open_record(&mut self, record: &[u8], plain: &mut [u8]) -> Result<usize, SealError> {
        let nonce = self.nonce;
        let n = self
            .keys
            .read_message(nonce, &record[HEADER..], plain)
            .map_err(|_| SealError::Forged)?;
        self.nonce = nonce.checked_add(1).ok_or(SealError::NoncesSpent)?;
        Ok(n)
    }

    /// Opens every whole record at the start of `wire`, appending their plaintext to
    /// `plain`; how many bytes of `wire` they took.
    pub fn open(&mut self, wire: &[u8], plain: &mut Vec<u8>) -> Result<usize, SealError> {
        let mut used = 0;
        while let Next::Whole(total) = Self::next(&wire[used..])? {
            let start = plain.len();
            plain.resize(start + MAX_PLAIN, 0);
            let n = self.open_record(&wire[used..used + total], &mut plain[start..])?;
            plain.truncate(start + n);
            used += total;
        }
        Ok(used)
    }
}

#[cfg(test)]
mod tests {
    use super::super::noise::{Agreement, Cipher};
    use super::*;
    use crate::protocol::handshake::Role;
    use crate::protocol::secret::Secret;

    fn pair() -> (Cipher, Cipher) {
        let a = Agreement::new(
            &Secret::from_text("k").unwrap(),
            Role::Worker,
            &[0; 32],
            &[9; 32],
        );
        let (init, m1) = a.initiate().unwrap();
        let (listener, m2) = a.respond(&m1).unwrap();
        (init.finish(&m2).unwrap(), listener)
    }

    #[test]
    fn large_writes_become_several_records_and_come_back_whole() {
        let (c, l) = pair();
        let (mut seal, _) = c.split();
        let (_, mut open) = l.split();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut wire = Vec::new();
        seal.seal(&data, &mut wire).unwrap();
        assert_eq!(wire.len(), data.len() + 4 * (HEADER + TAG));
        // Fed a byte at a time, the opener waits for whole records.
        let mut plain = Vec::new();
        let mut used = 0;
        for end in 0..=wire.len() {
            used += open.open(&wire[used..end], &mut plain).unwrap();
        }
        assert_eq!(used, wire.len());
        assert_eq!(plain, data);
    }

    #[test]
    fn altered_replayed_or_reordered_records_fail() {
        let (c, l) = pair();
        let (mut seal, _) = c.split();
        let mut first = Vec::new();
        seal.seal(b"first", &mut first).unwrap();
        let mut second = Vec::new();
        seal.seal(b"second", &mut second).unwrap();

        let (_, mut open) = l.clone().split();
        let mut flipped = first.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            open.open(&flipped, &mut Vec::new()),
            Err(SealError::Forged)
        ));

        let (_, mut open) = l.clone().split();
        assert!(open.open(&second, &mut Vec::new()).is_err(), "out of order");

        let (_, mut open) = l.split();
        open.open(&first, &mut Vec::new()).unwrap();
        assert!(open.open(&first, &mut Vec::new()).is_err(), "replayed");
        // A length too short to hold a tag is refused before any decryption.
        assert!(matches!(
            Opener::next(&[0, 3, 1, 2, 3]),
            Err(SealError::Forged)
        ));
    }
}
