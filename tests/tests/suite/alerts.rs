//! Alerts end to end: a delivery survives an axd killed while it waits for the webhook (the next axd
//! sends the same delivery id again), a final failure reaches the webhook signed so the receiver can
//! verify it, failed attempts are retried and then marked failed, and bad rules or refused targets
//! are INVALID_ARGUMENT with nothing stored.

use std::time::Duration;

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient, scheduler_message::Msg as In};
use ax_scheduler::alerts::{
    AlertEvent, Delivery, DeliveryStatus,
    http::Sender,
    sign::{DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify},
};
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, hello, manual, result, spec, trigger},
    on_every_backend,
    procs::AxdProcess,
    webhook::{Received, Receiver},
};
use tonic::transport::Channel;

const SECRET: &str = "s3cret-of-this-webhook";
const LONG: Duration = Duration::from_secs(30);

fn rule(name: &str, url: &str, events: &[&str]) -> pb::AlertRuleSpec {
    pb::AlertRuleSpec {
        name: name.into(),
        app: "billing".into(),
        events: events.iter().map(|e| (*e).to_owned()).collect(),
        url: url.into(),
        secret: SECRET.into(),
        ..Default::default()
    }
}

/// What a receiver does with a request: checks the signature over `timestamp.body` with the
/// webhook's secret, and returns the body.
fn verified(r: &Received) -> serde_json::Value {
    let ts: i64 = r.header(TIMESTAMP_HEADER).parse().expect("X-Ax-Timestamp is Unix seconds");
    assert!(
        verify(SECRET.as_bytes(), ts, &r.body, r.header(SIGNATURE_HEADER)),
        "the signature {:?} does not verify",
        r.header(SIGNATURE_HEADER)
    );
    assert!((chrono::Utc::now().timestamp() - ts).abs() < 300, "the timestamp is now");
    serde_json::from_slice(&r.body).expect("JSON body")
}

async fn deliveries(admin: &mut AdminServiceClient<Channel>, rule: &str) -> Vec<pb::AlertDelivery> {
    let req = pb::ListAlertDeliveriesRequest { rule: rule.into(), ..Default::default() };
    admin.list_alert_deliveries(req).await.expect("list deliveries").into_inner().deliveries
}

