//! Encrypted links: what `cluster.encrypt` turns on.
//!
//! The [`handshake`](super::handshake) proves that both ends hold the role's secret, but
//! everything after it used to travel in clear: anyone on the path could read chunks and
//! graphs, or rewrite them in flight. When the handshake agrees to seal the link (either end
//! asks; the agreement is covered by both MACs, so a man in the middle cannot strip it),
//! the two ends run a Noise `NNpsk0` handshake ([`noise`]): fresh X25519 keys on both sides
//! (forward secrecy: a secret stolen later does not open recorded traffic) mixed with a
//! pre-shared key derived from the role's secret (a relay that passed the MACs through still
//! cannot finish it), bound by its prologue to the nonces of the exchange before it.
//!
//! After that, every byte travels in [`record`]s of AES-256-GCM (ring's, with AES-NI): a
//! record is `length u16 BE | ciphertext` with at most 64 KiB of plaintext, each direction
//! counting its own nonces. [`stream`] and [`blocking`] put records under the async and the
//! blocking socket code, and [`conn`] is the connection every link holds after the
//! handshake, plain or sealed.
//!
//! Why Noise and not TLS: the cluster's trust is a shared secret, not certificates; Noise
//! with a PSK uses exactly that, needs no PKI, and its handshake is two fixed-size messages
//! (nothing a peer sends is parsed by length before it proved the key).

pub mod blocking;
pub mod conn;
mod inbox;
pub mod noise;
pub mod record;
pub mod stream;

pub use conn::{BlockingConn, Conn, ConnRead, ConnWrite};
pub use noise::{Agreement, Cipher, SealError};
