//! Closing connections that never send a request.
//!
//! actix-web's `client_request_timeout` answers 408 to a request head that arrives too
//! slowly, but a connection that sends nothing at all is never woken to notice (actix-web
//! issue 928), and its deadline counts from a clock cached for up to 500 ms: measured here, one stayed open for as long as it was held, 1,100 of them took
//! every descriptor of the process. So each connection gets a watchdog: if no request head has
//! arrived on it within `web.request_timeout_ms`, the socket is shut down, which wakes actix
//! (the read ends) and frees its place under `web.max_connections`. The watchdog holds a
//! duplicate of the socket's descriptor, so it can never shut down a later connection that
//! reused the number. After the first request, actix's keep-alive timer bounds the idle
//! time between requests.

use actix_web::dev::Extensions;
use std::any::Any;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

type Tls = actix_tls::accept::rustls_0_23::TlsStream<actix_web::rt::net::TcpStream>;

/// Set once a request has begun on the connection (see [`mark_started`]).
#[derive(Clone, Default)]
pub struct Started(Arc<AtomicBool>);

fn raw_fd(io: &dyn Any) -> Option<RawFd> {
    if let Some(tcp) = io.downcast_ref::<actix_web::rt::net::TcpStream>() {
        return Some(tcp.as_raw_fd());
    }
    io.downcast_ref::<Tls>()
        .map(|tls| tls.get_ref().0.as_raw_fd())
}

/// `HttpServer::on_connect`: starts the connection's watchdog.
pub fn on_connect(io: &dyn Any, ext: &mut Extensions, timeout: Duration) {
    let started = Started::default();
    ext.insert(started.clone());
    let Some(fd) = raw_fd(io) else {
        return;
    };
    // SAFETY: `fd` is the live socket of `io`, borrowed only to duplicate it here.
    let dup = match unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned() {
        Ok(dup) => std::net::TcpStream::from(dup),
        Err(e) => {
            tracing::warn!("web: cannot watch a connection for idleness: {e}");
            return;
        }
    };
    actix_web::rt::spawn(async move {
        actix_web::rt::time::sleep(timeout).await;
        if !started.0.load(Ordering::Acquire) {
            let _ = dup.shutdown(std::net::Shutdown::Both);
        }
    });
}

/// Marks the request's connection as used (called for every request).
pub fn mark_started(req: &actix_web::dev::ServiceRequest) {
    if let Some(s) = req.conn_data::<Started>() {
        s.0.store(true, Ordering::Release);
    }
}
