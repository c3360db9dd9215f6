//! Database servers of a test's own, for tests that stop or restart their server (the chaos test).
//!
//! The shared PostgreSQL and MariaDB of `scripts/test-databases.sh` serve every test at once (cargo
//! nextest runs several test processes side by side), so no test may restart them. A
//! [`PrivateServer`] is a fresh server in a temporary directory, listening on a free port of
//! 127.0.0.1 with its unix socket in that directory, which the test starts, restarts and stops
//! itself. Dropping it stops the server process it started (by its PID) and removes the directory,
//! also when the test panicked.
//!
//! The binaries: `initdb` and `postgres` from the newest `/usr/lib/postgresql/<version>/bin` (or
//! `AX_TEST_PG_BINDIR`); `mariadb-install-db` and `mariadbd` from `PATH`, `/usr/bin` or `/usr/sbin`.
//! A missing one fails the test as an unreachable shared database does (see the crate docs: with
//! `CI=true` always). When the test runs as root, the server runs as the `postgres` or `mysql` OS
//! user (PostgreSQL refuses to run as root).

use std::{
    ffi::OsString,
    os::unix::{fs::MetadataExt as _, process::CommandExt as _},
    path::{Path, PathBuf},
    process::{Child, ExitStatus, Stdio},
    time::Duration,
};

use crate::{Db, may_skip, proxy::free_port, skip};

/// How long a server gets to accept connections after it was started, and to exit after it was
/// asked to stop.
const DEADLINE: Duration = Duration::from_secs(60);

/// Why a private server could not be set up, started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A binary or OS user the server needs is not on this machine.
    #[error("{what} not found ({detail})")]
    Missing {
        /// What is missing.
        what: &'static str,
        /// Where it was looked for.
        detail: String,
    },
    /// A file system or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// The operation.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `initdb` or `mariadb-install-db` failed.
    #[error("{command} failed ({status}):\n{output}")]
    Setup {
        /// The command.
        command: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed.
        output: String,
    },
    /// The server process exited before it accepted a connection.
    #[error("the server exited ({status}) before accepting connections; its log ends:\n{log}")]
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// The end of its log.
        log: String,
    },
    /// The server did not accept a connection before the deadline.
    #[error("the server did not accept connections within {DEADLINE:?} (last error: {last}); its log ends:\n{log}")]
    NotReady {
        /// The last connection error.
        last: String,
        /// The end of its log.
        log: String,
    },
    /// The server did not exit before the deadline after it was asked to stop (it was then killed).
    #[error("the server (pid {pid}) did not stop within {DEADLINE:?} and was killed")]
    NotStopped {
        /// Its process id.
        pid: u32,
    },
}

pub(crate) type Result<T> = std::result::Result<T, ServerError>;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServerError {
    let what = what.into();
    move |source| ServerError::Io { what, source }
}

/// The OS user a server runs as when the test runs as root.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// `None` unless the test runs as root; then the uid and gid of `user`.
pub(crate) fn owner(user: &'static str) -> Result<Option<Owner>> {
    let me = std::fs::metadata("/proc/self").map_err(io("stat /proc/self"))?.uid();
    if me != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(io("read /etc/passwd"))?;
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[0] == user)
        .and_then(|f| Some(Owner { uid: f[2].parse().ok()?, gid: f[3].parse().ok()? }))
        .map(Some)
        .ok_or(ServerError::Missing {
            what: "OS user",
            detail: format!("{user}, to run the server as, in /etc/passwd"),
        })
}

/// The first of `names` found in `PATH`, `/usr/bin` or `/usr/sbin`.
pub(crate) fn find_binary(what: &'static str, names: &[&str]) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> =
        std::env::split_paths(&path).chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")]).collect();
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
        .ok_or(ServerError::Missing { what, detail: format!("{} in PATH, /usr/bin, /usr/sbin", names.join(" or ")) })
}