/// Polls the deliveries of `rule` until `done` holds for one of them (panics after `within`).
async fn wait_delivery(
    admin: &mut AdminServiceClient<Channel>,
    rule: &str,
    within: Duration,
    done: impl Fn(&pb::AlertDelivery) -> bool,
) -> pb::AlertDelivery {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let list = deliveries(admin, rule).await;
        if let Some(d) = list.iter().find(|d| done(d)) {
            return d.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "no such delivery within {within:?}: {list:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn an_alert_is_delivered_once_after_axd_is_killed_mid_delivery(db: &TestDb) {
    // The first request is read and never answered: the axd sending it is killed while it waits.
    let receiver = Receiver::start(|n| if n == 0 { None } else { Some(200) }).await;
    let dir = ax_tests::ScratchDir::new("alerts");
    let args = [
        "--database-url",
        db.url.as_str(),
        "--listen",
        "127.0.0.1:0",
        "--poll-interval",
        "200ms",
        "--alert-allow-private-targets",
        // Long enough that the first axd is killed well before it would give up on the response.
        "--alert-timeout",
        "3s",
    ];
    let mut first = AxdProcess::start(&args, &dir.join("axd-1.log")).await;
    let mut admin = AdminServiceClient::new(channel(&format!("http://{}", first.addr)).await);
    admin
        .create_alert_rule(pb::CreateAlertRuleRequest {
            rule: Some(rule("pager", &receiver.url("/hook"), &["final_failure"])),
        })
        .await
        .expect("create rule");
    let id = admin
        .test_alert_rule(pb::TestAlertRuleRequest { name: "pager".into() })
        .await
        .expect("test")
        .into_inner()
        .delivery_id;
    let got = receiver.wait_for(1, LONG).await;
    assert_eq!(got[0].header(DELIVERY_HEADER), id.to_string());
    first.kill_hard().await;

    // Another axd takes the delivery over once the dead one's claim lapses (2 x 3 s + 5 s).
    let second = AxdProcess::start(&args, &dir.join("axd-2.log")).await;
    let mut admin = AdminServiceClient::new(channel(&format!("http://{}", second.addr)).await);
    let got = receiver.wait_for(2, LONG).await;
    let d = wait_delivery(&mut admin, "pager", LONG, |d| d.status == "delivered").await;
    assert_eq!((d.id, d.attempts), (id, 2));
    let ids: std::collections::BTreeSet<&str> = got.iter().map(|r| r.header(DELIVERY_HEADER)).collect();
    assert_eq!(ids.len(), 1, "one distinct delivery, sent twice: {ids:?}");
    for r in &got {
        assert_eq!(r.request_line, "POST /hook HTTP/1.1");
        let body = verified(r);
        assert_eq!(body["delivery_id"], id.to_string());
        assert_eq!((body["event"].as_str(), body["rule"].as_str()), (Some("test"), Some("pager")));
    }
    assert_eq!(got[0].body, got[1].body, "a repeat carries the same body");
    assert_eq!(receiver.received().len(), 2, "delivered: not sent again");
}

async fn a_final_failure_reaches_the_webhook_signed(db: &TestDb) {
    let receiver = Receiver::start(|_| Some(204)).await;
    let axd = Axd::start(db, |o| {
        o.alert_allow_private_targets = Some(true);
        o.metrics_listen = Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("nightly", "billing", "h", manual())).await;
    let r = rule("failures", &receiver.url("/ax?team=payments"), &["final_failure", "timeout"]);
    let stored = admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(r) }).await.expect("create");
    assert_eq!(stored.into_inner().rule.expect("rule").events, vec!["final_failure", "timeout"]);
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("billing", "w1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "nightly", "one").await;
    w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(result(id, 1, false)).await;

    let got = receiver.wait_for(1, LONG).await;
    assert_eq!(got[0].request_line, "POST /ax?team=payments HTTP/1.1");
    assert_eq!(got[0].header("content-type"), "application/json");
    assert_eq!(got[0].header("x-ax-event"), "final_failure");
    let body = verified(&got[0]);
    assert_eq!(body["event"], "final_failure");
    assert_eq!(body["app"], "billing");
    assert_eq!(body["task"], "nightly");
    assert_eq!(body["instance_id"], id);
    assert_eq!(body["attempt"], 1);
    assert!(body["message"].as_str().unwrap_or_default().starts_with("handler failed"), "{body}");
    let d = wait_delivery(&mut admin, "failures", LONG, |d| d.status == "delivered").await;
    assert_eq!(d.id.to_string(), got[0].header(DELIVERY_HEADER));
    assert_eq!((d.event.as_str(), d.task.as_str(), d.attempts), ("final_failure", "nightly", 1));
    // The delivery is counted (the counter is the process's: other tests here may add to it).
    let metrics = scrape(axd.running.metrics_addr.expect("metrics")).await;
    let delivered = metrics
        .lines()
        .find_map(|l| l.strip_prefix("ax_alert_deliveries_total{result=\"delivered\"} ")?.parse::<f64>().ok());
    assert!(delivered.is_some_and(|n| n >= 1.0), "{metrics}");
    axd.stop().await;
}

/// `GET /metrics` from axd's metrics address.
async fn scrape(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect to /metrics");
    let req = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out
}

async fn failed_attempts_are_retried_with_backoff_then_marked_failed(db: &TestDb) {
    let receiver = Receiver::start(|_| Some(503)).await;
    let axd = Axd::start(db, |o| {
        o.alert_allow_private_targets = Some(true);
        o.alert_max_attempts = Some(3);
        o.alert_retry_backoff = Some(ax_scheduler::config::HumanDuration(Duration::from_millis(100)));
    })
    .await;
    let mut admin = axd.admin().await;
    admin
        .create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(rule("flaky", &receiver.url("/"), &["misfire"])) })
        .await
        .expect("create");
    admin.test_alert_rule(pb::TestAlertRuleRequest { name: "flaky".into() }).await.expect("test");
    let d = wait_delivery(&mut admin, "flaky", LONG, |d| d.status == "failed").await;
    assert_eq!(d.attempts, 3);
    assert!(d.last_error.contains("HTTP 503") && d.last_error.contains("gave up after 3 attempts"), "{}", d.last_error);
    let got = receiver.received();
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|r| r.header(DELIVERY_HEADER) == d.id.to_string()), "every attempt has the same id");
    axd.stop().await;
}

