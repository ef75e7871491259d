//! Partner qualification in the store: the partner's prompt, rules and custom
//! categories with their configuration version, the per-grant results the assessor
//! writes, and the annotations the grant views read (`crate::qualification` holds the
//! planning and the assessor).

use std::collections::HashMap;

use chrono::Utc;
use grantmatch_engine::qualify::{CustomCategory, QualificationRules};
use uuid::Uuid;

use crate::args;
use crate::db::Db;
use crate::error::ServerError;
use crate::qualification::{GrantResult, NewCategory, PartnerAnnotations, PartnerConfig};
use crate::store::conn::Conn;
use crate::store::sql::Value as SqlValue;

fn now() -> String {
    Utc::now().to_rfc3339()
}

/// Forgets the partner's qualification results: the prompt they answered has changed.
fn forget_results(tx: &mut Conn, partner: Uuid) -> Result<(), ServerError> {
    tx.execute(
        "UPDATE partner_grant_results SET ai_qualified = NULL, reasoning = NULL, qualification_key = NULL WHERE partner_id = ?1",
        args![partner],
    )?;
    Ok(())
}

fn bump_version(tx: &mut Conn, partner: Uuid) -> Result<i64, ServerError> {
    tx.execute(
        "INSERT INTO partner_assessment (partner_id, version, updated_at) VALUES (?1, 1, ?2)
         ON CONFLICT(partner_id) DO UPDATE SET version = partner_assessment.version + 1, updated_at = excluded.updated_at",
        args![partner, now()],
    )?;
    tx.query_row(
        "SELECT version FROM partner_assessment WHERE partner_id = ?1",
        args![partner],
        |r| r.get(0),
    )
}

/// Sets the partner's prompt and its rules (none: the prompt's reading alone); clears
/// its qualification results. Returns the new version. Check the rules against the
/// catalogue first ([`QualificationPrompt::read`]).
pub fn set_prompt(
    db: &Db,
    partner: Uuid,
    prompt: &str,
    rules: Option<&QualificationRules>,
) -> Result<i64, ServerError> {
    let prompt = prompt.trim();
    if prompt.is_empty() {
        return Err(ServerError::Invalid(
            "the qualification prompt is empty (use `partner qualification clear` to remove it)"
                .into(),
        ));
    }
    if prompt.chars().count() > 5000 {
        return Err(ServerError::Invalid(
            "the qualification prompt is longer than 5,000 characters".into(),
        ));
    }
    let mut conn = db.writer();
    let mut tx = conn.transaction()?;
    let version = bump_version(&mut tx, partner)?;
    let rules = rules
        .filter(|r| !r.is_empty())
        .map(|r| serde_json::to_string(r).expect("rules serialise"));
    tx.execute(
        "UPDATE partner_assessment SET prompt = ?2, prompt_updated_at = ?3, rules = ?4 WHERE partner_id = ?1",
        args![partner, prompt, now(), rules],
    )?;
    forget_results(&mut tx, partner)?;
    tx.commit()?;
    db.token_cache.forget_partner(partner);
    Ok(version)
}

/// Removes the partner's prompt and its qualification results. False when none was set.
pub fn clear_prompt(db: &Db, partner: Uuid) -> Result<bool, ServerError> {
    let mut conn = db.writer();
    let mut tx = conn.transaction()?;
    let had: bool = tx
        .query_opt(
            "SELECT prompt IS NOT NULL FROM partner_assessment WHERE partner_id = ?1",
            args![partner],
            |r| r.get(0),
        )?
        .unwrap_or(false);
    if had {
        bump_version(&mut tx, partner)?;
        tx.execute(
            "UPDATE partner_assessment SET prompt = NULL, prompt_updated_at = ?2, rules = NULL WHERE partner_id = ?1",
            args![partner, now()],
        )?;
        forget_results(&mut tx, partner)?;
    }
    tx.commit()?;
    db.token_cache.forget_partner(partner);
    Ok(had)
}

/// Adds a category; clears the partner's category results (they are re-assessed).
pub fn add_category(
    db: &Db,
    partner: Uuid,
    c: &NewCategory,
) -> Result<CustomCategory, ServerError> {
    let cat = CustomCategory::new(
        Uuid::new_v4(),
        &c.name,
        &c.name_en,
        c.description.as_deref(),
        &c.keywords,
    )
    .map_err(ServerError::Invalid)?;
    let mut conn = db.writer();
    let mut tx = conn.transaction()?;
    let dup = tx
        .query_opt(
            "SELECT 1 FROM partner_categories WHERE partner_id = ?1 AND name = ?2",
            args![partner, &cat.name],
            |_| Ok(()),
        )?
        .is_some();
    if dup {
        return Err(ServerError::Invalid(format!(
            "the partner already has a category named `{}`",
            cat.name
        )));
    }
    tx.execute(
        "INSERT INTO partner_categories (id, partner_id, name, name_en, description, keywords, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        args![
            cat.id,
            partner,
            &cat.name,
            &cat.name_en,
            &cat.description,
            serde_json::to_string(&cat.keywords).unwrap_or_else(|_| "[]".into()),
            now()
        ],
    )?;
    bump_version(&mut tx, partner)?;
    tx.execute(
        "UPDATE partner_grant_results SET category_ids = NULL, categories_key = NULL WHERE partner_id = ?1",
        args![partner],
    )?;
    tx.commit()?;
    db.token_cache.forget_partner(partner);
    Ok(cat)
}

