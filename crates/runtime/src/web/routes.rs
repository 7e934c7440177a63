//! The JSON routes. `ROUTES` lists them for the OpenAPI sync test.

use super::{mailbox, ApiError, WebState};
use crate::config::TaskConfig;
use crate::protocol::TaskInfo;
use crate::supervisor::messages::TaskHandle;
use crate::supervisor::scheduler::GetClusterStatus;
use crate::supervisor::service::ServiceError;
use crate::supervisor::task_manager::{CreateSession, DeleteSession, ListSessions};
use crate::supervisor::task_processor::{GetFetchArgs, GetGraph, GetInfo};
use actix_web::{web, HttpResponse};
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

/// Every route (method, path) this server answers.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/api/health"),
    ("get", "/api/openapi.json"),
    ("get", "/api/cluster/nodes"),
    ("get", "/api/cluster/task_stream"),
    ("get", "/api/cluster/memory_history"),
    ("get", "/api/session"),
    ("put", "/api/session/{sid}"),
    ("delete", "/api/session/{sid}"),
    ("post", "/api/session/{sid}/task"),
    ("post", "/api/session/{sid}/explain"),
    ("get", "/api/session/{sid}/task"),
    ("get", "/api/session/{sid}/task/{tid}"),
    ("delete", "/api/session/{sid}/task/{tid}"),
    ("get", "/api/session/{sid}/task/{tid}/result"),
    ("get", "/api/session/{sid}/task/{tid}/graph"),
    ("get", "/api/session/{sid}/tensor"),
    ("put", "/api/session/{sid}/tensor/{name}"),
    ("get", "/api/session/{sid}/tensor/{name}"),
];

/// Largest array returned as JSON by default; bigger ones come as raw bytes.
pub const JSON_RESULT_LIMIT: usize = 100_000;

pub const OPENAPI: &str = include_str!("openapi.json");

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/health", web::get().to(health))
        .route(
            "/api/openapi.json",
            web::get().to(|| async {
                HttpResponse::Ok()
                    .content_type("application/json")
                    .body(OPENAPI)
            }),
        )
        .route("/api/cluster/nodes", web::get().to(nodes))
        .route("/api/session", web::get().to(list_sessions))
        .route("/api/session/{sid}", web::put().to(create_session))
        .route("/api/session/{sid}", web::delete().to(delete_session))
        .route("/api/session/{sid}/task", web::post().to(submit))
        .route("/api/session/{sid}/explain", web::post().to(explain))
        .route("/api/session/{sid}/task", web::get().to(list_tasks))
        .route("/api/session/{sid}/task/{tid}", web::get().to(get_task))
        .route(
            "/api/session/{sid}/task/{tid}",
            web::delete().to(cancel_task),
        )
        .route(
            "/api/session/{sid}/task/{tid}/result",
            web::get().to(super::tensors::task_result),
        )
        .route("/api/session/{sid}/task/{tid}/graph", web::get().to(graph))
        .route(
            "/api/session/{sid}/tensor",
            web::get().to(super::tensors::list_tensors),
        )
        .route(
            "/api/session/{sid}/tensor/{name}",
            web::put().to(super::tensors::put_tensor),
        )
        .route(
            "/api/session/{sid}/tensor/{name}",
            web::get().to(super::tensors::get_tensor),
        )
        .default_service(web::to(|| async {
            Err::<HttpResponse, _>(ApiError::not_found("no such route"))
        }));
}

async fn health(state: web::Data<WebState>) -> HttpResponse {
    HttpResponse::Ok()
        .json(json!({"status": "ok", "uptime_s": state.started.elapsed().as_secs_f64()}))
}

async fn nodes(state: web::Data<WebState>) -> Result<HttpResponse, ApiError> {
    let nodes = state
        .scheduler
        .send(GetClusterStatus)
        .await
        .map_err(mailbox)?;
    Ok(HttpResponse::Ok().json(json!({ "nodes": nodes })))
}

