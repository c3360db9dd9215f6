//! Arbitrary bytes, decoded (prost) as every AdminService request and as a WorkerMessage, are sent to
//! an axd running in this process: each one that decodes goes through the services' own validation
//! and is answered with some status, and no handler panics (issue 11, item 6). A panic hook counts
//! panics in every thread of this process, so one inside a spawned session task counts too.
//!
//! Every AdminService call is answered in bounded time with OK or a code that is the caller's:
//! never INTERNAL or UNKNOWN (axd failed), nor UNAVAILABLE or DEADLINE_EXCEEDED (axd is idle);
//! a failure prints the input (hex), the decoded request and the status (issue 33, item 10). The
//! TaskSpec strategy covers every field, 18-32 with their edges too.

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient, worker_service_client::WorkerServiceClient};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{create, hello, manual, spec, trigger},
};
use proptest::{
    prelude::*,
    test_runner::{Config, FileFailurePersistence, TestRunner},
};
use prost::Message as _;
use tonic::transport::Channel;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Where proptest keeps the seeds of inputs that failed (committed; replayed first on every run).
const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/suite/fuzz_requests.proptest-regressions");

fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One protobuf field: (number, wire type and value).
#[derive(Debug, Clone)]
enum Field {
    Varint(u32, u64),
    Fixed64(u32, u64),
    Fixed32(u32, u32),
    Bytes(u32, Vec<u8>),
}

fn encode(fields: &[Field]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        let (n, wire) = match f {
            Field::Varint(n, _) => (n, 0),
            Field::Fixed64(n, _) => (n, 1),
            Field::Bytes(n, _) => (n, 2),
            Field::Fixed32(n, _) => (n, 5),
        };
        varint(u64::from(*n) << 3 | wire, &mut out);
        match f {
            Field::Varint(_, v) => varint(*v, &mut out),
            Field::Fixed64(_, v) => out.extend_from_slice(&v.to_le_bytes()),
            Field::Fixed32(_, v) => out.extend_from_slice(&v.to_le_bytes()),
            Field::Bytes(_, b) => {
                varint(b.len() as u64, &mut out);
                out.extend_from_slice(b);
            }
        }
    }
    out
}

/// Values where validation has edges: zero, one, the ends of every integer type, negative numbers
/// as protobuf writes them, nanos past a second, the last second of year 9999, chrono's last second.
fn edgy_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        0u64..20,
        prop::sample::select(vec![
            u64::MAX,
            i64::MAX as u64,
            i64::MIN as u64,
            (-1i64) as u64,
            u64::from(u32::MAX),
            i32::MAX as u64,
            2_000_000_000,
            999_999_999,
            1_000_000_000,
            253_402_300_799,
            253_402_300_800,
            8_210_298_412_799,
            chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp() as u64,
            (-8_200_000_000_000i64) as u64,
            1001,
        ]),
    ]
}

/// Strings: names axd knows, text with control characters, JSON, cron, zones, or any characters.
fn text_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            "t",
            "app",
            "h",
            "w",
            "UTC",
            "Pacific/Kiritimati",
            "0 * * * *",
            "* * * * * *",
            "0 0 30 2 *",
            "@daily",
            "{}",
            "[[[[]]]]",
            "{\"a\":\"\\ud800\"}",
            "\u{1b}]0;x\u{7}",
            "a\0b",
            "description",
            "params",
            "labels",
            "schedule",
            "fire:1",
            "manual:1",
            "1",
            "-1",
            "",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<char>(), 0..12).prop_map(|v| v.into_iter().collect::<String>().into_bytes()),
    ]
}

