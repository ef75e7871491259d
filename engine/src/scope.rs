//! Partner scopes: which grants a partner may see.
//!
//! A partner may be restricted to regions and/or grant areas. A grant is visible when
//! one of its regions is *related* to an assigned region — equal to it, inside it, or
//! containing it (a Bayern partner sees national and EU programmes) — and likewise for
//! grant areas. An empty list means "no restriction" for that dimension.

use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};

/// A partner's assigned regions and grant areas (empty = unrestricted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub region_ids: Vec<Uuid>,
    pub grant_area_ids: Vec<Uuid>,
}

impl Scope {
    pub fn unrestricted() -> Self {
        Self::default()
    }
}

/// A scope resolved against one catalogue: per-region, per-area and per-grant masks.
#[derive(Debug, Clone)]
pub struct ResolvedScope {
    region_related: Option<Vec<bool>>,
    area_related: Option<Vec<bool>>,
    visible: Vec<bool>,
    visible_count: usize,
}

fn related_mask(n: usize, assigned: &[Idx], within: impl Fn(Idx, Idx) -> bool) -> Vec<bool> {
    (0..n as Idx)
        .map(|x| assigned.iter().any(|&s| within(x, s) || within(s, x)))
        .collect()
}

impl ResolvedScope {
    /// Resolves a scope. Ids that are not in the catalogue (e.g. removed by a later
    /// import) match nothing; they never widen the scope.
    pub fn new(cat: &Catalogue, scope: &Scope) -> Self {
        let regions: Vec<Idx> = scope
            .region_ids
            .iter()
            .filter_map(|id| cat.region_idx(id))
            .collect();
        let areas: Vec<Idx> = scope
            .grant_area_ids
            .iter()
            .filter_map(|id| cat.area_idx(id))
            .collect();
        let region_related = (!scope.region_ids.is_empty())
            .then(|| related_mask(cat.regions.len(), &regions, |a, b| cat.region_within(a, b)));
        let area_related = (!scope.grant_area_ids.is_empty())
            .then(|| related_mask(cat.grant_areas.len(), &areas, |a, b| cat.area_within(a, b)));
        let visible: Vec<bool> = (0..cat.grants.len() as Idx)
            .map(|g| {
                region_related
                    .as_ref()
                    .is_none_or(|m| cat.grant_regions(g).iter().any(|&r| m[r as usize]))
                    && area_related
                        .as_ref()
                        .is_none_or(|m| cat.grant_areas(g).iter().any(|&a| m[a as usize]))
            })
            .collect();
        let visible_count = visible.iter().filter(|v| **v).count();
        ResolvedScope {
            region_related,
            area_related,
            visible,
            visible_count,
        }
    }

    /// The scope of a partner without restrictions.
    pub fn unrestricted(cat: &Catalogue) -> Self {
        Self::new(cat, &Scope::unrestricted())
    }

    pub fn is_visible(&self, grant: Idx) -> bool {
        self.visible[grant as usize]
    }

    pub fn visible_count(&self) -> usize {
        self.visible_count
    }

    /// May this partner filter by this region? (related to an assigned region)
    pub fn allows_region(&self, r: Idx) -> bool {
        self.region_related.as_ref().is_none_or(|m| m[r as usize])
    }

    /// May this partner filter by this grant area?
    pub fn allows_area(&self, a: Idx) -> bool {
        self.area_related.as_ref().is_none_or(|m| m[a as usize])
    }

    /// Visible grants, in catalogue order.
    pub fn visible_grants(&self) -> impl Iterator<Item = Idx> + '_ {
        self.visible
            .iter()
            .enumerate()
            .filter(|(_, v)| **v)
            .map(|(i, _)| i as Idx)
    }
}
