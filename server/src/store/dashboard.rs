//! The dashboard's rows in the store: partner users, one-time invites, sessions and
//! failed sign-ins. Invite and session secrets are kept only as SHA-256 hashes.

use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use uuid::Uuid;

use crate::args;
use crate::db::{hash_token, Db};
use crate::error::ServerError;
use crate::store::sql::Row;

/// How long an invite link is valid.
pub const INVITE_VALIDITY: Duration = Duration::hours(24);
/// How long a session lasts.
pub const SESSION_VALIDITY: Duration = Duration::hours(12);
/// Failed sign-ins per e-mail within [`LOCKOUT_WINDOW`] that lock the account.
pub const LOCKOUT_FAILURES: i64 = 5;
pub const LOCKOUT_WINDOW: Duration = Duration::minutes(15);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: Uuid,
    pub partner_id: Uuid,
    pub email: String,
    pub password_hash: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A signed-in session: its user and the CSRF token of its forms.
#[derive(Debug, Clone)]
pub struct Session {
    pub user: User,
    pub csrf: String,
}

/// A random secret of 32 bytes as hex.
pub fn secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn user_row(r: &Row) -> Result<User, ServerError> {
    Ok(User {
        id: r.get(0)?,
        partner_id: r.get(1)?,
        email: r.get(2)?,
        password_hash: r.get(3)?,
        created_at: r.get(4)?,
    })
}

const USER_COLS: &str = "u.id, u.partner_id, u.email, u.password_hash, u.created_at";

pub fn normalise_email(email: &str) -> String {
    email.trim().to_lowercase()
}

impl Db {
    /// Adds a user to a partner and returns it with a one-time invite secret.
    pub fn add_user(
        &self,
        partner_id: Uuid,
        email: &str,
        now: DateTime<Utc>,
    ) -> Result<(User, String), ServerError> {
        let email = normalise_email(email);
        if !email.contains('@') || email.contains(char::is_whitespace) {
            return Err(ServerError::Invalid(format!(
                "`{email}` is not an e-mail address"
            )));
        }
        let user = User {
            id: Uuid::new_v4(),
            partner_id,
            email,
            password_hash: None,
            created_at: now,
        };
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        let exists = tx
            .query_opt(
                "SELECT 1 FROM partner_users WHERE email = ?1",
                args![&user.email],
                |_| Ok(()),
            )?
            .is_some();
        if exists {
            return Err(ServerError::Invalid(format!(
                "a user with e-mail `{}` already exists",
                user.email
            )));
        }
        tx.execute(
            "INSERT INTO partner_users (id, partner_id, email, created_at) VALUES (?1, ?2, ?3, ?4)",
            args![user.id, partner_id, &user.email, now],
        )?;
        let invite = secret();
        tx.execute(
            "INSERT INTO partner_user_invites (hash, user_id, expires_at) VALUES (?1, ?2, ?3)",
            args![hash_token(&invite).to_vec(), user.id, now + INVITE_VALIDITY],
        )?;
        tx.commit()?;
        Ok((user, invite))
    }

    pub fn users(&self, partner_id: Uuid) -> Result<Vec<User>, ServerError> {
        self.reader().query_map(
            &format!(
                "SELECT {USER_COLS} FROM partner_users u WHERE u.partner_id = ?1 ORDER BY u.created_at"
            ),
            args![partner_id],
            user_row,
        )
    }

    pub fn user_by_email(&self, email: &str) -> Result<Option<User>, ServerError> {
        self.reader().query_opt(
            &format!("SELECT {USER_COLS} FROM partner_users u WHERE u.email = ?1"),
            args![normalise_email(email)],
            user_row,
        )
    }

    /// Removes a partner's user with its sessions and invites. False when none.
    pub fn remove_user(&self, partner_id: Uuid, email: &str) -> Result<bool, ServerError> {
        let n = self.writer().execute(
            "DELETE FROM partner_users WHERE partner_id = ?1 AND email = ?2",
            args![partner_id, normalise_email(email)],
        )?;
        Ok(n == 1)
    }