fn message_bytes() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![text_bytes(), prop::collection::vec(any::<u8>(), 0..16)];
    leaf.prop_recursive(3, 48, 8, |inner| {
        let number = prop_oneof![1u32..17, 1u32..4, any::<u32>().prop_map(|n| n % 536_870_911 + 1)];
        let field = prop_oneof![
            (number.clone(), edgy_u64()).prop_map(|(n, v)| Field::Varint(n, v)),
            (number.clone(), edgy_u64()).prop_map(|(n, v)| Field::Fixed64(n, v)),
            (number.clone(), any::<u32>()).prop_map(|(n, v)| Field::Fixed32(n, v)),
            (number, inner).prop_map(|(n, b)| Field::Bytes(n, b)),
        ];
        prop::collection::vec(field, 0..8).prop_map(|f| encode(&f))
    })
}

fn text() -> impl Strategy<Value = String> {
    text_bytes().prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn ts() -> impl Strategy<Value = Option<prost_types::Timestamp>> {
    let seconds = edgy_u64().prop_map(|v| v as i64);
    let nanos = prop_oneof![0i32..1_000_000_000, any::<i32>(), Just(2_000_000_000)];
    prop::option::of((seconds, nanos).prop_map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos }))
}

fn dur() -> impl Strategy<Value = Option<prost_types::Duration>> {
    let seconds = prop_oneof![0i64..100_000, edgy_u64().prop_map(|v| v as i64)];
    let nanos = prop_oneof![0i32..1_000_000_000, any::<i32>(), Just(2_000_000_000)];
    prop::option::of((seconds, nanos).prop_map(|(seconds, nanos)| prost_types::Duration { seconds, nanos }))
}

fn schedule() -> impl Strategy<Value = Option<pb::Schedule>> {
    use pb::schedule::Kind;
    let zone = prop_oneof![text(), Just("Pacific/Kiritimati".to_owned()), Just("Etc/GMT-14".to_owned())];
    let kind = prop_oneof![
        (text(), zone, -1i32..4).prop_map(|(expression, time_zone, dialect)| Kind::Cron(pb::CronSchedule {
            expression,
            time_zone,
            dialect
        })),
        (dur(), ts()).prop_map(|(interval, start_at)| Kind::FixedRate(pb::IntervalSchedule { interval, start_at })),
        (dur(), ts()).prop_map(|(interval, start_at)| Kind::FixedDelay(pb::IntervalSchedule { interval, start_at })),
        ts().prop_map(|t| Kind::OneTime(pb::OneTimeSchedule { when: t.map(pb::one_time_schedule::When::At) })),
        dur().prop_map(|d| Kind::OneTime(pb::OneTimeSchedule { when: d.map(pb::one_time_schedule::When::After) })),
        Just(Kind::Manual(pb::ManualSchedule {})),
    ];
    prop::option::of(prop::option::of(kind).prop_map(|kind| pb::Schedule { kind }))
}

/// A count with the edges of a field limited to 1..=`max`: 0, 1, the maximum, one more, and any.
fn limit(max: u32) -> impl Strategy<Value = u32> {
    prop_oneof![0u32..3, Just(max), Just(max.saturating_add(1)), Just(u32::MAX), any::<u32>()]
}

/// Task names for chains and DAG edges: the task itself (a cycle), one that exists, any text, and
/// one more than the 32 allowed.
fn task_names() -> impl Strategy<Value = Vec<String>> {
    let name = prop_oneof![Just("t".to_owned()), Just("u".to_owned()), text()];
    prop_oneof![4 => prop::collection::vec(name, 0..3), 1 => Just(vec!["t".to_owned(); 33])]
}

/// Fields 18-36: shards, hash key, priority, limits, cooldown, the active window, excluded dates,
/// calendar, jitter, chains and the DAG, the concurrency key and the uniqueness window.
#[derive(Debug, Clone, Default)]
struct Extra {
    shards: u32,
    hash_key: String,
    priority: u32,
    max_running: Option<u32>,
    max_pending: Option<u32>,
    cooldown_after: Option<u32>,
    cooldown: Option<prost_types::Duration>,
    start_time: Option<prost_types::Timestamp>,
    end_time: Option<prost_types::Timestamp>,
    exclude_dates: Vec<String>,
    calendar: String,
    jitter: Option<prost_types::Duration>,
    chains: (Vec<String>, Vec<String>, Vec<String>),
    /// concurrency_key, concurrency_limit, unique_key, unique_for.
    keys: (String, Option<u32>, String, Option<prost_types::Duration>),
    search_params: Vec<String>,
}

