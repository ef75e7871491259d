//! The nearest labelled grants of a grant in embedding space, and their vote.
//!
//! Method: the [`K`] labelled grants (`classification` not `derived`) most similar to the
//! grant (cosine of the e5 passage vectors); a label is chosen when the
//! similarity-weighted share of neighbours carrying it reaches [`THRESHOLD`]. Both
//! constants were fixed before measuring (they are the first classifier's).

use std::collections::HashMap;
use std::hash::Hash;

use crate::catalogue::{Catalogue, Idx};
use crate::vectors::{dot, GrantVectors};

/// Neighbours consulted.
pub const K: usize = 10;
/// Weighted share of neighbours that must carry a label.
pub const THRESHOLD: f32 = 0.4;
/// Neighbours named as evidence.
const EVIDENCE: usize = 3;

/// Grants whose labels come from the source.
pub fn labelled(cat: &Catalogue) -> Vec<Idx> {
    (0..cat.grants.len() as Idx)
        .filter(|&g| super::is_labelled(cat, g))
        .collect()
}

/// The nearest labelled grants of one grant, best first, with their cosines.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbours(Vec<(Idx, f32)>);

impl Neighbours {
    /// The [`K`] labelled grants nearest to `g`, never `g` itself.
    pub fn of(vectors: &GrantVectors, labelled: &[Idx], g: Idx) -> Self {
        Self::of_vector(vectors, labelled, g, vectors.row(g as usize))
    }

    /// The [`K`] labelled grants nearest to the vector `v` of grant `g`, never `g` itself
    /// (a leave-one-out evaluation passes the vector of `g`'s text without its labels).
    pub fn of_vector(vectors: &GrantVectors, labelled: &[Idx], g: Idx, v: &[f32]) -> Self {
        let mut near: Vec<(Idx, f32)> = labelled
            .iter()
            .filter(|&&o| o != g)
            .map(|&o| (o, dot(v, vectors.row(o as usize))))
            .collect();
        let k = K.min(near.len());
        if k == 0 {
            return Self(Vec::new());
        }
        near.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        near.truncate(k);
        near.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Self(near)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Labels carried by at least [`THRESHOLD`] of the neighbours' similarity weight.
    pub fn vote<T: Copy + Eq + Hash + Ord>(&self, labels_of: impl Fn(Idx) -> Vec<T>) -> Vec<T> {
        self.vote_with(labels_of, |_| THRESHOLD)
    }

    /// Like [`Self::vote`] with a threshold per label.
    pub fn vote_with<T: Copy + Eq + Hash + Ord>(
        &self,
        labels_of: impl Fn(Idx) -> Vec<T>,
        threshold: impl Fn(T) -> f32,
    ) -> Vec<T> {
        let total: f32 = self
            .0
            .iter()
            .map(|(_, s)| s.max(0.0))
            .sum::<f32>()
            .max(f32::EPSILON);
        let mut votes: HashMap<T, f32> = HashMap::new();
        for &(o, s) in &self.0 {
            for l in labels_of(o) {
                *votes.entry(l).or_default() += s.max(0.0);
            }
        }
        let mut chosen: Vec<T> = votes
            .into_iter()
            .filter(|&(l, w)| w / total >= threshold(l))
            .map(|(l, _)| l)
            .collect();
        chosen.sort_unstable();
        chosen
    }

    /// "ähnliche Programme: slug-a (0.91), slug-b (0.90), …" — the nearest few.
    pub fn evidence(&self, cat: &Catalogue) -> String {
        let names: Vec<String> = self
            .0
            .iter()
            .take(EVIDENCE)
            .map(|&(o, s)| format!("{} ({s:.2})", cat.grants[o as usize].slug))
            .collect();
        format!("nearest labelled programmes: {}", names.join(", "))
    }
}
