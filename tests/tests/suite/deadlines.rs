//! Deadlines (README "Deadlines"): an instance not SUCCESS within its task's must_finish_within of
//! its fire — running long, or failed — raises one `deadline_missed` alert per fire, whichever of
//! three axd (one on SQLite) notices first, and explain names it; one that succeeds in time raises
//! none.

use std::time::Duration;

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, dur, manual, spec, trigger_with, wait_status},
    fleet::{Fleet, connected},
    on_every_backend,
    webhook::Receiver,
};

const LONG: Duration = Duration::from_secs(60);

async fn a_missed_deadline_alerts_once_per_fire_and_explain_names_it(db: &TestDb) {
    let n = if db.db == Db::Sqlite { 1 } else { 3 };
    let mut axds = Vec::new();
    for _ in 0..n {
        axds.push(
            Axd::start(db, |o| {
                o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(10)));
                o.alert_allow_private_targets = Some(true);
            })
            .await,
        );
    }
    let fleet = Fleet::default();
    let ids: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    for (a, id) in axds.iter().zip(&ids) {
        fleet.start(&a.endpoint, "app", id, 4, &[]);
    }
    let mut admin = axds[0].admin().await;
    connected(&admin, "app", &ids.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let receiver = Receiver::start(|_| Some(200)).await;
    let rule = pb::AlertRuleSpec {
        name: "sla".into(),
        app: "app".into(),
        events: vec!["deadline_missed".into()],
        url: receiver.url("/hook"),
        secret: "0123456789abcdef".into(),
        ..Default::default()
    };
    admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(rule) }).await.expect("rule");
    let mut s = spec("sla", "app", "run", manual());
    s.must_finish_within = Some(dur(Duration::from_secs(3)));
    create(&mut admin, s).await;
    // In time; running past the deadline; failing before it.
    let quick = trigger_with(&mut axds[0].admin().await, "sla", "quick", r#"{"ms":0}"#).await;
    let slow = trigger_with(&mut axds[n - 1].admin().await, "sla", "slow", r#"{"ms":6000}"#).await;
    let failing = trigger_with(&mut axds[n / 2].admin().await, "sla", "failing", r#"{"fail":true}"#).await;
    let got = receiver.wait_for(2, LONG).await;
    let mut about: Vec<i64> = got
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).expect("json");
            assert_eq!(body["event"], "deadline_missed", "{body}");
            body["instance_id"].as_i64().expect("instance_id")
        })
        .collect();
    about.sort_unstable();
    let mut expected = vec![slow, failing];
    expected.sort_unstable();
    assert_eq!(about, expected, "the slow and the failing instance missed; the quick one did not");
    let slow_alert = got.iter().find(|r| r.body.windows(7).any(|w| w == b"RUNNING")).expect("the slow one's alert");
    let body: serde_json::Value = serde_json::from_slice(&slow_alert.body).expect("json");
    assert!(body["message"].as_str().unwrap_or_default().contains("still RUNNING"), "{body}");
    wait_status(&mut admin, quick, S::Success, LONG).await;
    wait_status(&mut admin, failing, S::Failed, LONG).await;
    // By the slow one's end every axd has judged the fires many times over: still one delivery each.
    wait_status(&mut admin, slow, S::Success, LONG).await;
    let deliveries = admin
        .list_alert_deliveries(pb::ListAlertDeliveriesRequest { rule: "sla".into(), ..Default::default() })
        .await
        .expect("deliveries")
        .into_inner()
        .deliveries;
    assert_eq!(deliveries.len(), 2, "one delivery per missed fire: {deliveries:#?}");
    let explained = admin
        .explain_task(pb::ExplainTaskRequest { name: "sla".into(), limit: 10, ..Default::default() })
        .await
        .expect("explain")
        .into_inner();
    let missed: Vec<i64> = explained
        .findings
        .iter()
        .filter(|f| f.kind == pb::ExplainFindingKind::DeadlineMissed as i32)
        .map(|f| f.instance_id)
        .collect();
    assert_eq!(missed.len(), 2, "{:#?}", explained.findings);
    assert!(missed.contains(&slow) && missed.contains(&failing), "{missed:?}");
    fleet.stop_all();
    for a in axds {
        a.stop().await;
    }
}

on_every_backend!(a_missed_deadline_alerts_once_per_fire_and_explain_names_it);
