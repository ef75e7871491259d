//! `grantmatch token create | revoke | list`.

use crate::config::Store;
use anyhow::{bail, Result};
use uuid::Uuid;

use super::find_partner;

pub fn create(store: &Store, partner: &str, scopes: Vec<String>) -> Result<()> {
    let db = store.open()?;
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

pub fn revoke(store: &Store, token_id: Uuid) -> Result<()> {
    let db = store.open()?;
    if !db.revoke_token(token_id)? {
        bail!("no active token with id {token_id}");
    }
    eprintln!("token {token_id} revoked");
    Ok(())
}

pub fn list(store: &Store, partner: &str) -> Result<()> {
    let db = store.open()?;
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
