//! The web API's bounds (RELIABILITY.md, "Web API bounds"): DNS rebinding without a token,
//! idle connections, superseded uploads, sessions, large JSON results and TLS files. Each
//! test starts real processes on loopback and checks `/api/health` still answers.

use super::*;
use std::io::{Read, Write};

/// One raw HTTP/1.1 request with the given extra header lines; (status, whole answer).
pub fn raw_http(addr: &str, path: &str, headers: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n");
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// Row 12: without a token, a request naming another host (DNS rebinding) is refused with
/// 403 naming `web.token`, in `Host` or in `Origin`; loopback names with the port pass.
#[test]
fn without_a_token_only_local_host_names_are_served() {
    let cluster = Cluster::start_with(1, 1, "web:\n  listen: 127.0.0.1:0\n");
    let web = cluster.web.clone().unwrap();
    let port = web.rsplit_once(':').unwrap().1;
    for host in [
        "attacker.example".to_string(),
        format!("attacker.example:{port}"),
        "127.0.0.1:1".to_string(),
    ] {
        let (code, answer) = raw_http(&web, "/api/session", &format!("Host: {host}\r\n"));
        assert_eq!(code, 403, "{host}: {answer}");
        assert!(
            answer.contains("forbidden_host") && answer.contains("web.token"),
            "{answer}"
        );
    }
    let (code, answer) = raw_http(
        &web,
        "/api/session",
        &format!("Host: 127.0.0.1:{port}\r\nOrigin: http://attacker.example:{port}\r\n"),
    );
    assert_eq!(code, 403, "{answer}");
    for (host, origin) in [
        (format!("127.0.0.1:{port}"), None),
        (
            format!("localhost:{port}"),
            Some(format!("http://localhost:{port}")),
        ),
        (format!("[::1]:{port}"), None),
    ] {
        let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
        let (code, answer) = raw_http(&web, "/api/session", &format!("Host: {host}\r\n{origin}"));
        assert_eq!(code, 200, "{host}: {answer}");
    }
    // Clients that name the address they connect to (ureq here) are served.
    assert_eq!(Http::of(&cluster, None).get("/api/session").0, 200);
}
