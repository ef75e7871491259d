//! The exception hierarchy: every engine error becomes a [`GrantmatchError`] subclass
//! carrying the engine's message.
//!
//! ```text
//! GrantmatchError
//! ├── InvalidInputError   bad profile, weights, filter value or catalogue records
//! ├── UnknownIdError      no record with this id, slug or name
//! ├── ModelError          model files missing or unusable, catalogue without embeddings
//! └── CatalogueError      no catalogue imported, unreadable or corrupt data directory
//! ```

use grantmatch_engine::{Error, FilterError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    grantmatch,
    GrantmatchError,
    PyException,
    "Base class of every error raised by grantmatch; the message is the engine's."
);
create_exception!(
    grantmatch,
    InvalidInputError,
    GrantmatchError,
    "Invalid input: a profile field, weight, option, filter value, or catalogue record \
     that does not validate. The message names the field or value."
);
create_exception!(
    grantmatch,
    UnknownIdError,
    GrantmatchError,
    "No record has this UUID, slug or name (grant, provider, region, grant area, ...)."
);
create_exception!(
    grantmatch,
    ModelError,
    GrantmatchError,
    "The embedding model is missing, cannot be loaded, does not fit the catalogue's \
     embeddings, or the catalogue was imported without embeddings."
);
create_exception!(
    grantmatch,
    CatalogueError,
    GrantmatchError,
    "The data directory has no imported catalogue, or it cannot be read (I/O error, \
     corrupt snapshot, search index failure)."
);

/// Maps an engine error to its Python exception.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidInput(_) | Error::InvalidCatalogue(_) => InvalidInputError::new_err(msg),
        Error::NotFound(_) => UnknownIdError::new_err(msg),
        Error::Model(_) => ModelError::new_err(msg),
        Error::ModelFileMissing(_) => ModelError::new_err(format!(
            "{msg} — build the model assets with `make model` (scripts/model/fetch.sh), or pass \
             model_dir / set GRANTMATCH_MODEL_DIR to a directory that has them"
        )),
        Error::NoCatalogue(_) => CatalogueError::new_err(format!(
            "{msg} — import one with grantmatch.import_catalogue(source_dir, data_dir) or \
             `grantmatch import DIR`"
        )),
        Error::Io { .. } | Error::Index(_) | Error::Corrupt(_) => CatalogueError::new_err(msg),
        Error::Filter(f) => filter_to_py(f),
    }
}

/// Maps a refused list filter: unknown ids are [`UnknownIdError`], the rest invalid input.
fn filter_to_py(e: FilterError) -> PyErr {
    let msg = e.to_string();
    match e {
        FilterError::Unknown { .. } => UnknownIdError::new_err(msg),
        FilterError::OutOfScope { .. } => InvalidInputError::new_err(msg),
    }
}

pub fn invalid(msg: impl Into<String>) -> PyErr {
    InvalidInputError::new_err(msg.into())
}

pub fn unknown(msg: impl Into<String>) -> PyErr {
    UnknownIdError::new_err(msg.into())
}

pub fn model(msg: impl Into<String>) -> PyErr {
    ModelError::new_err(msg.into())
}
