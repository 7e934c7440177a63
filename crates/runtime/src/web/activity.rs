//! The dashboard's data over time: `GET /api/cluster/task_stream?since=SECONDS&limit=N` (the
//! subtask runs that arrived after `since`, at most `limit`, the newest) and `GET
//! /api/cluster/memory_history` (per worker, the bytes at each heartbeat of the last
//! `web.history_seconds`, with the limit and the spill and pause thresholds). Both read
//! copies of [`crate::supervisor::history`]; the JSON of up to `web.task_stream_capacity`
//! entries is written on a blocking thread, not on the web's one worker.

use super::{ApiError, WebState};
use actix_web::{web, HttpResponse};
use std::collections::HashMap;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/cluster/task_stream", web::get().to(task_stream))
        .route("/api/cluster/memory_history", web::get().to(memory_history));
}

/// `since` and `limit` of a task-stream request, checked.
fn stream_query(q: &HashMap<String, String>) -> Result<(Option<f64>, usize), ApiError> {
    let since = match q.get("since") {
        None => None,
        Some(s) => match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Some(v),
            _ => return Err(ApiError::bad_request("since must be a number of seconds")),
        },
    };
    let limit = match q.get("limit") {
        None => usize::MAX,
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request("limit must be a non-negative integer"))?,
    };
    Ok((since, limit))
}

async fn task_stream(
    state: web::Data<WebState>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let (since, limit) = stream_query(&q)?;
    let history = state.history.clone();
    let body = web::block(move || serde_json::to_vec(&history.task_stream(since, limit)))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

async fn memory_history(state: web::Data<WebState>) -> HttpResponse {
    HttpResponse::Ok().json(state.history.memory_history())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn since_and_limit_are_checked() {
        assert_eq!(stream_query(&q(&[])).unwrap(), (None, usize::MAX));
        assert_eq!(
            stream_query(&q(&[("since", "1.5"), ("limit", "10")])).unwrap(),
            (Some(1.5), 10)
        );
        for bad in [("since", "NaN"), ("since", "x"), ("limit", "-1")] {
            assert_eq!(stream_query(&q(&[bad])).unwrap_err().kind, "bad_request");
        }
    }
}