/// The directory of PostgreSQL's server binaries: `AX_TEST_PG_BINDIR`, or the newest
/// `/usr/lib/postgresql/<version>/bin` that has `initdb` and `postgres`.
pub(crate) fn pg_bindir() -> Result<PathBuf> {
    let has_both = |d: &Path| d.join("initdb").is_file() && d.join("postgres").is_file();
    if let Some(d) = std::env::var_os("AX_TEST_PG_BINDIR") {
        let d = PathBuf::from(d);
        return if has_both(&d) {
            Ok(d)
        } else {
            Err(ServerError::Missing { what: "PostgreSQL", detail: format!("initdb, postgres in {}", d.display()) })
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| has_both(d))
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d).ok_or(ServerError::Missing {
        what: "PostgreSQL",
        detail: "initdb, postgres in /usr/lib/postgresql/<version>/bin (or set AX_TEST_PG_BINDIR)".into(),
    })
}

/// A server process of the test's own, in its own temporary directory.
#[derive(Debug)]
pub(crate) struct Server {
    db: Db,
    pub(crate) dir: PathBuf,
    owner: Option<Owner>,
    pub(crate) port: u16,
    program: PathBuf,
    /// The server's arguments for a port.
    args: fn(&Path, u16) -> Vec<OsString>,
    pub(crate) child: Option<Child>,
}

impl Server {
    /// An empty temporary directory for a server, owned by the user it runs as; removed on drop.
    pub(crate) fn new(
        db: Db,
        name: &str,
        user: &'static str,
        program: PathBuf,
        args: fn(&Path, u16) -> Vec<OsString>,
    ) -> Result<Self> {
        let owner = owner(user)?;
        let dir = std::env::temp_dir().join(format!("ax-{name}-{}-{:08x}", std::process::id(), crate::fastrand_u32()));
        std::fs::create_dir(&dir).map_err(io(format!("create {}", dir.display())))?;
        let server = Server { db, dir, owner, port: 0, program, args, child: None };
        if let Some(o) = owner {
            std::os::unix::fs::chown(&server.dir, Some(o.uid), Some(o.gid))
                .map_err(io(format!("chown {} to {user}", server.dir.display())))?;
        }
        Ok(server)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// The last lines of the server's output.
    pub(crate) fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Runs a setup command (`initdb`, `mariadb-install-db`) as the server's user.
    pub(crate) async fn setup(&self, program: &Path, args: &[OsString]) -> Result<()> {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).current_dir(&self.dir).stdin(Stdio::null());
        if let Some(o) = self.owner {
            cmd.uid(o.uid).gid(o.gid);
        }
        let out = cmd.output().await.map_err(io(format!("run {}", program.display())))?;
        if out.status.success() {
            return Ok(());
        }
        Err(ServerError::Setup {
            command: format!(
                "{} {}",
                program.display(),
                args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
            ),
            status: out.status,
            output: format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        })
    }

    /// The URL of the server's administrative database.
    pub(crate) fn url(&self) -> String {
        match self.db {
            Db::Postgres => format!("postgres://postgres@127.0.0.1:{}/postgres", self.port),
            _ => format!("mysql://root@127.0.0.1:{}/mysql", self.port),
        }
    }

