//! SQLite backend: the embedded default for a single axd.
//!
//! Write transactions start with `BEGIN IMMEDIATE`, which takes SQLite's single write lock up front:
//! one writer at a time is what makes claims exclusive here (there is no `FOR UPDATE`), and taking
//! the lock first avoids the busy-upgrade deadlock of deferred transactions. WAL mode lets readers
//! (the admin API) run beside the writer.

use std::{str::FromStr, time::Duration};

use sqlx::{
    Row as _, Sqlite,
    query::Query,
    sqlite::{SqliteArguments, SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous},
};

use super::{
    ConnectOptions,
    dialect::{Dialect, SQLITE},
    exec::{BoxFuture, Driver, SqlxPool, bind_scalars, getters, unsupported},
    migrations::embed_migrations,
    value::Value,
};
use crate::error::StoreResult;

/// A pool on an SQLite file.
pub type SqlitePool = SqlxPool<Sqlite>;

impl SqlitePool {
    /// Opens (creating if needed) the database file named by `opts.url`.
    pub async fn connect(opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let o = SqliteConnectOptions::from_str(&opts.url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: each commit's WAL frames are on disk (fsync) before the commit returns, so what
            // axd acknowledged (a trigger's instance, a ResultAck) survives an OS crash or power loss
            // too. NORMAL syncs only at checkpoints: a power loss could undo an acknowledged result,
            // and the instance would run again. Measured: burn-down of 50,000 on SQLite −6.5 %.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        if !is_in_memory(&opts.url) {
            create_private(o.get_filename()).map_err(|e| crate::error::StoreError::Unavailable(sqlx::Error::Io(e)))?;
        }
        // Opening a new database file from several connections at once can briefly report "database
        // is locked" while one of them switches it to WAL; that settles within milliseconds.
        let mut attempt = 0;
        loop {
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(opts.max_connections.max(2))
                .acquire_timeout(opts.acquire_timeout)
                .connect_with(o.clone())
                .await;
            match pool {
                Ok(pool) => return Ok(SqlxPool::new(pool)),
                Err(sqlx::Error::Database(e)) if attempt < 10 && e.message().contains("locked") => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(20 * attempt)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Whether `url` names an in-memory database (nothing on disk to create).
fn is_in_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

/// Creates the database file and the missing directories above it readable by this user only
/// (0600 and 0700, less the umask), before SQLite opens it: SQLite then gives the `-wal` and `-shm`
/// files it creates beside it the file's mode. Stored params and outputs are nobody else's to read.
/// What exists already is left as it is (a directory the operator chose, or a database whose mode
/// they set); an existing database readable by others is logged once as a warning.
fn create_private(file: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
    if let Some(dir) = file.parent()
        && !dir.as_os_str().is_empty()
        && !dir.exists()
    {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        b.mode(0o700);
        b.create(dir)?;
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    o.mode(0o600);
    match o.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            #[cfg(unix)]
            if let Ok(m) = std::fs::metadata(file)
                && m.permissions().mode() & 0o077 != 0
            {
                tracing::warn!(file = %file.display(), mode = format!("{:o}", m.permissions().mode() & 0o777),
                    "the database file is readable by other users; `chmod 600` it (and its -wal and -shm files)");
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// SQLite has no lock for the migrator to take. One process migrates at a time through this mutex;
/// a second process (SQLite is for one axd, but a restart may overlap) that loses the race sees
/// "already exists", re-reads the applied versions and succeeds on a retry.
async fn run_migrations(pool: &sqlx::SqlitePool) -> crate::error::StoreResult<()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _guard = LOCK.lock().await;
    let migrator = super::migrations::migrator(&embed_migrations!("sqlite"), true);
    let mut attempt = 0;
    loop {
        match migrator.run(pool).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt < 3 => {
                attempt += 1;
                tracing::warn!(error = %e, "sqlite migration raced another process; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl Driver for Sqlite {
    const DIALECT: &'static Dialect = &SQLITE;

    fn bind<'q>(q: Query<'q, Self, SqliteArguments<'q>>, v: &'q Value<'_>) -> Query<'q, Self, SqliteArguments<'q>> {
        bind_scalars!(q, v, other => unsupported("SQLite", other))
    }

    getters!(sqlx::sqlite::SqliteRow, try_get);

    fn rows_affected(r: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        r.rows_affected()
    }

    fn last_insert_id(r: &sqlx::sqlite::SqliteQueryResult) -> Option<i64> {
        Some(r.last_insert_rowid())
    }

    fn begin(pool: &sqlx::SqlitePool) -> BoxFuture<'_, Result<sqlx::Transaction<'static, Self>, sqlx::Error>> {
        Box::pin(pool.begin_with("BEGIN IMMEDIATE"))
    }

    fn migrate(pool: &sqlx::SqlitePool) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(run_migrations(pool))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::store::Pool as _;

    fn mode(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
    }

    fn temp_root(name: &str) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("ax-perm-{name}-{}-{:x}", std::process::id(), fastrand::u64(..)));
        std::fs::create_dir_all(&root).expect("temp root");
        root
    }

    #[tokio::test]
    async fn a_new_database_and_its_directories_are_private() {
        let root = temp_root("new");
        let db = root.join("ax-data").join("nested").join("ax.db");
        let opts = ConnectOptions::new(format!("sqlite://{}", db.display()));
        let pool = SqlitePool::connect(&opts).await.expect("connect");
        pool.migrate().await.expect("migrate");
        // A write puts pages in the WAL, so both -wal and -shm exist now.
        sqlx::query("CREATE TABLE perm_probe (x INTEGER)").execute(&pool.pool).await.expect("write");
        assert_eq!(mode(&root.join("ax-data")), 0o700, "a new directory");
        assert_eq!(mode(&root.join("ax-data").join("nested")), 0o700, "a new directory");
        assert_eq!(mode(&db), 0o600, "the database file");
        for side in ["ax.db-wal", "ax.db-shm"] {
            let p = db.with_file_name(side);
            assert!(p.exists(), "{side} exists while the pool is open");
            assert_eq!(mode(&p), 0o600, "{side}");
        }
        pool.close().await;
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Every pooled connection writes ahead (WAL) and syncs each commit (FULL, 2): an acknowledged
    /// write survives a power loss, not only a crash of axd.
    #[tokio::test]
    async fn every_connection_syncs_each_commit_to_disk() {
        let root = temp_root("sync");
        let opts = ConnectOptions::new(format!("sqlite://{}", root.join("ax.db").display()));
        let pool = SqlitePool::connect(&opts).await.expect("connect");
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut c = pool.pool.acquire().await.expect("a connection");
            let sync: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut *c).await.expect("pragma");
            let journal: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut *c).await.expect("pragma");
            assert_eq!((sync, journal.as_str()), (2, "wal"), "synchronous = FULL, journal_mode = WAL");
            held.push(c);
        }
        drop(held);
        pool.close().await;
        let _ = std::fs::remove_dir_all(&root);
    }

    #[tokio::test]
    async fn an_existing_directory_keeps_its_mode() {
        let root = temp_root("existing");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o750)).expect("chmod");
        let db = root.join("ax.db");
        let opts = ConnectOptions::new(format!("sqlite://{}", db.display()));
        let pool = SqlitePool::connect(&opts).await.expect("connect");
        pool.close().await;
        assert_eq!(mode(&root), 0o750, "an operator's directory is not changed");
        assert_eq!(mode(&db), 0o600, "the new database file in it is private");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn in_memory_urls_create_nothing() {
        assert!(is_in_memory("sqlite::memory:"));
        assert!(is_in_memory("sqlite://file:x?mode=memory&cache=shared"));
        assert!(!is_in_memory("sqlite://./ax-data/ax.db"));
    }
}
