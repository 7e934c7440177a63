//! The worker's memory keys: `worker.memory_limit` (`auto`, a byte size such as `512MiB` or
//! `2GB`, or a plain integer of bytes; `0` = no limit, as configs before `auto` meant it),
//! `worker.memory.*` (when to spill, when to pause, how many workers share the machine under
//! `auto`) and `worker.spill_dir`.
//!
//! Kept apart from `config.rs` because the limit is resolved against the machine: `auto` reads
//! the physical memory (and a cgroup's limit, when lower) through `sysinfo`.

use ares_core::error::{AresError, Result};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::PathBuf;

/// Share of the machine's memory that `auto` divides among the node's workers; the rest is
/// left to the process itself, the supervisor and the operating system.
pub const AUTO_FRACTION: f64 = 0.8;

/// `worker.memory_limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLimit {
    /// [`AUTO_FRACTION`] of the machine's memory, divided by `worker.memory.node_workers`.
    #[default]
    Auto,
    /// Bytes; 0 = no limit (nothing spilled, nothing refused).
    Bytes(u64),
}

/// A memory limit that is neither `auto` nor a byte size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not `auto` or a byte size such as 512MiB or 2GB ({why})")]
pub struct MemoryLimitError {
    text: String,
    why: String,
}

impl MemoryLimit {
    /// Parses `auto`, `512MiB`, `2GB`, `1.5 GiB` or `1048576`.
    pub fn parse(text: &str) -> std::result::Result<Self, MemoryLimitError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(MemoryLimit::Auto);
        }
        if let Ok(n) = t.parse::<u64>() {
            return Ok(MemoryLimit::Bytes(n));
        }
        t.parse::<bytesize::ByteSize>()
            .map(|b| MemoryLimit::Bytes(b.as_u64()))
            .map_err(|why| MemoryLimitError {
                text: text.to_string(),
                why,
            })
    }

    /// The limit in bytes (0 = none), `auto` resolved for a machine of `machine_bytes`.
    pub fn resolve(self, machine_bytes: u64, node_workers: usize) -> u64 {
        match self {
            MemoryLimit::Bytes(n) => n,
            MemoryLimit::Auto => {
                (machine_bytes as f64 * AUTO_FRACTION / node_workers.max(1) as f64) as u64
            }
        }
    }
}

impl Serialize for MemoryLimit {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            MemoryLimit::Auto => s.serialize_str("auto"),
            MemoryLimit::Bytes(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for MemoryLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = MemoryLimit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`auto`, a byte size such as 512MiB or 2GB, or an integer of bytes")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> std::result::Result<MemoryLimit, E> {
                Ok(MemoryLimit::Bytes(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> std::result::Result<MemoryLimit, E> {
                u64::try_from(n)
                    .map(MemoryLimit::Bytes)
                    .map_err(|_| E::custom(format!("memory_limit must not be negative, got {n}")))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<MemoryLimit, E> {
                MemoryLimit::parse(s).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `worker.memory`: thresholds as fractions of the limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerMemoryConfig {
    /// Above this fraction of the limit, least recently used chunks go to `spill_dir`.
    pub spill: f64,
    /// Above this fraction, the worker starts no new subtask until it is back under.
    pub pause: f64,
    /// Workers sharing this machine's memory under `memory_limit: auto` (the embedded cluster
    /// of `ares run` sets its `--workers`).
    pub node_workers: usize,
}

impl Default for WorkerMemoryConfig {
    fn default() -> Self {
        Self {
            spill: 0.6,
            pause: 0.8,
            node_workers: 1,
        }
    }
}

impl WorkerMemoryConfig {
    pub fn validate(&self) -> Result<()> {
        let ok = |f: f64| f > 0.0 && f <= 1.0;
        if !ok(self.spill) || !ok(self.pause) || self.spill > self.pause {
            return Err(AresError::Config(format!(
                "worker.memory.spill ({}) and worker.memory.pause ({}) must be fractions in (0, 1] with spill <= pause",
                self.spill, self.pause
            )));
        }
        if self.node_workers == 0 {
            return Err(AresError::Config(
                "worker.memory.node_workers must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Physical memory of this machine, or the cgroup's limit when that is lower (containers).
pub fn machine_memory() -> u64 {
    use sysinfo::{MemoryRefreshKind, RefreshKind, System};
    let sys = System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let total = sys.total_memory();
    match sys.cgroup_limits() {
        Some(c) if c.total_memory > 0 => total.min(c.total_memory),
        _ => total,
    }
}

/// `worker.spill_dir` unless set: `ares-spill` in the system's temporary directory.
pub fn default_spill_dir() -> PathBuf {
    std::env::temp_dir().join("ares-spill")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_as_auto_sizes_and_integers() {
        assert_eq!(MemoryLimit::parse("auto"), Ok(MemoryLimit::Auto));
        assert_eq!(
            MemoryLimit::parse("512MiB"),
            Ok(MemoryLimit::Bytes(512 << 20))
        );
        assert_eq!(
            MemoryLimit::parse("2GB"),
            Ok(MemoryLimit::Bytes(2_000_000_000))
        );
        assert_eq!(
            MemoryLimit::parse("1048576"),
            Ok(MemoryLimit::Bytes(1 << 20))
        );
        let err = MemoryLimit::parse("lots").unwrap_err().to_string();
        assert!(err.contains("\"lots\"") && err.contains("512MiB"), "{err}");
        assert_eq!(MemoryLimit::Auto.resolve(10_000, 2), 4000);
        assert_eq!(MemoryLimit::Bytes(0).resolve(10_000, 2), 0);
    }

    #[test]
    fn machine_memory_is_found() {
        assert!(machine_memory() > 16 << 20);
    }
}
