//! Runs the [`handshake`](super::handshake) over sockets: async for listeners and the
//! worker's link to its supervisor, blocking for clients and data-plane fetches. Every step
//! has a deadline: a peer that sends its hello one byte a minute (slowloris) is dropped when
//! the handshake timeout passes. When the exchange agrees to encrypt, the Noise handshake
//! ([`super::secure::noise`]) runs under the same deadline and the connection comes back
//! sealed ([`Conn`], [`BlockingConn`]).

use super::handshake::{
    Answer, Connector, HandshakeError, Listener, Role, CHALLENGE_LEN, HELLO_LEN, PROOF_LEN,
};
use super::secret::{Keys, Secret};
use super::secure::noise::MESSAGE_LEN;
use super::secure::{BlockingConn, Conn};
use std::io::{Read, Write};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The listener's side; the role the peer proved and the connection. `seal`: encrypt even
/// when the connector does not ask.
pub async fn accept(
    mut s: TcpStream,
    keys: &Keys,
    serves: &[Role],
    seal: bool,
    timeout: Duration,
) -> Result<(Role, Conn), HandshakeError> {
    let exchange = async {
        let mut hello = [0u8; HELLO_LEN];
        s.read_exact(&mut hello).await?;
        match Listener::answer(keys, serves, &hello, seal)? {
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
                let role = role?;
                let cipher = match listener.sealing() {
                    None => None,
                    Some(agreement) => {
                        let mut m1 = [0u8; MESSAGE_LEN];
                        s.read_exact(&mut m1).await?;
                        let (cipher, m2) = agreement.respond(&m1)?;
                        s.write_all(&m2).await?;
                        Some(cipher)
                    }
                };
                Ok::<_, HandshakeError>((role, cipher))
            }
        }
    };
    let (role, cipher) = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout)??;
    Ok((role, Conn::new(s, cipher)))
}

/// The connector's side (async). `seal`: ask for an encrypted link.
pub async fn connect_async(
    mut s: TcpStream,
    role: Role,
    secret: &Secret,
    seal: bool,
    timeout: Duration,
) -> Result<Conn, HandshakeError> {
    let exchange = async {
        let (connector, hello) = Connector::hello(role, seal);
        s.write_all(&hello).await?;
        let mut challenge = [0u8; CHALLENGE_LEN];
        s.read_exact(&mut challenge).await?;
        let proof = connector.prove(secret, &challenge)?;
        s.write_all(&proof).await?;
        let mut verdict = [0u8; 1];
        s.read_exact(&mut verdict).await?;
        connector.verdict(verdict[0])?;
        match connector.sealing(secret, &challenge) {
            None => Ok::<_, HandshakeError>(None),
            Some(agreement) => {
                let (initiating, m1) = agreement.initiate()?;
                s.write_all(&m1).await?;
                let mut m2 = [0u8; MESSAGE_LEN];
                s.read_exact(&mut m2).await?;
                Ok(Some(initiating.finish(&m2)?))
            }
        }
    };
    let cipher = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout)??;
    Ok(Conn::new(s, cipher))
}

/// The connector's side (blocking); the stream's timeouts are restored afterwards.
pub fn connect_blocking(
    mut s: std::net::TcpStream,
    role: Role,
    secret: &Secret,
    seal: bool,
    timeout: Duration,
) -> Result<BlockingConn, HandshakeError> {
    let (read, write) = (s.read_timeout()?, s.write_timeout()?);
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let result = (|| {
        let (connector, hello) = Connector::hello(role, seal);
        s.write_all(&hello)?;
        let mut challenge = [0u8; CHALLENGE_LEN];
        s.read_exact(&mut challenge)?;
        let proof = connector.prove(secret, &challenge)?;
        s.write_all(&proof)?;
        let mut verdict = [0u8; 1];
        s.read_exact(&mut verdict)?;
        connector.verdict(verdict[0])?;
        match connector.sealing(secret, &challenge) {
            None => Ok(None),
            Some(agreement) => {
                let (initiating, m1) = agreement.initiate()?;
                s.write_all(&m1)?;
                let mut m2 = [0u8; MESSAGE_LEN];
                s.read_exact(&mut m2)?;
                Ok(Some(initiating.finish(&m2)?))
            }
        }
    })();
    s.set_read_timeout(read)?;
    s.set_write_timeout(write)?;
    match result {
        Ok(cipher) => Ok(BlockingConn::new(s, cipher)),
        Err(HandshakeError::Io(io))
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(HandshakeError::Timeout)
        }
        Err(other) => Err(other),
    }
}
