//! Raw HTTP over a TCP socket, for requests `ureq` will not send (a forged `Host`, a request
//! line of any shape): the status code and the whole answer.

use std::io::{Read, Write};
use std::time::Duration;

/// Sends `request` (a whole HTTP/1.1 request, ending `\r\n\r\n`) to `addr` and reads the answer
/// until the server closes; a silent server fails the read after 10 s.
pub fn raw_http(addr: &str, request: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
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

/// `GET path` with extra `headers` (each ending `\r\n`) and `Connection: close`.
pub fn raw_get(addr: &str, path: &str, headers: &str) -> (u16, String) {
    raw_http(
        addr,
        &format!("GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n"),
    )
}
