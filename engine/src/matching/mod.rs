//! Ranking grants for an organisation profile.
//!
//! 1. Candidates (`candidates`): visible in the partner's scope, passing the profile's
//!    AND-combined filters (hierarchy-aware), not non-profit-only for a for-profit
//!    organisation, not expired.
//! 2. Shortlist (`candidates`, [`semantic_top`]): cosine of the query vector with every
//!    candidate (rayon over blocks; int8 scan with exact f32 rescoring on large
//!    catalogues); the best [`SHORTLIST`] by cosine, the best [`SHORTLIST`]/2 by BM25,
//!    the best [`NEED_SHORTLIST`] for each need and the best [`OPEN_SHORTLIST`]
//!    programmes open to any topic go on.
//! 3. Rule stage (`score`): keyword and target-group overlap, region specificity,
//!    eligibility, deadline and budget fit, combined with the semantic score by
//!    [`MatchWeights`], calibrated to 0–100, capped by failed checks and mapped to a
//!    category. Ties break by the weighted total, cosine, then grant id.
//! 4. Reasons (`reason`): two or three sentences of facts for each returned match.
//!
//! [`rank`] takes one [`RankRequest`]; [`crate::Engine::match_profile`] builds it.

use std::collections::HashMap;

use chrono::NaiveDate;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::catalogue::{Catalogue, Idx};
use crate::profile::ResolvedProfile;
use crate::scope::ResolvedScope;
use crate::vectors::GrantVectors;

mod candidates;
mod reason;
mod score;

pub use candidates::{passes_filters, semantic_top};
pub use score::{
    applicant_fit, too_large_for, too_small_for, KIND_MISFIT_FACTOR, SME_EMPLOYEE_LIMIT,
};

/// Candidates that reach the rule stage.
pub const SHORTLIST: usize = 200;
/// Candidates added for each need of a profile.
pub const NEED_SHORTLIST: usize = 30;
/// Programmes open to any topic ([`crate::facts::areas::topic_open`]) added by cosine.
pub const OPEN_SHORTLIST: usize = 100;
/// Results returned at most.
pub const MAX_RESULTS: usize = 25;

/// Weights of the score components (relative; normalised by their sum).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchWeights {
    /// Semantic similarity of profile and grant text.
    pub semantic: f32,
    /// Lexical fit: BM25 of the profile text (normalised to the best candidate), averaged
    /// with the share of explicit keywords found in the grant text.
    pub keyword: f32,
    /// Region specificity: a programme of the organisation's own Land beats a national one.
    pub region: f32,
    /// Overlap of target groups.
    pub target_group: f32,
    /// Who may apply, programme kind, non-profit and funding-type fit. Default 0.15
    /// (0.05 until session 22: a stated applicant fit and a wanted instrument lift the
    /// financing programmes partners' judges count, Recall@25 on the tuning sets +0.015
    /// on average at equal nDCG@10; see the README).
    pub eligibility: f32,
    /// Open deadline.
    pub deadline: f32,
    /// Project budget within the grant's maximum amount.
    pub budget: f32,
}

impl Default for MatchWeights {
    fn default() -> Self {
        MatchWeights {
            semantic: 0.45,
            keyword: 0.35,
            region: 0.15,
            target_group: 0.04,
            eligibility: 0.15,
            deadline: 0.02,
            budget: 0.02,
        }
    }
}

impl MatchWeights {
    /// The weighted mean of the components (weights normalised by their sum).
    pub fn mean(&self, c: &Components) -> f32 {
        let sum = self.semantic
            + self.keyword
            + self.region
            + self.target_group
            + self.eligibility
            + self.deadline
            + self.budget;
        (self.semantic * c.semantic
            + self.keyword * c.keyword
            + self.region * c.region
            + self.target_group * c.target_group
            + self.eligibility * c.eligibility
            + self.deadline * c.deadline
            + self.budget * c.budget)
            / sum.max(f32::EPSILON)
    }
}

/// Calibration of raw cosines: e5 cosines sit in a narrow band, so the semantic
/// component maps `[low, high]` linearly onto `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Calibration {
    pub cosine_low: f32,
    pub cosine_high: f32,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            cosine_low: 0.78,
            cosine_high: 0.88,
        }
    }
}

