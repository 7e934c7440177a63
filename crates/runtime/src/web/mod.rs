//! The WebTaskAPI and dashboard: HTTP/JSON routes in Mars' shape, served by the supervisor
//! with actix-web.
//!
//! Handlers only translate between HTTP and the supervisor's front door
//! (`supervisor::service`, shared with the native protocol) or, for status pages, the
//! Scheduler's and TaskManager's messages. Errors are JSON `{error, detail}` with a fitting
//! status; a [`ServiceError`] gets its status in one place (`From<ServiceError> for ApiError`). A malformed graph, an unknown
//! session or task, or an oversized body is answered here and never reaches the scheduler.
//! With a token ([`auth`]), every route but `/api/health` and `/api/openapi.json` needs it;
//! a token is required when `web.listen` is not a loopback address. Malformed path or query
//! parameters get JSON errors too, and every answer carries `Referrer-Policy: no-referrer`.
//!
//! Without a token the API trusts whoever reaches the loopback port, so it must be sure the
//! request was meant for it: a web page on `attacker.example` whose name is re-pointed at
//! 127.0.0.1 (DNS rebinding) would otherwise drive the API from the victim's browser. Such
//! requests carry the attacker's name in `Host` (and `Origin`), so those must name a
//! loopback host or the configured listen host, with the bound port ([`auth::Hosts`]).
//!
//! Connections are bounded ([`WebConfig::max_connections`], one actix worker, so the cap is
//! the server's): idle connections, 1,100 of them, used to take every descriptor of the
//! process, and the RPC port then failed to accept (EMFILE). Over the cap, a connection
//! waits in the kernel's accept queue (it holds no descriptor of ours) until a place frees.
//! Places free quickly: a connection that does not deliver a request head within
//! `web.request_timeout_ms` of connecting ([`idle`]) or of its last answer (keep-alive) is
//! closed, and an upload
//! body that stalls for `web.idle_timeout_ms` fails (see `tensors::put_tensor`).
//!
//! Everything that can fail at startup (the token, the TLS files, the bind) happens in
//! [`prepare`], before the supervisor starts any actor: a failure is then a plain error, not
//! a teardown of half-started actors outside their runtime (which panicked).

mod activity;
pub mod auth;
mod dashboard;
mod idle;
mod json_stream;
pub mod metrics;
pub mod routes;
pub mod tensors;
mod tls;

use crate::config::WebConfig;
use crate::supervisor::admission::AdmissionError;
use crate::supervisor::scheduler::Scheduler;
use crate::supervisor::service::{Service, ServiceError};
use crate::supervisor::task_manager::{CreateSessionError, TaskManager};
use crate::supervisor::upload::UploadError;
use actix::Addr;
use actix_web::middleware::{from_fn, DefaultHeaders};
use actix_web::{http::StatusCode, web, App, HttpResponse, HttpServer, ResponseError};
use serde_json::json;
use std::net::SocketAddr;

/// What every handler can reach.
pub struct WebState {
    pub manager: Addr<TaskManager>,
    pub scheduler: Addr<Scheduler>,
    pub token: Option<String>,
    /// Served over HTTPS: the token cookie is `Secure`.
    pub https: bool,
    pub started: std::time::Instant,
    /// The supervisor's front door: every client request goes through it.
    pub service: Service,
    /// Without a token: the `Host` and `Origin` values accepted (DNS rebinding).
    pub hosts: Option<auth::Hosts>,
    /// `web.idle_timeout_ms`: the longest wait for the next piece of a request body.
    pub body_idle: std::time::Duration,
    /// The task stream and memory history ([`activity`]).
    pub history: crate::supervisor::history::ClusterHistory,
}

/// Why the web API cannot start: each a one-line message naming the key to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Token(String),
    #[error(
        "web.listen {0} is not a loopback address: set web.token, web.token_file or ARES_WEB_TOKEN"
    )]
    Exposed(String),
    #[error("{0}")]
    Tls(std::io::Error),
    #[error("web.listen {listen}: {source}")]
    Bind {
        listen: String,
        source: std::io::Error,
    },
}

impl From<StartError> for std::io::Error {
    fn from(e: StartError) -> Self {
        let kind = match &e {
            StartError::Exposed(_) => std::io::ErrorKind::PermissionDenied,
            StartError::Bind { source, .. } => source.kind(),
            _ => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, e.to_string())
    }
}

/// The web API checked and bound, not yet serving (see the module docs).
pub struct Prepared {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    tls: Option<rustls::ServerConfig>,
    token: Option<String>,
    listen: String,
}

/// Resolves the token, loads the TLS files and binds `listen`.
pub fn prepare(config: &WebConfig, listen: &str) -> Result<Prepared, StartError> {
    let token = config
        .resolved_token()
        .map_err(|e| StartError::Token(e.to_string()))?;
    if token.is_none() && !crate::protocol::secret::is_loopback(listen) {
        return Err(StartError::Exposed(listen.to_string()));
    }
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Some(tls::server_config(cert, key).map_err(StartError::Tls)?),
        _ => None,
    };
    let bind = |source| StartError::Bind {
        listen: listen.to_string(),
        source,
    };
    let listener = std::net::TcpListener::bind(listen).map_err(bind)?;
    let addr = listener.local_addr().map_err(bind)?;
    Ok(Prepared {
        listener,
        addr,
        tls,
        token,
        listen: listen.to_string(),
    })
}

