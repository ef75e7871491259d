//! The store's async API: [`Store`], what the server's async code calls for every
//! database operation. Each `async fn` runs its synchronous [`Db`] work — one unit of
//! work, one hop — on tokio's blocking pool inside the store's blocking section
//! (`store::blocking`, private to the store), so the rule "no SQLite (or PostgreSQL)
//! call on an async worker thread" holds by construction and the debug guard in
//! `Db::writer` / `Db::reader` still checks it. Code without a runtime (the CLI, test
//! set-up off the runtime) uses the synchronous [`Db`] underneath ([`Store::db`]).
//!
//! Grouped by concern: the service, partners and tokens, matching (the billed matching
//! is one unit: ranking, then request, results, quota counter, warning e-mail and
//! ledger row in one transaction), the usage ledger, usage and quotas, the outbox,
//! qualification, the dashboard. A failed task (a panic on the blocking pool) is
//! [`ServerError::Task`] naming the operation.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use grantmatch_engine::Engine;
use serde_json::Value;
use uuid::Uuid;

use super::dashboard::{Session, User, LOCKOUT_FAILURES, LOCKOUT_WINDOW};
use super::db::{Db, Partner, TokenInfo, TokenRow};
use super::ledger::{Ledger, LedgerRow, RequestLedger};
use super::matching::{Billed, Billing, MatchingRecord, MatchingStatus};
use super::usage::OutboxMail;
use crate::auth::{PartnerCache, PartnerCtx};
use crate::clock::Clock;
use crate::error::ServerError;
use crate::qualification::{
    self as q, Batch, NewCategory, PartnerAnnotations, PartnerConfig, Plan,
};
use crate::usage::{QuotaPolicy, QuotaView, MATCHING_ENDPOINT};
use crate::views::{MatchResult, UsageStats};

/// The store as async code sees it: the database and the usage ledger's buffer. Cheap to
/// clone (two `Arc`s).
#[derive(Clone)]
pub struct Store {
    db: Arc<Db>,
    ledger: Arc<Ledger>,
}

impl From<Arc<Db>> for Store {
    fn from(db: Arc<Db>) -> Self {
        Store::new(db)
    }
}

impl From<Db> for Store {
    fn from(db: Db) -> Self {
        Store::new(Arc::new(db))
    }
}

/// An accepted matching request to bill ([`Store::bill_matching`],
/// [`Store::complete_and_bill`]).
pub struct MatchingBill {
    pub partner: Arc<PartnerCtx>,
    /// The request's ledger: its row is written in the billing transaction (then the
    /// middleware writes no second one).
    pub request_ledger: Option<RequestLedger>,
    /// The HTTP status the request is answered with (the ledger row's).
    pub status: u16,
    pub policy: QuotaPolicy,
    /// Read when billing (after the ranking, for the completed form).
    pub clock: Arc<Clock>,
}

/// The outcome of a dashboard sign-in ([`Store::sign_in`]).
pub enum SignIn {
    /// Too many recent failures: locked.
    Locked,
    /// Right password: the new session's id (or the error creating it).
    Session(Result<String, ServerError>),
    /// Wrong e-mail or password (recorded as a failure).
    Wrong,
}

/// What the dashboard's token page shows.
pub struct TokenPage {
    pub partner: Option<Partner>,
    pub tokens: Vec<TokenRow>,
    /// Per token, the time of its last request.
    pub last_used: HashMap<Uuid, String>,
}

/// What the dashboard's overview shows.
pub struct Overview {
    pub partner: Partner,
    pub quota: QuotaView,
    /// Requests per UTC day of the last 30 days (empty when they cannot be read).
    pub days: Vec<(String, i64)>,
}

impl Store {
    pub fn new(db: Arc<Db>) -> Self {
        Store {
            ledger: Arc::new(Ledger::new(db.clone())),
            db,
        }
    }

    /// The synchronous store underneath, for code without a runtime (the CLI, tests'
    /// own set-up run off the runtime). Async server code never calls it: on an async
    /// worker its connections panic (debug builds).
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// The usage ledger: [`Ledger::record`] only buffers (no database call) and may be
    /// called anywhere; its flusher runs in the background ([`Ledger::spawn_flusher`]).
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// Where the database lives (`None`: in memory); no database call.
    pub fn location(&self) -> Option<&super::db::Location> {
        self.db.location()
    }

