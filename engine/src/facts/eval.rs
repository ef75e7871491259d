//! Accuracy of the grant facts against programmes labelled by reading
//! (`fixtures/eval/grant_facts.json`: programmes without source labels, each with the
//! applicant types, top-level grant areas, kind and terms a reader found).

use serde::Deserialize;

use super::{ApplicantType, GrantFacts, ProgrammeKind};
use crate::catalogue::{Catalogue, Idx};
use crate::classify::{Counts, Scores};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Deserialize)]
pub struct LabelledProgramme {
    pub slug: String,
    /// Förderdatenbank applicant labels ("Unternehmen", "Kommune" …).
    pub applicant_types: Vec<String>,
    #[serde(default)]
    pub applicant_types_unknown: bool,
    /// German names of top-level grant areas.
    #[serde(default)]
    pub areas: Vec<String>,
    pub kind: String,
    #[serde(default)]
    pub kmu_only: Option<bool>,
    #[serde(default)]
    pub non_profit_required: bool,
    /// `"tune"` or `"heldout"` where the file fixes the half (`grant_facts_v2.json`: every
    /// programme held out); absent = the half of [`crate::classify::is_heldout`].
    #[serde(default)]
    pub split: Option<String>,
}

impl LabelledProgramme {
    /// Whether the programme belongs to the held-out half.
    pub fn is_heldout(&self) -> bool {
        match self.split.as_deref() {
            Some(s) => s == "heldout",
            None => crate::classify::is_heldout(&self.slug),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
struct File {
    programmes: Vec<LabelledProgramme>,
}

/// Parses the labelled set.
pub fn parse(json: &str) -> Result<Vec<LabelledProgramme>> {
    let f: File = serde_json::from_str(json)
        .map_err(|e| Error::InvalidInput(format!("grant facts labels: {e}")))?;
    Ok(f.programmes)
}

/// A programme whose kind the engine read differently from the reader.
#[derive(Debug, Clone)]
pub struct KindMiss {
    pub slug: String,
    pub label: String,
    pub read: ProgrammeKind,
    pub sentence: Option<String>,
}

/// A programme whose applicant types the engine read differently from the reader.
#[derive(Debug, Clone)]
pub struct ApplicantMiss {
    pub slug: String,
    pub label: Vec<ApplicantType>,
    pub read: Vec<ApplicantType>,
    /// The evidence the engine read them from.
    pub evidence: Option<String>,
}

/// Scores of the facts against the labels.
#[derive(Debug, Clone, Default)]
pub struct FactsReport {
    /// Programmes of the file found in the catalogue.
    pub programmes: usize,
    /// Applicant types over programmes whose applicants the reader could tell.
    pub applicants: Scores,
    /// The same, only where the engine's source is the text.
    pub applicants_from_text: Scores,
    /// Programmes whose applicants the engine read from the text.
    pub text_coverage: usize,
    /// Top-level grant areas.
    pub areas: Scores,
    /// Per applicant type: (label, scores).
    pub per_type: Vec<(&'static str, Scores)>,
    pub kind_correct: usize,
    /// Programmes whose kind differs from the reader's: (slug, label, read kind, the
    /// sentence it was read from).
    pub kind_misses: Vec<KindMiss>,
    /// Programmes whose applicant types differ from the reader's (where the reader could
    /// tell).
    pub applicant_misses: Vec<ApplicantMiss>,
    pub sme_correct: usize,
    pub non_profit_correct: usize,
}

fn top_area_names(cat: &Catalogue, g: Idx) -> Vec<String> {
    let mut out: Vec<String> = cat
        .grant_areas(g)
        .iter()
        .map(|&a| {
            let top = cat.area_parent(a).unwrap_or(a);
            cat.grant_areas[top as usize].name_de.clone()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Compares `facts` (and the catalogue's area labels) with the reader's labels.
pub fn evaluate(
    cat: &Catalogue,
    facts: &[GrantFacts],
    labels: &[LabelledProgramme],
) -> Result<FactsReport> {
    let mut r = FactsReport::default();
    let (mut all, mut text, mut areas) = (Counts::default(), Counts::default(), Counts::default());
    let mut per_type = vec![Counts::default(); ApplicantType::ALL.len()];
    for l in labels {
        let g = cat.grant_by_slug(&l.slug).ok_or_else(|| {
            Error::InvalidInput(format!("grant facts labels: unknown slug `{}`", l.slug))
        })?;
        r.programmes += 1;
        let f = &facts[g as usize];
        let truth: Vec<ApplicantType> = l
            .applicant_types
            .iter()
            .map(|s| {
                ApplicantType::ALL
                    .into_iter()
                    .find(|t| t.label_de() == s)
                    .ok_or_else(|| {
                        Error::InvalidInput(format!(
                            "grant facts labels: unknown applicant type `{s}`"
                        ))
                    })
            })
            .collect::<Result<_>>()?;
        let pred: Vec<ApplicantType> = f
            .applicants
            .as_ref()
            .map(|a| a.value.clone())
            .unwrap_or_default();
        if !l.applicant_types_unknown {
            let same = pred.len() == truth.len() && pred.iter().all(|t| truth.contains(t));
            if !same {
                r.applicant_misses.push(ApplicantMiss {
                    slug: l.slug.clone(),
                    label: truth.clone(),
                    read: pred.clone(),
                    evidence: f.applicants.as_ref().and_then(|a| a.evidence.clone()),
                });
            }
            all.add(&pred, &truth);
            for (i, t) in ApplicantType::ALL.into_iter().enumerate() {
                per_type[i].add(
                    &[t][..pred.contains(&t) as usize],
                    &[t][..truth.contains(&t) as usize],
                );
            }
            if f.applicants
                .as_ref()
                .is_some_and(|a| a.source == super::Source::Text)
            {
                text.add(&pred, &truth);
            }
        }
        if f.applicants
            .as_ref()
            .is_some_and(|a| a.source == super::Source::Text)
        {
            r.text_coverage += 1;
        }
        areas.add(&top_area_names(cat, g), &l.areas);
        if ProgrammeKind::parse(&l.kind) == Some(f.kind.value) {
            r.kind_correct += 1;
        } else {
            r.kind_misses.push(KindMiss {
                slug: l.slug.clone(),
                label: l.kind.clone(),
                read: f.kind.value,
                sentence: f.kind.evidence.clone(),
            });
        }
        let sme = f.sme_only.as_ref().is_some_and(|s| s.value);
        if sme == (l.kmu_only == Some(true)) {
            r.sme_correct += 1;
        }
        let np = f.non_profit_only.as_ref().is_some_and(|s| s.value);
        if np == l.non_profit_required {
            r.non_profit_correct += 1;
        }
    }
    r.applicants = all.scores();
    r.applicants_from_text = text.scores();
    r.areas = areas.scores();
    r.per_type = ApplicantType::ALL
        .into_iter()
        .zip(per_type)
        .map(|(t, c)| (t.label_de(), c.scores()))
        .collect();
    Ok(r)
}
