//! # grantmatch-engine
//!
//! The pure library behind grantmatch: the catalogue of funding programmes and its
//! vocabularies ([`catalogue`], [`model`]), the import format and its validation
//! ([`records`]), atomic on-disk snapshots ([`store`]), German full-text search
//! ([`search`], [`text`]), partner scopes ([`scope`]) and listing with filters
//! ([`query`]).
//!
//! No I/O framework lives here: plain data in, plain data out. Front-ends (server,
//! CLI, Python) hold an [`Engine`] and call it.

pub mod catalogue;
pub mod error;
pub mod model;
pub mod query;
pub mod records;
pub mod scope;
pub mod search;
pub mod store;
pub mod text;

use std::path::{Path, PathBuf};

pub use catalogue::{Catalogue, Idx};
pub use error::{Error, Result};
pub use query::{FilterError, GrantFilter, Page, PageRequest};
pub use scope::{ResolvedScope, Scope};

use search::SearchIndex;
use store::SnapshotStore;

/// A loaded catalogue with its search index, ready to answer queries. Immutable and
/// shareable across threads (`Arc<Engine>`).
pub struct Engine {
    pub catalogue: Catalogue,
    search: SearchIndex,
    /// Grants in title order (the default order of lists).
    title_order: Vec<Idx>,
    snapshot: Option<PathBuf>,
}

impl Engine {
    /// Opens the catalogue imported into `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let (catalogue, search, dir) = SnapshotStore::new(data_dir).load()?;
        Ok(Self::assemble(catalogue, search, Some(dir)))
    }

    /// Builds an engine in memory from validated records (tests, tools).
    pub fn from_records(records: records::CatalogueRecords) -> Result<Self> {
        let catalogue = Catalogue::new(records);
        let search = SearchIndex::build(&catalogue, None)?;
        Ok(Self::assemble(catalogue, search, None))
    }

    fn assemble(catalogue: Catalogue, search: SearchIndex, snapshot: Option<PathBuf>) -> Self {
        let mut title_order: Vec<Idx> = (0..catalogue.grants.len() as Idx).collect();
        title_order.sort_by_cached_key(|&g| {
            let grant = &catalogue.grants[g as usize];
            (text::fold_name(&grant.title), grant.id)
        });
        Engine {
            catalogue,
            search,
            title_order,
            snapshot,
        }
    }

    /// Directory of the snapshot this engine was loaded from.
    pub fn snapshot_dir(&self) -> Option<&Path> {
        self.snapshot.as_deref()
    }

    /// Resolves a partner scope against this catalogue.
    pub fn resolve_scope(&self, scope: &Scope) -> ResolvedScope {
        ResolvedScope::new(&self.catalogue, scope)
    }
}
