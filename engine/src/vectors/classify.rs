//! Labels of grants whose record does not carry the source's own (`classification:
//! "derived"`): eligible entities and target groups from the applicant facts
//! ([`crate::facts`]: the texts first, then the nearest labelled grants), grant areas from
//! the vote of the nearest labelled grants plus the area lexicon over title and short
//! description ([`crate::facts::areas`]), the remaining target groups from the vote.
//! [`leave_one_out`] measures the method on the labelled grants, each predicted from its
//! texts and the other labelled grants only.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};
use crate::facts::neighbours::{self, Neighbours};
use crate::facts::{self, ApplicantType, Fact};
use crate::records::CatalogueRecords;
use crate::vectors::GrantVectors;

pub use crate::facts::neighbours::{K, THRESHOLD};

/// Which label family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    GrantAreas,
    TargetGroups,
    EligibleEntities,
    ApplicantTypes,
}

impl Family {
    pub const ALL: [Family; 4] = [
        Family::GrantAreas,
        Family::TargetGroups,
        Family::EligibleEntities,
        Family::ApplicantTypes,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::GrantAreas => "grant areas",
            Family::TargetGroups => "target groups",
            Family::EligibleEntities => "eligible entities",
            Family::ApplicantTypes => "applicant types",
        }
    }
}

/// The labels predicted for one grant without its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted {
    pub applicants: Option<Fact<Vec<ApplicantType>>>,
    pub entities: Vec<Idx>,
    pub target_groups: Vec<Idx>,
    pub areas: Vec<Idx>,
}

impl Predicted {
    /// Label indices of a family (applicant types as their position in
    /// [`ApplicantType::ALL`]).
    pub fn family(&self, f: Family) -> Vec<Idx> {
        match f {
            Family::GrantAreas => self.areas.clone(),
            Family::TargetGroups => self.target_groups.clone(),
            Family::EligibleEntities => self.entities.clone(),
            Family::ApplicantTypes => {
                applicant_idx(self.applicants.as_ref().map_or(&[][..], |a| &a.value[..]))
            }
        }
    }
}

fn applicant_idx(types: &[ApplicantType]) -> Vec<Idx> {
    types
        .iter()
        .filter_map(|t| ApplicantType::ALL.iter().position(|a| a == t))
        .map(|i| i as Idx)
        .collect()
}

/// The record's own labels of a family.
pub fn truth(cat: &Catalogue, g: Idx, f: Family) -> Vec<Idx> {
    match f {
        Family::GrantAreas => cat.grant_areas(g).to_vec(),
        Family::TargetGroups => cat.grant_target_groups(g).to_vec(),
        Family::EligibleEntities => cat.grant_entities(g).to_vec(),
        Family::ApplicantTypes => applicant_idx(&facts::labelled_applicants(cat, g)),
    }
}

