//! Errors of the scheduler, one enum per layer, and the single mapping to gRPC status codes.
//!
//! [`StoreError`] is what the database layer can say; [`Error`] is what a caller of axd's services
//! can be told. `impl From<Error> for tonic::Status` is the only place where a status code is chosen,
//! so a new variant forces a decision about its code.

use std::fmt;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or a connection failed (retry later).
    #[error("database unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    /// A unique constraint was violated.
    #[error("unique constraint violated: {0}")]
    UniqueViolation(String),
    /// The database aborted the transaction to break a deadlock or a serialization conflict with
    /// another transaction, or a lock was busy (SQLite): retry at once.
    #[error("transaction conflict: {0}")]
    Conflict(#[source] sqlx::Error),
    /// Rows read without a lock changed before the change decided from them was written (see
    /// `Instances::write_instances_if_unchanged`): nothing of it may be kept; roll back and decide
    /// again from locked rows.
    #[error("rows changed since they were read: {0}")]
    Stale(String),
    /// A statement failed for another reason.
    #[error("database error: {0}")]
    Query(#[source] sqlx::Error),
    /// Applying migrations failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored row holds a value this version of ax cannot read.
    #[error("corrupt row in {table}: {reason}")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The database URL is not one ax supports (holds at most 32 characters of the URL's scheme: the
    /// rest may hold a password).
    #[error("unsupported database url scheme {0:?}: use sqlite://, postgres:// or mysql://")]
    UnsupportedUrl(String),
    /// A PostgreSQL URL whose host list or `target_session_attrs` ax cannot use (says why, never
    /// the URL: it may hold a password).
    #[error("database url: {0}")]
    BadUrl(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::UniqueViolation(db.message().to_owned())
            }
            // SQLSTATE 40001 serialization failure (also MySQL's deadlock, error 1213), 40P01
            // PostgreSQL deadlock; SQLite 5/6 busy or locked.
            sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40001" | "40P01" | "5" | "6")) => {
                StoreError::Conflict(e)
            }
            // PostgreSQL: a server that became read-only (a demoted primary, a standby), shut down
            // or is starting, or a broken connection: another host or a later try may succeed.
            sqlx::Error::Database(db)
                if db.code().as_deref().is_some_and(is_failover_code)
                    && db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some() =>
            {
                StoreError::Unavailable(e)
            }
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_) => StoreError::Unavailable(e),
            _ => StoreError::Query(e),
        }
    }
}

/// PostgreSQL SQLSTATEs of a server that cannot take this session's writes any more: 25006
/// read_only_sql_transaction (a demoted primary, a standby), 57P01 admin_shutdown, 57P02
/// crash_shutdown, 57P03 cannot_connect_now, and class 08 (connection exceptions).
pub(crate) fn is_failover_code(code: &str) -> bool {
    matches!(code, "25006" | "57P01" | "57P02" | "57P03") || code.starts_with("08")
}

/// Result of the storage layer.
pub type StoreResult<T> = Result<T, StoreError>;

/// Errors a service call can return.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A field of the request is invalid. Nothing was changed.
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// Dotted path of the field, e.g. `task.schedule.cron.expression`.
        field: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The named object does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// An object with that identity exists already.
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The object is in a state that does not allow the call.
    #[error("{0}")]
    FailedPrecondition(String),
    /// The caller is not allowed to make the call.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// The caller presented no usable identity.
    #[error("unauthenticated: {0}")]
    Unauthenticated(String),
    /// The call was aborted because of a concurrent change; retrying may succeed.
    #[error("aborted: {0}")]
    Aborted(String),
    /// A limit of this axd is reached (e.g. waiting calls); nothing was changed.
    #[error("{0}")]
    ResourceExhausted(String),
    /// The storage layer failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Error {
    /// An [`Error::InvalidArgument`] for `field`.
    pub fn invalid(field: impl Into<String>, reason: impl fmt::Display) -> Self {
        Error::InvalidArgument { field: field.into(), reason: reason.to_string() }
    }

    /// Prefixes the field of an [`Error::InvalidArgument`] with `prefix.`; other errors pass through.
    pub fn within(self, prefix: &str) -> Self {
        match self {
            Error::InvalidArgument { field, reason } if field.is_empty() => {
                Error::InvalidArgument { field: prefix.to_owned(), reason }
            }
            Error::InvalidArgument { field, reason } => {
                Error::InvalidArgument { field: format!("{prefix}.{field}"), reason }
            }
            other => other,
        }
    }
}

/// Result of a service call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The gRPC status code of this error: the one place where it is chosen.
    pub fn code(&self) -> tonic::Code {
        use tonic::Code;
        match self {
            Error::InvalidArgument { .. } => Code::InvalidArgument,
            Error::NotFound(_) => Code::NotFound,
            Error::AlreadyExists(_) => Code::AlreadyExists,
            Error::FailedPrecondition(_) => Code::FailedPrecondition,
            Error::PermissionDenied(_) => Code::PermissionDenied,
            Error::Unauthenticated(_) => Code::Unauthenticated,
            Error::Aborted(_) => Code::Aborted,
            Error::ResourceExhausted(_) => Code::ResourceExhausted,
            Error::Store(store) => match store {
                StoreError::Unavailable(_) => Code::Unavailable,
                StoreError::UniqueViolation(_) => Code::AlreadyExists,
                StoreError::Conflict(_) | StoreError::Stale(_) => Code::Aborted,
                StoreError::Query(_)
                | StoreError::Migrate(_)
                | StoreError::Corrupt { .. }
                | StoreError::UnsupportedUrl(_)
                | StoreError::BadUrl(_) => Code::Internal,
            },
        }
    }
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        tonic::Status::new(e.code(), e.to_string())
    }
}
