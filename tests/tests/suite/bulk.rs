//! Bulk actions (README "Bulk actions"): BulkInstances cancels, retries and deletes what a selector
//! matches, counts first with a dry run that changes nothing, refuses a call over its cap with the
//! count and nothing changed, is pinned to what was counted by `max_id`, and leaves one audit
//! entry with the counts; `axctl instance cancel|retry|delete` with filters asks before acting.

use std::time::{Duration, Instant};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, instances_of, manual, spec, trigger},
    eventually, on_every_backend,
    procs::axctl,
};
use tonic::Code;

fn bulk(action: pb::BulkAction, selector: pb::InstanceSelector, dry_run: bool, max: u32) -> pb::BulkInstancesRequest {
    pb::BulkInstancesRequest {
        action: action.into(),
        selector: Some(selector),
        dry_run,
        max_instances: max,
        reason: String::new(),
    }
}

fn of_task(name: &str) -> pb::InstanceSelector {
    pb::InstanceSelector { task_name: name.into(), ..Default::default() }
}

fn statuses(list: &[pb::Instance]) -> Vec<S> {
    let mut s: Vec<S> = list.iter().map(|i| i.status()).collect();
    s.dedup();
    s
}

async fn bulk_actions_count_confirm_and_change_only_what_they_match(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    for (name, app) in [("bulk-a", "shop"), ("bulk-b", "shop"), ("bulk-c", "other")] {
        create(&mut admin, spec(name, app, "nobody-serves-this", manual())).await;
    }
    for k in 0..30 {
        trigger(&mut admin, "bulk-a", &format!("a{k}")).await;
    }
    for k in 0..5 {
        trigger(&mut admin, "bulk-b", &format!("b{k}")).await;
        trigger(&mut admin, "bulk-c", &format!("c{k}")).await;
    }

    // Bad requests name the field and change nothing.
    let mut no_action = bulk(pb::BulkAction::Cancel, of_task("bulk-a"), false, 100);
    no_action.action = 0;
    let bad = [
        (no_action, "action"),
        (bulk(pb::BulkAction::Cancel, pb::InstanceSelector::default(), false, 100), "selector"),
        (bulk(pb::BulkAction::Cancel, of_task("bulk-a"), false, 0), "max_instances"),
        (bulk(pb::BulkAction::Cancel, of_task("bulk-a"), false, 100_001), "max_instances"),
        (
            bulk(pb::BulkAction::Cancel, pb::InstanceSelector { ids: vec![-1], ..Default::default() }, false, 9),
            "selector.ids",
        ),
        (
            pb::BulkInstancesRequest {
                reason: "why".into(),
                ..bulk(pb::BulkAction::Retry, of_task("bulk-a"), false, 100)
            },
            "reason",
        ),
    ];
    for (req, field) in bad {
        let e = admin.bulk_instances(req.clone()).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{req:?}: {e:?}");
        assert!(e.message().contains(field), "{req:?}: the error names {field}: {}", e.message());
    }

    // A dry run counts and changes nothing.
    let dry = admin
        .bulk_instances(bulk(pb::BulkAction::Cancel, of_task("bulk-a"), true, 100))
        .await
        .expect("dry run")
        .into_inner();
    assert_eq!((dry.matched, dry.changed, dry.skipped), (30, 30, 0), "{dry:?}");
    assert_eq!(dry.sample_ids.len(), 20);
    assert_eq!(dry.max_id, dry.sample_ids[0], "the newest first");
    assert_eq!(statuses(&instances_of(&admin, "bulk-a").await), [S::Pending], "a dry run changes nothing");

    // Over the cap: refused with the count, nothing changed.
    let e = admin.bulk_instances(bulk(pb::BulkAction::Cancel, of_task("bulk-a"), false, 29)).await.expect_err("cap");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("more than 29 instances match"), "{}", e.message());
    assert_eq!(statuses(&instances_of(&admin, "bulk-a").await), [S::Pending], "a refused call changes nothing");

    // Pinned to the count: two instances created since are left alone.
    let late = [trigger(&mut admin, "bulk-a", "late-1").await, trigger(&mut admin, "bulk-a", "late-2").await];
    let mut pinned =
        bulk(pb::BulkAction::Cancel, pb::InstanceSelector { max_id: dry.max_id, ..of_task("bulk-a") }, false, 30);
    pinned.reason = "clearing the backlog".into();
    let done = admin.bulk_instances(pinned).await.expect("cancel").into_inner();
    assert_eq!((done.matched, done.changed, done.skipped), (30, 30, 0), "{done:?}");
    let after = instances_of(&admin, "bulk-a").await;
    for i in &after {
        let want = if late.contains(&i.id) { S::Pending } else { S::Canceled };
        assert_eq!(i.status(), want, "instance {} (late: {late:?})", i.id);
    }
    let one = admin.get_instance(pb::GetInstanceRequest { id: done.sample_ids[0] }).await.expect("get").into_inner();
    let last = one.events.last().expect("an event");
    assert_eq!(last.to_status(), S::Canceled);
    assert!(last.reason.contains("clearing the backlog"), "the reason is in the trail: {last:?}");
    // Other tasks untouched.
    assert_eq!(statuses(&instances_of(&admin, "bulk-b").await), [S::Pending]);

    // Cancel again: every match is final now, so each is skipped.
    let again = admin
        .bulk_instances(bulk(
            pb::BulkAction::Cancel,
            pb::InstanceSelector { max_id: dry.max_id, ..of_task("bulk-a") },
            false,
            30,
        ))
        .await
        .expect("again")
        .into_inner();
    assert_eq!((again.matched, again.changed, again.skipped), (30, 0, 30), "{again:?}");

    // Retry by status: the 30 canceled ones are PENDING again, the late ones were not final.
    let sel = pb::InstanceSelector { status: S::Canceled.into(), ..of_task("bulk-a") };
    let retried = admin.bulk_instances(bulk(pb::BulkAction::Retry, sel, false, 100)).await.expect("retry").into_inner();
    assert_eq!((retried.matched, retried.changed), (30, 30), "{retried:?}");
    assert_eq!(statuses(&instances_of(&admin, "bulk-a").await), [S::Pending]);

    // Delete by app: only final instances go; bulk-b's are canceled first.
    let b_ids: Vec<i64> = instances_of(&admin, "bulk-b").await.iter().map(|i| i.id).collect();
    admin.bulk_instances(bulk(pb::BulkAction::Cancel, of_task("bulk-b"), false, 10)).await.expect("cancel b");
    let shop = pb::InstanceSelector { app: "shop".into(), ..Default::default() };
    let deleted =
        admin.bulk_instances(bulk(pb::BulkAction::Delete, shop, false, 100)).await.expect("delete").into_inner();
    assert_eq!((deleted.matched, deleted.changed, deleted.skipped), (37, 5, 32), "{deleted:?}");
    assert!(instances_of(&admin, "bulk-b").await.is_empty(), "bulk-b's final instances are gone");
    let gone = admin.get_instance(pb::GetInstanceRequest { id: b_ids[0] }).await.expect_err("deleted");
    assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    assert_eq!(instances_of(&admin, "bulk-a").await.len(), 32, "PENDING instances are not deleted");
    assert_eq!(instances_of(&admin, "bulk-c").await.len(), 5, "another app's instances are not touched");
    // A deleted instance's idempotency key can be used again.
    let reborn = trigger(&mut admin, "bulk-b", "b0").await;
    let fresh = admin.get_instance(pb::GetInstanceRequest { id: reborn }).await.expect("get").into_inner();
    assert_eq!(fresh.instance.expect("instance").status(), S::Pending, "a new instance under the deleted key");

    // One audit entry per call that changed something, with the counts; none for a dry run.
    let audit = admin
        .list_audit_entries(pb::ListAuditEntriesRequest {
            rpc: "BulkInstances".into(),
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("audit")
        .into_inner()
        .entries;
    let ok: Vec<&pb::AuditEntry> = audit.iter().filter(|e| e.outcome == "ok").collect();
    assert_eq!(ok.len(), 5, "cancel, cancel again, retry, cancel b, delete: {audit:?}");
    assert!(
        ok.iter().any(|e| e.detail.contains("cancel: matched 30, changed 30, skipped 0")
            && e.after_json.contains("clearing the backlog")),
        "{ok:?}"
    );
    assert!(ok.iter().any(|e| e.detail.contains("delete: matched 37, changed 5, skipped 32")), "{ok:?}");

    // axctl: a count, a refusal without a terminal or --yes, then the change.
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    let out = axctl(&env, &["instance", "cancel", "--task", "bulk-a", "--dry-run"]).await;
    assert!(
        out.code == 0 && out.stdout.starts_with("32 instance(s) match; 32 would be canceled, 0 skipped"),
        "{out:?}"
    );
    let out = axctl(&env, &["instance", "cancel", "--task", "bulk-a"]).await;
    assert!(out.code != 0 && out.stderr.contains("pass --yes to cancel them"), "{out:?}");
    assert_eq!(statuses(&instances_of(&admin, "bulk-a").await), [S::Pending], "unconfirmed: nothing changed");
    let out = axctl(&env, &["instance", "cancel", "--task", "bulk-a", "--yes", "--reason", "by axctl"]).await;
    assert!(out.code == 0 && out.stdout.starts_with("canceled 32 instance(s); 32 matched, 0 skipped"), "{out:?}");
    let out = axctl(&env, &["instance", "cancel", "--task", "bulk-a", "--yes", "--max", "10"]).await;
    assert!(out.code != 0 && out.stderr.contains("more than 10 instances match"), "{out:?}");
    let out = axctl(&env, &["instance", "delete", &reborn.to_string()]).await;
    assert!(out.code != 0 && out.stderr.contains("only a finished instance"), "a PENDING instance stays: {out:?}");
    let out = axctl(&env, &["-o", "json", "instance", "delete", "--task", "bulk-a", "--yes"]).await;
    assert!(out.code == 0 && out.stdout.contains(r#""changed": 32"#), "{out:?}");
    let out = axctl(&env, &["instance", "retry", "7", "--task", "bulk-a"]).await;
    assert!(out.code != 0 && out.stderr.contains("an instance id or filters, not both"), "{out:?}");
    axd.stop().await;
}

/// One call cancels 10,000 instances; prints how long it took (README "Bulk actions").
async fn a_bulk_cancel_of_ten_thousand_instances_is_one_call(db: &TestDb) {
    const N: u64 = 10_000;
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("bulk-big", "shop", "nobody-serves-this", manual())).await;
    // The instances come through the intake table (one statement), as an application would
    // enqueue them.
    // Four digits crossed: 10,000 rows in any SQL (MariaDB caps recursive queries at 1,000 rounds).
    let digits = "(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 \
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)";
    let number = "a.n * 1000 + b.n * 100 + c.n * 10 + d.n";
    let key = if db.db == Db::MySql { format!("CONCAT('k', {number})") } else { format!("'k' || ({number})") };
    let rows = format!(
        "INSERT INTO ax_intake (task_name, idempotency_key) SELECT 'bulk-big', {key} \
         FROM {digits} a, {digits} b, {digits} c, {digits} d"
    );
    assert_eq!(db.execute(&rows).await, N);
    let pending = pb::InstanceSelector { status: S::Pending.into(), ..of_task("bulk-big") };
    eventually(Duration::from_secs(120), "10,000 instances from the intake table", || {
        let mut a = admin.clone();
        let sel = pending.clone();
        async move {
            let r = a.bulk_instances(bulk(pb::BulkAction::Cancel, sel, true, 100_000)).await.ok()?;
            (r.into_inner().matched == N).then_some(())
        }
    })
    .await;
    let started = Instant::now();
    let r = admin.bulk_instances(bulk(pb::BulkAction::Cancel, pending.clone(), false, 10_000)).await.expect("cancel");
    let took = started.elapsed();
    let r = r.into_inner();
    assert_eq!((r.matched, r.changed, r.skipped), (N, N, 0), "{r:?}");
    let left =
        admin.bulk_instances(bulk(pb::BulkAction::Cancel, pending, true, 100_000)).await.expect("count").into_inner();
    assert_eq!(left.matched, 0, "no PENDING instance is left");
    let canceled = pb::InstanceSelector { status: S::Canceled.into(), ..of_task("bulk-big") };
    let n =
        admin.bulk_instances(bulk(pb::BulkAction::Cancel, canceled, true, 100_000)).await.expect("count").into_inner();
    assert_eq!(n.matched, N, "every one CANCELED");
    eprintln!("bulk cancel of {N} instances on {:?}: {:.2} s in one call", db.db, took.as_secs_f64());
    axd.stop().await;
}

on_every_backend!(
    bulk_actions_count_confirm_and_change_only_what_they_match,
    a_bulk_cancel_of_ten_thousand_instances_is_one_call
);
