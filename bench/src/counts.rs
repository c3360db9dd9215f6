//! Counts per instance: what a run cost the database and the processes, in units that do not move
//! with this machine's noise (issue 31). On PostgreSQL:
//! - tuples inserted, updated (and the heap-only share), deleted, from `pg_stat_user_tables` of the
//!   run's own database;
//! - index entries written, row locks taken and commits, from the write-ahead log the run wrote
//!   (`pg_walinspect`, in Debian's `postgresql-NN` package, created in `public` when missing;
//!   counted over the whole server, so nothing else may write while a run measures);
//! - WAL bytes;
//! - statements, from `pg_stat_statements` when the server preloads it;
//! - CPU seconds of axd, of the workers and of the database backends serving the run's database.
//!
//! PostgreSQL publishes a backend's table counters when its transaction ends at most once a second
//! and when it exits: the opening snapshot waits until only axd's backends are connected (seeding's
//! have exited), the closing one until the scenario's processes have exited and no other backend
//! is connected to the run's database.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use sqlx::{Connection as _, PgConnection};

use crate::{
    DbKind,
    stats::{Cpu, ticks_per_second},
};

/// The database's counters at one moment.
struct Db {
    inserted: i64,
    updated: i64,
    hot: i64,
    deleted: i64,
    lsn: String,
    statements: Option<i64>,
}

/// Who serves the run from the database: the application name its connections carry and the
/// schema of its tables.
pub struct Served {
    /// `application_name` of the connections doing the run's work (the run's axd, `graphile-worker`).
    pub app: String,
    /// The schema of the tables counted (None: the connection's current schema).
    pub schema: Option<String>,
}

impl Served {
    /// The run's axd (connecting as `application`) on the run's own schema.
    pub fn axd(application: &str) -> Served {
        Served { app: application.to_owned(), schema: None }
    }
}

/// A measurement in progress: the opening snapshot and the CPU clocks of the processes it follows.
pub struct Meter {
    url: String,
    shared: bool,
    served: Served,
    db: Option<Db>,
    walinspect: bool,
    cpu: Vec<(Role, u32, Cpu)>,
    ended: Vec<(Role, f64)>,
    backends: f64,
}

/// Whose CPU a process's time counts as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An axd.
    Axd,
    /// A worker process.
    Worker,
}

impl Meter {
    /// Opens a measurement on the run's database (PostgreSQL only; elsewhere only CPU is counted).
    /// Waits until no other backend is connected to the database, so that what seeding wrote has
    /// been published and is not counted.
    ///
    /// `shared` (smoke runs, which share the server with the test suite): no waiting, as other
    /// clients come and go; the counts are then approximate.
    pub async fn start(kind: DbKind, url: &str, shared: bool, axd: &str) -> anyhow::Result<Meter> {
        Self::start_for(kind, url, shared, Served::axd(axd)).await
    }

    /// Like [`Meter::start`], for a run served by other connections than axd's.
    pub async fn start_for(kind: DbKind, url: &str, shared: bool, served: Served) -> anyhow::Result<Meter> {
        let mut m = Meter {
            url: url.to_owned(),
            shared,
            served,
            db: None,
            walinspect: false,
            cpu: Vec::new(),
            ended: Vec::new(),
            backends: 0.0,
        };
        if kind == DbKind::Postgres {
            let mut conn = PgConnection::connect(url).await?;
            m.walinspect = walinspect(&mut conn).await;
            if !m.walinspect {
                eprintln!("  counts: pg_walinspect is not available, index entries and row locks are not counted");
            }
            m.db = Some(snapshot(&mut conn, &m.served, if shared { Wait::No } else { Wait::OnlyServing }).await?);
            conn.close().await?;
        }
        Ok(m)
    }

    /// Follows the CPU time of a process from now on (or from its start, for one started later).
    pub fn follow(&mut self, role: Role, pid: Option<u32>, from_start: bool) {
        let Some(pid) = pid else { return };
        let Ok(now) = Cpu::sample(pid) else { return };
        let base = if from_start { Cpu::zero() } else { now };
        self.cpu.push((role, pid, base));
    }

    /// Reads the CPU time of the followed processes and of the database's backends serving the
    /// run: call it just before the processes are stopped.
    pub async fn sample_cpu(&mut self) -> anyhow::Result<()> {
        let tps = ticks_per_second();
        for (role, pid, base) in &self.cpu {
            if let Ok(now) = Cpu::sample(*pid) {
                self.ended.push((*role, now.since(base, tps).cpu));
            }
        }
        if self.db.is_some() {
            let mut conn = PgConnection::connect(&self.url).await?;
            let pids: Vec<i32> = sqlx::query_scalar(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            )
            .bind(&self.served.app)
            .fetch_all(&mut conn)
            .await?;
            conn.close().await?;
            // Backends that already exited (a pool's idle connections closed) are not counted:
            // the figure is a lower bound, close for a scenario whose pools stay open.
            self.backends = pids
                .iter()
                .filter_map(|p| Cpu::sample(u32::try_from(*p).ok()?).ok())
                .map(|c| c.since(&Cpu::zero(), tps).cpu)
                .sum();
        }
        Ok(())
    }