/// Removes a category of the partner. False when the partner has no such category.
pub fn remove_category(db: &Db, partner: Uuid, id: Uuid) -> Result<bool, ServerError> {
    let mut conn = db.writer();
    let mut tx = conn.transaction()?;
    let n = tx.execute(
        "DELETE FROM partner_categories WHERE id = ?1 AND partner_id = ?2",
        args![id, partner],
    )?;
    if n == 1 {
        bump_version(&mut tx, partner)?;
        tx.execute(
            "UPDATE partner_grant_results SET category_ids = NULL, categories_key = NULL WHERE partner_id = ?1",
            args![partner],
        )?;
    }
    tx.commit()?;
    db.token_cache.forget_partner(partner);
    Ok(n == 1)
}

/// The partner's categories, in creation order.
pub fn categories(db: &Db, partner: Uuid) -> Result<Vec<CustomCategory>, ServerError> {
    let rows = db.reader().query_map(
        "SELECT id, name, name_en, description, keywords FROM partner_categories
         WHERE partner_id = ?1 ORDER BY created_at, rowid",
        args![partner],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<Option<String>>(3)?,
                r.get::<String>(4)?,
            ))
        },
    )?;
    rows.into_iter()
        .map(|(id, name, name_en, description, keywords)| {
            Ok(CustomCategory {
                id: Uuid::parse_str(&id)
                    .map_err(|e| ServerError::Invalid(format!("stored category id: {e}")))?,
                name,
                name_en,
                description,
                keywords: serde_json::from_str(&keywords).unwrap_or_default(),
            })
        })
        .collect()
}

/// The partner's configuration (version 0 and nothing set when never configured).
pub fn config(db: &Db, partner: Uuid) -> Result<PartnerConfig, ServerError> {
    let row = db.reader().query_opt(
        "SELECT version, prompt, prompt_updated_at, rules FROM partner_assessment WHERE partner_id = ?1",
        args![partner],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<Option<String>>(1)?,
                r.get::<Option<String>>(2)?,
                r.get::<Option<String>>(3)?,
            ))
        },
    )?;
    let (version, prompt, prompt_updated_at, rules) = row.unwrap_or((0, None, None, None));
    let rules = rules
        .map(|r| QualificationRules::from_json(&r))
        .transpose()
        .map_err(|e| ServerError::Io(format!("stored {e}")))?;
    Ok(PartnerConfig {
        version,
        prompt,
        prompt_updated_at,
        rules,
        categories: categories(db, partner)?,
    })
}

fn version_of(conn: &mut Conn, partner: Uuid) -> Result<i64, ServerError> {
    Ok(conn
        .query_opt(
            "SELECT version FROM partner_assessment WHERE partner_id = ?1",
            args![partner],
            |r| r.get(0),
        )?
        .unwrap_or(0))
}

/// All of the partner's annotations and their generation, read in one snapshot.
pub(crate) fn load_current_annotations(
    db: &Db,
    partner: Uuid,
) -> Result<(i64, PartnerAnnotations), ServerError> {
    let mut conn = db.reader();
    // One snapshot for both reads (SQLite: a deferred transaction, whose first
    // read fixes it; PostgreSQL: REPEATABLE READ).
    let mut tx = conn.snapshot()?;
    let generation: i64 = tx.query_row(
            "SELECT CAST(COALESCE((SELECT generation FROM partner_annotations_generation WHERE partner_id = ?1), 0) AS BIGINT)",
            args![partner],
            |r| r.get(0),
        )?;
    let ann = load_annotations(&mut tx, partner, None)?;
    tx.commit()?;
    Ok((generation, ann))
}

