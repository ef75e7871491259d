//! `grantmatch partner qualification|category|status`: a partner's qualification prompt
//! and custom categories (stored in the data directory's database; a running server
//! notices changes within a few seconds and re-assesses in the background).

use std::path::{Path, PathBuf};

use crate::config::Store;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use grantmatch_engine::qualify::{describe, QualificationPrompt, QualificationRules};
use grantmatch_engine::Engine;
use grantmatch_server::qualification as q;
use uuid::Uuid;

use super::find_partner;

#[derive(Subcommand)]
pub enum QualificationCmd {
    /// Set the partner's qualification prompt from a file (UTF-8 text) and print how it
    /// was read (stderr).
    Set {
        #[arg(long)]
        partner: String,
        #[arg(long)]
        prompt_file: PathBuf,
        /// JSON corrections to the reading (regions, applicant_types,
        /// excluded_applicant_types, funding_types, excluded_funding_types, excluded_kinds,
        /// excluded_levels, non_profit, topic, include_topics, exclude_topics); each field
        /// set replaces
        /// what was read. Without it, earlier rules are removed.
        #[arg(long)]
        rules_file: Option<PathBuf>,
    },
    /// Remove the partner's qualification prompt (ai_qualified becomes null).
    Clear {
        #[arg(long)]
        partner: String,
    },
}

#[derive(Subcommand)]
pub enum CategoryCmd {
    /// Add a custom category; prints its id alone on stdout.
    Add(CategoryAdd),
    /// List the partner's categories (tab-separated: id, name, name_en, description, keywords).
    List {
        #[arg(long)]
        partner: String,
    },
    /// Remove a category by id.
    Remove {
        #[arg(long)]
        partner: String,
        category_id: Uuid,
    },
}

#[derive(Args)]
pub struct CategoryAdd {
    #[arg(long)]
    partner: String,
    /// German name (canonical).
    #[arg(long)]
    name: String,
    /// English name.
    #[arg(long)]
    name_en: String,
    #[arg(long)]
    description: Option<String>,
    /// Comma-separated keywords.
    #[arg(long, value_delimiter = ',')]
    keywords: Vec<String>,
}

pub fn run_qualification(store: &Store, cmd: QualificationCmd) -> Result<()> {
    let db = store.open()?;
    match cmd {
        QualificationCmd::Set {
            partner: p,
            prompt_file,
            rules_file,
        } => {
            let p = find_partner(&db, &p)?;
            let text = std::fs::read_to_string(&prompt_file)
                .with_context(|| format!("cannot read {}", prompt_file.display()))?;
            let rules = match &rules_file {
                Some(f) => {
                    let json = std::fs::read_to_string(f)
                        .with_context(|| format!("cannot read {}", f.display()))?;
                    Some(
                        QualificationRules::from_json(&json)
                            .with_context(|| format!("{}", f.display()))?,
                    )
                }
                None => None,
            };
            // Rules are checked against the catalogue before anything is stored; the
            // reading is shown when a catalogue is imported.
            let reading = match Engine::open(&store.data_dir) {
                Ok(engine) => {
                    let read = QualificationPrompt::read(&engine.catalogue, &text, rules.as_ref())
                        .with_context(|| {
                            format!(
                                "{}",
                                rules_file.as_deref().unwrap_or(Path::new("")).display()
                            )
                        })?;
                    Some(describe(&engine.catalogue, &read))
                }
                Err(e) if rules.is_some() => {
                    bail!("cannot check the rules without an imported catalogue: {e}")
                }
                Err(_) => None,
            };
            let version = q::set_prompt(&db, p.id, &text, rules.as_ref())?;
            eprintln!(
                "qualification prompt of {} set (configuration version {version}); a running server re-assesses within seconds",
                p.name
            );
            for line in reading.unwrap_or_default() {
                eprintln!("  {line}");
            }
            Ok(())
        }
        QualificationCmd::Clear { partner: p } => {
            let p = find_partner(&db, &p)?;
            if q::clear_prompt(&db, p.id)? {
                eprintln!("qualification prompt of {} removed", p.name);
            } else {
                eprintln!("{} has no qualification prompt", p.name);
            }
            Ok(())
        }
    }
}

pub fn run_category(store: &Store, cmd: CategoryCmd) -> Result<()> {
    let db = store.open()?;
    match cmd {
        CategoryCmd::Add(a) => {
            let p = find_partner(&db, &a.partner)?;
            let c = q::add_category(
                &db,
                p.id,
                &q::NewCategory {
                    name: a.name,
                    name_en: a.name_en,
                    description: a.description,
                    keywords: a.keywords,
                },
            )?;
            println!("{}", c.id);
            Ok(())
        }
        CategoryCmd::List { partner: p } => {
            let p = find_partner(&db, &p)?;
            for c in q::categories(&db, p.id)? {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    c.id,
                    c.name,
                    c.name_en,
                    c.description.as_deref().unwrap_or("-"),
                    c.keywords.join(",")
                );
            }
            Ok(())
        }
        CategoryCmd::Remove {
            partner: p,
            category_id,
        } => {
            let p = find_partner(&db, &p)?;
            if !q::remove_category(&db, p.id, category_id)? {
                bail!("{} has no category {category_id}", p.name);
            }
            eprintln!("category {category_id} removed");
            Ok(())
        }
    }
}

/// Assessment progress of a partner as JSON.
pub fn run_status(store: &Store, p: &str) -> Result<()> {
    let engine = Engine::open(&store.data_dir).context("no catalogue imported")?;
    let db = store.open()?;
    let p = find_partner(&db, p)?;
    let status = q::status(&engine, &db, &p)?;
    println!("{}", serde_json::to_string_pretty(&status)?);
    Ok(())
}
