//! PostgreSQL backend (>= 12): claims use `FOR UPDATE SKIP LOCKED`, so any number of axd share the
//! work without waiting on each other's locks. Batches travel as arrays (`UNNEST`, `= ANY`): one
//! constant statement per operation, prepared once per connection whatever the batch size (IN
//! lists and multi-row VALUES would be a new statement to parse and plan for every size).

use std::sync::Arc;

use sqlx::{
    Postgres, Row as _,
    postgres::{PgArguments, PgConnectOptions},
    query::Query,
};

use super::{
    ConnectOptions, Notice,
    dialect::{Dialect, POSTGRES},
    exec::{BoxFuture, Driver, SqlxPool, Watch, bind_scalars, getters},
    migrations::embed_migrations,
    pg_hosts::{self, Target},
    value::{Kind, Stmt, Value},
};
use crate::error::StoreResult;

/// A pool on a PostgreSQL database.
pub type PgPool = SqlxPool<Postgres>;

impl PgPool {
    /// Connects to `opts.url`: one host, or several (see `pg_hosts`).
    pub async fn connect(opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        match Target::for_url(&opts.url)? {
            None => Self::connect_with(pg_hosts::options(&opts.url)?, opts).await,
            Some(target) => Self::connect_to(target, opts).await,
        }
    }

    /// Connects with explicit options (tests use this to pick a schema).
    pub async fn connect_with(o: PgConnectOptions, opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let pool = pool_options(opts).connect_with(tune(o, opts)).await?;
        Ok(SqlxPool { pool, watch: None, pooled: opts.transaction_pooler })
    }

    /// Connects to the host of `target` that suits it, checking each new connection, and lets
    /// the target move the pool to another host.
    async fn connect_to(target: Arc<Target>, opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let o = tune(target.options().await?, opts);
        let (check, keep) = (target.clone(), target.clone());
        let pool = pool_options(opts)
            .after_connect(move |c, _| {
                let t = check.clone();
                Box::pin(async move {
                    let r = t.check(c).await;
                    if let Err(e) = &r {
                        t.failed(e);
                    }
                    r
                })
            })
            .before_acquire(move |_, meta| {
                let kept = keep.keep(meta.age);
                Box::pin(async move { Ok(kept) })
            })
            .connect_with(o)
            .await?;
        let id = target.add(pool.clone());
        Ok(SqlxPool { pool, watch: Some(Arc::new(HostWatch { target, id })), pooled: opts.transaction_pooler })
    }
}

fn pool_options(opts: &ConnectOptions) -> sqlx::postgres::PgPoolOptions {
    sqlx::postgres::PgPoolOptions::new().max_connections(opts.max_connections).acquire_timeout(opts.acquire_timeout)
}

/// Behind a transaction pooler, no statement is kept prepared (see `exec::Conn`).
fn tune(o: PgConnectOptions, opts: &ConnectOptions) -> PgConnectOptions {
    if opts.transaction_pooler { o.statement_cache_capacity(0) } else { o }
}

/// A pool's link to the hosts of its URL.
#[derive(Debug)]
struct HostWatch {
    target: Arc<Target>,
    id: u64,
}

impl Watch for HostWatch {
    fn failed(&self, e: &sqlx::Error) {
        self.target.failed(e);
    }

    fn closed(&self) {
        self.target.remove(self.id);
    }
}

/// The migrator holds a PostgreSQL advisory lock while it runs, so axd processes starting together
/// apply each migration once.
async fn run_migrations(pool: &sqlx::PgPool) -> crate::error::StoreResult<()> {
    super::migrations::migrator(&embed_migrations!("postgres"), true).run(pool).await?;
    Ok(())
}

impl Driver for Postgres {
    const DIALECT: &'static Dialect = &POSTGRES;

    fn bind<'q>(q: Query<'q, Self, PgArguments>, v: &'q Value<'_>) -> Query<'q, Self, PgArguments> {
        bind_scalars!(q, v, arrays => match arrays {
            Value::I64s(x) => q.bind(x),
            Value::OptI64s(x) => q.bind(x),
            Value::I32s(x) => q.bind(x),
            Value::OptI32s(x) => q.bind(x),
            Value::Strs(x) => q.bind(x.iter().map(|c| c.as_ref()).collect::<Vec<&str>>()),
            Value::OptStrs(x) => q.bind(x.iter().map(|c| c.as_deref()).collect::<Vec<Option<&str>>>()),
            scalar => unreachable!("{:?} is bound above", scalar.kind()),
        })
    }

    getters!(sqlx::postgres::PgRow, try_get);

    fn rows_affected(r: &sqlx::postgres::PgQueryResult) -> u64 {
        r.rows_affected()
    }

    fn last_insert_id(_r: &sqlx::postgres::PgQueryResult) -> Option<i64> {
        None
    }

    fn migrate(pool: &sqlx::PgPool) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(run_migrations(pool))
    }

    fn listen<'a>(pool: &'a sqlx::PgPool, on: &'a (dyn Fn(Notice) + Send + Sync)) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            // The server the pool connects to: a multi-host URL moves the pool when its server goes
            // or turns read-only (`pg_hosts`). LISTEN writes nothing, so on a server that turned
            // read-only and stays up it never fails: it is moved by a look once a second.
            let server = |p: &sqlx::PgPool| {
                let o = p.connect_options();
                (o.get_host().to_owned(), o.get_port())
            };
            let listening_on = server(pool);
            let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
            listener.listen_all(Notice::CHANNELS).await?;
            let mut look = tokio::time::interval(std::time::Duration::from_secs(1));
            loop {
                tokio::select! {
                    n = listener.recv() => {
                        let n = n?;
                        if let Some(notice) = Notice::parse(n.channel(), n.payload()) {
                            on(notice);
                        }
                    }
                    _ = look.tick() => {
                        if server(pool) != listening_on {
                            tracing::warn!("the database moved: listening on the new server");
                            return Ok(true);
                        }
                    }
                }
            }
        })
    }
}

