//! Opening a file exactly where the data-roots check said it is: no symbolic link on the way,
//! a regular file only, and the check made on the opened descriptor, not before the open.
//!
//! [`super::roots`] canonicalizes a path and checks it lies inside a root, but a path is only
//! a name: between that check and the `open` (or below a checked Zarr store, whose chunk
//! files and `c/` directories it never saw) a component can be a link leading anywhere. So
//! every file a reader or writer opens goes through here, given a *canonical* path (a root
//! joined with names that are not links):
//!
//! - The open itself refuses links: `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` on
//!   Linux ≥ 5.6 refuses a link in any component, in the kernel, in one step. Where `openat2`
//!   is missing (older kernels, seccomp filters) the file is opened with `O_NOFOLLOW` (the last
//!   component) and then the descriptor's own path (`/proc/self/fd/N`, what the kernel
//!   actually opened) must equal the canonical path asked for: a link in a directory
//!   component makes them differ. The check runs in both cases; it is one `readlink`.
//! - `O_NONBLOCK`, then `fstat` on the descriptor: a FIFO or a device opens without waiting
//!   for a writer and is refused as not a regular file (a FIFO named `x.npy` hung the reader).
//! - A new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`: never through a link that
//!   sits where the file should be created. A stale file there is unlinked first only if it
//!   is a regular file (`unlink` does not follow links); anything else is refused.
//!
//! Comparing the descriptor's path to the canonical one is stricter than "inside a root": a
//! link from one file of a root to another is refused too when it is met below a checked
//! path (a Zarr chunk that is a link). The path the caller gives was canonicalized by the
//! roots check, so a link a user names directly still works when it leads inside a root.

use super::IoError;
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

fn shown(p: &Path) -> String {
    p.display().to_string()
}

fn denied(path: &Path, detail: impl Into<String>) -> IoError {
    IoError::Denied {
        path: shown(path),
        detail: detail.into(),
    }
}

const LINK_REFUSED: &str = "a symbolic link on the way: ares opens data files only where the data-roots check put them, never through links below it";

/// `open`/`openat2` of `path` with `flags` (O_CLOEXEC and O_NONBLOCK added), refusing links.
fn raw_open(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> Result<File, IoError> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| denied(path, "contains a NUL byte"))?;
    let flags = flags | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOFOLLOW;
    let fd = openat2_no_links(&c, flags, mode).unwrap_or_else(|| {
        // SAFETY: `c` is a valid NUL-terminated string; the result is checked below.
        unsafe { libc::open(c.as_ptr(), flags, libc::c_uint::from(mode)) }
    });
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::EXDEV) => denied(path, LINK_REFUSED),
            Some(libc::ENOENT) => IoError::Missing {
                path: shown(path),
                detail: "no such file or directory".into(),
            },
            Some(libc::EEXIST) => denied(path, "already exists (and was not removed)"),
            _ => IoError::Missing {
                path: shown(path),
                detail: e.to_string(),
            },
        });
    }
    // SAFETY: `fd` is a descriptor we just opened and own.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// `openat2` refusing every link, or `None` when this kernel has no `openat2`.
/// Set once `openat2` answered ENOSYS or EPERM (or by a test, to run the fallback).
static OPENAT2_MISSING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_os = "linux")]
fn openat2_no_links(c: &CString, flags: libc::c_int, mode: libc::mode_t) -> Option<libc::c_int> {
    use std::sync::atomic::Ordering;
    if OPENAT2_MISSING.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: open_how is plain data; zeroed then filled.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        u64::from(mode)
    } else {
        0
    };
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: valid path pointer and open_how of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    } as libc::c_int;
    if fd < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error();
        if matches!(errno, Some(libc::ENOSYS) | Some(libc::EPERM)) {
            OPENAT2_MISSING.store(true, Ordering::Relaxed);
            return None;
        }
    }
    Some(fd)
}

