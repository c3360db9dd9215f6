//! Statements and values in a form every dialect binds and reads the same way.
//!
//! The shared SQL of `store/` builds a [`Stmt`] (text with `?` placeholders and its [`Value`]s) and
//! reads [`Row`]s, taking each column as a Rust type (each has its [`Kind`]); each dialect's driver
//! (`exec.rs`) binds the values and decodes the columns with its own sqlx types. Values borrow the
//! text they bind (a statement lives only as long as the call that runs it), so writing a batch
//! copies no strings. Arrays exist for PostgreSQL only.

use std::borrow::Cow;

use crate::error::{StoreError, StoreResult};

/// Text that a value borrows, or owns when it was read from the database.
pub type Text<'a> = Cow<'a, str>;

/// One bound parameter or one column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    I64(i64),
    OptI64(Option<i64>),
    I32(i32),
    OptI32(Option<i32>),
    F64(f64),
    Bool(bool),
    Str(Text<'a>),
    OptStr(Option<Text<'a>>),
    /// PostgreSQL `bigint[]`.
    I64s(Vec<i64>),
    /// PostgreSQL `bigint[]` with NULLs.
    OptI64s(Vec<Option<i64>>),
    /// PostgreSQL `int[]`.
    I32s(Vec<i32>),
    /// PostgreSQL `int[]` with NULLs.
    OptI32s(Vec<Option<i32>>),
    /// PostgreSQL `text[]`.
    Strs(Vec<Text<'a>>),
    /// PostgreSQL `text[]` with NULLs.
    OptStrs(Vec<Option<Text<'a>>>),
}

impl Value<'_> {
    /// The kind of a scalar value (`None` for arrays).
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Value::I64(_) => Kind::I64,
            Value::OptI64(_) => Kind::OptI64,
            Value::I32(_) => Kind::I32,
            Value::OptI32(_) => Kind::OptI32,
            Value::F64(_) => Kind::F64,
            Value::Bool(_) => Kind::Bool,
            Value::Str(_) => Kind::Str,
            Value::OptStr(_) => Kind::OptStr,
            _ => return None,
        })
    }
}

/// The type of a column to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    I64,
    OptI64,
    I32,
    OptI32,
    F64,
    Bool,
    Str,
    OptStr,
}

impl Kind {
    /// The PostgreSQL array type of a column of this kind (for `UNNEST` parameters).
    pub fn pg_array(self) -> &'static str {
        match self {
            Kind::I64 | Kind::OptI64 => "bigint[]",
            Kind::I32 | Kind::OptI32 => "int[]",
            Kind::F64 => "double precision[]",
            Kind::Bool => "boolean[]",
            Kind::Str | Kind::OptStr => "text[]",
        }
    }
}

/// A Rust type that a column of one [`Kind`] is read into.
pub trait Column: Sized {
    /// Its kind (the PostgreSQL array type of batch writes comes from it).
    const KIND: Kind;
    /// Decodes column `i` of a row.
    fn get(cols: &dyn Columns, i: usize) -> Result<Self, sqlx::Error>;
}

/// The columns of one row as the driver holds them, decoded where they lie by type.
pub trait Columns {
    /// How many columns the row has.
    fn len(&self) -> usize;
    fn i64(&self, i: usize) -> Result<i64, sqlx::Error>;
    fn opt_i64(&self, i: usize) -> Result<Option<i64>, sqlx::Error>;
    fn i32(&self, i: usize) -> Result<i32, sqlx::Error>;
    fn opt_i32(&self, i: usize) -> Result<Option<i32>, sqlx::Error>;
    fn f64(&self, i: usize) -> Result<f64, sqlx::Error>;
    fn bool(&self, i: usize) -> Result<bool, sqlx::Error>;
    fn string(&self, i: usize) -> Result<String, sqlx::Error>;
    fn opt_string(&self, i: usize) -> Result<Option<String>, sqlx::Error>;
}

macro_rules! column {
    ($t:ty, $kind:ident, $get:ident) => {
        impl Column for $t {
            const KIND: Kind = Kind::$kind;
            fn get(cols: &dyn Columns, i: usize) -> Result<Self, sqlx::Error> {
                cols.$get(i)
            }
        }
    };
}
column!(i64, I64, i64);
column!(Option<i64>, OptI64, opt_i64);
column!(i32, I32, i32);
column!(Option<i32>, OptI32, opt_i32);
column!(f64, F64, f64);
column!(bool, Bool, bool);
column!(String, Str, string);
column!(Option<String>, OptStr, opt_string);

