//! Grant facts: who may apply, what kind of programme a grant is and its terms, and the
//! source of its grant areas and target groups — each fact with its source and evidence.
//!
//! Sources, in order of precedence:
//! - `labelled`: stated by the catalogue record (source labels of a grant marked
//!   `labelled` or unmarked, the grant type, `company_size`, `non_profit_only`);
//! - `text`: read from the grant's own texts ([`applicants`], [`kind`]), evidence = the
//!   sentence;
//! - `derived`: voted by the nearest labelled grants in embedding space
//!   ([`neighbours`]), evidence = the nearest of them.
//!
//! The facts are computed when a catalogue is loaded; the import writes the effective
//! labels of derived grants into the snapshot ([`crate::classify::reassign_derived`]).

pub mod applicants;
pub mod areas;
pub mod eval;
pub mod farm;
pub mod kind;
pub mod lexicon;
pub mod livestock;
pub mod measure;
pub mod neighbours;
pub mod phase;
pub mod sector;
pub mod social;

use rayon::prelude::*;
use serde::Serialize;

use crate::catalogue::{Catalogue, Idx};
use crate::model::GrantType;
use crate::vectors::GrantVectors;

pub use kind::ProgrammeKind;
pub use lexicon::{applicant_words, ApplicantType};

/// Source of a grant fact: stated by the catalogue record, read from the programme's
/// text, or derived from the nearest labelled programmes (embeddings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = FactSource))]
pub enum Source {
    Labelled,
    Text,
    Derived,
}

/// A value with its source and evidence (the sentence it was read from, or the nearest
/// labelled programmes it was voted by).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Fact<T> {
    pub value: T,
    pub source: Source,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// Everything the engine knows about one grant beyond its record.
#[derive(Debug, Clone, PartialEq)]
pub struct GrantFacts {
    /// Who may apply; `None` when nothing says.
    pub applicants: Option<Fact<Vec<ApplicantType>>>,
    pub kind: Fact<ProgrammeKind>,
    /// The funding instrument ([`kind::grant_type`]): the record's grant type, or a loan
    /// where the title names one the record calls a subsidy.
    pub grant_type: Fact<GrantType>,
    /// `Some(true)`: only small and medium-sized enterprises.
    pub sme_only: Option<Fact<bool>>,
    /// `Some(true)`: only companies beyond the SME thresholds ([`kind::large_only`]:
    /// "KfW-Förderkredit großer Mittelstand").
    pub large_only: Option<Fact<bool>>,
    /// `Some(true)`: only non-profit applicants.
    pub non_profit_only: Option<Fact<bool>>,
    /// The sectors the title restricts the programme to ([`sector::of_title`]:
    /// "Wohngebäude", "Exportinitiative Gesundheitswirtschaft"): it suits an organisation
    /// only when the organisation speaks of one of them.
    pub sectors: Vec<sector::Sector>,
    /// The investment measures the programme funds for whoever carries them out
    /// ([`measure::of_programme`]: renewable power, the energy efficiency of existing
    /// buildings and of a business's equipment and processes).
    pub measures: Vec<measure::Measure>,
    /// The farm animals the teaser's condition restricts the programme to
    /// ([`livestock::of_programme`]: "… als landwirtschaftlicher Betrieb in der
    /// Schweinehaltung …"): a misfit for a farm that names other animals only.
    pub livestock: Option<Fact<Vec<livestock::Livestock>>>,
    /// True when the teaser's condition addresses farms ([`farm::only_farms`]: "Wenn Sie
    /// als landwirtschaftlicher Betrieb …"): a misfit for an organisation that does not
    /// farm.
    pub farms_only: Option<Fact<bool>>,
    /// True when the title restricts the programme to municipal and social enterprises
    /// ([`social::only_social_and_municipal`]: "Investitionskredit für Kommunale und
    /// Soziale Unternehmen …"): a kind misfit for a private business.
    pub social_only: Option<Fact<bool>>,
    /// Companies and founders the programme supports through its applicants, as its text
    /// says ([`applicants::supported`]: "Wenn Sie kleine und mittlere Unternehmen …
    /// unterstützen, können Sie …"), without the types its stated applicants include.
    /// Their own projects are not what it funds.
    pub supported: Option<Fact<Vec<ApplicantType>>>,
    /// A university or research institution applies for the founding teams it supports
    /// (EXIST-Gründungsstipendium): a programme for academic founders, though they are
    /// not its applicants.
    pub founding_teams_via_institution: bool,
    /// For founding or taking over a business or its first years only
    /// ([`phase::founding`]: "ERP-Gründerkredit – StartGeld", "Wenn Sie sich selbstständig
    /// machen wollen, …"): a kind misfit for an organisation that neither founds nor takes
    /// over a business.
    pub founding: Option<Fact<bool>>,
    /// Open to any topic ([`areas::topic_open`]): company financing, founding, regional
    /// economic promotion or topic-open innovation, no sector but business abroad.
    pub topic_open: bool,
    /// Source of the grant areas and target groups of the record.
    pub labels: Source,
    /// Nearest labelled programmes (slugs) when `labels` is `derived`.
    pub label_evidence: Option<String>,
}

