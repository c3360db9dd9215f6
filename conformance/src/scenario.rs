//! What every scenario starts from: a relay in front of axd, the worker under test started against
//! it, its Hello and axd's Welcome; and helpers to find messages in the record.

use std::{path::PathBuf, time::Duration};

use anyhow::{Context as _, bail};
use ax_proto::v1::{self as pb, scheduler_message::Msg as Down, worker_message::Msg as Up};
use tokio::time::Instant;

use crate::{
    axd::{Admin, TaskDef},
    relay::{Ev, Rec, Relay},
    worker::{Env, WorkerProc},
};

/// The handlers every worker under test serves (see README "Writing a worker in any language").
pub const HANDLERS: [&str; 5] = ["echo", "sleep", "fail", "panic", "big-output"];

/// Settings shared by every scenario of a run.
pub struct Kit {
    /// axd's WorkerService and AdminService.
    pub upstream: String,
    pub admin: Admin,
    /// The worker's command line.
    pub cmd: Vec<String>,
    pub capacity: u32,
    /// Makes app, worker and task names unique to this run (an `--endpoint` axd keeps old ones).
    pub run_id: String,
    /// Worker logs go here.
    pub dir: PathBuf,
    /// The kit started axd itself (so its timings are known).
    pub own_axd: bool,
}

/// Timings from the Welcome.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub heartbeat: Duration,
    pub lease_ttl: Duration,
    pub fence_margin: Duration,
    pub ack_timeout: Duration,
}

fn std_dur(d: Option<prost_types::Duration>) -> Option<Duration> {
    let d = d?;
    Some(Duration::new(u64::try_from(d.seconds).ok()?, u32::try_from(d.nanos).ok()?))
}

/// One scenario in progress.
pub struct S<'k> {
    pub kit: &'k Kit,
    pub app: String,
    pub worker_id: String,
    pub relay: Relay,
    pub worker: Option<WorkerProc>,
    pub hello: pb::Hello,
    pub welcome: pb::Welcome,
    /// When the Welcome passed the relay.
    pub welcome_at: Instant,
    pub timing: Timing,
    tasks: usize,
}

/// How long the worker may take to start and say Hello.
const STARTUP: Duration = Duration::from_secs(20);

