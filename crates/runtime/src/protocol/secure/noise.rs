//! The Noise `NNpsk0` handshake that starts a sealed link, as pure functions over its two
//! fixed-size messages (the socket code is in [`crate::protocol::auth`]).
//!
//! ```text
//! connector → listener  m1  psk, e       (48 bytes: its ephemeral key, an empty payload's tag)
//! listener  → connector m2  e, ee        (48 bytes)
//! ```
//!
//! Both then hold one AES-256-GCM key per direction ([`Cipher`]).

use super::super::handshake::Role;
use super::super::secret::Secret;
use sha2::{Digest, Sha256};
use snow::{HandshakeState, StatelessTransportState};
use std::sync::Arc;
use thiserror::Error;

/// The Noise protocol name: X25519, AES-256-GCM, SHA-256.
pub const PARAMS: &str = "Noise_NNpsk0_25519_AESGCM_SHA256";
/// The length of each of the two handshake messages.
pub const MESSAGE_LEN: usize = 48;

#[derive(Debug, Error)]
pub enum SealError {
    #[error("the encrypted handshake failed ({0}): the peer does not hold the key, or the bytes were altered")]
    Handshake(snow::Error),
    #[error("an encrypted record failed authentication: the link was altered in flight")]
    Forged,
    #[error("the link sent 2^64 records: its nonces are spent")]
    NoncesSpent,
}

/// What the two ends of an authenticated connection agreed on to seal it: the pre-shared key
/// (from the role's secret) and the prologue (the exchange's nonces).
#[derive(Clone)]
pub struct Agreement {
    psk: [u8; 32],
    prologue: Vec<u8>,
}

impl std::fmt::Debug for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Agreement { .. }")
    }
}

impl Agreement {
    /// `key` is the role's secret; `connector` and `listener` the two nonces of the
    /// challenge-response before.
    pub fn new(key: &Secret, role: Role, connector: &[u8], listener: &[u8]) -> Self {
        let mut h = Sha256::new();
        h.update(b"ares link psk v1");
        h.update(key.bytes());
        let mut prologue = b"ares link v1".to_vec();
        prologue.push(role.byte());
        prologue.extend_from_slice(connector);
        prologue.extend_from_slice(listener);
        Agreement {
            psk: h.finalize().into(),
            prologue,
        }
    }

    fn builder(&self) -> Result<snow::Builder<'_>, SealError> {
        let params = PARAMS.parse().expect("a valid Noise protocol name");
        snow::Builder::new(params)
            .psk(0, &self.psk)
            .and_then(|b| b.prologue(&self.prologue))
            .map_err(SealError::Handshake)
    }

    /// The connector's first message.
    pub fn initiate(&self) -> Result<(Initiating, [u8; MESSAGE_LEN]), SealError> {
        let mut hs = self
            .builder()?
            .build_initiator()
            .map_err(SealError::Handshake)?;
        let mut m1 = [0u8; MESSAGE_LEN];
        let n = hs
            .write_message(&[], &mut m1)
            .map_err(SealError::Handshake)?;
        debug_assert_eq!(n, MESSAGE_LEN);
        Ok((Initiating(hs), m1))
    }

    /// The listener reads the first message and answers with the second; the link is sealed.
    pub fn respond(
        &self,
        m1: &[u8; MESSAGE_LEN],
    ) -> Result<(Cipher, [u8; MESSAGE_LEN]), SealError> {
        let mut hs = self
            .builder()?
            .build_responder()
            .map_err(SealError::Handshake)?;
        let mut payload = [0u8; MESSAGE_LEN];
        hs.read_message(m1, &mut payload)
            .map_err(SealError::Handshake)?;
        let mut m2 = [0u8; MESSAGE_LEN];
        let n = hs
            .write_message(&[], &mut m2)
            .map_err(SealError::Handshake)?;
        debug_assert_eq!(n, MESSAGE_LEN);
        Ok((Cipher::from_handshake(hs)?, m2))
    }
}

/// The connector between its message and the listener's answer.
pub struct Initiating(HandshakeState);

impl Initiating {
    pub fn finish(mut self, m2: &[u8; MESSAGE_LEN]) -> Result<Cipher, SealError> {
        let mut payload = [0u8; MESSAGE_LEN];
        self.0
            .read_message(m2, &mut payload)
            .map_err(SealError::Handshake)?;
        Cipher::from_handshake(self.0)
    }
}

/// The two directions' keys of a sealed link, shared by its reading and writing halves
/// (each counts its own nonces).
#[derive(Clone)]
pub struct Cipher(pub(super) Arc<StatelessTransportState>);

impl Cipher {
    fn from_handshake(hs: HandshakeState) -> Result<Self, SealError> {
        let t = hs
            .into_stateless_transport_mode()
            .map_err(SealError::Handshake)?;
        Ok(Cipher(Arc::new(t)))
    }

    /// The sealing and the opening ends.
    pub fn split(self) -> (super::record::Sealer, super::record::Opener) {
        (
            super::record::Sealer::new(self.0.clone()),
            super::record::Opener::new(self.0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreement(secret: &str) -> Agreement {
        let key = Secret::from_text(secret).unwrap();
        Agreement::new(&key, Role::Peer, &[1; 32], &[2; 32])
    }

    #[test]
    fn both_ends_derive_one_cipher_and_a_wrong_key_fails_the_handshake() {
        let (init, m1) = agreement("s").initiate().unwrap();
        let (listener, m2) = agreement("s").respond(&m1).unwrap();
        let connector = init.finish(&m2).unwrap();
        let (mut seal, _) = connector.split();
        let (_, mut open) = listener.split();
        let mut wire = Vec::new();
        seal.seal(b"hello", &mut wire).unwrap();
        let mut plain = Vec::new();
        assert_eq!(open.open(&wire, &mut plain).unwrap(), wire.len());
        assert_eq!(plain, b"hello");

        // Another secret (or another nonce in the prologue) cannot answer or finish.
        assert!(agreement("t").respond(&m1).is_err());
        let other = Agreement::new(
            &Secret::from_text("s").unwrap(),
            Role::Peer,
            &[1; 32],
            &[3; 32],
        );
        assert!(other.respond(&m1).is_err());
    }
}
