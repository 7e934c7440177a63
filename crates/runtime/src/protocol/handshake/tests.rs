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
    let (c, hello) = Connector::hello(role);
    let (l, challenge) = match Listener::answer(&listener.keys(), serves, &hello).unwrap() {
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
    let (conn, hello) = Connector::hello(Role::Client);
    let Answer::Challenge(l, _) = Listener::answer(&node.keys(), &[Role::Client], &hello).unwrap()
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
    let (_, mut hello) = Connector::hello(Role::Peer);
    hello[4..8].copy_from_slice(&999u32.to_be_bytes());
    match Listener::answer(&node.keys(), &[Role::Peer], &hello).unwrap() {
        Answer::Refuse(ch, e) => {
            assert!(e.to_string().contains("999"), "{e}");
            let (c, _) = Connector::hello(Role::Peer);
            assert!(matches!(
                c.prove(&node.node_secret(), &ch),
                Err(HandshakeError::Version { .. })
            ));
        }
        Answer::Challenge(..) => panic!("version 999 accepted"),
    }
    let mut junk = [0u8; HELLO_LEN];
    junk[..4].copy_from_slice(b"GET ");
    assert!(Listener::answer(&node.keys(), &[Role::Peer], &junk).is_err());
}