/// All tunable options of a matching run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchOptions {
    pub weights: MatchWeights,
    pub calibration: Calibration,
    /// Share of the best-served need's cosine in the semantic score (0 = the whole
    /// profile only). Above 0 the needs ([`ResolvedProfile::needs`]: the topic words, else
    /// the sentences) are embedded in the profile's batch, each adds its nearest
    /// candidates, and every result names its `matched_need`. Default 0.4 (tuning half of
    /// the development set, see the README).
    pub need_weight: f32,
    /// Share of each need's mean cosine over the shortlist, relative to the needs'
    /// average, taken off its cosines before the best-served need is chosen, so that a
    /// need close to many programmes (children, schools, staff) does not serve most
    /// programmes best and fill the list. 0 = off, the default: 0.5 raised every tuning
    /// figure but not the held-out ones (development held-out 0.612 → 0.603, English
    /// 0.449 → 0.404; fresh4 0.322 → 0.324), see the README.
    pub need_centering: f32,
    /// Factor on the keyword weight for profiles written in English (by their words,
    /// not their `locale`): the programme texts are German, so only the glossary's
    /// German terms of the profile ([`crate::glossary`]) match them lexically. Default
    /// 1.0, the German weight (0.5 until session 17; with today's glossary 1.0 ranks
    /// better on the tuning profiles, see the README).
    pub keyword_factor_en: f32,
    /// Weight of the German topic vector of an English profile (the embedded
    /// `german_terms`, see [`crate::glossary`]) added to its query vector; 0 = off.
    pub glossary_weight: f32,
    /// Lowest semantic component of a programme open to any topic
    /// ([`crate::facts::areas::topic_open`]: company financing, founding, regional
    /// economic promotion, topic-open innovation) whose applicants include the
    /// organisation and whose kind suits it: its topic fits by definition, though its
    /// text, about financing, is far from the profile's. 0 = off; default 0.5 (tuning
    /// sets, see the README). Such programmes always reach the rule stage.
    pub topic_open_semantic: f32,
    /// The same floor for such a programme whose funding type is a repayable or equity
    /// instrument (loan, guarantee, equity) the profile asks for ("Wir suchen …
    /// zinsgünstige Darlehen und Bürgschaften"): a financing programme the organisation
    /// may use, of the instrument it seeks; and for such a programme that is a research
    /// call (ZIM) when the organisation is a company that names its own research and
    /// development and does not found ([`crate::profile::ResolvedProfile::does_rd`]).
    /// The higher of the two floors applies; default 0.7 (tuning sets, see the README).
    pub topic_open_wanted_semantic: f32,
    /// Lowest semantic component of a programme for an investment measure the profile
    /// plans ([`crate::facts::measure`]: renewable power, the energy efficiency of an
    /// existing building) whose applicants include the organisation and whose kind
    /// suits it: its text, about the instrument, is far from a profile that plans the
    /// measure among other things. 0 = off; default 0.8 (tuning sets, see the README).
    pub measure_semantic: f32,
    /// The region component of a nationwide programme for an organisation in one of its
    /// Länder (a programme of the organisation's own Land has 1.0). Default 0.6 (0.7
    /// until session 31; tuning sets, see the README).
    pub national_region: f32,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            weights: MatchWeights::default(),
            calibration: Calibration::default(),
            keyword_factor_en: 1.0,
            need_weight: 0.4,
            need_centering: 0.0,
            glossary_weight: crate::glossary::GERMAN_TERMS_WEIGHT,
            topic_open_semantic: 0.5,
            topic_open_wanted_semantic: 0.7,
            measure_semantic: 0.8,
            national_region: 0.6,
        }
    }
}

/// The score components of one match, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Components {
    pub cosine: f32,
    pub semantic: f32,
    pub keyword: f32,
    pub region: f32,
    pub target_group: f32,
    pub eligibility: f32,
    pub deadline: f32,
    pub budget: f32,
}

/// The score of a match whose applicant, region, funding-type or non-profit check failed,
/// from its calibrated score: halved ([`FAILED_CHECK_FACTOR`]) and capped at
/// [`FAILED_CHECK_CAP`].
pub fn excluded_score(calibrated: u8) -> u8 {
    ((f32::from(calibrated) * FAILED_CHECK_FACTOR).round() as u8).min(FAILED_CHECK_CAP)
}

/// Category of a score, the spec's bands: ≥ 90 very suitable (excellent), 70–89
/// partially suitable (good), 50–69 conditionally suitable (moderate), below 50 not
/// suitable (low).
pub fn category(score: u8) -> MatchCategory {
    match score {
        90..=u8::MAX => MatchCategory::VerySuitable,
        70..=89 => MatchCategory::PartiallySuitable,
        50..=69 => MatchCategory::ConditionallySuitable,
        _ => MatchCategory::NotSuitable,
    }
}

/// Band of `relevance_score` (the spec's bands): ≥ 90 very_suitable, 70–89
/// partially_suitable, 50–69 conditionally_suitable, below 50 not_suitable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum MatchCategory {
    VerySuitable,
    PartiallySuitable,
    ConditionallySuitable,
    NotSuitable,
}

impl MatchCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::VerySuitable => "very_suitable",
            Self::PartiallySuitable => "partially_suitable",
            Self::ConditionallySuitable => "conditionally_suitable",
            Self::NotSuitable => "not_suitable",
        }
    }
}

/// Highest score of a match whose applicant, region, funding-type or non-profit check
/// failed: always below the `conditionally_suitable` band.
pub const FAILED_CHECK_CAP: u8 = 45;
/// Factor on the calibrated score of such a match before the cap: it is pushed down hard,
/// below the programmes that fit at all, and appears only when little else does
/// (tuning half of the development set: Recall@25 0.466 → 0.484, nDCG@10 unchanged).
pub const FAILED_CHECK_FACTOR: f32 = 0.5;
/// Highest score of a match with any failed check, only moderate topic fit, or a
/// research call for an organisation that does no research: below the `very_suitable`
/// band.
pub const NOT_EXCELLENT_CAP: u8 = 89;
/// Semantic component a match needs for the `very_suitable` band.
pub const EXCELLENT_SEMANTIC: f32 = 0.6;

