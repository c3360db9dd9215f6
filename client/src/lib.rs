//! ax-client: create, update and trigger ax tasks from Rust code.
//!
//! A thin, typed layer over the generated `AdminService` client (`ax-proto`): the same calls axctl
//! makes, with the errors of the wire kept as `tonic::Status` (the status code says what went
//! wrong, the message names the field). Triggers take an idempotency key, so a retried request
//! never creates a second instance, and can run later (`at` an instant or `after` a delay).
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use ax_client::{Client, TaskSpec, Trigger};
//!
//! # async fn demo() -> Result<(), ax_client::Error> {
//! let mut ax = Client::connect("http://127.0.0.1:7070").await?;
//! // Declare the task from code: created the first time, brought up to date afterwards.
//! let spec = TaskSpec {
//!     app: "billing".into(),
//!     handler: "send-invoice".into(),
//!     ..ax_client::manual("send-invoice")
//! };
//! ax.upsert_task(spec).await?;
//! // One instance per order, however often this runs: the key makes the trigger idempotent. It
//! // runs in ten minutes.
//! let order = serde_json::json!({"order": 42});
//! let trigger = Trigger::new("send-invoice").params(&order)?.key("order-42").after(Duration::from_secs(600));
//! let t = ax.trigger(trigger).await?;
//! println!("instance {} ({})", t.instance.id, if t.created { "new" } else { "existing" });
//! # Ok(())
//! # }
//! ```
//!
//! To create an instance atomically with your own writes — committed together, or not at all —
//! insert a row into `ax_intake` in your transaction on the database axd uses: see [`intake`].

use std::time::{Duration, SystemTime};

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient, trigger_task_request::When as WireWhen};
pub use ax_proto::v1::{Instance, Task, TaskSpec};
use tonic::{
    Code,
    transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity},
};