/// The partner's results for `grants` (all of them when `None`) and its categories.
pub(crate) fn load_annotations(
    conn: &mut Conn,
    partner: Uuid,
    grants: Option<&[Uuid]>,
) -> Result<PartnerAnnotations, ServerError> {
    let configured = conn
        .query_opt(
            "SELECT 1 FROM partner_assessment WHERE partner_id = ?1",
            args![partner],
            |_| Ok(()),
        )?
        .is_some();
    if !configured || grants.is_some_and(|g| g.is_empty()) {
        return Ok(PartnerAnnotations::default());
    }
    let mut categories = HashMap::new();
    let rows = conn.query_map(
        "SELECT id, name, name_en FROM partner_categories WHERE partner_id = ?1",
        args![partner],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
            ))
        },
    )?;
    for (id, name, name_en) in rows {
        if let Ok(id) = Uuid::parse_str(&id) {
            categories.insert(id, (name, name_en));
        }
    }
    let mut sql = String::from(
            "SELECT grant_id, ai_qualified, reasoning, category_ids FROM partner_grant_results WHERE partner_id = ?1",
        );
    let mut args: Vec<SqlValue> = vec![partner.into()];
    if let Some(g) = grants {
        sql.push_str(" AND grant_id IN (");
        for (i, id) in g.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("?{}", i + 2));
            args.push(id.into());
        }
        sql.push(')');
    }
    let rows = conn.query_map(&sql, &args, |r| {
        Ok((
            r.get::<String>(0)?,
            r.get::<Option<bool>>(1)?,
            r.get::<Option<String>>(2)?,
            r.get::<Option<String>>(3)?,
        ))
    })?;
    let mut results = HashMap::new();
    for (gid, q, reasoning, cats) in rows {
        let Ok(gid) = Uuid::parse_str(&gid) else {
            continue;
        };
        let category_ids: Vec<Uuid> = cats
            .and_then(|c| serde_json::from_str(&c).ok())
            .unwrap_or_default();
        results.insert(
            gid,
            GrantResult {
                // Both or neither: a decision is shown only with its reasoning.
                ai_qualified: q.filter(|_| reasoning.is_some()),
                reasoning: reasoning.filter(|_| q.is_some()),
                category_ids,
            },
        );
    }
    Ok(PartnerAnnotations {
        results,
        categories,
    })
}

/// A stored result's keys: grant id, qualification key, categories key.
pub(crate) type StoredKeys = (String, Option<String>, Option<String>);

/// The stored keys of the partner's results.
pub(crate) fn stored_keys(db: &Db, partner: Uuid) -> Result<Vec<StoredKeys>, ServerError> {
    db.reader().query_map(
        "SELECT grant_id, qualification_key, categories_key FROM partner_grant_results WHERE partner_id = ?1",
        args![partner],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// How many grants the partner's prompt qualified.
pub(crate) fn qualified_count(db: &Db, partner: Uuid) -> Result<i64, ServerError> {
    db.reader().query_row(
        "SELECT COUNT(*) FROM partner_grant_results WHERE partner_id = ?1 AND ai_qualified = 1",
        args![partner],
        |r| r.get(0),
    )
}

/// Writes the rows of one batch in one transaction; nothing when the partner's
/// configuration version is no longer `version` (false).
pub(crate) fn write_batch(
    db: &Db,
    partner: Uuid,
    version: i64,
    sql: &str,
    rows: impl Iterator<Item = Vec<SqlValue>>,
) -> Result<bool, ServerError> {
    let mut conn = db.writer();
    let mut tx = conn.transaction()?;
    if version_of(&mut tx, partner)? != version {
        return Ok(false);
    }
    for row in rows {
        tx.execute(sql, &row)?;
    }
    tx.commit()?;
    db.token_cache.forget_partner(partner);
    Ok(true)
}

/// The configuration version of every configured partner.
pub fn versions(db: &Db) -> Result<Vec<(Uuid, i64)>, ServerError> {
    let rows = db.reader().query_map(
        "SELECT partner_id, version FROM partner_assessment",
        args![],
        |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
    )?;
    Ok(rows
        .into_iter()
        .filter_map(|(p, v)| Uuid::parse_str(&p).ok().map(|p| (p, v)))
        .collect())
}

/// One qualification result of a batch: partner, grant, ai_qualified, reasoning, key,
/// version, time.
pub(crate) const QUALIFICATION_UPSERT: &str = "INSERT INTO partner_grant_results
   (partner_id, grant_id, ai_qualified, reasoning, qualification_key, assessed_for_version, assessed_at)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
 ON CONFLICT(partner_id, grant_id) DO UPDATE SET
   ai_qualified = excluded.ai_qualified, reasoning = excluded.reasoning,
   qualification_key = excluded.qualification_key,
   assessed_for_version = excluded.assessed_for_version, assessed_at = excluded.assessed_at";

/// One categories result of a batch: partner, grant, category ids (JSON), key, version,
/// time.
pub(crate) const CATEGORIES_UPSERT: &str = "INSERT INTO partner_grant_results
   (partner_id, grant_id, category_ids, categories_key, assessed_for_version, assessed_at)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
 ON CONFLICT(partner_id, grant_id) DO UPDATE SET
   category_ids = excluded.category_ids, categories_key = excluded.categories_key,
   assessed_for_version = excluded.assessed_for_version, assessed_at = excluded.assessed_at";
