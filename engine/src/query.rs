//! Listing grants and providers: filters, full-text search, ordering and paging.
//!
//! Filters combine with AND. Within one filter, several values combine with OR.
//! `region_ids` matches a grant with a region equal to or inside a given region (a
//! country includes its states); `grant_area_ids` matches a grant with the area or one
//! of its sub-areas. Without `q` grants are ordered by title (then id); with `q` by
//! relevance (BM25), ties by catalogue order.

use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};
use crate::error::Result;
use crate::model::GrantType;
use crate::scope::ResolvedScope;
use crate::text::fold_name;
use crate::Engine;

/// Filters of the grant list (already parsed; values are checked against the
/// catalogue and the scope by [`Engine::list_grants`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GrantFilter {
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
    pub grant_provider_id: Option<Uuid>,
    pub grant_type: Option<GrantType>,
    pub q: Option<String>,
}

/// A page request: 1-based page number and page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: usize,
    pub per_page: usize,
}

/// One page of results plus the total over all pages.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
}

impl<T> Page<T> {
    pub fn total_pages(&self) -> usize {
        self.total.div_ceil(self.per_page.max(1))
    }
}

fn paginate<T: Clone>(all: &[T], req: PageRequest) -> Page<T> {
    let start = req.page.saturating_sub(1).saturating_mul(req.per_page);
    let items = all.iter().skip(start).take(req.per_page).cloned().collect();
    Page {
        items,
        total: all.len(),
        page: req.page,
        per_page: req.per_page,
    }
}

/// Why a filter value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("{param}: unknown {what} {id}")]
    Unknown {
        param: &'static str,
        what: &'static str,
        id: Uuid,
    },
    #[error("{param}: {id} is outside the partner's scope")]
    OutOfScope { param: &'static str, id: Uuid },
}

/// Region and area filters resolved to per-record masks.
pub(crate) struct ResolvedFilter {
    regions: Option<Vec<bool>>,
    areas: Option<Vec<bool>>,
    provider: Option<Idx>,
    grant_type: Option<GrantType>,
}

impl ResolvedFilter {
    pub(crate) fn new(
        cat: &Catalogue,
        scope: &ResolvedScope,
        f: &GrantFilter,
    ) -> std::result::Result<Self, FilterError> {
        let mut regions = Vec::new();
        for id in &f.region_ids {
            let r = cat.region_idx(id).ok_or(FilterError::Unknown {
                param: "region_ids[]",
                what: "region",
                id: *id,
            })?;
            if !scope.allows_region(r) {
                return Err(FilterError::OutOfScope {
                    param: "region_ids[]",
                    id: *id,
                });
            }
            regions.push(r);
        }
        let mut areas = Vec::new();
        for id in &f.grant_area_ids {
            let a = cat.area_idx(id).ok_or(FilterError::Unknown {
                param: "grant_area_ids[]",
                what: "grant area",
                id: *id,
            })?;
            if !scope.allows_area(a) {
                return Err(FilterError::OutOfScope {
                    param: "grant_area_ids[]",
                    id: *id,
                });
            }
            areas.push(a);
        }
        let provider = match f.grant_provider_id {
            None => None,
            Some(id) => Some(cat.provider_idx(&id).ok_or(FilterError::Unknown {
                param: "grant_provider_id",
                what: "grant provider",
                id,
            })?),
        };
        let region_mask = (!regions.is_empty()).then(|| {
            (0..cat.regions.len() as Idx)
                .map(|x| regions.iter().any(|&f| cat.region_within(x, f)))
                .collect()
        });
        let area_mask = (!areas.is_empty()).then(|| {
            (0..cat.grant_areas.len() as Idx)
                .map(|x| areas.iter().any(|&f| cat.area_within(x, f)))
                .collect()
        });
        Ok(ResolvedFilter {
            regions: region_mask,
            areas: area_mask,
            provider,
            grant_type: f.grant_type,
        })
    }

    pub(crate) fn accepts(&self, cat: &Catalogue, g: Idx) -> bool {
        self.grant_type
            .is_none_or(|t| cat.grants[g as usize].grant_type == t)
            && self
                .provider
                .is_none_or(|p| cat.grant_provider(g) == Some(p))
            && self
                .regions
                .as_ref()
                .is_none_or(|m| cat.grant_regions(g).iter().any(|&r| m[r as usize]))
            && self
                .areas
                .as_ref()
                .is_none_or(|m| cat.grant_areas(g).iter().any(|&a| m[a as usize]))
    }
}

impl Engine {
    /// Lists the grants visible in `scope` that pass `filter`, one page at a time.
    /// With `q`, each item carries its relevance score.
    pub fn list_grants(
        &self,
        scope: &ResolvedScope,
        filter: &GrantFilter,
        page: PageRequest,
    ) -> Result<Page<Idx>> {
        self.list_grants_where(scope, filter, page, |_| true)
    }

    /// [`Engine::list_grants`] with one more condition of the caller's (e.g. the
    /// server's filter on a partner's own qualification results), applied before paging.
    pub fn list_grants_where(
        &self,
        scope: &ResolvedScope,
        filter: &GrantFilter,
        page: PageRequest,
        also: impl Fn(Idx) -> bool,
    ) -> Result<Page<Idx>> {
        let cat = &self.catalogue;
        let resolved = ResolvedFilter::new(cat, scope, filter)?;
        let keep = |g: Idx| scope.is_visible(g) && resolved.accepts(cat, g) && also(g);
        let all: Vec<Idx> = match filter.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
            Some(q) => self
                .search
                .search(q)?
                .into_iter()
                .map(|(g, _)| g)
                .filter(|&g| keep(g))
                .collect(),
            None => self
                .title_order
                .iter()
                .copied()
                .filter(|&g| keep(g))
                .collect(),
        };
        Ok(paginate(&all, page))
    }

    /// Number of grants visible in `scope` that satisfy `pred`.
    pub fn count_visible(&self, scope: &ResolvedScope, pred: impl Fn(Idx) -> bool) -> usize {
        scope.visible_grants().filter(|&g| pred(g)).count()
    }

    /// Providers matching a name query and type, ordered by name.
    pub fn list_providers(
        &self,
        q: Option<&str>,
        provider_type: Option<&str>,
        page: PageRequest,
    ) -> Page<Idx> {
        let cat = &self.catalogue;
        let needle = q.map(fold_name).filter(|n| !n.is_empty());
        let mut all: Vec<Idx> = (0..cat.grant_providers.len() as Idx)
            .filter(|&p| {
                let gp = &cat.grant_providers[p as usize];
                provider_type.is_none_or(|t| gp.provider_type == t)
                    && needle.as_ref().is_none_or(|n| {
                        fold_name(&gp.name).contains(n.as_str())
                            || gp.slug.contains(&n.replace(' ', "-"))
                    })
            })
            .collect();
        all.sort_by_cached_key(|&p| (fold_name(&cat.grant_providers[p as usize].name), p));
        paginate(&all, page)
    }

    /// Looks a grant up by UUID or slug.
    pub fn find_grant(&self, id_or_slug: &str) -> Option<Idx> {
        match Uuid::parse_str(id_or_slug) {
            Ok(id) => self.catalogue.grant_idx(&id),
            Err(_) => self.catalogue.grant_by_slug(id_or_slug),
        }
    }

    /// Looks a provider up by UUID or slug.
    pub fn find_provider(&self, id_or_slug: &str) -> Option<Idx> {
        match Uuid::parse_str(id_or_slug) {
            Ok(id) => self.catalogue.provider_idx(&id),
            Err(_) => self.catalogue.provider_by_slug(id_or_slug),
        }
    }
}
