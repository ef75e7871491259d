//! The store's async API ([`grantmatch_server::store::Store`], issue #14): every call
//! below runs on a tokio runtime thread, where the store's debug guard panics on any
//! database call outside the store's blocking section — so each test passing (in the
//! debug build of `cargo test`) also shows the API never touches a connection on the
//! runtime's own threads. The database is SQLite, or PostgreSQL under
//! `make test-postgres` (`Db::for_tests_in`).

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use grantmatch_server::auth::PartnerCache;
use grantmatch_server::clock::Clock;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::error::ServerError;
use grantmatch_server::ledger::{LedgerRow, RequestLedger};
use grantmatch_server::matching_store::{MatchingRecord, MatchingStatus};
use grantmatch_server::store::{MatchingBill, Store};
use grantmatch_server::usage::QuotaPolicy;
use uuid::Uuid;

use crate::common::{off_runtime, tiny_engine_plain};

struct Fixture {
    store: Store,
    partner: Uuid,
    other: Uuid,
    token: String,
    token_id: Uuid,
    _dir: tempfile::TempDir,
}

/// A store over a database file of its own with two partners; a token of the first.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let (db, partner, other, token_id, token) = off_runtime(|| {
        let db = Db::for_tests_in(dir.path()).unwrap();
        let new = |name: &str| {
            db.create_partner(&NewPartner {
                name: name.into(),
                tier: "starter".into(),
                ..Default::default()
            })
            .unwrap()
            .id
        };
        let (p, o) = (new("Async"), new("Other"));
        let scopes = ["grants:read", "matching:use", "usage:read"].map(String::from);
        let (row, token) = db.create_token(p, &scopes).unwrap();
        (db, p, o, row.id, token)
    });
    Fixture {
        store: Store::from(db),
        partner,
        other,
        token,
        token_id,
        _dir: dir,
    }
}

fn at() -> DateTime<Utc> {
    "2026-05-14T10:00:00Z".parse().unwrap()
}

fn pending(partner: Uuid, token_id: Uuid, org: &str) -> MatchingRecord {
    MatchingRecord {
        id: Uuid::new_v4(),
        partner_id: partner,
        token_id,
        organization_id: org.into(),
        request: serde_json::json!({"organization_id": org}),
        status: MatchingStatus::Pending,
        results: None,
        results_count: None,
        error: None,
        created_at: at(),
        completed_at: None,
    }
}