macro_rules! value_from {
    ($t:ty, $kind:ident) => {
        impl From<$t> for Value<'_> {
            fn from(v: $t) -> Self {
                Value::$kind(v)
            }
        }
    };
}
value_from!(i64, I64);
value_from!(Option<i64>, OptI64);
value_from!(i32, I32);
value_from!(Option<i32>, OptI32);
value_from!(f64, F64);
value_from!(bool, Bool);

impl From<String> for Value<'_> {
    fn from(v: String) -> Self {
        Value::Str(Cow::Owned(v))
    }
}

impl From<Option<String>> for Value<'_> {
    fn from(v: Option<String>) -> Self {
        Value::OptStr(v.map(Cow::Owned))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Str(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Str(Cow::Borrowed(v.as_str()))
    }
}

impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::OptStr(v.map(Cow::Borrowed))
    }
}

impl From<u32> for Value<'_> {
    /// Counts are `INTEGER` columns; a count beyond `i32::MAX` is stored as the maximum.
    fn from(v: u32) -> Self {
        Value::I32(i32::try_from(v).unwrap_or(i32::MAX))
    }
}

/// A statement: SQL with `?` placeholders (numbered for PostgreSQL by its driver) and its values.
#[derive(Debug, Clone, Default)]
pub struct Stmt<'a> {
    pub sql: String,
    pub args: Vec<Value<'a>>,
    /// Planned at every execution instead of once per connection (see [`Stmt::replanned`]).
    pub replan: bool,
}

impl<'a> Stmt<'a> {
    /// A statement with no values yet.
    pub fn new(sql: impl Into<String>) -> Self {
        Stmt { sql: sql.into(), args: Vec::new(), replan: false }
    }

    /// Not kept as a prepared statement: planned at each execution with the table's size then. For
    /// frequent reads without parameters whose best plan depends on how big a table is: a
    /// connection that prepared one while `ax_instance` was empty kept a sequential scan as
    /// the table grew (PostgreSQL keeps a parameterless statement's plan until the next ANALYZE,
    /// which autovacuum may not run for a minute) — 90 ms per sweep during a burst of 100,000
    /// instances on a fresh database, against well under 1 ms through the index.
    pub fn replanned(mut self) -> Self {
        self.replan = true;
        self
    }

    /// Adds the value of the next `?`.
    pub fn bind(mut self, v: impl Into<Value<'a>>) -> Self {
        self.args.push(v.into());
        self
    }

    /// Appends SQL text.
    pub fn push(&mut self, sql: &str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends a `?` and its value.
    pub fn push_bind(&mut self, v: impl Into<Value<'a>>) -> &mut Self {
        self.sql.push('?');
        self.args.push(v.into());
        self
    }

    /// Appends `(?, ?, ...)` with these values (`(NULL)` when empty, which matches nothing).
    pub fn push_list<V: Into<Value<'a>>>(&mut self, values: impl IntoIterator<Item = V>) -> &mut Self {
        self.sql.push('(');
        let mut any = false;
        for v in values {
            if any {
                self.sql.push_str(", ");
            }
            any = true;
            self.push_bind(v);
        }
        if !any {
            self.sql.push_str("NULL");
        }
        self.sql.push(')');
        self
    }

    /// Appends `((?, ?), (?, ?), ...)`: a list of row values, for `(a, b) IN ...`.
    pub fn push_row_list(&mut self, rows: impl IntoIterator<Item = Vec<Value<'a>>>) -> &mut Self {
        self.sql.push('(');
        self.push_rows(rows);
        self.sql.push(')');
        self
    }

    /// Appends `(?, ?, ...), (?, ...)`: one parenthesized tuple per row.
    pub fn push_rows(&mut self, rows: impl IntoIterator<Item = Vec<Value<'a>>>) -> &mut Self {
        for (n, row) in rows.into_iter().enumerate() {
            if n > 0 {
                self.sql.push_str(", ");
            }
            self.push_list(row);
        }
        self
    }
}

/// A row read back: its columns in the order of the statement, each decoded straight from the
/// driver's row as the type [`take`](Row::take) asks for.
pub struct Row<'r> {
    cols: &'r dyn Columns,
    next: usize,
    table: &'static str,
}

impl<'r> Row<'r> {
    /// A row of `table` (named in errors).
    pub(crate) fn new(cols: &'r dyn Columns, table: &'static str) -> Row<'r> {
        Row { cols, next: 0, table }
    }

    /// The next column.
    pub fn take<T: Column>(&mut self) -> StoreResult<T> {
        if self.next >= self.cols.len() {
            return Err(StoreError::Corrupt { table: self.table, reason: "fewer columns than read".to_owned() });
        }
        let v = T::get(self.cols, self.next)?;
        self.next += 1;
        Ok(v)
    }
}

impl std::fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Row").field("table", &self.table).finish_non_exhaustive()
    }
}
