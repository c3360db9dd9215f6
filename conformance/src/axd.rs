//! The axd the kit talks to: its own, in this process on a fresh SQLite file with short timings, or
//! one given with `--endpoint`; and the AdminService calls the scenarios make.

use std::{net::SocketAddr, path::Path, time::Duration};

use anyhow::Context as _;
use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_scheduler::{
    config::{Config, HumanDuration, Options},
    server::{self, Running},
};
use tokio::time::Instant;
use tonic::transport::Channel;

/// The kit's own axd timings: short, so that the scenarios take about a minute, and in the
/// proportions axd recommends (grace = 5 heartbeat intervals, so a worker leaving a silent axd
/// reaches another before its leases run out).
pub const HEARTBEAT: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(5);
const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// Early assignments come this long before their time, so that a hold is long enough to measure.
const DISPATCH_AHEAD: Duration = Duration::from_secs(1);

/// An axd started by the kit.
pub struct OwnAxd {
    running: Running,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl OwnAxd {
    /// Starts axd on `dir/ax.db`.
    pub async fn start(dir: &Path) -> anyhow::Result<OwnAxd> {
        let ms = |d: Duration| Some(HumanDuration(d));
        let options = Options {
            database_url: Some(format!("sqlite://{}", dir.join("ax.db").display())),
            listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            heartbeat_interval: ms(HEARTBEAT),
            lost_worker_grace: ms(GRACE),
            ack_timeout: ms(ACK_TIMEOUT),
            dispatch_ahead: ms(DISPATCH_AHEAD),
            trigger_lookahead: ms(Duration::from_millis(1500)),
            poll_interval: ms(Duration::from_millis(100)),
            scheduler_heartbeat: ms(Duration::from_millis(500)),
            shutdown_timeout: ms(Duration::from_secs(3)),
            ..Options::default()
        };
        let config = Config::from_options(options).context("axd configuration")?;
        let running = server::start(&config, None).await.context("starting axd")?;
        let endpoint = format!("http://{}", running.addr);
        Ok(OwnAxd { running, endpoint })
    }

    /// Stops it (bounded).
    pub async fn stop(self) {
        self.running.shutdown(Duration::from_secs(3)).await;
    }
}

/// AdminService calls, each failing with what it was doing.
#[derive(Clone)]
pub struct Admin {
    client: AdminServiceClient<Channel>,
}

/// A status by name, for messages.
pub fn status_name(s: i32) -> String {
    pb::InstanceStatus::try_from(s)
        .map(|s| s.as_str_name().trim_start_matches("INSTANCE_STATUS_").to_owned())
        .unwrap_or_else(|_| format!("status {s}"))
}

/// Whether `s` is final.
pub fn is_final(s: i32) -> bool {
    use pb::InstanceStatus as S;
    match S::try_from(s) {
        Ok(S::Success | S::Failed | S::Timeout | S::Canceled | S::Skipped) => true,
        Ok(S::Unspecified | S::Pending | S::Dispatched | S::Running | S::Waiting) | Err(_) => false,
    }
}

fn dur(d: Duration) -> prost_types::Duration {
    prost_types::Duration { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 }
}

/// A task to create.
pub struct TaskDef<'a> {
    pub name: &'a str,
    pub app: &'a str,
    pub handler: &'a str,
    pub params: &'a str,
    /// Run timeout.
    pub timeout: Option<Duration>,
    /// Fires once, this long after creation; `None`: manual (triggered by the kit).
    pub once_after: Option<Duration>,
}

impl Admin {
    /// Connects to `endpoint`.
    pub async fn connect(endpoint: &str) -> anyhow::Result<Admin> {
        let channel = tonic::transport::Endpoint::from_shared(endpoint.to_owned())?
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .with_context(|| format!("connecting to axd at {endpoint}"))?;
        Ok(Admin { client: AdminServiceClient::new(channel) })
    }

    /// Creates a task.
    pub async fn create(&self, t: TaskDef<'_>) -> anyhow::Result<()> {
        let kind = match t.once_after {
            None => pb::schedule::Kind::Manual(pb::ManualSchedule {}),
            Some(after) => pb::schedule::Kind::OneTime(pb::OneTimeSchedule {
                when: Some(pb::one_time_schedule::When::After(dur(after))),
            }),
        };
        let spec = pb::TaskSpec {
            name: t.name.into(),
            app: t.app.into(),
            handler: t.handler.into(),
            params: t.params.into(),
            schedule: Some(pb::Schedule { kind: Some(kind) }),
            timeout: t.timeout.map(dur),
            description: "created by ax-conformance".into(),
            ..Default::default()
        };
        self.client
            .clone()
            .create_task(pb::CreateTaskRequest { task: Some(spec) })
            .await
            .with_context(|| format!("creating task {}", t.name))?;
        Ok(())
    }

    /// Creates a manual task and triggers it once with `params`; returns the instance id.
    pub async fn run(&self, name: &str, app: &str, handler: &str, params: &str) -> anyhow::Result<i64> {
        self.create(TaskDef { name, app, handler, params: "{}", timeout: None, once_after: None }).await?;
        self.trigger(name, params).await
    }

    /// Triggers a task with `params`; returns the instance id.
    pub async fn trigger(&self, name: &str, params: &str) -> anyhow::Result<i64> {
        let r = self
            .client
            .clone()
            .trigger_task(pb::TriggerTaskRequest {
                name: name.into(),
                params: Some(params.into()),
                idempotency_key: String::new(),
                when: None,
                wait: None,
                tags: Default::default(),
            })
            .await
            .with_context(|| format!("triggering task {name}"))?
            .into_inner();
        r.instance.map(|i| i.id).context("TriggerTask returned no instance")
    }

    /// The instance and its trail.
    pub async fn get(&self, id: i64) -> anyhow::Result<(pb::Instance, Vec<pb::InstanceEvent>)> {
        let r = self
            .client
            .clone()
            .get_instance(pb::GetInstanceRequest { id })
            .await
            .with_context(|| format!("reading instance {id}"))?
            .into_inner();
        Ok((r.instance.context("GetInstance returned no instance")?, r.events))
    }

    /// Cancels an instance.
    pub async fn cancel(&self, id: i64) -> anyhow::Result<()> {
        self.client
            .clone()
            .cancel_instance(pb::CancelInstanceRequest { id, reason: "ax-conformance".into() })
            .await
            .with_context(|| format!("canceling instance {id}"))?;
        Ok(())
    }

    /// Waits until instance `id` is final; fails naming where it stands after `within`.
    pub async fn wait_final(
        &self,
        id: i64,
        within: Duration,
    ) -> anyhow::Result<(pb::Instance, Vec<pb::InstanceEvent>)> {
        let deadline = Instant::now() + within;
        loop {
            let (i, events) = self.get(id).await?;
            if is_final(i.status) {
                return Ok((i, events));
            }
            if Instant::now() >= deadline {
                anyhow::bail!(
                    "instance {id} is still {} (attempt {}) after {within:?}; last message: {:?}",
                    status_name(i.status),
                    i.attempt,
                    i.message
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until instance `id` is final and in `want`.
    pub async fn expect_final(
        &self,
        id: i64,
        want: pb::InstanceStatus,
        within: Duration,
    ) -> anyhow::Result<(pb::Instance, Vec<pb::InstanceEvent>)> {
        let (i, events) = self.wait_final(id, within).await?;
        if i.status != want as i32 {
            anyhow::bail!(
                "instance {id} ended {} (attempt {}, message {:?}), expected {}",
                status_name(i.status),
                i.attempt,
                i.message,
                status_name(want as i32)
            );
        }
        Ok((i, events))
    }
}
