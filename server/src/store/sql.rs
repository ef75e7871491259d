//! The store's dialect-neutral values and rows: every statement of the store binds
//! [`Value`]s and reads [`Row`]s, whichever backend (SQLite or PostgreSQL) runs it.
//!
//! Statements are written once with SQLite's numbered placeholders (`?1`, `?2`, …);
//! the PostgreSQL connection rewrites them to `$1`, `$2`, … A statement that must
//! differ between the dialects is written twice, next to each other, and chosen with
//! [`crate::store::conn::Conn::dialect`].

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::ServerError;

/// One SQL value, as both backends store it: text (ids, times in RFC 3339, JSON),
/// integers, reals and blobs (token hashes).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// The arguments of a statement: `args![a, b, c]` converts each into a [`Value`].
#[macro_export]
macro_rules! args {
    () => { &[][..] as &[$crate::store::sql::Value] };
    ($($e:expr),+ $(,)?) => {
        &[$($crate::store::sql::Value::from($e)),+][..]
    };
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<u16> for Value {
    fn from(v: u16) -> Self {
        Value::Int(v.into())
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(v.into())
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}
impl From<Uuid> for Value {
    fn from(v: Uuid) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<&Uuid> for Value {
    fn from(v: &Uuid) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<DateTime<Utc>> for Value {
    fn from(v: DateTime<Utc>) -> Self {
        Value::Text(v.to_rfc3339())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}
impl<T: Clone + Into<Value>> From<&Option<T>> for Value {
    fn from(v: &Option<T>) -> Self {
        v.clone().map_or(Value::Null, Into::into)
    }
}

/// A value read from a [`Row`].
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self, String>;
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}
impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Int(i) => Ok(*i),
            other => Err(format!("expected an integer, got {other:?}")),
        }
    }
}
impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        i64::from_value(v).map(|i| i != 0)
    }
}
impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            other => Err(format!("expected a real, got {other:?}")),
        }
    }
}
impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => Err(format!("expected text, got {other:?}")),
        }
    }
}
impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            other => Err(format!("expected a blob, got {other:?}")),
        }
    }
}
impl FromValue for Uuid {
    fn from_value(v: &Value) -> Result<Self, String> {
        let s = String::from_value(v)?;
        Uuid::parse_str(&s).map_err(|e| format!("`{s}`: {e}"))
    }
}
impl FromValue for DateTime<Utc> {
    fn from_value(v: &Value) -> Result<Self, String> {
        let s = String::from_value(v)?;
        DateTime::parse_from_rfc3339(&s)
            .map(|d| d.with_timezone(&Utc))
            .map_err(|e| format!("`{s}`: {e}"))
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub(crate) Vec<Value>);

impl Row {
    /// Column `i` as `T`; a missing column or a value of another type is an error
    /// naming the column.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T, ServerError> {
        let v = self
            .0
            .get(i)
            .ok_or_else(|| ServerError::Database(format!("no column {i} in the row")))?;
        T::from_value(v).map_err(|e| ServerError::Database(format!("column {i}: {e}")))
    }
}

/// Rewrites SQLite's placeholders (`?1`, or `?` numbered in order) into PostgreSQL's
/// (`$1`). Question marks inside string literals are left alone.
pub(crate) fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 1;
    let mut in_string = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_string = !in_string;
                out.push(c);
            }
            '?' if !in_string => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    digits = next.to_string();
                }
                next = digits.parse::<usize>().unwrap_or(next) + 1;
                out.push('$');
                out.push_str(&digits);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            numbered_placeholders("SELECT ?1, ?2 WHERE a = ?1"),
            "SELECT $1, $2 WHERE a = $1"
        );
        assert_eq!(numbered_placeholders("IN (?, ?, ?)"), "IN ($1, $2, $3)");
        assert_eq!(
            numbered_placeholders("x = '?' AND y = ?3"),
            "x = '?' AND y = $3"
        );
    }

    #[test]
    fn values_convert_both_ways() {
        let id = Uuid::new_v4();
        let row = Row(vec![
            Value::from(id),
            Value::from(Some(3i64)),
            Value::from(None::<String>),
            Value::from(true),
        ]);
        assert_eq!(row.get::<Uuid>(0).unwrap(), id);
        assert_eq!(row.get::<i64>(1).unwrap(), 3);
        assert_eq!(row.get::<Option<String>>(2).unwrap(), None);
        assert!(row.get::<bool>(3).unwrap());
        assert!(row.get::<String>(1).is_err());
        assert!(row.get::<i64>(9).is_err());
    }
}