pub async fn task_infos(processors: Vec<TaskHandle>) -> Vec<TaskInfo> {
    let mut infos = Vec::with_capacity(processors.len());
    for p in processors {
        if let Ok(info) = p.send(GetInfo).await {
            infos.push(info);
        }
    }
    infos
}

async fn list_sessions(state: web::Data<WebState>) -> Result<HttpResponse, ApiError> {
    let sessions = state
        .manager
        .send(ListSessions(None))
        .await
        .map_err(mailbox)?;
    let list: Vec<_> = sessions
        .iter()
        .map(|(id, tasks)| json!({"session": id, "tasks": tasks.len()}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({ "sessions": list })))
}

async fn create_session(
    state: web::Data<WebState>,
    sid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let created = state.manager.send(CreateSession(sid.clone()));
    created
        .await
        .map_err(mailbox)?
        .map_err(ServiceError::from)?;
    Ok(HttpResponse::Ok().json(json!({ "session": sid.into_inner() })))
}

async fn delete_session(
    state: web::Data<WebState>,
    sid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if state
        .manager
        .send(DeleteSession(sid.clone()))
        .await
        .map_err(mailbox)?
    {
        Ok(HttpResponse::Ok().json(json!({ "deleted": sid.into_inner() })))
    } else {
        Err(ServiceError::UnknownSession(sid.into_inner()).into())
    }
}

/// The session's named results that can be read (their tasks succeeded and are held), as
/// tensors an expression can use.
async fn session_bindings(
    state: &WebState,
    sid: &str,
) -> Result<Vec<(String, ares_core::tensor::Tensor)>, ApiError> {
    let mut out = Vec::new();
    for (name, _, p) in state.service.names(sid).await? {
        if let Some(args) = p.send(GetFetchArgs::FIRST).await.map_err(mailbox)? {
            let t = ares_core::tensor::Tensor::new(ares_core::ops::Op::Fetch, args, vec![])
                .map_err(|e| ApiError::internal(e.to_string()))?;
            out.push((name, t));
        }
    }
    Ok(out)
}

/// `POST /api/session/{sid}/task`: exactly one of `graph` and `expr`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    pub graph: Option<TileableGraph>,
    pub expr: Option<String>,
    pub fuse_enabled: Option<bool>,
    /// Keys of `task.default_config` overriding the supervisor's for this task.
    pub extra_config: Option<serde_json::Map<String, serde_json::Value>>,
    /// Name the result: later `expr`s of the session can use it as a variable.
    pub name: Option<String>,
}

/// `POST /api/session/{sid}/explain`: what `ares explain` prints for `graph`, prepared by
/// the supervisor for its live workers and `task.default_config` (see
/// `supervisor::explain`); each listing capped at `limit` (default 50, 0 = all).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainBody {
    pub graph: TileableGraph,
    pub limit: Option<usize>,
}

async fn explain(
    state: web::Data<WebState>,
    sid: web::Path<String>,
    body: web::Json<ExplainBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let limit = body.limit.unwrap_or(50);
    let text = state.service.explain(&sid, body.graph, limit).await?;
    Ok(HttpResponse::Ok().json(json!({ "text": text })))
}

async fn submit(
    state: web::Data<WebState>,
    sid: web::Path<String>,
    body: web::Json<SubmitBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let graph = match (body.graph, body.expr) {
        (Some(g), None) => g,
        (None, Some(expr)) => {
            let bindings = session_bindings(&state, &sid).await?;
            graph_of_expr(expr, bindings).await?
        }
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of \"graph\" and \"expr\"",
            ))
        }
    };
    let config = match body.extra_config {
        None => None,
        Some(extra) => {
            let mut merged = serde_json::to_value(TaskConfig::default())
                .map_err(|e| ApiError::internal(e.to_string()))?;
            if let Some(obj) = merged.as_object_mut() {
                obj.extend(extra);
            }
            Some(
                serde_json::from_value::<TaskConfig>(merged)
                    .map_err(|e| ApiError::bad_request(format!("extra_config: {e}")))?,
            )
        }
    };
    let submitted = state
        .service
        .submit(&sid, graph, config, body.fuse_enabled, body.name);
    let task = submitted.await?;
    Ok(HttpResponse::Created().json(json!({ "task_id": task.0 })))
}

