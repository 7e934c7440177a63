//! The `web` keys: where the HTTP API listens, its bearer token (from the config, a file or
//! `ARES_WEB_TOKEN`, checked to be a token a header and a cookie can carry), body limit and
//! TLS files. Kept apart from `config.rs` because the token is read from outside the YAML.

use ares_core::error::{AresError, Result};
use serde::{Deserialize, Serialize};

/// `web`: the HTTP API and dashboard served by the supervisor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// `HOST:PORT` to serve on; `null` = no web server.
    pub listen: Option<String>,
    /// When set, every route but `/api/health` needs `Authorization: Bearer <token>` (or
    /// `?token=` for the dashboard in a browser).
    pub token: Option<String>,
    /// Largest request body accepted; larger ones get 413.
    pub max_body_bytes: usize,
    /// File holding the token (whitespace trimmed), when `token` is not set; else
    /// `ARES_WEB_TOKEN`.
    pub token_file: Option<std::path::PathBuf>,
    /// PEM certificate chain and private key: with both set, the web API speaks HTTPS only.
    pub tls_cert: Option<std::path::PathBuf>,
    pub tls_key: Option<std::path::PathBuf>,
    /// Open connections on the web port; one more waits in the kernel's accept queue until
    /// one closes (so the descriptors of the process stay bounded: the RPC port needs some).
    pub max_connections: usize,
    /// A connection must deliver a request's head within this many ms of connecting or of
    /// its previous answer (keep-alive), else it is closed: idle connections cannot keep
    /// the places of `max_connections`.
    pub request_timeout_ms: u64,
    /// A request body (a tensor upload) that receives no byte for this many ms fails (408)
    /// and what it spooled is freed.
    pub idle_timeout_ms: u64,
    /// Sessions besides `default` that may exist at once; one more is refused (429).
    pub max_sessions: usize,
    /// A session no request names for this many ms, with no task pending or running, is
    /// deleted (its tasks cancelled, their data freed). `default` never expires.
    pub session_idle_timeout_ms: u64,
    /// Subtask runs the dashboard's task stream keeps (the newest; each worker keeps at most
    /// its share, this ÷ the live workers, between two heartbeats). 0 = no task stream:
    /// workers record nothing.
    pub task_stream_capacity: usize,
    /// Seconds of memory history per worker the dashboard draws (one sample a heartbeat).
    pub history_seconds: u64,
}

/// Tokens travel in headers and a cookie: printable ASCII, no separators.
pub(super) fn valid_token(t: &str) -> bool {
    !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_graphic() && !b";,\"\\".contains(&b))
}

impl WebConfig {
    /// The token from `token`, `token_file` or `ARES_WEB_TOKEN`, in that order.
    pub fn resolved_token(&self) -> Result<Option<String>> {
        if let Some(t) = &self.token {
            return Ok(Some(t.clone()));
        }
        let text = match &self.token_file {
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| AresError::Config(format!("web.token_file {}: {e}", p.display())))?,
            None => std::env::var("ARES_WEB_TOKEN").unwrap_or_default(),
        };
        let t = text.trim();
        if t.is_empty() && self.token_file.is_some() {
            return Err(AresError::Config("web.token_file is empty".into()));
        }
        if !t.is_empty() && !valid_token(t) {
            return Err(AresError::Config(
                "the web token must be printable ASCII without spaces, ';', ',' or quotes".into(),
            ));
        }
        Ok((!t.is_empty()).then(|| t.to_string()))
    }
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            listen: None,
            token: None,
            max_body_bytes: 16 << 20,
            token_file: None,
            tls_cert: None,
            tls_key: None,
            max_connections: 256,
            request_timeout_ms: 1000,
            idle_timeout_ms: 30000,
            max_sessions: 64,
            session_idle_timeout_ms: 3_600_000,
            task_stream_capacity: 100_000,
            history_seconds: 600,
        }
    }
}