    /// `f` over the database on the blocking pool (the store's blocking section).
    async fn run<T, F>(&self, what: &'static str, f: F) -> Result<T, ServerError>
    where
        F: FnOnce(&Db) -> Result<T, ServerError> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.db.clone();
        super::blocking_task(what, move || f(&db)).await?
    }

    // --- the service -------------------------------------------------------------

    /// Brings the data directory to the catalogue the database records as current
    /// ([`super::catalogue::sync_data_dir`]).
    pub async fn sync_catalogue(
        &self,
        data_dir: std::path::PathBuf,
        failed: Option<String>,
    ) -> Result<super::catalogue::DataDirSync, ServerError> {
        self.run("catalogue sync", move |db| {
            super::catalogue::sync_data_dir(db, &data_dir, failed.as_deref())
        })
        .await
    }

    /// Whether the database answers (`GET /health`).
    pub async fn ping(&self) -> bool {
        self.run("database ping", |db| Ok(db.ping()))
            .await
            .unwrap_or(false)
    }

    // --- partners and tokens -----------------------------------------------------

    /// A valid token looked up recently, from memory (no database call; see
    /// [`super::token_cache`]).
    pub fn cached_token(&self, token: &str) -> Option<TokenInfo> {
        self.db.cached_token(token)
    }

    /// The token `token` and its partner resolved against `engine` (through `partners`),
    /// in one hop; `None` when the token is unknown or revoked or its partner is gone.
    pub async fn authenticate(
        &self,
        token: String,
        engine: Arc<Engine>,
        partners: Arc<PartnerCache>,
    ) -> Result<Option<(TokenInfo, Arc<PartnerCtx>)>, ServerError> {
        self.run("authentication", move |db| {
            let Some(info) = db.authenticate_cached(&token)? else {
                return Ok(None);
            };
            Ok(partners
                .get(&engine, db, info.partner_id)?
                .map(|ctx| (info, ctx)))
        })
        .await
    }

    /// The partner `id` resolved against `engine` (through `partners`).
    pub async fn partner_ctx(
        &self,
        engine: Arc<Engine>,
        partners: Arc<PartnerCache>,
        id: Uuid,
    ) -> Result<Option<Arc<PartnerCtx>>, ServerError> {
        self.run("partner", move |db| partners.get(&engine, db, id))
            .await
    }

    /// The partner, its tokens and when each was last used.
    pub async fn token_page(&self, partner: Uuid) -> Result<TokenPage, ServerError> {
        self.run("tokens", move |db| {
            Ok(TokenPage {
                partner: db.partner(partner)?,
                tokens: db.tokens(partner)?,
                last_used: db.tokens_last_used(partner)?,
            })
        })
        .await
    }

    /// A new token of `partner` with `scopes`: its row and the plain token (shown once).
    pub async fn create_token(
        &self,
        partner: Uuid,
        scopes: Vec<String>,
    ) -> Result<(TokenRow, String), ServerError> {
        self.run("create token", move |db| db.create_token(partner, &scopes))
            .await
    }

    /// Revokes the token `id` if it is an active token of `partner`: `None` when it is
    /// not (unknown, another partner's, or revoked already).
    pub async fn revoke_own_token(
        &self,
        partner: Uuid,
        id: Uuid,
    ) -> Result<Option<bool>, ServerError> {
        self.run("revoke token", move |db| {
            let owned = db
                .tokens(partner)
                .map(|ts| ts.iter().any(|t| t.id == id && t.revoked_at.is_none()))
                .unwrap_or(false);
            owned.then(|| db.revoke_token(id)).transpose()
        })
        .await
    }

    // --- matching ----------------------------------------------------------------

    /// A stored matching request.
    pub async fn matching(&self, id: Uuid) -> Result<Option<MatchingRecord>, ServerError> {
        self.run("matching request", move |db| db.matching(id))
            .await
    }

    /// A stored matching request with its partner resolved against `engine`, in one hop
    /// (completing a pending request).
    #[allow(clippy::type_complexity)]
    pub async fn matching_with_partner(
        &self,
        id: Uuid,
        engine: Arc<Engine>,
        partners: Arc<PartnerCache>,
    ) -> Result<Option<(MatchingRecord, Option<Arc<PartnerCtx>>)>, ServerError> {
        self.run("matching request", move |db| {
            let Some(record) = db.matching(id)? else {
                return Ok(None);
            };
            let partner = partners.get(&engine, db, record.partner_id)?;
            Ok(Some((record, partner)))
        })
        .await
    }