impl GrantFacts {
    /// `Some(true)` when the type may apply, `Some(false)` when the known applicants
    /// exclude it, `None` when unknown.
    pub fn admits(&self, t: ApplicantType) -> Option<bool> {
        self.applicants.as_ref().map(|f| f.value.contains(&t))
    }

    /// True when the programme is for farm animals ([`Self::livestock`]) none of which the
    /// profile's animals are (a profile that names none is no stranger).
    pub fn livestock_misfit(&self, profile: &[livestock::Livestock]) -> bool {
        self.livestock
            .as_ref()
            .is_some_and(|f| livestock::misfit(&f.value, profile))
    }

    /// True when the programme is for farms ([`Self::farms_only`]) and the profile's
    /// texts do not say the organisation farms.
    pub fn farm_misfit(&self, profile_farms: bool) -> bool {
        !profile_farms && self.farms_only.as_ref().is_some_and(|f| f.value)
    }

    /// True when the programme is for municipal and social enterprises
    /// ([`Self::social_only`]) and the profile is neither such an enterprise nor a
    /// municipality.
    pub fn social_misfit(&self, social_enterprise: bool, municipality: bool) -> bool {
        !social_enterprise && !municipality && self.is_social_only()
    }

    /// True when the title restricts the programme to municipal and social enterprises.
    pub fn is_social_only(&self) -> bool {
        self.social_only.as_ref().is_some_and(|f| f.value)
    }

    /// True when the programme is for founding or taking over a business
    /// ([`Self::founding`]) and the profile speaks of neither.
    pub fn founding_misfit(&self, profile_founds: bool) -> bool {
        self.founding.is_some() && !profile_founds
    }

    /// True when every one of `types` (at least one) is among those the programme
    /// supports through its applicants ([`Self::supported`]): an organisation of these
    /// types only benefits from projects of others.
    pub fn only_supports(&self, types: &[ApplicantType]) -> bool {
        !types.is_empty()
            && self
                .supported
                .as_ref()
                .is_some_and(|f| types.iter().all(|t| f.value.contains(t)))
    }
}

/// True when the record's labels are the source's own (marked `labelled`, or unmarked).
pub fn is_labelled(cat: &Catalogue, g: Idx) -> bool {
    cat.grants[g as usize].classification.as_deref() != Some("derived")
}

