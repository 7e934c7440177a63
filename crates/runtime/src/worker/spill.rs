//! Chunk files of one worker under `worker.spill_dir`: one file per spilled chunk, in a
//! subdirectory of its own (`worker-<pid>-<n>`) that the worker creates at start and removes
//! when it goes. Subdirectories of processes that no longer run (a SIGKILLed worker) are
//! removed by the next worker starting on the same directory. The subdirectory is created
//! fresh with mode 0700 (an existing name is never adopted) and each file 0600 with `O_EXCL`:
//! the spill root is often a shared temporary directory.
//!
//! A file is one format byte then the codec's chunk encoding, compressed with LZ4 (lz4_flex)
//! when that makes it smaller, raw otherwise (random floats do not compress: reading them back
//! is then a plain copy). LZ4 beat zstd level 1 on this machine for random and constant
//! chunks alike (BENCHMARKS.md, "Spill codec").

use crate::protocol::codec;
use ares_core::array::ArrayData;
use ares_core::ids::{ChunkIdx, TaskId};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

const RAW: u8 = 0;
const LZ4: u8 = 1;
/// Bytes of the codec's header around one chunk's elements, at most.
const HEADER_SLACK: usize = 4096;

/// Why a spill or a read-back failed; the text names the file and the OS error (ENOSPC reads
/// "No space left on device").
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpillError(pub String);

