//! Instance life with real worker streams, on SQLite, PostgreSQL and MySQL/MariaDB.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{
        self, RawWorker, cancel, create, cron, event_time, get, hello, instance_of, manual, once_after, result,
        retries, spec, steps, trigger, utc, wait_status,
    },
    eventually, on_every_backend,
};
use ax_worker::{Context, HandlerError, Worker, WorkerBuilder};
use tokio::{sync::oneshot, task::JoinHandle};

const LONG: Duration = Duration::from_secs(20);

/// Runs an SDK worker in this process until the returned sender fires (or is dropped).
fn sdk_worker(
    endpoint: &str,
    app: &str,
    capacity: u32,
    f: impl FnOnce(WorkerBuilder) -> WorkerBuilder,
) -> (JoinHandle<Result<(), ax_worker::WorkerError>>, oneshot::Sender<()>) {
    let worker =
        f(Worker::builder().endpoint(endpoint).app(app).capacity(capacity).shutdown_deadline(Duration::from_secs(2)))
            .build()
            .expect("worker");
    let (stop, stopped) = oneshot::channel::<()>();
    let h = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    (h, stop)
}

async fn cron_task_with_seconds_runs_on_a_worker_and_ends_success_with_a_full_trail(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 2, |b| {
        b.worker_id("w1").handler("echo", |ctx: Context| async move { Ok::<_, HandlerError>(ctx.params_raw.clone()) })
    });
    let mut s = spec("every-second", "app", "echo", cron("* * * * * *"));
    s.params = r#"{"hello":"world"}"#.into();
    create(&mut admin, s).await;
    let done = eventually(LONG, "a SUCCESS instance", || {
        let mut admin = admin.clone();
        async move {
            let list = admin
                .list_instances(pb::ListInstancesRequest {
                    task_name: "every-second".into(),
                    status: S::Success as i32,
                    ..Default::default()
                })
                .await
                .expect("list")
                .into_inner()
                .instances;
            list.into_iter().last()
        }
    })
    .await;
    admin.disable_task(pb::DisableTaskRequest { name: "every-second".into() }).await.expect("disable");
    assert_eq!(done.attempt, 1);
    assert_eq!(done.worker_id, "w1");
    assert_eq!(done.output, r#"{"hello":"world"}"#);
    assert!(done.idempotency_key.starts_with("fire:"));
    let (_, events) = get(&mut admin, done.id).await;
    assert_eq!(
        steps(&events),
        vec![
            ("UNSPECIFIED".into(), "PENDING".into(), 0),
            ("PENDING".into(), "DISPATCHED".into(), 1),
            ("DISPATCHED".into(), "RUNNING".into(), 1),
            ("RUNNING".into(), "SUCCESS".into(), 1),
        ]
    );
    let t = |e: &pb::InstanceEvent| e.time.as_ref().map(|t| (t.seconds, t.nanos)).unwrap_or_default();
    assert!(events.windows(2).all(|w| t(&w[0]) <= t(&w[1])), "events are in time order");
    assert!(events.iter().skip(1).all(|e| e.worker_id == "w1" && !e.scheduler_id.is_empty()));
    // The instance was available when it was due.
    assert_eq!(done.available_time, done.trigger_time);
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn a_worker_with_capacity_two_never_runs_more_than_two_at_once(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("burst", "app", "count", manual())).await;
    let mut ids = Vec::new();
    for i in 0..20 {
        ids.push(trigger(&mut admin, "burst", &format!("k{i}")).await);
    }
    let now = Arc::new(AtomicU32::new(0));
    let max = Arc::new(AtomicU32::new(0));
    let (n, m) = (now.clone(), max.clone());
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 2, move |b| {
        b.handler("count", move |_ctx: Context| {
            let (n, m) = (n.clone(), m.clone());
            async move {
                let c = n.fetch_add(1, Ordering::SeqCst) + 1;
                m.fetch_max(c, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                n.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, HandlerError>(())
            }
        })
    });
    for id in ids {
        wait_status(&mut admin, id, S::Success, LONG).await;
    }
    assert_eq!(max.load(Ordering::SeqCst), 2, "at most 2 at once, and the worker did use both slots");
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn timeout_cancels_the_handler_and_the_retry_succeeds_on_attempt_two(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("slow", "app", "slow-once", manual());
    s.timeout = Some(client::dur(Duration::from_secs(1)));
    s.retry_policy = Some(retries(1, Duration::from_millis(300)));
    create(&mut admin, s).await;
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let flag = saw_cancel.clone();
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 1, move |b| {
        b.handler("slow-once", move |ctx: Context| {
            let flag = flag.clone();
            async move {
                if ctx.attempt == 1 {
                    ctx.cancellation().cancelled().await;
                    flag.store(true, Ordering::SeqCst);
                    return Err(HandlerError::retryable("stopped by cancel"));
                }
                Ok(())
            }
        })
    });
    let id = trigger(&mut admin, "slow", "one").await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.attempt, 2);
    assert_eq!(done.failures, 1);
    assert!(saw_cancel.load(Ordering::SeqCst), "the handler saw the Cancel");
    let (_, events) = get(&mut admin, id).await;
    let s = steps(&events);
    assert!(s.contains(&("RUNNING".into(), "TIMEOUT".into(), 1)), "{s:?}");
    assert!(s.contains(&("TIMEOUT".into(), "PENDING".into(), 1)), "{s:?}");
    assert!(s.contains(&("RUNNING".into(), "SUCCESS".into(), 2)), "{s:?}");
    let retry =
        events.iter().find(|e| e.to_status == S::Pending as i32 && e.from_status == S::Timeout as i32).expect("retry");
    assert!(retry.reason.starts_with("retry 1/1 in 300ms"), "{}", retry.reason);
    // The late FAILED result of attempt 1 (after the cancel) was acknowledged and ignored.
    eventually(LONG, "the ignored late result to be recorded", || {
        let mut admin = admin.clone();
        async move {
            let (_, events) = get(&mut admin, id).await;
            events.iter().any(|e| e.attempt == 1 && e.reason.contains("ignored FAILED result")).then_some(())
        }
    })
    .await;
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn cancel_of_a_running_instance_reaches_the_handler(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("long", "app", "wait", manual())).await;
    let (started_tx, started_rx) = tokio::sync::mpsc::channel::<()>(1);
    let (canceled_tx, mut canceled_rx) = tokio::sync::mpsc::channel::<()>(1);
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 1, move |b| {
        b.handler("wait", move |ctx: Context| {
            let (started, canceled) = (started_tx.clone(), canceled_tx.clone());
            async move {
                let _ = started.send(()).await;
                ctx.cancellation().cancelled().await;
                let _ = canceled.send(()).await;
                Err::<(), _>(HandlerError::fatal("canceled"))
            }
        })
    });
    let id = trigger(&mut admin, "long", "one").await;
    let mut started_rx = started_rx;
    tokio::time::timeout(LONG, started_rx.recv()).await.expect("handler started");
    wait_status(&mut admin, id, S::Running, LONG).await;
    let r = cancel(&mut admin, id, "operator says stop").await;
    assert_eq!(r.status, S::Canceled as i32);
    tokio::time::timeout(LONG, canceled_rx.recv()).await.expect("the handler's token fired");
    let (_, events) = get(&mut admin, id).await;
    let cancel = events.iter().find(|e| e.to_status == S::Canceled as i32).expect("cancel event");
    assert!(cancel.reason.contains("operator says stop"));
    // Canceling again is refused and changes nothing.
    let err = admin.cancel_instance(pb::CancelInstanceRequest { id, reason: String::new() }).await.expect_err("final");
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn late_duplicate_and_foreign_results_change_nothing(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("fenced", "raw", "h", manual());
    s.timeout = Some(client::dur(Duration::from_secs(1)));
    s.retry_policy = Some(retries(1, Duration::ZERO));
    create(&mut admin, s).await;
    // Capacity 2: attempt 1 still occupies a slot (no result yet) when attempt 2 arrives.
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 2, 1)).await.expect("connect");
    let id = trigger(&mut admin, "fenced", "one").await;
    let a1 = w.expect("Assign 1", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert_eq!((a1.instance_id, a1.attempt), (id, 1));
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: 1 })).await;
    // Attempt 1 times out; axd sends Cancel; a new credit lets attempt 2 come to this stream.
    let c = w.expect("Cancel of attempt 1", |m| if let In::Cancel(c) = m { Some(c.clone()) } else { None }).await;
    assert_eq!((c.instance_id, c.attempt), (id, 1));
    w.send(Out::Credit(pb::Credit { grant: 1, reset: false })).await;
    let a2 = w.expect("Assign 2", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert_eq!(a2.attempt, 2);
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: 2 })).await;
    wait_status(&mut admin, id, S::Running, LONG).await;

    // A late SUCCESS from attempt 1 is acknowledged but changes nothing.
    w.send(result(id, 1, true)).await;
    let ack =
        w.expect("ack of the late result", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
    assert!(!ack.applied);
    assert!(ack.note.contains("attempt 1 is not current (current: 2)"), "{}", ack.note);
    let (inst, _) = get(&mut admin, id).await;
    assert_eq!((inst.status, inst.attempt), (S::Running as i32, 2));

    // A worker that does not hold the attempt reports on it: acknowledged, nothing is written and
    // the answer says nothing about the instance.
    let before = get(&mut admin, id).await.1.len();
    let (mut other, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-2", "h", 1, 0)).await.expect("connect");
    other.send(result(id, 2, false)).await;
    let ack = other
        .expect("ack of the foreign result", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None })
        .await;
    assert!(!ack.applied);
    assert_eq!(ack.note, "not recorded: this session does not hold that attempt");
    let (inst, events) = get(&mut admin, id).await;
    assert_eq!(inst.status, S::Running as i32);
    assert_eq!(events.len(), before, "a foreign result writes nothing: {:?}", steps(&events));

    // The holder's result is applied; the same result again is a duplicate and changes nothing.
    w.send(result(id, 2, true)).await;
    let ack = w.expect("ack", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
    assert!(ack.applied);
    w.send(result(id, 2, false)).await;
    let dup = w.expect("ack of the duplicate", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
    assert!(!dup.applied);
    assert!(dup.note.contains("already SUCCESS"), "{}", dup.note);
    let (inst, events) = get(&mut admin, id).await;
    assert_eq!(inst.status, S::Success as i32);
    // The late result of attempt 1 and the conflicting repeat of attempt 2 are in the trail; the
    // foreign one is not.
    let ignored: Vec<_> = events.iter().filter(|e| e.reason.starts_with("ignored")).collect();
    assert_eq!(ignored.len(), 2, "every ignored result of this worker is in the trail: {:?}", steps(&events));
    axd.stop().await;
}

async fn bad_hellos_are_refused_naming_the_field(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let ch = channel(&axd.endpoint).await;
    let refused = |first: Out| {
        let ch = ch.clone();
        async move {
            let Err(status) = RawWorker::connect_with(ch, pb::WorkerMessage { msg: Some(first) }).await else {
                panic!("accepted")
            };
            status
        }
    };
    let s = refused(Out::Heartbeat(pb::Heartbeat { running: 0, seq: 0 })).await;
    assert_eq!(s.code(), tonic::Code::InvalidArgument);
    assert!(s.message().starts_with("hello: the first message must be Hello, got Heartbeat"), "{}", s.message());
    let base = hello("app", "w", "h", 4, 4);
    let cases: Vec<(pb::Hello, &str)> = vec![
        (pb::Hello { app: String::new(), ..base.clone() }, "hello.app: is required"),
        (pb::Hello { app: "Bad App".into(), ..base.clone() }, "hello.app:"),
        (pb::Hello { worker_id: String::new(), ..base.clone() }, "hello.worker_id: is required"),
        (pb::Hello { handlers: vec![], ..base.clone() }, "hello.handlers: at least one handler"),
        (pb::Hello { handlers: vec!["h".into(), "h".into()], ..base.clone() }, "hello.handlers[1]:"),
        (pb::Hello { capacity: 0, ..base.clone() }, "hello.capacity: must be 1..=10000, got 0"),
        (pb::Hello { capacity: 10_001, ..base.clone() }, "hello.capacity: must be 1..=10000, got 10001"),
        (
            pb::Hello { labels: (0..33).map(|i| (format!("k{i}"), "v".to_owned())).collect(), ..base.clone() },
            "hello.labels: has 33 labels",
        ),
        (
            pb::Hello { labels: [("k".to_owned(), "v".repeat(300))].into(), ..base.clone() },
            "hello.labels[\"k\"]: value is 300 bytes",
        ),
    ];
    for (h, want) in cases {
        let s = refused(Out::Hello(h)).await;
        assert_eq!(s.code(), tonic::Code::InvalidArgument, "{want}");
        assert!(s.message().starts_with(want), "want {want:?}, got {:?}", s.message());
    }
    // Nothing was recorded for refused sessions.
    let mut admin = axd.admin().await;
    assert!(admin.list_workers(pb::ListWorkersRequest::default()).await.expect("list").into_inner().workers.is_empty());
    axd.stop().await;
}

async fn a_rejected_or_unaccepted_assignment_returns_to_the_queue(db: &TestDb) {
    let axd =
        Axd::start(db, |o| o.ack_timeout = Some(ax_scheduler::config::HumanDuration(Duration::from_millis(1000))))
            .await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("rq", "raw", "h", manual())).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "rq", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(Out::Reject(pb::Reject { instance_id: id, attempt: a.attempt, reason: "busy".into() })).await;
    wait_status(&mut admin, id, S::Pending, LONG).await;
    // Granted again, assigned again (attempt 2), and this time never accepted: the ack timeout
    // brings it back.
    w.send(Out::Credit(pb::Credit { grant: 1, reset: false })).await;
    let a2 = w.expect("Assign 2", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert_eq!(a2.attempt, 2);
    let (_, events) = eventually(LONG, "the ack timeout", || {
        let mut admin = admin.clone();
        async move {
            let (i, e) = get(&mut admin, id).await;
            (e.iter().filter(|e| e.to_status == S::Pending as i32).count() >= 3).then_some((i, e))
        }
    })
    .await;
    let s = steps(&events);
    assert!(s.contains(&("DISPATCHED".into(), "PENDING".into(), 1)), "{s:?}");
    assert!(s.contains(&("DISPATCHED".into(), "PENDING".into(), 2)), "{s:?}");
    assert!(events.iter().any(|e| e.reason.contains("rejected by worker raw-1: busy")));
    assert!(events.iter().any(|e| e.reason.contains("did not accept it in time")));
    axd.stop().await;
}

async fn a_panicking_handler_fails_the_attempt_and_the_worker_keeps_serving(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("boom", "app", "maybe-panic", manual())).await;
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 1, |b| {
        b.handler("maybe-panic", |ctx: Context| async move {
            if ctx.params_raw.contains("panic") {
                panic!("exploded on purpose");
            }
            Ok::<_, HandlerError>("fine")
        })
    });
    let a = client::trigger_with(&mut admin, "boom", "a", r#"{"panic":true}"#).await;
    let failed = wait_status(&mut admin, a, S::Failed, LONG).await;
    assert!(failed.message.contains("exploded on purpose"), "{}", failed.message);
    let b = client::trigger_with(&mut admin, "boom", "b", "{}").await;
    assert_eq!(wait_status(&mut admin, b, S::Success, LONG).await.output, "fine");
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn fixed_delay_fires_again_after_completion_and_workers_are_listed(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 3, |b| {
        b.worker_id("lister")
            .label("zone", "a")
            .handler("quick", |_ctx: Context| async move { Ok::<_, HandlerError>(()) })
    });
    let workers = eventually(LONG, "the worker to be listed", || {
        let mut admin = admin.clone();
        async move {
            let w = admin.list_workers(pb::ListWorkersRequest::default()).await.expect("list").into_inner().workers;
            (!w.is_empty()).then_some(w)
        }
    })
    .await;
    assert_eq!(workers[0].worker_id, "lister");
    assert_eq!(workers[0].capacity, 3);
    assert_eq!(workers[0].handlers, vec!["quick".to_owned()]);
    assert_eq!(workers[0].labels.get("zone").map(String::as_str), Some("a"));
    assert_eq!(workers[0].scheduler_id, axd.running.scheduler_id());
    let delay = pb::schedule::Kind::FixedDelay(pb::IntervalSchedule {
        interval: Some(client::dur(Duration::from_secs(1))),
        start_at: None,
    });
    create(&mut admin, spec("fd", "app", "quick", delay)).await;
    let two = eventually(LONG, "two fixed-delay runs", || {
        let mut admin = admin.clone();
        async move {
            let l = admin
                .list_instances(pb::ListInstancesRequest {
                    task_name: "fd".into(),
                    status: S::Success as i32,
                    ..Default::default()
                })
                .await
                .expect("list")
                .into_inner()
                .instances;
            (l.len() >= 2).then_some(l)
        }
    })
    .await;
    admin.disable_task(pb::DisableTaskRequest { name: "fd".into() }).await.expect("disable");
    // The second fire came one interval after the first one finished.
    let (first, second) = (&two[1], &two[0]);
    let finished = first.finish_time.expect("finished");
    let fired = second.trigger_time.expect("fired");
    let gap_ms = (fired.seconds - finished.seconds) * 1000 + i64::from((fired.nanos - finished.nanos) / 1_000_000);
    assert!((990..=1010).contains(&gap_ms), "fired {gap_ms} ms after the previous run finished");
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn an_early_assignment_goes_only_to_a_holding_worker_and_starts_on_time(db: &TestDb) {
    let ms = |n| Some(ax_scheduler::config::HumanDuration(Duration::from_millis(n)));
    // The instances exist from their task's creation (look-ahead 5 s) and may go out 3.5 s before
    // they are due: assigned at once, they arrive ahead of time unless claiming and delivering one
    // takes more than 3 s (milliseconds on a loaded 2-core machine).
    let axd = Axd::start(db, |o| {
        o.trigger_lookahead = ms(5000);
        o.dispatch_ahead = ms(3500);
        // The raw workers stay silent while one holds an assignment (a session ends after 9 s).
        o.heartbeat_interval = ms(3000);
        o.ack_timeout = ms(6000);
        o.lost_worker_grace = ms(15_000);
    })
    .await;
    let mut admin = axd.admin().await;
    let mut holding_hello = hello("early", "holder", "h", 4, 4);
    holding_hello.start_after_supported = true;
    let (mut holder, _) = RawWorker::connect(channel(&axd.endpoint).await, holding_hello).await.expect("connect");
    let (mut plain, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("plain", "plain", "h", 4, 4)).await.expect("connect");
    create(&mut admin, spec("early-one", "early", "h", once_after(Duration::from_secs(4)))).await;
    create(&mut admin, spec("plain-one", "plain", "h", once_after(Duration::from_secs(4)))).await;

    // The holding worker gets its assignment ahead of time, told how long to hold it.
    let a = holder.expect("early Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    let received = chrono::Utc::now();
    let due = utc(a.trigger_time.as_ref().expect("trigger time"));
    let hold = a.start_after.expect("start_after on an early assignment");
    let hold = Duration::new(hold.seconds as u64, hold.nanos as u32);
    assert!(received < due, "assigned ahead of time: received {received}, due {due}");
    assert!(
        received + hold >= due,
        "holding start_after from receipt never starts early: {received} + {hold:?} < {due}"
    );
    tokio::time::sleep(hold).await; // this worker's hold
    holder.send(Out::Accepted(pb::Accepted { instance_id: a.instance_id, attempt: a.attempt })).await;
    holder.send(result(a.instance_id, a.attempt, true)).await;
    wait_status(&mut admin, a.instance_id, S::Success, LONG).await;
    let (_, events) = get(&mut admin, a.instance_id).await;
    assert!(event_time(&events, S::Dispatched) < due, "DISPATCHED before the fire time");
    assert!(event_time(&events, S::Running) >= due, "RUNNING not before the fire time");
    let dispatched = events.iter().find(|e| e.to_status == S::Dispatched as i32).expect("dispatched");
    assert!(dispatched.reason.contains("ahead of time, to start at"), "{}", dispatched.reason);

    // A worker that did not say it holds assignments gets its instance only once it is due.
    let p = plain.expect("plain Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    let received = chrono::Utc::now();
    let due = utc(p.trigger_time.as_ref().expect("trigger time"));
    assert!(received >= due, "a plain worker is never assigned early: received {received}, due {due}");
    assert!(p.start_after.is_none(), "no hold for an instance that is due: {:?}", p.start_after);
    axd.stop().await;
}

async fn the_sdk_holds_early_assignments_and_a_cancel_during_the_hold_stops_the_run(db: &TestDb) {
    let ms = |n| Some(ax_scheduler::config::HumanDuration(Duration::from_millis(n)));
    // Instances exist from their task's creation and may go out 6 s early: they are held for about
    // 4 s, ample time to cancel one before it is due however loaded the machine.
    let axd = Axd::start(db, |o| {
        o.trigger_lookahead = ms(8000);
        o.dispatch_ahead = ms(6000);
    })
    .await;
    let mut admin = axd.admin().await;
    type Started = Vec<(i64, chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)>;
    let started: Arc<std::sync::Mutex<Started>> = Arc::default();
    let log = started.clone();
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 4, move |b| {
        b.handler("rec", move |ctx: Context| {
            let log = log.clone();
            async move {
                log.lock().expect("lock").push((ctx.instance_id, chrono::Utc::now(), ctx.trigger_time));
                Ok::<_, HandlerError>(())
            }
        })
    });
    create(&mut admin, spec("held", "app", "rec", once_after(Duration::from_secs(4)))).await;
    create(&mut admin, spec("dropped", "app", "rec", once_after(Duration::from_millis(4500)))).await;
    create(&mut admin, spec("last", "app", "rec", once_after(Duration::from_secs(5)))).await;

    // `dropped` is assigned and held by the worker; cancel it before it is due.
    let dropped = instance_of(&admin, "dropped").await;
    wait_status(&mut admin, dropped.id, S::Dispatched, LONG).await;
    let r = cancel(&mut admin, dropped.id, "not today").await;
    assert_eq!(r.status, S::Canceled as i32);

    let held = instance_of(&admin, "held").await;
    let last = instance_of(&admin, "last").await;
    wait_status(&mut admin, held.id, S::Success, LONG).await;
    wait_status(&mut admin, last.id, S::Success, LONG).await;
    let runs = started.lock().expect("lock").clone();
    assert!(runs.iter().all(|(id, _, _)| *id != dropped.id), "the canceled hold never ran: {runs:?}");
    assert_eq!(runs.len(), 2, "held and last ran once each: {runs:?}");
    for (id, at, due) in &runs {
        assert!(at >= due, "instance {id} started at {at}, before its fire time {due}");
    }
    for i in [&held, &last] {
        let (_, events) = get(&mut admin, i.id).await;
        let due = utc(i.trigger_time.as_ref().expect("trigger time"));
        assert!(event_time(&events, S::Dispatched) < due, "{}: assigned ahead of time", i.task_name);
        assert!(event_time(&events, S::Running) >= due, "{}: accepted when it started", i.task_name);
    }
    assert_eq!(get(&mut admin, dropped.id).await.0.status, S::Canceled as i32, "the hold's result changed nothing");
    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn axd_confirms_lease_renewals_against_the_worker_s_heartbeats(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("renewed", "raw", "h", manual())).await;
    let (mut w, welcome) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 1, 1)).await.expect("connect");
    let lease_ttl = welcome.lease_ttl.expect("Welcome.lease_ttl");
    assert!(welcome.fence_margin.is_some() && welcome.server_time.is_some() && welcome.ack_timeout.is_some());
    assert_eq!((lease_ttl.seconds, lease_ttl.nanos), (2, 500_000_000), "3 heartbeats of 500 ms and 1 s of grace");
    let id = trigger(&mut admin, "renewed", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert!(a.accept_by.is_some(), "Assign carries its accept-by time");
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    // Heartbeat 1, then wait for a renewal that answers it.
    w.send(Out::Heartbeat(pb::Heartbeat { running: 1, seq: 1 })).await;
    let renewed = w
        .expect("a renewal of heartbeat 1", |m| match m {
            In::Heartbeat(h) if h.renewed_seq >= 1 => Some(h.renewed_seq),
            _ => None,
        })
        .await;
    assert_eq!(renewed, 1);
    let (inst, _) = get(&mut admin, id).await;
    assert_eq!(inst.status, S::Running as i32);
    axd.stop().await;
}

async fn a_long_handler_on_a_healthy_axd_outlives_many_leases_unfenced(db: &TestDb) {
    // Leases of 2.5 s (heartbeat 500 ms, grace 1 s): a 5 s handler lives through two of them only
    // if every renewal reaches the worker.
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("long", "app", "wait5", manual())).await;
    let fenced = Arc::new(AtomicBool::new(false));
    let flag = fenced.clone();
    let (w, stop) = sdk_worker(&axd.endpoint, "app", 1, move |b| {
        b.handler("wait5", move |ctx: Context| {
            let flag = flag.clone();
            async move {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(5)) => Ok::<_, HandlerError>(()),
                    () = ctx.cancellation().cancelled() => {
                        flag.store(true, Ordering::SeqCst);
                        Err(HandlerError::retryable("stopped"))
                    }
                }
            }
        })
    });
    let id = trigger(&mut admin, "long", "one").await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.attempt, 1);
    assert!(!fenced.load(Ordering::SeqCst), "renewed leases never stop a handler");
    let _ = stop.send(());
    let _ = w.await;
    axd.stop().await;
}

on_every_backend!(
    cron_task_with_seconds_runs_on_a_worker_and_ends_success_with_a_full_trail,
    a_worker_with_capacity_two_never_runs_more_than_two_at_once,
    timeout_cancels_the_handler_and_the_retry_succeeds_on_attempt_two,
    cancel_of_a_running_instance_reaches_the_handler,
    late_duplicate_and_foreign_results_change_nothing,
    bad_hellos_are_refused_naming_the_field,
    a_rejected_or_unaccepted_assignment_returns_to_the_queue,
    a_panicking_handler_fails_the_attempt_and_the_worker_keeps_serving,
    fixed_delay_fires_again_after_completion_and_workers_are_listed,
    an_early_assignment_goes_only_to_a_holding_worker_and_starts_on_time,
    the_sdk_holds_early_assignments_and_a_cancel_during_the_hold_stops_the_run,
    axd_confirms_lease_renewals_against_the_worker_s_heartbeats,
    a_long_handler_on_a_healthy_axd_outlives_many_leases_unfenced,
);
