//! Where data may be read and written: the directories of `data.roots`.
//!
//! A path is absolute (and must lie inside a root) or relative (to the first root). It is
//! canonicalized before the check, so `..` components and symlinks are followed to where they
//! really lead: a link inside a root pointing outside it is refused like the outside path
//! itself. A path that is written need not exist yet; its parent directory must, and is
//! checked the same way; a link at the written name itself is refused. Nothing is opened
//! before the check passes, and the check is made again on what is opened
//! ([`super::confined`]): a name is only a name until the open, and below a checked Zarr
//! store every chunk file is opened the same way.
//!
//! The roots are process-wide ([`set_global`]): the node sets them from its config at start,
//! `ares run` from its config or the current directory. With no roots nothing is allowed.
//!
//! An upload's spool file ([`super::Format::Spool`]) is read by [`resolve_spool`] instead, not
//! inside the roots: the supervisor spools uploads in a private directory of its own
//! (`ares::supervisor::upload`) so that a cluster without `data.roots` accepts them. Who may
//! name such a file is decided before it gets here (only the supervisor builds that form);
//! this check only keeps the form to what a spool file looks like.

use super::IoError;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Canonical data root directories.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataRoots {
    roots: Vec<PathBuf>,
}

static GLOBAL: RwLock<Option<Arc<DataRoots>>> = RwLock::new(None);

/// Makes `roots` the roots of this process.
pub fn set_global(roots: DataRoots) {
    *GLOBAL.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(roots));
}

/// The roots of this process (none until [`set_global`]).
pub fn global() -> Arc<DataRoots> {
    GLOBAL
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_default()
}

/// [`set_global`] from config: `data.roots`, or `fallback` (e.g. the current directory) when
/// the config lists none.
pub fn init_global(configured: &[PathBuf], fallback: Option<&Path>) -> Result<(), IoError> {
    let list: Vec<PathBuf> = match (configured.is_empty(), fallback) {
        (true, Some(dir)) => vec![dir.to_path_buf()],
        _ => configured.to_vec(),
    };
    set_global(DataRoots::new(&list)?);
    Ok(())
}

/// The name of every supervisor spool directory starts with this (`ares-supervisor-<pid>-<random>`).
pub const SPOOL_DIR_PREFIX: &str = "ares-supervisor-";

/// What a node that cannot open a spool file is told to do.
pub const SPOOL_FIX: &str =
    "the supervisor spools uploads in its own directory, which a worker on \
     another host (or running as another user) cannot read: set data.roots on the supervisor \
     and the workers to a directory they share (uploads then spool under its .ares-uploads/)";

/// The upload spool file at `path`, as the supervisor named it: an absolute canonical path
/// (no `..`, no symlink on the way) to a regular `.npy` file directly inside a directory
/// named `ares-supervisor-*`. The data roots do not apply (see the module doc).
pub fn resolve_spool(path: &str) -> Result<PathBuf, IoError> {
    let denied = |detail: &str| IoError::Denied {
        path: path.into(),
        detail: format!("not an upload spool file: {detail}"),
    };
    let p = Path::new(path);
    let in_spool_dir = p
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d.to_string_lossy().starts_with(SPOOL_DIR_PREFIX));
    if !p.is_absolute() || !in_spool_dir || p.extension().is_none_or(|e| e != "npy") {
        return Err(denied(&format!("expected /…/{SPOOL_DIR_PREFIX}…/NAME.npy")));
    }
    let canonical = p.canonicalize().map_err(|e| IoError::Missing {
        path: path.into(),
        detail: format!("the upload's spool file cannot be read on this node ({e}): {SPOOL_FIX}"),
    })?;
    if canonical != p {
        return Err(denied(&format!("it resolves to {}", shown(&canonical))));
    }
    if !canonical.is_file() {
        return Err(denied("not a regular file"));
    }
    Ok(canonical)
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

