//! Test clients: admin helpers and a raw worker that speaks the protocol message by message.

use std::time::Duration;

use ax_proto::v1::{
    self as pb, admin_service_client::AdminServiceClient, scheduler_message::Msg as In, worker_message::Msg as Out,
    worker_service_client::WorkerServiceClient,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming, transport::Channel};

use crate::eventually;

/// A task spec with a handler and a schedule; tweak the rest in place.
pub fn spec(name: &str, app: &str, handler: &str, schedule: pb::schedule::Kind) -> pb::TaskSpec {
    pb::TaskSpec {
        name: name.into(),
        app: app.into(),
        handler: handler.into(),
        schedule: Some(pb::Schedule { kind: Some(schedule) }),
        ..Default::default()
    }
}

/// A manual schedule.
pub fn manual() -> pb::schedule::Kind {
    pb::schedule::Kind::Manual(pb::ManualSchedule {})
}

/// A cron schedule in UTC.
pub fn cron(expr: &str) -> pb::schedule::Kind {
    pb::schedule::Kind::Cron(pb::CronSchedule { expression: expr.into(), ..Default::default() })
}

/// A one-time schedule due `after` from the task's creation.
pub fn once_after(after: Duration) -> pb::schedule::Kind {
    pb::schedule::Kind::OneTime(pb::OneTimeSchedule { when: Some(pb::one_time_schedule::When::After(dur(after))) })
}

/// A proto duration.
pub fn dur(d: Duration) -> prost_types::Duration {
    prost_types::Duration { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 }
}

/// Retries with a fixed list of delays.
pub fn retries(n: u32, delay: Duration) -> pb::RetryPolicy {
    pb::RetryPolicy {
        max_retries: n,
        backoff: Some(pb::Backoff {
            kind: Some(pb::backoff::Kind::List(pb::ListBackoff { delays: vec![dur(delay)] })),
        }),
    }
}

/// Creates a task.
pub async fn create(admin: &mut AdminServiceClient<Channel>, spec: pb::TaskSpec) -> pb::Task {
    admin
        .create_task(pb::CreateTaskRequest { task: Some(spec) })
        .await
        .expect("create task")
        .into_inner()
        .task
        .expect("task")
}

/// Triggers a task; returns the instance id.
pub async fn trigger(admin: &mut AdminServiceClient<Channel>, name: &str, key: &str) -> i64 {
    admin
        .trigger_task(pb::TriggerTaskRequest {
            name: name.into(),
            params: None,
            idempotency_key: key.into(),
            when: None,
            wait: None,
            tags: Default::default(),
        })
        .await
        .expect("trigger")
        .into_inner()
        .instance
        .expect("instance")
        .id
}

/// Triggers with params.
pub async fn trigger_with(admin: &mut AdminServiceClient<Channel>, name: &str, key: &str, params: &str) -> i64 {
    admin
        .trigger_task(pb::TriggerTaskRequest {
            name: name.into(),
            params: Some(params.into()),
            idempotency_key: key.into(),
            when: None,
            wait: None,
            tags: Default::default(),
        })
        .await
        .expect("trigger")
        .into_inner()
        .instance
        .expect("instance")
        .id
}

/// An instance with its trail.
pub async fn get(admin: &mut AdminServiceClient<Channel>, id: i64) -> (pb::Instance, Vec<pb::InstanceEvent>) {
    let r = admin.get_instance(pb::GetInstanceRequest { id }).await.expect("get instance").into_inner();
    (r.instance.expect("instance"), r.events)
}

/// Every instance of `task` (up to 1000), newest first.
pub async fn instances_of(admin: &AdminServiceClient<Channel>, task: &str) -> Vec<pb::Instance> {
    let r = pb::ListInstancesRequest { task_name: task.into(), page_size: 1000, ..Default::default() };
    admin.clone().list_instances(r).await.expect("list instances").into_inner().instances
}

