//! Workers for routing tests: SDK workers serving handler `run`, which record which worker ran
//! which attempt (with its shard), can be told to sleep or fail on some workers, count the most
//! runs at once, and can be held at a gate that the test opens.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use ax_proto::v1 as pb;
use ax_worker::{Context, HandlerError, Worker};
use tonic::transport::Channel;

use crate::eventually;

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

const LONG: Duration = Duration::from_secs(30);

/// One run of the `run` handler: which worker ran which attempt, with which shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub worker: String,
    pub instance: i64,
    pub attempt: u32,
    pub shard: Option<(u32, u32)>,
    pub params: String,
}

/// Workers serving handler `run`, which sleeps `ms`, fails when `fail` is true (or when `fail_on`
/// names its worker), and records every run and the most runs at once. A [`Fleet::gated`] fleet's
/// handlers wait at its gate until the test opens it, after recording their run and counting as
/// active: a test can see how many runs are under way at once without racing their ends.
#[derive(Clone)]
pub struct Fleet {
    pub runs: Arc<Mutex<Vec<Run>>>,
    active: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
    stops: Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<()>>>>,
    /// True while handlers may go on.
    gate: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for Fleet {
    /// A fleet whose gate is open.
    fn default() -> Self {
        Fleet {
            runs: Default::default(),
            active: Default::default(),
            peak: Default::default(),
            stops: Default::default(),
            gate: Arc::new(tokio::sync::watch::Sender::new(true)),
        }
    }
}

/// What the params of an instance of `run` ask: sleep `ms` (only on the workers of `slow_on` if
/// it names any), and fail (always, or on the workers of `fail_on`).
#[derive(serde::Deserialize, Default)]
struct Params {
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    slow_on: Vec<String>,
    #[serde(default)]
    fail: bool,
    #[serde(default)]
    fail_on: Vec<String>,
}

impl Fleet {
    /// A fleet whose handlers wait at a closed gate until [`Fleet::open_gate`].
    pub fn gated() -> Fleet {
        let f = Fleet::default();
        f.gate.send_replace(false);
        f
    }

    /// Lets every waiting and later handler go on.
    pub fn open_gate(&self) {
        self.gate.send_replace(true);
    }

    /// How many handlers are running now (waiting at the gate included).
    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// Starts a worker of app `app` with this id, capacity and labels.
    pub fn start(&self, endpoint: &str, app: &str, id: &str, capacity: u32, labels: &[(&str, &str)]) {
        let (runs, active, peak, gate) = (self.runs.clone(), self.active.clone(), self.peak.clone(), self.gate.clone());
        let me = id.to_owned();
        let mut b = Worker::builder().endpoint(endpoint).app(app).worker_id(id).capacity(capacity);
        for (k, v) in labels {
            b = b.label(*k, *v);
        }
        let worker = b
            .handler("run", move |ctx: Context| {
                let (runs, active, peak, me) = (runs.clone(), active.clone(), peak.clone(), me.clone());
                let mut gate = gate.subscribe();
                async move {
                    let p: Params = serde_json::from_str(&ctx.params_raw).unwrap_or_default();
                    runs.lock().expect("lock").push(Run {
                        worker: me.clone(),
                        instance: ctx.instance_id,
                        attempt: ctx.attempt,
                        shard: ctx.shard,
                        params: ctx.params_raw.clone(),
                    });
                    let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    let _ = gate.wait_for(|open| *open).await;
                    if p.slow_on.is_empty() || p.slow_on.contains(&me) {
                        tokio::time::sleep(Duration::from_millis(p.ms)).await;
                    }
                    active.fetch_sub(1, Ordering::SeqCst);
                    if p.fail || p.fail_on.contains(&me) {
                        return Err(HandlerError::retryable(format!("failing on {me} as asked")));
                    }
                    Ok(())
                }
            })
            .build()
            .expect("worker");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(worker.run_until(async move {
            let _ = stopped.await;
        }));
        self.stops.lock().expect("lock").insert(id.to_owned(), stop);
    }

    /// For a gated fleet running instances of `task`, capped at `limit` at once: waits until
    /// `limit` handlers are held at the gate, checks for a while (some dispatch rounds) that no
    /// other starts and that axd holds no other instance of `task` dispatched or running, then
    /// opens the gate.
    pub async fn hold_at_cap(&self, admin: &Admin, task: &str, limit: usize) {
        const QUIET: Duration = Duration::from_millis(1500);
        eventually(LONG, &format!("{limit} runs of {task} at once"), || async {
            (self.active() >= limit).then_some(())
        })
        .await;
        let until = tokio::time::Instant::now() + QUIET;
        while tokio::time::Instant::now() < until {
            let list = admin
                .clone()
                .list_instances(pb::ListInstancesRequest {
                    task_name: task.into(),
                    page_size: 1000,
                    ..Default::default()
                })
                .await
                .expect("list")
                .into_inner()
                .instances;
            let held = [pb::InstanceStatus::Dispatched as i32, pb::InstanceStatus::Running as i32];
            let busy = list.iter().filter(|i| held.contains(&i.status)).count();
            let active = self.active();
            if active != limit {
                // Which runs: a second attempt of one instance (its lease ran out) or one instance too many.
                let runs: Vec<_> =
                    self.runs.lock().expect("lock").iter().map(|r| (r.instance, r.attempt, r.worker.clone())).collect();
                let states: Vec<_> = list.iter().map(|i| (i.id, i.status, i.attempt)).collect();
                panic!(
                    "handlers running at once while the gate is closed (cap {limit}): {active}; runs (instance, \
                     attempt, worker) {runs:?}; instances (id, status, attempt) {states:?}"
                );
            }
            assert_eq!(busy, limit, "instances of {task} dispatched or running while the gate is closed (cap {limit})");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.open_gate();
    }

    /// Stops one worker (its stream closes).
    pub fn stop(&self, id: &str) {
        if let Some(s) = self.stops.lock().expect("lock").remove(id) {
            let _ = s.send(());
        }
    }

    /// The runs of an instance.
    pub fn of(&self, instance: i64) -> Vec<Run> {
        self.runs.lock().expect("lock").iter().filter(|r| r.instance == instance).cloned().collect()
    }

    /// Stops every worker.
    pub fn stop_all(&self) {
        for (_, s) in self.stops.lock().expect("lock").drain() {
            let _ = s.send(());
        }
    }
}

/// Waits until the cluster lists these workers (of `app`) connected.
pub async fn connected(admin: &Admin, app: &str, ids: &[&str]) {
    eventually(LONG, "the workers to connect", || async {
        let w = admin.clone().list_workers(pb::ListWorkersRequest { app: app.into() }).await.ok()?.into_inner();
        ids.iter().all(|id| w.workers.iter().any(|s| s.worker_id == *id)).then_some(())
    })
    .await;
}