    /// Closes the measurement once the scenario's processes have exited: the figures per
    /// instance, named for the report.
    pub async fn finish(self, instances: u64) -> anyhow::Result<Vec<(String, serde_json::Value)>> {
        let per = |v: f64| serde_json::json!((v / instances.max(1) as f64 * 100.0).round() / 100.0);
        let mut rows: Vec<(String, serde_json::Value)> = Vec::new();
        if let Some(before) = &self.db {
            let mut conn = PgConnection::connect(&self.url).await?;
            let wait = if self.shared { Wait::No } else { Wait::ServingGone };
            let after = snapshot(&mut conn, &self.served, wait).await?;
            let updated = (after.updated - before.updated) as f64;
            let hot = (after.hot - before.hot) as f64;
            rows.push(("per instance: tuples inserted".into(), per((after.inserted - before.inserted) as f64)));
            rows.push(("per instance: tuples updated".into(), per(updated)));
            rows.push((
                "heap-only share of updates %".into(),
                serde_json::json!(if updated > 0.0 { (hot / updated * 100.0).round() } else { 0.0 }),
            ));
            rows.push(("per instance: tuples deleted".into(), per((after.deleted - before.deleted) as f64)));
            rows.push((
                "per instance: tuple writes".into(),
                per(
                    (after.inserted - before.inserted + after.updated - before.updated + after.deleted - before.deleted)
                        as f64,
                ),
            ));
            if self.walinspect {
                // A checkpoint during the run may have recycled its first WAL segments (a long run,
                // or a busy shared server): then these counts are missing, not the run.
                match wal_records(&mut conn, &before.lsn, &after.lsn).await {
                    Ok(w) => {
                        rows.push(("per instance: index entries written".into(), per(w.index_entries as f64)));
                        rows.push(("per instance: row locks".into(), per(w.locks as f64)));
                        rows.push(("per instance: commits".into(), per(w.commits as f64)));
                        rows.push(("per instance: WAL records".into(), per(w.records as f64)));
                        rows.push(("WAL records by kind, per instance".into(), w.by_kind(instances).into()));
                        rows.push(("index entries by index, per instance".into(), w.by_index(instances).into()));
                    }
                    Err(e) => {
                        eprintln!(
                            "  counts: the run's WAL could not be read ({e}); index entries and locks not counted"
                        );
                        rows.push(("per instance: index entries written".into(), "n/a (WAL recycled)".into()));
                    }
                }
            }
            let wal: i64 = sqlx::query_scalar("SELECT ($2::pg_lsn - $1::pg_lsn)::BIGINT")
                .bind(&before.lsn)
                .bind(&after.lsn)
                .fetch_one(&mut conn)
                .await?;
            rows.push((
                "per instance: WAL bytes".into(),
                serde_json::json!((wal as f64 / instances.max(1) as f64).round()),
            ));
            rows.push((
                "per instance: statements".into(),
                match (before.statements, after.statements) {
                    // Three decimals: a batched statement serves hundreds of instances.
                    (Some(a), Some(b)) => {
                        serde_json::json!(((b - a) as f64 * 1000.0 / instances.max(1) as f64).round() / 1000.0)
                    }
                    _ => "n/a (pg_stat_statements not preloaded)".into(),
                },
            ));
            conn.close().await?;
        }
        let sum = |role: Role| self.ended.iter().filter(|(r, _)| *r == role).map(|(_, s)| s).sum::<f64>();
        let ms = |s: f64| serde_json::json!((s.max(0.0) * 1e6 / instances.max(1) as f64).round() / 1000.0 + 0.0);
        if self.cpu.iter().any(|(r, ..)| *r == Role::Axd) {
            rows.push(("per instance: axd CPU ms".into(), ms(sum(Role::Axd))));
        }
        rows.push(("per instance: worker CPU ms".into(), ms(sum(Role::Worker))));
        if self.db.is_some() {
            rows.push(("per instance: database CPU ms (lower bound)".into(), ms(self.backends)));
        }
        Ok(rows)
    }
}

/// What a snapshot waits for before it reads the counters (up to a minute).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// No backend is connected to the database but ours and those serving the run (axd's, which
    /// stay while a run goes and are counted from here): what the others wrote (seeding) has been
    /// published. A benchmark needs the server to itself.
    OnlyServing,
    /// The serving backends have exited, publishing all that the run wrote.
    ServingGone,
    /// Nothing (the server is shared).
    No,
}

