//! Accepting connections on a listening port (the supervisor's RPC port, each worker's data
//! plane). At most `limits.max_connections` are open at once: one more is closed at once,
//! not queued. When accept itself fails (EMFILE: the process is out of file descriptors) the
//! loop backs off from 10 ms to 1 s instead of spinning, and logs through the rate limit
//! (the old loop used 100% CPU and logged 98 MB/s). Every connection then runs the handshake
//! under `cluster.handshake_timeout_ms` before its handler sees a byte of it, and comes out
//! sealed when the handshake agreed to encrypt (`cluster.encrypt`).

use crate::protocol::auth;
use crate::protocol::handshake::Role;
use crate::protocol::secret::Keys;
use crate::protocol::secure::Conn;
use crate::telemetry::peer_rejected;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Who may come in through a port.
#[derive(Clone, Debug)]
pub struct Gate {
    /// Names the port in log lines.
    pub what: &'static str,
    pub keys: Keys,
    /// The roles this port serves.
    pub serves: &'static [Role],
    pub handshake_timeout: Duration,
    pub max_connections: usize,
    /// Encrypt every link (`cluster.encrypt`), not only those whose connector asks.
    pub seal: bool,
}

/// A connection that passed the gate; dropping `permit` frees its place.
pub struct Admitted {
    pub stream: Conn,
    pub peer: SocketAddr,
    pub role: Role,
    pub permit: OwnedSemaphorePermit,
}

const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Accepts on `listener` until the runtime stops, handing each authenticated connection to
/// `admit` (on the current actix arbiter).
pub fn accept_loop(listener: TcpListener, gate: Gate, admit: impl Fn(Admitted) + 'static) {
    let admit = Rc::new(admit);
    let permits = Arc::new(Semaphore::new(gate.max_connections));
    actix_rt::spawn(async move {
        let mut backoff = FIRST_BACKOFF;
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => {
                    backoff = FIRST_BACKOFF;
                    accepted
                }
                Err(e) => {
                    peer_rejected(
                        gate.what,
                        "accept failed",
                        format_args!("{e}; retrying in {backoff:?}"),
                    );
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            let Ok(permit) = permits.clone().try_acquire_owned() else {
                peer_rejected(
                    peer,
                    gate.what,
                    format_args!("{} connections open; refused", gate.max_connections),
                );
                continue;
            };
            let (gate, admit) = (gate.clone(), admit.clone());
            actix_rt::spawn(async move {
                let _ = stream.set_nodelay(true);
                let accepted = auth::accept(
                    stream,
                    &gate.keys,
                    gate.serves,
                    gate.seal,
                    gate.handshake_timeout,
                );
                match accepted.await {
                    Ok((role, stream)) => admit(Admitted {
                        stream,
                        peer,
                        role,
                        permit,
                    }),
                    Err(e) => peer_rejected(peer, gate.what, format_args!("handshake: {e}")),
                }
            });
        }
    });
}
