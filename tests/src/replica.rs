//! A PostgreSQL primary and a streaming standby of the test's own, for failover tests.
//!
//! Both are [`servers`](crate::servers) servers (a temporary directory each, a free port of
//! 127.0.0.1, run as `postgres` when the test runs as root, stopped and removed on drop). The
//! standby is a `pg_basebackup` of the primary that streams from it as `ax_standby`; with
//! [`Replication::Sync`] the primary waits for it on every commit (`synchronous_standby_names =
//! 'ax_standby'`, `synchronous_commit = on`), so a commit acknowledged to a client is on the standby.
//! [`PgPair::crash_primary`] kills the primary's processes (SIGKILL, by the PIDs this test started:
//! the postmaster and its children); [`PgPair::promote`] runs `pg_ctl promote` on the standby.

use std::{ffi::OsString, path::Path, time::Duration};

use sqlx::Connection as _;

use crate::{
    Db, may_skip,
    servers::{Result, Server, ServerError, init_pg, pg_args, pg_bindir},
    skip,
};

/// How the standby follows the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// The primary acknowledges a commit once the standby has flushed it.
    Sync,
    /// The primary acknowledges a commit at once; the standby follows as fast as it can.
    Async,
}

/// A primary and its standby (see the module docs).
#[derive(Debug)]
pub struct PgPair {
    primary: Server,
    standby: Server,
    bin: std::path::PathBuf,
}

/// The name the standby streams as.
const STANDBY_NAME: &str = "ax_standby";

impl PgPair {
    /// Starts a primary and a standby streaming from it, and waits until the standby streams (and,
    /// with [`Replication::Sync`], is the synchronous one). `None` if PostgreSQL's server binaries
    /// are missing and skipping is allowed (never in CI); any other failure panics.
    pub async fn start(replication: Replication) -> Option<PgPair> {
        match Self::try_start(replication).await {
            Ok(p) => Some(p),
            Err(e @ ServerError::Missing { .. }) if may_skip() => {
                skip(&format!("no PostgreSQL pair: {e}, and AX_SKIP_DB_TESTS=1"));
                None
            }
            Err(e @ ServerError::Missing { .. }) => panic!(
                "no PostgreSQL pair: {e}. Install the postgresql package (scripts/test-databases.sh does), or set \
                 AX_SKIP_DB_TESTS=1 outside CI to skip"
            ),
            Err(e) => panic!("starting a PostgreSQL primary and standby: {e}"),
        }
    }

    async fn try_start(replication: Replication) -> Result<PgPair> {
        let bin = pg_bindir()?;
        for tool in ["pg_basebackup", "pg_ctl"] {
            if !bin.join(tool).is_file() {
                return Err(ServerError::Missing {
                    what: "PostgreSQL",
                    detail: format!("{tool} in {}", bin.display()),
                });
            }
        }
        let mut primary = Server::new(Db::Postgres, "pg-primary", "postgres", bin.join("postgres"), pg_args)?;
        init_pg(&primary, &bin).await?;
        let sync = match replication {
            Replication::Sync => format!("synchronous_standby_names = '{STANDBY_NAME}'\nsynchronous_commit = on\n"),
            Replication::Async => "synchronous_standby_names = ''\n".to_owned(),
        };
        append(
            &primary.dir.join("data/postgresql.conf"),
            &format!("wal_level = replica\nmax_wal_senders = 4\nwal_keep_size = '64MB'\nhot_standby = on\n{sync}"),
        )?;
        primary.start().await?;

        let mut standby = Server::new(Db::Postgres, "pg-standby", "postgres", bin.join("postgres"), pg_args)?;
        let data = standby.dir.join("data");
        let args: Vec<OsString> = vec![
            "-D".into(),
            data.clone().into(),
            "-h".into(),
            "127.0.0.1".into(),
            "-p".into(),
            primary.port.to_string().into(),
            "-U".into(),
            "postgres".into(),
            "-X".into(),
            "stream".into(),
            "-R".into(),
            "--no-sync".into(),
        ];
        standby.setup(&bin.join("pg_basebackup"), &args).await?;
        // After `-R`'s lines, so these win: the standby's name, and no synchronous standby of its
        // own once promoted (it has none; with the primary's setting, every commit would wait).
        append(
            &data.join("postgresql.auto.conf"),
            &format!(
                "primary_conninfo = 'host=127.0.0.1 port={} user=postgres application_name={STANDBY_NAME}'\n\
                 synchronous_standby_names = ''\n",
                primary.port
            ),
        )?;
        standby.start().await?;
        let pair = PgPair { primary, standby, bin };
        pair.wait_streaming(replication).await?;
        Ok(pair)
    }

    async fn wait_streaming(&self, replication: Replication) -> Result<()> {
        let want = if replication == Replication::Sync { "sync" } else { "async" };
        let end = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let state = async {
                let mut c = sqlx::PgConnection::connect(&self.primary.url()).await?;
                let r: Option<(String, String)> =
                    sqlx::query_as("SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1")
                        .bind(STANDBY_NAME)
                        .fetch_optional(&mut c)
                        .await?;
                c.close().await?;
                Ok::<_, sqlx::Error>(r)
            };
            let last = match state.await {
                Ok(Some((s, sync))) if s == "streaming" && sync == want => return Ok(()),
                Ok(r) => format!("{r:?}"),
                Err(e) => e.to_string(),
            };
            if tokio::time::Instant::now() >= end {
                return Err(ServerError::NotReady {
                    last: format!("the standby is not streaming as {want} ({last})"),
                    log: self.standby.log_tail(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The libpq-style URL of both servers' `postgres` database, primary first, that accepts only
    /// a writable server: `postgres://postgres@127.0.0.1:P,127.0.0.1:S/postgres?target_session_attrs=read-write`.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
            self.primary.port, self.standby.port
        )
    }

    /// The URL of the primary alone.
    pub fn primary_url(&self) -> String {
        self.primary.url()
    }

    /// The URL of the standby alone.
    pub fn standby_url(&self) -> String {
        self.standby.url()
    }

    /// Kills the primary as a crash would: SIGKILL to its postmaster and every child of it (the
    /// backends, the WAL sender), all processes this test started. Returns once the postmaster
    /// is reaped.
    pub fn crash_primary(&mut self) {
        let Some(mut child) = self.primary.child.take() else { panic!("the primary is not running") };
        let pid = child.id();
        let kids = children_of(pid);
        for p in std::iter::once(pid).chain(kids) {
            let _ = std::process::Command::new("kill").args(["-KILL", &p.to_string()]).status();
        }
        let _ = child.wait();
    }

    /// Promotes the standby (`pg_ctl promote`, waiting until it accepts writes).
    pub async fn promote(&self) {
        let data = self.standby.dir.join("data");
        let args: Vec<OsString> =
            vec!["promote".into(), "-w".into(), "-t".into(), "60".into(), "-D".into(), data.into()];
        if let Err(e) = self.standby.setup(&self.bin.join("pg_ctl"), &args).await {
            panic!("pg_ctl promote failed: {e}; the standby's log ends:\n{}", self.standby.log_tail());
        }
    }
}

/// The processes whose parent is `pid` (from `/proc/<pid>/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // `pid (comm) state ppid ...`: comm may hold spaces, so read after its `)`.
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok()) == Some(pid)
        })
        .collect()
}

fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|source| ServerError::Io { what: format!("open {}", path.display()), source })?;
    f.write_all(text.as_bytes()).map_err(|source| ServerError::Io { what: format!("write {}", path.display()), source })
}
