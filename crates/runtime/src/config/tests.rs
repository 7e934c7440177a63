//! Parsing, defaults and validation of the configuration.

use super::*;

#[test]
fn parses_task_default_config() {
    let c = Config::from_yaml(
        "task:\n  default_config:\n    fuse_enabled: false\n    combine_size: 8\n    fuse_generated_operands: false\n",
        "t.yml",
    )
    .unwrap();
    assert!(!c.task.default_config.fuse_enabled);
    assert!(!c.task.default_config.fuse_generated_operands);
    assert!(TaskConfig::default().fuse_generated_operands);
    assert_eq!(c.task.default_config.combine_size, 8);
    assert!(c.task.default_config.optimize_chunk_graph);
}

#[test]
fn unknown_key_is_rejected_with_position() {
    let err = Config::from_yaml(
        "task:\n  default_config:\n    fuse_enabeld: true\n",
        "t.yml",
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("fuse_enabeld"), "{msg}");
    assert!(msg.contains("line 3"), "{msg}");
    assert!(msg.contains("t.yml"), "{msg}");
}

#[test]
fn runtime_sections_are_validated() {
    let c = Config::from_yaml(
        "cluster:\n  listen: 0.0.0.0:0\n  node_timeout_ms: 3000\nworker:\n  slots: 3\n",
        "t.yml",
    )
    .unwrap();
    assert_eq!(c.worker.effective_slots(), 3);
    let err = Config::from_yaml("cluster:\n  listen: nowhere\n", "t.yml").unwrap_err();
    assert!(err.to_string().contains("cluster.listen"), "{err}");
    let err = Config::from_yaml(
        "cluster:\n  heartbeat_interval_ms: 500\n  node_timeout_ms: 100\n",
        "t.yml",
    )
    .unwrap_err();
    assert!(err.to_string().contains("node_timeout_ms"), "{err}");
    let err = Config::from_yaml("worker:\n  slotz: 1\n", "w.yml").unwrap_err();
    assert!(
        err.to_string().contains("slotz") && err.to_string().contains("line 2"),
        "{err}"
    );
}

#[test]
fn bad_value_is_rejected() {
    let err =
        Config::from_yaml("task:\n  default_config:\n    combine_size: 1\n", "t.yml").unwrap_err();
    assert!(err.to_string().contains("combine_size"));
}

#[test]
fn links_are_sealed_beyond_loopback_unless_told_otherwise() {
    let mut c = ClusterConfig::default();
    // Unset: on loopback in clear, anywhere else (or unresolvable) sealed.
    assert!(!c.seals(&["127.0.0.1:0"]));
    assert!(!c.seals(&["localhost:7700", "[::1]:1"]));
    assert!(c.seals(&["127.0.0.1:0", "0.0.0.0:7800"]));
    assert!(c.seals(&["10.1.2.3:7700"]));
    assert!(c.seals(&["no-such-host.invalid:7700"]));
    // Set: what it says.
    c.encrypt = Some(true);
    assert!(c.seals(&["127.0.0.1:0"]));
    c.encrypt = Some(false);
    assert!(!c.seals(&["0.0.0.0:7800"]));
    let parsed: Config = yaml_serde::from_str("cluster:\n  encrypt: true\n").unwrap();
    assert_eq!(parsed.cluster.encrypt, Some(true));
    let parsed: Config = yaml_serde::from_str("cluster:\n  encrypt: null\n").unwrap();
    assert_eq!(parsed.cluster.encrypt, None);
}
