//! Test support: fresh databases on every backend, and processes started from the real binaries.
//!
//! Databases: SQLite in a temporary directory; PostgreSQL in a fresh schema of the database named by
//! `AX_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`); MySQL/MariaDB in a
//! fresh database on the server named by `AX_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/test`).
//! A database that cannot be reached fails the test. Outside CI, `AX_SKIP_DB_TESTS=1` turns that
//! into a loud skip; with `CI=true` it always fails.
//!
//! Skips are reported by [`skip`]: cargo test captures what a test prints with `eprintln!` and then
//! shows a skipped test as `ok`, so each skip is written past the capture, and listed again in a
//! summary at the end of `scripts/test.sh`.

pub mod axd;
pub mod certs;
pub mod client;
pub mod fleet;
pub mod netns;
pub mod pgbouncer;
pub mod procs;
pub mod proxy;
pub mod replica;
pub mod servers;
pub mod webhook;

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use ax_scheduler::store::{self, ConnectOptions, Store};

/// Which backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    /// SQLite file.
    Sqlite,
    /// PostgreSQL schema.
    Postgres,
    /// MySQL/MariaDB database.
    MySql,
}

/// A provisioned, empty database. Dropping it removes what it can (the SQLite directory); server
/// databases are dropped by [`TestDb::cleanup`] and, if a test panicked, by the next run.
pub struct TestDb {
    /// Backend.
    pub db: Db,
    /// URL that axd accepts.
    pub url: String,
    name: String,
    /// The server's URL (PostgreSQL, MySQL), for [`TestDb::cleanup`].
    server: String,
    dir: Option<PathBuf>,
}

fn unique_name() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    format!("ax_t_{secs}_{:08x}", fastrand_u32())
}

/// A directory of one test's own under the system's temporary directory (`ax-TAG-PID-RANDOM`),
/// removed when dropped — unless the test is failing (its thread panicking), so that what it wrote
/// is there for the post-mortem. Reads as the directory's path.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the directory.
    pub fn new(tag: &str) -> ScratchDir {
        let d = std::env::temp_dir().join(format!("ax-{tag}-{}-{:08x}", std::process::id(), fastrand_u32()));
        std::fs::create_dir_all(&d).expect("temp dir");
        ScratchDir(d)
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for ScratchDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn fastrand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.write_u32(std::process::id());
    h.finish() as u32
}