async fn bad_rules_and_refused_targets_are_invalid_argument_and_store_nothing(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("nightly", "billing", "h", manual())).await;
    create(&mut admin, spec("elsewhere", "shop", "h", manual())).await;
    let ok = rule("r", "https://hooks.example.com/ax", &["final_failure"]);
    let cases: Vec<(pb::AlertRuleSpec, &str, &str)> = vec![
        (
            pb::AlertRuleSpec { events: vec!["final_failure".into(), "explode".into()], ..ok.clone() },
            "rule.events[1]",
            "unknown event",
        ),
        (pb::AlertRuleSpec { events: vec![], ..ok.clone() }, "rule.events", "at least one"),
        (pb::AlertRuleSpec { events: vec!["test".into()], ..ok.clone() }, "rule.events[0]", "unknown event"),
        (pb::AlertRuleSpec { url: "ftp://hooks.example.com/".into(), ..ok.clone() }, "rule.url", "http:// or https://"),
        (pb::AlertRuleSpec { url: "http://127.0.0.1:8080/".into(), ..ok.clone() }, "rule.url", "loopback"),
        (pb::AlertRuleSpec { url: "http://10.0.0.7/".into(), ..ok.clone() }, "rule.url", "private"),
        (pb::AlertRuleSpec { url: "http://169.254.169.254/".into(), ..ok.clone() }, "rule.url", "link-local"),
        (pb::AlertRuleSpec { url: "http://[fd00::1]/".into(), ..ok.clone() }, "rule.url", "unique-local"),
        (pb::AlertRuleSpec { url: "http://0.0.0.0/".into(), ..ok.clone() }, "rule.url", "unspecified"),
        (pb::AlertRuleSpec { url: "http://localhost/".into(), ..ok.clone() }, "rule.url", "loopback"),
        (pb::AlertRuleSpec { secret: String::new(), ..ok.clone() }, "rule.secret", "is required"),
        (pb::AlertRuleSpec { secret: "short".into(), ..ok.clone() }, "rule.secret", "16-255"),
        (pb::AlertRuleSpec { task: "nope".into(), ..ok.clone() }, "rule.task", "no task"),
        (pb::AlertRuleSpec { task: "elsewhere".into(), ..ok.clone() }, "rule.task", "of app shop"),
        (pb::AlertRuleSpec { app: String::new(), ..ok.clone() }, "rule.app", ""),
        (pb::AlertRuleSpec { events: vec!["no_worker".into()], ..ok.clone() }, "rule.no_worker_for", "required"),
        (
            pb::AlertRuleSpec { events: vec!["backlog".into()], backlog_over: Some(0), ..ok.clone() },
            "rule.backlog_over",
            "1 or more",
        ),
        (pb::AlertRuleSpec { backlog_over: Some(5), ..ok.clone() }, "rule.backlog_over", "only for event backlog"),
    ];
    for (spec, field, reason) in cases {
        let err = admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(spec.clone()) }).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{spec:?}: {err:?}");
        assert!(err.message().starts_with(&format!("{field}: ")), "{field}: {}", err.message());
        assert!(err.message().contains(reason), "{reason}: {}", err.message());
    }
    let rules = admin.list_alert_rules(pb::ListAlertRulesRequest::default()).await.expect("list").into_inner().rules;
    assert!(rules.is_empty(), "nothing stored: {rules:?}");
    // The same rule with a public target is accepted, once.
    admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(ok.clone()) }).await.expect("create");
    let err = admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(ok) }).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::AlreadyExists);
    let rules = admin.list_alert_rules(pb::ListAlertRulesRequest::default()).await.expect("list").into_inner().rules;
    assert_eq!(rules.len(), 1);
    // At most 1,000 rules per app (issue 33): the 1,001st is refused naming the app and the cap; another
    // app is not affected.
    let hook = "https://hooks.example.com/ax";
    for i in 1..1000 {
        let r = rule(&format!("r{i}"), hook, &["final_failure"]);
        admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(r) }).await.expect("within the cap");
    }
    let over = rule("r1000", hook, &["final_failure"]);
    let err = admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(over) }).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
    let cap = "rule.app: app billing has 1000 alert rules, the most allowed is 1000";
    assert!(err.message().starts_with(cap), "{}", err.message());
    let shop = pb::AlertRuleSpec { app: "shop".into(), ..rule("shop-1", hook, &["final_failure"]) };
    admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(shop) }).await.expect("another app's rule");
    axd.stop().await;
}

