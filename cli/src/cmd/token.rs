//! `grantmatch token create | revoke | list`.

use std::path::Path;

use anyhow::{bail, Result};
use grantmatch_server::db::Db;
use uuid::Uuid;

use super::find_partner;

pub fn create(data_dir: &Path, partner: &str, scopes: Vec<String>) -> Result<()> {
    let db = Db::open(data_dir)?;
    let p = find_partner(&db, partner)?;
    let scopes: Vec<String> = scopes
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let (row, token) = db.create_token(p.id, &scopes)?;
    eprintln!(
        "token {} created for partner {} (shown once)",
        row.id, p.name
    );
    println!("{token}");
    Ok(())
}

pub fn revoke(data_dir: &Path, token_id: Uuid) -> Result<()> {
    let db = Db::open(data_dir)?;
    if !db.revoke_token(token_id)? {
        bail!("no active token with id {token_id}");
    }
    eprintln!("token {token_id} revoked");
    Ok(())
}

pub fn list(data_dir: &Path, partner: &str) -> Result<()> {
    let db = Db::open(data_dir)?;
    let p = find_partner(&db, partner)?;
    for t in db.tokens(p.id)? {
        println!(
            "{}\t{}\t{}\t{}",
            t.id,
            t.scopes.join(","),
            t.created_at.to_rfc3339(),
            t.revoked_at
                .map(|r| r.to_rfc3339())
                .unwrap_or_else(|| "-".into())
        );
    }
    Ok(())
}