/// Waits (up to a minute) until no backend but ours is connected to the database among those of
/// application `app` (`gone`) or among the others.
async fn settle(conn: &mut PgConnection, app: &str, gone: bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let others: Vec<(Option<String>, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT application_name, state, query FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND (application_name = $2) = $1",
        )
        .bind(gone)
        .bind(app)
        .fetch_all(&mut *conn)
        .await?;
        if others.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "counts need the database to themselves, but {} other connections stayed open: {others:?}",
            others.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits as `wait` says, then reads the counters of the run's tables (its schema's).
async fn snapshot(conn: &mut PgConnection, served: &Served, wait: Wait) -> anyhow::Result<Db> {
    if wait != Wait::No {
        settle(conn, &served.app, wait == Wait::ServingGone).await?;
    }
    // Table counters are cached per transaction: a fresh read, not this connection's last one.
    sqlx::query("SELECT pg_stat_clear_snapshot()").execute(&mut *conn).await?;
    let (inserted, updated, hot, deleted): (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(n_tup_ins), 0)::BIGINT, COALESCE(SUM(n_tup_upd), 0)::BIGINT, \
         COALESCE(SUM(n_tup_hot_upd), 0)::BIGINT, COALESCE(SUM(n_tup_del), 0)::BIGINT FROM pg_stat_user_tables \
         WHERE schemaname = COALESCE($1, current_schema())",
    )
    .bind(served.schema.as_deref())
    .fetch_one(&mut *conn)
    .await?;
    let lsn: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::TEXT").fetch_one(&mut *conn).await?;
    let preloaded: bool =
        sqlx::query_scalar("SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")
            .fetch_one(&mut *conn)
            .await?;
    let statements = if preloaded {
        // In `public`, not in the connection's first schema: a run's schema is dropped with what it
        // holds, and an extension left in another schema would be off this connection's path.
        sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public").execute(&mut *conn).await?;
        let schema: String = sqlx::query_scalar(
            "SELECT extnamespace::regnamespace::TEXT FROM pg_extension WHERE extname = 'pg_stat_statements'",
        )
        .fetch_one(&mut *conn)
        .await?;
        let n: i64 = sqlx::query_scalar(&format!(
            "SELECT COALESCE(SUM(calls), 0)::BIGINT FROM {schema}.pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()"
        ))
        .fetch_one(&mut *conn)
        .await?;
        Some(n)
    } else {
        None
    };
    Ok(Db { inserted, updated, hot, deleted, lsn, statements })
}

/// Records of the write-ahead log between two positions, by kind.
struct Wal {
    index_entries: i64,
    locks: i64,
    commits: i64,
    records: i64,
    kinds: Vec<(String, i64)>,
    /// Index entries by index (name, or `filenode N` for a relation gone or of another database).
    by_index: Vec<(String, i64)>,
}

impl Wal {
    /// The kinds that make up nine tenths of the records, most first: `Heap/INSERT 3.00, …`.
    fn by_kind(&self, instances: u64) -> String {
        let mut kinds = self.kinds.clone();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        let mut shown = 0;
        let mut out = Vec::new();
        for (k, c) in kinds {
            if shown * 10 >= self.records * 9 {
                break;
            }
            shown += c;
            out.push(format!("{k} {:.2}", c as f64 / instances.max(1) as f64));
        }
        out.join(", ")
    }

    /// Index entries by index, most first, those that show as at least 0.01 per instance:
    /// `ax_instance_pkey 1.00, …` — which index a lever must leave alone to cut the count.
    fn by_index(&self, instances: u64) -> String {
        let per = |c: i64| c as f64 / instances.max(1) as f64;
        let shown: Vec<String> = self
            .by_index
            .iter()
            .filter(|(_, c)| per(*c) >= 0.005)
            .map(|(k, c)| format!("{k} {:.2}", per(*c)))
            .collect();
        if shown.is_empty() { "none".into() } else { shown.join(", ") }
    }
}

/// Whether `pg_walinspect` is ready, creating it in `public` if the server has it but the database
/// does not (the benchmark's own schema is dropped after each run).
async fn walinspect(conn: &mut PgConnection) -> bool {
    if walinspect_schema(conn).await.is_some() {
        return true;
    }
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_walinspect SCHEMA public").execute(&mut *conn).await.is_ok()
}

async fn walinspect_schema(conn: &mut PgConnection) -> Option<String> {
    sqlx::query_scalar(
        "SELECT n.nspname::TEXT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
         WHERE e.extname = 'pg_walinspect'",
    )
    .fetch_optional(&mut *conn)
    .await
    .ok()
    .flatten()
}

