//! Embedding-based assignment of grant areas, target groups and eligible entities for
//! grants whose labels were derived rather than given by the source.
//!
//! Method: k-nearest neighbours over the grants with source labels
//! (`classification: "labelled"`). A label is assigned when the similarity-weighted
//! share of the [`K`] nearest labelled grants carrying it reaches [`THRESHOLD`]. Both
//! constants were fixed before measuring; [`leave_one_out`] measures the method on the
//! labelled grants themselves, each predicted from the others only.

use std::collections::HashMap;

use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};
use crate::records::CatalogueRecords;
use crate::vectors::{dot, GrantVectors};

/// Neighbours consulted.
pub const K: usize = 10;
/// Weighted share of neighbours that must carry a label.
pub const THRESHOLD: f32 = 0.4;

/// Which label family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    GrantAreas,
    TargetGroups,
    EligibleEntities,
}

impl Family {
    pub const ALL: [Family; 3] = [
        Family::GrantAreas,
        Family::TargetGroups,
        Family::EligibleEntities,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::GrantAreas => "grant areas",
            Family::TargetGroups => "target groups",
            Family::EligibleEntities => "eligible entities",
        }
    }

    fn labels(self, cat: &Catalogue, g: Idx) -> &[Idx] {
        match self {
            Family::GrantAreas => cat.grant_areas(g),
            Family::TargetGroups => cat.grant_target_groups(g),
            Family::EligibleEntities => cat.grant_entities(g),
        }
    }
}

fn is_labelled(cat: &Catalogue, g: Idx) -> bool {
    cat.grants[g as usize].classification.as_deref() == Some("labelled")
}

/// Predicts the labels of `g` from the labelled grants other than `g`.
fn predict(
    cat: &Catalogue,
    vectors: &GrantVectors,
    labelled: &[Idx],
    g: Idx,
) -> HashMap<Family, Vec<Idx>> {
    let v = vectors.row(g as usize);
    let mut near: Vec<(Idx, f32)> = labelled
        .iter()
        .filter(|&&o| o != g)
        .map(|&o| (o, dot(v, vectors.row(o as usize))))
        .collect();
    let k = K.min(near.len());
    if k == 0 {
        return HashMap::new();
    }
    near.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    near.truncate(k);
    let total: f32 = near
        .iter()
        .map(|(_, s)| s.max(0.0))
        .sum::<f32>()
        .max(f32::EPSILON);
    Family::ALL
        .into_iter()
        .map(|family| {
            let mut votes: HashMap<Idx, f32> = HashMap::new();
            for &(o, s) in &near {
                for &l in family.labels(cat, o) {
                    *votes.entry(l).or_default() += s.max(0.0);
                }
            }
            let mut chosen: Vec<Idx> = votes
                .into_iter()
                .filter(|(_, w)| w / total >= THRESHOLD)
                .map(|(l, _)| l)
                .collect();
            chosen.sort_unstable();
            (family, chosen)
        })
        .collect()
}

/// Replaces the labels of every grant marked `derived` by the kNN prediction. Grants
/// marked `labelled` or unmarked keep theirs. Returns how many grants were reassigned.
pub fn reassign_derived(
    records: &mut CatalogueRecords,
    cat: &Catalogue,
    vectors: &GrantVectors,
) -> usize {
    let labelled: Vec<Idx> = (0..cat.grants.len() as Idx)
        .filter(|&g| is_labelled(cat, g))
        .collect();
    if labelled.is_empty() {
        return 0;
    }
    let ids = |family: Family, idxs: &[Idx]| -> Vec<Uuid> {
        idxs.iter()
            .map(|&i| match family {
                Family::GrantAreas => cat.grant_areas[i as usize].id,
                Family::TargetGroups => cat.target_groups[i as usize].id,
                Family::EligibleEntities => cat.eligible_entities[i as usize].id,
            })
            .collect()
    };
    let mut n = 0;
    for (g, grant) in records.grants.iter_mut().enumerate() {
        if grant.classification.as_deref() != Some("derived") {
            continue;
        }
        let p = predict(cat, vectors, &labelled, g as Idx);
        grant.grant_area_ids = ids(Family::GrantAreas, &p[&Family::GrantAreas]);
        grant.target_group_ids = ids(Family::TargetGroups, &p[&Family::TargetGroups]);
        grant.eligible_entity_ids = ids(Family::EligibleEntities, &p[&Family::EligibleEntities]);
        n += 1;
    }
    n
}

/// Micro-averaged precision, recall and F1 of one label family.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub grants: usize,
}

/// Leave-one-out evaluation on the labelled grants: each is predicted from the others.
pub fn leave_one_out(cat: &Catalogue, vectors: &GrantVectors) -> Vec<(Family, Scores)> {
    let labelled: Vec<Idx> = (0..cat.grants.len() as Idx)
        .filter(|&g| is_labelled(cat, g))
        .collect();
    let predictions: Vec<(Idx, HashMap<Family, Vec<Idx>>)> = labelled
        .iter()
        .map(|&g| (g, predict(cat, vectors, &labelled, g)))
        .collect();
    Family::ALL
        .into_iter()
        .map(|family| {
            let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
            for (g, p) in &predictions {
                let truth = family.labels(cat, *g);
                let pred = &p[&family];
                tp += pred.iter().filter(|l| truth.contains(l)).count();
                fp += pred.iter().filter(|l| !truth.contains(l)).count();
                fn_ += truth.iter().filter(|l| !pred.contains(l)).count();
            }
            let precision = if tp + fp == 0 {
                0.0
            } else {
                tp as f64 / (tp + fp) as f64
            };
            let recall = if tp + fn_ == 0 {
                0.0
            } else {
                tp as f64 / (tp + fn_) as f64
            };
            let f1 = if precision + recall == 0.0 {
                0.0
            } else {
                2.0 * precision * recall / (precision + recall)
            };
            (
                family,
                Scores {
                    precision,
                    recall,
                    f1,
                    grants: labelled.len(),
                },
            )
        })
        .collect()
}