impl DataRoots {
    /// Canonicalizes each root; a root that does not exist is an error.
    pub fn new(roots: &[PathBuf]) -> Result<Self, IoError> {
        let roots = roots
            .iter()
            .map(|r| {
                let c = r.canonicalize().map_err(|e| IoError::Missing {
                    path: shown(r),
                    detail: format!("data root cannot be used: {e}"),
                })?;
                if !c.is_dir() {
                    return Err(IoError::Missing {
                        path: shown(r),
                        detail: "data root is not a directory".into(),
                    });
                }
                Ok(c)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { roots })
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The path as given, made absolute against the first root (not yet canonical).
    fn absolute(&self, path: &str) -> Result<PathBuf, IoError> {
        let p = Path::new(path);
        if path.is_empty() {
            return Err(IoError::Denied {
                path: path.into(),
                detail: "empty path".into(),
            });
        }
        if p.is_absolute() {
            return Ok(p.to_path_buf());
        }
        match self.roots.first() {
            Some(root) => Ok(root.join(p)),
            None => Err(self.denied(path, "no data.roots are configured, so no path is allowed")),
        }
    }

    fn denied(&self, path: &str, detail: &str) -> IoError {
        IoError::Denied {
            path: path.into(),
            detail: detail.into(),
        }
    }

    fn check_inside(&self, path: &str, canonical: PathBuf) -> Result<PathBuf, IoError> {
        if self.roots.iter().any(|r| canonical.starts_with(r)) {
            Ok(canonical)
        } else if self.roots.is_empty() {
            Err(self.denied(path, "no data.roots are configured, so no path is allowed"))
        } else {
            let roots: Vec<String> = self.roots.iter().map(|r| shown(r)).collect();
            Err(self.denied(
                path,
                &format!(
                    "resolves to {}, outside the data roots [{}]",
                    shown(&canonical),
                    roots.join(", ")
                ),
            ))
        }
    }

    /// An existing file or directory to read: its canonical path inside a root.
    pub fn resolve_read(&self, path: &str) -> Result<PathBuf, IoError> {
        let abs = self.absolute(path)?;
        let canonical = abs.canonicalize().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                IoError::Missing {
                    path: path.into(),
                    detail: "no such file or directory".into(),
                }
            } else {
                IoError::Missing {
                    path: path.into(),
                    detail: e.to_string(),
                }
            }
        })?;
        self.check_inside(path, canonical)
    }

    /// A file or directory to create or overwrite: its parent must exist inside a root (its
    /// canonical path); the name itself is never followed. A symbolic link there is refused,
    /// wherever it points: writes never go through a link (they would truncate or replace the
    /// file it leads to), and the open itself refuses one too ([`super::confined`]).
    pub fn resolve_write(&self, path: &str) -> Result<PathBuf, IoError> {
        let abs = self.absolute(path)?;
        let name = match abs.components().next_back() {
            Some(Component::Normal(n)) => n.to_owned(),
            _ => return Err(self.denied(path, "must name a file, not a directory or `..`")),
        };
        let parent = abs.parent().unwrap_or(Path::new("/"));
        let canonical_parent = parent.canonicalize().map_err(|e| IoError::Missing {
            path: path.into(),
            detail: format!("its directory {} cannot be used: {e}", shown(parent)),
        })?;
        let target = self.check_inside(path, canonical_parent.join(name))?;
        if target
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(self.denied(
                path,
                "is a symbolic link: ares never writes through a link (remove it, or name the file it points to)",
            ));
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, DataRoots, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a.npy"), b"x").unwrap();
        std::fs::write(outside.join("secret.npy"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.npy"), root.join("link.npy")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linkdir")).unwrap();
        let roots = DataRoots::new(std::slice::from_ref(&root)).unwrap();
        (dir, roots, root.canonicalize().unwrap())
    }

    fn denied(r: Result<PathBuf, IoError>, path: &str) {
        match r {
            Err(IoError::Denied { path: p, detail }) => {
                assert_eq!(p, path);
                assert!(detail.contains("outside the data roots"), "{detail}");
            }
            other => panic!("{path}: expected denial, got {other:?}"),
        }
    }

    #[test]
    fn spool_files_resolve_outside_the_roots_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let spool = base.join(format!("{SPOOL_DIR_PREFIX}1-ab"));
        std::fs::create_dir(&spool).unwrap();
        std::fs::write(spool.join("up.npy"), b"x").unwrap();
        std::fs::write(base.join("other.npy"), b"x").unwrap();
        std::os::unix::fs::symlink(base.join("other.npy"), spool.join("link.npy")).unwrap();
        let file = spool.join("up.npy");
        assert_eq!(resolve_spool(file.to_str().unwrap()).unwrap(), file);
        let refused = [
            base.join("other.npy"),
            spool.join("link.npy"),
            spool
                .join("..")
                .join(format!("{SPOOL_DIR_PREFIX}1-ab"))
                .join("up.npy"),
            PathBuf::from("up.npy"),
            spool.join("up.txt"),
        ];
        for p in refused {
            let shown = p.display().to_string();
            match resolve_spool(&shown) {
                Err(IoError::Denied { detail, .. }) => {
                    assert!(detail.contains("not an upload spool file"), "{detail}")
                }
                other => panic!("{shown}: {other:?}"),
            }
        }
        // Gone (or on another host): the error names the fix.
        let gone = spool.join("gone.npy");
        match resolve_spool(gone.to_str().unwrap()) {
            Err(IoError::Missing { detail, .. }) => {
                assert!(detail.contains("data.roots"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn relative_and_absolute_paths_inside_a_root_resolve() {
        let (_d, roots, root) = setup();
        assert_eq!(roots.resolve_read("a.npy").unwrap(), root.join("a.npy"));
        let abs = root.join("a.npy").display().to_string();
        assert_eq!(roots.resolve_read(&abs).unwrap(), root.join("a.npy"));
        assert_eq!(
            roots.resolve_read("sub/../a.npy").unwrap(),
            root.join("a.npy")
        );
        assert_eq!(
            roots.resolve_write("sub/new.npy").unwrap(),
            root.join("sub/new.npy")
        );
    }

    #[test]
    fn escapes_are_refused_naming_the_path() {
        let (d, roots, _) = setup();
        let outside = d.path().join("outside/secret.npy").display().to_string();
        denied(roots.resolve_read(&outside), &outside);
        denied(
            roots.resolve_read("../outside/secret.npy"),
            "../outside/secret.npy",
        );
        denied(roots.resolve_read("link.npy"), "link.npy");
        denied(
            roots.resolve_read("linkdir/secret.npy"),
            "linkdir/secret.npy",
        );
        denied(
            roots.resolve_write("../outside/new.npy"),
            "../outside/new.npy",
        );
        denied(roots.resolve_write("linkdir/new.npy"), "linkdir/new.npy");
        // Writing through a link is refused, wherever it points.
        match roots.resolve_write("link.npy") {
            Err(IoError::Denied { detail, .. }) => assert!(detail.contains("symbolic link")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            roots.resolve_write("sub/.."),
            Err(IoError::Denied { .. })
        ));
    }

    #[test]
    fn missing_files_and_no_roots_are_clear_errors() {
        let (_d, roots, _) = setup();
        let e = roots.resolve_read("nope.npy").unwrap_err();
        assert!(matches!(e, IoError::Missing { .. }));
        assert!(e.to_string().starts_with("nope.npy: "), "{e}");
        let none = DataRoots::default();
        let e = none.resolve_read("/etc/passwd").unwrap_err();
        assert!(e.to_string().contains("no data.roots"), "{e}");
        assert!(DataRoots::new(&[PathBuf::from("/no/such/root")]).is_err());
    }
}