/// Outcome of one criterion for one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = CheckOutcome))]
pub enum Check {
    Pass,
    Fail,
    #[default]
    Unknown,
}

/// Per-criterion checks of a match. `pass`/`fail` only on facts stated by the record or
/// read from the programme's text; what embeddings guessed stays `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
// `default`: results stored before a check existed read it as `unknown`.
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = MatchChecks))]
pub struct Checks {
    /// The programme's region is the organisation's region or contains it: `pass`; it is
    /// another region than the one the profile's texts place the organisation in (a
    /// profile without `regions`, "Bäckerei in Leipzig"): `fail`; `unknown` when the
    /// profile names and locates no region, or for a programme of a part of its region.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub region: Check,
    /// The organisation's applicant type is among the programme's applicants.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub applicant: Check,
    /// A non-profit restriction of the programme is met.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub non_profit: Check,
    /// The programme's funding type: `fail` when the profile rules it out, `pass` when the
    /// profile asks for it or rules out only others, else `unknown`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub funding_type: Check,
    /// The programme is open (deadline ahead or ongoing).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub deadline: Check,
    /// The project budget is within the programme's maximum amount.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub budget: Check,
}

impl Checks {
    /// A criterion that excludes the programme for this organisation failed.
    pub fn excluding_failure(&self) -> bool {
        [
            self.region,
            self.applicant,
            self.funding_type,
            self.non_profit,
        ]
        .contains(&Check::Fail)
    }

    pub fn any_failure(&self) -> bool {
        self.excluding_failure() || self.budget == Check::Fail || self.deadline == Check::Fail
    }
}

/// One ranked grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    pub grant: Idx,
    pub rank: usize,
    pub relevance_score: u8,
    pub match_category: MatchCategory,
    pub match_reason: String,
    pub components: Components,
    /// Weighted mean of the components before calibration (orders ties of the clamped
    /// score: a Land programme at 100 still beats a national one at 100).
    pub total: f32,
    /// Keywords of the profile found in the grant text (facts for the reason).
    pub matched_keywords: Vec<String>,
    /// Per-criterion checks.
    pub checks: Checks,
    /// The profile's need this programme serves best (when the profile has several).
    pub matched_need: Option<String>,
    /// A measure the profile plans that the programme funds for organisations like it
    /// ([`crate::facts::measure`]); its semantic component is at least
    /// [`MatchOptions::measure_semantic`].
    #[serde(default)]
    pub planned_measure: Option<crate::facts::measure::Measure>,
}

/// How a grant relates to the profile's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionFit {
    /// A programme of (or inside) the organisation's own region.
    Local(Idx),
    /// A programme of a larger area containing the organisation's region.
    Wider(Idx),
    /// A programme for a part (the first) of the organisation's wider region (the second).
    Inside(Idx, Idx),
    /// A programme for another region (the first) than the one the profile's texts place
    /// the organisation in (the second).
    Elsewhere(Idx, Idx),
    /// The profile names no region.
    Unspecified,
}

/// One ranking: the catalogue and its vectors, the partner's scope, the resolved profile
/// with its query vector (L2-normalised) and the BM25 scores of its text (grant → score,
/// normalised here), the options and the day the deadlines are checked on.
#[derive(Clone, Copy)]
pub struct RankRequest<'a> {
    pub cat: &'a Catalogue,
    pub vectors: &'a GrantVectors,
    pub scope: &'a ResolvedScope,
    pub profile: &'a ResolvedProfile,
    pub query: &'a [f32],
    pub lexical: &'a HashMap<Idx, f32>,
    pub options: &'a MatchOptions,
    pub today: NaiveDate,
}

/// Ranks the shortlist of `req` (see the module overview) and returns the best `limit`
/// with their ranks and reasons (the API asks for [`MAX_RESULTS`]; a larger `limit`
/// returns every shortlisted programme, for offline tuning).
pub fn rank(req: &RankRequest, limit: usize) -> Vec<Match> {
    let shortlist = candidates::shortlist(req);
    let scorer = score::Scorer::new(req, &shortlist);
    let mut results: Vec<Match> = shortlist
        .par_iter()
        .enumerate()
        .map(|(at, &(g, cosine))| scorer.score(at, g, cosine))
        .collect();
    let cat = req.cat;
    results.sort_by(|a, b| {
        b.relevance_score
            .cmp(&a.relevance_score)
            .then(b.total.total_cmp(&a.total))
            .then(b.components.cosine.total_cmp(&a.components.cosine))
            .then(
                cat.grants[a.grant as usize]
                    .id
                    .cmp(&cat.grants[b.grant as usize].id),
            )
    });
    results.truncate(limit);
    for (i, m) in results.iter_mut().enumerate() {
        m.rank = i + 1;
        let (_, fit) = score::region_fit(cat, req.profile, m.grant, req.options.national_region);
        m.match_reason = reason::explain(cat, req.profile, m, fit, req.today);
    }
    results
}