#[cfg(not(target_os = "linux"))]
fn openat2_no_links(_: &CString, _: libc::c_int, _: libc::mode_t) -> Option<libc::c_int> {
    None
}

/// What the kernel opened for `file`, by its descriptor.
fn opened_path(file: &File) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// The checks on an opened descriptor: it is the canonical `path` and a regular file.
fn verify(file: File, path: &Path) -> Result<File, IoError> {
    let meta = file.metadata().map_err(|e| IoError::Missing {
        path: shown(path),
        detail: format!("cannot stat: {e}"),
    })?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let what = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(denied(
            path,
            format!("is {what}: ares reads and writes only regular files"),
        ));
    }
    let real = opened_path(&file).map_err(|e| {
        denied(
            path,
            format!("cannot verify which file was opened (/proc/self/fd: {e})"),
        )
    })?;
    if real != path {
        return Err(denied(
            path,
            format!("opened {} instead: {LINK_REFUSED}", shown(&real)),
        ));
    }
    // Regular files never block; reads and writes need not see O_NONBLOCK, but clear it anyway.
    // SAFETY: fcntl on our own descriptor.
    unsafe {
        let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Opens the existing regular file at canonical `path` for reading.
pub fn open_read(path: &Path) -> Result<File, IoError> {
    verify(raw_open(path, libc::O_RDONLY, 0)?, path)
}

/// Opens the existing regular file at canonical `path` for writing in place (no truncation).
pub fn open_write(path: &Path) -> Result<File, IoError> {
    verify(raw_open(path, libc::O_WRONLY, 0)?, path)
}

/// Opens the existing regular file at `path` for reading, or `None` if nothing is there.
pub fn open_read_if_exists(path: &Path) -> Result<Option<File>, IoError> {
    match open_read(path) {
        Ok(f) => Ok(Some(f)),
        Err(IoError::Missing { detail, .. }) if detail == "no such file or directory" => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes what is at `path` if it is a regular file (never following a link); nothing there
/// is fine; anything else (a link, a directory, a FIFO) is refused.
pub fn remove_stale(path: &Path) -> Result<(), IoError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(IoError::Missing {
            path: shown(path),
            detail: format!("cannot stat: {e}"),
        }),
        Ok(m) if m.file_type().is_file() => std::fs::remove_file(path)
            .map_err(|e| IoError::bad(shown(path), format!("cannot remove the stale file: {e}"))),
        Ok(m) => Err(denied(
            path,
            if m.file_type().is_symlink() {
                "is a symbolic link: refusing to write through it or replace it".to_string()
            } else {
                "exists and is not a regular file: refusing to replace it".to_string()
            },
        )),
    }
}

/// Creates a new regular file at canonical `path` with `mode` (a stale regular file there is
/// removed first, see [`remove_stale`]), never through a link.
pub fn create_new(path: &Path, mode: u32) -> Result<File, IoError> {
    remove_stale(path)?;
    let file = raw_open(
        path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        mode as libc::mode_t,
    )?;
    verify(file, path)
}

/// Creates or truncates the regular file at canonical `path` (a Zarr store object being
/// rewritten), never through a link.
pub fn create_or_truncate(path: &Path, mode: u32) -> Result<File, IoError> {
    let file = raw_open(
        path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
        mode as libc::mode_t,
    )?;
    verify(file, path)
}

/// Creates the directories `rel` (relative, plain names) below the canonical directory
/// `base`, one `mkdirat` + `openat(O_NOFOLLOW)` at a time from `base`'s descriptor: a link
/// planted on the way is refused, and nothing is ever created where it leads.
pub fn create_dirs_below(base: &Path, rel: &Path) -> Result<(), IoError> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::path::Component;
    let c = CString::new(base.as_os_str().as_bytes())
        .map_err(|_| denied(base, "contains a NUL byte"))?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let open_failed = |p: &Path| {
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                denied(p, format!("not a plain directory ({e}): {LINK_REFUSED}"))
            }
            _ => IoError::Missing {
                path: shown(p),
                detail: e.to_string(),
            },
        }
    };
    // SAFETY: a valid path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(open_failed(base));
    }
    // SAFETY: we own `fd`.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut at = base.to_path_buf();
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(denied(&base.join(rel), "not a plain relative path"));
        };
        at.push(name);
        let n = CString::new(name.as_bytes()).map_err(|_| denied(&at, "contains a NUL byte"))?;
        // SAFETY: `dir` is an open directory descriptor, `n` a valid name.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), n.as_ptr(), 0o755) } < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(IoError::bad(shown(&at), format!("cannot create: {e}")));
            }
        }
        // SAFETY: as above.
        let next = unsafe { libc::openat(dir.as_raw_fd(), n.as_ptr(), flags) };
        if next < 0 {
            return Err(open_failed(&at));
        }
        // SAFETY: we own `next`.
        dir = unsafe { OwnedFd::from_raw_fd(next) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::{symlink, MetadataExt};

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("in")).unwrap();
        std::fs::create_dir(base.join("out")).unwrap();
        std::fs::write(base.join("in/a"), b"inside").unwrap();
        std::fs::write(base.join("out/secret"), b"outside").unwrap();
        (d, base)
    }

    #[test]
    fn regular_files_open_and_links_anywhere_on_the_way_do_not() {
        let (_d, base) = setup();
        let mut s = String::new();
        open_read(&base.join("in/a"))
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "inside");
        symlink(base.join("out/secret"), base.join("in/file-link")).unwrap();
        symlink(base.join("out"), base.join("in/dir-link")).unwrap();
        for p in ["in/file-link", "in/dir-link/secret"] {
            let e = open_read(&base.join(p)).unwrap_err();
            assert!(matches!(e, IoError::Denied { .. }), "{p}: {e}");
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        assert!(open_read_if_exists(&base.join("in/none"))
            .unwrap()
            .is_none());
    }

    /// The same refusals without `openat2` (O_NOFOLLOW, then the descriptor's path). Other
    /// tests of this binary may run the fallback meanwhile: both refuse the same things.
    #[test]
    fn without_openat2_the_descriptor_check_refuses_the_same_links() {
        OPENAT2_MISSING.store(true, std::sync::atomic::Ordering::Relaxed);
        let (_d, base) = setup();
        symlink(base.join("out/secret"), base.join("in/file-link")).unwrap();
        symlink(base.join("out"), base.join("in/dir-link")).unwrap();
        let e = open_read(&base.join("in/dir-link/secret"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("opened") && e.contains("out/secret"), "{e}");
        let e = open_read(&base.join("in/file-link"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(open_read(&base.join("in/a")).is_ok());
        OPENAT2_MISSING.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    #[test]
    fn directories_are_created_below_a_base_and_never_through_a_link() {
        let (_d, base) = setup();
        create_dirs_below(&base.join("in"), Path::new("c/0/1")).unwrap();
        assert!(base.join("in/c/0/1").is_dir());
        symlink(base.join("out"), base.join("in/c/link")).unwrap();
        let e = create_dirs_below(&base.join("in"), Path::new("c/link/new"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!base.join("out/new").exists());
    }

    #[test]
    fn fifos_and_directories_are_refused_without_blocking() {
        let (_d, base) = setup();
        let fifo = base.join("in/x.npy");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_read(&fifo).unwrap_err().to_string();
        assert!(e.contains("is a FIFO"), "{e}");
        let e = open_read(&base.join("in")).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn creation_never_follows_a_link_and_replaces_only_regular_files() {
        let (_d, base) = setup();
        let target = base.join("in/a");
        let link = base.join("in/.partial");
        symlink(&target, &link).unwrap();
        let e = create_new(&link, 0o644).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"inside");
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, b"stale").unwrap();
        create_new(&link, 0o600).unwrap();
        let m = std::fs::symlink_metadata(&link).unwrap();
        assert_eq!(m.len(), 0);
        assert_eq!(m.mode() & 0o777, 0o600);
    }
}
