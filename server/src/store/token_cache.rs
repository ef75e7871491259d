//! A brief in-memory cache of authenticated tokens (issue #14: "token lookups cached
//! briefly").
//!
//! Keyed by the SHA-256 of the presented token (the same hash the database stores), an
//! entry holds what the token's lookup read ([`TokenInfo`]: token, partner, scopes and
//! the partner's annotations generation) and is used for at most [`TOKEN_TTL`] after the
//! moment its database read *started* — on PostgreSQL; on the embedded SQLite default
//! nothing is cached ([`ttl_for`]). So, on PostgreSQL:
//!
//! - a revocation (or an annotations change) committed by another process — the CLI,
//!   another replica — is seen by every request that starts `TOKEN_TTL` after its
//!   commit, at the latest;
//! - a revocation or an annotations change made through this process's store
//!   ([`crate::db::Db::revoke_token`], the qualification writes) removes the entries
//!   concerned at once, and an epoch counter keeps a lookup that read the old state
//!   before the change from putting it back afterwards.
//!
//! Only valid tokens are kept (an unknown or revoked token is looked up every time, so
//! a new token works at once and garbage cannot fill the cache), at most
//! [`TOKEN_CACHE_CAPACITY`] of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

use uuid::Uuid;

use super::partners::TokenInfo;

/// How long a token lookup is reused on PostgreSQL: a revocation by another process
/// holds within this.
pub const TOKEN_TTL: Duration = Duration::from_secs(1);

/// The token TTL of a store: [`TOKEN_TTL`] on PostgreSQL, where each lookup is a network
/// round trip; zero (no caching) on the embedded SQLite default, where the lookup is a
/// local read and the CLI contract says a `grantmatch token revoke` holds at the next
/// request.
pub fn ttl_for(postgres: bool) -> Duration {
    if postgres {
        TOKEN_TTL
    } else {
        Duration::ZERO
    }
}

/// At most this many tokens are kept; when full, the expired entries are dropped, and
/// if that is not enough, all of them.
pub const TOKEN_CACHE_CAPACITY: usize = 10_000;

/// Where a lookup started: the cache's epoch and the instant before the database read.
#[derive(Debug, Clone, Copy)]
pub struct LookupStart {
    epoch: u64,
    at: Instant,
}

/// The token cache (one per [`crate::db::Db`]).
pub struct TokenCache {
    ttl: Duration,
    capacity: usize,
    /// Bumped by every invalidation (under the write lock).
    epoch: AtomicU64,
    entries: RwLock<HashMap<[u8; 32], (Instant, TokenInfo)>>,
}

impl Default for TokenCache {
    fn default() -> Self {
        Self::new(TOKEN_TTL, TOKEN_CACHE_CAPACITY)
    }
}

