//! One database connection of either backend — the embedded SQLite file or a
//! PostgreSQL server — with the few operations the store needs: execute, query,
//! batches and transactions, all over [`Value`]s and [`Row`]s.

use std::collections::HashMap;
use std::error::Error as StdError;

use std::sync::OnceLock;

use bytes::BytesMut;
use postgres_types::{FromSql, IsNull, ToSql, Type};

use super::sql::{numbered_placeholders, Row, Value};
use crate::error::ServerError;

/// The SQL dialect of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A connection to the store's database.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgConn>),
}

/// A PostgreSQL connection (tokio-postgres) with its prepared statements (by their
/// SQLite text).
///
/// The connection's socket is driven by a small runtime of its own
/// ([`postgres_runtime`]); the store's synchronous calls wait for the client's futures
/// with a plain executor. So a call works on any thread — the store's rule keeps it
/// off the async workers all the same — and nothing here needs the caller's runtime.
pub struct PgConn {
    client: tokio_postgres::Client,
    statements: HashMap<String, tokio_postgres::Statement>,
}

/// The runtime that drives every PostgreSQL connection of the process (one thread).
fn postgres_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("grantmatch-postgres")
            .enable_all()
            .build()
            .expect("the PostgreSQL connection runtime starts")
    })
}

fn wait<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

