//! The machine and database a benchmark ran on, printed with every figure.

use crate::DbKind;

/// Where a benchmark ran.
#[derive(Debug, Clone)]
pub struct Env {
    /// sqlite, postgres or mysql.
    pub database: String,
    /// The server's own version string.
    pub database_version: String,
    /// Logical cores.
    pub cores: usize,
    /// CPU model.
    pub cpu: String,
}

/// Reads the machine and the database version at `url`.
pub async fn detect(kind: DbKind, url: &str) -> anyhow::Result<Env> {
    let database_version = match kind {
        DbKind::Sqlite => {
            let pool = sqlx::SqlitePool::connect(url).await?;
            let v: String = sqlx::query_scalar("SELECT sqlite_version()").fetch_one(&pool).await?;
            pool.close().await;
            format!("SQLite {v}")
        }
        DbKind::Postgres => {
            let pool = sqlx::PgPool::connect(url).await?;
            let v: String = sqlx::query_scalar("SHOW server_version").fetch_one(&pool).await?;
            pool.close().await;
            format!("PostgreSQL {v}")
        }
        DbKind::Mysql => {
            let pool = sqlx::MySqlPool::connect(url).await?;
            let v: String = sqlx::query_scalar("SELECT CAST(VERSION() AS CHAR)").fetch_one(&pool).await?;
            pool.close().await;
            if v.contains("MariaDB") { format!("MariaDB {v}") } else { format!("MySQL {v}") }
        }
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".to_owned());
    Ok(Env {
        database: format!("{kind:?}").to_lowercase(),
        database_version,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        cpu,
    })
}
