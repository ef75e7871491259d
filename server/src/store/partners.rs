//! Partners and their API tokens. Tokens are stored only as SHA-256 hashes; the plain
//! token is shown once at creation.

use chrono::{DateTime, Utc};
use rand::RngCore;
use subtle::ConstantTimeEq;
use uuid::Uuid;

use super::conn::Conn;
use super::db::{hash_token, Db};
use crate::args;
use crate::error::ServerError;
use crate::views::Tier;

/// Token scopes of the API.
pub const SCOPES: [&str; 3] = ["grants:read", "matching:use", "usage:read"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partner {
    pub id: Uuid,
    pub name: String,
    pub tier: String,
    pub contact_email: Option<String>,
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
    pub created_at: DateTime<Utc>,
}

/// A valid (not revoked) token as seen by the authentication layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub scopes: Vec<String>,
    /// The partner's annotations generation read with the token (0 when its results,
    /// categories and configuration were never written): the in-memory annotations of
    /// the partner are current exactly when they were loaded at this generation.
    pub annotations_generation: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Partner data to create.
#[derive(Debug, Clone, Default)]
pub struct NewPartner {
    pub name: String,
    pub tier: String,
    pub contact_email: Option<String>,
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
}

fn scopes_of(s: String) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

impl Db {
    pub fn create_partner(&self, p: &NewPartner) -> Result<Partner, ServerError> {
        if p.name.trim().is_empty() {
            return Err(ServerError::Invalid(
                "partner name must not be empty".into(),
            ));
        }
        if Tier::parse(&p.tier).is_none() {
            let names = Tier::ALL.map(Tier::as_str);
            return Err(ServerError::Invalid(format!(
                "unknown tier `{}` (one of: {})",
                p.tier,
                names.join(", ")
            )));
        }
        if let Some(e) = &p.contact_email {
            if !e.contains('@') || e.contains(char::is_whitespace) {
                return Err(ServerError::Invalid(format!(
                    "`{e}` is not an e-mail address"
                )));
            }
        }
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        let exists = tx
            .query_opt(
                "SELECT 1 FROM partners WHERE name = ?1",
                args![&p.name],
                |_| Ok(()),
            )?
            .is_some();
        if exists {
            return Err(ServerError::Invalid(format!(
                "a partner named `{}` already exists",
                p.name
            )));
        }
        let partner = Partner {
            id: Uuid::new_v4(),
            name: p.name.clone(),
            tier: p.tier.clone(),
            contact_email: p.contact_email.clone(),
            region_ids: p.region_ids.clone(),
            grant_area_ids: p.grant_area_ids.clone(),
            created_at: Utc::now(),
        };
        tx.execute(
            "INSERT INTO partners (id, name, tier, contact_email, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            args![
                partner.id,
                &partner.name,
                &partner.tier,
                &partner.contact_email,
                partner.created_at
            ],
        )?;
        for r in &partner.region_ids {
            tx.execute(
                "INSERT INTO partner_regions (partner_id, region_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                args![partner.id, r],
            )?;
        }
        for a in &partner.grant_area_ids {
            tx.execute(
                "INSERT INTO partner_grant_areas (partner_id, grant_area_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                args![partner.id, a],
            )?;
        }
        tx.commit()?;
        Ok(partner)
    }

    fn load_partner(conn: &mut Conn, id: &str) -> Result<Option<Partner>, ServerError> {
        let row = conn.query_opt(
            "SELECT id, name, tier, contact_email, created_at FROM partners WHERE id = ?1",
            args![id],
            |r| {
                Ok(Partner {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    tier: r.get(2)?,
                    contact_email: r.get(3)?,
                    region_ids: Vec::new(),
                    grant_area_ids: Vec::new(),
                    created_at: r.get(4)?,
                })
            },
        )?;
        let Some(mut partner) = row else {
            return Ok(None);
        };
        partner.region_ids = conn.query_map(
            "SELECT region_id FROM partner_regions WHERE partner_id = ?1 ORDER BY rowid",
            args![id],
            |r| r.get(0),
        )?;
        partner.grant_area_ids = conn.query_map(
            "SELECT grant_area_id FROM partner_grant_areas WHERE partner_id = ?1 ORDER BY rowid",
            args![id],
            |r| r.get(0),
        )?;
        Ok(Some(partner))
    }

    pub fn partner(&self, id: Uuid) -> Result<Option<Partner>, ServerError> {
        Self::load_partner(&mut self.reader(), &id.to_string())
    }

    /// Finds a partner by UUID or exact name.
    pub fn find_partner(&self, name_or_id: &str) -> Result<Option<Partner>, ServerError> {
        let mut conn = self.reader();
        let id: Option<String> = conn.query_opt(
            "SELECT id FROM partners WHERE id = ?1 OR name = ?1",
            args![name_or_id],
            |r| r.get(0),
        )?;
        match id {
            Some(id) => Self::load_partner(&mut conn, &id),
            None => Ok(None),
        }
    }

    pub fn partners(&self) -> Result<Vec<Partner>, ServerError> {
        let mut conn = self.reader();
        let ids: Vec<String> = conn.query_map(
            "SELECT id FROM partners ORDER BY created_at, name",
            args![],
            |r| r.get(0),
        )?;
        ids.iter()
            .filter_map(|id| Self::load_partner(&mut conn, id).transpose())
            .collect()
    }

    /// Creates a token; returns its row and the plain token (shown once).
    pub fn create_token(
        &self,
        partner_id: Uuid,
        scopes: &[String],
    ) -> Result<(TokenRow, String), ServerError> {
        if scopes.is_empty() {
            return Err(ServerError::Invalid(
                "a token needs at least one scope".into(),
            ));
        }
        for s in scopes {
            if !SCOPES.contains(&s.as_str()) {
                return Err(ServerError::Invalid(format!(
                    "unknown scope `{s}` (one of: {})",
                    SCOPES.join(", ")
                )));
            }
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = format!("gm_{}", hex::encode(bytes));
        let row = TokenRow {
            id: Uuid::new_v4(),
            partner_id,
            scopes: scopes.to_vec(),
            created_at: Utc::now(),
            revoked_at: None,
        };
        self.writer().execute(
            "INSERT INTO tokens (id, partner_id, hash, scopes, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            args![
                row.id,
                partner_id,
                hash_token(&token).to_vec(),
                scopes.join(","),
                row.created_at
            ],
        )?;
        Ok((row, token))
    }

    /// Revokes a token by id. Returns false when no such active token exists. This
    /// process's token cache forgets the token at once; other processes' caches within
    /// [`super::token_cache::TOKEN_TTL`].
    pub fn revoke_token(&self, id: Uuid) -> Result<bool, ServerError> {
        let n = self.writer().execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            args![id, Utc::now()],
        )?;
        self.token_cache.forget_token(id);
        Ok(n == 1)
    }

    pub fn tokens(&self, partner_id: Uuid) -> Result<Vec<TokenRow>, ServerError> {
        self.reader().query_map(
            "SELECT id, partner_id, scopes, created_at, revoked_at FROM tokens WHERE partner_id = ?1 ORDER BY created_at",
            args![partner_id],
            |r| {
                Ok(TokenRow {
                    id: r.get(0)?,
                    partner_id: r.get(1)?,
                    scopes: scopes_of(r.get(2)?),
                    created_at: r.get(3)?,
                    revoked_at: r.get(4)?,
                })
            },
        )
    }

    /// The token of `presented` if this process looked it up less than
    /// [`super::token_cache::TOKEN_TTL`] ago and found it valid: no database call, so
    /// also on an async worker thread.
    pub fn cached_token(&self, presented: &str) -> Option<TokenInfo> {
        self.token_cache
            .get(&hash_token(presented), std::time::Instant::now())
    }

    /// [`Db::authenticate`] through the token cache: a valid token read less than
    /// [`super::token_cache::TOKEN_TTL`] ago is not read again (see
    /// [`super::token_cache`]).
    pub fn authenticate_cached(&self, presented: &str) -> Result<Option<TokenInfo>, ServerError> {
        let hash = hash_token(presented);
        let now = std::time::Instant::now();
        if let Some(info) = self.token_cache.get(&hash, now) {
            return Ok(Some(info));
        }
        let start = self.token_cache.start(now);
        let info = self.authenticate(presented)?;
        if let Some(info) = &info {
            self.token_cache.put(hash, info.clone(), start);
        }
        Ok(info)
    }

    /// Looks an active token up by the hash of the presented secret; the stored hash is
    /// compared in constant time. Always reads the database (the server uses
    /// [`Db::authenticate_cached`]).
    pub fn authenticate(&self, presented: &str) -> Result<Option<TokenInfo>, ServerError> {
        let hash = hash_token(presented);
        // One statement, so one read snapshot: the token as it is now (a revocation
        // committed by any process before this read is seen) and the partner's
        // annotations generation of the same moment.
        let row = self.reader().query_opt(
            "SELECT t.id, t.partner_id, t.scopes, t.hash, COALESCE(g.generation, 0)
             FROM tokens t LEFT JOIN partner_annotations_generation g ON g.partner_id = t.partner_id
             WHERE t.hash = ?1 AND t.revoked_at IS NULL",
            args![hash.to_vec()],
            |r| {
                Ok((
                    r.get::<Uuid>(0)?,
                    r.get::<Uuid>(1)?,
                    r.get::<String>(2)?,
                    r.get::<Vec<u8>>(3)?,
                    r.get::<i64>(4)?,
                ))
            },
        )?;
        Ok(
            row.and_then(|(id, partner_id, scopes, stored, generation)| {
                bool::from(stored.ct_eq(&hash)).then(|| TokenInfo {
                    id,
                    partner_id,
                    scopes: scopes_of(scopes),
                    annotations_generation: generation,
                })
            }),
        )
    }
}