/// The PostgreSQL server URL used by tests.
pub fn postgres_url() -> String {
    std::env::var("AX_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// The MySQL server URL used by tests.
pub fn mysql_url() -> String {
    std::env::var("AX_TEST_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

fn may_skip() -> bool {
    std::env::var("CI").map(|v| v != "true" && v != "1").unwrap_or(true)
        && std::env::var("AX_SKIP_DB_TESTS").is_ok_and(|v| v == "1")
}

/// Where [`skip`] lists skipped tests (in `target/<profile>/`); `scripts/test.sh` empties it before
/// the run and prints it after.
pub fn skipped_tests_file() -> PathBuf {
    procs::target_dir().join("ax-tests-skipped.txt")
}

/// Reports that the running test is skipped, and why: one line straight to stderr (not captured
/// by cargo test, so it shows next to the test's `ok`), also appended to [`skipped_tests_file`].
pub fn skip(reason: &str) {
    use std::io::Write as _;
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let line = format!("SKIPPED {test}: {reason}");
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(skipped_tests_file()) {
        let _ = writeln!(f, "{line}");
    }
}

fn unreachable(db: Db, url: &str, e: impl std::fmt::Display) -> Option<TestDb> {
    if may_skip() {
        skip(&format!("{db:?} at {url} is not reachable ({e}) and AX_SKIP_DB_TESTS=1"));
        return None;
    }
    panic!(
        "{db:?} at {url} is not reachable: {e}. Start it (see README: `.ci/run` starts the databases), or set \
         AX_SKIP_DB_TESTS=1 outside CI to skip"
    );
}

impl TestDb {
    /// A fresh database, or `None` if it is unreachable and skipping is allowed (never in CI).
    pub async fn create(db: Db) -> Option<TestDb> {
        let server = match db {
            Db::Sqlite => {
                let name = unique_name();
                let dir = std::env::temp_dir().join(format!("ax-test-{name}"));
                std::fs::create_dir_all(&dir).expect("temp dir");
                let url = format!("sqlite://{}", dir.join("ax.db").display());
                return Some(TestDb { db, url, name, server: String::new(), dir: Some(dir) });
            }
            Db::Postgres => postgres_url(),
            Db::MySql => mysql_url(),
        };
        match TestDb::create_at(db, server.clone()).await {
            Ok(t) => Some(t),
            Err(e) => unreachable(db, &server, e),
        }
    }

    /// A fresh database on a server of the test's own (see [`servers`]); panics if it does not answer.
    pub async fn create_on(server: &servers::PrivateServer) -> TestDb {
        let url = server.url();
        TestDb::create_at(server.db(), url.clone())
            .await
            .unwrap_or_else(|e| panic!("{:?} at {url} is not reachable: {e}", server.db()))
    }

    /// A fresh schema (PostgreSQL) or database (MySQL) on the server at `server`; `Err` if it
    /// cannot be reached.
    async fn create_at(db: Db, server: String) -> Result<TestDb, sqlx::Error> {
        let name = unique_name();
        match db {
            Db::Sqlite => unreachable!("SQLite has no server"),
            Db::Postgres => {
                let admin = sqlx_admin_pg(&server).await?;
                drop_stale(&admin, db).await;
                sqlx::query(&format!("CREATE SCHEMA {name}")).execute(&admin).await.expect("create schema");
                admin.close().await;
                let sep = if server.contains('?') { '&' } else { '?' };
                // AX_TEST_PG_OPTIONS adds session settings, e.g. auto_explain when profiling.
                let extra = std::env::var("AX_TEST_PG_OPTIONS")
                    .map(|o| format!("%20{}", o.replace(' ', "%20").replace('=', "%3D")))
                    .unwrap_or_default();
                let url = format!("{server}{sep}options=-c%20search_path%3D{name}{extra}");
                Ok(TestDb { db, url, name, server, dir: None })
            }
            Db::MySql => {
                let admin = sqlx::mysql::MySqlPoolOptions::new()
                    .max_connections(2)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect(&server)
                    .await?;
                drop_stale_mysql(&admin).await;
                sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.expect("create database");
                admin.close().await;
                let base = server.rsplit_once('/').map(|(b, _)| b.to_owned()).unwrap_or(server.clone());
                let url = format!("{base}/{name}");
                Ok(TestDb { db, url, name, server, dir: None })
            }
        }
    }

    /// The same database under another URL (e.g. through a proxy), as a handle that cleans
    /// nothing up.
    pub fn with_url(&self, url: String) -> TestDb {
        TestDb { db: self.db, url, name: self.name.clone(), server: self.server.clone(), dir: None }
    }

    /// A migrated store on this database.
    pub async fn store(&self) -> Arc<Store> {
        self.store_with(10).await
    }

    /// A migrated store with a pool of `max_connections`.
    pub async fn store_with(&self, max_connections: u32) -> Arc<Store> {
        let mut opts = ConnectOptions::new(self.url.clone());
        opts.max_connections = max_connections;
        let s = store::connect(&opts).await.expect("connect store");
        s.migrate().await.expect("migrate");
        s
    }

    /// Drops the schema or database.
    pub async fn cleanup(mut self) {
        match self.db {
            Db::Sqlite => {}
            Db::Postgres => {
                if let Ok(admin) = sqlx_admin_pg(&self.server).await {
                    let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name)).execute(&admin).await;
                    admin.close().await;
                }
            }
            Db::MySql => {
                if let Ok(admin) = sqlx::mysql::MySqlPool::connect(&self.server).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {}", self.name)).execute(&admin).await;
                    admin.close().await;
                }
            }
        }
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

async fn sqlx_admin_pg(server: &str) -> Result<sqlx::PgPool, sqlx::Error> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(5))
        .connect(server)
        .await
}

fn stale(name: &str) -> bool {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    name.strip_prefix("ax_t_")
        .and_then(|r| r.split('_').next())
        .and_then(|s| s.parse::<u64>().ok())
        .is_some_and(|t| now.saturating_sub(t) > 3 * 3600)
}

async fn drop_stale(admin: &sqlx::PgPool, _db: Db) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'ax\\_t\\_%'")
            .fetch_all(admin)
            .await
            .unwrap_or_default();
    for n in names.into_iter().filter(|n| stale(n)) {
        let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {n} CASCADE")).execute(admin).await;
    }
}

async fn drop_stale_mysql(admin: &sqlx::MySqlPool) {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(schema_name AS CHAR) FROM information_schema.schemata WHERE schema_name LIKE 'ax\\_t\\_%'",
    )
    .fetch_all(admin)
    .await
    .unwrap_or_default();
    for n in names.into_iter().filter(|n| stale(n)) {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {n}")).execute(admin).await;
    }
}

