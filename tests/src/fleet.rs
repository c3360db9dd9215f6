//! Workers for routing tests: SDK workers serving handler `run`, which record which worker ran
//! which attempt (with its shard), can be told to sleep or fail on some workers, and count the most
//! runs at once.

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
/// names its worker), and records every run and the most runs at once.
#[derive(Clone, Default)]
pub struct Fleet {
    pub runs: Arc<Mutex<Vec<Run>>>,
    active: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
    stops: Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<()>>>>,
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
    /// Starts a worker of app `app` with this id, capacity and labels.
    pub fn start(&self, endpoint: &str, app: &str, id: &str, capacity: u32, labels: &[(&str, &str)]) {
        let (runs, active, peak) = (self.runs.clone(), self.active.clone(), self.peak.clone());
        let me = id.to_owned();
        let mut b = Worker::builder().endpoint(endpoint).app(app).worker_id(id).capacity(capacity);
        for (k, v) in labels {
            b = b.label(*k, *v);
        }
        let worker = b
            .handler("run", move |ctx: Context| {
                let (runs, active, peak, me) = (runs.clone(), active.clone(), peak.clone(), me.clone());
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
