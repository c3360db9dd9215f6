//! Trail equality (issue 31): every lifecycle scenario, driven with the same inputs and the same
//! injected times on two fresh databases — one where every event is written as a row (as before
//! migration 10), one where instance rows hold their happy path's trail — gives the same trail to
//! readers: states, attempts, times, axd, workers, reasons, in order. And the second writes fewer
//! event rows.

use std::{
    collections::{BTreeMap, HashMap},
    num::NonZeroU32,
    sync::{Arc, Mutex},
    time::Duration,
};

use ax_scheduler::{
    lifecycle::{AttemptEnd, Completion, WorkerOp},
    loops::{
        dispatch::{Skips, claim},
        sweeper::sweep,
        trigger::{EnginePlanner, trigger_due, trigger_manual},
    },
    model::{
        Backoff, ConcurrencyPolicy, EdgeKind, Flow, Instance, InstanceEvent, InstanceStatus, MisfirePolicy, Placement,
        RetryPolicy, Routing, Schedule, TaskConfig, Ts, WorkerRecord, add,
    },
    routing::{
        RoutingState,
        registry::{AppDemand, ReadyInstance, SessionRef},
    },
    store::{Actor, InstanceFilter, ManualTrigger, NewTask, Store},
    traces::Traces,
    transitions::{apply_worker_ops, cancel_instance, retry_instance},
    worker::sessions::{close_session, open_session},
};
use ax_tests::{TestDb, on_every_backend};
use chrono::{TimeZone, Utc};

const AXD: &str = "axd-test";
const ACTOR: Actor<'static> = Actor { scheduler_id: AXD, caller: "spiffe://ax/admin/test" };

