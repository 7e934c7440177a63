//! The TaskManager's sessions: creating, listing and deleting them (a deleted session's tasks
//! are cancelled and forgotten), and finding, naming and releasing the tasks in one. A task
//! is only ever found through the session that submitted it.
//!
//! Sessions cost memory and hold their tasks' data, and a client can make any number of
//! them: at most `web.max_sessions` besides `default` exist at once (one more is refused
//! naming the key), and one that no request names for `web.session_idle_timeout_ms`, with
//! no task pending or running, is deleted as `DELETE` would (its tasks cancelled, their data
//! freed). `default`, the native protocol's, neither counts nor expires.

use super::{TaskManager, DEFAULT_SESSION};
use crate::guard::guard;
use crate::supervisor::messages::{
    Cancel, CreateSession, DeleteSession, FindTask, ListSessions, Names, ReleaseTask, TaskHandle,
};
use actix::prelude::*;
use ares_core::ids::TaskId;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub(super) struct Session {
    pub(super) tasks: Vec<TaskId>,
    /// Result names bound to tasks.
    pub(super) names: BTreeMap<String, TaskId>,
    /// The tasks that load uploads (they hold a spool file).
    pub(super) uploads: std::collections::BTreeSet<TaskId>,
    /// When a request last named the session (see [`TaskManager::touch`]).
    pub(super) last_used: Instant,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            tasks: Vec::new(),
            names: BTreeMap::new(),
            uploads: Default::default(),
            last_used: Instant::now(),
        }
    }
}

/// Why a session was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateSessionError {
    #[error("invalid session id {0:?}: use 1-64 characters of [A-Za-z0-9_.-]")]
    Invalid(String),
    #[error("{max} sessions exist already (web.max_sessions): delete one first (DELETE /api/session/{{sid}}), or let an idle one expire (web.session_idle_timeout_ms)")]
    TooMany { max: usize },
}

/// Result names are identifiers of the expression language.
pub fn valid_result_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// Session ids are 1-64 characters of `[A-Za-z0-9_.-]` starting with a letter, digit or
/// `_` (so never `.`, `..` or a hidden name).
pub fn valid_session_id(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

impl TaskManager {
    /// A request named `session`: it is in use.
    pub(super) fn touch(&mut self, session: &str) {
        if let Some(s) = self.sessions.get_mut(session) {
            s.last_used = Instant::now();
        }
    }

    /// Deletes a session: its tasks are forgotten and cancelled (their data freed).
    pub(super) fn delete_session(&mut self, id: &str) -> bool {
        let Some(session) = self.sessions.remove(id) else {
            return false;
        };
        for t in session.tasks {
            self.admission.forget(t);
            if let Some((_, p)) = self.tasks.remove(&t) {
                p.do_send(Cancel);
            }
        }
        if id == DEFAULT_SESSION {
            self.sessions.insert(id.to_string(), Session::default());
        }
        true
    }

    /// Deletes every session but `default` unused for `idle` with no task in flight.
    pub(super) fn expire_sessions(&mut self, idle: Duration) {
        let now = Instant::now();
        let expired: Vec<String> = self
            .sessions
            .iter()
            .filter(|(id, s)| {
                id.as_str() != DEFAULT_SESSION
                    && now.duration_since(s.last_used) >= idle
                    && !self.admission.session_busy(id)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.delete_session(&id);
            tracing::info!(session = %id, "idle session expired (web.session_idle_timeout_ms)");
        }
    }

    /// Frees an upload whose name a newer task of the same session took: nothing can name
    /// it any more, so it would hold its chunks and spool file until `task.keep_finished`
    /// evicted it (13 uploads to one name held all 13). It goes as a deleted session's
    /// tasks go: forgotten here, cancelled (its chunks and spool file freed).
    pub(super) fn free_superseded(&mut self, session: &str, old: TaskId) {
        let Some(s) = self.sessions.get_mut(session) else {
            return;
        };
        if !s.uploads.remove(&old) || s.names.values().any(|t| *t == old) {
            return;
        }
        s.tasks.retain(|t| *t != old);
        self.admission.forget(old);
        if let Some((_, p)) = self.tasks.remove(&old) {
            p.do_send(Cancel);
            tracing::info!(task = %old, session, "superseded upload freed");
        }
    }
}

impl Handler<Names> for TaskManager {
    type Result = MessageResult<Names>;
    fn handle(&mut self, Names(session): Names, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "Names", |act, _ctx| {
            act.touch(&session);
            let names = act.sessions.get(&session).map(|s| &s.names);
            let list = names
                .into_iter()
                .flatten()
                .filter_map(|(n, t)| act.tasks.get(t).map(|(_, p)| (n.clone(), *t, p.clone())))
                .collect();
            MessageResult(list)
        })
        .unwrap_or(MessageResult(Vec::new()))
    }
}

impl Handler<ReleaseTask> for TaskManager {
    type Result = Option<TaskHandle>;
    fn handle(&mut self, m: ReleaseTask, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "ReleaseTask", |act, _ctx| {
            act.touch(&m.session);
            let (session, p) = act.tasks.get(&m.task).filter(|(s, _)| *s == m.session)?;
            if let Some(s) = act.sessions.get_mut(session) {
                s.names.retain(|_, t| *t != m.task);
            }
            Some(p.clone())
        })
        .flatten()
    }
}

