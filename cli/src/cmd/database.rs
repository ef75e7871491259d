//! `grantmatch db migrate`.

use anyhow::Result;

use crate::config::Store;

pub fn migrate(store: &Store) -> Result<()> {
    let db = store.open()?;
    let version = db.schema_version()?;
    eprintln!(
        "database {} at schema version {version}",
        store.location.describe()
    );
    println!("{version}");
    Ok(())
}
