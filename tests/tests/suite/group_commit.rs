//! The group commit on PostgreSQL reads its rows without a lock and writes each only if it is still
//! the version it read (`transitions::apply_worker_ops`). A change another transaction commits in
//! between must win, exactly as it would over locked rows.

use std::{num::NonZeroU32, time::Duration};

use ax_scheduler::{
    lifecycle::{AttemptEnd, CompleteOutcome, Completion, WorkerOp, WorkerOpOutcome},
    loops::{
        dispatch::{Skips, claim},
        trigger::trigger_manual,
    },
    model::{ConcurrencyPolicy, InstanceStatus, MisfirePolicy, RetryPolicy, Routing, Schedule, TaskConfig, Ts, add},
    routing::{
        RoutingState,
        registry::{AppDemand, SessionRef},
    },
    store::{Actor, ManualTrigger, NewTask},
    traces::Traces,
    transitions::apply_worker_ops,
};
use ax_tests::{Db, TestDb, eventually};
use chrono::{TimeZone, Utc};
use sqlx::{Connection as _, Executor as _};

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_loses_to_a_take_back_that_commits_after_the_rows_were_read() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    let actor = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };
    let config = TaskConfig {
        app: "billing".into(),
        handler: "send-invoice".into(),
        description: String::new(),
        schedule: Schedule::Manual,
        params: "{}".into(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: secs(60),
        max_catch_up: NonZeroU32::new(1).expect("nonzero"),
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: Some(secs(30)),
        retry: RetryPolicy::default(),
        labels: Default::default(),
        placement: Default::default(),
        timing: Default::default(),
        flow: Default::default(),
    };
    let task = store
        .create_task(&NewTask { name: "raced".into(), config, next_fire_at: None }, t0(), &actor)
        .await
        .expect("task");
    let trig =
        ManualTrigger { params: "{}".into(), key: "k".into(), actor: "alice".into(), run_at: None, tags: Vec::new() };
    let (inst, _) = trigger_manual(&store, &task, &trig, t0(), "axd-test", &Traces::off()).await.expect("trigger");
    let demand = [AppDemand {
        app: "billing".into(),
        handlers: vec!["send-invoice".into()],
        limit: 10,
        until: t0(),
        workers: Vec::new(),
        labels: Vec::new(),
    }];
    let mut route = |_: &ax_scheduler::routing::registry::ReadyInstance| {
        Ok((SessionRef { session_id: "s1".into(), worker_id: "w1".into() }, String::new()))
    };
    let lease = add(t0(), secs(60));
    let claimed = claim(&store, add(t0(), secs(1)), &demand, &Skips::default(), lease, "axd-test", &mut route)
        .await
        .expect("claim");
    assert_eq!(claimed.assignments.len(), 1);

    // Another axd takes the attempt back (as the sweeper does for a lost worker) and holds its
    // transaction open.
    let mut other = sqlx::PgConnection::connect(&db.url).await.expect("connect");
    other.execute("BEGIN").await.expect("begin");
    let take_back = format!(
        "UPDATE ax_instance SET status = 'PENDING', session_id = NULL, worker_id = NULL, \
         lease_expires_at = NULL, trail = 0 WHERE id = {}",
        inst.id
    );
    assert_eq!(other.execute(take_back.as_str()).await.expect("take back").rows_affected(), 1);

    // The worker's result: read before the take-back commits, written after.
    let ops = vec![WorkerOp::Result(Completion {
        instance_id: inst.id,
        attempt: 1,
        session_id: "s1".into(),
        worker_id: "w1".into(),
        end: AttemptEnd::Success { message: String::new(), output: "done".into() },
        finished_at: None,
    })];
    let now = add(t0(), secs(5));
    let writer_store = store.clone();
    let write = tokio::spawn(async move {
        apply_worker_ops(
            &writer_store,
            &ops,
            now,
            add(now, secs(60)),
            "axd-test",
            &Traces::off(),
            &RoutingState::default(),
        )
        .await
    });
    // Commit the take-back once the group commit waits for it (a lock wait on the run's database).
    let waiting =
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    eventually(Duration::from_secs(10), "the group commit waits for the take-back", || {
        let db = &db;
        async move { (db.scalar(waiting).await > 0).then_some(()) }
    })
    .await;
    other.execute("COMMIT").await.expect("commit");

    let outcomes = write.await.expect("join").expect("apply");
    assert!(
        matches!(&outcomes[0], WorkerOpOutcome::Result(CompleteOutcome::Ignored(_))),
        "the result of an attempt taken back is ignored: {outcomes:?}"
    );
    let row = store.get_instance(inst.id).await.expect("get").expect("instance");
    assert_eq!(row.status, InstanceStatus::Pending, "the take-back stands");
    assert_eq!(row.output, "");
    db.cleanup().await;
}