/// An error answered as JSON `{error, detail}`.
#[derive(Debug, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct ApiError {
    pub status: StatusCode,
    pub kind: &'static str,
    pub detail: String,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            detail: detail.into(),
        }
    }
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", detail)
    }
}

/// A supervisor actor that did not answer (stopped, or its mailbox closed).
fn mailbox(e: actix::MailboxError) -> ApiError {
    ServiceError::from(e).into()
}

/// Each kind of failed request as its HTTP status, here and nowhere else.
impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let detail = e.to_string();
        let (status, kind) = match &e {
            ServiceError::UnknownSession(_)
            | ServiceError::UnknownTask { .. }
            | ServiceError::UnknownTensor { .. } => (StatusCode::NOT_FOUND, "not_found"),
            ServiceError::OverLimit(AdmissionError::CodeNotAllowed { .. }) => {
                (StatusCode::FORBIDDEN, "code_not_allowed")
            }
            ServiceError::OverLimit(_)
            | ServiceError::BadResultName(_)
            | ServiceError::BadTensorName(_)
            | ServiceError::BadGraph(_)
            | ServiceError::DoesNotFit(_)
            | ServiceError::NotExplained(_)
            | ServiceError::Session(CreateSessionError::Invalid(_)) => {
                (StatusCode::BAD_REQUEST, "bad_request")
            }
            ServiceError::Session(CreateSessionError::TooMany { .. }) => {
                (StatusCode::TOO_MANY_REQUESTS, "too_many_sessions")
            }
            ServiceError::NoResult(_) => (StatusCode::CONFLICT, "no_result"),
            ServiceError::Busy(_) | ServiceError::Restarting => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            ServiceError::ActorGone(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            ServiceError::Upload(u) => match u {
                UploadError::TooLarge { .. } => {
                    (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
                }
                UploadError::SpoolFull { .. } => (StatusCode::SERVICE_UNAVAILABLE, "spool_full"),
                UploadError::Spool(_) | UploadError::NoSpool(_) => {
                    (StatusCode::INTERNAL_SERVER_ERROR, "internal")
                }
                UploadError::BadNpy { .. } | UploadError::Load { .. } => {
                    (StatusCode::BAD_REQUEST, "bad_request")
                }
            },
        };
        ApiError::new(status, kind, detail)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }
    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status).json(json!({"error": self.kind, "detail": self.detail}))
    }
}

/// Starts serving a [`prepare`]d web API on the current actix system; returns the bound
/// address.
pub fn start(
    config: &WebConfig,
    prepared: Prepared,
    manager: Addr<TaskManager>,
    scheduler: Addr<Scheduler>,
    service: Service,
    history: crate::supervisor::history::ClusterHistory,
) -> std::io::Result<SocketAddr> {
    let Prepared {
        listener,
        addr,
        tls,
        token,
        listen,
    } = prepared;
    let https = tls.is_some();
    let hosts = token
        .is_none()
        .then(|| auth::Hosts::new(&listen, addr.port(), https));
    let state = web::Data::new(WebState {
        manager,
        scheduler,
        token,
        https,
        started: std::time::Instant::now(),
        service,
        hosts,
        body_idle: std::time::Duration::from_millis(config.idle_timeout_ms),
        history,
    });
    let request_timeout = std::time::Duration::from_millis(config.request_timeout_ms);
    let limit = config.max_body_bytes;
    let server = HttpServer::new(move || {
        let json = web::JsonConfig::default()
            .limit(limit)
            .error_handler(|e, _| {
                let err = match &e {
                    actix_web::error::JsonPayloadError::Overflow { .. }
                    | actix_web::error::JsonPayloadError::OverflowKnownLength { .. } => {
                        ApiError::new(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            "payload_too_large",
                            e.to_string(),
                        )
                    }
                    _ => ApiError::bad_request(format!("invalid JSON body: {e}")),
                };
                err.into()
            });
        let path = web::PathConfig::default().error_handler(|e, _| {
            ApiError::not_found(format!("invalid path parameter: {e}")).into()
        });
        let query = web::QueryConfig::default().error_handler(|e, _| {
            ApiError::bad_request(format!("invalid query parameter: {e}")).into()
        });
        App::new()
            .app_data(state.clone())
            .app_data(json)
            .app_data(path)
            .app_data(query)
            .wrap(from_fn(auth::authorize))
            .wrap(DefaultHeaders::new().add(("Referrer-Policy", "no-referrer")))
            .configure(metrics::configure)
            .configure(activity::configure)
            .configure(routes::configure)
            .configure(dashboard::configure)
    })
    .workers(1)
    .max_connections(config.max_connections)
    // TLS handshakes under way at once: each costs CPU, none may take more places than
    // there are.
    .max_connection_rate(config.max_connections)
    // The first request's head is bounded by the watchdog of [`idle`]: actix's own timer
    // starts from a clock cached for 500 ms (a short timeout expired before the first byte)
    // and is never woken on a silent connection.
    .client_request_timeout(std::time::Duration::ZERO)
    .keep_alive(request_timeout)
    .client_disconnect_timeout(std::time::Duration::from_secs(1))
    .on_connect(move |io, ext| idle::on_connect(io, ext, request_timeout))
    .disable_signals();
    let server = match tls {
        Some(tls) => server.listen_rustls_0_23(listener, tls)?,
        None => server.listen(listener)?,
    };
    actix_rt::spawn(server.run());
    tracing::info!(%addr, "web API listening");
    Ok(addr)
}
