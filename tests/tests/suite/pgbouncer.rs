//! axd through PgBouncer in transaction pooling mode (README "Running on a replicated PostgreSQL /
//! Patroni", "PgBouncer"): two axd processes with `--database-pooler transaction` reach a
//! PostgreSQL server of the test's own through a PgBouncer of the test's own that shares 3 server
//! connections among their some 30 client connections, and `--database-session-url` straight to the
//! server for migrations and LISTEN. A cron task fires every second and manual triggers on both
//! axd run on workers of both; every instance runs once and ends SUCCESS, and each axd listens on
//! the server directly.

use std::time::Duration;

use ax_proto::v1::{self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_tests::{
    Db,
    axd::channel,
    client::{create, cron, manual, spec, trigger_with},
    eventually,
    fleet::Fleet,
    pgbouncer::PgBouncer,
    procs::AxdProcess,
    servers::PrivateServer,
};
use sqlx::Connection as _;

const LONG: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbouncer_in_transaction_mode_serves_two_axd() {
    let Some(server) = PrivateServer::start(Db::Postgres).await else { return };
    let Some(bouncer) = PgBouncer::start(server.port(), 3).await else { return };
    let (via, direct) = (bouncer.url("postgres"), server.url());
    let dir = std::env::temp_dir().join(format!("ax-pgbouncer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &via,
        "--database-pooler",
        "transaction",
        "--database-session-url",
        &direct,
        "--heartbeat-interval",
        "500ms",
        "--poll-interval",
        "200ms",
        "--scheduler-heartbeat",
        "500ms",
        "--log",
        "warn",
    ];
    let mut a = AxdProcess::start(&args, &dir.join("a.log")).await;
    let mut b = AxdProcess::start(&args, &dir.join("b.log")).await;
    let (ea, eb) = (format!("http://{}", a.addr), format!("http://{}", b.addr));
    let mut admin_a = AdminServiceClient::new(channel(&ea).await);
    let mut admin_b = AdminServiceClient::new(channel(&eb).await);
    create(&mut admin_a, spec("work", "pb", "run", manual())).await;
    create(&mut admin_b, spec("tick", "pb", "run", cron("* * * * * *"))).await;
    let fleet = Fleet::default();
    fleet.start(&ea, "pb", "w1", 4, &[]);
    fleet.start(&eb, "pb", "w2", 4, &[]);

    let mut ids = Vec::new();
    for n in 0..20 {
        ids.push(trigger_with(&mut admin_a, "work", &format!("a{n}"), r#"{"ms":20}"#).await);
        ids.push(trigger_with(&mut admin_b, "work", &format!("b{n}"), r#"{"ms":20}"#).await);
    }
    for id in &ids {
        eventually(LONG, &format!("instance {id} SUCCESS"), || {
            let mut admin = admin_b.clone();
            async move {
                let i = admin.get_instance(pb::GetInstanceRequest { id: *id }).await.ok()?.into_inner().instance?;
                assert!(i.status <= S::Success as i32, "instance {id} ended {:?}", S::try_from(i.status));
                (i.status == S::Success as i32).then_some(())
            }
        })
        .await;
        assert_eq!(fleet.of(*id).len(), 1, "instance {id} ran once: {:?}", fleet.of(*id));
    }
    eventually(LONG, "three fires of the cron task SUCCESS", || {
        let mut admin = admin_a.clone();
        async move {
            let r = admin
                .list_instances(pb::ListInstancesRequest {
                    task_name: "tick".into(),
                    page_size: 100,
                    ..Default::default()
                })
                .await
                .ok()?
                .into_inner();
            (r.instances.iter().filter(|i| i.status == S::Success as i32).count() >= 3).then_some(())
        }
    })
    .await;
    // Each axd listens on a session of its own, straight to the server.
    let mut c = sqlx::PgConnection::connect(&direct).await.expect("connect");
    let listening: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'axd' AND query LIKE 'LISTEN%'",
    )
    .fetch_one(&mut c)
    .await
    .expect("pg_stat_activity");
    assert_eq!(listening, 2, "one LISTEN session per axd on the server");
    c.close().await.expect("close");
    fleet.stop_all();
    a.terminate().await;
    b.terminate().await;
    for (name, log) in [("a", &a.log), ("b", &b.log)] {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        assert!(!text.contains("prepared statement"), "axd {name} logged prepared-statement errors:\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
