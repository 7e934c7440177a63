//! The dashboard: server-rendered HTML, and on `/` plots drawn by a small script shipped in
//! the binary ([`SCRIPT`], `dashboard.js`: no JavaScript build, no npm, no CDN; the machine
//! serving it may have no internet, and neither may the browser).
//!
//! `/` plots the task stream (a row per worker slot, a bar per subtask coloured by op
//! family, failures red, aggregated per pixel column when a window holds more bars than
//! pixels), memory over time per worker with its limit and spill and pause thresholds, the
//! progress of each running task by depth and op, and the subtask graph of a small task, all
//! from the JSON routes (`web::activity`, the task routes), fetched incrementally with the
//! page's token cookie. Below them, the cluster (workers, slots in use, memory) and the
//! tasks of every session with progress, newest first, 50 a page (`?page=N`), rendered here
//! and refreshed by the script every 2 s. Without JavaScript the tables are still there.
//! `/dashboard/{sid}/{tid}` shows a task's subtask graph coloured by status: always
//! as one bar per depth level (usable on 10^5 subtasks), plus the first subtasks one by one.

use super::routes::{find, task_infos};
use super::{ApiError, WebState};
use crate::supervisor::scheduler::GetClusterStatus;
use crate::supervisor::task_manager::ListSessions;
use crate::supervisor::task_processor::GetGraph;
use actix_web::{web, HttpResponse};
use std::collections::HashMap;
use std::fmt::Write;

/// Tasks listed on one page of `/`.
const TASKS_PER_PAGE: usize = 50;

/// Subtasks drawn one by one on a task page.
const DRAWN_SUBTASKS: usize = 400;

/// The client script of `/`, compiled into the binary.
const SCRIPT: &str = include_str!("dashboard.js");

/// The plots' places on `/`, filled by [`SCRIPT`].
const PLOTS: &str = r#"<h2>Task stream</h2><p id="task-stream-windows" class="windows"></p><div id="task-stream" class="plot"></div><p id="task-stream-info" class="info"></p>
<h2>Memory</h2><div id="memory" class="plot"></div>
<h2>Progress</h2><div id="progress"></div>
<h2>Graph of a small task</h2><p id="graph-info" class="info"></p><div id="graph" class="plot"></div>
<p id="errors" class="failed"></p>"#;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(index))
        .route("/dashboard/{sid}/{tid}", web::get().to(task_page));
}