pub mod intake;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The endpoint is not a valid URI, or axd could not be reached.
    #[error("cannot connect to axd: {0}")]
    Connect(#[from] tonic::transport::Error),
    /// axd answered with an error; its code and message (which names the field at fault).
    #[error("{}: {}", .0.code(), .0.message())]
    Rpc(#[from] tonic::Status),
    /// Params that cannot be written as JSON.
    #[error("params: {0}")]
    Params(#[from] serde_json::Error),
    /// axd answered without a field it always sets (another version, or a broken server).
    #[error("axd sent a response without {0}")]
    Incomplete(&'static str),
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A spec of a task that runs only when triggered: set `app` and `handler`, and whatever else.
pub fn manual(name: &str) -> TaskSpec {
    TaskSpec {
        name: name.to_owned(),
        schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
        ..TaskSpec::default()
    }
}

/// A trigger of a task: params, idempotency key and when it runs.
#[derive(Debug, Clone)]
pub struct Trigger {
    request: pb::TriggerTaskRequest,
}

impl Trigger {
    /// A trigger of task `name` with the task's params, a unique key, to run now.
    pub fn new(name: impl Into<String>) -> Trigger {
        Trigger { request: pb::TriggerTaskRequest { name: name.into(), ..Default::default() } }
    }

    /// Params for this instance instead of the task's, as JSON.
    pub fn params(mut self, params: &impl serde::Serialize) -> Result<Trigger> {
        self.request.params = Some(serde_json::to_string(params)?);
        Ok(self)
    }

    /// Params for this instance as a JSON text (checked by axd).
    pub fn params_json(mut self, json: impl Into<String>) -> Trigger {
        self.request.params = Some(json.into());
        self
    }

    /// The idempotency key: the same task and key again returns the first instance (`created`
    /// false) instead of creating another. 1-200 characters of `[A-Za-z0-9._:@/+=-]`.
    pub fn key(mut self, key: impl Into<String>) -> Trigger {
        self.request.idempotency_key = key.into();
        self
    }

    /// Run at this instant (at most 366 days ahead; in the past beyond the task's misfire
    /// threshold is refused).
    pub fn at(mut self, at: SystemTime) -> Trigger {
        self.request.when = Some(WireWhen::RunAt(at.into()));
        self
    }

    /// Run this long from now.
    pub fn after(mut self, delay: Duration) -> Trigger {
        self.request.when = Some(WireWhen::Delay(prost_types::Duration {
            seconds: i64::try_from(delay.as_secs()).unwrap_or(i64::MAX),
            nanos: i32::try_from(delay.subsec_nanos()).unwrap_or(0),
        }));
        self
    }
}

/// What a trigger did.
#[derive(Debug, Clone)]
pub struct Triggered {
    /// The instance: new, or the one the key had.
    pub instance: Instance,
    /// False when the idempotency key had an instance already.
    pub created: bool,
    /// [`Client::trigger_and_wait`]: the instance is final (its output and message are in
    /// `instance`); false when the wait ran out first, and always after [`Client::trigger`].
    pub done: bool,
}

/// A connection to axd's AdminService.
#[derive(Debug, Clone)]
pub struct Client {
    admin: AdminServiceClient<Channel>,
}

impl Client {
    /// Connects to `endpoint` (`http://host:port`; plaintext is accepted by axd on loopback only).
    pub async fn connect(endpoint: &str) -> Result<Client> {
        let channel = Endpoint::from_shared(endpoint.to_owned())?.connect().await?;
        Ok(Client::from_channel(channel))
    }

    /// Connects to `endpoint` (`https://host:port`) with mTLS: the CA that signed axd's certificate,
    /// and this client's certificate and key (PEM). Its identity decides what it may do.
    pub async fn connect_mtls(endpoint: &str, ca: &[u8], cert: &[u8], key: &[u8]) -> Result<Client> {
        let tls =
            ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)).identity(Identity::from_pem(cert, key));
        let channel = Endpoint::from_shared(endpoint.to_owned())?.tls_config(tls)?.connect().await?;
        Ok(Client::from_channel(channel))
    }

    /// A client over a channel you made.
    pub fn from_channel(channel: Channel) -> Client {
        Client { admin: AdminServiceClient::new(channel) }
    }

    /// The generated client, for the calls this crate does not wrap.
    pub fn admin(&mut self) -> &mut AdminServiceClient<Channel> {
        &mut self.admin
    }

    /// Creates a task; ALREADY_EXISTS if its name is taken.
    pub async fn create_task(&mut self, spec: TaskSpec) -> Result<Task> {
        let r = self.admin.create_task(pb::CreateTaskRequest { task: Some(spec) }).await?.into_inner();
        r.task.ok_or(Error::Incomplete("the task"))
    }

    /// Changes the `fields` (TaskSpec field names, e.g. `["params", "schedule"]`) of task `name` to
    /// their values in `spec`.
    pub async fn update_task(&mut self, name: &str, spec: TaskSpec, fields: &[&str]) -> Result<Task> {
        let mask = prost_types::FieldMask { paths: fields.iter().map(|f| (*f).to_owned()).collect() };
        let r = pb::UpdateTaskRequest { name: name.to_owned(), task: Some(spec), update_mask: Some(mask) };
        self.admin.update_task(r).await?.into_inner().task.ok_or(Error::Incomplete("the task"))
    }

    /// Creates the task, or when one with its name exists, sets every field of the spec on it: the
    /// way to declare tasks from code, safe to run at every start.
    pub async fn upsert_task(&mut self, spec: TaskSpec) -> Result<Task> {
        let name = spec.name.clone();
        match self.create_task(spec.clone()).await {
            Err(Error::Rpc(s)) if s.code() == Code::AlreadyExists => {
                self.update_task(&name, TaskSpec { name: String::new(), ..spec }, SPEC_FIELDS).await
            }
            other => other,
        }
    }

    /// Triggers a task (see [`Trigger`]).
    pub async fn trigger(&mut self, trigger: Trigger) -> Result<Triggered> {
        let r = self.admin.trigger_task(trigger.request).await?.into_inner();
        Ok(Triggered {
            instance: r.instance.ok_or(Error::Incomplete("the instance"))?,
            created: r.created,
            done: r.done,
        })
    }

    /// Triggers a task and waits, up to `wait` (at most 10 minutes), for its instance to be final
    /// (TriggerTaskRequest.wait): `done` says whether it is, and `instance` holds its status,
    /// output and message. The instance is created before the wait begins: when the wait runs out
    /// (or this future is dropped) it still runs. With a key used before, waits for that instance.
    ///
    /// axd answers a waiting call before its `--request-timeout` (30 s by default); until `wait`
    /// has passed this calls again with the instance's idempotency key, which waits for the same
    /// instance.
    pub async fn trigger_and_wait(&mut self, mut trigger: Trigger, wait: Duration) -> Result<Triggered> {
        let until = std::time::Instant::now() + wait;
        let mut first: Option<Triggered> = None;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now()).max(Duration::from_millis(1));
            trigger.request.wait = Some(prost_types::Duration {
                seconds: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                nanos: i32::try_from(left.subsec_nanos()).unwrap_or(0),
            });
            let mut t = self.trigger(trigger.clone()).await?;
            // What the first call did: created the instance, or found it by its key.
            if let Some(f) = &first {
                t.created = f.created;
            }
            if t.done || std::time::Instant::now() >= until {
                return Ok(t);
            }
            trigger.request.idempotency_key = t.instance.idempotency_key.clone();
            first.get_or_insert(t);
        }
    }

    /// One instance.
    pub async fn instance(&mut self, id: i64) -> Result<Instance> {
        let r = self.admin.get_instance(pb::GetInstanceRequest { id }).await?.into_inner();
        r.instance.ok_or(Error::Incomplete("the instance"))
    }
}

/// Every TaskSpec field UpdateTask takes: what [`Client::upsert_task`] sets on an existing task.
pub use ax_proto::TASK_SPEC_UPDATABLE_FIELDS as SPEC_FIELDS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_carries_its_params_key_and_time() {
        let t = Trigger::new("report")
            .params(&serde_json::json!({"n": 1}))
            .expect("json")
            .key("order-1")
            .after(Duration::from_millis(1500));
        assert_eq!(t.request.params.as_deref(), Some(r#"{"n":1}"#));
        assert_eq!(t.request.idempotency_key, "order-1");
        assert_eq!(t.request.when, Some(WireWhen::Delay(prost_types::Duration { seconds: 1, nanos: 500_000_000 })));
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let t = Trigger::new("report").at(at);
        assert_eq!(t.request.when, Some(WireWhen::RunAt(prost_types::Timestamp { seconds: 1_800_000_000, nanos: 0 })));
    }
}
