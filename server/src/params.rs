//! Query-string parsing with errors that name the parameter.
//!
//! Policy: unknown parameters are ignored; a single-valued parameter given twice is a
//! 400; list parameters accept both `name[]` and `name`, comma-separated values too,
//! and at most [`MAX_LIST_VALUES`] values.

use grantmatch_engine::PageRequest;
use uuid::Uuid;

use crate::error::ApiError;

pub const MAX_LIST_VALUES: usize = 100;
pub const MAX_Q_CHARS: usize = 500;

pub struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    pub fn parse(query: Option<&str>) -> Self {
        let pairs = query
            .map(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        Params { pairs }
    }

    /// The value of a single-valued parameter; empty values count as absent.
    pub fn single(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut values = self
            .pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(ApiError::bad_request(format!(
                "{name}: given more than once"
            )));
        }
        Ok(first.map(str::trim).filter(|v| !v.is_empty()))
    }

    /// A single-valued parameter that must be one of `allowed` (400 listing them).
    pub fn one_of<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Option<T>,
        allowed: &[&str],
    ) -> Result<Option<T>, ApiError> {
        self.single(name)?
            .map(|v| {
                parse(v).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "{name}: `{}` is not one of {}",
                        clip(v),
                        allowed.join(", ")
                    ))
                })
            })
            .transpose()
    }

    pub fn uuid(&self, name: &str) -> Result<Option<Uuid>, ApiError> {
        self.single(name)?
            .map(|v| {
                Uuid::parse_str(v).map_err(|_| {
                    ApiError::bad_request(format!("{name}: `{}` is not a UUID", clip(v)))
                })
            })
            .transpose()
    }

    /// All values of a list parameter (`name[]` or `name`), split at commas.
    pub fn list(&self, name: &str) -> Result<Vec<&str>, ApiError> {
        let bracket = format!("{name}[]");
        let values: Vec<&str> = self
            .pairs
            .iter()
            .filter(|(k, _)| *k == bracket || k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect();
        if values.len() > MAX_LIST_VALUES {
            return Err(ApiError::bad_request(format!(
                "{bracket}: at most {MAX_LIST_VALUES} values are allowed"
            )));
        }
        Ok(values)
    }

    pub fn uuids(&self, name: &str) -> Result<Vec<Uuid>, ApiError> {
        let mut out = Vec::new();
        for v in self.list(name)? {
            let id = Uuid::parse_str(v).map_err(|_| {
                ApiError::bad_request(format!("{name}[]: `{}` is not a UUID", clip(v)))
            })?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// A boolean flag: `true`/`false` (also `1`/`0`); absent = false.
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.single(name)? {
            None => Ok(false),
            Some("true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(v) => Err(ApiError::bad_request(format!(
                "{name}: `{}` is not a boolean (true or false)",
                clip(v)
            ))),
        }
    }

    fn positive(&self, name: &str, default: usize) -> Result<usize, ApiError> {
        match self.single(name)? {
            None => Ok(default),
            Some(v) => v.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::bad_request(format!("{name}: `{}` is not a positive integer", clip(v)))
            }),
        }
    }

    /// `page` (default 1) and `per_page` (default 25, at most `max_per_page`).
    pub fn page(&self, max_per_page: usize) -> Result<PageRequest, ApiError> {
        let page = self.positive("page", 1)?;
        if page > 1_000_000 {
            return Err(ApiError::bad_request("page: must be at most 1000000"));
        }
        let per_page = self.positive("per_page", 25)?;
        if per_page > max_per_page {
            return Err(ApiError::bad_request(format!(
                "per_page: must be between 1 and {max_per_page}"
            )));
        }
        Ok(PageRequest { page, per_page })
    }

    /// The full-text query `q`, bounded in length.
    pub fn q(&self) -> Result<Option<String>, ApiError> {
        match self.single("q")? {
            Some(q) if q.chars().count() > MAX_Q_CHARS => Err(ApiError::bad_request(format!(
                "q: at most {MAX_Q_CHARS} characters are allowed"
            ))),
            other => Ok(other.map(str::to_string)),
        }
    }
}

/// Shortens a client-supplied value for an error message.
pub fn clip(v: &str) -> String {
    if v.chars().count() > 60 {
        format!("{}…", v.chars().take(60).collect::<String>())
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_accept_brackets_plain_and_commas() {
        let p = Params::parse(Some("region_ids%5B%5D=a&region_ids=b,c"));
        assert_eq!(p.list("region_ids").unwrap(), vec!["a", "b", "c"]);
    }

    #[test]
    fn repeated_single_is_an_error() {
        let p = Params::parse(Some("page=1&page=2"));
        assert!(p.single("page").is_err());
    }

    #[test]
    fn paging_bounds() {
        assert!(Params::parse(Some("page=0")).page(100).is_err());
        assert!(Params::parse(Some("per_page=1000")).page(100).is_err());
        assert!(Params::parse(Some("page=99999999999999999999999"))
            .page(100)
            .is_err());
        let p = Params::parse(Some("page=2&per_page=10")).page(100).unwrap();
        assert_eq!((p.page, p.per_page), (2, 10));
    }
}
