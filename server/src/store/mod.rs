//! Persistence in the data directory's SQLite database: partners, tokens and the
//! dashboard's accounts (`db`), matching requests with their stored results
//! (`matching`), and the usage ledger (`ledger`). Partner qualification results live
//! with their planning in `crate::qualification`; usage figures are read in
//! `crate::usage`. The modules are also reachable at their old paths (`crate::db`,
//! `crate::matching_store`, `crate::ledger`).

pub mod db;
pub mod ledger;
pub mod matching;
