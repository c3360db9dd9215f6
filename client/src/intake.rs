//! Enqueue from your own transaction: axd consumes the table `ax_intake` of its database, so an
//! application that uses the same PostgreSQL or MySQL/MariaDB database can create an instance
//! atomically with its own writes (River's `InsertTx`). Insert a row in your transaction; if it
//! rolls back there is no row and no instance; once it commits, an axd turns the row into exactly
//! one instance (one per idempotency key) within its poll interval, and deletes the row.
//!
//! The row, in plain SQL (the columns that may be left out default to NULL):
//!
//! ```sql
//! -- PostgreSQL and MySQL/MariaDB alike
//! INSERT INTO ax_intake (app, task_name, params, idempotency_key, run_at_us, delay_us)
//! VALUES ('billing', 'send-invoice', '{"order":42}', 'order-42', NULL, 600000000);
//! ```
//!
//! - `app`: the app of the task. An application's own database role must name one granted to it
//!   (PostgreSQL enforces it by row-level security; on MySQL/MariaDB the role inserts through the
//!   app's view, [`enqueue_mysql_view`]); axd refuses a row whose task is not in that app.
//!   NULL only from axd's own role (trusted): the task's app.
//! - `task_name`: the task (it must exist when axd reads the row).
//! - `params`: JSON for this instance; NULL for the task's params.
//! - `idempotency_key`: one instance per task and key (TriggerTask's rules); NULL gives the row its
//!   own key, `intake:<row id>`.
//! - `run_at_us` (microseconds since the Unix epoch) or `delay_us` (counted from the insert,
//!   database clock): when it runs; both NULL: at once. A time that has passed runs at once.
//!
//! A row axd cannot accept (no such task, params that are not JSON, a reserved key) stays in the
//! table with the reason in its `error` column: `SELECT id, error FROM ax_intake WHERE error IS NOT
//! NULL`. With the `sqlx` feature, [`enqueue_postgres`] and [`enqueue_mysql`] write the row through
//! your sqlx transaction.

use std::time::{Duration, SystemTime};

/// One row of `ax_intake`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enqueue {
    /// The app of the task (README "Delayed enqueue from code": required of an application's own
    /// database role); `None` from a trusted role.
    pub app: Option<String>,
    /// The task.
    pub task: String,
    /// JSON params; `None`: the task's.
    pub params: Option<String>,
    /// Idempotency key; `None`: `intake:<row id>`.
    pub idempotency_key: Option<String>,
    /// When it runs (`None` with no delay: at once).
    pub run_at: Option<SystemTime>,
    /// Or this long after the row's insert.
    pub delay: Option<Duration>,
}

impl Enqueue {
    /// A row for task `task`, with the task's params, to run at once.
    pub fn new(task: impl Into<String>) -> Enqueue {
        Enqueue { task: task.into(), ..Enqueue::default() }
    }

    /// The same row bound to `app`.
    pub fn app(self, app: impl Into<String>) -> Enqueue {
        Enqueue { app: Some(app.into()), ..self }
    }

    /// `run_at` in microseconds since the Unix epoch, as the column holds it.
    pub fn run_at_us(&self) -> Option<i64> {
        let since = self.run_at?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
        i64::try_from(since.as_micros()).ok()
    }

    /// `delay` in microseconds, as the column holds it.
    pub fn delay_us(&self) -> Option<i64> {
        self.delay.map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
    }
}

/// The statement both helpers run (placeholders numbered for PostgreSQL; MySQL takes `?`).
pub const INSERT_POSTGRES: &str = "INSERT INTO ax_intake (app, task_name, params, idempotency_key, run_at_us, delay_us) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";

/// The MySQL/MariaDB form of [`INSERT_POSTGRES`].
pub const INSERT_MYSQL: &str =
    "INSERT INTO ax_intake (app, task_name, params, idempotency_key, run_at_us, delay_us) VALUES (?, ?, ?, ?, ?, ?)";

/// The name of a MySQL/MariaDB view was not a plain identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("view: {0:?} is not a plain identifier (letters, digits, _; at most 64)")]
pub struct BadView(pub String);

/// [`INSERT_MYSQL`] into the view `view` (an app's view over `ax_intake`) instead of the table.
pub fn insert_mysql_into(view: &str) -> Result<String, BadView> {
    let plain = !view.is_empty()
        && view.len() <= 64
        && view.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !view.as_bytes()[0].is_ascii_digit();
    if !plain {
        return Err(BadView(view.into()));
    }
    Ok(INSERT_MYSQL.replacen("ax_intake", &format!("`{view}`"), 1))
}

/// Inserts the row through `conn` (pass `&mut *tx` for a `sqlx::Transaction`); the row's id.
#[cfg(feature = "sqlx")]
pub async fn enqueue_postgres(conn: &mut sqlx::PgConnection, row: &Enqueue) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(INSERT_POSTGRES)
        .bind(row.app.as_deref())
        .bind(&row.task)
        .bind(row.params.as_deref())
        .bind(row.idempotency_key.as_deref())
        .bind(row.run_at_us())
        .bind(row.delay_us())
        .fetch_one(conn)
        .await
}

/// Inserts the row through `conn` (pass `&mut *tx` for a `sqlx::Transaction`); the row's id.
#[cfg(feature = "sqlx")]
pub async fn enqueue_mysql(conn: &mut sqlx::MySqlConnection, row: &Enqueue) -> Result<u64, sqlx::Error> {
    insert_mysql(conn, INSERT_MYSQL, row).await
}

/// Inserts the row through the app's view `view` (the way an application's own account writes
/// on MySQL/MariaDB: README "Delayed enqueue from code"); the row's id. The row must name the
/// view's app.
#[cfg(feature = "sqlx")]
pub async fn enqueue_mysql_view(
    conn: &mut sqlx::MySqlConnection,
    view: &str,
    row: &Enqueue,
) -> Result<u64, sqlx::Error> {
    let sql = insert_mysql_into(view).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
    insert_mysql(conn, &sql, row).await
}

#[cfg(feature = "sqlx")]
async fn insert_mysql(conn: &mut sqlx::MySqlConnection, sql: &str, row: &Enqueue) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(sql)
        .bind(row.app.as_deref())
        .bind(&row.task)
        .bind(row.params.as_deref())
        .bind(row.idempotency_key.as_deref())
        .bind(row.run_at_us())
        .bind(row.delay_us())
        .execute(conn)
        .await?;
    Ok(done.last_insert_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_microseconds() {
        let row = Enqueue {
            run_at: Some(SystemTime::UNIX_EPOCH + Duration::from_millis(1_800_000_000_123)),
            delay: Some(Duration::from_secs(600)),
            ..Enqueue::new("report")
        };
        assert_eq!(row.run_at_us(), Some(1_800_000_000_123_000));
        assert_eq!(row.delay_us(), Some(600_000_000));
        assert_eq!(Enqueue::new("x").run_at_us(), None);
    }

    #[test]
    fn only_plain_view_names_are_spliced_into_the_statement() {
        assert_eq!(
            insert_mysql_into("ax_intake_billing").expect("plain"),
            "INSERT INTO `ax_intake_billing` (app, task_name, params, idempotency_key, run_at_us, delay_us) VALUES (?, ?, ?, ?, ?, ?)"
        );
        for bad in ["", "a`b", "x; DROP TABLE t", "1abc", &"v".repeat(65)] {
            assert_eq!(insert_mysql_into(bad), Err(BadView(bad.into())), "{bad}");
        }
    }
}