pub struct SpillDir {
    dir: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Names tried for a worker's spill directory before giving up.
const NAME_TRIES: u32 = 64;

impl SpillDir {
    /// Creates `root` if needed and this worker's subdirectory in it, fresh, mode 0700. A
    /// name that already exists is never adopted (someone else made it, maybe 0777 in a shared
    /// `/tmp`, to read or swap our chunks): the next number is tried, and after
    /// [`NAME_TRIES`] taken names it is an error naming the root.
    pub fn create(root: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(root)?;
        sweep_dead(root);
        let pid = std::process::id();
        for _ in 0..NAME_TRIES {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = root.join(format!("worker-{pid}-{n}"));
            // mkdir, not create_dir_all: it fails on an existing name (or a link there).
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(Self { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{}: {NAME_TRIES} names worker-{pid}-* already exist there; refusing to adopt a spill directory this worker did not create",
                root.display()
            ),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn file(&self, (task, chunk): (TaskId, ChunkIdx)) -> PathBuf {
        self.dir.join(format!("{}-{}.chunk", task.0, chunk.0))
    }

    /// Writes a chunk; returns the file's size.
    pub fn write(&self, key: (TaskId, ChunkIdx), data: &ArrayData) -> Result<u64, SpillError> {
        let path = self.file(key);
        let fail = |e: &dyn std::fmt::Display| {
            SpillError(format!(
                "cannot spill chunk {} of {} to {}: {e}",
                key.1,
                key.0,
                path.display()
            ))
        };
        let encoded = codec::encode_chunks(&[(key.1, data)]).map_err(|e| fail(&e))?;
        let compressed = lz4_flex::compress_prepend_size(&encoded);
        let (format, body) = if compressed.len() < encoded.len() {
            (LZ4, compressed)
        } else {
            (RAW, encoded)
        };
        // A fresh file, 0600 (chunks are the job's data), never through a link: O_EXCL.
        let _ = std::fs::remove_file(&path);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| fail(&e))?;
        let written = f.write_all(&[format]).and_then(|_| f.write_all(&body));
        if let Err(e) = written {
            drop(f);
            let _ = std::fs::remove_file(&path);
            return Err(fail(&e));
        }
        Ok(body.len() as u64 + 1)
    }

    /// Reads a chunk back (the file stays); `expected` bytes of elements bound what is
    /// allocated for it.
    pub fn read(&self, key: (TaskId, ChunkIdx), expected: u64) -> Result<ArrayData, SpillError> {
        let path = self.file(key);
        let fail = |e: &dyn std::fmt::Display| {
            SpillError(format!("cannot read spilled chunk {}: {e}", path.display()))
        };
        let bytes = std::fs::read(&path).map_err(|e| fail(&e))?;
        let limit = expected as usize + HEADER_SLACK;
        let encoded = match bytes.split_first() {
            Some((&RAW, body)) => std::borrow::Cow::Borrowed(body),
            Some((&LZ4, body)) => {
                let size = body
                    .get(..4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
                if size.is_none_or(|s| s > limit) {
                    return Err(fail(&"corrupt: bad decompressed size"));
                }
                std::borrow::Cow::Owned(
                    lz4_flex::decompress_size_prepended(body).map_err(|e| fail(&e))?,
                )
            }
            _ => return Err(fail(&"corrupt: unknown format")),
        };
        let mut chunks = codec::decode_chunks(&encoded).map_err(|e| fail(&e))?;
        match chunks.pop() {
            Some((c, data)) if c == key.1 && chunks.is_empty() => Ok(data),
            _ => Err(fail(&"corrupt: not the chunk expected")),
        }
    }

    pub fn delete(&self, key: (TaskId, ChunkIdx)) {
        let _ = std::fs::remove_file(self.file(key));
    }

    /// Removes the directory and every file in it (later writes fail).
    pub fn remove_all(&self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %self.dir.display(), "cannot remove the spill directory: {e}");
            }
        }
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        self.remove_all();
    }
}

/// Removes `worker-<pid>-*` subdirectories of processes that are gone.
fn sweep_dead(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("worker-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive && Path::new("/proc/self").exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn chunks_round_trip_compressed_or_raw_and_the_directory_goes() {
        let root = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(root.path()).unwrap();
        let dir = spill.path().to_path_buf();
        let ones = ArrayData::F64(ArrayD::from_elem(IxDyn(&[1000]), 1.0));
        let noise: Vec<f64> = (0..1000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64)
            .collect();
        let noise = ArrayData::F64(ArrayD::from_shape_vec(IxDyn(&[1000]), noise).unwrap());
        let (a, b) = ((TaskId(1), ChunkIdx(2)), (TaskId(1), ChunkIdx(3)));
        assert!(spill.write(a, &ones).unwrap() < 1000, "constants compress");
        spill.write(b, &noise).unwrap();
        assert_eq!(spill.read(a, 8000).unwrap(), ones);
        assert_eq!(spill.read(b, 8000).unwrap(), noise);
        std::fs::write(dir.join("1-3.chunk"), b"\x01\xff\xff\xff\x7fjunk").unwrap();
        let err = spill.read(b, 8000).unwrap_err().to_string();
        assert!(
            err.contains("1-3.chunk") && err.contains("corrupt"),
            "{err}"
        );
        drop(spill);
        assert!(!dir.exists());
    }

    #[test]
    fn a_precreated_directory_is_never_adopted_and_modes_are_private() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let root = tempfile::tempdir().unwrap();
        let pid = std::process::id();
        let next = NEXT.load(Ordering::Relaxed);
        let planted: Vec<PathBuf> = (next..next + 3)
            .map(|n| root.path().join(format!("worker-{pid}-{n}")))
            .collect();
        for p in &planted {
            std::fs::create_dir(p).unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let spill = SpillDir::create(root.path()).unwrap();
        assert!(
            !planted.contains(&spill.path().to_path_buf()),
            "adopted {:?}",
            spill.path()
        );
        let mode = std::fs::metadata(spill.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let data = ArrayData::F64(ArrayD::from_elem(IxDyn(&[10]), 1.0));
        spill.write((TaskId(1), ChunkIdx(1)), &data).unwrap();
        spill.write((TaskId(1), ChunkIdx(1)), &data).unwrap();
        let file = spill.path().join("1-1.chunk");
        assert_eq!(std::fs::metadata(file).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_failed_write_is_an_error_naming_the_file() {
        // (A full disk is tested end to end on a small tmpfs: tests/memory.rs.)
        // Not dropped: its drop would try to remove a directory that does not exist.
        let full = std::mem::ManuallyDrop::new(SpillDir {
            dir: PathBuf::from("/nonexistent-ares"),
        });
        let data = ArrayData::F64(ArrayD::from_elem(IxDyn(&[10]), 1.0));
        let err = full
            .write((TaskId(1), ChunkIdx(1)), &data)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot spill chunk") && err.contains("/nonexistent-ares"),
            "{err}"
        );
    }
}