fn extra() -> impl Strategy<Value = Extra> {
    let date = prop_oneof![
        prop::sample::select(vec!["2026-12-25", "2026-02-30", "9999-12-31", "0000-01-01", "2026-1-1", "2026-13-01"])
            .prop_map(str::to_owned),
        text(),
    ];
    let dates = prop_oneof![4 => prop::collection::vec(date, 0..3), 1 => Just(vec!["2026-01-01".to_owned(); 1001])];
    let key = prop_oneof![Just("k".to_owned()), Just("a".repeat(129)), text()];
    let calendar = prop_oneof![Just(String::new()), Just("cal".to_owned()), text()];
    let path = || {
        prop_oneof![
            Just(String::new()),
            Just("params.k".to_owned()),
            Just("params.a.b.c.d.e.f.g.h.i".to_owned()),
            Just("k".to_owned()),
            text()
        ]
    };
    let keys = (path(), prop::option::of(limit(100_000)), path(), dur());
    let search = prop::collection::vec(path(), 0..6);
    (
        (limit(10_000), key, prop_oneof![0u32..10, Just(10), any::<u32>()], prop::option::of(limit(100_000))),
        (prop::option::of(limit(100_000)), prop::option::of(limit(10)), dur(), ts(), ts()),
        (dates, calendar, dur(), (task_names(), task_names(), task_names())),
        (keys, search),
    )
        .prop_map(
            |(
                (shards, hash_key, priority, max_running),
                (max_pending, cooldown_after, cooldown, start_time, end_time),
                (exclude_dates, calendar, jitter, chains),
                (keys, search_params),
            )| Extra {
                shards,
                hash_key,
                priority,
                max_running,
                max_pending,
                cooldown_after,
                cooldown,
                start_time,
                end_time,
                exclude_dates,
                calendar,
                jitter,
                chains,
                keys,
                search_params,
            },
        )
}

fn task_spec() -> impl Strategy<Value = Option<pb::TaskSpec>> {
    let labels = prop::collection::hash_map(text(), text(), 0..3);
    let retry =
        prop::option::of((0u32..120, prop::collection::vec(dur().prop_filter_map("some", |d| d), 0..3)).prop_map(
            |(max_retries, delays)| pb::RetryPolicy {
                max_retries,
                backoff: Some(pb::Backoff { kind: Some(pb::backoff::Kind::List(pb::ListBackoff { delays })) }),
            },
        ));
    let selector = prop_oneof![Just(String::new()), Just("gpu=true,zone in (a,b)".to_owned()), text()];
    let spec = (
        (text(), text(), text(), text(), schedule(), text()),
        (dur(), 0u32..1100, -1i32..5, dur(), retry, labels),
        (selector, -1i32..4, prop::option::of(extra())),
    )
        .prop_map(
            |(
                (name, app, handler, description, schedule, params),
                (misfire_threshold, max_catch_up, routing, timeout, retry_policy, labels),
                (selector, retry_on, extra),
            )| {
                // Most specs leave fields 18-32 unset, so that the earlier ones are reached too.
                let x = extra.unwrap_or_default();
                pb::TaskSpec {
                    name,
                    app,
                    handler,
                    description,
                    schedule,
                    params,
                    misfire_threshold,
                    max_catch_up,
                    routing,
                    timeout,
                    retry_policy,
                    labels,
                    selector,
                    retry_on,
                    shards: x.shards,
                    hash_key: x.hash_key,
                    priority: x.priority,
                    max_running: x.max_running,
                    max_pending: x.max_pending,
                    cooldown_after: x.cooldown_after,
                    cooldown: x.cooldown,
                    start_time: x.start_time,
                    end_time: x.end_time,
                    exclude_dates: x.exclude_dates,
                    calendar: x.calendar,
                    jitter: x.jitter,
                    on_success: x.chains.0,
                    on_failure: x.chains.1,
                    after_all: x.chains.2,
                    concurrency_key: x.keys.0,
                    concurrency_limit: x.keys.1,
                    unique_key: x.keys.2,
                    unique_for: x.keys.3,
                    search_params: x.search_params,
                    ..Default::default()
                }
            },
        );
    prop::option::of(spec)
}