/// Entities of applicant types, as far as the catalogue has their legal forms.
pub fn entities_of(cat: &Catalogue, types: &[ApplicantType]) -> Vec<Idx> {
    let mut out: Vec<Idx> = types
        .iter()
        .flat_map(|t| t.entity_codes())
        .filter_map(|code| {
            cat.eligible_entities
                .iter()
                .position(|e| e.code == *code)
                .map(|i| i as Idx)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn applicant_group(cat: &Catalogue, t: Idx) -> bool {
    let code = &cat.target_groups[t as usize].code;
    ApplicantType::ALL
        .iter()
        .any(|a| a.target_group_code() == code)
}

/// Predicts the labels of `g` from its texts and the labelled grants other than `g`.
pub fn predict(cat: &Catalogue, vectors: &GrantVectors, labelled: &[Idx], g: Idx) -> Predicted {
    predict_from(cat, vectors, labelled, g, vectors.row(g as usize))
}

/// [`predict`] with the neighbours of the vector `v` of grant `g`.
fn predict_from(
    cat: &Catalogue,
    vectors: &GrantVectors,
    labelled: &[Idx],
    g: Idx,
    v: &[f32],
) -> Predicted {
    let near = Neighbours::of_vector(vectors, labelled, g, v);
    let near = (!near.is_empty()).then_some(near);
    let applicants = facts::predicted_applicants(cat, near.as_ref(), g);
    let types = applicants.as_ref().map_or(&[][..], |a| &a.value[..]);
    let mut target_groups: Vec<Idx> = types
        .iter()
        .filter_map(|t| {
            cat.target_groups
                .iter()
                .position(|x| x.code == t.target_group_code())
                .map(|i| i as Idx)
        })
        .collect();
    let mut areas = Vec::new();
    if let Some(near) = &near {
        target_groups.extend(
            near.vote(|o| cat.grant_target_groups(o).to_vec())
                .into_iter()
                .filter(|&t| !applicant_group(cat, t)),
        );
        areas = near.vote(|o| cat.grant_areas(o).to_vec());
    }
    // Grant areas: the neighbours' vote plus the area lexicon over the grant's own title
    // and short description.
    areas.extend(facts::areas::lexicon_areas(cat, g));
    areas.sort_unstable();
    areas.dedup();
    target_groups.sort_unstable();
    target_groups.dedup();
    Predicted {
        entities: entities_of(cat, types),
        applicants,
        target_groups,
        areas,
    }
}

/// Replaces the labels of every grant marked `derived` by the prediction. Grants marked
/// `labelled` or unmarked keep theirs. Returns how many grants were reassigned.
pub fn reassign_derived(
    records: &mut CatalogueRecords,
    cat: &Catalogue,
    vectors: &GrantVectors,
) -> usize {
    let labelled = neighbours::labelled(cat);
    if labelled.is_empty() {
        return 0;
    }
    let ids = |family: Family, idxs: &[Idx]| -> Vec<Uuid> {
        idxs.iter()
            .map(|&i| match family {
                Family::GrantAreas => cat.grant_areas[i as usize].id,
                Family::TargetGroups => cat.target_groups[i as usize].id,
                _ => cat.eligible_entities[i as usize].id,
            })
            .collect()
    };
    let mut n = 0;
    for (g, grant) in records.grants.iter_mut().enumerate() {
        if grant.classification.as_deref() != Some("derived") {
            continue;
        }
        let p = predict(cat, vectors, &labelled, g as Idx);
        grant.grant_area_ids = ids(Family::GrantAreas, &p.areas);
        grant.target_group_ids = ids(Family::TargetGroups, &p.target_groups);
        grant.eligible_entity_ids = ids(Family::EligibleEntities, &p.entities);
        n += 1;
    }
    n
}

/// Micro-averaged precision, recall and F1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub grants: usize,
}

/// Counts of true positives, false positives and false negatives.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    pub grants: usize,
}

impl Counts {
    pub fn add<T: PartialEq>(&mut self, pred: &[T], truth: &[T]) {
        self.tp += pred.iter().filter(|l| truth.contains(l)).count();
        self.fp += pred.iter().filter(|l| !truth.contains(l)).count();
        self.fn_ += truth.iter().filter(|l| !pred.contains(l)).count();
        self.grants += 1;
    }

    pub fn scores(&self) -> Scores {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let precision = ratio(self.tp, self.tp + self.fp);
        let recall = ratio(self.tp, self.tp + self.fn_);
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        Scores {
            precision,
            recall,
            f1,
            grants: self.grants,
        }
    }
}

/// The fixed split of the labelled grants (chosen before tuning): `true` for the
/// held-out half (odd first byte of the SHA-256 of the slug).
pub fn is_heldout(slug: &str) -> bool {
    Sha256::digest(slug.as_bytes())[0] % 2 == 1
}

/// One leave-one-out prediction per labelled grant with a label of some family: its
/// neighbours among the other labelled grants (`vectors`, as stored) of its vector in
/// `queries`. A labelled grant's stored vector embeds its grant areas
/// ([`crate::vectors::passage_text`]), so `queries` must hold the vectors of the grants'
/// own texts ([`crate::vectors::grant_text`]) — then each grant is predicted as a grant
/// without labels is at import, and its own labels cannot vote for themselves.
pub fn leave_one_out_predictions(
    cat: &Catalogue,
    vectors: &GrantVectors,
    queries: &GrantVectors,
) -> Vec<(Idx, Predicted)> {
    use rayon::prelude::*;
    let labelled = neighbours::labelled(cat);
    labelled
        .par_iter()
        .filter(|&&g| Family::ALL.iter().any(|&f| !truth(cat, g, f).is_empty()))
        .map(|&g| {
            (
                g,
                predict_from(cat, vectors, &labelled, g, queries.row(g as usize)),
            )
        })
        .collect()
}

/// Leave-one-out scores per family over the predictions accepted by `keep`.
pub fn score(
    cat: &Catalogue,
    predictions: &[(Idx, Predicted)],
    keep: impl Fn(Idx) -> bool,
) -> Vec<(Family, Scores)> {
    Family::ALL
        .into_iter()
        .map(|family| {
            let mut c = Counts::default();
            for (g, p) in predictions.iter().filter(|(g, _)| keep(*g)) {
                c.add(&p.family(family), &truth(cat, *g, family));
            }
            (family, c.scores())
        })
        .collect()
}

/// Leave-one-out evaluation on all labelled grants (`queries` as in
/// [`leave_one_out_predictions`]).
pub fn leave_one_out(
    cat: &Catalogue,
    vectors: &GrantVectors,
    queries: &GrantVectors,
) -> Vec<(Family, Scores)> {
    score(
        cat,
        &leave_one_out_predictions(cat, vectors, queries),
        |_| true,
    )
}
