//! A worker's connection to its supervisor: connect and prove the cluster secret, retrying
//! while the supervisor is absent or silent, until the rejoin window runs out or the process
//! is told to stop (a wrong secret fails at once).

use crate::config::Config;
use crate::protocol::auth;
use crate::protocol::handshake::{HandshakeError, Role};
use crate::protocol::secret::Credentials;
use crate::protocol::secure::Conn;
use std::time::Duration;
use tokio::net::TcpStream;

/// An authenticated connection to `supervisor` (sealed when either end asks: `seal`), tried
/// for up to `wait`.
pub(super) async fn supervisor(
    supervisor: &str,
    creds: &Credentials,
    seal: bool,
    config: &Config,
    wait: Duration,
    stop: &crate::shutdown::Shutdown,
) -> std::io::Result<Conn> {
    let deadline = tokio::time::Instant::now() + wait;
    let handshake = Duration::from_millis(config.cluster.handshake_timeout_ms);
    // Connect and prove the secret, retrying until `wait` runs out while the supervisor is
    // absent or silent (a wrong secret fails at once).
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let attempt = async {
            // Bounded too: resolving a name whose container is gone can hang on a host
            // without DNS far longer than `wait`, and the worker must then exit on time.
            let connect = TcpStream::connect(supervisor);
            let s = tokio::time::timeout(left.max(Duration::from_millis(50)), connect)
                .await
                .map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("connecting to the supervisor at {supervisor}: timed out"),
                    )
                })??;
            s.set_nodelay(true)?;
            let timeout = handshake.min(left).max(Duration::from_millis(50));
            let secret = creds.node_secret();
            match auth::connect_async(s, Role::Worker, &secret, seal, timeout).await {
                Ok(conn) => Ok(Ok(conn)),
                Err(e @ (HandshakeError::Timeout | HandshakeError::Io(_))) => Err(
                    std::io::Error::new(std::io::ErrorKind::TimedOut, e.to_string()),
                ),
                Err(e) => Ok(Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("supervisor at {supervisor}: {e}"),
                ))),
            }
        };
        match attempt.await {
            Ok(done) => return done,
            Err(e) if tokio::time::Instant::now() >= deadline || stop.requested() => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