fn worker_message() -> impl Strategy<Value = Vec<u8>> {
    use pb::worker_message::Msg;
    let id = prop_oneof![1i64..4, any::<i64>()];
    let attempt = prop_oneof![0u32..3, any::<u32>()];
    let labels = prop::collection::hash_map(text(), text(), 0..3);
    let msg = prop_oneof![
        (text(), text(), prop::collection::vec(text(), 0..3), 0u32..12_000, labels, text()).prop_map(
            |(app, worker_id, handlers, capacity, labels, client)| Msg::Hello(pb::Hello {
                app,
                worker_id,
                handlers,
                capacity,
                labels,
                client,
                ..Default::default()
            })
        ),
        (any::<u32>(), any::<u64>()).prop_map(|(running, seq)| Msg::Heartbeat(pb::Heartbeat { running, seq })),
        (any::<u32>(), any::<bool>()).prop_map(|(grant, reset)| Msg::Credit(pb::Credit { grant, reset })),
        (id.clone(), attempt.clone())
            .prop_map(|(instance_id, attempt)| Msg::Accepted(pb::Accepted { instance_id, attempt })),
        (id.clone(), attempt.clone(), text()).prop_map(|(instance_id, attempt, reason)| Msg::Reject(pb::Reject {
            instance_id,
            attempt,
            reason
        })),
        (id.clone(), attempt.clone(), any::<u32>(), text()).prop_map(|(instance_id, attempt, percent, message)| {
            Msg::Progress(pb::Progress { instance_id, attempt, percent, message })
        }),
        (id.clone(), attempt.clone(), -1i32..6, text(), ts()).prop_map(|(instance_id, attempt, level, message, at)| {
            Msg::Log(pb::Log { instance_id, attempt, level, message, at })
        }),
        (id, attempt, -1i32..4, text(), text(), ts()).prop_map(
            |(instance_id, attempt, outcome, message, output, finished_at)| Msg::Result(pb::Result {
                instance_id,
                attempt,
                outcome,
                message,
                output,
                retryable: true,
                finished_at,
            })
        ),
    ];
    prop::option::of(msg).prop_map(|msg| pb::WorkerMessage { msg }.encode_to_vec())
}

/// A valid cron previewed in a zone ahead of UTC from the edges of time (this panicked in chrono).
fn preview_at_the_edges() -> impl Strategy<Value = Vec<u8>> {
    let last = chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp();
    let from = prop::sample::select(vec![last, last - 3600, 253_402_300_799, 253_402_300_800, 1_800_000_000]);
    let expression = prop::sample::select(vec!["0 * * * *", "* * * * * *", "0 0 12 ? * MON-FRI"]);
    let zone = prop::sample::select(vec!["Pacific/Kiritimati", "Etc/GMT-14", "UTC", "Asia/Kathmandu"]);
    (from, expression, zone).prop_map(|(seconds, expression, time_zone)| {
        let cron = pb::CronSchedule { expression: expression.into(), time_zone: time_zone.into(), dialect: 0 };
        pb::PreviewScheduleRequest {
            schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Cron(cron)) }),
            from: Some(prost_types::Timestamp { seconds, nanos: 0 }),
            count: 3,
            ..Default::default()
        }
        .encode_to_vec()
    })
}