/// The first instance of `task` listed, once there is one (within 20 s).
pub async fn instance_of(admin: &AdminServiceClient<Channel>, task: &str) -> pb::Instance {
    eventually(Duration::from_secs(20), &format!("an instance of {task}"), || {
        let mut admin = admin.clone();
        async move {
            let r = admin.list_instances(pb::ListInstancesRequest { task_name: task.into(), ..Default::default() });
            r.await.expect("list").into_inner().instances.into_iter().next()
        }
    })
    .await
}

/// Cancels an instance; returns it as the answer shows it.
pub async fn cancel(admin: &mut AdminServiceClient<Channel>, id: i64, reason: &str) -> pb::Instance {
    admin
        .cancel_instance(pb::CancelInstanceRequest { id, reason: reason.into() })
        .await
        .expect("cancel")
        .into_inner()
        .instance
        .expect("instance")
}

/// A proto timestamp as a chrono time.
pub fn utc(t: &prost_types::Timestamp) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).unwrap_or(0)).expect("valid time")
}

/// The time of the first event of a trail that moved to `to`.
pub fn event_time(events: &[pb::InstanceEvent], to: pb::InstanceStatus) -> chrono::DateTime<chrono::Utc> {
    let e = events.iter().find(|e| e.to_status == to as i32).unwrap_or_else(|| panic!("an event to {to:?}"));
    utc(e.time.as_ref().expect("event time"))
}

/// Waits until the instance is RUNNING and axd has renewed its lease twice since it was accepted:
/// the second renewal answers a heartbeat the worker sent after its Accepted, so the worker holds
/// a lease confirmed by a renewal, not only the ack deadline of its Assign (a worker cut off
/// before that stops its handler when the ack deadline comes near, as it must).
pub async fn wait_renewed(admin: &mut AdminServiceClient<Channel>, id: i64, deadline: Duration) {
    let ts = |t: &Option<prost_types::Timestamp>| t.as_ref().map_or((0, 0), |t| (t.seconds, t.nanos));
    let running = wait_status(admin, id, pb::InstanceStatus::Running, deadline).await;
    let mut last = ts(&running.lease_expire_time);
    for n in 1..=2 {
        last = eventually(deadline, &format!("lease renewal {n} of instance {id}"), || {
            let mut admin = admin.clone();
            async move {
                let (i, _) = get(&mut admin, id).await;
                let now = ts(&i.lease_expire_time);
                (i.status == pb::InstanceStatus::Running as i32 && now > last).then_some(now)
            }
        })
        .await;
    }
}