on_every_backend!(an_alert_is_delivered_once_after_axd_is_killed_mid_delivery);

mod sqlite_only {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_final_failure_reaches_the_webhook_signed() {
        let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
        super::a_final_failure_reaches_the_webhook_signed(&db).await;
        db.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failed_attempts_are_retried_with_backoff_then_marked_failed() {
        let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
        super::failed_attempts_are_retried_with_backoff_then_marked_failed(&db).await;
        db.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_rules_and_refused_targets_are_invalid_argument_and_store_nothing() {
        let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
        super::bad_rules_and_refused_targets_are_invalid_argument_and_store_nothing(&db).await;
        db.cleanup().await;
    }
}

/// A pending test delivery to `url`.
fn delivery(id: i64, url: String) -> Delivery {
    Delivery {
        id,
        rule_id: 1,
        rule_name: "r".into(),
        app: "billing".into(),
        task_name: None,
        event: AlertEvent::Test,
        dedupe_key: "k".into(),
        url,
        payload: "{}".into(),
        status: DeliveryStatus::Pending,
        attempts: 1,
        next_attempt_at: chrono::Utc::now(),
        last_error: String::new(),
        created_at: chrono::Utc::now(),
        finished_at: None,
    }
}

/// A host name that resolves to a refused address is refused when it is resolved, at send time
/// (a name re-pointed after the rule was created, DNS rebinding), and nothing is sent to it.
#[tokio::test]
async fn a_name_resolving_to_a_refused_address_is_refused_at_send_time() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let receiver = Receiver::start(|_| Some(200)).await;
    let sender = Sender::new(false, Duration::from_secs(2), Duration::from_secs(2), None).expect("sender");
    let d = delivery(7, format!("http://localhost:{}/hook", receiver.addr.port()));
    let err = sender.send(&d, SECRET, 1).await.unwrap_err();
    assert!(err.contains("refused target: localhost resolves to"), "{err}");
    assert!(err.contains("loopback"), "{err}");
    assert!(receiver.received().is_empty(), "nothing was sent");
    // Allowed, the same delivery goes through.
    let allowed = Sender::new(true, Duration::from_secs(2), Duration::from_secs(2), None).expect("sender");
    assert_eq!(allowed.send(&d, SECRET, 1).await, Ok(200));
    assert_eq!(receiver.wait_for(1, LONG).await[0].header(DELIVERY_HEADER), "7");
}

/// A send ends at its deadline whatever phase it is in (issue 33, item 3): against a server that
/// accepts the connection and never answers, a sender whose response timeout alone would wait 10 s
/// gives up at its 300 ms deadline, and says so.
#[tokio::test]
async fn a_send_ends_at_its_deadline_against_a_server_that_never_answers() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tarpit = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = tarpit.local_addr().expect("addr").port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = tarpit.accept().await {
            open.push(conn);
        }
    });
    let mut sender = Sender::new(true, Duration::from_secs(10), Duration::from_secs(10), None).expect("sender");
    assert_eq!(sender.send_deadline, Duration::from_secs(20), "by default the two timeouts added");
    sender.send_deadline = Duration::from_millis(300);
    let d = delivery(8, format!("http://127.0.0.1:{port}/hook"));
    let started = std::time::Instant::now();
    let sent = tokio::time::timeout(Duration::from_secs(5), sender.send(&d, SECRET, 1)).await;
    let err = sent.expect("the send ended well before its response timeout").unwrap_err();
    assert!(err.contains("deadline of 300ms"), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(300), "not before its deadline");
    held.abort();
}

