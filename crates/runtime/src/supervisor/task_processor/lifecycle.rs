//! A task's lifecycle as one enum: which state it is in decides what it holds, so an ended
//! task cannot still be submitting subtasks and a released one holds no graph.
//!
//! ```text
//!                              a result chunk lost with its worker:
//!                              recomputed from lineage (reopen_for_lost_results)
//!                            ┌─────────────────────────────────────────────┐
//!              prepared      ▼                   every subtask done        │
//!  Preparing ───────────▶ Running(TaskState) ──────────────────────▶ Ended(Succeeded, state)
//!      │                     │                                            │
//!      │                     │ kernel error, retries exhausted,           │ Cancel (the client
//!      │                     │ no live workers, supervisor shutting       │ fetched it, the
//!      │                     │ down, processor restarted after a panic    │ session went, or
//!      │                     ├────────────────────▶ Ended(Failed, state)  │ it was evicted)
//!      │                     │ Cancel                                     ▼
//!      │                     └────────────────────▶ Ended(Cancelled) ──▶ Released(summary)
//!      │ preparation failed, FailTask, Cancel
//!      └──────────────────────────────────────────▶ Ended(.., no state)
//! ```
//!
//! `Ended` keeps the [`TaskState`] so results can be fetched and progress shown; `Released`
//! keeps only the figures status pages show. Every transition not drawn is ignored (a late
//! preparation result after a cancel is dropped; a second end is a no-op).

use super::state::{TaskEnd, TaskState};
use crate::protocol::TaskStatus;

pub enum Lifecycle {
    /// The graph is being prepared off the actor thread.
    Preparing,
    Running(TaskState),
    Ended {
        end: TaskEnd,
        state: Option<TaskState>,
    },
    /// Nothing more runs or is fetched: graphs and chunk locations are dropped.
    Released {
        end: TaskEnd,
        summary: Summary,
    },
}

/// What status pages show of a released task.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub subtasks: usize,
    pub progress: f64,
    pub retries: u32,
}

impl Summary {
    fn of(state: Option<&TaskState>) -> Self {
        state.map_or(Self::default(), |s| Summary {
            subtasks: s.graph.len(),
            progress: s.progress(),
            retries: s.retries(),
        })
    }
}

impl Lifecycle {
    pub fn status(&self) -> TaskStatus {
        match self {
            Lifecycle::Preparing => TaskStatus::Pending,
            Lifecycle::Running(_) => TaskStatus::Running,
            Lifecycle::Ended { end, .. } | Lifecycle::Released { end, .. } => match end {
                TaskEnd::Succeeded => TaskStatus::Succeeded,
                TaskEnd::Failed(_) => TaskStatus::Failed,
                TaskEnd::Cancelled => TaskStatus::Cancelled,
            },
        }
    }

    pub fn error(&self) -> Option<String> {
        match self {
            Lifecycle::Ended {
                end: TaskEnd::Failed(e),
                ..
            }
            | Lifecycle::Released {
                end: TaskEnd::Failed(e),
                ..
            } => Some(e.clone()),
            _ => None,
        }
    }

    pub fn is_ended(&self) -> bool {
        self.status().is_terminal()
    }

    pub fn state(&self) -> Option<&TaskState> {
        match self {
            Lifecycle::Running(s) => Some(s),
            Lifecycle::Ended { state, .. } => state.as_ref(),
            _ => None,
        }
    }

    pub fn state_mut(&mut self) -> Option<&mut TaskState> {
        match self {
            Lifecycle::Running(s) => Some(s),
            Lifecycle::Ended { state, .. } => state.as_mut(),
            _ => None,
        }
    }

    /// Preparing → Running; `false` (and the state dropped) in any other state.
    pub fn prepared(&mut self, state: TaskState) -> bool {
        if matches!(self, Lifecycle::Preparing) {
            *self = Lifecycle::Running(state);
            true
        } else {
            false
        }
    }

    /// Preparing or Running → Ended; `false` if it had already ended.
    pub fn end(&mut self, end: TaskEnd) -> bool {
        let state = match std::mem::replace(self, Lifecycle::Preparing) {
            Lifecycle::Preparing => None,
            Lifecycle::Running(s) => Some(s),
            ended => {
                *self = ended;
                return false;
            }
        };
        *self = Lifecycle::Ended { end, state };
        true
    }

    /// Ended(Succeeded) → Running when result chunks were lost with a worker: the state
    /// runs again what recomputes them ([`TaskState::reopen_for_lost_results`]). False, and
    /// nothing changes, in any other case.
    pub fn reopen_for_lost_results(&mut self) -> bool {
        match std::mem::replace(self, Lifecycle::Preparing) {
            Lifecycle::Ended {
                end: TaskEnd::Succeeded,
                state: Some(mut s),
            } => {
                let reopened = s.reopen_for_lost_results();
                *self = if reopened {
                    Lifecycle::Running(s)
                } else {
                    Lifecycle::Ended {
                        end: TaskEnd::Succeeded,
                        state: Some(s),
                    }
                };
                reopened
            }
            other => {
                *self = other;
                false
            }
        }
    }

    /// Ended → Released: the state is dropped, its figures kept.
    pub fn release(&mut self) {
        if let Lifecycle::Ended { end, state } = self {
            let summary = Summary::of(state.as_ref());
            *self = Lifecycle::Released {
                end: end.clone(),
                summary,
            };
        }
    }

    pub fn summary(&self) -> Summary {
        match self {
            Lifecycle::Released { summary, .. } => *summary,
            _ => Summary::of(self.state()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_task_stays_ended_and_releases_once() {
        let mut l = Lifecycle::Preparing;
        assert_eq!(l.status(), TaskStatus::Pending);
        assert!(l.end(TaskEnd::Failed("no live workers for 1 s".into())));
        assert!(!l.end(TaskEnd::Succeeded), "a second end is ignored");
        assert_eq!(l.error().as_deref(), Some("no live workers for 1 s"));
        l.release();
        assert_eq!(l.status(), TaskStatus::Failed);
        assert_eq!(l.summary(), Summary::default());
        assert!(l.state().is_none());
    }
}