async fn wal_records(conn: &mut PgConnection, from: &str, to: &str) -> anyhow::Result<Wal> {
    if from == to {
        // pg_get_wal_records_info refuses an empty range.
        return Ok(Wal { index_entries: 0, locks: 0, commits: 0, records: 0, kinds: Vec::new(), by_index: Vec::new() });
    }
    let schema = walinspect_schema(conn).await.context("pg_walinspect disappeared")?;
    // pg_walinspect reads only what is flushed ("cannot accept future end LSN"): `to` was read as
    // the write position, which the flush reaches a moment later.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let flushed: bool = sqlx::query_scalar("SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn")
            .bind(to)
            .fetch_one(&mut *conn)
            .await?;
        if flushed {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "the write-ahead log was not flushed up to {to} in 10 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // One pass over the run's records: their kinds, and for each index entry the index its record's
    // block reference names (`rel 1663/16384/24601 ...`), resolved while the run's schema exists.
    let rows: Vec<(String, Option<String>, i64)> = sqlx::query_as(&format!(
        "SELECT r.resource_manager || '/' || r.record_type, \
         CASE WHEN r.node IS NOT NULL THEN COALESCE(c.relname::TEXT, 'filenode ' || r.node) END, count(*)::BIGINT \
         FROM (SELECT resource_manager, record_type, CASE WHEN resource_manager = 'Btree' \
               AND record_type IN ('INSERT_LEAF', 'INSERT_POST') \
               THEN (regexp_match(block_ref, 'rel \\d+/\\d+/(\\d+)'))[1] END AS node \
               FROM \"{schema}\".pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)) r \
         LEFT JOIN pg_class c ON c.oid = pg_filenode_relation(0, r.node::OID) GROUP BY 1, 2",
    ))
    .bind(from)
    .bind(to)
    .fetch_all(conn)
    .await
    .map_err(|e| anyhow::anyhow!("reading the run's write-ahead log with pg_walinspect: {e:?}"))?;
    let mut kinds: Vec<(String, i64)> = Vec::new();
    let mut by_index: Vec<(String, i64)> = Vec::new();
    // Rows are per (kind, index): sum each apart (an index takes both leaf and posting inserts).
    fn add(to: &mut Vec<(String, i64)>, key: String, n: i64) {
        match to.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => *c += n,
            None => to.push((key, n)),
        }
    }
    for (kind, index, n) in rows {
        add(&mut kinds, kind, n);
        if let Some(index) = index {
            add(&mut by_index, index, n);
        }
    }
    by_index.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let count = |names: &[&str]| kinds.iter().filter(|(k, _)| names.contains(&k.as_str())).map(|(_, c)| c).sum();
    Ok(Wal {
        // A leaf insert is one index entry; a posting-list insert adds a duplicate to an entry.
        index_entries: count(&["Btree/INSERT_LEAF", "Btree/INSERT_POST"]),
        locks: count(&["Heap/LOCK"]),
        commits: count(&["Transaction/COMMIT"]),
        records: kinds.iter().map(|(_, c)| c).sum(),
        kinds,
        by_index,
    })
}

/// Whether a report's figure is one of the counts [`Meter::finish`] names.
/// How the PostgreSQL connections named `application` are carried, read from the server
/// (`pg_stat_ssl`): `"4 plaintext"`, `"4 TLS"`, or both counts when they differ.
pub async fn transport(url: &str, application: &str) -> anyhow::Result<String> {
    let pool = sqlx::PgPool::connect(url).await?;
    let (tls, plain): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*) FILTER (WHERE s.ssl), COUNT(*) FILTER (WHERE NOT s.ssl) \
         FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
         WHERE a.application_name = $1 AND a.datname = current_database()",
    )
    .bind(application)
    .fetch_one(&pool)
    .await?;
    pool.close().await;
    anyhow::ensure!(tls + plain > 0, "no connection named {application} is open");
    Ok(match (tls, plain) {
        (0, p) => format!("{p} plaintext"),
        (t, 0) => format!("{t} TLS"),
        (t, p) => format!("{t} TLS, {p} plaintext"),
    })
}

pub fn is_count(name: &str) -> bool {
    name.starts_with("per instance")
        || name.starts_with("heap-only share")
        || name.starts_with("WAL records by kind")
        || name.starts_with("index entries by index")
}

/// Adds the growth of a process's running count to `total`: the process prints `<prefix> N` lines
/// (N its own count so far) on `out`. How a run learns its end without asking the database.
pub async fn add_counts(
    out: impl tokio::io::AsyncRead + Unpin,
    prefix: &'static str,
    total: std::sync::Arc<tokio::sync::watch::Sender<u64>>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(out).lines();
    let mut mine = 0;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(n) = line.strip_prefix(prefix).and_then(|n| n.trim().parse::<u64>().ok()) {
            let grown = n.saturating_sub(mine);
            mine = n;
            total.send_modify(|t| *t += grown);
        }
    }
}