    /// The user of a valid (unused, unexpired) invite.
    pub fn invite_user(
        &self,
        invite: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<User>, ServerError> {
        self.reader().query_opt(
            &format!(
                "SELECT {USER_COLS} FROM partner_user_invites i JOIN partner_users u ON u.id = i.user_id
                 WHERE i.hash = ?1 AND i.used_at IS NULL AND i.expires_at > ?2"
            ),
            args![hash_token(invite).to_vec(), now],
            user_row,
        )
    }

    /// Sets the password hash through a valid invite and uses the invite up. False when
    /// the invite is unknown, used or expired.
    pub fn redeem_invite(
        &self,
        invite: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, ServerError> {
        let mut conn = self.writer();
        let mut tx = conn.transaction()?;
        let user: Option<String> = tx.query_opt(
            "SELECT user_id FROM partner_user_invites WHERE hash = ?1 AND used_at IS NULL AND expires_at > ?2",
            args![hash_token(invite).to_vec(), now],
            |r| r.get(0),
        )?;
        let Some(user) = user else {
            return Ok(false);
        };
        tx.execute(
            "UPDATE partner_user_invites SET used_at = ?2 WHERE hash = ?1",
            args![hash_token(invite).to_vec(), now],
        )?;
        tx.execute(
            "UPDATE partner_users SET password_hash = ?2 WHERE id = ?1",
            args![user, password_hash],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Failed sign-ins of `email` since `since`.
    pub fn sign_in_failures(&self, email: &str, since: DateTime<Utc>) -> Result<i64, ServerError> {
        self.reader().query_row(
            "SELECT COUNT(*) FROM dashboard_sign_in_failures WHERE email = ?1 AND at > ?2",
            args![normalise_email(email), since],
            |r| r.get(0),
        )
    }

    pub fn record_sign_in_failure(
        &self,
        email: &str,
        now: DateTime<Utc>,
    ) -> Result<(), ServerError> {
        self.writer().execute(
            "INSERT INTO dashboard_sign_in_failures (email, at) VALUES (?1, ?2)",
            args![normalise_email(email), now],
        )?;
        Ok(())
    }

    /// Starts a session; returns its secret (the cookie value).
    pub fn create_session(&self, user_id: Uuid, now: DateTime<Utc>) -> Result<String, ServerError> {
        let id = secret();
        self.writer().execute(
            "INSERT INTO dashboard_sessions (hash, user_id, csrf, expires_at) VALUES (?1, ?2, ?3, ?4)",
            args![hash_token(&id).to_vec(), user_id, secret(), now + SESSION_VALIDITY],
        )?;
        Ok(id)
    }

    pub fn session(&self, id: &str, now: DateTime<Utc>) -> Result<Option<Session>, ServerError> {
        self.reader().query_opt(
            &format!(
                "SELECT {USER_COLS}, s.csrf FROM dashboard_sessions s JOIN partner_users u ON u.id = s.user_id
                 WHERE s.hash = ?1 AND s.expires_at > ?2"
            ),
            args![hash_token(id).to_vec(), now],
            |r| {
                Ok(Session {
                    user: user_row(r)?,
                    csrf: r.get(5)?,
                })
            },
        )
    }

    pub fn end_session(&self, id: &str) -> Result<(), ServerError> {
        self.writer().execute(
            "DELETE FROM dashboard_sessions WHERE hash = ?1",
            args![hash_token(id).to_vec()],
        )?;
        Ok(())
    }

    /// When each of a partner's tokens was last used (from the usage ledger).
    pub fn tokens_last_used(
        &self,
        partner_id: Uuid,
    ) -> Result<std::collections::HashMap<Uuid, String>, ServerError> {
        let rows = self.reader().query_map(
            "SELECT token_id, MAX(created_at) FROM usage_ledger WHERE partner_id = ?1 AND token_id IS NOT NULL GROUP BY token_id",
            args![partner_id],
            |r| Ok((r.get::<Uuid>(0)?, r.get::<String>(1)?)),
        )?;
        Ok(rows.into_iter().collect())
    }
}

impl Db {
    /// API requests of a partner per UTC day from `first` to `last`, zeros included.
    pub fn requests_per_day(
        &self,
        partner_id: Uuid,
        first: chrono::NaiveDate,
        last: chrono::NaiveDate,
    ) -> Result<Vec<(String, i64)>, ServerError> {
        let counts: std::collections::HashMap<String, i64> = self
            .reader()
            .query_map(
                "SELECT substr(created_at, 1, 10), COUNT(*) FROM usage_ledger
                 WHERE partner_id = ?1 AND substr(created_at, 1, 10) BETWEEN ?2 AND ?3 GROUP BY 1",
                args![partner_id, first.to_string(), last.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .into_iter()
            .collect();
        Ok(first
            .iter_days()
            .take_while(|d| *d <= last)
            .map(|d| {
                let k = d.to_string();
                let n = counts.get(&k).copied().unwrap_or(0);
                (k, n)
            })
            .collect())
    }
}
