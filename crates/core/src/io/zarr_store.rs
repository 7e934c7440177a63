//! The Zarr store ares gives `zarrs`: a directory whose every object (metadata, chunk, shard)
//! is opened through [`super::confined`].
//!
//! `zarrs`' `FilesystemStore` opens `base/key` with a plain `open`, following links: a chunk
//! file `c/0` (or the directory `c`) linked to a file outside every data root was read and
//! its bytes returned, though the roots check had passed the store directory. This store maps
//! a key to the same path but opens it confined: no link in any component, a regular file
//! (a FIFO chunk does not hang the reader), checked on the descriptor. Metadata objects
//! (`zarr.json`, `.zarray`, ...) larger than [`MAX_METADATA`] are refused before they are
//! read: they are parsed whole as JSON.
//!
//! Any other object larger than the array's chunks can encode to ([`ConfinedStore::set_max_object`],
//! [`super::inflation::object_cap`]) is refused the same way: a sparse 1 TB chunk file is
//! never read.
//!
//! Writes (`to_zarr`) create each object with `O_NOFOLLOW` the same way. A missing object
//! reads as `None` (a chunk never written: the fill value), as with `FilesystemStore`.

use super::confined;
use super::IoError;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator, InvalidByteRangeError};
use zarrs::storage::{
    Bytes, MaybeBytesIterator, OffsetBytesIterator, ReadableStorageTraits, StorageError, StoreKey,
    StorePrefix, WritableStorageTraits,
};

/// Largest metadata object read (1 MiB; ares writes a few hundred bytes).
pub const MAX_METADATA: u64 = 1 << 20;

const METADATA_NAMES: [&str; 5] = ["zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"];

/// A Zarr store in the directory `base` (canonical, checked against the data roots).
#[derive(Debug)]
pub struct ConfinedStore {
    base: PathBuf,
    /// Largest chunk or shard object read (no limit until the array's metadata is known).
    max_object: AtomicU64,
}

impl ConfinedStore {
    pub fn new(base: &Path) -> Self {
        Self {
            base: base.to_path_buf(),
            max_object: AtomicU64::new(u64::MAX),
        }
    }

    /// Refuses to read any object but metadata larger than `bytes` from now on.
    pub fn set_max_object(&self, bytes: u64) {
        self.max_object.store(bytes, Ordering::Relaxed);
    }

    fn path(&self, key: &StoreKey) -> PathBuf {
        let k = key.as_str();
        self.base.join(k.strip_prefix('/').unwrap_or(k))
    }

    fn is_metadata(key: &StoreKey) -> bool {
        let name = key.as_str().rsplit('/').next().unwrap_or_default();
        METADATA_NAMES.contains(&name)
    }
}

fn storage(e: IoError) -> StorageError {
    StorageError::Other(e.to_string())
}

impl ReadableStorageTraits for ConfinedStore {
    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let path = self.path(key);
        let Some(file) = confined::open_read_if_exists(&path).map_err(storage)? else {
            return Ok(None);
        };
        let size = file.metadata()?.len();
        if Self::is_metadata(key) {
            if size > MAX_METADATA {
                return Err(storage(IoError::bad(
                    path.display(),
                    format!(
                        "metadata of {size} bytes is larger than {MAX_METADATA}: refusing to read it"
                    ),
                )));
            }
        } else {
            let cap = self.max_object.load(Ordering::Relaxed);
            if size > cap {
                return Err(storage(IoError::bad(
                    path.display(),
                    format!(
                        "a chunk file of {size} bytes is larger than this array's chunks can encode to ({cap} bytes): refusing to read it"
                    ),
                )));
            }
        }
        let out = byte_ranges
            .map(|range| {
                let (offset, length) = match range {
                    ByteRange::FromStart(start, None) => (
                        start,
                        size.checked_sub(start)
                            .ok_or_else(|| InvalidByteRangeError::new(range, size))?,
                    ),
                    ByteRange::FromStart(start, Some(len)) => (start, len),
                    ByteRange::Suffix(len) => (size.saturating_sub(len), len),
                };
                if offset.checked_add(length).is_none_or(|end| end > size) {
                    return Err(InvalidByteRangeError::new(range, size).into());
                }
                let mut buf = vec![0u8; length as usize];
                file.read_exact_at(&mut buf, offset)?;
                Ok(Bytes::from(buf))
            })
            .collect::<Vec<_>>();
        Ok(Some(Box::new(out.into_iter())))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        match confined::open_read_if_exists(&self.path(key)).map_err(storage)? {
            Some(f) => Ok(Some(f.metadata()?.len())),
            None => Ok(None),
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

impl WritableStorageTraits for ConfinedStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> Result<(), StorageError> {
        let path = self.path(key);
        // Directories under the store (`c/0/`), never through a link; the file's open then
        // checks the whole path again.
        if let Some(rel) = path.parent().and_then(|d| d.strip_prefix(&self.base).ok()) {
            confined::create_dirs_below(&self.base, rel).map_err(storage)?;
        }
        let file = confined::create_or_truncate(&path, 0o644).map_err(storage)?;
        file.write_all_at(&value, 0)?;
        Ok(())
    }

    fn set_partial_many(
        &self,
        key: &StoreKey,
        offset_values: OffsetBytesIterator,
    ) -> Result<(), StorageError> {
        zarrs::storage::store_set_partial_many(self, key, offset_values)
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StorageError> {
        // unlink does not follow a link: at worst the link itself goes.
        match std::fs::remove_file(self.path(key)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StorageError> {
        // remove_dir_all removes links without following them.
        let p = self.base.join(prefix.as_str());
        match std::fs::remove_dir_all(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn supports_set_partial(&self) -> bool {
        false
    }
}
