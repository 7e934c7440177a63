//! The TaskManager actor: accepts tasks, starts one TaskProcessor per task, and routes
//! clients' questions to it. Bad graphs are refused here, before anything is scheduled.

use super::scheduler::Scheduler;
use super::task_processor::{Cancel, FetchResult, GetInfo, TaskProcessor, WaitDone};
use crate::config::Config;
use crate::ids::TaskId;
use crate::protocol::Message;
use actix::prelude::*;
use std::collections::HashMap;
use std::time::Duration;

pub struct TaskManager {
    config: Config,
    scheduler: Addr<Scheduler>,
    tasks: HashMap<TaskId, Addr<TaskProcessor>>,
    next: u32,
}

impl TaskManager {
    pub fn new(config: Config, scheduler: Addr<Scheduler>) -> Self {
        Self {
            config,
            scheduler,
            tasks: HashMap::new(),
            next: 1,
        }
    }
}

impl Actor for TaskManager {
    type Context = Context<Self>;
}

/// A client message; the answer is the reply message.
#[derive(Message)]
#[rtype(result = "Message")]
pub struct ClientRequest(pub Message);

fn info_reply(request: u64, info: Result<crate::protocol::TaskInfo, String>) -> Message {
    Message::Info { request, info }
}

impl Handler<ClientRequest> for TaskManager {
    type Result = ResponseFuture<Message>;

    fn handle(&mut self, ClientRequest(m): ClientRequest, _: &mut Context<Self>) -> Self::Result {
        let unknown = |task: TaskId| format!("unknown task {task}");
        match m {
            Message::Submit {
                request,
                graph,
                fuse_enabled,
            } => {
                let mut config = self.config.task.default_config.clone();
                if let Some(f) = fuse_enabled {
                    config.fuse_enabled = f;
                }
                let reply = match graph.validate().and_then(|_| config.validate()) {
                    Err(e) => Err(e.to_string()),
                    Ok(()) => {
                        let task = TaskId(self.next);
                        self.next += 1;
                        let processor = TaskProcessor::new(
                            task,
                            graph,
                            config,
                            self.config.scheduling.subtask_max_retries,
                            self.config.cluster.max_frame_bytes,
                            self.scheduler.clone(),
                        )
                        .start();
                        self.tasks.insert(task, processor);
                        tracing::info!(%task, "task submitted");
                        Ok(task)
                    }
                };
                Box::pin(async move {
                    Message::Submitted {
                        request,
                        task: reply,
                    }
                })
            }
            Message::GetInfo { request, task }
            | Message::Wait { request, task, .. }
            | Message::Cancel { request, task }
                if !self.tasks.contains_key(&task) =>
            {
                Box::pin(async move { info_reply(request, Err(unknown(task))) })
            }
            Message::GetInfo { request, task } => {
                let p = self.tasks[&task].clone();
                Box::pin(async move {
                    info_reply(request, p.send(GetInfo).await.map_err(|e| e.to_string()))
                })
            }
            Message::Wait {
                request,
                task,
                timeout_ms,
            } => {
                let p = self.tasks[&task].clone();
                let wait = Duration::from_millis(timeout_ms.min(3_600_000));
                Box::pin(async move {
                    info_reply(
                        request,
                        p.send(WaitDone(wait)).await.map_err(|e| e.to_string()),
                    )
                })
            }
            Message::Cancel { request, task } => {
                let p = self.tasks[&task].clone();
                Box::pin(async move {
                    info_reply(request, p.send(Cancel).await.map_err(|e| e.to_string()))
                })
            }
            Message::FetchResult { request, task } => {
                let p = self.tasks.get(&task).cloned();
                Box::pin(async move {
                    let data = match p {
                        None => Err(unknown(task)),
                        Some(p) => p
                            .send(FetchResult)
                            .await
                            .map_err(|e| e.to_string())
                            .and_then(|r| r),
                    };
                    Message::ResultData { request, data }
                })
            }
            other => Box::pin(async move {
                Message::Refused {
                    reason: format!("not a client request: {other:?}"),
                }
            }),
        }
    }
}
