//! Tags and search (README "Tags and search"): a trigger's tags, a task's labels and its search
//! params find instances in ListInstances and BulkInstances; bad tags and paths are refused naming
//! the field; tags go with their instance; the lookups use the tag table's primary key.

use std::collections::HashMap;

use ax_proto::v1 as pb;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, manual, spec},
    eventually, on_every_backend, on_server_backends,
    procs::axctl,
};
use tonic::{Code, transport::Channel};

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

async fn trigger(admin: &mut Admin, task: &str, params: &str, tags: &[(&str, &str)]) -> pb::Instance {
    let r = pb::TriggerTaskRequest {
        name: task.into(),
        params: Some(params.into()),
        tags: map(tags),
        ..Default::default()
    };
    admin.trigger_task(r).await.expect("trigger").into_inner().instance.expect("instance")
}

/// The ids ListInstances answers for these filters, newest first.
async fn found(admin: &mut Admin, task: &str, tags: &[(&str, &str)], params: &[(&str, &str)]) -> Vec<i64> {
    let r = pb::ListInstancesRequest {
        task_name: task.into(),
        tags: map(tags),
        params: map(params),
        page_size: 100,
        ..Default::default()
    };
    admin.list_instances(r).await.expect("list").into_inner().instances.iter().map(|i| i.id).collect()
}