/// Waits until the instance is in `status`.
pub async fn wait_status(
    admin: &mut AdminServiceClient<Channel>,
    id: i64,
    status: pb::InstanceStatus,
    deadline: Duration,
) -> pb::Instance {
    let end = tokio::time::Instant::now() + deadline;
    loop {
        let (i, events) = get(admin, id).await;
        if i.status == status as i32 {
            return i;
        }
        if tokio::time::Instant::now() >= end {
            let trail: Vec<String> = events
                .iter()
                .map(|e| format!("{:?} -> {:?} (attempt {}): {}", e.from_status, e.to_status, e.attempt, e.reason))
                .collect();
            panic!(
                "timed out after {deadline:?} waiting for instance {id} to be {status:?}; it is {:?} on attempt {}, \
                 trail:\n  {}",
                pb::InstanceStatus::try_from(i.status),
                i.attempt,
                trail.join("\n  ")
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The (from, to, attempt) steps of a trail, by enum names without prefix.
pub fn steps(events: &[pb::InstanceEvent]) -> Vec<(String, String, u32)> {
    let name = |v: i32| {
        pb::InstanceStatus::try_from(v)
            .map(|s| s.as_str_name().trim_start_matches("INSTANCE_STATUS_").to_owned())
            .unwrap_or_default()
    };
    events.iter().map(|e| (name(e.from_status), name(e.to_status), e.attempt)).collect()
}

/// A worker that speaks the protocol message by message.
pub struct RawWorker {
    /// Outbound messages.
    pub tx: mpsc::Sender<pb::WorkerMessage>,
    /// Inbound messages.
    pub rx: Streaming<pb::SchedulerMessage>,
}

/// A Hello with one handler and the given capacity and credits.
pub fn hello(app: &str, worker_id: &str, handler: &str, capacity: u32, credits: u32) -> pb::Hello {
    pb::Hello {
        app: app.into(),
        worker_id: worker_id.into(),
        handlers: vec![handler.into()],
        capacity,
        initial_credits: credits,
        ..Default::default()
    }
}

impl RawWorker {
    /// Opens a stream and sends `first`; returns the worker and the Welcome, or the refusal.
    pub async fn connect_with(channel: Channel, first: pb::WorkerMessage) -> Result<(RawWorker, pb::Welcome), Status> {
        let (tx, rx) = mpsc::channel(64);
        tx.send(first).await.expect("send first");
        let mut client = WorkerServiceClient::new(channel);
        let mut inbound = client.connect(ReceiverStream::new(rx)).await?.into_inner();
        match inbound.message().await? {
            Some(pb::SchedulerMessage { msg: Some(In::Welcome(w)) }) => Ok((RawWorker { tx, rx: inbound }, w)),
            other => Err(Status::internal(format!("expected Welcome, got {other:?}"))),
        }
    }

    /// Connects with a Hello.
    pub async fn connect(channel: Channel, h: pb::Hello) -> Result<(RawWorker, pb::Welcome), Status> {
        Self::connect_with(channel, pb::WorkerMessage { msg: Some(Out::Hello(h)) }).await
    }

    /// Sends a message.
    pub async fn send(&self, m: Out) {
        self.tx.send(pb::WorkerMessage { msg: Some(m) }).await.expect("send");
    }

    /// The next message other than axd's heartbeats, within 10 s.
    pub async fn recv(&mut self) -> In {
        let end = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match tokio::time::timeout_at(end, self.rx.message()).await {
                Ok(Ok(Some(pb::SchedulerMessage { msg: Some(In::Heartbeat(_)) }))) => {}
                Ok(Ok(Some(pb::SchedulerMessage { msg: Some(m) }))) => return m,
                other => panic!("expected a message from axd, got {other:?}"),
            }
        }
    }

    /// Waits for the next message matching `pick`, answering nothing else; heartbeats are sent
    /// meanwhile so the session stays alive.
    pub async fn expect<T>(&mut self, what: &str, pick: impl FnMut(&In) -> Option<T>) -> T {
        self.expect_within(what, Duration::from_secs(15), pick).await
    }

    /// Like [`RawWorker::expect`], waiting at most `deadline`.
    pub async fn expect_within<T>(
        &mut self,
        what: &str,
        deadline: Duration,
        mut pick: impl FnMut(&In) -> Option<T>,
    ) -> T {
        let end = tokio::time::Instant::now() + deadline;
        loop {
            let tick = tokio::time::sleep(Duration::from_millis(100));
            tokio::select! {
                m = self.rx.message() => match m {
                    Ok(Some(pb::SchedulerMessage { msg: Some(m) })) => {
                        if let Some(v) = pick(&m) {
                            return v;
                        }
                    }
                    other => panic!("stream ended while waiting for {what}: {other:?}"),
                },
                () = tick => {
                    let hb = pb::Heartbeat { running: 0, seq: 0 };
                    let _ = self.tx.send(pb::WorkerMessage { msg: Some(Out::Heartbeat(hb)) }).await;
                }
            }
            assert!(tokio::time::Instant::now() < end, "timed out after {deadline:?} waiting for {what}");
        }
    }
}

/// A Result message.
pub fn result(instance_id: i64, attempt: u32, success: bool) -> Out {
    Out::Result(pb::Result {
        instance_id,
        attempt,
        outcome: if success { pb::Outcome::Success } else { pb::Outcome::Failed }.into(),
        message: String::new(),
        output: String::new(),
        retryable: true,
        finished_at: None,
    })
}
