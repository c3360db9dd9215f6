//! Records for unit tests.

use crate::model::{Backoff, Instance, InstanceSource, InstanceStatus, Routing, Ts};

/// A plain instance: task 1 (`report` of app `billing`), fired at `fire_at`, attempt 0, key `k<id>`.
pub(crate) fn instance(id: i64, fire_at: Ts, status: InstanceStatus) -> Instance {
    Instance {
        id,
        task_id: 1,
        task_name: "report".into(),
        app: "billing".into(),
        handler: "invoice".into(),
        params: "{}".into(),
        idempotency_key: format!("k{id}"),
        source: InstanceSource::Schedule,
        fire_at,
        available_at: fire_at,
        status,
        attempt: 0,
        max_retries: 1,
        failures: 0,
        timeout: None,
        backoff: Backoff::List { delays_us: vec![1_000_000] },
        routing: Routing::LeastLoaded,
        worker_id: None,
        session_id: None,
        scheduler_id: None,
        lease_expires_at: None,
        deadline_at: None,
        started_at: None,
        finished_at: None,
        message: String::new(),
        output: String::new(),
        progress_percent: 0,
        progress_message: String::new(),
        created_at: fire_at,
        updated_at: fire_at,
        trace_parent: None,
        route: Default::default(),
        lineage: Default::default(),
        trail: Default::default(),
    }
}
