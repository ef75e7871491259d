//! One module per command of the CLI; `main.rs` holds the argument types and
//! dispatches.

pub mod database;
pub mod import;
pub mod matching;
pub mod model;
pub mod partner;
pub mod qualification;
pub mod serve;
pub mod synthetic;
pub mod token;
pub mod usage;

use anyhow::{anyhow, Result};
use grantmatch_server::db::{Db, Partner};

/// The partner named or identified by `p`, or an error naming it.
pub fn find_partner(db: &Db, p: &str) -> Result<Partner> {
    db.find_partner(p)?
        .ok_or_else(|| anyhow!("unknown partner `{p}`"))
}