    /// The requests still pending (interrupted by a restart, or asynchronous).
    pub async fn pending_matchings(&self) -> Result<Vec<MatchingRecord>, ServerError> {
        self.run("pending matching requests", |db| db.pending_matchings())
            .await
    }

    /// The partner's latest `limit` matching requests.
    pub async fn recent_matchings(
        &self,
        partner: Uuid,
        limit: usize,
    ) -> Result<Vec<MatchingRecord>, ServerError> {
        self.run("matching history", move |db| {
            db.recent_matchings(partner, limit)
        })
        .await
    }

    /// Stores a pending request's outcome: its results, or the error the partner reads.
    pub async fn finish_matching(
        &self,
        id: Uuid,
        outcome: Result<Vec<MatchResult>, String>,
    ) -> Result<(), ServerError> {
        self.run("matching outcome", move |db| {
            db.finish_matching(id, outcome.as_deref().map_err(String::as_str))
        })
        .await
    }

    /// Bills an accepted (pending) matching request in one transaction
    /// ([`Db::bill_matching`]): the request, its quota counter, the 90 % warning
    /// e-mail when a limit is reached (once per quarter and limit) and the request's
    /// usage-ledger row. Durable when this returns.
    pub async fn bill_matching(
        &self,
        record: MatchingRecord,
        bill: MatchingBill,
    ) -> Result<(MatchingRecord, Billed), ServerError> {
        self.run("matching request", move |db| {
            let billed = bill_on(db, &record, &bill)?;
            Ok((record, billed))
        })
        .await
    }

    /// The synchronous form's unit of work, in one hop to the blocking pool: `rank`
    /// (the matching itself), then the request completed with its results and billed as
    /// in [`Store::bill_matching`] — one transaction, durable when this returns. An
    /// error of `rank` stores and bills nothing.
    pub async fn complete_and_bill<F>(
        &self,
        mut record: MatchingRecord,
        bill: MatchingBill,
        rank: F,
    ) -> Result<(MatchingRecord, Billed), ServerError>
    where
        F: FnOnce() -> Result<Vec<MatchResult>, ServerError> + Send + 'static,
    {
        self.run("matching", move |db| {
            let results = rank()?;
            record.status = MatchingStatus::Completed;
            record.results_count = Some(results.len() as i64);
            record.results = Some(results);
            record.completed_at = Some(bill.clock.now());
            let billed = bill_on(db, &record, &bill)?;
            Ok((record, billed))
        })
        .await
    }

    // --- the usage ledger --------------------------------------------------------

    /// Writes `row` now (billing data: durable when this returns).
    pub async fn record_now(&self, row: LedgerRow) -> Result<(), ServerError> {
        let ledger = self.ledger.clone();
        self.run("usage ledger", move |_| ledger.record_now(row))
            .await
    }

    /// Writes the buffered ledger rows; how many.
    pub async fn flush_ledger(&self) -> Result<usize, ServerError> {
        let ledger = self.ledger.clone();
        self.run("usage ledger", move |_| ledger.flush()).await
    }

    // --- usage, quotas and the outbox --------------------------------------------

    /// The partner's usage since `since`, the buffered ledger rows flushed first.
    pub async fn usage_stats(
        &self,
        partner: Uuid,
        since: DateTime<Utc>,
    ) -> Result<UsageStats, ServerError> {
        let ledger = self.ledger.clone();
        self.run("usage statistics", move |db| {
            ledger.flush()?;
            super::usage::stats(db, partner, since)
        })
        .await
    }

    /// The partner's quota of the quarter of `now`.
    pub async fn quota(
        &self,
        partner: Arc<PartnerCtx>,
        now: DateTime<Utc>,
        policy: QuotaPolicy,
    ) -> Result<QuotaView, ServerError> {
        self.run("quota", move |db| {
            QuotaView::compute(db, &partner.partner, now, &policy)
        })
        .await
    }

    /// The dashboard overview of partner `id` at `now`; `None` when the partner is gone.
    pub async fn overview(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        policy: QuotaPolicy,
    ) -> Result<Option<Overview>, ServerError> {
        self.run("overview", move |db| {
            let Some(partner) = db.partner(id)? else {
                return Ok(None);
            };
            let quota = QuotaView::compute(db, &partner, now, &policy)?;
            let first: NaiveDate = (now - chrono::Duration::days(29)).date_naive();
            let days = db
                .requests_per_day(partner.id, first, now.date_naive())
                .unwrap_or_default();
            Ok(Some(Overview {
                partner,
                quota,
                days,
            }))
        })
        .await
    }

