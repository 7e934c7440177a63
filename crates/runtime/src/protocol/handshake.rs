//! The handshake every connection starts with, on the RPC port and the data plane alike:
//! a mutual HMAC-SHA256 challenge-response over fixed-size messages, so nothing a peer sends
//! is decoded (no bincode, no length prefix) before it proved it holds the secret of its role.
//!
//! ```text
//! connector → listener  hello     "ARES" | version u32 BE | role u8 | seal u8 | connector nonce [32]
//! listener  → connector challenge status u8 | version u32 BE | sealed u8 | listener nonce [32]
//!                                 | HMAC(key, "ares listener" | role | seal | sealed | cnonce | lnonce)
//! connector → listener  proof     HMAC(key, "ares connector" | role | seal | sealed | lnonce | cnonce)
//! listener  → connector verdict   status u8
//! then, if sealed = 1: the Noise handshake of [`super::secure::noise`] (48 bytes each way)
//! ```
//!
//! `seal` is 1 when the connector asks for an encrypted link (`cluster.encrypt`), `sealed`
//! the listener's decision: 1 when either end asks. Both MACs cover both bytes, so a man in
//! the middle who flips them to get a link in clear fails the exchange.
//!
//! Both sides pick fresh random nonces and the two MACs carry different labels, so neither
//! a recorded exchange nor a listener's own answer can be replayed as a proof. The key is the
//! secret of the role ([`Keys::for_role`]): a client credential cannot register a worker.
//! Comparison is constant-time (`hmac`'s `verify_slice`). A node without a secret uses the
//! empty key: the exchange still runs, so both sides speak one protocol, but proves nothing.

use super::secret::{Keys, Secret};
use super::secure::{Agreement, SealError};
use super::PROTOCOL_VERSION;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use thiserror::Error;

pub const MAGIC: [u8; 4] = *b"ARES";
pub const NONCE: usize = 32;
pub const MAC_LEN: usize = 32;
pub const HELLO_LEN: usize = 4 + 4 + 1 + 1 + NONCE;
pub const CHALLENGE_LEN: usize = 1 + 4 + 1 + NONCE + MAC_LEN;
/// Where the listener's nonce starts in its challenge.
const CHALLENGE_NONCE: usize = 1 + 4 + 1;
pub const PROOF_LEN: usize = MAC_LEN;

/// Who is connecting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A worker registering with the supervisor.
    Worker,
    /// A client submitting tasks.
    Client,
    /// A node reading chunks from a worker's data plane.
    Peer,
}

impl Role {
    pub(crate) fn byte(self) -> u8 {
        match self {
            Role::Worker => 1,
            Role::Client => 2,
            Role::Peer => 3,
        }
    }
    fn from_byte(b: u8) -> Option<Role> {
        [Role::Worker, Role::Client, Role::Peer]
            .into_iter()
            .find(|r| r.byte() == b)
    }
}

/// Listener status codes.
const OK: u8 = 0;
const BAD_PROOF: u8 = 1;
const BAD_VERSION: u8 = 2;
const ROLE_NOT_SERVED: u8 = 3;

#[derive(Debug, Error)]
pub enum HandshakeError {
    #[error("not an ares handshake")]
    NotAres,
    #[error("protocol version {theirs}, this node speaks {ours}")]
    Version { theirs: u32, ours: u32 },
    #[error("role byte {0} is unknown")]
    UnknownRole(u8),
    #[error("this port does not serve the {0:?} role")]
    RoleNotServed(Role),
    #[error("wrong secret: the peer could not prove it holds the {0:?} secret")]
    BadProof(Role),
    #[error("the listener does not hold the secret (it may be an impostor or misconfigured)")]
    ListenerProof,
    #[error("the listener refused the handshake: wrong secret for the {0:?} role")]
    Refused(Role),
    #[error("seal byte {0} is not 0 or 1")]
    BadSealByte(u8),
    #[error("the listener would not encrypt the link, though this node asked (cluster.encrypt)")]
    Unsealed,
    #[error("{0}")]
    Seal(#[from] SealError),
    #[error("handshake timed out")]
    Timeout,
    #[error("handshake: {0}")]
    Io(#[from] std::io::Error),
}

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &Secret, label: &[u8], role: Role, seal: [u8; 2], a: &[u8], b: &[u8]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(key.bytes()).expect("HMAC takes any key length");
    m.update(label);
    m.update(&[role.byte()]);
    m.update(&seal);
    m.update(a);
    m.update(b);
    m
}

fn seal_byte(b: u8) -> Result<bool, HandshakeError> {
    match b {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(HandshakeError::BadSealByte(b)),
    }
}

fn nonce() -> [u8; NONCE] {
    let mut n = [0u8; NONCE];
    rand::rngs::OsRng.fill_bytes(&mut n);
    n
}

/// The connector's side between its hello and the listener's challenge.
pub struct Connector {
    role: Role,
    seal: bool,
    nonce: [u8; NONCE],
}

impl Connector {
    /// `seal`: ask for an encrypted link.
    pub fn hello(role: Role, seal: bool) -> (Connector, [u8; HELLO_LEN]) {
        let c = Connector {
            role,
            seal,
            nonce: nonce(),
        };
        let mut out = [0u8; HELLO_LEN];
        out[..4].copy_from_slice(&MAGIC);
        out[4..8].copy_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        out[8] = role.byte();
        out[9] = u8::from(seal);
        out[10..].copy_from_slice(&c.nonce);
        (c, out)
    }

