//! The handles the supervisor's actors hold of each other: bundles of `Recipient<M>`, one
//! per message an actor takes, so no actor names another's type (the messages themselves are
//! in [`super::messages`]). [`TaskHandle`] also routes `send(M)` to the right recipient, so
//! it reads like an `Addr`.

use super::messages::*;
use actix::dev::RecipientRequest;
use actix::prelude::*;

/// What a link and a task processor may ask of the scheduler.
#[derive(Clone)]
pub struct SchedulerHandle {
    pub register: Recipient<RegisterWorker>,
    pub heartbeat: Recipient<Heartbeat>,
    pub finished: Recipient<Finished>,
    pub gone: Recipient<WorkerGone>,
    pub drain: Recipient<WorkerDrain>,
    pub peer_unreachable: Recipient<PeerUnreachable>,
    pub submit: Recipient<SubmitReady>,
    pub extend: Recipient<ExtendGraph>,
    pub release: Recipient<Release>,
    pub stop: Recipient<StopTask>,
    pub workers: Recipient<GetWorkers>,
    pub memory_limits: Recipient<MemoryLimits>,
}

/// What the scheduler may ask of a worker's link.
#[derive(Clone)]
pub struct LinkHandle {
    pub send: Recipient<Send>,
    pub expel: Recipient<Expel>,
}

/// One task's processor, as the scheduler, the task manager and the web API see it.
/// `handle.send(GetInfo)` works as on an `Addr` for every message a processor takes.
#[derive(Clone)]
pub struct TaskHandle {
    pub reports: Recipient<Reports>,
    pub lost: Recipient<WorkerLost>,
    pub redrive: Recipient<Redrive>,
    pub fail: Recipient<FailTask>,
    pub info: Recipient<GetInfo>,
    pub wait: Recipient<WaitDone>,
    pub cancel: Recipient<Cancel>,
    pub fetch: Recipient<FetchResult>,
    pub graph: Recipient<GetGraph>,
    pub fetch_args: Recipient<GetFetchArgs>,
    pub part: Recipient<FetchPart>,
    pub prepared: Recipient<AwaitPrepared>,
}

/// Which of a handle's recipients takes `M`.
pub trait Route<M>
where
    M: Message + std::marker::Send,
    M::Result: std::marker::Send,
{
    fn recipient(&self) -> &Recipient<M>;
}

impl TaskHandle {
    /// The handle of an actor that answers everything a task answers (a task processor,
    /// or a task run in stages).
    pub fn of<A>(a: Addr<A>) -> Self
    where
        A: Actor<Context = Context<A>>
            + Handler<Reports>
            + Handler<WorkerLost>
            + Handler<Redrive>
            + Handler<FailTask>
            + Handler<GetInfo>
            + Handler<WaitDone>
            + Handler<Cancel>
            + Handler<FetchResult>
            + Handler<GetGraph>
            + Handler<GetFetchArgs>
            + Handler<FetchPart>
            + Handler<AwaitPrepared>,
    {
        TaskHandle {
            reports: a.clone().recipient(),
            lost: a.clone().recipient(),
            redrive: a.clone().recipient(),
            fail: a.clone().recipient(),
            info: a.clone().recipient(),
            wait: a.clone().recipient(),
            cancel: a.clone().recipient(),
            fetch: a.clone().recipient(),
            graph: a.clone().recipient(),
            fetch_args: a.clone().recipient(),
            part: a.clone().recipient(),
            prepared: a.recipient(),
        }
    }

    pub fn send<M>(&self, m: M) -> RecipientRequest<M>
    where
        M: Message + std::marker::Send + 'static,
        M::Result: std::marker::Send,
        Self: Route<M>,
    {
        self.recipient().send(m)
    }

    pub fn do_send<M>(&self, m: M)
    where
        M: Message + std::marker::Send + 'static,
        M::Result: std::marker::Send,
        Self: Route<M>,
    {
        self.recipient().do_send(m)
    }
}

macro_rules! routes {
    ($($field:ident: $m:ty),* $(,)?) => {
        $(impl Route<$m> for TaskHandle {
            fn recipient(&self) -> &Recipient<$m> {
                &self.$field
            }
        })*
    };
}

routes!(
    reports: Reports,
    lost: WorkerLost,
    redrive: Redrive,
    fail: FailTask,
    info: GetInfo,
    wait: WaitDone,
    cancel: Cancel,
    fetch: FetchResult,
    graph: GetGraph,
    fetch_args: GetFetchArgs,
    part: FetchPart,
    prepared: AwaitPrepared,
);