    /// The outbox's e-mails (only the unsent ones when `unsent_only`).
    pub async fn outbox(&self, unsent_only: bool) -> Result<Vec<OutboxMail>, ServerError> {
        self.run("outbox", move |db| super::usage::outbox(db, unsent_only))
            .await
    }

    /// Claims an outbox e-mail for sending (false: another sender has it).
    pub async fn claim_mail(&self, id: i64, now: DateTime<Utc>) -> Result<bool, ServerError> {
        self.run("outbox", move |db| super::usage::claim_mail(db, id, now))
            .await
    }

    /// Records a send attempt of an outbox e-mail.
    pub async fn mark_sent(
        &self,
        id: i64,
        result: Result<(), String>,
        now: DateTime<Utc>,
    ) -> Result<(), ServerError> {
        self.run("outbox", move |db| {
            super::usage::mark_sent(db, id, result, now)
        })
        .await
    }

    // --- qualification -----------------------------------------------------------

    /// The partner's annotations of `grants` (all of them when `None`).
    pub async fn annotations(
        &self,
        partner: Uuid,
        grants: Option<Vec<Uuid>>,
    ) -> Result<PartnerAnnotations, ServerError> {
        self.run("annotations", move |db| {
            PartnerAnnotations::load(db, partner, grants.as_deref())
        })
        .await
    }

    /// All of the partner's annotations and their generation.
    pub async fn current_annotations(
        &self,
        partner: Uuid,
    ) -> Result<(i64, PartnerAnnotations), ServerError> {
        self.run("annotations", move |db| {
            PartnerAnnotations::load_current(db, partner)
        })
        .await
    }

    /// In one hop to the blocking pool: the partner's annotations — `cached` when given,
    /// else all of them read now — and `then` over them (work that uses them all, such
    /// as filtering a list on them).
    pub async fn with_annotations<T, E, F>(
        &self,
        partner: Uuid,
        cached: Option<Arc<PartnerAnnotations>>,
        then: F,
    ) -> Result<T, E>
    where
        F: FnOnce(Arc<PartnerAnnotations>) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<ServerError> + Send + 'static,
    {
        let db = self.db.clone();
        super::blocking_task("annotations", move || {
            let ann = match cached {
                Some(ann) => ann,
                None => Arc::new(PartnerAnnotations::load(&db, partner, None)?),
            };
            then(ann)
        })
        .await?
    }

    /// The partner's qualification configuration.
    pub async fn qualification_config(&self, partner: Uuid) -> Result<PartnerConfig, ServerError> {
        self.run("qualification", move |db| q::config(db, partner))
            .await
    }

    /// Sets the partner's qualification prompt (and the operator's rules).
    pub async fn set_prompt(
        &self,
        partner: Uuid,
        prompt: String,
        rules: Option<grantmatch_engine::qualify::QualificationRules>,
    ) -> Result<i64, ServerError> {
        self.run("qualification", move |db| {
            q::set_prompt(db, partner, &prompt, rules.as_ref())
        })
        .await
    }

    /// Removes the partner's qualification prompt; false when there was none.
    pub async fn clear_prompt(&self, partner: Uuid) -> Result<bool, ServerError> {
        self.run("qualification", move |db| q::clear_prompt(db, partner))
            .await
    }

    /// Adds a custom category of the partner.
    pub async fn add_category(
        &self,
        partner: Uuid,
        category: NewCategory,
    ) -> Result<grantmatch_engine::qualify::CustomCategory, ServerError> {
        self.run("categories", move |db| {
            q::add_category(db, partner, &category)
        })
        .await
    }

    /// Removes a custom category of the partner; false when it has none of that id.
    pub async fn remove_category(&self, partner: Uuid, id: Uuid) -> Result<bool, ServerError> {
        self.run("categories", move |db| q::remove_category(db, partner, id))
            .await
    }

    /// The partner's assessment status on `engine` with its category list
    /// (`category_list`); the status fingerprints every programme.
    pub async fn qualification_status(
        &self,
        engine: Arc<Engine>,
        partner: Partner,
    ) -> Result<Value, ServerError> {
        self.run("qualification status", move |db| {
            let mut status = q::status(&engine, db, &partner)?;
            let cats = q::categories(db, partner.id)?;
            status["category_list"] = serde_json::to_value(cats).unwrap_or_default();
            Ok(status)
        })
        .await
    }

