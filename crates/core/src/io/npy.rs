//! `.npy` files: the header through our bounded parser ([`super::npy_header`]), written by
//! `npyz`; every file opened through [`super::confined`]; the data by region with positioned reads and
//! writes (`pread`/`pwrite`), so a worker touches only its chunk's bytes.
//!
//! Read: float64, int64 and bool, little- or big-endian, C or Fortran order (a Fortran file
//! of shape S is the C-order array of shape reversed(S), read the same way and transposed).
//! Write: little-endian C order. [`create`] writes the header and sizes the file once (the
//! supervisor does it when tiling `to_npy`); [`write_region`] then writes one chunk in place.

use super::npy_header::MAX_HEADER;
use super::region::for_each_run;
use super::IoError;
use crate::array::{numel, ArrayData, DType, Shape};
use ndarray::{ArrayD, IxDyn};
use npyz::WriterBuilder;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyMeta {
    pub shape: Shape,
    pub dtype: DType,
    pub fortran: bool,
    pub big_endian: bool,
    /// Byte offset of the first element.
    pub data_offset: u64,
}

impl NpyMeta {
    pub fn data_bytes(&self) -> u64 {
        numel(&self.shape) as u64 * self.dtype.itemsize() as u64
    }
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

fn unsupported(path: &Path, descr: &str) -> IoError {
    IoError::bad(
        shown(path),
        format!("unsupported dtype {descr:?} (ares reads float64, float32, the signed and unsigned integers of 1, 2, 4 and 8 bytes, bool, and little-endian complex64, complex128)"),
    )
}

/// The dtype and byte order of a `.npy` type string (`<f8`, `>i4`, `|b1`, ...).
fn dtype_of(path: &Path, descr: &str) -> Result<(DType, bool), IoError> {
    // Complex elements, little-endian only (a big-endian one swaps each part, not the pair).
    match descr {
        "<c8" => return Ok((DType::C64, false)),
        "<c16" => return Ok((DType::C128, false)),
        _ => {}
    }
    let b = descr.as_bytes();
    if b.len() != 3 {
        return Err(unsupported(path, descr));
    }
    let big_endian = match b[0] {
        b'<' | b'|' => false,
        b'>' => true,
        b'=' => cfg!(target_endian = "big"),
        _ => return Err(unsupported(path, descr)),
    };
    let dtype = match (b[1], b[2]) {
        (b'f', b'8') => DType::F64,
        (b'f', b'4') => DType::F32,
        (b'i', b'8') => DType::I64,
        (b'i', b'4') => DType::I32,
        (b'i', b'2') => DType::I16,
        (b'i', b'1') => DType::I8,
        (b'u', b'8') => DType::U64,
        (b'u', b'4') => DType::U32,
        (b'u', b'2') => DType::U16,
        (b'u', b'1') => DType::U8,
        (b'b', b'1') => DType::Bool,
        _ => return Err(unsupported(path, descr)),
    };
    Ok((dtype, big_endian))
}

/// Reads and checks the header of `path` (already resolved inside a data root): the dtype is
/// one ares has and the file holds all the data the header promises. The file is opened
/// through [`super::confined`] (a regular file, no link on the way) and the header parsed by
/// [`super::npy_header`] (bounded).
pub fn read_meta(path: &Path) -> Result<NpyMeta, IoError> {
    let file = super::confined::open_read(path)?;
    read_meta_of(&file, path)
}

fn read_meta_of(file: &File, path: &Path) -> Result<NpyMeta, IoError> {
    let bad = |d: String| IoError::bad(shown(path), d);
    // The preamble: magic, version, header length (2 or 4 bytes).
    let mut pre = [0u8; 12];
    let got = read_at_most(file, &mut pre).map_err(|e| bad(format!("cannot read: {e}")))?;
    if got < 10 || &pre[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file (bad magic)".into()));
    }
    let (header_len, start) = match pre[6] {
        1 => (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10),
        2 | 3 if got == 12 => (
            u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    if header_len > MAX_HEADER {
        return Err(bad(format!(
            "header of {header_len} bytes is longer than {MAX_HEADER} (NumPy's own limit)"
        )));
    }
    let mut dict = vec![0u8; header_len];
    file.read_exact_at(&mut dict, start as u64)
        .map_err(|_| bad("truncated inside its header".into()))?;
    let header = super::npy_header::parse(&dict).map_err(|e| bad(format!("corrupt .npy {e}")))?;
    let (dtype, big_endian) = dtype_of(path, &header.descr)?;
    let shape: Shape = header
        .shape
        .iter()
        .map(|d| usize::try_from(*d).map_err(|_| bad(format!("dimension {d} is too large"))))
        .collect::<Result<_, _>>()?;
    let meta = NpyMeta {
        shape,
        dtype,
        fortran: header.fortran_order,
        big_endian,
        data_offset: (start + header_len) as u64,
    };
    // NumPy's own rule: the element count, zero dimensions aside, fits an index.
    let fits = meta
        .shape
        .iter()
        .filter(|d| **d > 0)
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .and_then(|n| n.checked_mul(meta.dtype.itemsize()))
        .is_some_and(|b| b <= isize::MAX as usize);
    if !fits {
        return Err(bad(format!(
            "shape {:?} has more elements than can be addressed",
            meta.shape
        )));
    }
    let want = meta.data_offset.saturating_add(meta.data_bytes());
    let have = file
        .metadata()
        .map_err(|e| bad(format!("cannot stat: {e}")))?
        .len();
    if have < want {
        return Err(bad(format!(
            "truncated: {have} bytes, the header promises {want}"
        )));
    }
    Ok(meta)
}

/// Reads up to `buf.len()` bytes from the start of `file`; returns how many.
fn read_at_most(file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

/// Region `offset..offset+shape` in file order: reversed for a Fortran file.
fn file_order(meta: &NpyMeta, offset: &[usize], shape: &[usize]) -> (Shape, Shape, Shape) {
    let mut full = meta.shape.clone();
    let (mut o, mut s): (Shape, Shape) = (offset.into(), shape.into());
    if meta.fortran {
        full.reverse();
        o.reverse();
        s.reverse();
    }
    (full, o, s)
}

fn read_raw<T: bytemuck::Pod + Default + Clone>(
    file: &File,
    path: &Path,
    meta: &NpyMeta,
    offset: &[usize],
    shape: &[usize],
) -> Result<(Vec<T>, Shape), IoError> {
    let (full, o, s) = file_order(meta, offset, shape);
    let size = std::mem::size_of::<T>();
    let mut out = vec![T::default(); numel(&s)];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
    for_each_run(&full, &o, &s, |at, done, len| {
        let pos = meta.data_offset + at * size as u64;
        file.read_exact_at(&mut bytes[done * size..(done + len) * size], pos)
            .map_err(|e| {
                IoError::bad(
                    shown(path),
                    format!("reading {} bytes at offset {pos}: {e}", len * size),
                )
            })
    })?;
    Ok((out, s))
}

/// Reads region `offset..offset+shape` of the array in `path` (checked against `meta`).
pub fn read_region(
    path: &Path,
    meta: &NpyMeta,
    offset: &[usize],
    shape: &[usize],
) -> Result<ArrayData, IoError> {
    let file = super::confined::open_read(path)?;
    // Elements in file order (byte-swapped when the file is big-endian), then a Fortran
    // file's reversal undone.
    fn read<T: bytemuck::Pod + Default>(
        file: &File,
        path: &Path,
        meta: &NpyMeta,
        offset: &[usize],
        shape: &[usize],
    ) -> Result<ArrayD<T>, IoError> {
        let (mut v, s) = read_raw::<T>(file, path, meta, offset, shape)?;
        if meta.big_endian {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
            for element in bytes.chunks_exact_mut(std::mem::size_of::<T>()) {
                element.reverse();
            }
        }
        let a = ArrayD::from_shape_vec(IxDyn(&s), v)
            .map_err(|e| IoError::bad(shown(path), e.to_string()))?;
        Ok(if meta.fortran {
            a.reversed_axes().as_standard_layout().into_owned()
        } else {
            a
        })
    }
    let (f, p) = (&file, path);
    Ok(match meta.dtype {
        DType::F64 => ArrayData::F64(read(f, p, meta, offset, shape)?),
        DType::I64 => ArrayData::I64(read(f, p, meta, offset, shape)?),
        DType::F32 => ArrayData::F32(read(f, p, meta, offset, shape)?),
        DType::I32 => ArrayData::I32(read(f, p, meta, offset, shape)?),
        DType::I16 => ArrayData::I16(read(f, p, meta, offset, shape)?),
        DType::I8 => ArrayData::I8(read(f, p, meta, offset, shape)?),
        DType::U64 => ArrayData::U64(read(f, p, meta, offset, shape)?),
        DType::U32 => ArrayData::U32(read(f, p, meta, offset, shape)?),
        DType::U16 => ArrayData::U16(read(f, p, meta, offset, shape)?),
        DType::U8 => ArrayData::U8(read(f, p, meta, offset, shape)?),
        DType::Bool => {
            let bytes: ArrayD<u8> = read(f, p, meta, offset, shape)?;
            ArrayData::Bool(bytes.mapv(|b| b != 0))
        }
        DType::C64 => ArrayData::C64(read(f, p, meta, offset, shape)?),
        DType::C128 => ArrayData::C128(read(f, p, meta, offset, shape)?),
    })
}

/// The `.npy` type string of `dtype` (little-endian).
pub fn descr(dtype: DType) -> &'static str {
    match dtype {
        DType::F64 => "<f8",
        DType::F32 => "<f4",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I16 => "<i2",
        DType::I8 => "|i1",
        DType::U64 => "<u8",
        DType::U32 => "<u4",
        DType::U16 => "<u2",
        DType::U8 => "|u1",
        DType::Bool => "|b1",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
    }
}

/// Creates `path` afresh (a stale regular file there is removed, a link refused: see
/// [`super::confined::create_new`]) as a C-order little-endian `.npy` of `shape` and `dtype`:
/// the header, then the data area sized (sparse) for the writers to fill in place.
pub fn create(path: &Path, shape: &[usize], dtype: DType) -> Result<NpyMeta, IoError> {
    let bad = |e: std::io::Error| IoError::bad(shown(path), format!("cannot create: {e}"));
    let file = super::confined::create_new(path, 0o644)?;
    let ts: npyz::TypeStr = descr(dtype)
        .parse()
        .map_err(|e| IoError::bad(shown(path), format!("dtype: {e}")))?;
    let dt = npyz::DType::Plain(ts);
    let dims: Vec<u64> = shape.iter().map(|d| *d as u64).collect();
    let mut w = std::io::BufWriter::new(&file);
    npyz::WriteOptions::new_header_only()
        .dtype(dt)
        .shape(&dims)
        .writer(&mut w)
        .write_header_only()
        .map_err(bad)?;
    drop(w);
    let data_offset = file.metadata().map_err(bad)?.len();
    let meta = NpyMeta {
        shape: shape.into(),
        dtype,
        fortran: false,
        big_endian: false,
        data_offset,
    };
    file.set_len(data_offset + meta.data_bytes()).map_err(bad)?;
    Ok(meta)
}

/// Writes `data` as region `offset..` of the C-order file `path` described by `meta`;
/// returns the bytes written.
pub fn write_region(
    path: &Path,
    meta: &NpyMeta,
    offset: &[usize],
    data: &ArrayData,
) -> Result<u64, IoError> {
    if meta.fortran || meta.big_endian {
        return Err(IoError::bad(
            shown(path),
            "ares writes only C-order little-endian .npy files",
        ));
    }
    if data.dtype() != meta.dtype {
        return Err(IoError::bad(
            shown(path),
            format!("chunk of {} for a file of {}", data.dtype(), meta.dtype),
        ));
    }
    let file = super::confined::open_write(path)?;
    // The chunk's own memory when it is C-contiguous on a little-endian host, else a copy.
    let le = cfg!(target_endian = "little");
    let bytes: std::borrow::Cow<[u8]> = match data {
        ArrayData::F64(a) if le && a.as_slice().is_some() => {
            bytemuck::cast_slice(a.as_slice().unwrap_or_default()).into()
        }
        ArrayData::I64(a) if le && a.as_slice().is_some() => {
            bytemuck::cast_slice(a.as_slice().unwrap_or_default()).into()
        }
        _ => le_bytes(data).into(),
    };
    let size = meta.dtype.itemsize();
    for_each_run(&meta.shape, offset, data.shape(), |at, done, len| {
        let pos = meta.data_offset + at * size as u64;
        file.write_all_at(&bytes[done * size..(done + len) * size], pos)
            .map_err(|e| {
                IoError::bad(
                    shown(path),
                    format!("writing {} bytes at offset {pos}: {e}", len * size),
                )
            })
    })?;
    Ok(bytes.len() as u64)
}

/// An array's elements as little-endian bytes in C order (the `.npy` data).
pub fn le_bytes(a: &ArrayData) -> Vec<u8> {
    match a {
        ArrayData::F64(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::I64(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::F32(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::I32(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::I16(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::I8(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::U64(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::U32(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::U16(x) => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ArrayData::U8(x) => x.iter().copied().collect(),
        ArrayData::Bool(x) => x.iter().map(|v| u8::from(*v)).collect(),
        ArrayData::C64(x) => x
            .iter()
            .flat_map(|v| [v.re.to_le_bytes(), v.im.to_le_bytes()])
            .flatten()
            .collect(),
        ArrayData::C128(x) => x
            .iter()
            .flat_map(|v| [v.re.to_le_bytes(), v.im.to_le_bytes()])
            .flatten()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_of_c_and_fortran_files_match_slices_and_truncation_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let full = ArrayD::from_shape_fn(IxDyn(&[7, 5, 3]), |i| {
            (i[0] * 100 + i[1] * 10 + i[2]) as i64
        });
        let c = dir.path().join("c.npy");
        let meta = create(&c, &[7, 5, 3], DType::I64).unwrap();
        // Written in four row blocks, then read back in odd blocks.
        for r in [0..2, 2..3, 3..6, 6..7] {
            let block = ArrayData::I64(
                full.slice(ndarray::s![r.clone(), .., ..])
                    .into_dyn()
                    .to_owned(),
            );
            write_region(&c, &meta, &[r.start, 0, 0], &block).unwrap();
        }
        let meta = read_meta(&c).unwrap();
        let got = read_region(&c, &meta, &[2, 1, 1], &[4, 3, 2]).unwrap();
        let want = full
            .slice(ndarray::s![2..6, 1..4, 1..3])
            .into_dyn()
            .to_owned();
        assert_eq!(got, ArrayData::I64(want.clone()));
        // The same array stored in Fortran order: the data is the transpose in C order.
        let f = dir.path().join("f.npy");
        let t = full.t().as_standard_layout().into_owned();
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let mut dict = "{'descr': '<i8', 'fortran_order': True, 'shape': (7, 5, 3), }".to_string();
        dict.push_str(&" ".repeat(64 - (10 + dict.len() + 1) % 64));
        dict.push('\n');
        bytes.extend((dict.len() as u16).to_le_bytes());
        bytes.extend(dict.as_bytes());
        bytes.extend(t.iter().flat_map(|v| v.to_le_bytes()));
        std::fs::write(&f, &bytes).unwrap();
        let fmeta = read_meta(&f).unwrap();
        assert!(fmeta.fortran);
        assert_eq!(
            read_region(&f, &fmeta, &[2, 1, 1], &[4, 3, 2]).unwrap(),
            ArrayData::I64(want)
        );
        // Truncated: the header check says so; a region past the end names the file too.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&c)
            .unwrap()
            .set_len(meta.data_offset + 100)
            .unwrap();
        let e = read_meta(&c).unwrap_err().to_string();
        assert!(e.contains("c.npy") && e.contains("truncated"), "{e}");
        let e = read_region(&c, &meta, &[5, 0, 0], &[2, 5, 3])
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.npy") && e.contains("reading"), "{e}");
    }

    /// Every dtype written and read back; a file as NumPy writes a uint8 image (`|u1`) and a
    /// big-endian uint16 one (`>u2`) read as NumPy reads them.
    #[test]
    fn every_dtype_round_trips_and_numpys_integer_files_read() {
        let dir = tempfile::tempdir().unwrap();
        let values = ArrayData::F64(ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| {
            (i[0] * 4 + i[1]) as f64 * 37.5 - 200.0
        }));
        for dtype in crate::array::DTYPES {
            let want = values.clone().cast(dtype);
            let path = dir.path().join(format!("{dtype}.npy"));
            let meta = create(&path, &[3, 4], dtype).unwrap();
            write_region(&path, &meta, &[0, 0], &want).unwrap();
            let meta = read_meta(&path).unwrap();
            assert_eq!(meta.dtype, dtype);
            assert_eq!(read_region(&path, &meta, &[0, 0], &[3, 4]).unwrap(), want);
        }
        let npy = |descr: &str, data: &[u8]| {
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            let mut dict =
                format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2, 2), }}");
            dict.push_str(&" ".repeat(64 - (10 + dict.len() + 1) % 64));
            dict.push('\n');
            bytes.extend((dict.len() as u16).to_le_bytes());
            bytes.extend(dict.as_bytes());
            bytes.extend(data);
            let path = dir.path().join(format!("numpy{}.npy", data.len()));
            std::fs::write(&path, &bytes).unwrap();
            let meta = read_meta(&path).unwrap();
            read_region(&path, &meta, &[0, 0], &[2, 2]).unwrap()
        };
        let image = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![0u8, 7, 128, 255]).unwrap();
        assert_eq!(npy("|u1", &[0, 7, 128, 255]), ArrayData::U8(image));
        let big = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1u16, 256, 65535, 2]).unwrap();
        assert_eq!(
            npy(">u2", &[0, 1, 1, 0, 255, 255, 0, 2]),
            ArrayData::U16(big)
        );
    }
}