/// A name with many addresses: a send tries the first two (all of them are checked).
#[test]
fn a_send_tries_at_most_two_addresses() {
    let addrs: Vec<std::net::SocketAddr> =
        ["192.0.2.1:80", "192.0.2.2:80", "192.0.2.3:80"].iter().map(|a| a.parse().expect("addr")).collect();
    assert_eq!(ax_scheduler::alerts::http::tried(addrs.clone()), addrs[..2]);
    assert_eq!(ax_scheduler::alerts::http::MAX_ADDRESSES, 2);
}

/// A webhook that never answers holds one send, not the alert loop (issue 33, item 3): while a
/// send to it waits (up to its 20 s deadline here), another rule's test alert is sent at once, and
/// a condition rule (no worker for 1 s) is evaluated and delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_never_answers_delays_neither_other_sends_nor_conditions() {
    let db = TestDb::create(ax_tests::Db::Sqlite).await.expect("sqlite");
    let tarpit = Receiver::start(|_| None).await;
    let good = Receiver::start(|_| Some(200)).await;
    let dir = ax_tests::ScratchDir::new("alerts");
    let args = [
        "--database-url",
        db.url.as_str(),
        "--listen",
        "127.0.0.1:0",
        "--poll-interval",
        "200ms",
        "--alert-allow-private-targets",
        "--alert-timeout",
        "10s",
    ];
    let axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let mut admin = AdminServiceClient::new(channel(&format!("http://{}", axd.addr)).await);
    let rules = admin.clone();
    let create_rule = |spec: pb::AlertRuleSpec| {
        let mut admin = rules.clone();
        async move { admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(spec) }).await.expect("rule") }
    };
    create_rule(rule("slow", &tarpit.url("/hook"), &["final_failure"])).await;
    admin.test_alert_rule(pb::TestAlertRuleRequest { name: "slow".into() }).await.expect("test slow");
    tarpit.wait_for(1, LONG).await;
    // The send to the tarpit now waits for an answer that never comes.
    let waiting = std::time::Instant::now();
    create_rule(rule("fast", &good.url("/fast"), &["final_failure"])).await;
    admin.test_alert_rule(pb::TestAlertRuleRequest { name: "fast".into() }).await.expect("test fast");
    let mut quiet = rule("nobody", &good.url("/nobody"), &["no_worker"]);
    quiet.no_worker_for = Some(prost_types::Duration { seconds: 1, nanos: 0 });
    create_rule(quiet).await;
    let got = good.wait_for(2, Duration::from_secs(10)).await;
    let events: std::collections::BTreeSet<String> =
        got.iter().map(|r| verified(r)["event"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(events, ["no_worker".to_owned(), "test".to_owned()].into(), "{got:?}");
    assert!(waiting.elapsed() < Duration::from_secs(15), "both came while the tarpit's send was still waiting");
    let slow = deliveries(&mut admin, "slow").await;
    assert!(slow.iter().all(|d| d.status != "delivered"), "{slow:?}");
    let mut axd = axd;
    axd.terminate().await;
    db.cleanup().await;
}

/// The README's axctl examples, through the real binary with `-o json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axctl_alert_commands_create_list_test_deliver_and_delete() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    let receiver = Receiver::start(|_| Some(200)).await;
    let axd = Axd::start(&db, |o| o.alert_allow_private_targets = Some(true)).await;
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    let dir = ax_tests::ScratchDir::new("alerts");
    let secret_file = dir.join("hook.secret");
    std::fs::write(&secret_file, format!("{SECRET}\n")).expect("secret file");
    let url = receiver.url("/ax");
    let secret_path = secret_file.to_string_lossy().into_owned();
    let json = |args: &[&str]| {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        all.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>()
    };
    let run = |args: Vec<String>| async move {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        ax_tests::procs::axctl(&env, &refs).await
    };
    let created = run(json(&[
        "alert",
        "create",
        "pager",
        "--app",
        "billing",
        "--event",
        "final_failure,worker_lost",
        "--url",
        &url,
        "--secret-file",
        &secret_path,
    ]))
    .await
    .json();
    assert_eq!(created["events"], serde_json::json!(["final_failure", "worker_lost"]));
    assert!(!created.to_string().contains(SECRET), "the secret is never shown: {created}");
    let listed = run(json(&["alert", "list"])).await.json();
    assert_eq!(listed["rules"][0]["name"], "pager");
    let queued = run(json(&["alert", "test", "pager"])).await.json();
    let id = queued["delivery_id"].as_i64().expect("id");
    let got = receiver.wait_for(1, LONG).await;
    assert_eq!(got[0].header(DELIVERY_HEADER), id.to_string());
    verified(&got[0]);
    let mut admin = axd.admin().await;
    wait_delivery(&mut admin, "pager", LONG, |d| d.status == "delivered").await;
    let listed = run(json(&["alert", "deliveries", "--rule", "pager"])).await.json();
    let d = &listed["deliveries"][0];
    assert_eq!(
        (d["id"].as_i64(), d["status"].as_str(), d["event"].as_str()),
        (Some(id), Some("delivered"), Some("test"))
    );
    assert_eq!(d["body"]["delivery_id"], id.to_string());
    // Bad input is a clear CLI error naming the field, and nothing is stored.
    let out = run(json(&[
        "alert",
        "create",
        "bad",
        "--app",
        "billing",
        "--event",
        "explode",
        "--url",
        &url,
        "--secret-file",
        &secret_path,
    ]))
    .await;
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("rule.events[0]") && out.stderr.contains("unknown event"), "{}", out.stderr);
    let deleted = run(json(&["alert", "delete", "pager"])).await.json();
    assert_eq!(deleted["deleted"], "pager");
    assert_eq!(run(json(&["alert", "list"])).await.json()["rules"], serde_json::json!([]));
    axd.stop().await;
    db.cleanup().await;
}

