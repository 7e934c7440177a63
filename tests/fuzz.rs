//! In-process fuzzing of everything that reads a peer's bytes: the frame decoder (framing and
//! bincode) and the handshake. 10^5 inputs per target run in CI (seconds in a debug build);
//! `cargo test --release --test fuzz -- --ignored` runs 10^6. Inputs are random bytes and
//! mutations of valid frames of every message kind (flipped bytes, cuts, huge length
//! claims). A decoder may refuse anything; it must never panic, never allocate more than a
//! small multiple of the bytes present, and whatever it accepts must encode back to a frame
//! that decodes to the same messages.

mod common;

use ares::protocol::codec::{self, FrameLimit, Framing};
use ares::protocol::handshake::{Answer, Connector, Listener, Role, CHALLENGE_LEN, HELLO_LEN};
use ares::protocol::secret::Credentials;
use ares::protocol::{ClientReply, ClientRequest, Direction, FromWorker, ToWorker};
use bytes::BytesMut;
use proptest::prelude::*;
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tokio_util::codec::Decoder;

/// Valid frames to mutate: every message kind alone, and all of them in one frame.
fn seeds() -> Vec<Vec<u8>> {
    let task = ares_core::ids::TaskId(3);
    let k = common::hostile::every_message(task);
    let mut out: Vec<Vec<u8>> = common::hostile::every_frame(task)
        .into_iter()
        .map(|f| f.1)
        .collect();
    out.push(codec::encode_frame(&k.from_worker).unwrap());
    out.push(codec::encode_frame(&k.to_worker).unwrap());
    out.push(codec::encode_frame(&k.requests).unwrap());
    out.push(codec::encode_frame(&k.replies).unwrap());
    out
}

fn round_trip<M: Direction + PartialEq + std::fmt::Debug>(frame: &[u8]) -> bool {
    match codec::decode_frame::<M>(frame) {
        Ok(messages) => {
            let again = codec::encode_frame(&messages).unwrap();
            assert_eq!(codec::decode_frame::<M>(&again).unwrap(), messages);
            true
        }
        Err(_) => false,
    }
}

/// Decodes a frame as every direction; whether any accepted it. At most one can: the tag.
fn decode_any(frame: &[u8]) -> bool {
    let n = round_trip::<FromWorker>(frame) as u8
        + round_trip::<ToWorker>(frame) as u8
        + round_trip::<ClientRequest>(frame) as u8
        + round_trip::<ClientReply>(frame) as u8;
    assert!(n <= 1);
    n == 1
}

fn mutate(rng: &mut Xoshiro256PlusPlus, seeds: &[Vec<u8>]) -> Vec<u8> {
    match rng.gen_range(0..4) {
        0 => {
            let mut b = vec![0u8; rng.gen_range(0..300)];
            rng.fill_bytes(&mut b);
            b
        }
        1 => {
            let mut b = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..4) {
                if !b.is_empty() {
                    let i = rng.gen_range(0..b.len());
                    b[i] = rng.gen();
                }
            }
            b
        }
        2 => {
            let b = &seeds[rng.gen_range(0..seeds.len())];
            b[..rng.gen_range(0..=b.len())].to_vec()
        }
        _ => {
            // A length-claiming varint (0xfd u64 / 0xfc u32) spliced in somewhere.
            let mut b = seeds[rng.gen_range(0..seeds.len())].clone();
            let at = rng.gen_range(0..=b.len());
            let mut claim = vec![0xfd];
            claim.extend_from_slice(&(1u64 << rng.gen_range(20..63)).to_le_bytes());
            b.splice(at..at, claim);
            b
        }
    }
}

/// Feeds one input through the async framing (split at a random point) and the decoder.
fn decode_one(rng: &mut Xoshiro256PlusPlus, body: &[u8]) -> (bool, usize) {
    let mut framing = Framing::new(FrameLimit::new(1 << 16));
    let mut wire = BytesMut::new();
    let claimed = if rng.gen_bool(0.1) {
        rng.gen::<u32>()
    } else {
        body.len() as u32
    };
    wire.extend_from_slice(&claimed.to_be_bytes());
    wire.extend_from_slice(body);
    let cut = rng.gen_range(0..=wire.len());
    let mut buf = BytesMut::from(&wire[..cut]);
    let mut frame = framing.decode(&mut buf);
    if matches!(frame, Ok(None)) {
        buf.extend_from_slice(&wire[cut..]);
        frame = framing.decode(&mut buf);
    }
    let capacity = buf.capacity();
    let Ok(Some(frame)) = frame else {
        return (false, capacity);
    };
    (decode_any(&frame), capacity)
}

