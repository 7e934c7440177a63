//! A native client's requests answered through the [`Service`]: each [`ClientRequest`] is one
//! service call, and its [`ServiceError`] travels as the protocol's error string (the wire
//! format is unchanged). Tasks submitted here belong to the session `default`; a task is
//! found in any session (the protocol has none).

use crate::protocol::{ClientReply, ClientRequest};
use crate::supervisor::messages::FetchPart;
use crate::supervisor::service::{Service, ServiceError};
use crate::supervisor::task_manager::DEFAULT_SESSION;
use std::time::Duration;

/// The protocol's error reply: the error's text.
fn wire<T>(answer: Result<T, ServiceError>) -> Result<T, String> {
    answer.map_err(|e| e.to_string())
}

/// The reply to `request` (not a hello, not an upload: the link handles those itself).
pub(super) async fn answer(service: Service, request: ClientRequest) -> ClientReply {
    match request {
        ClientRequest::Submit {
            request,
            graph,
            fuse_enabled,
            config,
        } => {
            let task = service
                .submit(DEFAULT_SESSION, graph, config, fuse_enabled, None)
                .await;
            ClientReply::Submitted {
                request,
                task: wire(task),
            }
        }
        ClientRequest::GetInfo { request, task } => ClientReply::Info {
            request,
            info: wire(service.info(None, task).await),
        },
        ClientRequest::Wait {
            request,
            task,
            timeout_ms,
        } => {
            let info = service.wait(None, task, Duration::from_millis(timeout_ms));
            ClientReply::Info {
                request,
                info: wire(info.await),
            }
        }
        ClientRequest::Cancel { request, task } => ClientReply::Info {
            request,
            info: wire(service.cancel(None, task).await),
        },
        ClientRequest::FetchResult { request, task } => ClientReply::ResultData {
            request,
            data: wire(service.fetch(None, task).await),
        },
        ClientRequest::FetchPart {
            request,
            task,
            output,
            positions,
            rows,
        } => {
            let part = FetchPart {
                output,
                positions,
                rows,
            };
            ClientReply::ResultPart {
                request,
                part: wire(service.fetch_part(None, task, part).await),
            }
        }
        ClientRequest::Explain {
            request,
            graph,
            limit,
        } => {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            ClientReply::Explained {
                request,
                text: wire(service.explain(DEFAULT_SESSION, graph, limit).await),
            }
        }
        ClientRequest::Hello { .. } => ClientReply::Refused {
            reason: "a second hello".into(),
        },
        ClientRequest::UploadBegin { request, .. }
        | ClientRequest::UploadPiece { request, .. }
        | ClientRequest::UploadEnd { request } => ClientReply::Upload {
            request,
            answer: Err("uploads go through a client connection".into()),
        },
    }
}