/// `https://` webhooks are verified: against `--alert-ca-file` (here the test CA, whose server
/// certificate names 127.0.0.1) the request goes through; with only the Mozilla roots the same
/// server is refused in the TLS handshake and nothing is sent.
#[tokio::test]
async fn https_webhooks_are_verified_against_the_configured_ca() {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = ax_tests::ScratchDir::new("alerts");
    let ca = ax_tests::certs::TestCa::create(&dir);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca.dir.join("server.pem"))
        .expect("pem")
        .collect::<Result<_, _>>()
        .expect("certs");
    let key = PrivateKeyDer::from_pem_file(ca.dir.join("server.key")).expect("key");
    let config = rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(certs, key).expect("config");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::channel::<String>(4);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, seen_tx) = (acceptor.clone(), seen_tx.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers and the small body arrive together; read until the body's closing brace.
                while !buf.ends_with(b"}") {
                    match tls.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let _ = seen_tx.send(String::from_utf8_lossy(&buf).into_owned()).await;
                let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
                let _ = tls.shutdown().await;
            });
        }
    });
    let d = delivery(9, format!("https://127.0.0.1:{port}/hook"));
    let two = Duration::from_secs(2);
    let public_roots_only = Sender::new(true, two, two, None).expect("sender");
    let err = public_roots_only.send(&d, SECRET, 1).await.unwrap_err();
    assert!(err.starts_with("TLS:") && err.contains("UnknownIssuer"), "{err}");
    assert!(seen_rx.try_recv().is_err(), "nothing was sent to an unverified server");
    let with_ca = Sender::new(true, two, two, Some(&ca.dir.join("ca.pem"))).expect("sender");
    assert_eq!(with_ca.send(&d, SECRET, 1).await, Ok(200));
    let request = seen_rx.recv().await.expect("request");
    assert!(request.starts_with("POST /hook HTTP/1.1\r\n"), "{request}");
    assert!(request.to_ascii_lowercase().contains("x-ax-delivery: 9\r\n"), "{request}");
}
