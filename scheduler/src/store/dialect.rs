//! What differs between the SQL dialects, as data: each backend is one [`Dialect`] value, and the
//! shared statements in `store/` read its fields where the dialects differ.

use super::Backend;

/// The differences between SQL dialects that the shared statements depend on.
#[derive(Debug)]
pub struct Dialect {
    /// Which backend.
    pub backend: Backend,
    /// Row lock that skips rows other transactions hold (empty on SQLite, whose write transactions
    /// are exclusive already).
    pub skip_locked: &'static str,
    /// Row lock that waits.
    pub for_update: &'static str,
    /// Index hint for the ready instances in priority-aged order: the claim, "when is the next
    /// instance due" and the backlog count (SQLite only: with statistics showing every ready row
    /// alike, SQLite 3.46 scanned the table for them, 15-60 ms per claim of 50,000 ready rows).
    pub ready_order_index: &'static str,
    /// "The row is PENDING", as the claim's index holds it: `status = 'PENDING'` where the index is
    /// partial (PostgreSQL, SQLite); on MySQL, which has no partial indexes, the generated column
    /// `ready_flag` (1 while PENDING, else NULL) that leads the index instead of `status`, so that
    /// the status changes after the claim do not touch it (migration 24).
    pub pending: &'static str,
    /// The database clock in microseconds since the epoch.
    pub now_us: &'static str,
    /// `INSERT ... RETURNING` (MySQL has none: new ids come from `LAST_INSERT_ID()`).
    pub returning: bool,
    /// Placeholders are `$1, $2, ...` instead of `?`.
    pub numbered: bool,
    /// Array parameters (`UNNEST`): one constant statement per batch operation, whatever its size.
    pub arrays: bool,
    /// `NOTIFY` inside transactions, delivered on commit.
    pub notify: bool,
    /// Insert-or-update of `ax_scheduler` (six values: id, host, address, version, started, heartbeat).
    pub upsert_scheduler: &'static str,
    /// `UPDATE ... FROM (derived table) AS v` (or MySQL's `UPDATE ... JOIN`).
    pub update_from: UpdateFrom,
    /// Appended to an `INSERT` into a table with an `id` column so that a row whose unique key
    /// exists already is left as it is, without an error.
    pub ignore_duplicate: &'static str,
}

/// How a dialect updates rows from a derived table of new values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateFrom {
    /// `UPDATE t SET c = v.c FROM (...) AS v WHERE t.id = v.id` (PostgreSQL, SQLite >= 3.33).
    From,
    /// `UPDATE t AS i JOIN (...) AS v ON i.id = v.id SET i.c = v.c` (MySQL, MariaDB).
    Join,
}

const UPSERT_ON_CONFLICT: &str = "INSERT INTO ax_scheduler (scheduler_id, host, address, version, started_at, \
    heartbeat_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scheduler_id) DO UPDATE SET host = excluded.host, \
    address = excluded.address, version = excluded.version, heartbeat_at = excluded.heartbeat_at";

/// SQLite 3.35 or newer (bundled by sqlx).
pub const SQLITE: Dialect = Dialect {
    backend: Backend::Sqlite,
    skip_locked: "",
    for_update: "",
    ready_order_index: " INDEXED BY ax_instance_ready_order",
    pending: "status = 'PENDING'",
    now_us: "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)",
    returning: true,
    numbered: false,
    arrays: false,
    notify: false,
    upsert_scheduler: UPSERT_ON_CONFLICT,
    update_from: UpdateFrom::From,
    ignore_duplicate: " ON CONFLICT DO NOTHING",
};

/// PostgreSQL 12 or newer.
pub const POSTGRES: Dialect = Dialect {
    backend: Backend::Postgres,
    skip_locked: " FOR UPDATE SKIP LOCKED",
    for_update: " FOR UPDATE",
    ready_order_index: "",
    pending: "status = 'PENDING'",
    now_us: "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
    returning: true,
    numbered: true,
    arrays: true,
    notify: true,
    upsert_scheduler: UPSERT_ON_CONFLICT,
    update_from: UpdateFrom::From,
    ignore_duplicate: " ON CONFLICT DO NOTHING",
};

