//! [`TaskApi`] over the native protocol (blocking; one connection, request ids pair answers
//! with questions).

use super::{ApiError, ApiResult, TaskApi};
use crate::protocol::auth;
use crate::protocol::codec;
use crate::protocol::handshake::Role;
use crate::protocol::secret::{Credentials, Secret};
use crate::protocol::secure::BlockingConn;
use crate::protocol::{ClientReply, ClientRequest, TaskInfo, PROTOCOL_VERSION};
use ares_core::array::ArrayData;
use ares_core::graph::TileableGraph;
use ares_core::ids::TaskId;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub struct NativeClient {
    stream: BlockingConn,
    next_request: u64,
    max_frame: usize,
    /// Replies read while looking for another one (a frame may carry several, and an
    /// upload keeps several pieces in flight).
    backlog: std::collections::VecDeque<ClientReply>,
}

impl NativeClient {
    /// Connects with the client secret from the environment (`ARES_CLIENT_SECRET`, else
    /// `ARES_CLUSTER_SECRET`; none = the empty key of an unauthenticated cluster), retrying
    /// until `wait` has passed (a supervisor may still be starting).
    pub fn connect(addr: &str, wait: Duration) -> ApiResult<Self> {
        let creds =
            Credentials::load(&Default::default()).map_err(|e| ApiError::Refused(e.to_string()))?;
        Self::connect_with(addr, wait, &creds.client_secret())
    }

    /// Connects proving `secret` (see [`Credentials::client_secret`]).
    pub fn connect_with(addr: &str, wait: Duration, secret: &Secret) -> ApiResult<Self> {
        let deadline = Instant::now() + wait;
        let resolved: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|source| ApiError::Connect {
                addr: addr.into(),
                source,
            })?
            .collect();
        let stream = loop {
            match resolved
                .iter()
                .find_map(|a| TcpStream::connect_timeout(a, Duration::from_secs(2)).ok())
            {
                Some(s) => break s,
                None if Instant::now() >= deadline => {
                    return Err(ApiError::Connect {
                        addr: addr.into(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::ConnectionRefused,
                            "no answer",
                        ),
                    })
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        stream.set_nodelay(true).ok();
        // Encrypted when the supervisor is beyond loopback (or itself seals every link).
        let seal = !crate::protocol::secret::is_loopback(addr);
        let stream = auth::connect_blocking(stream, Role::Client, secret, seal, HANDSHAKE_TIMEOUT)
            .map_err(|e| ApiError::Refused(e.to_string()))?;
        let mut client = Self {
            stream,
            next_request: 1,
            max_frame: 1 << 31,
            backlog: Default::default(),
        };
        codec::write_frame(
            &mut client.stream,
            &codec::encode_frame(&[ClientRequest::Hello {
                version: PROTOCOL_VERSION,
            }])?,
        )?;
        match client.read_one()? {
            ClientReply::Welcome { .. } => Ok(client),
            ClientReply::Refused { reason } => Err(ApiError::Refused(reason)),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }

    fn read_one(&mut self) -> ApiResult<ClientReply> {
        let frame = codec::read_frame(&mut self.stream, self.max_frame)?;
        codec::decode_frame::<ClientReply>(&frame)?
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::Unexpected("empty frame".into()))
    }

    pub(super) fn call(
        &mut self,
        build: impl FnOnce(u64) -> ClientRequest,
    ) -> ApiResult<ClientReply> {
        let request = self.send(build)?;
        self.receive(request)
    }

    /// Sends a request without waiting for its answer; its id.
    pub(super) fn send(&mut self, build: impl FnOnce(u64) -> ClientRequest) -> ApiResult<u64> {
        let request = self.next_request;
        self.next_request += 1;
        codec::write_frame(&mut self.stream, &codec::encode_frame(&[build(request)])?)?;
        Ok(request)
    }

    /// The answer to `request`, keeping the other answers read on the way.
    pub(super) fn receive(&mut self, request: u64) -> ApiResult<ClientReply> {
        fn id(m: &ClientReply) -> Option<u64> {
            match m {
                ClientReply::Submitted { request, .. }
                | ClientReply::Info { request, .. }
                | ClientReply::ResultData { request, .. }
                | ClientReply::ResultPart { request, .. }
                | ClientReply::Upload { request, .. }
                | ClientReply::Explained { request, .. } => Some(*request),
                _ => None,
            }
        }
        if let Some(i) = self.backlog.iter().position(|m| id(m) == Some(request)) {
            return Ok(self.backlog.remove(i).expect("found above"));
        }
        loop {
            let frame = codec::read_frame(&mut self.stream, self.max_frame)?;
            let mut found = None;
            for m in codec::decode_frame::<ClientReply>(&frame)? {
                match (&m, id(&m)) {
                    (ClientReply::Refused { reason }, _) => {
                        return Err(ApiError::Refused(reason.clone()))
                    }
                    (_, Some(i)) if i == request && found.is_none() => found = Some(m),
                    (_, Some(_)) => self.backlog.push_back(m),
                    (_, None) => {}
                }
            }
            if let Some(m) = found {
                return Ok(m);
            }
        }
    }

    fn info(&mut self, build: impl FnOnce(u64) -> ClientRequest) -> ApiResult<TaskInfo> {
        match self.call(build)? {
            ClientReply::Info { info, .. } => info.map_err(ApiError::Task),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }
}

impl TaskApi for NativeClient {
    fn submit_with_config(
        &mut self,
        graph: &TileableGraph,
        fuse_enabled: Option<bool>,
        config: Option<crate::config::TaskConfig>,
    ) -> ApiResult<TaskId> {
        match self.call(|request| ClientRequest::Submit {
            request,
            graph: graph.clone(),
            fuse_enabled,
            config: config.clone(),
        })? {
            ClientReply::Submitted { task, .. } => task.map_err(ApiError::Task),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }

    fn wait_task(&mut self, task: TaskId, timeout: Duration) -> ApiResult<TaskInfo> {
        self.info(|request| ClientRequest::Wait {
            request,
            task,
            timeout_ms: timeout.as_millis() as u64,
        })
    }

    fn get_task_result(&mut self, task: TaskId) -> ApiResult<TaskInfo> {
        self.info(|request| ClientRequest::GetInfo { request, task })
    }

    fn cancel_task(&mut self, task: TaskId) -> ApiResult<TaskInfo> {
        self.info(|request| ClientRequest::Cancel { request, task })
    }

    /// Streamed part by part (see `api::stream`): no result size is capped by a frame.
    fn fetch(&mut self, task: TaskId) -> ApiResult<Vec<ArrayData>> {
        self.fetch_streamed(task)
    }

    fn explain(&mut self, graph: &TileableGraph, limit: usize) -> ApiResult<String> {
        match self.call(|request| ClientRequest::Explain {
            request,
            graph: graph.clone(),
            limit: limit as u64,
        })? {
            ClientReply::Explained { text, .. } => text.map_err(ApiError::Task),
            other => Err(ApiError::Unexpected(format!("{other:?}"))),
        }
    }
}