#[tokio::test]
async fn a_partner_token_and_matching_request_round_trip_through_the_async_store() {
    let f = fixture();
    let engine = tiny_engine_plain();
    let partners = Arc::new(PartnerCache::default());
    let clock = Arc::new(Clock::fixed(at()));

    // Authentication: the token and its partner resolved against the engine, one call.
    let (info, ctx) = f
        .store
        .authenticate(f.token.clone(), engine.clone(), partners.clone())
        .await
        .unwrap()
        .expect("a valid token");
    assert_eq!((info.id, info.partner_id), (f.token_id, f.partner));
    assert_eq!(ctx.partner.id, f.partner);
    assert!(Arc::ptr_eq(&ctx.engine, &engine));
    assert!(f
        .store
        .authenticate("gm_unknown".into(), engine.clone(), partners.clone())
        .await
        .unwrap()
        .is_none());
    let again = f
        .store
        .partner_ctx(engine.clone(), partners.clone(), f.partner)
        .await
        .unwrap()
        .unwrap();
    assert!(Arc::ptr_eq(&again, &ctx), "the partner cache is used");

    // The asynchronous form: a pending request billed (request, counter, ledger row).
    let bill = |status: u16, ledger: Option<RequestLedger>| MatchingBill {
        partner: ctx.clone(),
        request_ledger: ledger,
        status,
        policy: QuotaPolicy::default(),
        clock: clock.clone(),
    };
    let request_ledger = RequestLedger::new(Instant::now(), at());
    let record = pending(f.partner, f.token_id, "org-1");
    let id = record.id;
    let (stored, billed) = f
        .store
        .bill_matching(record, bill(202, Some(request_ledger.clone())))
        .await
        .unwrap();
    assert_eq!(stored.id, id);
    assert_eq!(billed.quota.matching.0, 1);
    assert_eq!(billed.warnings_queued, 0);
    assert!(
        request_ledger.is_written(),
        "the ledger row is in the transaction"
    );
    let read = f.store.matching(id).await.unwrap().expect("stored");
    assert_eq!(read.status, MatchingStatus::Pending);
    assert_eq!(read.organization_id, "org-1");
    let pending_ids: Vec<Uuid> = f
        .store
        .pending_matchings()
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(pending_ids, vec![id]);
    let (record, partner) = f
        .store
        .matching_with_partner(id, engine.clone(), partners.clone())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((record.id, partner.unwrap().partner.id), (id, f.partner));

    // Completed with its (here: empty) results.
    f.store.finish_matching(id, Ok(Vec::new())).await.unwrap();
    let done = f.store.matching(id).await.unwrap().unwrap();
    assert_eq!(done.status, MatchingStatus::Completed);
    assert_eq!(done.results_count, Some(0));
    assert!(f.store.pending_matchings().await.unwrap().is_empty());

    // The synchronous form: ranking and billing as one unit. A failed ranking stores
    // and bills nothing; a panicking one is a task error; a good one is stored
    // completed and counted.
    let failed = pending(f.partner, f.token_id, "org-2");
    let failed_id = failed.id;
    let err = f
        .store
        .complete_and_bill(failed, bill(200, None), || {
            Err(ServerError::Invalid("no ranking".into()))
        })
        .await
        .err()
        .expect("the ranking's error");
    assert!(matches!(err, ServerError::Invalid(_)), "{err}");
    let panicked = pending(f.partner, f.token_id, "org-2");
    let err = f
        .store
        .complete_and_bill(panicked, bill(200, None), || panic!("ranking panicked"))
        .await
        .err()
        .expect("the task's error");
    assert!(matches!(err, ServerError::Task(_)), "{err}");
    assert!(f.store.matching(failed_id).await.unwrap().is_none());
    let good = pending(f.partner, f.token_id, "org-2");
    let good_id = good.id;
    let (record, billed) = f
        .store
        .complete_and_bill(good, bill(200, None), || Ok(Vec::new()))
        .await
        .unwrap();
    assert_eq!(record.status, MatchingStatus::Completed);
    assert_eq!(record.completed_at, Some(at()));
    assert_eq!(billed.quota.matching.0, 2, "only the good one was counted");
    assert_eq!(billed.quota.orgs.0, 2);
    let stored = f.store.matching(good_id).await.unwrap().unwrap();
    assert_eq!(stored.status, MatchingStatus::Completed);
    let recent = f.store.recent_matchings(f.partner, 10).await.unwrap();
    assert_eq!(recent.len(), 2);
    assert!(f
        .store
        .recent_matchings(f.other, 10)
        .await
        .unwrap()
        .is_empty());
    let quota = f
        .store
        .quota(ctx.clone(), at(), QuotaPolicy::default())
        .await
        .unwrap();
    assert_eq!(quota.matching.0, 2);

    // The usage ledger: a buffered row and a durable one, both in the statistics.
    let row = |status: u16| LedgerRow {
        partner_id: Some(f.partner),
        token_id: Some(f.token_id),
        method: "GET".into(),
        endpoint: "GET /api/v1/grants".into(),
        status,
        latency_ms: 1.0,
        organization_id: None,
        created_at: at(),
    };
    f.store.ledger().record(row(200));
    f.store.record_now(row(404)).await.unwrap();
    let stats = f
        .store
        .usage_stats(f.partner, at() - chrono::Duration::days(1))
        .await
        .unwrap();
    // The two rows above and the billed 202's row.
    assert_eq!(stats.total_requests, 3, "{stats:?}");
    assert_eq!(stats.failed_requests, 1);
    assert_eq!(f.store.flush_ledger().await.unwrap(), 0, "flushed already");

    // Tokens: listed, another partner's not revocable, revoked, then refused.
    let page = f.store.token_page(f.partner).await.unwrap();
    assert_eq!(page.partner.unwrap().id, f.partner);
    assert_eq!(page.tokens.len(), 1);
    assert_eq!(
        f.store.revoke_own_token(f.other, f.token_id).await.unwrap(),
        None
    );
    assert_eq!(
        f.store
            .revoke_own_token(f.partner, f.token_id)
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(
        f.store
            .revoke_own_token(f.partner, f.token_id)
            .await
            .unwrap(),
        None,
        "revoked already"
    );
    assert!(f
        .store
        .authenticate(f.token.clone(), engine.clone(), partners.clone())
        .await
        .unwrap()
        .is_none());
    let (row, token) = f
        .store
        .create_token(f.partner, vec!["grants:read".into()])
        .await
        .unwrap();
    let (info, _) = f
        .store
        .authenticate(token, engine, partners)
        .await
        .unwrap()
        .expect("the new token");
    assert_eq!(info.id, row.id);
    assert!(f.store.ping().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_billed_requests_through_the_store_are_each_counted_once() {
    let f = fixture();
    let engine = tiny_engine_plain();
    let partners = Arc::new(PartnerCache::default());
    let ctx = f
        .store
        .partner_ctx(engine, partners, f.partner)
        .await
        .unwrap()
        .unwrap();
    let clock = Arc::new(Clock::fixed(at()));
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let (store, ctx, clock) = (f.store.clone(), ctx.clone(), clock.clone());
            let record = pending(f.partner, f.token_id, &format!("org-{}", i % 4));
            tokio::spawn(async move {
                let bill = MatchingBill {
                    partner: ctx,
                    request_ledger: Some(RequestLedger::new(Instant::now(), at())),
                    status: 200,
                    policy: QuotaPolicy::default(),
                    clock,
                };
                store
                    .complete_and_bill(record, bill, || Ok(Vec::new()))
                    .await
                    .map(|(r, b)| (r.id, b.quota.matching.0))
            })
        })
        .collect();
    let mut counts = Vec::new();
    for t in tasks {
        counts.push(t.await.unwrap().unwrap().1);
    }
    counts.sort_unstable();
    // One transaction each: every request saw its own counter value.
    assert_eq!(counts, (1..=16).collect::<Vec<i64>>());
    let stats = f
        .store
        .usage_stats(f.partner, at() - chrono::Duration::days(1))
        .await
        .unwrap();
    assert_eq!(stats.matching_requests, 16);
    assert_eq!(stats.active_organizations, 4);
}

#[tokio::test]
async fn dashboard_sessions_and_the_outbox_through_the_async_store() {
    let f = fixture();
    let store = f.store.clone();
    let now = at();
    let (user, invite) =
        off_runtime(|| store.db().add_user(f.partner, "a@example.org", now)).unwrap();
    assert_eq!(
        f.store
            .invite_user(invite.clone(), now)
            .await
            .unwrap()
            .unwrap()
            .id,
        user.id
    );
    let hash = format!("plain:{}", "secret-password");
    assert!(f
        .store
        .redeem_invite(invite.clone(), hash, now)
        .await
        .unwrap());
    assert!(f.store.invite_user(invite, now).await.unwrap().is_none());
    fn verify(password: &str, hash: &str) -> bool {
        hash.strip_prefix("plain:") == Some(password)
    }
    let wrong = f
        .store
        .sign_in("a@example.org".into(), "nope".into(), now, verify)
        .await
        .unwrap();
    assert!(matches!(wrong, grantmatch_server::store::SignIn::Wrong));
    let signed = f
        .store
        .sign_in(
            "a@example.org".into(),
            "secret-password".into(),
            now,
            verify,
        )
        .await
        .unwrap();
    let grantmatch_server::store::SignIn::Session(Ok(session)) = signed else {
        panic!("a session");
    };
    let s = f
        .store
        .session(session.clone(), now)
        .await
        .unwrap()
        .expect("valid");
    assert_eq!(s.user.partner_id, f.partner);
    f.store.end_session(session.clone()).await.unwrap();
    assert!(f.store.session(session, now).await.unwrap().is_none());

    // The outbox is empty; claiming an unknown e-mail fails softly.
    assert!(f.store.outbox(true).await.unwrap().is_empty());
    assert!(!f.store.claim_mail(12345, now).await.unwrap());
}
