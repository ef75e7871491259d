//! The engine's error type. User errors (bad input, bad catalogue records, unknown
//! ids) are kept apart from internal ones (I/O, index) so front-ends can map them.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a catalogue file: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordProblem {
    pub file: String,
    /// 1-based line number; 0 when the problem concerns the whole file.
    pub line: usize,
    pub field: String,
    pub problem: String,
}

impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.problem)
        } else if self.field.is_empty() {
            write!(f, "{}:{}: {}", self.file, self.line, self.problem)
        } else {
            write!(
                f,
                "{}:{}: field `{}`: {}",
                self.file, self.line, self.field, self.problem
            )
        }
    }
}

/// All problems of an invalid catalogue, in file and line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidCatalogue(pub Vec<RecordProblem>);

impl fmt::Display for InvalidCatalogue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the catalogue is invalid ({} problems):", self.0.len())?;
        for p in &self.0 {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidCatalogue(InvalidCatalogue),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// The front-end says how to import one.
    #[error("no catalogue has been imported into {0}")]
    NoCatalogue(PathBuf),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("stored catalogue is corrupt: {0}")]
    Corrupt(String),
    #[error("embedding model: {0}")]
    Model(String),
    /// A file of the embedding model's assets is missing; the front-end says how to build
    /// them.
    #[error("embedding model: missing {}", .0.display())]
    ModelFileMissing(PathBuf),
    /// A list filter names an unknown record or one outside the partner's scope.
    #[error(transparent)]
    Filter(#[from] crate::query::FilterError),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// True for errors caused by the caller's input rather than by the engine.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            Error::InvalidCatalogue(_) | Error::InvalidInput(_) | Error::NotFound(_)
        )
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
