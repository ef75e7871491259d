//! The candidates of a ranking: the hard criteria every result passes, and the shortlist
//! that reaches the rule stage (the best by cosine, the best by BM25, the best for each
//! need).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering};

use chrono::NaiveDate;
use rayon::prelude::*;

use crate::catalogue::{Catalogue, Idx};
use crate::profile::ResolvedProfile;
use crate::scope::ResolvedScope;
use crate::vectors::{dot, GrantVectors};

use super::{RankRequest, NEED_SHORTLIST, OPEN_SHORTLIST, SHORTLIST};

/// True when grant `g` passes the profile's hard criteria (filters, non-profit rule,
/// deadline) on `today`. Scope is checked separately.
pub fn passes_filters(
    cat: &Catalogue,
    profile: &ResolvedProfile,
    g: Idx,
    today: NaiveDate,
) -> bool {
    Candidates {
        cat,
        profile,
        today,
    }
    .accepts(g)
}

pub(crate) struct Candidates<'a> {
    cat: &'a Catalogue,
    profile: &'a ResolvedProfile,
    today: NaiveDate,
}

impl Candidates<'_> {
    /// The hard criteria: filters, non-profit rule, deadline.
    fn accepts(&self, g: Idx) -> bool {
        let cat = self.cat;
        let p = self.profile;
        let grant = &cat.grants[g as usize];
        if !grant.is_open_on(self.today) {
            return false;
        }
        if p.is_non_profit == Some(false) && grant.non_profit_only == Some(true) {
            return false;
        }
        let related_region = |r: Idx| {
            p.regions
                .iter()
                .any(|&o| cat.region_within(r, o) || cat.region_within(o, r))
        };
        if !p.regions.is_empty() && !cat.grant_regions(g).iter().any(|&r| related_region(r)) {
            return false;
        }
        if !p.grant_areas.is_empty()
            && !cat.grant_areas(g).iter().any(|&a| {
                p.grant_areas
                    .iter()
                    .any(|&o| cat.area_within(a, o) || cat.area_within(o, a))
            })
        {
            return false;
        }
        // Only eligibility stated by the source excludes: grants without eligibility data
        // or with derived (classifier) eligibility stay; unknown is not "no".
        let entities = cat.grant_entities(g);
        if !p.eligible_entities.is_empty()
            && !entities.is_empty()
            && grant.classification.as_deref() != Some("derived")
            && !entities.iter().any(|e| p.eligible_entities.contains(e))
        {
            return false;
        }
        true
    }
}

/// The semantic stage: the `k` candidates — visible in `scope`, passing the profile's
/// hard criteria on `today` — most similar to `query` (L2-normalised), with their exact
/// cosines, best first (ties by catalogue order). See [`GrantVectors::top_k`] for the
/// scan (parallel, compact int8 storage with exact rescoring on large catalogues).
pub fn semantic_top(
    cat: &Catalogue,
    vectors: &GrantVectors,
    scope: &ResolvedScope,
    profile: &ResolvedProfile,
    query: &[f32],
    today: NaiveDate,
    k: usize,
) -> Vec<(Idx, f32)> {
    let cands = Candidates {
        cat,
        profile,
        today,
    };
    vectors.top_k(query, k, |g| scope.is_visible(g) && cands.accepts(g))
}

/// The shortlist of `req` with each programme's cosine to the query: the [`SHORTLIST`]
/// best candidates by cosine, the [`SHORTLIST`]/2 best by BM25 and the
/// [`NEED_SHORTLIST`] best for each need (exact cosines for all of them).
pub(super) fn shortlist(req: &RankRequest) -> Vec<(Idx, f32)> {
    let RankRequest {
        cat,
        vectors,
        scope,
        profile,
        query,
        lexical,
        today,
        ..
    } = *req;
    let cands = Candidates {
        cat,
        profile,
        today,
    };
    // `top_k` asks only for rows that could enter the result; the scans below ask again
    // for the same rows, so each answer is kept (0 = not asked yet, 1 = yes, 2 = no).
    let known: Vec<AtomicU8> = (0..cat.grants.len()).map(|_| AtomicU8::new(0)).collect();
    let keep = |g: Idx| match known[g as usize].load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let yes = scope.is_visible(g) && cands.accepts(g);
            known[g as usize].store(if yes { 1 } else { 2 }, Ordering::Relaxed);
            yes
        }
    };
    // Semantic stage: the best by cosine among the candidates, and the best for each
    // need (scanned in parallel, merged below in need order) …
    let (mut scored, need_tops) = rayon::join(
        || vectors.top_k(query, SHORTLIST, keep),
        || {
            profile
                .need_vectors
                .par_iter()
                .map(|nv| vectors.top_k(nv, NEED_SHORTLIST, keep))
                .collect::<Vec<_>>()
        },
    );
    // … plus the best by BM25 among the candidates (exact cosines for those too).
    let mut by_lexical: Vec<(Idx, f32)> = lexical.iter().map(|(&g, &l)| (g, l)).collect();
    by_lexical.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut seen: HashSet<Idx> = scored.iter().map(|x| x.0).collect();
    let extra: Vec<(Idx, f32)> = by_lexical
        .into_iter()
        .filter(|&(g, _)| keep(g))
        .take(SHORTLIST / 2)
        .filter(|(g, _)| !seen.contains(g))
        .map(|(g, _)| (g, dot(vectors.row(g as usize), query)))
        .collect();
    scored.extend(extra);
    // … plus the best programmes open to any topic (their texts speak of financing, so
    // their cosines are low; bounded, as a large catalogue may hold thousands).
    if req.options.topic_open_semantic > 0.0 {
        seen.extend(scored.iter().map(|x| x.0));
        let open = vectors.top_k(query, OPEN_SHORTLIST, |g| {
            cat.facts(g).topic_open && !seen.contains(&g) && keep(g)
        });
        scored.extend(open);
    }
    // … plus the best programmes for a measure the profile plans (bounded alike).
    if req.options.measure_semantic > 0.0 && !req.profile.measures.is_empty() {
        seen.extend(scored.iter().map(|x| x.0));
        let planned = &req.profile.measures;
        let measured = vectors.top_k(query, OPEN_SHORTLIST, |g| {
            crate::facts::measure::shared(&cat.facts(g).measures, planned).is_some()
                && !seen.contains(&g)
                && keep(g)
        });
        scored.extend(measured);
    }
    // … plus the best for each need of the profile.
    for top in need_tops {
        seen.extend(scored.iter().map(|x| x.0));
        let more: Vec<(Idx, f32)> = top
            .into_iter()
            .filter(|(g, _)| !seen.contains(g))
            .map(|(g, _)| (g, dot(vectors.row(g as usize), query)))
            .collect();
        scored.extend(more);
    }
    scored
}
