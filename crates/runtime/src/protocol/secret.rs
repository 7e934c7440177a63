//! Cluster secrets: where they come from and which one each role proves.
//!
//! The cluster secret is the text of `cluster.secret_file` (or `ARES_CLUSTER_SECRET`), with
//! surrounding whitespace trimmed; workers and the data plane prove it. With
//! `cluster.client_secret_file` (or `ARES_CLIENT_SECRET`) set, clients prove that one instead,
//! so a client credential can never register a worker. The embedded cluster of `ares run`
//! makes a random secret that never leaves the process. A node listening beyond loopback
//! without a secret refuses to start unless `cluster.allow_unauthenticated` says otherwise.

use super::handshake::Role;
use crate::config::ClusterConfig;
use rand::RngCore;
use std::net::ToSocketAddrs;
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;

pub const CLUSTER_SECRET_ENV: &str = "ARES_CLUSTER_SECRET";
pub const CLIENT_SECRET_ENV: &str = "ARES_CLIENT_SECRET";

#[derive(Debug, Error)]
pub enum SecretError {
    #[error("cannot read the secret file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the secret in {0} is empty")]
    Empty(String),
    #[error("{what} listens on {addr}, beyond loopback, without a cluster secret: set cluster.secret_file or {CLUSTER_SECRET_ENV}, or cluster.allow_unauthenticated: true to accept anyone")]
    Exposed { what: String, addr: String },
}

/// Secret bytes; never printed.
#[derive(Clone, Default)]
pub struct Secret(Arc<[u8]>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl Secret {
    /// The trimmed text; `None` when nothing is left.
    pub fn from_text(text: &str) -> Option<Secret> {
        let t = text.trim();
        (!t.is_empty()).then(|| Secret(t.as_bytes().into()))
    }

    /// 32 random bytes, hex-encoded (so it could be written to a file as it is).
    pub fn random() -> Secret {
        let mut b = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut b);
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        Secret(hex.as_bytes().into())
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn from_file(path: &Path) -> Result<Secret, SecretError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecretError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Secret::from_text(&text).ok_or_else(|| SecretError::Empty(path.display().to_string()))
    }
}

/// The secrets a node or client holds.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    pub cluster: Option<Secret>,
    pub client: Option<Secret>,
}

impl Credentials {
    /// From the config's files, else the environment.
    pub fn load(c: &ClusterConfig) -> Result<Credentials, SecretError> {
        let pick = |file: &Option<std::path::PathBuf>, env: &str| match file {
            Some(p) => Secret::from_file(p).map(Some),
            None => Ok(std::env::var(env).ok().and_then(|t| Secret::from_text(&t))),
        };
        Ok(Credentials {
            cluster: pick(&c.secret_file, CLUSTER_SECRET_ENV)?,
            client: pick(&c.client_secret_file, CLIENT_SECRET_ENV)?,
        })
    }

    /// A fresh random cluster secret (the embedded cluster).
    pub fn random() -> Credentials {
        Credentials {
            cluster: Some(Secret::random()),
            client: None,
        }
    }

    /// What a listening node checks.
    pub fn keys(&self) -> Keys {
        let cluster = self.cluster.clone().unwrap_or_default();
        Keys {
            client: self.client.clone().unwrap_or_else(|| cluster.clone()),
            cluster,
        }
    }

    /// What a node proves to another node (worker → supervisor, data-plane fetches).
    pub fn node_secret(&self) -> Secret {
        self.cluster.clone().unwrap_or_default()
    }

    /// What a client proves: the client secret if it has one, else the cluster secret.
    pub fn client_secret(&self) -> Secret {
        self.client
            .clone()
            .or_else(|| self.cluster.clone())
            .unwrap_or_default()
    }

    /// Refuses to serve `addr` beyond loopback without a secret, unless allowed.
    pub fn check_exposure(&self, what: &str, addr: &str, allow: bool) -> Result<(), SecretError> {
        if self.cluster.is_some() || allow || is_loopback(addr) {
            return Ok(());
        }
        Err(SecretError::Exposed {
            what: what.into(),
            addr: addr.into(),
        })
    }
}

/// Whether every address `addr` resolves to is a loopback address.
pub fn is_loopback(addr: &str) -> bool {
    addr.to_socket_addrs()
        .map(|mut a| {
            let all: Vec<_> = a.by_ref().collect();
            !all.is_empty() && all.iter().all(|s| s.ip().is_loopback())
        })
        .unwrap_or(false)
}

/// The key each role proves to a listener.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    cluster: Secret,
    client: Secret,
}

impl Keys {
    pub fn for_role(&self, role: Role) -> &Secret {
        match role {
            Role::Client => &self.client,
            Role::Worker | Role::Peer => &self.cluster,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_trimmed_and_roles_get_their_own() {
        assert_eq!(Secret::from_text("  abc\n").unwrap().bytes(), b"abc");
        assert!(Secret::from_text(" \n").is_none());
        let creds = Credentials {
            cluster: Secret::from_text("node"),
            client: Secret::from_text("client"),
        };
        let keys = creds.keys();
        assert_eq!(keys.for_role(Role::Worker).bytes(), b"node");
        assert_eq!(keys.for_role(Role::Peer).bytes(), b"node");
        assert_eq!(keys.for_role(Role::Client).bytes(), b"client");
        assert_eq!(creds.client_secret().bytes(), b"client");
        assert!(format!("{:?}", creds).contains("4 bytes"));
        assert!(!format!("{:?}", creds).contains("node"));
        assert_ne!(Secret::random().bytes(), Secret::random().bytes());
    }

    #[test]
    fn exposure_needs_a_secret_or_an_explicit_yes() {
        let none = Credentials::default();
        assert!(none
            .check_exposure("supervisor", "127.0.0.1:0", false)
            .is_ok());
        assert!(none
            .check_exposure("supervisor", "localhost:0", false)
            .is_ok());
        let err = none
            .check_exposure("supervisor", "0.0.0.0:7700", false)
            .unwrap_err();
        assert!(err.to_string().contains("allow_unauthenticated"), "{err}");
        assert!(none
            .check_exposure("supervisor", "0.0.0.0:7700", true)
            .is_ok());
        assert!(Credentials::random()
            .check_exposure("worker", "0.0.0.0:1", false)
            .is_ok());
    }
}