/// Encodings of well-formed requests, so that most inputs get past decoding into validation.
fn typed() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        task_spec().prop_map(|task| pb::CreateTaskRequest { task }.encode_to_vec()),
        (
            prop::collection::vec(task_spec(), 0..4),
            any::<bool>(),
            prop::collection::vec(text(), 0..3),
            any::<bool>(),
            text()
        )
            .prop_map(|(tasks, prune, apps, dry_run, change_note)| pb::ApplyTasksRequest {
                tasks: tasks.into_iter().flatten().collect(),
                prune,
                apps,
                dry_run,
                change_note,
            }
            .encode_to_vec()),
        (text(), task_spec(), prop::collection::vec(text(), 0..3)).prop_map(|(name, task, paths)| {
            pb::UpdateTaskRequest { name, task, update_mask: Some(prost_types::FieldMask { paths }) }.encode_to_vec()
        }),
        (schedule(), ts(), prop_oneof![0u32..20, any::<u32>()]).prop_map(|(schedule, from, count)| {
            pb::PreviewScheduleRequest { schedule, from, count, ..Default::default() }.encode_to_vec()
        }),
        preview_at_the_edges(),
        (text(), prop::option::of(text()), text(), dur()).prop_map(|(name, params, idempotency_key, wait)| {
            pb::TriggerTaskRequest { name, params, idempotency_key, when: None, wait, tags: Default::default() }
                .encode_to_vec()
        }),
        (prop_oneof![1i64..4, any::<i64>()], any::<bool>()).prop_map(|(id, logs)| pb::WatchInstanceRequest {
            id,
            logs
        }
        .encode_to_vec()),
        (prop_oneof![1i64..4, any::<i64>()], text())
            .prop_map(|(id, reason)| pb::CancelInstanceRequest { id, reason }.encode_to_vec()),
        (
            prop_oneof![Just("app".to_owned()), text()],
            prop_oneof![Just("ping".to_owned()), text()],
            prop_oneof![Just(r#"{"a":1}"#.to_owned()), Just("[1]".to_owned()), text()],
            text()
        )
            .prop_map(|(app, name, payload, id)| pb::PublishEventRequest { app, name, payload, id }.encode_to_vec()),
        (text(), -1i32..10, any::<u32>(), text(), ts(), ts()).prop_map(
            |(task_name, status, page_size, page_token, start_time, end_time)| {
                pb::ListInstancesRequest {
                    task_name,
                    status,
                    page_size,
                    page_token,
                    start_time,
                    end_time,
                    tags: [("team".to_owned(), "a".to_owned())].into(),
                    params: [("params.k".to_owned(), "1".to_owned())].into(),
                }
                .encode_to_vec()
            }
        ),
        (any::<i64>(), any::<i64>(), any::<u32>()).prop_map(|(id, after_seq, limit)| pb::GetInstanceLogsRequest {
            id,
            after_seq,
            limit
        }
        .encode_to_vec()),
        (
            -1i32..5,
            (text(), text(), -1i32..10, ts(), ts(), any::<i64>(), prop::collection::vec(any::<i64>(), 0..3)),
            any::<bool>(),
            prop_oneof![0u32..20, any::<u32>()],
            text()
        )
            .prop_map(
                |(
                    action,
                    (task_name, app, status, start_time, end_time, max_id, ids),
                    dry_run,
                    max_instances,
                    reason,
                )| {
                    let selector = pb::InstanceSelector {
                        task_name,
                        app,
                        status,
                        start_time,
                        end_time,
                        max_id,
                        ids,
                        tags: Default::default(),
                        params: Default::default(),
                    };
                    pb::BulkInstancesRequest { action, selector: Some(selector), dry_run, max_instances, reason }
                        .encode_to_vec()
                }
            ),
        text().prop_map(|name| pb::GetTaskRequest { name }.encode_to_vec()),
        (text(), ts(), prop_oneof![0u32..120, any::<u32>()]).prop_map(|(name, at, limit)| pb::ExplainTaskRequest {
            name,
            at,
            limit
        }
        .encode_to_vec()),
        worker_message(),
    ]
    .boxed()
}

