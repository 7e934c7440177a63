//! The reading end's buffers, shared by the async and the blocking adapters: ciphertext as
//! it arrives from the socket, and the plaintext of the record opened last. Both are fixed
//! at one record's size (the wire buffer two), whatever a peer sends.

use super::noise::SealError;
use super::record::{Next, Opener, MAX_PLAIN, MAX_RECORD};

pub struct Inbox {
    opener: Opener,
    wire: Box<[u8]>,
    start: usize,
    end: usize,
    plain: Box<[u8]>,
    plain_start: usize,
    plain_end: usize,
}

impl Inbox {
    pub fn new(opener: Opener) -> Self {
        Inbox {
            opener,
            wire: vec![0u8; 2 * MAX_RECORD].into_boxed_slice(),
            start: 0,
            end: 0,
            plain: vec![0u8; MAX_PLAIN].into_boxed_slice(),
            plain_start: 0,
            plain_end: 0,
        }
    }

    /// Plaintext ready to be read, opening the next whole record when none is left; `None`:
    /// read more from the socket into [`Inbox::spare`] first.
    pub fn plain(&mut self) -> Result<Option<&[u8]>, SealError> {
        while self.plain_start == self.plain_end {
            match Opener::next(&self.wire[self.start..self.end])? {
                Next::Whole(total) => {
                    let record = &self.wire[self.start..self.start + total];
                    self.plain_end = self.opener.open_record(record, &mut self.plain)?;
                    self.plain_start = 0;
                    self.start += total;
                    if self.start == self.end {
                        (self.start, self.end) = (0, 0);
                    }
                }
                Next::Partial(_) => return Ok(None),
            }
        }
        Ok(Some(&self.plain[self.plain_start..self.plain_end]))
    }

    /// `n` bytes of [`Inbox::plain`] were read.
    pub fn consume(&mut self, n: usize) {
        self.plain_start += n;
    }

    /// Where the next socket read goes (room for at least the rest of one record).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.wire.len() - self.start < MAX_RECORD {
            self.wire.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        &mut self.wire[self.end..]
    }

    /// `n` bytes were read into [`Inbox::spare`].
    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// Whether the socket may end here (not inside a record).
    pub fn between_records(&self) -> bool {
        self.start == self.end
    }
}

pub fn io_error(e: SealError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e)
}

pub fn truncated() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the link closed inside an encrypted record",
    )
}
