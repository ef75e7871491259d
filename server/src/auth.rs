//! Bearer-token authentication and the caller's partner context.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts, HeaderMap};
use grantmatch_engine::{Engine, ResolvedScope, Scope};
use uuid::Uuid;

use crate::db::{Db, Partner, TokenInfo};
use crate::error::{ApiError, ServerError};
use crate::AppState;

/// A partner with its scope resolved against a catalogue snapshot: `engine`, which the
/// requests of this context use (so a snapshot swapped in meanwhile never meets a scope
/// resolved against another one).
pub struct PartnerCtx {
    pub partner: Partner,
    pub scope: ResolvedScope,
    pub engine: Arc<Engine>,
}

/// Resolved partner contexts, by partner id. Partners are immutable once created, so
/// an entry is valid as long as its engine is the one served; a new snapshot clears
/// the cache ([`crate::AppState::replace_engine`]).
#[derive(Default)]
pub struct PartnerCache {
    map: RwLock<HashMap<Uuid, Arc<PartnerCtx>>>,
}

impl PartnerCache {
    /// The partner's context if it is resolved against `engine` already (no database
    /// call).
    pub fn cached(&self, engine: &Arc<Engine>, id: Uuid) -> Option<Arc<PartnerCtx>> {
        self.map
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .filter(|ctx| Arc::ptr_eq(&ctx.engine, engine))
            .cloned()
    }

    /// Drops every context (a new snapshot is served).
    pub fn clear(&self) {
        self.map.write().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Drops the contexts resolved against another engine than `engine` (a request that
    /// took the old snapshot just before a swap may have put one back; it would keep
    /// the old catalogue in memory until its partner's next request).
    pub fn retain_engine(&self, engine: &Arc<Engine>) {
        self.map
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, ctx| Arc::ptr_eq(&ctx.engine, engine));
    }

    /// The partner's context resolved against `engine`: from the cache, resolved again
    /// from the cached partner (another snapshot), or read from the database.
    pub fn get(
        &self,
        engine: &Arc<Engine>,
        db: &Db,
        id: Uuid,
    ) -> Result<Option<Arc<PartnerCtx>>, ServerError> {
        let known = self
            .map
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned();
        let partner = match known {
            Some(ctx) if Arc::ptr_eq(&ctx.engine, engine) => return Ok(Some(ctx)),
            Some(ctx) => ctx.partner.clone(),
            None => match db.partner(id)? {
                Some(p) => p,
                None => return Ok(None),
            },
        };
        let scope = engine.resolve_scope(&Scope {
            region_ids: partner.region_ids.clone(),
            grant_area_ids: partner.grant_area_ids.clone(),
        });
        let ctx = Arc::new(PartnerCtx {
            partner,
            scope,
            engine: engine.clone(),
        });
        self.map
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, ctx.clone());
        Ok(Some(ctx))
    }
}

/// The authenticated caller of a request.
#[derive(Clone)]
pub struct Caller {
    pub token_id: Uuid,
    pub scopes: Vec<String>,
    pub partner: Arc<PartnerCtx>,
    /// The partner's annotations generation read with the token
    /// ([`crate::qualification::AnnotationCache`]).
    pub annotations_generation: i64,
}

impl Caller {
    /// Fails with 403 `insufficient_scope` unless the token has `scope`.
    pub fn require(&self, scope: &str) -> Result<(), ApiError> {
        if self.scopes.iter().any(|s| s == scope) {
            Ok(())
        } else {
            Err(ApiError::insufficient_scope(scope))
        }
    }

    pub fn scope(&self) -> &ResolvedScope {
        &self.partner.scope
    }

    /// The catalogue snapshot of this request: the one its scope was resolved against.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.partner.engine
    }
}

/// Extracts the bearer token from the `Authorization` header.
fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let value = headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::unauthorized("missing Authorization header (expected `Bearer <token>`)")
    })?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::unauthorized("malformed Authorization header"))?;
    let (scheme, token) = value.split_once(' ').ok_or_else(|| {
        ApiError::unauthorized("malformed Authorization header (expected `Bearer <token>`)")
    })?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ApiError::unauthorized(
            "malformed Authorization header (expected `Bearer <token>`)",
        ));
    }
    Ok(token.trim())
}

fn caller(info: TokenInfo, partner: Arc<PartnerCtx>) -> Caller {
    Caller {
        token_id: info.id,
        scopes: info.scopes,
        partner,
        annotations_generation: info.annotations_generation,
    }
}

/// Authenticates the bearer token of a request. A valid token looked up less than
/// [`crate::store::token_cache::TOKEN_TTL`] ago (and its resolved partner) comes from
/// memory on the async worker; otherwise the token store is read on the blocking pool
/// ([`crate::store::Store::authenticate`], one hop).
pub async fn authenticate(state: &Arc<AppState>, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let token = bearer(headers)?;
    let engine = state.engine();
    if let Some(info) = state.store.cached_token(token) {
        if let Some(partner) = state.partners.cached(&engine, info.partner_id) {
            return Ok(caller(info, partner));
        }
    }
    let (info, partner) = state
        .store
        .authenticate(token.to_string(), engine, state.partners.clone())
        .await?
        .ok_or_else(|| ApiError::unauthorized("invalid or revoked token"))?;
    Ok(caller(info, partner))
}

impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        if let Some(c) = parts.extensions.get::<Caller>() {
            return Ok(c.clone());
        }
        let caller = authenticate(state, &parts.headers).await?;
        parts.extensions.insert(caller.clone());
        Ok(caller)
    }
}
