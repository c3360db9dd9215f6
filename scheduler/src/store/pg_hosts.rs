//! Several PostgreSQL hosts in one URL, as libpq takes them:
//! `postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`.
//!
//! sqlx connects to one host. A [`Target`] holds the options of each host and which one the pools
//! use now; with `target_session_attrs=read-write` (or `primary`) it accepts a host only when a
//! fresh session there is writable (`pg_is_in_recovery()` false and `transaction_read_only` off),
//! and every new connection is checked again before the pool hands it out. When a connection
//! fails in a way that says the server is gone or read-only (an I/O error, a pool timeout, SQLSTATE
//! 25006 read_only_sql_transaction, 57P01..57P03, class 08), the pools report it here
//! ([`Target::failed`]); one task then tries the hosts in order until one is accepted, points every
//! pool of the URL at it, and from then on the pools close the connections opened before the switch
//! instead of handing them out. Every pool of one URL in a process shares one `Target`, so the
//! first pool that sees the primary go moves them all.

use std::{
    str::FromStr as _,
    sync::{Arc, Mutex, Weak},
    time::{Duration, Instant},
};

use sqlx::{
    Connection as _, Row as _,
    postgres::{PgConnectOptions, PgConnection},
};

use crate::error::{StoreError, StoreResult, is_failover_code};

/// How long one host gets to accept a connection and answer the check during a search.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest pause between two searches while no host is accepted.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// The hosts of one URL and which one the pools use.
#[derive(Debug)]
pub(crate) struct Target {
    /// One set of options per host, in the URL's order.
    hosts: Vec<PgConnectOptions>,
    /// Whether a host must be writable (`target_session_attrs=read-write` or `primary`).
    read_write: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The host the pools connect to.
    current: usize,
    /// When the pools last moved to another host: connections opened before are closed.
    switched_at: Option<Instant>,
    /// Whether a search runs.
    searching: bool,
    /// The pools on this URL, by id.
    pools: Vec<(u64, sqlx::PgPool)>,
    next_id: u64,
}

/// The targets of the URLs this process connects to, so that all pools of one URL share one.
static REGISTRY: Mutex<Vec<(String, Weak<Target>)>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A URL split into one single-host URL per host, and its `target_session_attrs`.
#[derive(Debug, PartialEq)]
pub(crate) struct Split {
    /// One URL per host, without `target_session_attrs`.
    pub urls: Vec<String>,
    /// `target_session_attrs` was `read-write` or `primary`.
    pub read_write: bool,
    /// `target_session_attrs` was given at all.
    pub attrs_given: bool,
}

/// Splits a libpq-style URL (`scheme://[user[:password]@]host[:port][,host[:port]...][/db][?query]`).
pub(crate) fn split(url: &str) -> StoreResult<Split> {
    let bad = |why: &str| StoreError::BadUrl(why.to_owned());
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let query_at = rest.find('?').unwrap_or(rest.len());
    let hosts_at = rest[..query_at].rfind('@').map_or(0, |a| a + 1);
    let hosts_end = hosts_at + rest[hosts_at..].find(['/', '?']).unwrap_or(rest.len() - hosts_at);
    let (userinfo, hosts, tail) = (&rest[..hosts_at], &rest[hosts_at..hosts_end], &rest[hosts_end..]);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut attrs = None;
    let params: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| match p.split_once('=') {
            Some(("target_session_attrs", v)) => {
                attrs = Some(v.to_owned());
                false
            }
            _ => true,
        })
        .collect();
    let read_write = match attrs.as_deref() {
        None | Some("any") => false,
        Some("read-write" | "primary") => true,
        Some(other) => {
            return Err(bad(&format!(
                "target_session_attrs={other} is not supported (use read-write, primary or any)"
            )));
        }
    };
    let query = if params.is_empty() { String::new() } else { format!("?{}", params.join("&")) };
    let urls: Vec<String> = hosts.split(',').map(|h| format!("{scheme}://{userinfo}{h}{path}{query}")).collect();
    if hosts.split(',').any(str::is_empty) {
        return Err(bad("an empty host in the host list"));
    }
    Ok(Split { urls, read_write, attrs_given: attrs.is_some() })
}

