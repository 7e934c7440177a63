//! The JSON routes. `ROUTES` lists them for the OpenAPI sync test.

use super::{mailbox, ApiError, WebState};
use crate::config::TaskConfig;
use crate::protocol::TaskInfo;
use crate::supervisor::explain::ExplainError;
use crate::supervisor::messages::TaskHandle;
use crate::supervisor::scheduler::GetClusterStatus;
use crate::supervisor::task_manager::{
    CreateSession, CreateSessionError, DeleteSession, ExplainGraph, FindTask, ListSessions, Names,
    Origin, ReleaseTask, SubmitError, SubmitTask,
};
use crate::supervisor::task_processor::{Cancel, GetFetchArgs, GetGraph, GetInfo, WaitDone};
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
    match state
        .manager
        .send(CreateSession(sid.clone()))
        .await
        .map_err(mailbox)?
    {
        Ok(()) => Ok(HttpResponse::Ok().json(json!({ "session": sid.into_inner() }))),
        Err(e @ CreateSessionError::Invalid(_)) => Err(ApiError::bad_request(e.to_string())),
        Err(e @ CreateSessionError::TooMany { .. }) => Err(ApiError::new(
            actix_web::http::StatusCode::TOO_MANY_REQUESTS,
            "too_many_sessions",
            e.to_string(),
        )),
    }
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
        Err(ApiError::not_found(format!("unknown session {sid:?}")))
    }
}

/// The session's named results that can be read (their tasks succeeded and are held), as
/// tensors an expression can use.
async fn session_bindings(
    state: &WebState,
    sid: &str,
) -> Result<Vec<(String, ares_core::tensor::Tensor)>, ApiError> {
    let mut out = Vec::new();
    for (name, _, p) in state
        .manager
        .send(Names(sid.to_string()))
        .await
        .map_err(mailbox)?
    {
        if let Some(args) = p.send(GetFetchArgs).await.map_err(mailbox)? {
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
    let m = ExplainGraph {
        session: sid.into_inner(),
        graph: body.graph,
        limit: body.limit.unwrap_or(50),
    };
    match state.manager.send(m).await.map_err(mailbox)? {
        Ok(text) => Ok(HttpResponse::Ok().json(json!({ "text": text }))),
        Err(e @ ExplainError::UnknownSession(_)) => Err(ApiError::not_found(e.to_string())),
        Err(e @ ExplainError::Refused(_)) => Err(ApiError::bad_request(e.to_string())),
        Err(e @ ExplainError::Unavailable(_)) => Err(ApiError::new(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            e.to_string(),
        )),
    }
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
            let t = ares_core::expr::evaluate_with(&expr, &bindings)
                .map_err(|e| ApiError::bad_request(format!("expr: {e}")))?;
            ares_core::tensor::Tensor::graph(&[&t])
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
    let submit = SubmitTask {
        session: sid.clone(),
        graph,
        config,
        fuse_enabled: body.fuse_enabled,
        name: body.name,
        origin: Origin::Client,
        spool: None,
    };
    match state.manager.send(submit).await.map_err(mailbox)? {
        Ok(task) => Ok(HttpResponse::Created().json(json!({ "task_id": task.0 }))),
        Err(e @ SubmitError::UnknownSession(_)) => Err(ApiError::not_found(e.to_string())),
        Err(e @ SubmitError::Refused(_)) => Err(ApiError::bad_request(e.to_string())),
    }
}

async fn list_tasks(
    state: web::Data<WebState>,
    sid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let sessions = state
        .manager
        .send(ListSessions(Some(sid.clone())))
        .await
        .map_err(mailbox)?;
    let Some((_, processors)) = sessions.into_iter().next() else {
        return Err(ApiError::not_found(format!("unknown session {sid:?}")));
    };
    Ok(HttpResponse::Ok().json(json!({ "tasks": task_infos(processors).await })))
}

pub async fn find(state: &WebState, sid: &str, tid: u32) -> Result<TaskHandle, ApiError> {
    state
        .manager
        .send(FindTask {
            session: sid.to_string(),
            task: TaskId(tid),
        })
        .await
        .map_err(mailbox)?
        .ok_or_else(|| ApiError::not_found(format!("no task {tid} in session {sid:?}")))
}

async fn get_task(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let p = find(&state, &path.0, path.1).await?;
    match q.get("action").map(String::as_str) {
        None => Ok(HttpResponse::Ok().json(p.send(GetInfo).await.map_err(mailbox)?)),
        Some("progress") => Ok(HttpResponse::Ok()
            .json(json!({"progress": p.send(GetInfo).await.map_err(mailbox)?.progress}))),
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
            Ok(HttpResponse::Ok().json(
                p.send(WaitDone(Duration::from_secs_f64(timeout)))
                    .await
                    .map_err(mailbox)?,
            ))
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
    let release = ReleaseTask {
        session: path.0.clone(),
        task: TaskId(path.1),
    };
    let p = state
        .manager
        .send(release)
        .await
        .map_err(mailbox)?
        .ok_or_else(|| {
            ApiError::not_found(format!("no task {} in session {:?}", path.1, path.0))
        })?;
    Ok(HttpResponse::Ok().json(p.send(Cancel).await.map_err(mailbox)?))
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
