//! A PgBouncer of the test's own in transaction pooling mode, in front of a PostgreSQL server.
//!
//! Its configuration file, user list and log are in a temporary directory; it listens on a free
//! port of 127.0.0.1 and passes every database to the server (`* = host=127.0.0.1 port=P`), with
//! `pool_mode = transaction` and few server connections (`default_pool_size`), so that the clients'
//! transactions take turns on shared server sessions. It runs as `postgres` when the test runs as
//! root (PgBouncer refuses root). Dropping it ends the process it started (SIGTERM, by its PID;
//! SIGKILL if it lingers) and removes the directory. A missing `pgbouncer` binary fails the test
//! (with `CI=true` always), or is a loud skip with `AX_SKIP_DB_TESTS=1` outside CI.

use std::{
    os::unix::process::CommandExt as _,
    path::PathBuf,
    process::{Child, Stdio},
    time::Duration,
};

use sqlx::Connection as _;

use crate::{
    may_skip,
    proxy::free_port,
    servers::{find_binary, owner},
    skip,
};

/// A running PgBouncer (see the module docs).
#[derive(Debug)]
pub struct PgBouncer {
    dir: PathBuf,
    child: Option<Child>,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
}

impl PgBouncer {
    /// Starts PgBouncer in front of the PostgreSQL server on 127.0.0.1:`upstream`, with
    /// `pool_size` server connections per database and user; returns once a client gets through
    /// it. `None` if `pgbouncer` is missing and skipping is allowed (never in CI).
    pub async fn start(upstream: u16, pool_size: u32) -> Option<PgBouncer> {
        let bin = match find_binary("PgBouncer", &["pgbouncer"]) {
            Ok(b) => b,
            Err(e) if may_skip() => {
                skip(&format!("{e}, and AX_SKIP_DB_TESTS=1"));
                return None;
            }
            Err(e) => panic!(
                "{e}: install the pgbouncer package (./scripts/test.sh does), or set AX_SKIP_DB_TESTS=1 outside CI to \
                 skip"
            ),
        };
        let owner = owner("postgres").unwrap_or_else(|e| panic!("{e}"));
        let dir =
            std::env::temp_dir().join(format!("ax-pgbouncer-{}-{:08x}", std::process::id(), crate::fastrand_u32()));
        std::fs::create_dir(&dir).expect("pgbouncer dir");
        let port = free_port();
        let mut b = PgBouncer { dir, child: None, port };
        let ini = format!(
            "[databases]\n* = host=127.0.0.1 port={upstream}\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = \
             {port}\nunix_socket_dir =\nauth_type = trust\nauth_file = {users}\npool_mode = transaction\n\
             default_pool_size = {pool_size}\nmax_client_conn = 500\nignore_startup_parameters = \
             extra_float_digits,options\nlogfile = {log}\nadmin_users = postgres\n",
            users = b.dir.join("users.txt").display(),
            log = b.dir.join("pgbouncer.log").display(),
        );
        std::fs::write(b.dir.join("pgbouncer.ini"), ini).expect("pgbouncer.ini");
        std::fs::write(b.dir.join("users.txt"), "\"postgres\" \"\"\n").expect("users.txt");
        let mut cmd = std::process::Command::new(&bin);
        cmd.arg(b.dir.join("pgbouncer.ini")).current_dir(&b.dir).stdin(Stdio::null()).stdout(Stdio::null());
        cmd.stderr(std::fs::File::create(b.dir.join("stderr.log")).expect("stderr log"));
        if let Some(o) = owner {
            for f in ["", "pgbouncer.ini", "users.txt", "stderr.log"] {
                std::os::unix::fs::chown(b.dir.join(f), Some(o.uid), Some(o.gid)).expect("chown");
            }
            cmd.uid(o.uid).gid(o.gid);
        }
        b.child = Some(cmd.spawn().unwrap_or_else(|e| panic!("start {}: {e}", bin.display())));
        b.wait_ready().await;
        Some(b)
    }

    /// The URL of `database` through PgBouncer, as `postgres`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    fn log(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        format!("{}{}", read("stderr.log"), read("pgbouncer.log"))
    }

    async fn wait_ready(&mut self) {
        let end = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("pgbouncer exited ({status}); its log:\n{}", self.log());
            }
            let r = async { sqlx::PgConnection::connect(&self.url("postgres")).await?.close().await };
            match tokio::time::timeout(Duration::from_secs(5), r).await {
                Ok(Ok(())) => return,
                e if tokio::time::Instant::now() >= end => {
                    panic!("pgbouncer did not let a client through within 30 s ({e:?}); its log:\n{}", self.log())
                }
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = std::process::Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let end = std::time::Instant::now() + Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) {
                if std::time::Instant::now() >= end {
                    let _ = c.kill();
                    let _ = c.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