impl Handler<FindTask> for TaskManager {
    type Result = Option<TaskHandle>;
    fn handle(&mut self, m: FindTask, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "FindTask", |act, _ctx| {
            act.touch(&m.session);
            act.tasks
                .get(&m.task)
                .filter(|(s, _)| *s == m.session)
                .map(|(_, p)| p.clone())
        })
        .flatten()
    }
}

impl Handler<CreateSession> for TaskManager {
    type Result = Result<(), CreateSessionError>;
    fn handle(
        &mut self,
        CreateSession(id): CreateSession,
        ctx: &mut Context<Self>,
    ) -> Self::Result {
        guard(self, ctx, "CreateSession", |act, _ctx| {
            if !valid_session_id(&id) {
                return Err(CreateSessionError::Invalid(id));
            }
            if !act.sessions.contains_key(&id) {
                let max = act.config.web.max_sessions;
                let others =
                    act.sessions.len() - usize::from(act.sessions.contains_key(DEFAULT_SESSION));
                if id != DEFAULT_SESSION && others >= max {
                    return Err(CreateSessionError::TooMany { max });
                }
            }
            act.sessions.entry(id.clone()).or_default();
            act.touch(&id);
            Ok(())
        })
        .unwrap_or_else(|| Err(CreateSessionError::Invalid(String::new())))
    }
}

impl Handler<DeleteSession> for TaskManager {
    type Result = bool;
    fn handle(&mut self, DeleteSession(id): DeleteSession, ctx: &mut Context<Self>) -> bool {
        guard(self, ctx, "DeleteSession", |act, _ctx| {
            act.delete_session(&id)
        })
        .unwrap_or(false)
    }
}

impl Handler<ListSessions> for TaskManager {
    type Result = MessageResult<ListSessions>;
    fn handle(&mut self, m: ListSessions, ctx: &mut Context<Self>) -> Self::Result {
        guard(self, ctx, "ListSessions", |act, _ctx| {
            if let Some(id) = &m.0 {
                act.touch(id);
            }
            let list = act
                .sessions
                .iter()
                .filter(|(id, _)| m.0.as_ref().is_none_or(|want| want == *id))
                .map(|(id, s)| {
                    (
                        id.clone(),
                        s.tasks
                            .iter()
                            .filter_map(|t| act.tasks.get(t).map(|(_, p)| p.clone()))
                            .collect(),
                    )
                })
                .collect();
            MessageResult(list)
        })
        .unwrap_or(MessageResult(Vec::new()))
    }
}