/// Seconds after the scenario's start.
fn at(base: u64, s: u64) -> Ts {
    add(Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant"), Duration::from_secs(base + s))
}

fn config() -> TaskConfig {
    TaskConfig {
        app: "billing".into(),
        handler: "send-invoice".into(),
        description: String::new(),
        schedule: Schedule::Manual,
        params: "{}".into(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: Duration::from_secs(60),
        max_catch_up: NonZeroU32::new(10).expect("nonzero"),
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: Some(Duration::from_secs(30)),
        retry: RetryPolicy { max_retries: 2, backoff: Backoff::List { delays_us: vec![10_000_000, 10_000_000] } },
        labels: BTreeMap::new(),
        placement: Default::default(),
        timing: Default::default(),
        flow: Default::default(),
    }
}

/// Rows as the claims wrote them, kept by attempt as a worker session keeps them.
type Kept = Arc<Mutex<HashMap<(i64, u32), (Instance, i64)>>>;

/// One scenario's database and clock.
struct Run {
    store: Arc<Store>,
    base: u64,
    /// `Some`: the claims' rows are kept and given to the group commits of their attempts'
    /// messages, as axd's sessions and writer do (PostgreSQL; elsewhere a claim keeps none).
    kept: Option<Kept>,
}

impl Run {
    fn t(&self, s: u64) -> Ts {
        at(self.base, s)
    }

    async fn task(&self, name: &str, c: TaskConfig) -> ax_scheduler::model::Task {
        self.store
            .create_task(&NewTask { name: name.into(), config: c, next_fire_at: None }, self.t(0), &ACTOR)
            .await
            .expect("create task")
    }

    /// A manual trigger of `task` at +0 s; the instance's id.
    async fn trigger(&self, task: &ax_scheduler::model::Task) -> i64 {
        let trig = ManualTrigger {
            params: "{}".into(),
            key: "k".into(),
            actor: "alice".into(),
            run_at: None,
            tags: Default::default(),
        };
        trigger_manual(&self.store, task, &trig, self.t(0), AXD, &Traces::off()).await.expect("trigger").0.id
    }

    /// A task whose one-time schedule fires at +0 s, fired by `axd`; the instance's id.
    async fn fired(&self, name: &str, axd: &str) -> i64 {
        let c = TaskConfig { schedule: Schedule::OneTime { at: self.t(0) }, ..config() };
        let new = NewTask { name: name.into(), config: c, next_fire_at: Some(self.t(0)) };
        self.store.create_task(&new, self.t(0), &ACTOR).await.expect("create task");
        let planner = EnginePlanner { now: self.t(0), lookahead: Duration::ZERO };
        let round =
            trigger_due(&self.store, self.t(0), self.t(0), 500, &planner, axd, &Traces::off()).await.expect("trigger");
        assert_eq!(round.created.len(), 1, "{name} fired once");
        round.created[0].0
    }

    /// Claims what is ready at +`s` for `session` (worker `w-<session>`), lease until +`s + lease`.
    async fn claim(&self, s: u64, session: &str, lease: u64) -> Vec<i64> {
        self.claim_by(s, session, lease, AXD).await
    }

    /// [`Run::claim`] by the axd `axd`.
    async fn claim_by(&self, s: u64, session: &str, lease: u64, axd: &str) -> Vec<i64> {
        let demand = demand(self.t(s));
        let mut route = |_: &ReadyInstance| {
            Ok((SessionRef { session_id: session.into(), worker_id: format!("w-{session}") }, String::new()))
        };
        let lease_until = self.t(s + lease);
        let claimed = claim(&self.store, self.t(s), &demand, &Skips::default(), lease_until, axd, &mut route)
            .await
            .expect("claim");
        if let Some(kept) = &self.kept {
            let mut kept = kept.lock().expect("kept rows");
            for a in &claimed.assignments {
                if let Some(row) = a.stored() {
                    kept.insert((a.instance.id, a.instance.attempt), row);
                }
            }
        }
        claimed.assignments.iter().map(|a| a.instance.id).collect()
    }

    async fn ops(&self, s: u64, ops: &[WorkerOp]) {
        let now = self.t(s);
        let mut rows = HashMap::new();
        if let Some(kept) = &self.kept {
            let mut kept = kept.lock().expect("kept rows");
            for op in ops {
                if let Some(row) = kept.remove(&op.key()) {
                    rows.insert(op.instance_id(), row);
                }
            }
        }
        apply_worker_ops(
            &self.store,
            ops,
            rows,
            now,
            add(now, Duration::from_secs(60)),
            AXD,
            &Traces::off(),
            &routing(),
        )
        .await
        .expect("worker ops");
    }

    async fn sweep(&self, s: u64) {
        sweep(&self.store, self.t(s), 100, AXD, &Traces::off(), &routing(), Duration::from_secs(5))
            .await
            .expect("sweep");
    }

    async fn session(&self, s: u64, session: &str, worker: &str, in_flight: &[(i64, u32)]) {
        let rec = WorkerRecord {
            session_id: session.into(),
            worker_id: worker.into(),
            app: "billing".into(),
            handlers: vec!["send-invoice".into()],
            capacity: 4,
            credits: 4,
            in_flight: 0,
            labels: BTreeMap::new(),
            scheduler_id: AXD.into(),
            client: "test".into(),
            connected_at: self.t(s),
            last_seen_at: self.t(s),
        };
        open_session(&self.store, &rec, in_flight, self.t(s), self.t(s + 60), &routing()).await.expect("open session");
    }
}

/// Ten free slots for billing's send-invoice, claiming what is available by `until`.
fn demand(until: Ts) -> [AppDemand; 1] {
    [AppDemand {
        app: "billing".into(),
        handlers: vec!["send-invoice".into()],
        limit: 10,
        until,
        workers: Vec::new(),
        labels: Vec::new(),
    }]
}

fn routing() -> RoutingState {
    RoutingState::default()
}

fn accepted(id: i64, attempt: u32, session: &str, at: Ts) -> WorkerOp {
    WorkerOp::Accepted { instance_id: id, attempt, session_id: session.into(), received_at: at }
}

fn result(id: i64, attempt: u32, session: &str, worker: &str, end: AttemptEnd) -> WorkerOp {
    WorkerOp::Result(Completion {
        instance_id: id,
        attempt,
        session_id: session.into(),
        worker_id: worker.into(),
        end,
        finished_at: None,
    })
}

fn ok(message: &str) -> AttemptEnd {
    AttemptEnd::Success { message: message.into(), output: "out".into() }
}

fn failed(message: &str) -> AttemptEnd {
    AttemptEnd::Failed { message: message.into(), retryable: true }
}

/// Every scenario, one after another on `store`, each on its own task and its own minute; with
/// `keep`, the group commits take the rows the claims kept instead of reading them.
async fn scenarios(store: &Arc<Store>, keep: bool) {
    let kept: Option<Kept> = keep.then(Kept::default);
    let run = |n: u64| Run { store: store.clone(), base: n * 1000, kept: kept.clone() };

    // Success: Accepted and Result in separate commits, then the same in one, then a Result
    // without an Accepted.
    let r = run(1);
    let id = r.trigger(&r.task("ok-apart", config()).await).await;
    assert_eq!(r.claim(1, "s1", 60).await, [id]);
    r.ops(2, &[accepted(id, 1, "s1", r.t(2))]).await;
    r.ops(3, &[result(id, 1, "s1", "w-s1", ok("fine"))]).await;
    // Its exact repeat (a lost ack) changes nothing; a foreign worker's result is recorded as late.
    r.ops(4, &[result(id, 1, "s1", "w-s1", ok("fine"))]).await;
    r.ops(5, &[result(id, 1, "s9", "w-s9", ok("other"))]).await;

    let r = run(2);
    let id = r.trigger(&r.task("ok-together", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(5, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", ok(""))]).await;

    let r = run(3);
    let id = r.trigger(&r.task("ok-no-accept", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(3, &[result(id, 1, "s1", "w-s1", ok(""))]).await;

    // A failure retried after its backoff, then a success.
    let r = run(4);
    let id = r.trigger(&r.task("retry", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2))]).await;
    r.ops(3, &[result(id, 1, "s1", "w-s1", failed("boom"))]).await;
    assert_eq!(r.claim(14, "s1", 60).await, [id]);
    r.ops(15, &[accepted(id, 2, "s1", r.t(15)), result(id, 2, "s1", "w-s1", ok(""))]).await;

    // A run timeout (the Cancel is queued), the late result of the timed-out attempt, the retry.
    let r = run(5);
    let id = r.trigger(&r.task("timeout", config()).await).await;
    r.claim(1, "s1", 600).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2))]).await;
    r.sweep(40).await;
    r.ops(41, &[result(id, 1, "s1", "w-s1", failed("canceled"))]).await;
    assert_eq!(r.claim(60, "s1", 60).await, [id]);
    r.ops(61, &[accepted(id, 2, "s1", r.t(61)), result(id, 2, "s1", "w-s1", ok(""))]).await;

    // An operator cancels a running attempt; its worker's result comes late.
    let r = run(6);
    let id = r.trigger(&r.task("cancel", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2))]).await;
    cancel_instance(&r.store, id, "not needed", r.t(3), &ACTOR, &routing()).await.expect("cancel");
    r.ops(4, &[result(id, 1, "s1", "w-s1", ok(""))]).await;

    // A rejection, then a success on another worker.
    let r = run(7);
    let id = r.trigger(&r.task("reject", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[WorkerOp::Reject { instance_id: id, attempt: 1, session_id: "s1".into(), reason: "busy".into() }]).await;
    assert_eq!(r.claim(3, "s2", 60).await, [id]);
    r.ops(4, &[result(id, 2, "s2", "w-s2", ok(""))]).await;

    // An ack timeout (never accepted), then a success.
    let r = run(8);
    let id = r.trigger(&r.task("ack-timeout", config()).await).await;
    r.claim(1, "s1", 10).await;
    r.sweep(12).await;
    assert_eq!(r.claim(13, "s2", 60).await, [id]);
    r.ops(14, &[accepted(id, 2, "s2", r.t(14)), result(id, 2, "s2", "w-s2", ok(""))]).await;

    // A lost worker: its session ends, its lease passes, the attempt is retried.
    let r = run(9);
    let id = r.trigger(&r.task("lost", TaskConfig { timeout: None, ..config() }).await).await;
    r.session(0, "l1", "w-l1", &[]).await;
    r.claim(1, "l1", 20).await;
    r.ops(2, &[accepted(id, 1, "l1", r.t(2))]).await;
    close_session(&r.store, "l1", "stream closed", r.t(3), r.t(8), AXD, false, &routing()).await.expect("close");
    r.sweep(70).await;
    r.sweep(85).await;
    assert_eq!(r.claim(90, "l2", 60).await, [id]);
    r.ops(91, &[accepted(id, 2, "l2", r.t(91)), result(id, 2, "l2", "w-l2", ok(""))]).await;

    // The worker reconnects within the grace period and re-announces its attempt, which it
    // finishes on the new session.
    let r = run(10);
    let id = r.trigger(&r.task("readopt", config()).await).await;
    r.session(0, "r1", "w-r1", &[]).await;
    r.claim(1, "r1", 60).await;
    r.ops(2, &[accepted(id, 1, "r1", r.t(2))]).await;
    close_session(&r.store, "r1", "stream closed", r.t(3), r.t(30), AXD, false, &routing()).await.expect("close");
    r.session(4, "r2", "w-r1", &[(id, 1)]).await;
    r.ops(5, &[result(id, 1, "r2", "w-r1", ok(""))]).await;

    // An operator retries a finished instance, which runs again.
    let r = run(11);
    let id = r.trigger(&r.task("operator-retry", config()).await).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", ok(""))]).await;
    retry_instance(&r.store, id, r.t(10), &ACTOR, &routing()).await.expect("retry");
    r.claim(11, "s1", 60).await;
    r.ops(12, &[accepted(id, 2, "s1", r.t(12)), result(id, 2, "s1", "w-s1", ok(""))]).await;

    // A chain: the upstream's success creates the downstream's instance, which runs.
    let r = run(12);
    let down = r.task("chain-down", config()).await;
    let flow = Flow { on_success: vec![down.name.clone()], ..Default::default() };
    let up = r.task("chain-up", TaskConfig { flow, ..config() }).await;
    let mut tx = r.store.begin().await.expect("tx");
    tx.flow().write_edges(up.id, &[(up.id, EdgeKind::Success, down.id)]).await.expect("edges");
    tx.commit().await.expect("commit");
    let id = r.trigger(&up).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", ok(""))]).await;
    let next = r.claim(3, "s1", 60).await;
    assert_eq!(next.len(), 1, "the chain created one instance");
    r.ops(4, &[accepted(next[0], 1, "s1", r.t(4)), result(next[0], 1, "s1", "w-s1", ok(""))]).await;

    // A sharded fire: a parent and two children; one child fails for good, the other succeeds.
    let r = run(13);
    let placement = Placement { shards: NonZeroU32::new(2), ..Default::default() };
    let c = TaskConfig { placement, retry: RetryPolicy { max_retries: 0, ..config().retry }, ..config() };
    r.trigger(&r.task("shards", c).await).await;
    let children = r.claim(1, "s1", 60).await;
    assert_eq!(children.len(), 2, "two shards");
    r.ops(2, &[accepted(children[0], 1, "s1", r.t(2)), result(children[0], 1, "s1", "w-s1", ok(""))]).await;
    r.ops(3, &[accepted(children[1], 1, "s1", r.t(3)), result(children[1], 1, "s1", "w-s1", failed("bad shard"))])
        .await;

    // Fired by a schedule: the row holds the creation event too. Then the same dispatched by
    // another axd (which writes the creation event first), canceled while PENDING, and retried.
    let r = run(14);
    let id = r.fired("sched-ok", AXD).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", ok(""))]).await;

    let r = run(15);
    let id = r.fired("sched-elsewhere", "axd-other").await;
    assert_eq!(r.claim(1, "s1", 60).await, [id]);
    r.ops(2, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", ok(""))]).await;

    let r = run(16);
    let id = r.fired("sched-cancel", AXD).await;
    cancel_instance(&r.store, id, "not today", r.t(1), &ACTOR, &routing()).await.expect("cancel");

    let r = run(17);
    let id = r.fired("sched-retry", AXD).await;
    r.claim(1, "s1", 60).await;
    r.ops(2, &[accepted(id, 1, "s1", r.t(2)), result(id, 1, "s1", "w-s1", failed("flaky"))]).await;
    assert_eq!(r.claim(14, "s1", 60).await, [id]);
    r.ops(15, &[accepted(id, 2, "s1", r.t(15)), result(id, 2, "s1", "w-s1", ok(""))]).await;
}

/// Every instance's trail, in id order, without the event ids (the rows' own).
async fn trails(store: &Store) -> Vec<(i64, InstanceStatus, Vec<InstanceEvent>)> {
    let mut instances =
        store.list_instances(&InstanceFilter { limit: 1000, ..Default::default() }).await.expect("list instances");
    instances.sort_by_key(|i| i.id);
    let mut out = Vec::new();
    for i in instances {
        let events = store.instance_events(i.id).await.expect("events");
        out.push((i.id, i.status, events.into_iter().map(|e| InstanceEvent { id: 0, ..e }).collect()));
    }
    out
}

async fn every_scenario_gives_the_same_trail_with_the_trail_in_the_row(db: &TestDb) {
    let rows_db = TestDb::create(db.db).await.expect("a second database");
    let as_rows = rows_db.store().await;
    as_rows.set_trail_in_row(false);
    scenarios(&as_rows, false).await;
    let in_row = db.store().await;
    // The rows the claims kept stand for the group commits' reads (PostgreSQL): the trails agree.
    scenarios(&in_row, true).await;
    let (before, after) = (trails(&as_rows).await, trails(&in_row).await);
    assert_eq!(before.len(), after.len());
    assert!(before.len() >= 16, "every scenario made its instances: {}", before.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b, a, "instance {}: the trail differs", b.0);
    }
    // Each scenario did what it is named for (the trails would also agree if one did nothing).
    let reasons: Vec<&str> = after.iter().flat_map(|t| t.2.iter().map(|e| e.reason.as_str())).collect();
    for what in [
        "succeeded: fine",
        "retry 1/2 in 10s",
        "timed out: still running after 30s",
        "ignored FAILED result (late)",
        "ignored SUCCESS result (late)",
        "canceled by",
        "busy",
        "did not accept it in time",
        "worker lost",
        "re-announced by worker w-r1",
        "retried by",
        "chained (on-success)",
        "1 of 2 children succeeded",
        "fired on schedule for",
        "not today",
        "flaky",
    ] {
        assert!(reasons.iter().any(|r| r.contains(what)), "no event says {what:?}: {reasons:#?}");
    }
    // The happy paths' events are held by the rows: fewer rows, and a plain success writes only
    // its creation event.
    let count = "SELECT COUNT(*) FROM ax_instance_event";
    let (n_rows, n_held) = (rows_db.scalar(count).await, db.scalar(count).await);
    assert!(n_held < n_rows, "event rows: {n_held} held in rows, {n_rows} without");
    // Instance 2 is the scenario "ok-together".
    assert_eq!(db.scalar("SELECT COUNT(*) FROM ax_instance_event WHERE instance_id = 2").await, 1);
    assert_eq!(after[1].2.len(), 4, "created, dispatched, running, success: {:?}", after[1].2);
    // A scheduled fire that succeeds on its creator's dispatch writes no event row at all; one
    // dispatched by another axd writes its creation event, by its creator.
    let of = |name: &str| format!("(SELECT MIN(id) FROM ax_instance WHERE task_name = '{name}')");
    let rows_of = |name: &str| format!("SELECT COUNT(*) FROM ax_instance_event WHERE instance_id = {}", of(name));
    assert_eq!(db.scalar(&rows_of("sched-ok")).await, 0);
    assert_eq!(db.scalar(&rows_of("sched-elsewhere")).await, 1);
    let creator = format!(
        "SELECT COUNT(*) FROM ax_instance_event WHERE instance_id = {} AND from_status IS NULL AND scheduler_id = 'axd-other'",
        of("sched-elsewhere")
    );
    assert_eq!(db.scalar(&creator).await, 1);
    rows_db.cleanup().await;
}