    /// Checks the listener's proof and returns the connector's.
    pub fn prove(
        &self,
        secret: &Secret,
        challenge: &[u8; CHALLENGE_LEN],
    ) -> Result<[u8; PROOF_LEN], HandshakeError> {
        let version = u32::from_be_bytes(challenge[1..5].try_into().expect("4 bytes"));
        match challenge[0] {
            OK => {}
            BAD_VERSION => {
                return Err(HandshakeError::Version {
                    theirs: version,
                    ours: PROTOCOL_VERSION,
                })
            }
            ROLE_NOT_SERVED => return Err(HandshakeError::RoleNotServed(self.role)),
            _ => return Err(HandshakeError::NotAres),
        }
        let sealed = seal_byte(challenge[5])?;
        let mode = [u8::from(self.seal), u8::from(sealed)];
        let their_nonce = &challenge[CHALLENGE_NONCE..CHALLENGE_NONCE + NONCE];
        mac(
            secret,
            b"ares listener",
            self.role,
            mode,
            &self.nonce,
            their_nonce,
        )
        .verify_slice(&challenge[CHALLENGE_NONCE + NONCE..])
        .map_err(|_| HandshakeError::ListenerProof)?;
        if self.seal && !sealed {
            return Err(HandshakeError::Unsealed);
        }
        let proof = mac(
            secret,
            b"ares connector",
            self.role,
            mode,
            their_nonce,
            &self.nonce,
        );
        Ok(proof.finalize().into_bytes().into())
    }

    /// What seals the link, if the (verified) challenge said to.
    pub fn sealing(&self, secret: &Secret, challenge: &[u8; CHALLENGE_LEN]) -> Option<Agreement> {
        let their_nonce = &challenge[CHALLENGE_NONCE..CHALLENGE_NONCE + NONCE];
        (challenge[5] == 1).then(|| Agreement::new(secret, self.role, &self.nonce, their_nonce))
    }

    /// Reads the listener's verdict byte.
    pub fn verdict(&self, status: u8) -> Result<(), HandshakeError> {
        match status {
            OK => Ok(()),
            _ => Err(HandshakeError::Refused(self.role)),
        }
    }
}

/// The listener's side between its challenge and the connector's proof.
pub struct Listener {
    role: Role,
    key: Secret,
    /// The connector's seal byte and this listener's decision.
    mode: [u8; 2],
    theirs: [u8; NONCE],
    ours: [u8; NONCE],
}

/// What the listener answers to a hello: its challenge, or a refusal to send before closing.
pub enum Answer {
    Challenge(Listener, [u8; CHALLENGE_LEN]),
    Refuse([u8; CHALLENGE_LEN], HandshakeError),
}

impl Listener {
    /// Reads a hello. Bytes that are not an ares hello get no answer at all. `seal`: this
    /// listener encrypts every link (else only those whose connector asks).
    pub fn answer(
        keys: &Keys,
        serves: &[Role],
        hello: &[u8; HELLO_LEN],
        seal: bool,
    ) -> Result<Answer, HandshakeError> {
        if hello[..4] != MAGIC {
            return Err(HandshakeError::NotAres);
        }
        let version = u32::from_be_bytes(hello[4..8].try_into().expect("4 bytes"));
        let role = Role::from_byte(hello[8]).ok_or(HandshakeError::UnknownRole(hello[8]))?;
        let mut out = [0u8; CHALLENGE_LEN];
        out[1..5].copy_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        if version != PROTOCOL_VERSION {
            out[0] = BAD_VERSION;
            let e = HandshakeError::Version {
                theirs: version,
                ours: PROTOCOL_VERSION,
            };
            return Ok(Answer::Refuse(out, e));
        }
        if !serves.contains(&role) {
            out[0] = ROLE_NOT_SERVED;
            return Ok(Answer::Refuse(out, HandshakeError::RoleNotServed(role)));
        }
        let asked = seal_byte(hello[9])?;
        let sealed = asked || seal;
        let l = Listener {
            role,
            key: keys.for_role(role).clone(),
            mode: [u8::from(asked), u8::from(sealed)],
            theirs: hello[10..].try_into().expect("nonce"),
            ours: nonce(),
        };
        out[5] = u8::from(sealed);
        out[CHALLENGE_NONCE..CHALLENGE_NONCE + NONCE].copy_from_slice(&l.ours);
        let m = mac(&l.key, b"ares listener", role, l.mode, &l.theirs, &l.ours);
        out[CHALLENGE_NONCE + NONCE..].copy_from_slice(&m.finalize().into_bytes());
        Ok(Answer::Challenge(l, out))
    }

    /// Checks the connector's proof; the verdict byte to send either way.
    pub fn verify(&self, proof: &[u8; PROOF_LEN]) -> (u8, Result<Role, HandshakeError>) {
        match mac(
            &self.key,
            b"ares connector",
            self.role,
            self.mode,
            &self.ours,
            &self.theirs,
        )
        .verify_slice(proof)
        {
            Ok(()) => (OK, Ok(self.role)),
            Err(_) => (BAD_PROOF, Err(HandshakeError::BadProof(self.role))),
        }
    }

    /// What seals the link, if this exchange decided to (call after a proof verified).
    pub fn sealing(&self) -> Option<Agreement> {
        (self.mode[1] == 1).then(|| Agreement::new(&self.key, self.role, &self.theirs, &self.ours))
    }
}

#[cfg(test)]
mod tests;