/// The applicant types a record's labels state: target groups named like an applicant
/// type, plus the types of its eligible entities.
pub fn labelled_applicants(cat: &Catalogue, g: Idx) -> Vec<ApplicantType> {
    let mut out: Vec<ApplicantType> = cat
        .grant_target_groups(g)
        .iter()
        .filter_map(|&t| {
            let code = &cat.target_groups[t as usize].code;
            ApplicantType::ALL
                .into_iter()
                .find(|a| a.target_group_code() == code)
        })
        .chain(cat.grant_entities(g).iter().filter_map(|&e| {
            ApplicantType::of_entity_code(&cat.eligible_entities[e as usize].code)
        }))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Applicant types read from the grant's texts: short description, description, then
/// eligibility requirements ([`applicants::read`]); failing those, a funder's sentence of
/// any of them ([`applicants::read_funded`]), then the title.
pub fn text_applicants(cat: &Catalogue, g: Idx) -> Option<Fact<Vec<ApplicantType>>> {
    let grant = &cat.grants[g as usize];
    let texts = [
        grant.short_description.as_deref(),
        grant.description.as_deref(),
    ]
    .into_iter()
    .flatten()
    .chain(grant.eligibility_requirements.iter().map(String::as_str));
    texts
        .clone()
        .find_map(applicants::read)
        .or_else(|| texts.clone().find_map(applicants::read_funded))
        .or_else(|| applicants::read_title(&grant.title))
        .map(|r| Fact {
            value: r.types,
            source: Source::Text,
            evidence: Some(r.sentence),
        })
}

/// Facts of grant `g` as if it had no labels of its own: text first, then the vote of
/// its nearest labelled neighbours (never itself). Used for derived grants and by the
/// leave-one-out evaluation.
pub fn predicted_applicants(
    cat: &Catalogue,
    near: Option<&neighbours::Neighbours>,
    g: Idx,
) -> Option<Fact<Vec<ApplicantType>>> {
    text_applicants(cat, g).or_else(|| {
        let near = near?;
        let types = near.vote(|o| labelled_applicants(cat, o));
        (!types.is_empty()).then(|| Fact {
            value: types,
            source: Source::Derived,
            evidence: Some(near.evidence(cat)),
        })
    })
}

/// A fact read by [`kind`]: from the text when a sentence was read, else from the record.
fn read<T>(r: kind::Read<T>) -> Fact<T> {
    Fact {
        value: r.value,
        source: if r.sentence.is_some() {
            Source::Text
        } else {
            Source::Labelled
        },
        evidence: r.sentence,
    }
}

fn facts_of(
    cat: &Catalogue,
    vectors: Option<&GrantVectors>,
    labelled: &[Idx],
    g: Idx,
) -> GrantFacts {
    let grant = &cat.grants[g as usize];
    let own = is_labelled(cat, g);
    let near = (!own)
        .then(|| vectors.map(|v| neighbours::Neighbours::of(v, labelled, g)))
        .flatten()
        .filter(|n| !n.is_empty());
    let applicants = if own {
        let types = labelled_applicants(cat, g);
        if types.is_empty() {
            text_applicants(cat, g)
        } else {
            Some(Fact {
                value: types,
                source: Source::Labelled,
                evidence: None,
            })
        }
    } else {
        predicted_applicants(cat, near.as_ref(), g)
    };
    let non_profit_only = kind::non_profit_only(grant, applicants.as_ref()).map(read);
    let stated = applicants
        .as_ref()
        .filter(|f| f.source != Source::Derived)
        .map_or(&[][..], |f| &f.value[..]);
    let supported = grant
        .short_description
        .as_deref()
        .and_then(applicants::supported)
        .map(|r| Fact {
            value: r
                .types
                .into_iter()
                .filter(|t| !stated.contains(t))
                .collect::<Vec<_>>(),
            source: Source::Text,
            evidence: Some(r.sentence),
        })
        .filter(|f| !f.value.is_empty());
    GrantFacts {
        kind: read(kind::kind(grant)),
        grant_type: read(kind::grant_type(grant)),
        sme_only: kind::sme_only(grant).map(read),
        large_only: kind::large_only(grant).map(read),
        non_profit_only,
        sectors: sector::of_title(&grant.title),
        measures: measure::of_programme(grant),
        livestock: livestock::of_programme(grant).map(read),
        farms_only: farm::only_farms(grant).map(read),
        social_only: social::only_social_and_municipal(grant).map(read),
        // A financing programme for business abroad (export credits) is still open to
        // any topic; one restricted to a sector is not.
        topic_open: areas::topic_open(grant)
            && sector::of_title(&grant.title)
                .iter()
                .all(|&s| s == sector::Sector::International),
        founding_teams_via_institution: kind::founding_teams_via_institution(grant),
        founding: phase::founding(grant),
        supported,
        applicants,
        labels: if own {
            Source::Labelled
        } else {
            Source::Derived
        },
        label_evidence: near.map(|n| n.evidence(cat)),
    }
}

/// The facts of every grant (catalogue order). Without vectors, derived grants get only
/// what their texts say.
pub fn derive(cat: &Catalogue, vectors: Option<&GrantVectors>) -> Vec<GrantFacts> {
    let labelled = neighbours::labelled(cat);
    (0..cat.grants.len() as Idx)
        .into_par_iter()
        .map(|g| facts_of(cat, vectors, &labelled, g))
        .collect()
}

/// A grant of the given title, short description and grant type (tests of the readers).
#[cfg(test)]
pub(crate) fn test_grant(title: &str, short: &str, grant_type: &str) -> crate::model::Grant {
    serde_json::from_value(serde_json::json!({
        "id": "00000000-0000-0000-0000-000000000001",
        "slug": "x",
        "title": title,
        "short_description": short,
        "grant_type": grant_type,
        "region_ids": [],
        "ongoing_grant": true,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }))
    .expect("a valid grant")
}
