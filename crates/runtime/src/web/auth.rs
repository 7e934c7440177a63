//! Who may use the web API: the bearer token, compared in constant time.
//!
//! API clients send `Authorization: Bearer <token>`. A browser opens the dashboard once with
//! `?token=`: the answer sets the cookie `ares_token` (`HttpOnly; SameSite=Strict`) and
//! redirects to the same page without the token, so it never stays in the address bar, the
//! history or a link; later requests carry the cookie. Every response says
//! `Referrer-Policy: no-referrer`. `/api/health` and `/api/openapi.json` are open.

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

pub async fn authorize(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let (token, https) = req
        .app_data::<web::Data<WebState>>()
        .map_or((None, false), |s| (s.token.clone(), s.https));
    let Some(token) = token else {
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
}