/// Well-formed encodings, some with a byte changed or cut short, protobuf-shaped bytes, and noise.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let mutated = (typed(), any::<usize>(), any::<u8>(), 0u8..3).prop_map(|(mut b, at, v, how)| {
        if !b.is_empty() {
            let i = at % b.len();
            match how {
                0 => b[i] = v,
                1 => b.truncate(i),
                _ => {}
            }
        }
        b
    });
    prop_oneof![
        3 => typed(),
        3 => worker_message(),
        2 => mutated,
        2 => message_bytes(),
        1 => prop::collection::vec(any::<u8>(), 0..200),
    ]
}

/// The longest an AdminService call may take on an idle axd with a small database.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// Codes that are never an answer to a request on an idle axd: INTERNAL and UNKNOWN say axd failed,
/// UNAVAILABLE and DEADLINE_EXCEEDED that it could not answer.
fn unclean(code: tonic::Code) -> bool {
    use tonic::Code::{DeadlineExceeded, Internal, Unavailable, Unknown};
    matches!(code, Internal | Unknown | Unavailable | DeadlineExceeded)
}

/// Decodes `b` as each AdminService request and makes each call that decodes, each within
/// [`CALL_LIMIT`]: the number of calls, and a line for each answered with an unclean code (see
/// [`unclean`]) or not in time.
async fn admin_calls(admin: &AdminServiceClient<Channel>, b: &[u8]) -> (usize, Vec<String>) {
    let mut calls = 0;
    let mut wrong = Vec::new();
    macro_rules! call {
        ($($rpc:ident($ty:ty)),+ $(,)?) => {$(
            if let Ok(mut req) = <$ty>::decode(b) {
                tame(&mut req);
                calls += 1;
                let shown = format!("{req:?}");
                match tokio::time::timeout(CALL_LIMIT, admin.clone().$rpc(req)).await {
                    Err(_) => wrong.push(format!("{}({shown}): no answer within {CALL_LIMIT:?}", stringify!($rpc))),
                    Ok(Err(s)) if unclean(s.code()) => {
                        wrong.push(format!("{}({shown}): {:?}: {}", stringify!($rpc), s.code(), s.message()))
                    }
                    Ok(_) => {}
                }
            }
        )+};
    }
    call!(
        create_task(pb::CreateTaskRequest),
        get_task(pb::GetTaskRequest),
        list_tasks(pb::ListTasksRequest),
        update_task(pb::UpdateTaskRequest),
        delete_task(pb::DeleteTaskRequest),
        apply_tasks(pb::ApplyTasksRequest),
        enable_task(pb::EnableTaskRequest),
        disable_task(pb::DisableTaskRequest),
        trigger_task(pb::TriggerTaskRequest),
        publish_event(pb::PublishEventRequest),
        preview_schedule(pb::PreviewScheduleRequest),
        list_instances(pb::ListInstancesRequest),
        get_instance(pb::GetInstanceRequest),
        cancel_instance(pb::CancelInstanceRequest),
        retry_instance(pb::RetryInstanceRequest),
        bulk_instances(pb::BulkInstancesRequest),
        get_instance_logs(pb::GetInstanceLogsRequest),
        list_workers(pb::ListWorkersRequest),
        list_schedulers(pb::ListSchedulersRequest),
        get_cluster_stats(pb::GetClusterStatsRequest),
        explain_task(pb::ExplainTaskRequest),
    );
    // A watch answers at once (its first update, or an error) and is then dropped.
    if let Ok(req) = pb::WatchInstanceRequest::decode(b) {
        calls += 1;
        let shown = format!("{req:?}");
        let first = tokio::time::timeout(CALL_LIMIT, async {
            let mut watch = admin.clone().watch_instance(req).await?.into_inner();
            tokio_stream::StreamExt::next(&mut watch).await.transpose()
        });
        match first.await {
            Err(_) => wrong.push(format!("watch_instance({shown}): no first answer within {CALL_LIMIT:?}")),
            Ok(Err(s)) if unclean(s.code()) => {
                wrong.push(format!("watch_instance({shown}): {:?}: {}", s.code(), s.message()))
            }
            Ok(_) => {}
        }
    }
    (calls, wrong)
}