/// Polls `f` until it returns `Some`, or panics with `what` after `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let end = tokio::time::Instant::now() + deadline;
    let mut pause = Duration::from_millis(5);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if tokio::time::Instant::now() >= end {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Declares one `#[tokio::test]` per backend for each listed async fn taking a [`TestDb`].
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),+ $(,)?) => {
        mod sqlite { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() {
            let Some(db) = $crate::TestDb::create($crate::Db::Sqlite).await else { return };
            super::$name(&db).await; db.cleanup().await;
        })+ }
        mod postgres { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() {
            let Some(db) = $crate::TestDb::create($crate::Db::Postgres).await else { return };
            super::$name(&db).await; db.cleanup().await;
        })+ }
        mod mysql { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() {
            let Some(db) = $crate::TestDb::create($crate::Db::MySql).await else { return };
            super::$name(&db).await; db.cleanup().await;
        })+ }
    };
}

/// Declares one `#[tokio::test]` per server backend (PostgreSQL, MySQL/MariaDB) for each listed
/// async fn taking a [`TestDb`]: for cluster behaviour, which needs a shared server.
#[macro_export]
macro_rules! on_server_backends {
    ($($name:ident),+ $(,)?) => {
        mod postgres { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() {
            let Some(db) = $crate::TestDb::create($crate::Db::Postgres).await else { return };
            super::$name(&db).await; db.cleanup().await;
        })+ }
        mod mysql { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() {
            let Some(db) = $crate::TestDb::create($crate::Db::MySql).await else { return };
            super::$name(&db).await; db.cleanup().await;
        })+ }
    };
}

impl TestDb {
    /// Runs one SQL statement on a connection of its own (for tests that arrange rows axd would
    /// take too long to produce, e.g. an instance finished two days ago); returns the rows affected.
    pub async fn execute(&self, sql: &str) -> u64 {
        use sqlx::{Connection as _, Executor as _};
        let rows = match self.db {
            Db::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(&self.url).await.expect("connect");
                c.execute(sql).await.map(|r| r.rows_affected())
            }
            Db::Postgres => {
                let mut c = sqlx::PgConnection::connect(&self.url).await.expect("connect");
                c.execute(sql).await.map(|r| r.rows_affected())
            }
            Db::MySql => {
                let mut c = sqlx::MySqlConnection::connect(&self.url).await.expect("connect");
                c.execute(sql).await.map(|r| r.rows_affected())
            }
        };
        rows.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The one number a SQL query answers (e.g. a `COUNT(*)`), on a connection of its own.
    pub async fn scalar(&self, sql: &str) -> i64 {
        use sqlx::Connection as _;
        let v = match self.db {
            Db::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(&self.url).await.expect("connect");
                sqlx::query_scalar(sql).fetch_one(&mut c).await
            }
            Db::Postgres => {
                let mut c = sqlx::PgConnection::connect(&self.url).await.expect("connect");
                sqlx::query_scalar(sql).fetch_one(&mut c).await
            }
            Db::MySql => {
                let mut c = sqlx::MySqlConnection::connect(&self.url).await.expect("connect");
                sqlx::query_scalar(sql).fetch_one(&mut c).await
            }
        };
        v.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The URL with its host and port replaced by `addr` (to go through a proxy).
    pub fn url_via(&self, addr: std::net::SocketAddr) -> String {
        let (scheme, rest) = self.url.split_once("://").expect("url scheme");
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let creds = authority.rsplit_once('@').map(|(c, _)| format!("{c}@")).unwrap_or_default();
        format!("{scheme}://{creds}{addr}/{path}")
    }

    /// The server address of the URL (PostgreSQL and MySQL).
    pub fn server_addr(&self) -> std::net::SocketAddr {
        let rest = self.url.split_once("://").expect("scheme").1;
        let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let hostport = if hostport.contains(':') {
            hostport.to_owned()
        } else {
            match self.db {
                Db::Postgres => format!("{hostport}:5432"),
                _ => format!("{hostport}:3306"),
            }
        };
        let hostport = hostport.replace("localhost", "127.0.0.1");
        hostport.parse().expect("server address")
    }
}

#[cfg(test)]
mod scratch_tests {
    use super::ScratchDir;

    #[test]
    fn a_scratch_dir_is_removed_unless_its_test_fails() {
        let d = ScratchDir::new("scratch-ok");
        let path = d.to_path_buf();
        std::fs::write(path.join("f"), "x").expect("write");
        drop(d);
        assert!(!path.exists(), "removed once the test is done");
        let (tx, rx) = std::sync::mpsc::channel();
        let failed = std::thread::spawn(move || {
            let d = ScratchDir::new("scratch-failed");
            tx.send(d.to_path_buf()).expect("send");
            panic!("a failing test");
        })
        .join();
        assert!(failed.is_err());
        let kept = rx.recv().expect("path");
        assert!(kept.exists(), "kept for the post-mortem of a failing test");
        std::fs::remove_dir_all(kept).expect("clean up");
    }
}