/// `512 B`, `3.1 KB`, `42.0 MB`, `1.2 GB`.
fn human_bytes(n: u64) -> String {
    match n {
        0..=1023 => format!("{n} B"),
        1024..=1_048_575 => format!("{:.1} KB", n as f64 / 1024.0),
        1_048_576..=1_073_741_823 => format!("{:.1} MB", n as f64 / 1_048_576.0),
        _ => format!("{:.1} GB", n as f64 / 1_073_741_824.0),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// How a page keeps itself current.
enum Refresh {
    /// Reloads every 2 s.
    Reload,
    /// Runs [`SCRIPT`], which updates the plots and tables in place.
    Script,
}

fn page(title: &str, body: &str, refresh: Refresh) -> HttpResponse {
    let (meta, script) = match refresh {
        Refresh::Reload => (r#"<meta http-equiv="refresh" content="2">"#, String::new()),
        Refresh::Script => ("", format!("<script>{SCRIPT}</script>")),
    };
    let html = format!(
        r#"<!doctype html><html><head><meta charset="utf-8">{meta}
<title>{title}</title><style>
body{{font-family:system-ui,sans-serif;margin:1.5em;color:#222}} table{{border-collapse:collapse;margin-bottom:1.5em}}
td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:right;white-space:nowrap}} th{{background:#f3f3f3}} td.l,th.l{{text-align:left}} td.err{{white-space:normal;max-width:36em}}
.bar{{display:inline-block;height:.9em;vertical-align:middle}} .waiting{{background:#bbb}} .submitted{{background:#f0a020}} .done{{background:#3a3}}
.sq{{display:inline-block;width:10px;height:10px;margin:1px}} .succeeded{{color:#3a3}} .failed{{color:#c22}} .running{{color:#f0a020}}
.plot svg{{border:1px solid #eee;margin:0 .5em .5em 0;user-select:none}} .info{{color:#666;font-size:.85em}} .windows button{{margin-right:.3em}}
.legend span{{margin-left:.8em;font-size:.85em}} .legend i{{display:inline-block;width:10px;height:10px;margin-right:3px}} .task-progress h3{{font-size:1em;margin:.4em 0}}
</style></head><body><h1>{title}</h1>{body}{script}</body></html>"#
    );
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(html)
}

async fn index(
    state: web::Data<WebState>,
    q: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, ApiError> {
    let nodes = state
        .scheduler
        .send(GetClusterStatus)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let sessions = state
        .manager
        .send(ListSessions(None))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mut body = format!("{PLOTS}<div id=\"tables\"><h2>Cluster</h2><table><tr><th class=l>worker</th><th>slots</th><th>running</th><th>queued</th><th>chunks held</th><th>memory</th><th>limit</th><th>peak</th><th>spilled</th><th>spills</th><th>pauses</th><th class=l>data address</th></tr>");
    for n in &nodes {
        let m = &n.memory;
        let limit = if m.limit == 0 {
            "none".into()
        } else {
            human_bytes(m.limit)
        };
        let _ = write!(
            body,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{limit}</td><td>{}</td><td>{} in {}</td><td>{}</td><td>{}</td><td class=l>{}</td></tr>",
            n.worker,
            n.slots,
            n.running.min(n.slots),
            n.queued + n.running.saturating_sub(n.slots),
            n.stored_chunks,
            human_bytes(n.stored_bytes),
            human_bytes(m.peak_bytes),
            human_bytes(m.spilled_bytes),
            m.spilled_chunks,
            m.spills,
            m.pauses,
            escape(&n.data_addr)
        );
    }
    let _ = write!(
        body,
        "</table><p>{} workers, {} slots</p><h2>Tasks</h2>",
        nodes.len(),
        nodes.iter().map(|n| n.slots).sum::<usize>()
    );
    body.push_str("<table><tr><th class=l>session</th><th class=l>task</th><th class=l>status</th><th class=l>progress</th><th>subtasks</th><th>retries</th><th>seconds</th><th class=l>error</th></tr>");
    // Newest first, TASKS_PER_PAGE a page: only the shown tasks are asked for their info.
    let all: Vec<(String, _)> = sessions
        .into_iter()
        .flat_map(|(sid, ps)| ps.into_iter().rev().map(move |p| (sid.clone(), p)))
        .collect();
    let total = all.len();
    let pages = total.div_ceil(TASKS_PER_PAGE).max(1);
    let page_no = q
        .get("page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(0)
        .min(pages - 1);
    let shown: Vec<_> = all
        .into_iter()
        .skip(page_no * TASKS_PER_PAGE)
        .take(TASKS_PER_PAGE)
        .collect();
    for (sid, p) in shown {
        for info in task_infos(vec![p]).await {
            let status = format!("{:?}", info.status).to_lowercase();
            let pct = (info.progress * 100.0).round();
            let _ = write!(
                body,
                "<tr><td class=l>{sid}</td><td class=l><a href=\"/dashboard/{sid}/{tid}\">{task}</a></td><td class=\"l {status}\">{status}</td>\
                 <td class=l><span class=\"bar done\" style=\"width:{pct}px\"></span><span class=\"bar waiting\" style=\"width:{rest}px\"></span> {pct}%</td>\
                 <td>{}</td><td>{}</td><td>{:.2}</td><td class=\"l err\">{}</td></tr>",
                info.subtasks,
                info.retries,
                info.elapsed,
                escape(info.error.as_deref().unwrap_or("")),
                sid = escape(&sid),
                tid = info.task.0,
                task = info.task,
                rest = 100.0 - pct,
            );
        }
    }
    body.push_str("</table>");
    let _ = write!(body, "<p>{total} tasks, page {} of {pages}", page_no + 1);
    if page_no > 0 {
        let _ = write!(body, " · <a href=\"/?page={}\">newer</a>", page_no - 1);
    }
    if page_no + 1 < pages {
        let _ = write!(body, " · <a href=\"/?page={}\">older</a>", page_no + 1);
    }
    body.push_str("</p></div>");
    Ok(page("ares", &body, Refresh::Script))
}

async fn task_page(
    state: web::Data<WebState>,
    path: web::Path<(String, u32)>,
) -> Result<HttpResponse, ApiError> {
    let p = find(&state, &path.0, path.1).await?;
    let view = p
        .send(GetGraph {
            limit: DRAWN_SUBTASKS,
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let info = &view.info;
    let mut body = format!(
        "<p><a href=\"/\">← cluster</a></p><p>status <b>{:?}</b>, progress {:.1}%, {} subtasks, {} retries, {:.2} s{}</p>",
        info.status,
        info.progress * 100.0,
        view.subtasks_total,
        info.retries,
        info.elapsed,
        info.error.as_deref().map_or(String::new(), |e| format!(", error: {}", escape(e)))
    );
    if let Some(t) = &view.tileable {
        body.push_str("<h2>Operations</h2><p>");
        let ops: Vec<String> = t
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| format!("t{i} {} {}", n.op, ares_core::array::fmt_shape(&n.shape)))
            .collect();
        body.push_str(&escape(&ops.join(" · ")));
        body.push_str("</p>");
    }
    body.push_str("<h2>Subtasks by depth</h2><p><span class=\"sq waiting\"></span> waiting <span class=\"sq submitted\"></span> submitted <span class=\"sq done\"></span> done</p><table><tr><th>depth</th><th>subtasks</th><th class=l>status</th></tr>");
    for [depth, waiting, submitted, done] in &view.by_depth {
        let total = (waiting + submitted + done).max(1);
        let w = |n: &usize| (n * 400 / total).max(usize::from(*n > 0));
        let _ = write!(
            body,
            "<tr><td>{depth}</td><td>{total}</td><td class=l><span class=\"bar done\" style=\"width:{}px\"></span><span class=\"bar submitted\" style=\"width:{}px\"></span><span class=\"bar waiting\" style=\"width:{}px\"></span> {done} done, {submitted} submitted, {waiting} waiting</td></tr>",
            w(done),
            w(submitted),
            w(waiting)
        );
    }
    let _ = write!(
        body,
        "</table><h2>First {} subtasks</h2><p>",
        view.subtasks.len()
    );
    for s in &view.subtasks {
        let _ = write!(
            body,
            "<span class=\"sq {}\" title=\"{} depth {} chunks {} {}\"></span>",
            s.state, s.id, s.depth, s.chunks, s.state
        );
    }
    body.push_str("</p>");
    Ok(page(&format!("task {}", info.task), &body, Refresh::Reload))
}
