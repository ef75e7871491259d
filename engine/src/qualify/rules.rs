//! A partner's corrections to how its qualification prompt was read.
//!
//! `grantmatch partner qualification set --rules-file F` stores a JSON object whose
//! fields replace the corresponding part of the reading ([`QualificationPrompt::parse`]);
//! a field left out keeps what was read from the prompt, an empty list clears it:
//!
//! ```json
//! {
//!   "regions": ["Thüringen"],
//!   "applicant_types": ["Verein"],
//!   "excluded_applicant_types": ["Unternehmen", "Privatperson"],
//!   "funding_types": ["subsidy"],
//!   "excluded_funding_types": ["loan", "guarantee"],
//!   "excluded_kinds": ["research_call", "prize_scholarship"],
//!   "excluded_levels": ["state"],
//!   "non_profit": true,
//!   "topic": "Jugendarbeit, Sport und Kultur im Verein",
//!   "include_topics": ["Sportstätten", "Jugendfreizeiten"],
//!   "exclude_topics": ["Forschung"]
//! }
//! ```
//!
//! Regions are names, slugs, codes or UUIDs of the catalogue; applicant types are the
//! partner words of the shared alias lexicon ("Verein", "KMU", "Kommune", "company" …);
//! funding types are `subsidy`, `loan`, `guarantee`, `equity`; programme kinds are those
//! of the grant facts (`research_call`, `investment_grant`, `project_grant`, `loan`,
//! `guarantee`, `equity`, `advisory`, `prize_scholarship`, `infrastructure`); programme
//! levels are `eu`, `federal`, `state` (by the type of the programme's regions). An
//! unknown field or value is an error that names it.

use serde::{Deserialize, Serialize};

use super::{ProgrammeLevel, QualificationPrompt};
use crate::catalogue::{Catalogue, Idx};
use crate::error::{Error, Result};
use crate::facts::{ApplicantType, ProgrammeKind};
use crate::model::GrantType;

/// Overrides of a prompt's reading; `None` keeps what was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QualificationRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applicant_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_applicant_types: Option<Vec<String>>,
    /// Only these funding types qualify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub funding_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_funding_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_kinds: Option<Vec<String>>,
    /// Programme levels ruled out: `eu`, `federal`, `state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_levels: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_profit: Option<bool>,
    /// The topic a programme must fit (empty: decided by the rules alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Topics of which one, served well, fits ("z. B." items of the prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_topics: Option<Vec<String>>,
    /// Topics that rule a programme out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_topics: Option<Vec<String>>,
}

fn invalid(msg: String) -> Error {
    Error::InvalidInput(format!("qualification rules: {msg}"))
}

