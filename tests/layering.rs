//! The runtime's layers, checked on the source: a module may use the layers below it, never
//! a sibling role or one above.
//!
//! ```text
//!   src/ (CLI)   python/        node.rs  (starts roles, the web server over the supervisor)
//!         \        |               |
//!          api/ (clients)        web/  (HTTP over the supervisor's actors)
//!                  \               |
//!                   \     supervisor/     worker/      (the roles: never each other)
//!                    \         \            /
//!     protocol/  net  data_plane  footprint  guard  metrics  shutdown  config  telemetry
//!                                    |
//!                               ares_core  (pure: no runtime, no sockets, no CLI)
//! ```
//!
//! A reference in a comment does not count; a `use` or a path in code does. No file may be
//! included by a `path` attribute, the tests' included: a module's file is where its name
//! says (a test of several files is a root `tests/NAME.rs` with its cases in `tests/NAME/`).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file without its comments (line comments and doc comments; the sources
/// use no block comments), as (line number, line).
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let code = match line.find("//") {
                Some(at) => &line[..at],
                None => line,
            };
            (!code.trim().is_empty()).then(|| (i + 1, code.to_string()))
        })
        .collect()
}

/// Every place under `dir` (relative to the runtime's `src/`) whose code names one of
/// `forbidden` (module paths such as `crate::worker`).
fn violations(dir: &str, forbidden: &[&str]) -> Vec<String> {
    let src = root().join("crates/runtime/src");
    let path = src.join(dir);
    let files = if path.is_dir() {
        rust_files(&path)
    } else {
        vec![path]
    };
    let mut found = Vec::new();
    for file in files {
        for (n, line) in code_lines(&file) {
            for f in forbidden {
                // `crate::web` but not `crate::webx`: the next character ends the name.
                let hits = line.match_indices(f).any(|(at, _)| {
                    !line[at + f.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if hits {
                    let rel = file.strip_prefix(&src).unwrap().display();
                    found.push(format!("{rel}:{n}: {f} in `{}`", line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn the_protocol_imports_no_role() {
    let v = violations(
        "protocol",
        &[
            "crate::worker",
            "crate::supervisor",
            "crate::web",
            "crate::api",
            "crate::node",
        ],
    );
    assert!(v.is_empty(), "protocol/ reaches up:\n{}", v.join("\n"));
}

#[test]
fn the_roles_import_neither_each_other_nor_the_web() {
    let mut v = violations(
        "supervisor",
        &["crate::worker", "crate::web", "crate::api", "crate::node"],
    );
    v.extend(violations(
        "worker",
        &[
            "crate::supervisor",
            "crate::web",
            "crate::api",
            "crate::node",
        ],
    ));
    assert!(
        v.is_empty(),
        "a role reaches sideways or up:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_web_serves_the_supervisor_only_and_clients_speak_the_protocol_only() {
    let mut v = violations("web", &["crate::worker", "crate::api", "crate::node"]);
    v.extend(violations(
        "api",
        &[
            "crate::worker",
            "crate::supervisor",
            "crate::web",
            "crate::node",
        ],
    ));
    assert!(
        v.is_empty(),
        "web/ or api/ reaches too far:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_shared_pieces_import_no_role() {
    let roles = [
        "crate::worker",
        "crate::supervisor",
        "crate::web",
        "crate::api",
        "crate::node",
    ];
    let mut v = Vec::new();
    for shared in [
        "data_plane.rs",
        "footprint.rs",
        "guard.rs",
        "metrics.rs",
        "shutdown.rs",
        "net.rs",
        "telemetry.rs",
        "config",
    ] {
        v.extend(violations(shared, &roles));
    }
    assert!(
        v.is_empty(),
        "a shared piece reaches into a role:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_core_has_no_runtime_dependency() {
    let manifest = std::fs::read_to_string(root().join("crates/core/Cargo.toml")).unwrap();
    for dep in ["actix", "tokio", "clap", "actix-web", "ares ="] {
        assert!(
            !manifest.lines().any(|l| l.trim_start().starts_with(dep)),
            "crates/core depends on {dep}"
        );
    }
}

#[test]
fn no_file_is_included_by_path() {
    // Spelled in two pieces, so this test's own code is not a hit.
    let attribute = concat!("#[", "path");
    let mut found = Vec::new();
    for dir in ["crates", "src", "python/src", "tests", "benches"] {
        for file in rust_files(&root().join(dir)) {
            for (n, line) in code_lines(&file) {
                if line.contains(attribute) {
                    found.push(format!("{}:{n}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "{attribute}] includes:\n{}",
        found.join("\n")
    );
}