impl Target {
    /// The target shared by every pool of `url`, or `None` for a URL of one host without
    /// `target_session_attrs` (sqlx connects to it as it is).
    pub(crate) fn for_url(url: &str) -> StoreResult<Option<Arc<Target>>> {
        let s = split(url)?;
        if s.urls.len() == 1 && !s.attrs_given {
            return Ok(None);
        }
        let mut registry = lock(&REGISTRY);
        registry.retain(|(_, t)| t.strong_count() > 0);
        if let Some(t) = registry.iter().find(|(u, _)| u == url).and_then(|(_, t)| t.upgrade()) {
            return Ok(Some(t));
        }
        let hosts = s.urls.iter().map(|u| options(u)).collect::<StoreResult<Vec<_>>>()?;
        let t = Arc::new(Target { hosts, read_write: s.read_write, state: Default::default() });
        registry.push((url.to_owned(), Arc::downgrade(&t)));
        Ok(Some(t))
    }

    /// The options of the host to use now: on the first call, the first host accepted (in the
    /// URL's order); `Unavailable` if none is.
    pub(crate) async fn options(&self) -> StoreResult<PgConnectOptions> {
        if lock(&self.state).pools.is_empty() {
            let (found, last) = self.search().await;
            match found {
                Some(i) => lock(&self.state).current = i,
                None => return Err(StoreError::Unavailable(last.unwrap_or(sqlx::Error::PoolTimedOut))),
            }
        }
        Ok(self.hosts[lock(&self.state).current].clone())
    }

    /// Tries each host in order; the first accepted, or the last error.
    async fn search(&self) -> (Option<usize>, Option<sqlx::Error>) {
        let mut last = None;
        for (i, o) in self.hosts.iter().enumerate() {
            let probe = async {
                let mut c = PgConnection::connect_with(o).await?;
                let r = self.check(&mut c).await;
                let _ = c.close().await;
                r
            };
            match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
                Ok(Ok(())) => return (Some(i), None),
                Ok(Err(e)) => last = Some(e),
                Err(_) => last = Some(sqlx::Error::PoolTimedOut),
            }
        }
        (None, last)
    }

    /// Whether a fresh session on `c` suits the URL: writable when it asks for read-write.
    pub(crate) async fn check(&self, c: &mut PgConnection) -> Result<(), sqlx::Error> {
        if !self.read_write {
            return Ok(());
        }
        // A simple query (no prepared statement), so that it also passes a transaction pooler.
        let row = sqlx::Executor::fetch_one(
            &mut *c,
            "SELECT CASE WHEN pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' THEN 'ro' ELSE \
             'rw' END",
        )
        .await?;
        match row.try_get::<String, _>(0)?.as_str() {
            "rw" => Ok(()),
            _ => Err(sqlx::Error::Configuration("the server is read-only (a standby?); trying the next host".into())),
        }
    }

    /// Adds a pool on this URL (its connect options follow the current host); its id for
    /// [`Target::remove`].
    pub(crate) fn add(&self, pool: sqlx::PgPool) -> u64 {
        let mut s = lock(&self.state);
        s.next_id += 1;
        let id = s.next_id;
        s.pools.push((id, pool));
        id
    }

    /// Forgets a closed pool.
    pub(crate) fn remove(&self, id: u64) {
        lock(&self.state).pools.retain(|(i, _)| *i != id);
    }

    /// Whether a pooled connection of this age may still be handed out: not if it was opened
    /// before the pools moved to another host.
    pub(crate) fn keep(&self, age: Duration) -> bool {
        let Some(at) = lock(&self.state).switched_at else { return true };
        Instant::now().checked_sub(age).is_none_or(|opened| opened >= at)
    }

    /// Reports a failed connection or statement: an error that says the server is gone or
    /// read-only starts a search for the host to use (one at a time).
    pub(crate) fn failed(self: &Arc<Self>, e: &sqlx::Error) {
        if !is_failover_error(e) {
            return;
        }
        {
            let mut s = lock(&self.state);
            if s.searching {
                return;
            }
            s.searching = true;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut pause = Duration::from_millis(50);
            loop {
                let Some(t) = weak.upgrade() else { return };
                if lock(&t.state).pools.is_empty() {
                    lock(&t.state).searching = false;
                    return;
                }
                if let (Some(i), _) = t.search().await {
                    t.switch(i);
                    return;
                }
                drop(t);
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
        });
    }

    /// Points every pool at host `i` (if it is another one) and ends the search.
    fn switch(&self, i: usize) {
        let mut s = lock(&self.state);
        s.searching = false;
        if s.current == i {
            return;
        }
        tracing::warn!(
            from = %host_of(&self.hosts[s.current]),
            to = %host_of(&self.hosts[i]),
            "the database moved: connecting to another host of the URL"
        );
        s.current = i;
        for (_, p) in &s.pools {
            p.set_connect_options(self.hosts[i].clone());
        }
        s.switched_at = Some(Instant::now());
    }
}