/// How long an `expr` may take to evaluate (it opens the files it names).
const EXPR_TIMEOUT: Duration = Duration::from_secs(30);

/// The graph of an expression. Evaluating it reads the `.npy` headers and Zarr metadata it
/// names (files in `data.roots`, as hostile as any peer): on a blocking thread under
/// [`EXPR_TIMEOUT`], never on this web worker, which keeps answering (`/api/health`) meanwhile.
async fn graph_of_expr(
    expr: String,
    bindings: Vec<(String, ares_core::tensor::Tensor)>,
) -> Result<TileableGraph, ApiError> {
    let evaluate = web::block(move || {
        ares_core::expr::evaluate_with(&expr, &bindings)
            .map(|t| ares_core::tensor::Tensor::graph(&[&t]))
    });
    match tokio::time::timeout(EXPR_TIMEOUT, evaluate).await {
        Ok(Ok(Ok(graph))) => Ok(graph),
        Ok(Ok(Err(e))) => Err(ApiError::bad_request(format!("expr: {e}"))),
        Ok(Err(e)) => Err(ApiError::internal(format!("expr: {e}"))),
        Err(_) => Err(ApiError::new(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!(
                "expr: not evaluated within {} s (a file it names may be stalled)",
                EXPR_TIMEOUT.as_secs()
            ),
        )),
    }
}

async fn list_tasks(
    state: web::Data<WebState>,
    sid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let processors = state.service.session_tasks(&sid).await?;
    Ok(HttpResponse::Ok().json(json!({ "tasks": task_infos(processors).await })))
}

pub async fn find(state: &WebState, sid: &str, tid: u32) -> Result<TaskHandle, ApiError> {
    Ok(state.service.find(Some(sid), TaskId(tid)).await?)
}

async fn get_task(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let (sid, task) = (Some(path.0.as_str()), TaskId(path.1));
    let service = &state.service;
    match q.get("action").map(String::as_str) {
        None => Ok(HttpResponse::Ok().json(service.info(sid, task).await?)),
        Some("progress") => {
            Ok(HttpResponse::Ok()
                .json(json!({"progress": service.info(sid, task).await?.progress})))
        }
        Some("wait") => {
            let timeout: f64 = q
                .get("timeout")
                .map_or(Ok(30.0), |t| t.parse())
                .map_err(|_| ApiError::bad_request("timeout must be a number of seconds"))?;
            if !(0.0..=3600.0).contains(&timeout) {
                return Err(ApiError::bad_request(
                    "timeout must be between 0 and 3600 seconds",
                ));
            }
            let wait = service.wait(sid, task, Duration::from_secs_f64(timeout));
            Ok(HttpResponse::Ok().json(wait.await?))
        }
        Some(other) => Err(ApiError::bad_request(format!(
            "unknown action {other:?} (progress, wait)"
        ))),
    }
}

async fn cancel_task(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
) -> Result<HttpResponse, ApiError> {
    let cancelled = state.service.cancel(Some(&path.0), TaskId(path.1));
    Ok(HttpResponse::Ok().json(cancelled.await?))
}

async fn graph(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let p = find(&state, &path.0, path.1).await?;
    let limit: usize = q
        .get("limit")
        .map_or(Ok(1000), |l| l.parse())
        .map_err(|_| ApiError::bad_request("limit must be an integer"))?;
    Ok(HttpResponse::Ok().json(p.send(GetGraph { limit }).await.map_err(mailbox)?))
}