fn each<T>(
    field: &str,
    values: &[String],
    known: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>> {
    values
        .iter()
        .map(|v| {
            parse(v)
                .ok_or_else(|| invalid(format!("{field}: unknown value `{v}`; known are {known}")))
        })
        .collect()
}

fn kinds_known() -> String {
    ProgrammeKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn applicant_types(field: &str, values: &[String]) -> Result<Vec<ApplicantType>> {
    let known = ApplicantType::ALL
        .iter()
        .map(|t| t.label_de())
        .collect::<Vec<_>>()
        .join(", ");
    let mut out: Vec<ApplicantType> = Vec::new();
    for t in each(field, values, &known, ApplicantType::parse)? {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

fn topics(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

impl QualificationRules {
    /// A reading as a complete rules object (every field set): what `partner status`
    /// and Python show, and a starting point for a partner's `--rules-file`. Applied to
    /// the same prompt it changes nothing.
    pub fn of_reading(cat: &Catalogue, p: &QualificationPrompt) -> Self {
        let strings = |v: Vec<&str>| Some(v.into_iter().map(String::from).collect());
        QualificationRules {
            regions: strings(
                p.regions
                    .iter()
                    .map(|&r| cat.regions[r as usize].name_de.as_str())
                    .collect(),
            ),
            applicant_types: strings(p.applicant_types.iter().map(|t| t.label_de()).collect()),
            excluded_applicant_types: strings(
                p.excluded_applicant_types
                    .iter()
                    .map(|t| t.label_de())
                    .collect(),
            ),
            funding_types: strings(p.only_types.iter().map(|t| t.as_str()).collect()),
            excluded_funding_types: strings(p.excluded_types.iter().map(|t| t.as_str()).collect()),
            excluded_kinds: strings(p.excluded_kinds.iter().map(|k| k.as_str()).collect()),
            excluded_levels: strings(p.excluded_levels.iter().map(|l| l.as_str()).collect()),
            non_profit: Some(p.non_profit == Some(true)),
            topic: Some(p.topic.clone()),
            include_topics: Some(p.topic_items.clone()),
            exclude_topics: Some(p.excluded_topics.clone()),
        }
    }

    /// Reads rules from JSON; a syntax error, an unknown field or a wrong type is an
    /// error naming it. Values are checked by [`QualificationRules::apply`].
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| invalid(e.to_string()))
    }

    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == QualificationRules::default()
    }

    /// Replaces the parts of `prompt` that these rules set. Checks every value against
    /// the catalogue and the vocabularies first: on an error `prompt` is unchanged.
    pub fn apply(&self, cat: &Catalogue, prompt: &mut QualificationPrompt) -> Result<()> {
        let mut p = prompt.clone();
        if let Some(regions) = &self.regions {
            p.regions = each(
                "regions",
                regions,
                "the catalogue's region names, slugs and ids (GET /regions)",
                |v| cat.find_region(v),
            )?;
        }
        if let Some(types) = &self.applicant_types {
            p.applicant_types = applicant_types("applicant_types", types)?;
        }
        if p.applicant_types != prompt.applicant_types {
            // Changed applicant types: the eligible-entity rule follows them (the legal
            // forms those types stand for).
            let mut entities: Vec<Idx> = Vec::new();
            for t in &p.applicant_types {
                for code in t.entity_codes() {
                    if let Some(e) = cat.find_entity(code) {
                        if !entities.contains(&e) {
                            entities.push(e);
                        }
                    }
                }
            }
            p.entities = entities;
        }
        if let Some(types) = &self.excluded_applicant_types {
            p.excluded_applicant_types = applicant_types("excluded_applicant_types", types)?;
        }
        let funding_known = "subsidy, loan, guarantee, equity";
        if let Some(types) = &self.funding_types {
            p.only_types = each("funding_types", types, funding_known, GrantType::parse)?;
        }
        if let Some(types) = &self.excluded_funding_types {
            p.excluded_types = each(
                "excluded_funding_types",
                types,
                funding_known,
                GrantType::parse,
            )?;
        }
        if let Some(kinds) = &self.excluded_kinds {
            p.excluded_kinds = each(
                "excluded_kinds",
                kinds,
                &kinds_known(),
                ProgrammeKind::parse,
            )?;
        }
        if let Some(levels) = &self.excluded_levels {
            let mut l = each(
                "excluded_levels",
                levels,
                "eu, federal, state",
                ProgrammeLevel::parse,
            )?;
            l.sort();
            l.dedup();
            p.excluded_levels = l;
        }
        if let Some(np) = self.non_profit {
            p.non_profit = np.then_some(true);
        }
        if let Some(topic) = &self.topic {
            p.topic = topic.trim().to_string();
        }
        if let Some(items) = &self.include_topics {
            p.topic_items = topics(items);
        }
        if let Some(items) = &self.exclude_topics {
            p.excluded_topics = topics(items);
        }
        *prompt = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::real;
    use super::*;

    const PROMPT: &str =
        "Gemeinnützige Vereine in Sachsen, die Jugendarbeit machen. Keine Kredite.";

    #[test]
    fn set_fields_replace_the_reading_and_the_rest_stays() {
        let cat = real();
        let read = QualificationPrompt::parse(cat, PROMPT);
        let rules = QualificationRules::from_json(
            r#"{"regions": ["Thüringen"], "applicant_types": ["Kommune"],
                "excluded_kinds": ["research_call"], "exclude_topics": [" Forschung ", ""]}"#,
        )
        .unwrap();
        let p = QualificationPrompt::read(cat, PROMPT, Some(&rules)).unwrap();
        let thueringen = cat.find_region("Thüringen").unwrap();
        assert_eq!(p.regions, vec![thueringen]);
        assert_eq!(p.applicant_types, vec![ApplicantType::Municipality]);
        assert_eq!(p.entities, vec![cat.find_entity("kommune").unwrap()]);
        assert_eq!(p.excluded_kinds, vec![ProgrammeKind::ResearchCall]);
        assert_eq!(p.excluded_topics, vec!["Forschung".to_string()]);
        // Not set: as read from the prompt.
        assert_eq!(p.excluded_types, read.excluded_types);
        assert!(p.excluded_types.contains(&GrantType::Loan));
        assert_eq!(p.topic, read.topic);
        assert_eq!(p.non_profit, read.non_profit);
    }

    #[test]
    fn empty_lists_clear_and_no_rules_keep_the_reading() {
        let cat = real();
        let read = QualificationPrompt::parse(cat, PROMPT);
        assert!(!read.regions.is_empty());
        let rules = QualificationRules::from_json(r#"{"regions": [], "topic": ""}"#).unwrap();
        let p = QualificationPrompt::read(cat, PROMPT, Some(&rules)).unwrap();
        assert!(p.regions.is_empty());
        assert!(p.topic.is_empty());
        assert_eq!(QualificationPrompt::read(cat, PROMPT, None).unwrap(), read);
        assert!(QualificationRules::from_json("{}").unwrap().is_empty());
    }

    #[test]
    fn a_reading_as_rules_changes_nothing() {
        let cat = real();
        for text in [
            PROMPT,
            "Nur Zuschüsse für KMU in Bayern; keine Forschungsförderung, z. B. Software und IT-Sicherheit.",
            "We support non-profit associations in Saxony; loans and scholarships do not qualify.",
        ] {
            let read = QualificationPrompt::parse(cat, text);
            let rules = QualificationRules::of_reading(cat, &read);
            let json = serde_json::to_string(&rules).unwrap();
            let again = QualificationRules::from_json(&json).unwrap();
            assert_eq!(again, rules);
            assert_eq!(QualificationPrompt::read(cat, text, Some(&again)).unwrap(), read, "{text}");
        }
    }

    #[test]
    fn unknown_fields_and_values_are_named() {
        let cat = real();
        let e = QualificationRules::from_json(r#"{"region": ["Sachsen"]}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `region`"), "{e}");
        let e = QualificationRules::from_json(r#"{"regions": "Sachsen"}"#).unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
        for (json, value) in [
            (r#"{"regions": ["Atlantis"]}"#, "`Atlantis`"),
            (r#"{"applicant_types": ["Raumschiff"]}"#, "`Raumschiff`"),
            (r#"{"funding_types": ["gift"]}"#, "`gift`"),
            (r#"{"excluded_kinds": ["lottery"]}"#, "`lottery`"),
            (r#"{"excluded_levels": ["county"]}"#, "`county`"),
        ] {
            let rules = QualificationRules::from_json(json).unwrap();
            let mut p = QualificationPrompt::parse(cat, PROMPT);
            let before = p.clone();
            let e = rules.apply(cat, &mut p).unwrap_err();
            assert!(e.to_string().contains(value), "{e}");
            assert!(e.to_string().contains("known are"), "{e}");
            assert_eq!(p, before, "unchanged on error");
        }
    }
}