fn fuzz_frames(n: usize, seed: u64) -> usize {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let seeds = seeds();
    let mut accepted = 0;
    for _ in 0..n {
        let body = mutate(&mut rng, &seeds);
        let (ok, capacity) = decode_one(&mut rng, &body);
        assert!(capacity <= 4 * (1 << 16) + body.len() + 64, "{capacity}");
        accepted += ok as usize;
    }
    accepted
}

fn fuzz_handshake(n: usize, seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let creds = Credentials {
        cluster: ares::protocol::secret::Secret::from_text("fuzz-secret"),
        client: None,
    };
    let keys = creds.keys();
    let serves = [Role::Worker, Role::Client];
    for i in 0..n {
        // A hello that is valid with probability 1/2, else random or mutated.
        let (connector, mut hello) = Connector::hello(Role::Client, false);
        if i % 2 == 1 {
            let k = rng.gen_range(0..HELLO_LEN);
            if rng.gen_bool(0.5) {
                rng.fill_bytes(&mut hello);
            } else {
                hello[k] = rng.gen();
            }
        }
        match Listener::answer(&keys, &serves, &hello, false) {
            Ok(Answer::Challenge(listener, challenge)) => {
                // A random proof never passes; the connector's real one does.
                let mut proof = [0u8; 32];
                rng.fill_bytes(&mut proof);
                assert!(listener.verify(&proof).1.is_err());
                if let Ok(p) = connector.prove(&creds.client_secret(), &challenge) {
                    assert!(listener.verify(&p).1.is_ok());
                }
            }
            Ok(Answer::Refuse(..)) | Err(_) => {}
        }
        // Random challenges never make a connector send a proof.
        let mut challenge = [0u8; CHALLENGE_LEN];
        rng.fill_bytes(&mut challenge);
        challenge[0] = 0;
        assert!(connector.prove(&creds.client_secret(), &challenge).is_err());
    }
}

#[test]
fn fuzz_frame_decoder_1e5() {
    let accepted = fuzz_frames(100_000, 1);
    // Mutations keep some frames valid: the round trip is exercised, not just refusals.
    assert!(accepted > 1000, "{accepted}");
}

#[test]
fn fuzz_handshake_1e5() {
    fuzz_handshake(100_000, 2);
}

#[test]
#[ignore = "10^6 inputs: cargo test --release --test fuzz -- --ignored"]
fn fuzz_frame_decoder_1e6() {
    fuzz_frames(1_000_000, 3);
}

#[test]
#[ignore = "10^6 handshakes: cargo test --release --test fuzz -- --ignored"]
fn fuzz_handshake_1e6() {
    fuzz_handshake(1_000_000, 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any bytes at all: refused or decoded, never a panic.
    #[test]
    fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_any(&bytes);
        let _ = codec::decode_chunks(&bytes);
        let _ = ares::protocol::data::decode_request(&bytes);
        let _ = ares::protocol::data::decode_answer(&bytes);
    }

    /// Any hello: an answer, a refusal or an error, never a panic.
    #[test]
    fn any_hello_is_answered_cleanly(bytes in proptest::array::uniform32(any::<u8>()), tail in proptest::array::uniform10(any::<u8>())) {
        let mut hello = [0u8; HELLO_LEN];
        hello[..32].copy_from_slice(&bytes);
        hello[32..].copy_from_slice(&tail); // HELLO_LEN = 32 + 10
        let _ = Listener::answer(&Credentials::default().keys(), &[Role::Peer], &hello, false);
    }
}

#[test]
fn every_seed_decodes_in_exactly_one_direction() {
    for seed in seeds() {
        assert!(decode_any(&seed));
    }
}
