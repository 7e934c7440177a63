//! Runs the [`handshake`](super::handshake) over sockets: async for listeners and the
//! worker's link to its supervisor, blocking for clients and data-plane fetches. Every step
//! has a deadline: a peer that sends its hello one byte a minute (slowloris) is dropped when
//! the handshake timeout passes.

use super::handshake::{
    Answer, Connector, HandshakeError, Listener, Role, CHALLENGE_LEN, HELLO_LEN, PROOF_LEN,
};
use super::secret::{Keys, Secret};
use std::io::{Read, Write};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The listener's side; returns the role the peer proved.
pub async fn accept<S>(
    s: &mut S,
    keys: &Keys,
    serves: &[Role],
    timeout: Duration,
) -> Result<Role, HandshakeError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let exchange = async {
        let mut hello = [0u8; HELLO_LEN];
        s.read_exact(&mut hello).await?;
        match Listener::answer(keys, serves, &hello)? {
            Answer::Refuse(bytes, e) => {
                let _ = s.write_all(&bytes).await;
                Err(e)
            }
            Answer::Challenge(listener, bytes) => {
                s.write_all(&bytes).await?;
                let mut proof = [0u8; PROOF_LEN];
                s.read_exact(&mut proof).await?;
                let (status, role) = listener.verify(&proof);
                s.write_all(&[status]).await?;
                role
            }
        }
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout)?
}

/// The connector's side (async).
pub async fn connect_async<S>(
    s: &mut S,
    role: Role,
    secret: &Secret,
    timeout: Duration,
) -> Result<(), HandshakeError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let exchange = async {
        let (connector, hello) = Connector::hello(role);
        s.write_all(&hello).await?;
        let mut challenge = [0u8; CHALLENGE_LEN];
        s.read_exact(&mut challenge).await?;
        let proof = connector.prove(secret, &challenge)?;
        s.write_all(&proof).await?;
        let mut verdict = [0u8; 1];
        s.read_exact(&mut verdict).await?;
        connector.verdict(verdict[0])
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout)?
}

/// The connector's side (blocking); the stream's timeouts are restored afterwards.
pub fn connect_blocking(
    s: &mut std::net::TcpStream,
    role: Role,
    secret: &Secret,
    timeout: Duration,
) -> Result<(), HandshakeError> {
    let (read, write) = (s.read_timeout()?, s.write_timeout()?);
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let result = (|| {
        let (connector, hello) = Connector::hello(role);
        s.write_all(&hello)?;
        let mut challenge = [0u8; CHALLENGE_LEN];
        s.read_exact(&mut challenge)?;
        let proof = connector.prove(secret, &challenge)?;
        s.write_all(&proof)?;
        let mut verdict = [0u8; 1];
        s.read_exact(&mut verdict)?;
        connector.verdict(verdict[0])
    })();
    s.set_read_timeout(read)?;
    s.set_write_timeout(write)?;
    result.map_err(|e| match e {
        HandshakeError::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            HandshakeError::Timeout
        }
        other => other,
    })
}