    /// Starts the server process on `self.port`, its output appended to its log.
    fn spawn(&mut self) -> Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(io("open the server log"))?;
        let err = log.try_clone().map_err(io("open the server log"))?;
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args((self.args)(&self.dir, self.port)).current_dir(&self.dir).stdin(Stdio::null()).stdout(log).stderr(err);
        if let Some(o) = self.owner {
            cmd.uid(o.uid).gid(o.gid);
        }
        self.child = Some(cmd.spawn().map_err(io(format!("start {}", self.program.display())))?);
        Ok(())
    }

    /// Waits until the server accepts a connection (polling, up to [`DEADLINE`]).
    pub(crate) async fn wait_ready(&mut self) -> Result<()> {
        use sqlx::Connection as _;
        let end = tokio::time::Instant::now() + DEADLINE;
        let url = self.url();
        let mut pause = Duration::from_millis(20);
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(ServerError::Exited { status, log: self.log_tail() });
            }
            let attempt = async {
                match self.db {
                    Db::Postgres => sqlx::PgConnection::connect(&url).await?.close().await,
                    _ => sqlx::MySqlConnection::connect(&url).await?.close().await,
                }
            };
            let last = match tokio::time::timeout(Duration::from_secs(5), attempt).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => e.to_string(),
                Err(_) => "no answer within 5 s".to_owned(),
            };
            if tokio::time::Instant::now() >= end {
                return Err(ServerError::NotReady { last, log: self.log_tail() });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Starts the server on a free port; a port taken between choosing and binding it gets
    /// another try on a new one.
    pub(crate) async fn start(&mut self) -> Result<()> {
        let mut tries = 0;
        loop {
            self.port = free_port();
            self.spawn()?;
            match self.wait_ready().await {
                Err(ServerError::Exited { .. }) if tries < 2 => tries += 1,
                r => return r,
            }
        }
    }

    /// Asks the server to shut down (fast: open sessions are ended).
    fn ask_to_stop(&self) {
        if let Some(pid) = self.child.as_ref().map(Child::id) {
            // PostgreSQL's fast shutdown is SIGINT (SIGTERM waits for every session to end);
            // MariaDB shuts down on SIGTERM.
            let sig = if self.db == Db::Postgres { "-INT" } else { "-TERM" };
            let _ = std::process::Command::new("kill").args([sig, &pid.to_string()]).status();
        }
    }

    /// Whether the server process has exited (reaping it), or is gone already.
    fn exited(&mut self) -> bool {
        self.child.as_mut().is_none_or(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// Kills the server process after it outlived the deadline.
    fn kill(&mut self) -> ServerError {
        let child = self.child.as_mut().expect("a server process");
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        ServerError::NotStopped { pid }
    }

    /// Stops the server process and waits until it has exited.
    async fn stop(&mut self) -> Result<()> {
        self.ask_to_stop();
        let end = tokio::time::Instant::now() + DEADLINE;
        while !self.exited() {
            if tokio::time::Instant::now() >= end {
                return Err(self.kill());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.child = None;
        Ok(())
    }

    /// A real restart: the server process exits, and a new one starts on the same port and data.
    async fn restart(&mut self) -> Result<()> {
        self.stop().await?;
        self.spawn()?;
        self.wait_ready().await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Not async: this also runs while a panicking test unwinds.
        self.ask_to_stop();
        let end = std::time::Instant::now() + DEADLINE;
        while !self.exited() {
            if std::time::Instant::now() >= end {
                let e = self.kill();
                let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{e}\n"));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PostgreSQL server of the test's own: a fresh cluster (`initdb`, trust authentication,
/// superuser `postgres`) run by `postgres` on a free port of 127.0.0.1.
#[derive(Debug)]
pub struct PgServer {
    server: Server,
}

impl PgServer {
    async fn try_start() -> Result<PgServer> {
        let bin = pg_bindir()?;
        let mut server = Server::new(Db::Postgres, "pg", "postgres", bin.join("postgres"), pg_args)?;
        init_pg(&server, &bin).await?;
        server.start().await?;
        Ok(PgServer { server })
    }
}

/// The arguments of a test's PostgreSQL server in `dir` (data in `dir/data`, socket in `dir`).
pub(crate) fn pg_args(dir: &Path, port: u16) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["-D".into(), dir.join("data").into(), "-k".into(), dir.into()];
    for setting in [
        format!("port={port}"),
        "listen_addresses=127.0.0.1".into(),
        "max_connections=100".into(),
        // A test server that is only ever stopped cleanly: no flushes to wait for.
        "fsync=off".into(),
        "full_page_writes=off".into(),
        "autovacuum=off".into(),
        "timezone=UTC".into(),
    ] {
        a.push("-c".into());
        a.push(setting.into());
    }
    a
}

/// `initdb` of a fresh cluster in `server.dir/data`: trust authentication, superuser `postgres`.
pub(crate) async fn init_pg(server: &Server, bin: &Path) -> Result<()> {
    let data = server.dir.join("data");
    let init: Vec<OsString> = ["-D".into(), data.into_os_string()]
        .into_iter()
        .chain(
            ["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"]
                .map(OsString::from),
        )
        .collect();
    server.setup(&bin.join("initdb"), &init).await
}

/// A MariaDB server of the test's own: a fresh data directory (`mariadb-install-db`) served by
/// `mariadbd --skip-grant-tables` (root without a password) on a free port of 127.0.0.1.
#[derive(Debug)]
pub struct MariaDbServer {
    server: Server,
}

impl MariaDbServer {
    async fn try_start() -> Result<MariaDbServer> {
        let install = find_binary("MariaDB's mariadb-install-db", &["mariadb-install-db", "mysql_install_db"])?;
        let mariadbd = find_binary("MariaDB's mariadbd", &["mariadbd", "mysqld"])?;
        let args = |dir: &Path, port: u16| -> Vec<OsString> {
            let opt = |name: &str, value: &Path| OsString::from(format!("--{name}={}", value.display()));
            vec![
                // Not the machine's my.cnf: nothing of the shared server's port, socket or data.
                "--no-defaults".into(),
                opt("datadir", &dir.join("data")),
                opt("socket", &dir.join("mariadbd.sock")),
                opt("pid-file", &dir.join("mariadbd.pid")),
                opt("tmpdir", dir),
                format!("--port={port}").into(),
                "--bind-address=127.0.0.1".into(),
                "--skip-grant-tables".into(),
                "--skip-name-resolve".into(),
                // As the shared server (scripts/test-databases.sh, Debian's defaults).
                "--character-set-server=utf8mb4".into(),
                "--collation-server=utf8mb4_general_ci".into(),
                "--innodb-flush-log-at-trx-commit=2".into(),
            ]
        };
        let mut server = Server::new(Db::MySql, "mariadb", "mysql", mariadbd, args)?;
        let init = vec![
            "--no-defaults".into(),
            OsString::from(format!("--datadir={}", server.dir.join("data").display())),
            "--auth-root-authentication-method=normal".into(),
            "--skip-test-db".into(),
        ];
        server.setup(&install, &init).await?;
        server.start().await?;
        Ok(MariaDbServer { server })
    }
}

/// A database server of the test's own (see the module docs).
#[derive(Debug)]
pub enum PrivateServer {
    /// PostgreSQL.
    Postgres(PgServer),
    /// MariaDB (for [`Db::MySql`]).
    MariaDb(MariaDbServer),
}

impl PrivateServer {
    /// Sets up and starts a server for `db` (PostgreSQL or MySQL), ready for connections; `None`
    /// if its binaries are missing and skipping is allowed (never in CI). Any other failure panics.
    pub async fn start(db: Db) -> Option<PrivateServer> {
        let started = match db {
            Db::Postgres => PgServer::try_start().await.map(PrivateServer::Postgres),
            Db::MySql => MariaDbServer::try_start().await.map(PrivateServer::MariaDb),
            Db::Sqlite => panic!("SQLite has no server"),
        };
        match started {
            Ok(s) => Some(s),
            Err(e @ ServerError::Missing { .. }) if may_skip() => {
                skip(&format!("no private {db:?} server: {e}, and AX_SKIP_DB_TESTS=1"));
                None
            }
            Err(e @ ServerError::Missing { .. }) => panic!(
                "no private {db:?} server: {e}. Install the server package (scripts/test-databases.sh does), or set \
                 AX_SKIP_DB_TESTS=1 outside CI to skip"
            ),
            Err(e) => panic!("starting a private {db:?} server: {e}"),
        }
    }

    fn server(&self) -> &Server {
        match self {
            PrivateServer::Postgres(s) => &s.server,
            PrivateServer::MariaDb(s) => &s.server,
        }
    }

    fn server_mut(&mut self) -> &mut Server {
        match self {
            PrivateServer::Postgres(s) => &mut s.server,
            PrivateServer::MariaDb(s) => &mut s.server,
        }
    }

    /// Its backend.
    pub fn db(&self) -> Db {
        self.server().db
    }

    /// The URL of its administrative database (`postgres` / `mysql`), as superuser.
    pub fn url(&self) -> String {
        self.server().url()
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.server().port
    }

    /// The process id of the running server (its postmaster / mariadbd).
    pub fn pid(&self) -> Option<u32> {
        self.server().child.as_ref().map(Child::id)
    }

    /// Its temporary directory (data, socket, log).
    pub fn dir(&self) -> &Path {
        &self.server().dir
    }

    /// A real restart: stops the server process (fast shutdown, which ends every session), waits
    /// until it has exited, and starts a new one on the same port and data; returns once it
    /// accepts connections. Panics if any of that fails.
    pub async fn restart(&mut self) {
        let db = self.db();
        if let Err(e) = self.server_mut().restart().await {
            panic!("restarting the private {db:?} server: {e}");
        }
    }
}