/// The options of one host's URL: its connections are named `axd` in `pg_stat_activity` unless the
/// URL (or `PGAPPNAME`) names them.
pub(super) fn options(url: &str) -> StoreResult<PgConnectOptions> {
    let o = PgConnectOptions::from_str(url)?;
    Ok(if o.get_application_name().is_some() { o } else { o.application_name("axd") })
}

fn host_of(o: &PgConnectOptions) -> String {
    format!("{}:{}", o.get_host(), o.get_port())
}

/// Whether an error says the server went away or cannot take writes, so that another host may
/// have to be found.
pub(crate) fn is_failover_error(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|c| is_failover_code(&c)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections are named `axd` unless the URL names them (a name per axd, to tell them apart).
    #[test]
    fn connections_are_named_axd_unless_the_url_names_them() {
        let named = |url: &str| options(url).expect("url").get_application_name().map(str::to_owned);
        assert_eq!(named("postgres://ax@db/ax").as_deref(), Some("axd"));
        assert_eq!(named("postgres://ax@db/ax?application_name=axd-eu-1").as_deref(), Some("axd-eu-1"));
    }

    #[test]
    fn splits_hosts_and_keeps_the_rest() {
        let s = split("postgres://ax:pw@h1:5432,h2:6543/db?target_session_attrs=read-write&sslmode=disable").unwrap();
        assert_eq!(
            s.urls,
            vec!["postgres://ax:pw@h1:5432/db?sslmode=disable", "postgres://ax:pw@h2:6543/db?sslmode=disable"]
        );
        assert!(s.read_write && s.attrs_given);
        let one = split("postgresql://h/db").unwrap();
        assert_eq!(one.urls, vec!["postgresql://h/db"]);
        assert!(!one.read_write && !one.attrs_given);
        assert!(split("postgres://a,,b/db").is_err());
        assert!(split("postgres://a,b/db?target_session_attrs=standby").is_err());
        let primary = split("postgres://a,b?target_session_attrs=primary").unwrap();
        assert_eq!(primary.urls, vec!["postgres://a", "postgres://b"]);
        assert!(primary.read_write);
    }

    #[test]
    fn a_password_with_a_comma_is_not_a_host_list() {
        let s = split("postgres://u:p,w@h1,h2/db").unwrap();
        assert_eq!(s.urls, vec!["postgres://u:p,w@h1/db", "postgres://u:p,w@h2/db"]);
    }

    #[test]
    fn codes_of_a_server_gone_or_read_only() {
        for c in ["25006", "57P01", "57P02", "57P03", "08006", "08001"] {
            assert!(is_failover_code(c), "{c}");
        }
        for c in ["40001", "23505", "42P01"] {
            assert!(!is_failover_code(c), "{c}");
        }
    }
}
