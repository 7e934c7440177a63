//! `GET /metrics`: the supervisor's figures ([`crate::metrics`]) in the Prometheus text
//! format, behind the web token like every route.

use super::{ApiError, WebState};
use crate::metrics::render;
use actix_web::{web, HttpResponse};

async fn scrape(state: web::Data<WebState>) -> Result<HttpResponse, ApiError> {
    let sessions = state
        .manager
        .send(crate::supervisor::messages::ListSessions(None))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let handles = sessions.into_iter().flat_map(|(_, t)| t).collect();
    let infos = super::routes::task_infos(handles).await;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(render(infos.into_iter().map(|i| i.status))))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(scrape));
}