impl<'k> S<'k> {
    /// Starts the relay and the worker; returns once axd has welcomed it.
    pub async fn start(kit: &'k Kit, name: &str) -> anyhow::Result<S<'k>> {
        let app = format!("conf-{}-{name}", kit.run_id);
        let worker_id = format!("conformance-{}-{name}", kit.run_id);
        let relay = Relay::start(&kit.upstream).await?;
        let env = Env { endpoint: &relay.url, app: &app, worker_id: &worker_id, capacity: kit.capacity };
        let worker = WorkerProc::start(&kit.cmd, &env, &kit.dir.join(format!("{name}.log")))?;
        let mut s = S {
            kit,
            app,
            worker_id,
            relay,
            worker: Some(worker),
            hello: pb::Hello::default(),
            welcome: pb::Welcome::default(),
            welcome_at: Instant::now(),
            timing: Timing {
                heartbeat: Duration::from_secs(2),
                lease_ttl: Duration::from_secs(16),
                fence_margin: Duration::from_secs(2),
                ack_timeout: Duration::from_secs(10),
            },
            tasks: 0,
        };
        let (_, _, hello) = s
            .wait_up("the worker's Hello", STARTUP, |st, m| match m {
                Up::Hello(h) if st == 0 => Some(h.clone()),
                _ => None,
            })
            .await
            .map_err(|e| s.explain_silence(e))?;
        s.hello = hello;
        let welcome = s
            .relay
            .wait("axd's Welcome", Duration::from_secs(10), |log| {
                log.iter().find_map(|r| match &r.ev {
                    Ev::ToWorker { msg: Down::Welcome(w), .. } if r.stream == 0 => Some(Ok((r.at, w.clone()))),
                    Ev::AxdClosed { how } if r.stream == 0 => Some(Err(how.clone())),
                    _ => None,
                })
            })
            .await?;
        let (at, welcome) = match welcome {
            Ok(w) => w,
            Err(how) => bail!("axd refused the worker's Hello: {how}"),
        };
        let d = |v, default| std_dur(v).filter(|d: &Duration| !d.is_zero()).unwrap_or(default);
        s.timing = Timing {
            heartbeat: d(welcome.heartbeat_interval, Duration::from_secs(2)),
            lease_ttl: d(welcome.lease_ttl, Duration::from_secs(16)),
            fence_margin: d(welcome.fence_margin, Duration::from_secs(2)),
            ack_timeout: d(welcome.ack_timeout, Duration::from_secs(10)),
        };
        s.welcome = welcome;
        s.welcome_at = at;
        Ok(s)
    }

    fn explain_silence(&mut self, e: anyhow::Error) -> anyhow::Error {
        match self.worker.as_mut().and_then(WorkerProc::exited) {
            Some(status) => anyhow::anyhow!("the worker exited ({status}) before saying Hello"),
            None => e,
        }
    }

    /// A new task name of this scenario.
    pub fn task_name(&mut self) -> String {
        self.tasks += 1;
        format!("{}-{}", self.app, self.tasks)
    }

    /// Creates a manual task for `handler` and triggers it with `params`; returns the instance id.
    pub async fn run(&mut self, handler: &str, params: &str) -> anyhow::Result<i64> {
        let name = self.task_name();
        self.kit.admin.run(&name, &self.app, handler, params).await
    }

    /// Creates a task of this scenario's app: run timeout `timeout`; fired once `once_after` its
    /// creation, or manual (`None`). Returns its name.
    pub async fn create(
        &mut self,
        handler: &str,
        params: &str,
        timeout: Option<Duration>,
        once_after: Option<Duration>,
    ) -> anyhow::Result<String> {
        let name = self.task_name();
        self.kit.admin.create(TaskDef { name: &name, app: &self.app, handler, params, timeout, once_after }).await?;
        Ok(name)
    }

    /// The first message from the worker (any stream) that `pick` accepts: when, on which stream, what.
    pub async fn wait_up<T>(
        &self,
        what: &str,
        within: Duration,
        mut pick: impl FnMut(usize, &Up) -> Option<T>,
    ) -> anyhow::Result<(Instant, usize, T)> {
        self.relay
            .wait(what, within, |log| {
                log.iter().find_map(|r| match &r.ev {
                    Ev::FromWorker { msg } => pick(r.stream, msg).map(|v| (r.at, r.stream, v)),
                    _ => None,
                })
            })
            .await
    }

    /// The first message from axd (any stream) that reached the worker and that `pick` accepts.
    pub async fn wait_down<T>(
        &self,
        what: &str,
        within: Duration,
        mut pick: impl FnMut(usize, &Down) -> Option<T>,
    ) -> anyhow::Result<(Instant, usize, T)> {
        self.relay
            .wait(what, within, |log| {
                log.iter().find_map(|r| match &r.ev {
                    Ev::ToWorker { msg, forwarded: true } => pick(r.stream, msg).map(|v| (r.at, r.stream, v)),
                    _ => None,
                })
            })
            .await
    }

    /// When the worker sent Accepted for (id, attempt).
    pub async fn accepted(&self, id: i64, attempt: u32, within: Duration) -> anyhow::Result<(Instant, usize)> {
        let (at, st, ()) = self
            .wait_up(&format!("Accepted for instance {id} attempt {attempt}"), within, |_, m| match m {
                Up::Accepted(a) if a.instance_id == id && a.attempt == attempt => Some(()),
                _ => None,
            })
            .await?;
        Ok((at, st))
    }

    /// The worker's first Result for (id, attempt) after `after`.
    pub async fn result(
        &self,
        id: i64,
        attempt: u32,
        after: Option<Instant>,
        within: Duration,
    ) -> anyhow::Result<(Instant, usize, pb::Result)> {
        self.relay
            .wait(&format!("the worker's Result for instance {id} attempt {attempt}"), within, |log| {
                log.iter().find_map(|r| match &r.ev {
                    Ev::FromWorker { msg: Up::Result(x) }
                        if x.instance_id == id && x.attempt == attempt && after.is_none_or(|t| r.at > t) =>
                    {
                        Some((r.at, r.stream, x.clone()))
                    }
                    _ => None,
                })
            })
            .await
    }

    /// The first Hello on a stream after stream 0 (a reconnect).
    pub async fn rehello(&self, within: Duration) -> anyhow::Result<(Instant, usize, pb::Hello)> {
        self.wait_up("a new stream with a Hello (the worker reconnecting)", within, |st, m| match m {
            Up::Hello(h) if st > 0 => Some(h.clone()),
            _ => None,
        })
        .await
    }

    /// The Welcome axd sent on `stream`.
    pub async fn welcome_on(&self, stream: usize, within: Duration) -> anyhow::Result<pb::Welcome> {
        let (_, _, w) = self
            .wait_down(&format!("axd's Welcome on stream {stream}"), within, |st, m| match m {
                Down::Welcome(w) if st == stream => Some(w.clone()),
                _ => None,
            })
            .await?;
        Ok(w)
    }

    /// A copy of the record.
    pub fn log(&self) -> Vec<Rec> {
        self.relay.log()
    }

    /// Stops the worker and the relay; returns the worker's last log lines.
    pub async fn finish(mut self) -> String {
        self.relay.stop();
        match self.worker.take() {
            Some(w) => {
                let tail = w.tail(15);
                w.stop().await;
                tail
            }
            None => String::new(),
        }
    }

    /// Whether the worker process has exited, with its status.
    pub fn worker_exited(&mut self) -> Option<std::process::ExitStatus> {
        self.worker.as_mut().and_then(WorkerProc::exited)
    }
}

/// `true` if `list` names (id, attempt).
pub fn lists(list: &[pb::InstanceAttempt], id: i64, attempt: u32) -> bool {
    list.iter().any(|a| a.instance_id == id && a.attempt == attempt)
}

/// A protobuf duration.
pub fn pb_dur(d: Duration) -> prost_types::Duration {
    prost_types::Duration { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 }
}

/// `d` for reports, in milliseconds.
pub fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// Whether outcome `o` is FAILED.
pub fn failed(r: &pb::Result) -> bool {
    r.outcome == pb::Outcome::Failed as i32
}

/// The outcome's name.
pub fn outcome(r: &pb::Result) -> &'static str {
    match pb::Outcome::try_from(r.outcome) {
        Ok(pb::Outcome::Success) => "SUCCESS",
        Ok(pb::Outcome::Failed) => "FAILED",
        _ => "UNSPECIFIED",
    }
}

/// Fails with `msg` unless `cond`.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> anyhow::Result<()> {
    if cond { Ok(()) } else { Err(anyhow::anyhow!(msg())) }
}

/// Convenience for `Option` → error with context.
pub fn need<T>(v: Option<T>, what: &str) -> anyhow::Result<T> {
    v.with_context(|| what.to_owned())
}