async fn tags_params_and_labels_find_instances(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut orders = spec("orders", "shop", "nobody-serves-this", manual());
    orders.labels = map(&[("team", "billing")]);
    orders.search_params = vec!["params.customer_id".into(), "params.order.region".into()];
    create(&mut admin, orders).await;
    create(&mut admin, spec("other", "shop", "nobody-serves-this", manual())).await;

    let a = trigger(&mut admin, "orders", r#"{"customer_id": 42, "order": {"region": "eu"}}"#, &[("batch", "7")]).await;
    assert_eq!(
        a.tags,
        map(&[("batch", "7"), ("params.customer_id", "42"), ("params.order.region", "eu")]),
        "the trigger's tags and the search params' values"
    );
    let b = trigger(&mut admin, "orders", r#"{"customer_id": "43"}"#, &[]).await;
    assert_eq!(b.tags, map(&[("params.customer_id", "43")]), "a path missing from the params gives no tag");
    let c = trigger(&mut admin, "other", r#"{"customer_id": 42}"#, &[("batch", "7")]).await;
    assert_eq!(c.tags, map(&[("batch", "7")]), "a task without search params tags nothing from its params");

    // Search params: the value as stored (a number by its JSON text, a string as is).
    assert_eq!(found(&mut admin, "", &[], &[("params.customer_id", "42")]).await, [a.id]);
    assert_eq!(found(&mut admin, "", &[], &[("params.customer_id", "43")]).await, [b.id]);
    assert_eq!(
        found(&mut admin, "", &[], &[("params.customer_id", "42"), ("params.order.region", "eu")]).await,
        [a.id]
    );
    assert!(found(&mut admin, "", &[], &[("params.order.region", "us")]).await.is_empty());
    // Tags: an instance's own, or its task's labels; every one must hold.
    assert_eq!(found(&mut admin, "", &[("batch", "7")], &[]).await, [c.id, a.id]);
    assert_eq!(found(&mut admin, "", &[("team", "billing")], &[]).await, [b.id, a.id], "by the task's label");
    assert_eq!(found(&mut admin, "", &[("team", "billing"), ("batch", "7")], &[]).await, [a.id]);
    assert_eq!(found(&mut admin, "other", &[("batch", "7")], &[]).await, [c.id], "with a task name");
    assert!(found(&mut admin, "orders", &[("batch", "8")], &[]).await.is_empty());
    let got = admin.get_instance(pb::GetInstanceRequest { id: a.id }).await.expect("get").into_inner();
    assert_eq!(got.instance.expect("instance").tags, a.tags, "GetInstance shows the tags");

    // Bad input names the field; nothing is created.
    let bad_triggers = [
        (&[("params.customer_id", "1")][..], "tags[\"params.customer_id\"]"),
        (&[("bad key", "1")][..], "tags[\"bad key\"]"),
    ];
    for (tags, field) in bad_triggers {
        let r = pb::TriggerTaskRequest { name: "orders".into(), tags: map(tags), ..Default::default() };
        let e = admin.trigger_task(r).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(field), "names {field}: {}", e.message());
    }
    let nine: Vec<(String, String)> = (0..9).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    let bad_lists = [
        (
            pb::ListInstancesRequest { params: map(&[("customer_id", "1")]), ..Default::default() },
            "params[\"customer_id\"]",
        ),
        (pb::ListInstancesRequest { tags: nine.into_iter().collect(), ..Default::default() }, "tags"),
    ];
    for (r, field) in bad_lists {
        let e = admin.list_instances(r).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(field), "names {field}: {}", e.message());
    }
    for (paths, field) in [
        (vec!["params.a", "params.b", "params.c", "params.d", "params.e"], "search_params"),
        (vec!["params.a", "params.a"], "search_params[1]"),
        (vec!["customer_id"], "search_params[0]"),
    ] {
        let mut s = spec("bad-search", "shop", "h", manual());
        s.search_params = paths.iter().map(|p| (*p).to_owned()).collect();
        let e = admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(field), "names {field}: {}", e.message());
    }
    assert_eq!(found(&mut admin, "orders", &[], &[]).await.len(), 2, "nothing was created by the refused calls");

    // Bulk actions take the same filters.
    let cancel = pb::BulkInstancesRequest {
        action: pb::BulkAction::Cancel.into(),
        selector: Some(pb::InstanceSelector { params: map(&[("params.customer_id", "42")]), ..Default::default() }),
        max_instances: 10,
        ..Default::default()
    };
    let r = admin.bulk_instances(cancel).await.expect("bulk cancel").into_inner();
    assert_eq!((r.matched, r.changed, r.sample_ids), (1, 1, vec![a.id]));
    // axctl: tags on a trigger, filters on a list.
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    let out =
        axctl(&env, &["task", "trigger", "orders", "--params", r#"{"customer_id": 44}"#, "--tag", "batch=9"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let out =
        axctl(&env, &["-o", "json", "instance", "list", "--param", "customer_id=44", "--tag", "team=billing"]).await;
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let tags = &listed["instances"][0]["tags"];
    assert_eq!(listed["instances"].as_array().map(Vec::len), Some(1), "{out:?}");
    assert_eq!((tags["batch"].as_str(), tags["params.customer_id"].as_str()), (Some("9"), Some("44")), "{out:?}");
    // A bulk action by the same filters alone.
    let out = axctl(&env, &["instance", "cancel", "--param", "customer_id=43", "--yes"]).await;
    assert!(out.code == 0 && out.stdout.starts_with("canceled 1 instance(s); 1 matched"), "{out:?}");
    let got = admin.get_instance(pb::GetInstanceRequest { id: b.id }).await.expect("get").into_inner();
    assert_eq!(got.instance.expect("instance").status(), pb::InstanceStatus::Canceled);

    // Tags go with their instance.
    let delete = pb::BulkInstancesRequest {
        action: pb::BulkAction::Delete.into(),
        selector: Some(pb::InstanceSelector { ids: vec![a.id], ..Default::default() }),
        max_instances: 1,
        ..Default::default()
    };
    assert_eq!(admin.bulk_instances(delete).await.expect("delete").into_inner().changed, 1);
    assert_eq!(db.scalar(&format!("SELECT COUNT(*) FROM ax_instance_tag WHERE instance_id = {}", a.id)).await, 0);
    assert!(db.scalar(&format!("SELECT COUNT(*) FROM ax_instance_tag WHERE instance_id = {}", b.id)).await > 0);
    axd.stop().await;
}

/// The plan of the lookup axd makes for `--param customer_id=7` over 20,000 instances: it starts
/// from the tag table's primary key and never scans the instances.
async fn a_search_param_lookup_uses_the_tag_index(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("many", "shop", "nobody-serves-this", manual());
    s.search_params = vec!["params.customer_id".into()];
    create(&mut admin, s).await;
    let digits = "(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 \
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)";
    let n = "(a.n * 1000 + b.n * 100 + c.n * 10 + d.n)";
    let (key, params) = if db.db == Db::MySql {
        (format!("CONCAT('k', {n}, '-', e.n)"), format!("CONCAT('{{\"customer_id\": ', {n} % 1000, '}}')"))
    } else {
        (format!("'k' || {n} || '-' || e.n"), format!("'{{\"customer_id\": ' || ({n} % 1000) || '}}'"))
    };
    let insert = format!(
        "INSERT INTO ax_intake (task_name, idempotency_key, params) SELECT 'many', {key}, {params} \
         FROM {digits} a, {digits} b, {digits} c, {digits} d, (SELECT 0 AS n UNION ALL SELECT 1) e"
    );
    assert_eq!(db.execute(&insert).await, 20_000);
    eventually(std::time::Duration::from_secs(120), "20,000 tagged instances", || async {
        (db.scalar("SELECT COUNT(*) FROM ax_instance_tag").await == 20_000).then_some(())
    })
    .await;
    assert_eq!(found(&mut admin, "", &[], &[("params.customer_id", "7")]).await.len(), 20);
    // The statement ListInstances runs (store::instances, store::tags), with its values inlined.
    let query = "SELECT id FROM ax_instance WHERE 1 = 1 AND (id IN (SELECT instance_id FROM ax_instance_tag \
                 WHERE name = 'params.customer_id' AND value = '7')) ORDER BY id DESC LIMIT 50";
    let plan = match db.db {
        Db::Postgres => {
            db.execute("ANALYZE ax_instance").await;
            db.execute("ANALYZE ax_instance_tag").await;
            explain_pg(db, query).await
        }
        _ => {
            db.execute("ANALYZE TABLE ax_instance, ax_instance_tag").await;
            explain_mysql(db, query).await
        }
    };
    eprintln!("plan on {:?}:\n{plan}", db.db);
    let uses_tag_key = match db.db {
        Db::Postgres => plan.contains("ax_instance_tag_pkey"),
        _ => plan.contains("\"table_name\": \"ax_instance_tag\"") && plan.contains("\"key\": \"PRIMARY\""),
    };
    assert!(uses_tag_key, "the lookup goes through the tag table's primary key:\n{plan}");
    assert!(
        !plan.contains("Seq Scan on ax_instance ") && !plan.contains("\"access_type\": \"ALL\""),
        "no scan:\n{plan}"
    );
    axd.stop().await;
}

async fn explain_pg(db: &TestDb, query: &str) -> String {
    use sqlx::Connection as _;
    let mut c = sqlx::PgConnection::connect(&db.url).await.expect("connect");
    let rows: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN {query}")).fetch_all(&mut c).await.expect("explain");
    rows.join("\n")
}

async fn explain_mysql(db: &TestDb, query: &str) -> String {
    use sqlx::Connection as _;
    let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("connect");
    sqlx::query_scalar(&format!("EXPLAIN FORMAT=JSON {query}")).fetch_one(&mut c).await.expect("explain")
}

on_every_backend!(tags_params_and_labels_find_instances);

mod index {
    use super::*;
    on_server_backends!(a_search_param_lookup_uses_the_tag_index);
}