impl PgConn {
    /// Connects to the server of `url` (a `postgres://` URL or key=value string), over
    /// TLS when its `sslmode` asks for it ([`super::tls`]).
    pub fn connect(url: &str) -> Result<Self, ServerError> {
        let target = super::tls::target(url)?;
        let config: tokio_postgres::Config = target.url.parse()?;
        let tls = super::tls::client_config(&target.tls)?;
        let (tx, rx) = std::sync::mpsc::channel();
        postgres_runtime().spawn(async move {
            match super::tls::connect(&config, tls).await {
                Ok((client, connection)) => {
                    let _ = tx.send(Ok(client));
                    if let Err(e) = connection.await {
                        tracing::warn!(error = %e, "PostgreSQL connection ended");
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        let client = rx
            .recv()
            .map_err(|_| ServerError::Database("the PostgreSQL runtime stopped".into()))?
            .map_err(connect_error)?;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }

    fn statement(&mut self, sql: &str) -> Result<tokio_postgres::Statement, ServerError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = wait(self.client.prepare(&numbered_placeholders(sql)))?;
        if self.statements.len() > 256 {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// A failed connection with its causes (e.g. why a TLS handshake failed: the driver's
/// own message is only "error performing TLS handshake").
fn connect_error(e: tokio_postgres::Error) -> ServerError {
    let mut message = format!("cannot connect: {e}");
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    ServerError::Database(message)
}

fn pg_args(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Conn {
    pub fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs a statement; the number of rows it changed.
    pub fn execute(&mut self, sql: &str, args: &[Value]) -> Result<usize, ServerError> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                Ok(st.execute(rusqlite::params_from_iter(args.iter()))?)
            }
            Conn::Postgres(c) => {
                let st = c.statement(sql)?;
                Ok(wait(c.client.execute(&st, &pg_args(args)))? as usize)
            }
        }
    }

    /// Every row of a query.
    pub fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Row>, ServerError> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                let mut rows = st.query(rusqlite::params_from_iter(args.iter()))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut values = Vec::with_capacity(n);
                    for i in 0..n {
                        values.push(sqlite_value(r.get_ref(i)?));
                    }
                    out.push(Row(values));
                }
                Ok(out)
            }
            Conn::Postgres(c) => {
                let st = c.statement(sql)?;
                let rows = wait(c.client.query(&st, &pg_args(args)))?;
                rows.iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| r.try_get::<_, Value>(i).map_err(ServerError::from))
                            .collect::<Result<Vec<_>, _>>()
                            .map(Row)
                    })
                    .collect()
            }
        }
    }

    /// Each row of a query through `f`.
    pub fn query_map<T>(
        &mut self,
        sql: &str,
        args: &[Value],
        f: impl FnMut(&Row) -> Result<T, ServerError>,
    ) -> Result<Vec<T>, ServerError> {
        self.query(sql, args)?.iter().map(f).collect()
    }

    /// The first row of a query through `f`, `None` when there is none.
    pub fn query_opt<T>(
        &mut self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T, ServerError>,
    ) -> Result<Option<T>, ServerError> {
        self.query(sql, args)?.first().map(f).transpose()
    }

    /// The first row of a query through `f`; no row is an error.
    pub fn query_row<T>(
        &mut self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T, ServerError>,
    ) -> Result<T, ServerError> {
        self.query_opt(sql, args, f)?
            .ok_or_else(|| ServerError::Database(format!("no row from `{sql}`")))
    }

    /// Statements without arguments, separated by `;` (migrations, test set-ups).
    pub fn batch(&mut self, sql: &str) -> Result<(), ServerError> {
        match self {
            Conn::Sqlite(c) => c.execute_batch(sql)?,
            Conn::Postgres(c) => {
                // Statements prepared before a schema change may no longer fit it.
                c.statements.clear();
                wait(c.client.batch_execute(sql))?
            }
        }
        Ok(())
    }

    /// Begins a transaction (PostgreSQL: READ COMMITTED); it rolls back unless
    /// committed.
    pub fn transaction(&mut self) -> Result<Tx<'_>, ServerError> {
        self.batch_begin("BEGIN")?;
        Ok(Tx {
            conn: self,
            open: true,
        })
    }

    /// Begins a read-only transaction whose statements all see one snapshot
    /// (PostgreSQL: REPEATABLE READ; SQLite: every transaction does).
    pub fn snapshot(&mut self) -> Result<Tx<'_>, ServerError> {
        let begin = match self.dialect() {
            Dialect::Sqlite => "BEGIN",
            Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        };
        self.batch_begin(begin)?;
        Ok(Tx {
            conn: self,
            open: true,
        })
    }

    fn batch_begin(&mut self, begin: &str) -> Result<(), ServerError> {
        match self {
            Conn::Sqlite(c) => c.execute_batch(begin)?,
            Conn::Postgres(c) => wait(c.client.batch_execute(begin))?,
        }
        Ok(())
    }

    /// Whether the connection can no longer be used (PostgreSQL: the server closed it).
    pub fn is_broken(&self) -> bool {
        match self {
            Conn::Sqlite(_) => false,
            Conn::Postgres(c) => c.client.is_closed(),
        }
    }
}

/// An open transaction on a [`Conn`]: rolled back when dropped uncommitted.
pub struct Tx<'a> {
    conn: &'a mut Conn,
    open: bool,
}

impl Tx<'_> {
    pub fn commit(mut self) -> Result<(), ServerError> {
        self.open = false;
        self.conn.batch_begin("COMMIT")
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl std::ops::DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            if let Err(e) = self.conn.batch_begin("ROLLBACK") {
                tracing::warn!(error = %e, "rollback failed");
            }
        }
    }
}

// -------------------------------------------------------------------------------------
// Values to and from SQLite and PostgreSQL
// -------------------------------------------------------------------------------------

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

type BoxError = Box<dyn StdError + Sync + Send>;

/// A value is written as the type PostgreSQL expects for the parameter: an integer
/// into an INTEGER, BIGINT, SMALLINT, DOUBLE PRECISION or BOOLEAN parameter, and so on.
impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => f.to_sql(ty, out),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres_types::to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(<Vec<u8>>::from_sql(ty, raw)?),
            Type::NUMERIC => {
                return Err("a NUMERIC column: cast it in SQL (CAST(… AS BIGINT))".into())
            }
            _ => Value::Text(<&str as FromSql>::from_sql(ty, raw)?.to_string()),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}
