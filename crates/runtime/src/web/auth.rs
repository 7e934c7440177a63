//! Who may use the web API: the bearer token, compared in constant time.
//!
//! API clients send `Authorization: Bearer <token>`. A browser opens the dashboard once with
//! `?token=`: the answer sets the cookie `ares_token` (`HttpOnly; SameSite=Strict`) and
//! redirects to the same page without the token, so it never stays in the address bar, the
//! history or a link; later requests carry the cookie. Every response says
//! `Referrer-Policy: no-referrer`. `/api/health` and `/api/openapi.json` are open.
//!
//! Without a token, [`Hosts`] guards against DNS rebinding: a page of `attacker.example`,
//! its name re-pointed at 127.0.0.1, reaches the loopback port from the victim's browser,
//! but its requests say `Host: attacker.example:PORT` (and `Origin: http://attacker.example`
//! on cross-origin ones). Every request's `Host`, and its `Origin` when present, must name a
//! loopback host (`localhost`, `127.x.x.x`, `[::1]`) or the configured listen host, with the
//! bound port; others get 403 naming the fix (a token, which a rebound page cannot know).

use super::{ApiError, WebState};
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, HttpResponse, ResponseError};
use subtle::ConstantTimeEq;

/// Paths reachable without the token.
pub const OPEN_PATHS: [&str; 2] = ["/api/health", "/api/openapi.json"];

pub const COOKIE: &str = "ares_token";

/// Constant-time equality (the length may leak, the contents do not).
pub fn token_matches(given: &str, token: &str) -> bool {
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// The query string without `token=...`.
fn query_without_token(query: &str) -> String {
    query
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("token="))
        .collect::<Vec<_>>()
        .join("&")
}

/// The `Host` and `Origin` authorities accepted without a token.
#[derive(Clone, Debug)]
pub struct Hosts {
    /// The host of `web.listen`, lower case, without brackets.
    listen_host: String,
    port: u16,
    https: bool,
}

impl Hosts {
    pub fn new(listen: &str, port: u16, https: bool) -> Hosts {
        let host = listen.rsplit_once(':').map_or(listen, |(h, _)| h);
        Hosts {
            listen_host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port,
            https,
        }
    }

    /// Whether `authority` (`host[:port]`, IPv6 in brackets) names this server.
    pub fn allows(&self, authority: &str) -> bool {
        let authority = authority.trim();
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((h, rest)) => (h, rest),
                None => return false,
            },
            None => match authority.split_once(':') {
                Some((h, _)) => (h, &authority[h.len()..]),
                None => (authority, ""),
            },
        };
        let port = match port.strip_prefix(':') {
            Some(p) => p.parse::<u16>().ok(),
            None if port.is_empty() => Some(if self.https { 443 } else { 80 }),
            None => None,
        };
        if port != Some(self.port) {
            return false;
        }
        let host = host.to_ascii_lowercase();
        host == "localhost"
            || host == self.listen_host
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// Whether an `Origin` value names this server (`null` and other schemes do not).
    pub fn allows_origin(&self, origin: &str) -> bool {
        let scheme = if self.https { "https://" } else { "http://" };
        origin
            .strip_prefix(scheme)
            .is_some_and(|authority| !authority.contains('/') && self.allows(authority))
    }

    /// `None` when the request's `Host` and `Origin` name this server, else the refusal.
    fn refusal(&self, req: &ServiceRequest) -> Option<String> {
        let value = |name| {
            req.headers()
                .get(name)
                .map(|v| v.to_str().unwrap_or("(not text)"))
        };
        let host = value(header::HOST);
        if !host.is_some_and(|h| self.allows(h)) {
            return Some(format!("Host {:?}", host.unwrap_or("")));
        }
        match value(header::ORIGIN) {
            Some(origin) if !self.allows_origin(origin) => Some(format!("Origin {origin:?}")),
            _ => None,
        }
    }
}

pub async fn authorize(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    super::idle::mark_started(&req);
    let (token, https, hosts) = req
        .app_data::<web::Data<WebState>>()
        .map_or((None, false, None), |s| {
            (s.token.clone(), s.https, s.hosts.clone())
        });
    let Some(token) = token else {
        if let Some(what) = hosts.and_then(|h| h.refusal(&req)) {
            let refused = ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                format!(
                    "{what} does not name this server (a loopback host or web.listen, with its \
                     port): without a token only local requests are served (DNS rebinding); \
                     to use another name, set web.token"
                ),
            );
            return Ok(req
                .into_response(refused.error_response())
                .map_into_right_body());
        }
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let cookie = req
        .headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .any(|v| token_matches(v, &token));
    let by_header = cookie || bearer.is_some_and(|b| token_matches(b, &token));
    if by_header || OPEN_PATHS.contains(&req.path()) {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let query =
        web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
            .ok();
    let in_query = query.as_ref().and_then(|q| q.get("token"));
    if in_query.is_some_and(|t| token_matches(t, &token)) {
        // First visit from a link with the token: keep it in a cookie, drop it from the URL.
        let rest = query_without_token(req.query_string());
        let location = if rest.is_empty() {
            req.path().to_string()
        } else {
            format!("{}?{rest}", req.path())
        };
        let secure = if https { "; Secure" } else { "" };
        let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}");
        let resp = HttpResponse::SeeOther()
            .insert_header((header::LOCATION, location))
            .insert_header((header::SET_COOKIE, cookie))
            .finish();
        return Ok(req.into_response(resp).map_into_right_body());
    }
    // An answer, not an error: the outer middleware still adds its headers.
    let denied = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "missing or wrong bearer token",
    );
    Ok(req
        .into_response(denied.error_response())
        .map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_queries_lose_the_token() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abd", "abc"));
        assert!(!token_matches("ab", "abc"));
        assert!(!token_matches("", "abc"));
        assert_eq!(query_without_token("token=x&page=2"), "page=2");
        assert_eq!(query_without_token("token=x"), "");
    }

    #[test]
    fn only_local_hosts_and_origins_pass_without_a_token() {
        let h = Hosts::new("127.0.0.1:0", 8080, false);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "127.0.0.2:8080",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "attacker.example:8080",
            "attacker.example",
            "127.0.0.1:8081",
            "127.0.0.1",
            "127.0.0.1:x",
            "[::1",
            "localhost.attacker.example:8080",
            "",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
        assert!(h.allows_origin("http://localhost:8080"));
        assert!(!h.allows_origin("http://attacker.example:8080"));
        assert!(!h.allows_origin("https://localhost:8080"));
        assert!(!h.allows_origin("null"));
        assert!(!h.allows_origin("http://localhost:8080/x"));
        let named = Hosts::new("ares-box:80", 80, false);
        assert!(named.allows("ares-box") && named.allows("Ares-Box:80"));
        assert!(!named.allows("ares-box:81"));
        let v6 = Hosts::new("[::1]:0", 9000, true);
        assert!(v6.allows("[::1]:9000") && v6.allows_origin("https://[::1]:9000"));
    }
}