impl TokenCache {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        TokenCache {
            ttl,
            capacity: capacity.max(1),
            epoch: AtomicU64::new(0),
            entries: RwLock::new(HashMap::new()),
        }
    }

    /// How long a lookup is reused (zero: nothing is cached).
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The token of `hash` if it was read less than the TTL before `now`.
    pub fn get(&self, hash: &[u8; 32], now: Instant) -> Option<TokenInfo> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries
            .get(hash)
            .filter(|(read_at, _)| now.saturating_duration_since(*read_at) < self.ttl)
            .map(|(_, info)| info.clone())
    }

    /// To be taken right before the database read of a lookup, for [`TokenCache::put`].
    pub fn start(&self, now: Instant) -> LookupStart {
        LookupStart {
            epoch: self.epoch.load(Ordering::SeqCst),
            at: now,
        }
    }

    /// Keeps the token read by the lookup begun at `start`, unless an invalidation
    /// happened since (its read may predate the change).
    pub fn put(&self, hash: [u8; 32], info: TokenInfo, start: LookupStart) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if self.epoch.load(Ordering::SeqCst) != start.epoch {
            return;
        }
        if entries.len() >= self.capacity && !entries.contains_key(&hash) {
            let ttl = self.ttl;
            entries.retain(|_, (read_at, _)| start.at.saturating_duration_since(*read_at) < ttl);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(hash, (start.at, info));
    }

    /// Drops the entries `gone` selects and fails the lookups running now.
    fn invalidate(&self, gone: impl Fn(&TokenInfo) -> bool) {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        self.epoch.fetch_add(1, Ordering::SeqCst);
        entries.retain(|_, (_, info)| !gone(info));
    }

    /// After a token's revocation (committed).
    pub fn forget_token(&self, token_id: Uuid) {
        self.invalidate(|info| info.id == token_id);
    }

    /// After a change of a partner's tokens or annotations (committed).
    pub fn forget_partner(&self, partner_id: Uuid) {
        self.invalidate(|info| info.partner_id == partner_id);
    }

    /// The number of entries (tests).
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: u128, partner: u128) -> TokenInfo {
        TokenInfo {
            id: Uuid::from_u128(id),
            partner_id: Uuid::from_u128(partner),
            scopes: vec!["grants:read".into()],
            annotations_generation: 0,
        }
    }

    fn hash(n: u8) -> [u8; 32] {
        [n; 32]
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn an_entry_is_used_for_less_than_the_ttl_after_its_read_started() {
        let cache = TokenCache::new(TOKEN_TTL, 10);
        let t0 = Instant::now();
        assert_eq!(cache.get(&hash(1), t0), None);
        cache.put(hash(1), info(1, 9), cache.start(t0));
        assert_eq!(cache.get(&hash(1), t0), Some(info(1, 9)));
        assert_eq!(cache.get(&hash(1), t0 + TOKEN_TTL - MS), Some(info(1, 9)));
        assert_eq!(cache.get(&hash(1), t0 + TOKEN_TTL), None);
        assert_eq!(cache.get(&hash(2), t0), None);
    }

    #[test]
    fn forgetting_a_token_or_a_partner_drops_its_entries_at_once() {
        let cache = TokenCache::new(TOKEN_TTL, 10);
        let t0 = Instant::now();
        cache.put(hash(1), info(1, 9), cache.start(t0));
        cache.put(hash(2), info(2, 9), cache.start(t0));
        cache.put(hash(3), info(3, 8), cache.start(t0));
        cache.forget_token(Uuid::from_u128(1));
        assert_eq!(cache.get(&hash(1), t0), None);
        assert!(cache.get(&hash(2), t0).is_some());
        cache.forget_partner(Uuid::from_u128(9));
        assert_eq!(cache.get(&hash(2), t0), None);
        assert_eq!(cache.get(&hash(3), t0), Some(info(3, 8)));
    }

    #[test]
    fn a_lookup_that_read_before_an_invalidation_does_not_put_its_entry_back() {
        let cache = TokenCache::new(TOKEN_TTL, 10);
        let t0 = Instant::now();
        // The lookup starts and reads the token; meanwhile this process revokes it
        // (committed, then the cache is invalidated); then the lookup finishes.
        let start = cache.start(t0);
        cache.forget_token(Uuid::from_u128(1));
        cache.put(hash(1), info(1, 9), start);
        assert_eq!(cache.get(&hash(1), t0), None);
        // A lookup that started after the invalidation is kept.
        cache.put(hash(1), info(1, 9), cache.start(t0));
        assert!(cache.get(&hash(1), t0).is_some());
    }

    #[test]
    fn the_cache_stays_within_its_capacity() {
        let cache = TokenCache::new(TOKEN_TTL, 3);
        let t0 = Instant::now();
        for n in 0..3 {
            cache.put(hash(n), info(n.into(), 9), cache.start(t0));
        }
        assert_eq!(cache.len(), 3);
        // Full of fresh entries: all go, the new one stays.
        cache.put(hash(3), info(3, 9), cache.start(t0 + MS));
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&hash(3), t0 + MS).is_some());
        // Full with expired entries among them: only those go.
        let later = t0 + TOKEN_TTL + 2 * MS;
        cache.put(hash(4), info(4, 9), cache.start(later));
        cache.put(hash(5), info(5, 9), cache.start(later));
        cache.put(hash(6), info(6, 9), cache.start(later));
        assert_eq!(cache.len(), 3);
        assert!(cache.get(&hash(4), later).is_some());
        assert!(cache.get(&hash(3), later).is_none());
        for n in 0..100 {
            cache.put(hash(n), info(n.into(), 9), cache.start(later));
            assert!(cache.len() <= 3);
        }
    }
}