/// The row a claim keeps for its attempt's group commit is the row reading it back gives, with
/// the version the database holds (PostgreSQL; elsewhere a claim keeps none). A difference would
/// make the group commit decide from, and write back, something the database does not hold.
async fn a_claimed_row_kept_for_the_group_commit_is_the_row_as_read(db: &TestDb) {
    let store = db.store().await;
    let r = Run { store: store.clone(), base: 0, kept: None };
    let ids = [r.trigger(&r.task("kept-a", config()).await).await, r.trigger(&r.task("kept-b", config()).await).await];
    // Times with nanoseconds, as axd's clock gives them; the rows keep microseconds.
    let now = add(r.t(1), Duration::from_nanos(123_456_789));
    let lease_until = add(now, Duration::from_nanos(60_987_654_321));
    let demand = demand(now);
    let mut route =
        |_: &ReadyInstance| Ok((SessionRef { session_id: "s1".into(), worker_id: "w-s1".into() }, String::new()));
    let claimed = claim(&store, now, &demand, &Skips::default(), lease_until, AXD, &mut route).await.expect("claim");
    assert_eq!(claimed.assignments.len(), 2);
    let mut tx = store.begin().await.expect("begin");
    let (rows, versions) = if db.db == ax_tests::Db::Postgres {
        tx.instances().read_versioned(&ids).await.expect("read back")
    } else {
        Default::default()
    };
    tx.rollback().await.expect("rollback");
    for a in &claimed.assignments {
        let Some((kept, version)) = a.stored() else {
            assert_ne!(db.db, ax_tests::Db::Postgres, "a claim on PostgreSQL keeps its rows");
            continue;
        };
        let id = a.instance.id;
        assert_eq!(Some(&kept), rows.get(&id), "instance {id}: the kept row differs from the row as read");
        assert_eq!(Some(&version), versions.get(&id), "instance {id}: version");
        assert_eq!(kept.status, InstanceStatus::Dispatched);
        assert!(!kept.trail.held.is_empty(), "the row holds its trail so far: {:?}", kept.trail);
    }
}

on_every_backend!(
    every_scenario_gives_the_same_trail_with_the_trail_in_the_row,
    a_claimed_row_kept_for_the_group_commit_is_the_row_as_read
);
