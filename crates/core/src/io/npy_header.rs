//! The `.npy` header dict, parsed by a bounded parser of our own.
//!
//! A `.npy` header is a Python literal. The general parser `npyz` used evaluates any nesting,
//! and its time doubled per level of nested lists: a 264-byte header nesting lists 60 deep
//! never answered (depth 22 took 47 s). A file inside `data.roots` is as hostile as a frame
//! from the network, so only what NumPy writes is accepted:
//!
//! ```text
//! {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
//! ```
//!
//! exactly these three keys (any order, each once), a quoted type string, `True`/`False`, a
//! tuple of non-negative integers, then padding (spaces, a newline). One pass over at most
//! [`MAX_HEADER`] bytes, no recursion: time is linear in the header, and anything else (a
//! structured dtype, nesting, a fourth key) is a clear error naming what was expected.

/// NumPy's own limit (`numpy.lib.format`, `max_header_size` = 10000 for `np.load`).
pub const MAX_HEADER: usize = 10_000;

/// Dimensions accepted in `shape` (NumPy's own maximum is 64).
const MAX_DIMS: usize = 64;

/// The header dict's three values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
}

/// Why a header was refused (the caller adds the path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("header {0} (ares accepts only the dict NumPy writes: {{'descr': <str>, 'fortran_order': <bool>, 'shape': (<ints>,)}})")]
pub struct HeaderError(String);

fn err<T>(s: impl Into<String>) -> Result<T, HeaderError> {
    Err(HeaderError(s.into()))
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), HeaderError> {
        match self.peek() {
            Some(x) if x == c => {
                self.at += 1;
                Ok(())
            }
            Some(x) => err(format!(
                "has {:?} at byte {}, expected {:?}",
                x as char, self.at, c as char
            )),
            None => err(format!(
                "ends at byte {}, expected {:?}",
                self.at, c as char
            )),
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A quoted string without escapes, of printable ASCII.
    fn string(&mut self) -> Result<String, HeaderError> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return err(format!("has no quoted string at byte {}", self.at)),
        };
        let start = self.at + 1;
        let len = self.s[start..].iter().position(|&c| c == quote);
        let Some(len) = len else {
            return err("has an unterminated string");
        };
        let body = &self.s[start..start + len];
        if !body.iter().all(|c| c.is_ascii_graphic() || *c == b' ') || body.contains(&b'\\') {
            return err(format!(
                "has a string with unexpected characters at byte {start}"
            ));
        }
        self.at = start + len + 1;
        Ok(String::from_utf8_lossy(body).into_owned())
    }

    fn word(&mut self) -> &[u8] {
        self.skip_ws();
        let start = self.at;
        while self.at < self.s.len() && self.s[self.at].is_ascii_alphanumeric() {
            self.at += 1;
        }
        &self.s[start..self.at]
    }

    fn bool(&mut self) -> Result<bool, HeaderError> {
        let at = self.at;
        match self.word() {
            b"True" => Ok(true),
            b"False" => Ok(false),
            _ => err(format!(
                "has no True or False for 'fortran_order' at byte {at}"
            )),
        }
    }

    fn int(&mut self) -> Result<u64, HeaderError> {
        let at = self.at;
        let w = self.word();
        let digits = w.strip_suffix(b"L").unwrap_or(w);
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return err(format!(
                "has a dimension that is not an integer at byte {at}"
            ));
        }
        std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse().ok())
            .map_or_else(
                || err(format!("has a dimension too large at byte {at}")),
                Ok,
            )
    }

    fn shape(&mut self) -> Result<Vec<u64>, HeaderError> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                break;
            }
            if dims.len() == MAX_DIMS {
                return err(format!("has a shape of more than {MAX_DIMS} dimensions"));
            }
            dims.push(self.int()?);
            if !self.eat(b',') {
                self.expect(b')')?;
                break;
            }
        }
        Ok(dims)
    }
}

/// Parses the header dict `bytes` (the bytes after the preamble, padding included).
pub fn parse(bytes: &[u8]) -> Result<Header, HeaderError> {
    if bytes.len() > MAX_HEADER {
        return err(format!(
            "of {} bytes is longer than {MAX_HEADER}",
            bytes.len()
        ));
    }
    let mut c = Cursor { s: bytes, at: 0 };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    c.expect(b'{')?;
    loop {
        if c.eat(b'}') {
            break;
        }
        let key = c.string()?;
        c.expect(b':')?;
        let dup = match key.as_str() {
            "descr" => descr.replace(c.string()?).is_some(),
            "fortran_order" => fortran.replace(c.bool()?).is_some(),
            "shape" => shape.replace(c.shape()?).is_some(),
            other => return err(format!("has an unexpected key {other:?}")),
        };
        if dup {
            return err(format!("repeats the key {key:?}"));
        }
        if !c.eat(b',') {
            c.expect(b'}')?;
            break;
        }
    }
    if c.peek().is_some() {
        return err(format!("has {} bytes after the dict", bytes.len() - c.at));
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header {
            descr,
            fortran_order,
            shape,
        }),
        _ => err("lacks one of 'descr', 'fortran_order', 'shape'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn what_numpy_writes_parses() {
        let h =
            parse(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }      \n").unwrap();
        assert_eq!(h.descr, "<f8");
        assert!(!h.fortran_order);
        assert_eq!(h.shape, vec![3, 4]);
        let h = parse(b"{'shape': (7,), \"descr\": '|b1', 'fortran_order': True}").unwrap();
        assert_eq!((h.shape, h.fortran_order), (vec![7], true));
        assert_eq!(
            parse(b"{'descr': '<i8', 'fortran_order': False, 'shape': ()}")
                .unwrap()
                .shape,
            Vec::<u64>::new()
        );
    }

    #[test]
    fn anything_else_is_refused_clearly() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
                "quoted",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': [[[[1]]]]}",
                "expected '('",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}",
                "True or False",
            ),
            (b"{'descr': '<f8', 'fortran_order': False}", "lacks"),
            (b"{'descr': '<f8', 'descr': '<f8'}", "repeats"),
            (b"{'descr': '<f8', 'x': 1}", "unexpected key"),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} junk",
                "after the dict",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
                "too large",
            ),
        ];
        for (bytes, want) in cases {
            let e = parse(bytes).unwrap_err().to_string();
            assert!(e.contains(want), "{}: {e}", String::from_utf8_lossy(bytes));
        }
        let nested = format!(
            "{{'descr': '<f8', 'fortran_order': False, 'shape': {}1{}}}",
            "[".repeat(60),
            "]".repeat(60)
        );
        assert!(parse(nested.as_bytes()).is_err());
        assert!(parse(&vec![b' '; MAX_HEADER + 1])
            .unwrap_err()
            .to_string()
            .contains("longer"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Random bytes and random mutations of a valid header: never a panic, and one pass.
        #[test]
        fn random_headers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600),
                                      cut in 0usize..80, byte in any::<u8>(), at in 0usize..80) {
            let t = std::time::Instant::now();
            let _ = parse(&bytes);
            let mut valid = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }".to_vec();
            let at = at % valid.len();
            valid[at] = byte;
            valid.truncate(cut.max(1).min(valid.len()));
            let _ = parse(&valid);
            prop_assert!(t.elapsed() < std::time::Duration::from_millis(50));
        }
    }
}
