//! Keeps the benchmark working: every scenario of `ax-bench` in smoke mode (small sizes) on every
//! backend. Only what must hold whatever the machine is asserted: the run succeeds, its JSON has
//! the scenario's figures, nothing was lost (no fire left unstarted, complete event trails), and no
//! fire started before its time.
//! Figures themselves are never asserted.

use ax_tests::{Db, TestDb, on_every_backend};

/// Runs `ax-bench --db <db> --smoke --json <file> <scenario>` and returns the JSON's figures.
fn smoke(db: Db, scenario: &str) -> serde_json::Map<String, serde_json::Value> {
    let dir = std::env::temp_dir().join(format!("ax-bench-smoke-{}-{:?}-{scenario}", std::process::id(), db));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = dir.join("out.json");
    // ax-bench runs the binaries beside it: built (or found built, AX_BINARIES_BUILT) here first.
    ax_tests::procs::bin("axd");
    let name = match db {
        Db::Sqlite => "sqlite",
        Db::Postgres => "postgres",
        Db::MySql => "mysql",
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ax-bench"))
        .args(["--db", name, "--smoke", "--json"])
        .arg(&json)
        .arg(scenario)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run ax-bench");
    assert!(
        out.status.success(),
        "ax-bench {scenario} on {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).expect("json written")).expect("json");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(doc["database"], name);
    assert!(doc["cores"].as_u64().unwrap_or(0) >= 1);
    doc["figures"].as_object().cloned().expect("figures")
}

fn num(f: &serde_json::Map<String, serde_json::Value>, key: &str) -> f64 {
    f.get(key).and_then(serde_json::Value::as_f64).unwrap_or_else(|| panic!("figure {key:?} missing in {f:?}"))
}

// One test per scenario (and backend): the test runner spreads them over its slots, and none of
// them runs for minutes on a loaded machine, as all of them in one test did.

async fn burn_down_runs_in_smoke_mode(db: &TestDb) {
    let f = smoke(db.db, "burn-down");
    assert_eq!(num(&f, "instances"), 500.0);
    assert_eq!(num(&f, "events per instance"), 4.0, "every instance has its full trail");
    assert!(num(&f, "instances/s") > 0.0);
    assert!(f.contains_key("per instance: axd CPU ms"), "CPU per instance is counted: {f:?}");
    if db.db == Db::Postgres {
        // Approximate in a smoke run (the server is shared with the suite), but counted.
        assert!(num(&f, "per instance: tuple writes") > 0.0, "tuple writes are counted: {f:?}");
        assert!(f.contains_key("per instance: WAL bytes"), "{f:?}");
        // The transport of axd's own connections, read from the server.
        let transport = f.get("axd's database connections").and_then(|v| v.as_str());
        assert!(transport.is_some_and(|t| t.ends_with("plaintext") || t.ends_with("TLS")), "{transport:?}");
    }
}

async fn full_lifecycle_runs_in_smoke_mode(db: &TestDb) {
    let f = smoke(db.db, "full-lifecycle");
    assert_eq!(num(&f, "events per instance"), 4.0);
    assert!(num(&f, "instances/s") > 0.0);
}

async fn fire_lag_runs_in_smoke_mode(db: &TestDb) {
    let f = smoke(db.db, "fire-lag");
    assert!(num(&f, "fires in window") >= 6.0, "one fire per second over 6 s");
    assert_eq!(num(&f, "fires not started"), 0.0);
    // Early assignments are held until their fire time: a fire that starts before it is a bug,
    // whatever the machine.
    assert_eq!(num(&f, "fires started before their time"), 0.0, "no fire starts before its time");
    assert!(num(&f, "fire lag ms p50") >= 0.0);
}

async fn scale_and_streams_run_in_smoke_mode(db: &TestDb) {
    let f = smoke(db.db, "scale");
    assert!(num(&f, "axd RSS max MiB B") > 0.0);
    assert!(num(&f, "B (5000) round ms p50") > 0.0);

    let f = smoke(db.db, "streams");
    assert_eq!(num(&f, "streams listed by ListWorkers"), 200.0);
}

async fn ceiling_and_failover_run_in_smoke_mode(db: &TestDb) {
    let f = smoke(db.db, "ceiling");
    assert!(num(&f, "rows/s") > 0.0);

    let f = smoke(db.db, "failover");
    assert_eq!(num(&f, "kills"), 3.0);
}

on_every_backend!(
    burn_down_runs_in_smoke_mode,
    full_lifecycle_runs_in_smoke_mode,
    fire_lag_runs_in_smoke_mode,
    scale_and_streams_run_in_smoke_mode,
    ceiling_and_failover_run_in_smoke_mode,
);

// The two scenarios that count on PostgreSQL alone: its per-database transaction counter, and
// graphile-worker (installed with npm from the registry, as `npm ci` installs the SDK's).
mod postgres_only {
    use super::{Db, TestDb, num, smoke};

    async fn on_postgres(check: impl AsyncFnOnce(Db)) {
        let Some(db) = TestDb::create(Db::Postgres).await else { return };
        check(db.db).await;
        db.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idle_runs_in_smoke_mode() {
        on_postgres(async |kind| {
            let f = smoke(kind, "idle");
            assert_eq!(num(&f, "axd processes"), 3.0);
            assert!(num(&f, "transactions") > 0.0, "an idle axd still reads the database: {f:?}");
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn peer_runs_in_smoke_mode() {
        on_postgres(async |kind| {
            let f = smoke(kind, "peer");
            assert!(num(&f, "ax median") > 0.0 && num(&f, "graphile-worker median") > 0.0, "{f:?}");
            assert!(num(&f, "ratio of medians (ax / graphile-worker)") > 0.0);
            // Both sides on one transport (plaintext by default), as read from the server.
            let transport = f.get("database transport (read from pg_stat_ssl)").and_then(|v| v.as_str());
            assert!(
                transport.is_some_and(|t| t.matches("plaintext").count() == 2 && !t.contains("TLS")),
                "{transport:?}"
            );
        })
        .await;
    }
}
