//! The handshake as a pure exchange of byte arrays: agreement, wrong secrets, wrong roles,
//! and hostile bytes in every position.

use super::*;
use crate::protocol::secret::Credentials;

fn creds(cluster: &str, client: Option<&str>) -> Credentials {
    Credentials {
        cluster: Secret::from_text(cluster),
        client: client.and_then(Secret::from_text),
    }
}

/// Runs the whole exchange; the connector's and the listener's outcomes.
fn exchange(
    listener: &Credentials,
    serves: &[Role],
    role: Role,
    secret: &Secret,
) -> (Result<(), HandshakeError>, Result<Role, HandshakeError>) {
    let (c, hello) = Connector::hello(role, false);
    let (l, challenge) = match Listener::answer(&listener.keys(), serves, &hello, false).unwrap() {
        Answer::Challenge(l, ch) => (l, ch),
        Answer::Refuse(ch, e) => return (c.prove(secret, &ch).map(|_| ()), Err(e)),
    };
    let proof = match c.prove(secret, &challenge) {
        Ok(p) => p,
        Err(e) => return (Err(e), Err(HandshakeError::Timeout)),
    };
    let (status, role) = l.verify(&proof);
    (c.verdict(status), role)
}

#[test]
fn both_sides_agree_with_the_right_secret() {
    let node = creds("s3cret", None);
    let (c, l) = exchange(
        &node,
        &[Role::Worker, Role::Client],
        Role::Worker,
        &node.node_secret(),
    );
    assert!(c.is_ok());
    assert_eq!(l.unwrap(), Role::Worker);
}

#[test]
fn a_wrong_secret_fails_on_both_sides() {
    let node = creds("s3cret", None);
    let wrong = Secret::from_text("guess").unwrap();
    let (c, l) = exchange(&node, &[Role::Client], Role::Client, &wrong);
    // The connector sees first that the listener's proof does not match its secret.
    assert!(matches!(c, Err(HandshakeError::ListenerProof)), "{c:?}");
    assert!(l.is_err());
    // A connector that ignores the listener's proof still cannot pass.
    let (conn, hello) = Connector::hello(Role::Client, false);
    let Answer::Challenge(l, _) =
        Listener::answer(&node.keys(), &[Role::Client], &hello, false).unwrap()
    else {
        panic!("refused")
    };
    let _ = conn;
    let (status, role) = l.verify(&[0u8; PROOF_LEN]);
    assert_ne!(status, 0);
    assert!(matches!(role, Err(HandshakeError::BadProof(Role::Client))));
}

#[test]
fn a_client_credential_never_registers_a_worker() {
    let node = creds("node", Some("client"));
    let client = Secret::from_text("client").unwrap();
    let (c, l) = exchange(&node, &[Role::Worker, Role::Client], Role::Client, &client);
    assert!(c.is_ok() && l.unwrap() == Role::Client);
    let (c, l) = exchange(&node, &[Role::Worker, Role::Client], Role::Worker, &client);
    assert!(c.is_err() && l.is_err());
}

#[test]
fn roles_a_port_does_not_serve_and_other_versions_are_refused_with_a_reason() {
    let node = creds("x", None);
    let (c, l) = exchange(&node, &[Role::Peer], Role::Client, &node.node_secret());
    assert!(matches!(
        c,
        Err(HandshakeError::RoleNotServed(Role::Client))
    ));
    assert!(l.is_err());
    let (_, mut hello) = Connector::hello(Role::Peer, false);
    hello[4..8].copy_from_slice(&999u32.to_be_bytes());
    match Listener::answer(&node.keys(), &[Role::Peer], &hello, false).unwrap() {
        Answer::Refuse(ch, e) => {
            assert!(e.to_string().contains("999"), "{e}");
            let (c, _) = Connector::hello(Role::Peer, false);
            assert!(matches!(
                c.prove(&node.node_secret(), &ch),
                Err(HandshakeError::Version { .. })
            ));
        }
        Answer::Challenge(..) => panic!("version 999 accepted"),
    }
    let mut junk = [0u8; HELLO_LEN];
    junk[..4].copy_from_slice(b"GET ");
    assert!(Listener::answer(&node.keys(), &[Role::Peer], &junk, false).is_err());
}

/// Runs the exchange with seal bytes; whether each side ends with a link to seal, and the
/// connector's outcome.
fn sealed_exchange(asks: bool, listener_seals: bool) -> (Result<bool, HandshakeError>, bool) {
    let node = creds("s3cret", None);
    let secret = node.node_secret();
    let (c, hello) = Connector::hello(Role::Peer, asks);
    let Answer::Challenge(l, challenge) =
        Listener::answer(&node.keys(), &[Role::Peer], &hello, listener_seals).unwrap()
    else {
        panic!("refused")
    };
    let proof = match c.prove(&secret, &challenge) {
        Ok(p) => p,
        Err(e) => return (Err(e), false),
    };
    let (status, role) = l.verify(&proof);
    role.unwrap();
    c.verdict(status).unwrap();
    let connector = c.sealing(&secret, &challenge);
    let listener = l.sealing();
    assert_eq!(connector.is_some(), listener.is_some());
    if let (Some(a), Some(b)) = (connector, listener) {
        // Both derived the same pre-shared key and prologue: the Noise handshake completes.
        let (init, m1) = a.initiate().unwrap();
        let (_, m2) = b.respond(&m1).unwrap();
        init.finish(&m2).unwrap();
    }
    (Ok(listener_seals || asks), l.sealing().is_some())
}

#[test]
fn a_link_is_sealed_when_either_end_asks() {
    //   connector asks │ listener seals │ sealed
    //   ───────────────┼────────────────┼───────
    //        no        │       no       │  no
    //        yes       │       no       │  yes
    //        no        │       yes      │  yes
    //        yes       │       yes      │  yes
    for (asks, seals) in [(false, false), (true, false), (false, true), (true, true)] {
        let (c, sealed) = sealed_exchange(asks, seals);
        assert_eq!(c.unwrap(), asks || seals);
        assert_eq!(sealed, asks || seals, "asks {asks} seals {seals}");
    }
}

#[test]
fn a_man_in_the_middle_cannot_strip_the_seal() {
    let node = creds("s3cret", None);
    let secret = node.node_secret();
    // The connector asks; the man in the middle clears the byte on its way.
    let (c, mut hello) = Connector::hello(Role::Peer, true);
    hello[9] = 0;
    let Answer::Challenge(_, challenge) =
        Listener::answer(&node.keys(), &[Role::Peer], &hello, false).unwrap()
    else {
        panic!("refused")
    };
    assert_eq!(challenge[5], 0, "the listener saw no request to seal");
    assert!(matches!(
        c.prove(&secret, &challenge),
        Err(HandshakeError::ListenerProof)
    ));
    // The listener seals; the man in the middle clears its decision.
    let (c, hello) = Connector::hello(Role::Peer, false);
    let Answer::Challenge(_, mut challenge) =
        Listener::answer(&node.keys(), &[Role::Peer], &hello, true).unwrap()
    else {
        panic!("refused")
    };
    challenge[5] = 0;
    assert!(matches!(
        c.prove(&secret, &challenge),
        Err(HandshakeError::ListenerProof)
    ));
    // A seal byte other than 0 or 1 is refused before any MAC is computed.
    let (_, mut hello) = Connector::hello(Role::Peer, false);
    hello[9] = 7;
    assert!(matches!(
        Listener::answer(&node.keys(), &[Role::Peer], &hello, false),
        Err(HandshakeError::BadSealByte(7))
    ));
}
