//! `grantmatch partner create | list | user …` (qualification and categories are in
//! [`super::qualification`]).

use crate::config::Store;
use anyhow::{anyhow, bail, Context, Result};
use grantmatch_engine::Engine;
use grantmatch_server::db::NewPartner;
use uuid::Uuid;

use super::find_partner;
use crate::{PartnerCreate, UserCmd};

/// Creates a partner; its regions and grant areas are checked against the catalogue.
pub fn create(store: &Store, p: PartnerCreate) -> Result<()> {
    let engine = Engine::open(&store.data_dir)
        .context("partners are checked against the catalogue: import one first")?;
    let cat = &engine.catalogue;
    let region_ids = p
        .regions
        .iter()
        .map(|r| {
            cat.find_region(r)
                .map(|i| cat.regions[i as usize].id)
                .ok_or_else(|| anyhow!("unknown region `{r}`"))
        })
        .collect::<Result<Vec<_>>>()?;
    let grant_area_ids = p
        .grant_areas
        .iter()
        .map(|a| {
            cat.find_area(a)
                .map(|i| cat.grant_areas[i as usize].id)
                .ok_or_else(|| anyhow!("unknown grant area `{a}`"))
        })
        .collect::<Result<Vec<_>>>()?;
    let db = store.open()?;
    let partner = db.create_partner(&NewPartner {
        name: p.name,
        tier: p.tier,
        contact_email: p.contact_email,
        region_ids,
        grant_area_ids,
    })?;
    println!("{}", partner.id);
    Ok(())
}

pub fn list(store: &Store) -> Result<()> {
    let db = store.open()?;
    for p in db.partners()? {
        let ids = |v: &[Uuid]| v.iter().map(Uuid::to_string).collect::<Vec<_>>().join(",");
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            p.id,
            p.name,
            p.tier,
            p.contact_email.as_deref().unwrap_or("-"),
            ids(&p.region_ids),
            ids(&p.grant_area_ids)
        );
    }
    Ok(())
}

/// Dashboard users of a partner: invite, list, remove.
pub fn users(store: &Store, cmd: UserCmd) -> Result<()> {
    let db = store.open()?;
    let partner = match &cmd {
        UserCmd::Add { partner, .. }
        | UserCmd::List { partner }
        | UserCmd::Remove { partner, .. } => partner,
    };
    let p = find_partner(&db, partner)?;
    match cmd {
        UserCmd::Add { email, .. } => {
            let (user, invite) = db.add_user(p.id, &email, chrono::Utc::now())?;
            eprintln!(
                "user {} invited to partner {}; the link is valid 24 h and works once",
                user.email, p.name
            );
            println!("/dashboard/invite/{invite}");
        }
        UserCmd::List { .. } => {
            for u in db.users(p.id)? {
                println!(
                    "{}\t{}\t{}\t{}",
                    u.id,
                    u.email,
                    if u.password_hash.is_some() {
                        "active"
                    } else {
                        "invited"
                    },
                    u.created_at.to_rfc3339()
                );
            }
        }
        UserCmd::Remove { email, .. } => {
            if !db.remove_user(p.id, &email)? {
                bail!("partner {} has no user `{email}`", p.name);
            }
            eprintln!("user {email} removed");
        }
    }
    Ok(())
}