/// MySQL 8.0.1 or newer, MariaDB 10.6 or newer.
pub const MYSQL: Dialect = Dialect {
    backend: Backend::MySql,
    skip_locked: " FOR UPDATE SKIP LOCKED",
    for_update: " FOR UPDATE",
    ready_order_index: "",
    pending: "ready_flag = 1",
    now_us: "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)",
    returning: false,
    numbered: false,
    arrays: false,
    notify: false,
    upsert_scheduler: "INSERT INTO ax_scheduler (scheduler_id, host, address, version, started_at, heartbeat_at) \
        VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE host = VALUES(host), address = VALUES(address), \
        version = VALUES(version), heartbeat_at = VALUES(heartbeat_at)",
    update_from: UpdateFrom::Join,
    ignore_duplicate: " ON DUPLICATE KEY UPDATE id = id",
};

impl Dialect {
    /// The size in bytes of a text column's value as a 64-bit integer, computed by the database
    /// without sending the value (PostgreSQL reads it from the value's header, even when the value
    /// is stored out of line).
    pub fn octet_length(&self, column: &str) -> String {
        match self.backend {
            Backend::Postgres => format!("CAST(OCTET_LENGTH({column}) AS BIGINT)"),
            Backend::MySql => format!("LENGTH({column})"),
            Backend::Sqlite => format!("OCTET_LENGTH({column})"),
        }
    }

    /// The statement text as this dialect's driver sends it: `?` outside string literals numbered
    /// `$1, $2, ...` where the dialect wants that.
    pub fn placeholders<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        if !self.numbered {
            return sql.into();
        }
        let mut out = String::with_capacity(sql.len() + 16);
        let mut n = 0;
        let mut in_str = false;
        for c in sql.chars() {
            match c {
                '\'' => {
                    in_str = !in_str;
                    out.push(c);
                }
                '?' if !in_str => {
                    n += 1;
                    out.push('$');
                    out.push_str(&n.to_string());
                }
                _ => out.push(c),
            }
        }
        out.into()
    }

    /// Appended to an `INSERT` so that rows whose primary key exists are left as they are (`column`
    /// is any column of the table, for MySQL's no-op update).
    pub fn ignore_duplicate_on(&self, column: &str) -> String {
        match self.update_from {
            UpdateFrom::From => " ON CONFLICT DO NOTHING".to_owned(),
            UpdateFrom::Join => format!(" ON DUPLICATE KEY UPDATE {column} = {column}"),
        }
    }

    /// The clause after `INSERT ... VALUES (...)` that turns it into an insert-or-update on the
    /// primary key `keys`, setting `columns` to the inserted values.
    pub fn upsert(&self, keys: &[&str], columns: &[&str]) -> String {
        match self.update_from {
            UpdateFrom::From => {
                let set: Vec<String> = columns.iter().map(|c| format!("{c} = excluded.{c}")).collect();
                format!(" ON CONFLICT ({}) DO UPDATE SET {}", keys.join(", "), set.join(", "))
            }
            UpdateFrom::Join => {
                let set: Vec<String> = columns.iter().map(|c| format!("{c} = VALUES({c})")).collect();
                format!(" ON DUPLICATE KEY UPDATE {}", set.join(", "))
            }
        }
    }

    /// `UPDATE table` setting `columns` from a derived table `v` (its SQL in `derived`, with an `id`
    /// column) on the rows whose id matches.
    pub fn update_from_derived(&self, table: &str, columns: &[&str], derived: &str) -> String {
        match self.update_from {
            UpdateFrom::From => {
                let set: Vec<String> = columns.iter().map(|c| format!("{c} = v.{c}")).collect();
                format!("UPDATE {table} SET {} FROM ({derived}) AS v WHERE {table}.id = v.id", set.join(", "))
            }
            UpdateFrom::Join => {
                let set: Vec<String> = columns.iter().map(|c| format!("t.{c} = v.{c}")).collect();
                format!("UPDATE {table} AS t JOIN ({derived}) AS v ON t.id = v.id SET {}", set.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_string_literals_only() {
        assert_eq!(POSTGRES.placeholders("a = ? AND b = '?' AND c IN (?, ?)"), "a = $1 AND b = '?' AND c IN ($2, $3)");
        assert_eq!(MYSQL.placeholders("a = ?"), "a = ?");
    }

    #[test]
    fn updates_from_a_derived_table_in_each_form() {
        assert_eq!(
            SQLITE.update_from_derived("ax_instance", &["status"], "SELECT 1 AS id"),
            "UPDATE ax_instance SET status = v.status FROM (SELECT 1 AS id) AS v WHERE ax_instance.id = v.id"
        );
        assert_eq!(
            MYSQL.update_from_derived("ax_instance", &["status"], "SELECT 1 AS id"),
            "UPDATE ax_instance AS t JOIN (SELECT 1 AS id) AS v ON t.id = v.id SET t.status = v.status"
        );
    }
}