    /// The configuration version of every configured partner.
    pub async fn qualification_versions(&self) -> Result<Vec<(Uuid, i64)>, ServerError> {
        self.run("qualification", q::versions).await
    }

    /// What an assessment pass has to do for the partner ([`q::plan`]).
    pub async fn qualification_plan(
        &self,
        engine: Arc<Engine>,
        ctx: Arc<PartnerCtx>,
        fingerprints: Arc<Vec<[u8; 32]>>,
    ) -> Result<Plan, ServerError> {
        self.run("assessment plan", move |db| {
            q::plan(&engine, db, ctx.partner.id, &ctx.scope, &fingerprints)
        })
        .await
    }

    /// Assesses one batch and writes it in one transaction; false when the partner's
    /// configuration changed meanwhile (nothing written).
    pub async fn assess(&self, batch: Batch) -> Result<bool, ServerError> {
        self.run("assessment", move |db| batch.run(db)).await
    }

    // --- the dashboard -----------------------------------------------------------

    /// The valid session `id` at `now`.
    pub async fn session(
        &self,
        id: String,
        now: DateTime<Utc>,
    ) -> Result<Option<Session>, ServerError> {
        self.run("session", move |db| db.session(&id, now)).await
    }

    /// A dashboard sign-in at `now`: locked after [`LOCKOUT_FAILURES`] failures within
    /// [`LOCKOUT_WINDOW`]; else the password checked with `verify` (against the stored
    /// hash, on the blocking pool) and a session created, or the failure recorded.
    pub async fn sign_in(
        &self,
        email: String,
        password: String,
        now: DateTime<Utc>,
        verify: fn(&str, &str) -> bool,
    ) -> Result<SignIn, ServerError> {
        self.run("sign-in", move |db| {
            let failures = db.sign_in_failures(&email, now - LOCKOUT_WINDOW)?;
            if failures >= LOCKOUT_FAILURES {
                return Ok(SignIn::Locked);
            }
            let user = db.user_by_email(&email).ok().flatten();
            let ok = user
                .as_ref()
                .and_then(|u| u.password_hash.as_deref())
                .is_some_and(|h| verify(&password, h));
            Ok(match (ok, user) {
                (true, Some(user)) => SignIn::Session(db.create_session(user.id, now)),
                _ => {
                    let _ = db.record_sign_in_failure(&email, now);
                    SignIn::Wrong
                }
            })
        })
        .await
    }

    /// Ends a session.
    pub async fn end_session(&self, id: String) -> Result<(), ServerError> {
        self.run("session", move |db| db.end_session(&id)).await
    }

    /// The user of a valid invite at `now`.
    pub async fn invite_user(
        &self,
        invite: String,
        now: DateTime<Utc>,
    ) -> Result<Option<User>, ServerError> {
        self.run("invite", move |db| db.invite_user(&invite, now))
            .await
    }

    /// Sets the password hash through a valid invite; false when the invite is unknown,
    /// used or expired.
    pub async fn redeem_invite(
        &self,
        invite: String,
        password_hash: String,
        now: DateTime<Utc>,
    ) -> Result<bool, ServerError> {
        self.run("invite", move |db| {
            db.redeem_invite(&invite, &password_hash, now)
        })
        .await
    }
}

/// The billing transaction of [`Store::bill_matching`] and [`Store::complete_and_bill`],
/// on a blocking-pool thread: the ledger row is taken at this moment (its latency
/// includes the ranking) and marked written once committed.
fn bill_on(db: &Db, record: &MatchingRecord, bill: &MatchingBill) -> Result<Billed, ServerError> {
    let partner = &bill.partner.partner;
    let row = bill.request_ledger.as_ref().map(|l| {
        l.row(
            partner.id,
            record.token_id,
            MATCHING_ENDPOINT,
            bill.status,
            Some(record.organization_id.clone()),
        )
    });
    let billed = db.bill_matching(&Billing {
        record,
        partner,
        ledger_row: row.as_ref(),
        now: bill.clock.now(),
        policy: &bill.policy,
    })?;
    if let (Some(l), Some(_)) = (&bill.request_ledger, &row) {
        l.mark_written();
    }
    Ok(billed)
}