/// A request as fuzzed, made to answer within [`CALL_LIMIT`]: a TriggerTask wait (valid up to 10
/// minutes) is cut to a second; whether it is refused or kept is still checked.
fn tame<T: std::any::Any>(req: &mut T) {
    if let Some(t) = (req as &mut dyn std::any::Any).downcast_mut::<pb::TriggerTaskRequest>()
        && let Some(w) = &mut t.wait
        && w.seconds >= 1
        && w.seconds <= 600
    {
        *w = prost_types::Duration { seconds: 1, nanos: 0 };
    }
}

/// Sends `m` on a worker stream (after a valid Hello unless `first`), closes the sending side and
/// reads until axd ends the stream.
async fn worker_call(channel: Channel, m: pb::WorkerMessage, first: bool) {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    if !first {
        let h = hello("app", &format!("w-fuzz-{:x}", fastrand::u32(..)), "h", 2, 2);
        tx.send(pb::WorkerMessage { msg: Some(pb::worker_message::Msg::Hello(h)) }).await.expect("send");
    }
    tx.send(m).await.expect("send");
    drop(tx);
    let mut client = WorkerServiceClient::new(channel);
    let Ok(resp) = client.connect(tokio_stream::wrappers::ReceiverStream::new(rx)).await else { return };
    let mut inbound = resp.into_inner();
    // Until axd ends the stream, or a panic (a session task that panicked never ends its stream).
    let before = PANICS.load(Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match tokio::time::timeout(Duration::from_millis(50), inbound.message()).await {
            Ok(Ok(Some(_))) => {}
            Ok(_) => return,
            Err(_) if PANICS.load(Ordering::SeqCst) != before => return,
            Err(_) => assert!(tokio::time::Instant::now() < deadline, "axd ends a stream whose worker closed its side"),
        }
    }
}

#[test]
fn arbitrary_bytes_decoded_as_requests_never_panic_a_handler() {
    // Generating nested requests takes more stack than a test thread's 2 MiB in debug builds.
    let run = std::thread::Builder::new().stack_size(64 << 20).spawn(fuzz).expect("thread");
    run.join().expect("the fuzz run passes");
}

fn fuzz() {
    count_panics();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let db = rt.block_on(TestDb::create(Db::Sqlite)).expect("a SQLite database");
    let axd = rt.block_on(Axd::start(&db, |_| {}));
    let mut admin = rt.block_on(axd.admin());
    // Something for names and ids in the bytes to find.
    rt.block_on(async {
        create(&mut admin, spec("t", "app", "h", manual())).await;
        trigger(&mut admin, "t", "k").await;
    });
    let decoded = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 800,
        // An input that once failed is tried first on every run (the file is committed).
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        // A panic leaves axd's state odd (a session that never ends): report the input as found.
        max_shrink_iters: 0,
        ..Config::default()
    });
    let outcome = runner.run(&bytes(), |b| {
        let before = PANICS.load(Ordering::SeqCst);
        let (calls, wrong) = rt.block_on(async {
            let answered = admin_calls(&admin, &b).await;
            if let Ok(m) = pb::WorkerMessage::decode(&b[..]) {
                let channel = channel(&axd.endpoint).await;
                worker_call(channel.clone(), m.clone(), false).await;
                worker_call(channel, m, true).await;
            }
            answered
        });
        decoded.fetch_add(calls, Ordering::Relaxed);
        prop_assert_eq!(PANICS.load(Ordering::SeqCst), before, "this input panicked axd (see the panic above)");
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        prop_assert!(wrong.is_empty(), "input {hex}:\n{}", wrong.join("\n"));
        Ok(())
    });
    // A panic after the last case (in a session still closing) counts too.
    rt.block_on(axd.stop());
    rt.block_on(db.cleanup());
    outcome.expect("no request panics axd");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a request panicked axd");
    assert!(decoded.load(Ordering::Relaxed) > 200, "most inputs decode as some request");
}