/// Rows as column arrays, for `UNNEST`: column `j` of every row becomes one array parameter.
pub(crate) fn columns_of<'a>(rows: Vec<Vec<Value<'a>>>, kinds: &[Kind]) -> Vec<Value<'a>> {
    let mut cols: Vec<Value<'a>> = kinds
        .iter()
        .map(|k| match k {
            Kind::I64 => Value::I64s(Vec::with_capacity(rows.len())),
            Kind::OptI64 => Value::OptI64s(Vec::with_capacity(rows.len())),
            Kind::I32 => Value::I32s(Vec::with_capacity(rows.len())),
            Kind::OptI32 => Value::OptI32s(Vec::with_capacity(rows.len())),
            Kind::F64 => panic!("no float array columns are written"),
            Kind::Str => Value::Strs(Vec::with_capacity(rows.len())),
            Kind::OptStr => Value::OptStrs(Vec::with_capacity(rows.len())),
            Kind::Bool => panic!("no boolean array columns are written"),
        })
        .collect();
    for row in rows {
        for (col, v) in cols.iter_mut().zip(row) {
            match (col, v) {
                (Value::I64s(a), Value::I64(x)) => a.push(x),
                (Value::OptI64s(a), Value::OptI64(x)) => a.push(x),
                (Value::I32s(a), Value::I32(x)) => a.push(x),
                (Value::OptI32s(a), Value::OptI32(x)) => a.push(x),
                (Value::Strs(a), Value::Str(x)) => a.push(x),
                (Value::OptStrs(a), Value::OptStr(x)) => a.push(x),
                (c, v) => panic!("a {:?} value in a column of {c:?}", v.kind()),
            }
        }
    }
    cols
}

/// One column's values as the array parameter of their kind.
pub(crate) fn array_of<'a>(kind: Kind, values: impl Iterator<Item = Value<'a>>) -> Value<'a> {
    fn bad(v: &Value<'_>, kind: Kind) -> ! {
        panic!("a {:?} value in a column of {kind:?}", v.kind())
    }
    match kind {
        Kind::I64 => Value::I64s(values.map(|v| if let Value::I64(x) = v { x } else { bad(&v, kind) }).collect()),
        Kind::OptI64 => {
            Value::OptI64s(values.map(|v| if let Value::OptI64(x) = v { x } else { bad(&v, kind) }).collect())
        }
        Kind::I32 => Value::I32s(values.map(|v| if let Value::I32(x) = v { x } else { bad(&v, kind) }).collect()),
        Kind::OptI32 => {
            Value::OptI32s(values.map(|v| if let Value::OptI32(x) = v { x } else { bad(&v, kind) }).collect())
        }
        Kind::F64 => panic!("no float array columns are written"),
        Kind::Str => Value::Strs(values.map(|v| if let Value::Str(x) = v { x } else { bad(&v, kind) }).collect()),
        Kind::OptStr => {
            Value::OptStrs(values.map(|v| if let Value::OptStr(x) = v { x } else { bad(&v, kind) }).collect())
        }
        Kind::Bool => panic!("no boolean array columns are written"),
    }
}

/// `UNNEST(?::bigint[], ?::text[], ...) AS v(names...)` for columns of these kinds.
pub(crate) fn unnest(names: &[&str], kinds: &[Kind]) -> String {
    let params: Vec<String> = kinds.iter().map(|k| format!("?::{}", k.pg_array())).collect();
    format!("UNNEST({}) AS v({})", params.join(", "), names.join(", "))
}

/// A statement over whole columns of rows: `sql` holds one `{UNNEST}` for the arrays.
pub(crate) fn unnest_stmt<'a>(sql: &str, names: &[&str], kinds: &[Kind], rows: Vec<Vec<Value<'a>>>) -> Stmt<'a> {
    let mut s = Stmt::new(sql.replace("{UNNEST}", &unnest(names, kinds)));
    s.args = columns_of(rows, kinds);
    s
}
