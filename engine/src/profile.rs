//! The matching request body (`POST /matching`), its validation and its resolution
//! against the catalogue.
//!
//! Policy: unknown JSON fields are ignored (forward compatibility); wrong types, missing
//! required fields and unknown filter values are errors naming the field or value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalogue::{Catalogue, Idx};
use crate::error::{Error, Result};
use crate::facts::sector::Sector;
use crate::facts::{applicant_words, ApplicantType};
use crate::model::GrantType;

mod exclusions;
mod funding;
pub use funding::{asked_grant_types, excluded_grant_types, AskedTypes};

/// Longest accepted text field (characters).
pub const MAX_TEXT_CHARS: usize = 20_000;
/// Most values accepted in one list field.
pub const MAX_LIST_ITEMS: usize = 100;

/// The organisation to match. Unknown fields are ignored. Texts up to 20,000 characters, lists up to 100 values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrganizationProfile {
    /// Detailed description of the organisation (required, not blank); longer and more specific descriptions give better matches.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = String, max_length = 20000))]
    pub description: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 20000))]
    pub name: Option<String>,
    /// Filter: German or English names, slugs, codes or UUIDs at any level, or a place that stands for its Land: a German town of at least 5,000 inhabitants ("Leipzig" → Sachsen, "Cologne"), a district or landscape ("Landkreis Uelzen", "Kreis Unna", "Emsland", "Ruhrgebiet"; one across Länder such as "Eifel" stands for each), a Land's short name ("NRW"), "bundesweit" (Deutschland); an unknown value (or a town name found in several Länder) is 400. Without regions, the Land the texts name is used for ranking, not as a filter.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub regions: Vec<String>,
    /// Filter: names, slugs, codes or UUIDs of parent areas or sub-areas, or a topic word that stands for every area whose name has a word starting with it ("Energie", "Gesundheit", "research"); an unknown value is 400.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub grant_areas: Vec<String>,
    /// Filter: names, slugs, codes or UUIDs of legal forms, or applicant types and their aliases ("Unternehmen", "KMU", "Verein", "Kommune", "Start-up", "company" …), which stand for their legal forms. A kind of institution whose legal form the word does not tell ("Krankenhaus", "Pflegeeinrichtung", "Museum", "care home") is accepted and neither filters nor sets the applicant type, which then comes from the name and texts. An unknown value is 400.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub eligible_entities: Vec<String>,
    #[serde(default)]
    pub is_non_profit: Option<bool>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 20000))]
    pub mission: Option<String>,
    /// Target group names; names outside the vocabulary are used as keywords.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub target_groups: Vec<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub annual_budget: Option<String>,
    #[serde(default)]
    pub number_of_employees: Option<String>,
    /// Language of the match reasons: `de` (default) or `en`.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^\\s*([dD][eE]|[eE][nN])(-[a-zA-Z]{2})?\\s*$")
    )]
    pub locale: Option<String>,
}

/// The project to fund (all optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Project {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 20000))]
    pub title: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 20000))]
    pub description: Option<String>,
    /// Free-text amount, e.g. "50.000 EUR", "1,5 Mio. €", "200k".
    #[serde(default)]
    pub budget: Option<String>,
    #[serde(default)]
    pub duration: Option<String>,
}

/// The body of `POST /matching`. Unknown fields are ignored (forward compatibility).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = MatchingRequest))]
pub struct MatchInput {
    /// Id of the organisation in the partner's own system (not blank, at most 200 characters); use the same id consistently.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(required = true, value_type = String, min_length = 1, max_length = 200)
    )]
    pub organization_id: Option<String>,
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(required = true, value_type = OrganizationProfile)
    )]
    pub organization_profile: Option<OrganizationProfile>,
    #[serde(default)]
    pub project: Option<Project>,
}

/// Language of match reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Locale {
    #[default]
    De,
    En,
}

impl Locale {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "de" | "de-de" => Some(Self::De),
            "en" | "en-gb" | "en-us" => Some(Self::En),
            _ => None,
        }
    }
}

/// A validated profile with its filters resolved to catalogue records.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedProfile {
    pub organization_id: String,
    /// The text embedded as the query: name, description, mission, project and keywords
    /// without the clauses the profile excludes ([`Self::exclusions`]).
    pub query_text: String,
    /// Clauses that say what the organisation does not want ("nicht für Forschung",
    /// "Ein Neubau ist nicht geplant", "we do not plan any construction"): cut out of the
    /// texts its topic, needs, research and sectors are read from.
    pub exclusions: Vec<String>,
    /// Explicit topic words: keywords, unresolved target-group names, project title.
    pub keywords: Vec<String>,
    /// For a German profile without keywords: the glossary's topic terms found in its
    /// texts ([`crate::glossary::topics_de`], at most [`READ_TOPICS`]): in the BM25 query,
    /// the share of keywords found and the topic vector, but not needs — a single word
    /// read out of its sentence may mean something else there ("Pflege der Anlage" is
    /// upkeep, not care), and as a need of its own it ranked care programmes first for a
    /// swimming-pool association. The sentences are the needs of such a profile.
    pub read_topics: Vec<String>,
    pub regions: Vec<Idx>,
    /// For a profile without `regions`: the Länder its texts place the organisation in
    /// ("Bäckerei in Leipzig", "a farm in Lower Saxony"; [`crate::text::places`]). Not a
    /// filter: the region component and check use them as they use `regions`.
    pub located_regions: Vec<Idx>,
    pub grant_areas: Vec<Idx>,
    pub eligible_entities: Vec<Idx>,
    pub target_groups: Vec<Idx>,
    pub is_non_profit: Option<bool>,
    pub project_budget: Option<f64>,
    /// Head count from `number_of_employees` (its first number: "1.300", "28", "2
    /// Teilzeit").
    pub employees: Option<u32>,
    pub locale: Locale,
    /// Who the organisation is, from `eligible_entities`, else its name, else the first
    /// sentence of its description (legal form, "Gemeinde", "Start-up" …).
    pub applicant_types: Vec<ApplicantType>,
    /// Funding types the profile's texts rule out ("keine Kredite", "grants only").
    pub excluded_grant_types: Vec<GrantType>,
    /// Funding types the profile asks for ("Wir suchen Zuschüsse und Kredite", "we are
    /// looking for loans") or accepts ("a loan is possible"), none of them ruled out;
    /// empty when it names none.
    pub wanted_grant_types: Vec<GrantType>,
    /// Those of `wanted_grant_types` that the profile only accepts and does not seek.
    pub accepted_grant_types: Vec<GrantType>,
    /// The profile speaks of research or development (research calls fit it).
    pub research_oriented: bool,
    /// The profile names research and development itself ("Forschung", "F&E", "R&D",
    /// "Entwicklungsprojekt"; not a pilot, prototype or lab): a company that does so
    /// is served by research calls open to any topic (ZIM).
    pub does_rd: bool,
    /// The sectors its texts speak of ([`crate::facts::sector::in_profile`]); housing also
    /// for a private person. A programme restricted to other sectors is a misfit.
    pub sectors: Vec<Sector>,
    /// The investment measures its texts plan ([`crate::facts::measure::in_profile`]: a
    /// photovoltaic system, a new heating).
    pub measures: Vec<crate::facts::measure::Measure>,
    /// The farm animals its texts say the organisation keeps
    /// ([`crate::facts::livestock::in_profile`]); a programme for other animals only is a
    /// misfit.
    pub livestock: Vec<crate::facts::livestock::Livestock>,
    /// Its texts say the organisation farms ([`crate::facts::farm::in_profile`]); a
    /// programme for farms only is a kind misfit otherwise.
    pub farms: bool,
    /// The organisation's texts say it is a municipal enterprise or body or a social
    /// enterprise ([`crate::facts::social::in_profile`]), or it is non-profit and no
    /// municipality: a programme for municipal and social enterprises is a kind misfit
    /// for an organisation that is neither this nor a municipality.
    pub social_enterprise: bool,
    /// The profile speaks of a university or research institution, a spin-off or academic
    /// founders ("Ausgründung", "Doktoranden", "TU Dortmund", "spin-off"): a founding team
    /// that programmes for founders through their institution may serve.
    pub academic: bool,
    /// The organisation founds, takes over or is a young business: a founder, or texts
    /// that speak of founding, succession, a start-up or a spin-off
    /// ([`crate::facts::phase::in_profile`]). Programmes for founding only
    /// ([`crate::facts::GrantFacts::founding`]) misfit the others — also an established
    /// company or institute that only names a university or research partner.
    pub founding: bool,
    /// Language of the profile's texts (not of the reasons, which `locale` sets).
    pub text_language: Locale,
    /// The profile's needs, each matched on its own: its topic words ([`Self::keywords`],
    /// one need each), or, for a profile that has none, the sentences of
    /// its description, mission and project, split into their clauses where a sentence
    /// joins several (at least four words each; none when there are fewer than two). At
    /// most [`MAX_NEEDS`].
    pub needs: Vec<String>,
    /// Query vectors of `needs` (L2-normalised), set by the caller that embeds them.
    pub need_vectors: Vec<Vec<f32>>,
    /// German terms for the lexical query against the German programme texts
    /// ([`crate::glossary`]). A profile written in English: the German terms of the
    /// glossary phrases in its texts, also embedded as a German topic. A German profile:
    /// the terms related to the topics it names ([`crate::glossary::related_de`]; lexical
    /// only — embedding them too lowered the tuning half, see the README).
    pub german_terms: Vec<String>,
}

/// Most topic words read from the texts of a profile that names no keywords.
pub const READ_TOPICS: usize = 8;

/// How many related German terms ([`crate::glossary::related_de`]) a German profile gets.
pub const RELATED_TERMS: usize = 16;

/// Most needs read from one profile.
pub const MAX_NEEDS: usize = 12;

/// The needs of a profile: its topic words, or else the clauses ([`clauses`]) of the
/// sentences of its texts with at least four words (see [`ResolvedProfile::needs`]).
fn needs_of(keywords: &[String], texts: &[&str]) -> Vec<String> {
    if !keywords.is_empty() {
        let mut out: Vec<String> = Vec::new();
        for k in keywords {
            if !out.iter().any(|o| o.eq_ignore_ascii_case(k)) {
                out.push(k.clone());
            }
        }
        out.truncate(MAX_NEEDS);
        return out;
    }
    let mut out: Vec<String> = Vec::new();
    for t in texts {
        for s in crate::facts::applicants::sentences(t).flat_map(clauses) {
            let s = s.trim();
            if s.split_whitespace().count() >= 4
                && !names_instrument(s)
                && !only_who(s)
                && !out.iter().any(|o| o == s)
            {
                out.push(s.to_string());
            }
        }
    }
    out.truncate(MAX_NEEDS);
    if out.len() < 2 {
        out.clear();
    }
    out
}

/// Fewest words of a clause that is a need of its own ([`clauses`]).
const CLAUSE_WORDS: usize = 5;

/// The clauses of a sentence that joins several: split before "; ", ", and", ", und",
/// ", sowie" and ", as well as" where both sides have at least [`CLAUSE_WORDS`] words.
/// One sentence often lists several needs ("We want to develop lightweight castings
/// with a research institute, replace our furnaces, and retrain our operators"; "Die
/// Technik muss erneuert werden, und wir wollen das Wasser mit Solarenergie
/// erwärmen"). A bare comma does not split: it also separates the items of a list
/// ("Schulkantinen, Kitas und den Handel") and truncated compounds ("Wasch-, Pack- und
/// Kühlhalle").
fn clauses(sentence: &str) -> Vec<&str> {
    const JOINS: [&str; 5] = ["; ", ", and ", ", und ", ", sowie ", ", as well as "];
    let words = |t: &str| t.split_whitespace().count();
    let mut out: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, _) in sentence.char_indices() {
        let rest = &sentence[i..];
        let Some(join) = JOINS.iter().find(|j| rest.starts_with(*j)) else {
            continue;
        };
        let next = &sentence[i + join.len()..];
        let next = JOINS
            .iter()
            .filter_map(|j| next.find(j))
            .min()
            .map_or(next, |e| &next[..e]);
        if words(&sentence[start..i]) >= CLAUSE_WORDS && words(next) >= CLAUSE_WORDS {
            out.push(&sentence[start..i]);
            start = i + 1;
        }
    }
    out.push(&sentence[start..]);
    out
}

/// The sentence names a funding instrument ("Wir brauchen Zuschüsse; Kredite können wir
/// nicht tragen", "We would prefer grants, but a loan is possible"): it says how the
/// organisation wants to be funded, which the funding-type check reads, not what for.
fn names_instrument(sentence: &str) -> bool {
    crate::text::fold_name(sentence)
        .split(' ')
        .any(|w| crate::qualify::grant_type_of_word(w).is_some())
}

/// The sentence only says who the organisation is — its size, members or history ("Wir
/// haben 380 Mitglieder", "The business was founded in 2019 and has four permanent
/// staff") — and nothing it wants to do: the applicant reading uses it, it is no need.
fn only_who(sentence: &str) -> bool {
    static R: std::sync::OnceLock<[regex::Regex; 2]> = std::sync::OnceLock::new();
    let [who, intent] = R.get_or_init(|| {
        let r = |p: &str| regex::Regex::new(&format!("(?i){p}")).expect("valid who rule");
        [
            r(r"(?-u:\b)(gegründet|founded|established|seit (19|20)\d\d|since (19|20)\d\d)|mitarbeiter|beschäftigte|angestellte|mitglieder|ehrenamtliche|(?-u:\b)(employees|staff|members|volunteers|turnover|umsatz)(?-u:\b)"),
            r(r"(?-u:\b)(woll|möcht|plan|brauch|such|benötig|will|soll|want|need|look|would|aim|seek|intend)"),
        ]
    });
    who.is_match(sentence) && !intent.is_match(sentence)
}

impl MatchInput {
    /// Parses a JSON value, naming the offending field on a type error.
    pub fn from_value(v: Value) -> Result<Self> {
        if !v.is_object() {
            return Err(Error::InvalidInput(
                "the request body must be a JSON object".into(),
            ));
        }
        // serde would accept a struct written as an array; the API does not.
        for field in ["organization_profile", "project"] {
            if v.get(field).is_some_and(|x| !x.is_object() && !x.is_null()) {
                return Err(Error::InvalidInput(format!(
                    "{field}: must be a JSON object"
                )));
            }
        }
        serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            Error::InvalidInput(format!("{path}: {}", e.into_inner()))
        })
    }

    /// Validates required fields and limits, resolves the filters against the catalogue
    /// and reads what the matcher needs from the texts (applicant types, funding types
    /// ruled out and asked for, research, language, needs).
    pub fn resolve(&self, cat: &Catalogue) -> Result<ResolvedProfile> {
        let invalid = |m: String| Error::InvalidInput(m);
        let organization_id = self
            .organization_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("organization_id is required".into()))?;
        if organization_id.chars().count() > 200 {
            return Err(invalid("organization_id: at most 200 characters".into()));
        }
        let p = self
            .organization_profile
            .as_ref()
            .ok_or_else(|| invalid("organization_profile is required".into()))?;
        let description = p
            .description
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("organization_profile.description is required".into()))?;
        self.check_limits(p, description)?;
        let regions = resolve_regions(cat, &p.regions)?;
        let grant_areas = resolve_areas(cat, &p.grant_areas)?;
        let (eligible_entities, mut applicant_types) = resolve_entities(cat, &p.eligible_entities)?;
        if applicant_types.is_empty() {
            applicant_types = applicant_types_in_texts(p, description);
        }
        for t in operated_institutions(&applicant_types, p.name.as_deref(), description) {
            if !applicant_types.contains(&t) {
                applicant_types.push(t);
            }
        }
        let (keywords, target_groups) = self.topic_words(cat, p);
        let locale = profile_locale(p)?;
        // Instruments, places and language are read from the whole text (their rules
        // know refusals); the topic only from what the profile does not exclude.
        let full = self.query_text(p, description);
        let (query, exclusions) = topic_text(&full);
        let located_regions = if regions.is_empty() {
            crate::text::places::lands_in(&full)
                .into_iter()
                .filter_map(|code| cat.find_region(code))
                .collect()
        } else {
            Vec::new()
        };
        let excluded_grant_types = excluded_grant_types(&full);
        let asked = asked_grant_types(&full);
        let allowed = |t: &GrantType| !excluded_grant_types.contains(t);
        let wanted_grant_types = asked
            .sought
            .iter()
            .chain(&asked.accepted)
            .copied()
            .filter(allowed)
            .collect();
        let accepted_grant_types = asked.accepted.into_iter().filter(allowed).collect();
        let research_oriented = research_rule().is_match(&query);
        let does_rd = rd_rule().is_match(&query);
        // The topic is read without the landscapes the texts name ("Thüringer Wald" is
        // where, not forestry); the coal regions are places by definition.
        let topical = crate::text::places::without_landscapes(&query);
        let livestock = crate::facts::livestock::in_profile(&topical);
        let farms = crate::facts::farm::in_profile(&topical);
        let social_enterprise = crate::facts::social::in_profile(&query)
            || (p.is_non_profit == Some(true)
                && !applicant_types.contains(&ApplicantType::Municipality));
        let mut sectors = crate::facts::sector::in_profile(&topical);
        if crate::facts::sector::in_profile(&query).contains(&Sector::CoalRegions)
            && !sectors.contains(&Sector::CoalRegions)
        {
            sectors.push(Sector::CoalRegions);
        }
        if applicant_types.contains(&ApplicantType::PrivatePerson)
            && !sectors.contains(&Sector::Housing)
        {
            sectors.push(Sector::Housing);
        }
        let measures = crate::facts::measure::in_profile(&topical);
        let academic = academic_rule().is_match(&query);
        let founding = applicant_types.contains(&ApplicantType::Founder)
            || crate::facts::phase::in_profile(&query);
        let text_language = text_language(&full);
        // A German profile without keywords gets the glossary's topic terms found in its
        // texts (an English one has its German glossary terms already).
        let read_topics: Vec<String> = if p.keywords.is_empty() && text_language == Locale::De {
            crate::glossary::topics_de(&topical, READ_TOPICS)
                .into_iter()
                .filter(|t| !keywords.iter().any(|k| k.eq_ignore_ascii_case(t)))
                .map(String::from)
                .collect()
        } else {
            Vec::new()
        };
        let german_terms = match text_language {
            Locale::En => crate::glossary::translate(&topical)
                .into_iter()
                .map(String::from)
                .collect(),
            Locale::De => crate::glossary::related_de(&topical, RELATED_TERMS)
                .into_iter()
                .map(String::from)
                .collect(),
        };
        let need_texts: Vec<String> = [
            Some(description),
            p.mission.as_deref(),
            self.project.as_ref().and_then(|x| x.description.as_deref()),
        ]
        .into_iter()
        .flatten()
        .map(|t| topic_text(t).0)
        .collect();
        let needs = needs_of(
            &keywords,
            &need_texts.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        Ok(ResolvedProfile {
            organization_id: organization_id.to_string(),
            query_text: query,
            exclusions,
            keywords,
            read_topics,
            regions,
            located_regions,
            grant_areas,
            eligible_entities,
            target_groups,
            is_non_profit: p.is_non_profit,
            project_budget: self
                .project
                .as_ref()
                .and_then(|x| x.budget.as_deref())
                .and_then(parse_amount),
            employees: p.number_of_employees.as_deref().and_then(parse_headcount),
            locale,
            applicant_types,
            excluded_grant_types,
            wanted_grant_types,
            accepted_grant_types,
            research_oriented,
            does_rd,
            sectors,
            measures,
            livestock,
            farms,
            social_enterprise,
            academic,
            founding,
            text_language,
            needs,
            need_vectors: Vec::new(),
            german_terms,
        })
    }

    /// The length limits of the texts and lists (400 with the offending field).
    fn check_limits(&self, p: &OrganizationProfile, description: &str) -> Result<()> {
        let texts = [
            ("organization_profile.description", Some(description)),
            ("organization_profile.name", p.name.as_deref()),
            ("organization_profile.mission", p.mission.as_deref()),
            (
                "project.title",
                self.project.as_ref().and_then(|x| x.title.as_deref()),
            ),
            (
                "project.description",
                self.project.as_ref().and_then(|x| x.description.as_deref()),
            ),
        ];
        for (field, t) in texts {
            if t.is_some_and(|t| t.chars().count() > MAX_TEXT_CHARS) {
                return Err(Error::InvalidInput(format!(
                    "{field}: at most {MAX_TEXT_CHARS} characters"
                )));
            }
        }
        let lists = [
            ("organization_profile.regions", &p.regions),
            ("organization_profile.grant_areas", &p.grant_areas),
            (
                "organization_profile.eligible_entities",
                &p.eligible_entities,
            ),
            ("organization_profile.target_groups", &p.target_groups),
            ("organization_profile.keywords", &p.keywords),
        ];
        for (field, l) in lists {
            if l.len() > MAX_LIST_ITEMS {
                return Err(Error::InvalidInput(format!(
                    "{field}: at most {MAX_LIST_ITEMS} values"
                )));
            }
        }
        Ok(())
    }

    /// The profile's topic words: its keywords, the target groups the catalogue does not
    /// know (as words) and the project title; and the known target groups.
    fn topic_words(&self, cat: &Catalogue, p: &OrganizationProfile) -> (Vec<String>, Vec<Idx>) {
        let mut keywords: Vec<String> = p
            .keywords
            .iter()
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect();
        let mut target_groups = Vec::new();
        for t in p
            .target_groups
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
        {
            match cat.find_target_group(t) {
                Some(i) if !target_groups.contains(&i) => target_groups.push(i),
                Some(_) => {}
                None => keywords.push(t.to_string()),
            }
        }
        if let Some(title) = self.project.as_ref().and_then(|x| x.title.as_deref()) {
            if !title.trim().is_empty() {
                keywords.push(title.trim().to_string());
            }
        }
        (keywords, target_groups)
    }

    /// Name, description, mission, project title and description, then the keywords:
    /// the text embedded and searched lexically.
    fn query_text(&self, p: &OrganizationProfile, description: &str) -> String {
        let mut query = String::new();
        for part in [
            p.name.as_deref(),
            Some(description),
            p.mission.as_deref(),
            self.project.as_ref().and_then(|x| x.title.as_deref()),
            self.project.as_ref().and_then(|x| x.description.as_deref()),
        ]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        {
            if !query.is_empty() {
                query.push_str(". ");
            }
            query.push_str(part);
        }
        if !p.keywords.is_empty() {
            query.push_str(". ");
            query.push_str(&p.keywords.join(", "));
        }
        query
    }
}

/// `text` without the clauses it excludes ([`exclusions::strip`]), and those clauses; the
/// whole text when nothing else is left.
fn topic_text(text: &str) -> (String, Vec<String>) {
    let (kept, excluded) = exclusions::strip(text);
    if kept.chars().any(char::is_alphanumeric) {
        (kept, excluded)
    } else {
        (text.to_string(), Vec::new())
    }
}

/// Applicant types of a profile whose `eligible_entities` name none: from the legal form
/// or kind in its name ("… gGmbH", "Landkreis …"), else from its first sentence, else from
/// the first of its keywords that names one ("freelancer", "KMU").
fn applicant_types_in_texts(p: &OrganizationProfile, description: &str) -> Vec<ApplicantType> {
    let first_sentence = crate::facts::applicants::sentences(description).next();
    p.name
        .as_deref()
        .into_iter()
        .chain(first_sentence)
        .chain(p.keywords.iter().map(String::as_str))
        .map(applicant_words)
        .find(|t| !t.is_empty())
        .unwrap_or_default()
}

/// The locale of the reasons: `de` unless the profile says `en`.
fn profile_locale(p: &OrganizationProfile) -> Result<Locale> {
    match p.locale.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(Locale::De),
        Some(l) => Locale::parse(l).ok_or_else(|| {
            Error::InvalidInput(format!(
                "organization_profile.locale: `{l}` is not `de` or `en`"
            ))
        }),
    }
}

/// English when English function words outnumber German ones in `text`.
pub fn text_language(text: &str) -> Locale {
    // "in" is both; a tie is German.
    const EN: &[&str] = &[
        "the", "and", "of", "to", "we", "our", "for", "with", "is", "are", "a", "an", "no", "not",
        "or", "they", "their",
    ];
    const DE: &[&str] = &[
        "der", "die", "das", "und", "wir", "unser", "unsere", "für", "mit", "ist", "sind", "ein",
        "eine", "im", "zu", "von", "den", "keine", "kein", "nicht", "oder", "auf", "sich", "nur",
    ];
    let (mut en, mut de) = (0, 0);
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = w.to_lowercase();
        en += EN.contains(&w.as_str()) as usize;
        de += DE.contains(&w.as_str()) as usize;
    }
    if en > de {
        Locale::En
    } else {
        Locale::De
    }
}

/// Resolves `grant_areas`: areas of the vocabulary (UUID, slug, code, German or English
/// name), else every area a topic word names ([`Catalogue::areas_named_by`]:
/// "Energie", "Gesundheit", "research"). An unknown value is an error naming it.
fn resolve_areas(cat: &Catalogue, values: &[String]) -> Result<Vec<Idx>> {
    resolve_each("organization_profile.grant_areas", values, |v| {
        match cat.find_area(v) {
            Some(a) => vec![a],
            None => cat.areas_named_by(v),
        }
    })
}

/// Resolves `regions`: regions of the vocabulary (UUID, slug, code, German or English
/// name), else the places that stand for Länder ([`crate::text::places::value_regions`]:
/// "Leipzig" → Sachsen, "NRW", "Landkreis Uelzen", "Emsland", "Eifel" → two Länder,
/// "bundesweit" → Deutschland). An unknown value is an error naming it.
fn resolve_regions(cat: &Catalogue, values: &[String]) -> Result<Vec<Idx>> {
    resolve_each("organization_profile.regions", values, |v| {
        match cat.find_region(v) {
            Some(r) => vec![r],
            None => crate::text::places::value_regions(v)
                .into_iter()
                .filter_map(|code| cat.find_region(code))
                .collect(),
        }
    })
}

/// The records every non-empty value of `field` stands for (`find`; none: unknown, an
/// error naming the value), each once, in order.
fn resolve_each(
    field: &str,
    values: &[String],
    find: impl Fn(&str) -> Vec<Idx>,
) -> Result<Vec<Idx>> {
    let mut out = Vec::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let found = find(v);
        if found.is_empty() {
            return Err(Error::InvalidInput(format!("{field}: unknown value `{v}`")));
        }
        for i in found {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

/// Resolves `eligible_entities`: vocabulary names, slugs, codes or UUIDs of legal forms,
/// and applicant types as partners send them ("Unternehmen", "KMU", "Verein",
/// "Existenzgründer/in", "Verband/Vereinigung", "company" …), which stand for their
/// legal forms. A kind of institution whose legal form the word does not tell
/// ("Krankenhaus", "Museum", "care home") is accepted and sets neither. Returns the
/// entities and the applicant types; an unknown value is an error naming it and the
/// closest known names.
fn resolve_entities(cat: &Catalogue, values: &[String]) -> Result<(Vec<Idx>, Vec<ApplicantType>)> {
    let (mut entities, mut types) = (Vec::new(), Vec::new());
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let (es, ts): (Vec<Idx>, Vec<ApplicantType>) = if let Some(e) = cat.find_entity(v) {
            let code = &cat.eligible_entities[e as usize].code;
            let mut ts: Vec<ApplicantType> =
                ApplicantType::of_entity_code(code).into_iter().collect();
            let mut es = vec![e];
            // A gGmbH is a GmbH with non-profit status: it may apply where a GmbH may
            // (the Förderdatenbank lists "Unternehmen" as the legal forms, never gGmbH).
            if code == "ggmbh" {
                ts.push(ApplicantType::Company);
                es.extend(cat.find_entity("gmbh"));
            }
            (es, ts)
        } else if crate::facts::lexicon::applicant_words(v)
            == [ApplicantType::Company, ApplicantType::Association]
        {
            // "gUG", "gemeinnützige GmbH": a non-profit company, like gGmbH.
            let es = ["ggmbh", "gmbh", "ug"]
                .into_iter()
                .filter_map(|c| cat.find_entity(c))
                .collect();
            (es, vec![ApplicantType::Association, ApplicantType::Company])
        } else if crate::facts::lexicon::applicant_words(v)
            == [ApplicantType::Company, ApplicantType::Municipality]
        {
            // "municipal company", "kommunales Unternehmen": a company a municipality
            // owns applies as a company.
            let ts = vec![ApplicantType::Company];
            (crate::classify::entities_of(cat, &ts), ts)
        } else if let Some(t) = ApplicantType::parse(v) {
            let ts = if t == ApplicantType::Founder {
                vec![ApplicantType::Founder, ApplicantType::Company]
            } else {
                vec![t]
            };
            (crate::classify::entities_of(cat, &ts), ts)
        } else if crate::facts::lexicon::names_institution_kind(v) {
            // "Krankenhaus", "Museum", "care home": a kind of organisation whose legal
            // form the word does not tell; neither a filter nor an applicant type (the
            // name and texts tell those).
            (Vec::new(), Vec::new())
        } else {
            return Err(Error::InvalidInput(format!(
                "organization_profile.eligible_entities: unknown value `{v}`; known are e.g. {}",
                closest_entity_names(cat, v).join(", ")
            )));
        };
        for e in es {
            if !entities.contains(&e) {
                entities.push(e);
            }
        }
        for t in ts {
            if !types.contains(&t) {
                types.push(t);
            }
        }
    }
    types.sort();
    Ok((entities, types))
}

/// Known entity and applicant-type names nearest to `v` (by shared leading letters).
fn closest_entity_names(cat: &Catalogue, v: &str) -> Vec<String> {
    let folded = crate::text::fold_name(v);
    let mut names: Vec<String> = cat
        .eligible_entities
        .iter()
        .map(|e| e.name_de.clone())
        .chain(ApplicantType::ALL.iter().map(|t| t.label_de().to_string()))
        .collect();
    let common = |n: &String| {
        crate::text::fold_name(n)
            .chars()
            .zip(folded.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    names.sort_by_key(|n| std::cmp::Reverse(common(n)));
    names.truncate(5);
    names
}

// The word boundaries of the profile rules are ASCII (`(?-u:\b)`): a Unicode `\b` makes
// the regex engine leave its fast DFA on German text, and these rules run on every
// request (none of their boundaries sits next to an umlaut).
/// The text speaks of research or development ([`ResolvedProfile::research_oriented`]).
pub(crate) fn names_research(text: &str) -> bool {
    research_rule().is_match(text)
}

fn rd_rule() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)forschung|forschen|entwicklungsprojekt|(?-u:\b)f&e(?-u:\b)|(?-u:\b)fue(?-u:\b)|(?-u:\b)research|(?-u:\b)r&d(?-u:\b)")
            .expect("valid R&D rule")
    })
}

fn research_rule() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)forschung|forschen|entwicklungsprojekt|erprob|modellprojekt|modellvorhaben|pilotprojekt|pilotvorhaben|(?-u:\b)pilot|(?-u:\b)f&e(?-u:\b)|(?-u:\b)fue(?-u:\b)|wissenschaft|(?-u:\b)research|(?-u:\b)r&d(?-u:\b)|scientific|prototyp|(?-u:\b)labor|(?-u:\b)lab(?-u:\b)|institut")
            .expect("valid research rule")
    })
}

/// Applicant types an organisation has beside its legal form, as the holder of an
/// institution it runs — the way an advisor reads a profile:
/// - a Kommune that runs its own enterprise ("mit unserem Eigenbetrieb Kreisverkehr",
///   "unsere Stadtwerke") may apply as that company: a programme for transport companies
///   serves a Landkreis that operates its buses itself;
/// - an organisation that runs a school, an education centre or adult education (a
///   Verein with a nursing school, a Kreishandwerkerschaft with a Bildungsstätte, a
///   Qualifizierungsträger) is an educational institution in the programmes' terms, and
///   so is a Kommune that speaks of its schools or Kitas: it is their Schulträger or
///   Kita-Träger by law;
/// - a university is a research institution: programmes for "Forschungseinrichtungen"
///   take universities (the EU's "Einrichtung für Forschung und Wissensverbreitung").
fn operated_institutions(
    types: &[ApplicantType],
    name: Option<&str>,
    description: &str,
) -> Vec<ApplicantType> {
    static OWN_ENTERPRISE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static EDUCATION: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static SCHOOLS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let own_enterprise = OWN_ENTERPRISE.get_or_init(|| {
        regex::Regex::new(r"(?i)eigenbetrieb|(unser(e|em|en|er)?|eigene[nmr]?) (kommunale[nmrs]? (unternehmen|gesellschaft)|stadtwerke|verkehrsbetrieb|verkehrsunternehmen)|(?-u:\b)our (own )?(municipal (utility|company|enterprise)|utility|utilities|transport company)")
            .expect("valid own-enterprise rule")
    });
    let education = EDUCATION.get_or_init(|| {
        regex::Regex::new(r"(?i)(betreib|unterhalt|träger (einer|eines|von|der|des)(?-u:\b))[^.;]{0,60}?(schule(?-u:\b)|schulen(?-u:\b)|bildungsstätte|bildungszentr|ausbildungszentr|akademie|kita(?-u:\b)|kitas(?-u:\b)|kindertagesstätte|kindergarten)|schulträger|kita-?träger|bildungsträger|weiterbildungsträger|qualifizierungsträger|erwachsenenbildung|volkshochschul|bildungswerk|(?-u:\b)(we run|we operate|runs|operates|operating|running)(?-u:\b)[^.;]{0,60}?((?-u:\b)schools?(?-u:\b)|training (centre|center)|academy|kindergarten|day-care cent|nursery)|adult education|training provider|education provider")
            .expect("valid education rule")
    });
    let schools = SCHOOLS.get_or_init(|| {
        regex::Regex::new(r"(?i)schule|(?-u:\b)kitas?(?-u:\b)|kindertages|kindergärten|kindergarten|bildungseinrichtung|(?-u:\b)schools?(?-u:\b)|day-care|nurser(y|ies)")
            .expect("valid school rule")
    });
    use ApplicantType::{
        Company, EducationInstitution, Municipality, ResearchInstitution, University,
    };
    let texts = || name.into_iter().chain(std::iter::once(description));
    let mut out = Vec::new();
    if types.contains(&Municipality) && own_enterprise.is_match(description) {
        out.push(Company);
    }
    if texts().any(|t| education.is_match(t))
        || (types.contains(&Municipality) && schools.is_match(description))
    {
        out.push(EducationInstitution);
    }
    if types.contains(&University) {
        out.push(ResearchInstitution);
    }
    out
}

fn academic_rule() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)hochschul|universität|(?-u:\b)uni(?-u:\b)|(?-i:(?-u:\b)(TU|FH|HAW|KIT|RWTH|LMU)(?-u:\b))|universit(y|ies)|forschungseinrichtung|forschungsinstitut|research (institute|institution|centre|center)|ausgründung|spin-?offs?(?-u:\b)|promoviert|promovierend|doktorand|doctoral|(?-u:\b)ph\.?d(?-u:\b)|absolvent|(?-u:\b)graduates?(?-u:\b)|wissenschaftliche[rn]? mitarbeiter")
            .expect("valid academic rule")
    })
}

/// The first number of a free-text head count: "1.300" and "1,300" are 1300 (a separator
/// followed by three digits groups thousands), "2 Teilzeit" is 2, "250–300" is 250.
pub fn parse_headcount(s: &str) -> Option<u32> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let rest = &s[start..];
    let mut digits = String::new();
    for (i, c) in rest.char_indices() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else if matches!(c, '.' | ',') {
            let group: String = rest[i + 1..].chars().take(4).collect();
            let three = group.chars().take(3).all(|d| d.is_ascii_digit())
                && group.chars().count() >= 3
                && !group.chars().nth(3).is_some_and(|d| d.is_ascii_digit());
            if !three {
                break;
            }
        } else {
            break;
        }
    }
    digits.parse().ok()
}

/// Parses a free-text euro amount: "50.000 EUR", "50000", "1,5 Mio. €", "200k".
pub fn parse_amount(s: &str) -> Option<f64> {
    let lower = s.to_lowercase();
    let factor = if lower.contains("mio") || lower.contains("million") {
        1e6
    } else if lower.contains("tsd") || lower.contains("tausend") || lower.trim_end().ends_with('k')
    {
        1e3
    } else {
        1.0
    };
    let num: String = lower
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .collect();
    if num.is_empty() {
        return None;
    }
    // German notation: "." groups thousands, "," is the decimal separator.
    let normalized = if num.contains(',') {
        num.replace('.', "").replace(',', ".")
    } else if num.matches('.').count() == 1 && num.split('.').nth(1).is_some_and(|d| d.len() != 3) {
        num
    } else {
        num.replace('.', "")
    };
    normalized
        .parse::<f64>()
        .ok()
        .map(|v| v * factor)
        .filter(|v| v.is_finite() && *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts() {
        assert_eq!(parse_amount("50.000 EUR"), Some(50_000.0));
        assert_eq!(parse_amount("50000"), Some(50_000.0));
        assert_eq!(parse_amount("1,5 Mio. €"), Some(1_500_000.0));
        assert_eq!(parse_amount("200k"), Some(200_000.0));
        assert_eq!(parse_amount("ca. 12.5"), Some(12.5));
        assert_eq!(parse_amount("unbekannt"), None);
    }

    #[test]
    fn head_counts() {
        assert_eq!(parse_headcount("1300"), Some(1300));
        assert_eq!(parse_headcount("rund 1.300 Beschäftigte"), Some(1300));
        assert_eq!(parse_headcount("1,300 staff"), Some(1300));
        assert_eq!(parse_headcount("2 Teilzeit"), Some(2));
        assert_eq!(
            parse_headcount("0 (Chorleiterin auf Honorarbasis)"),
            Some(0)
        );
        assert_eq!(parse_headcount("250–300"), Some(250));
        assert_eq!(parse_headcount("12.5"), Some(12));
        assert_eq!(parse_headcount("keine"), None);
    }

    #[test]
    fn type_errors_name_the_field() {
        let e = MatchInput::from_value(serde_json::json!({
            "organization_id": "x",
            "organization_profile": {"description": "d", "regions": "Bayern"}
        }))
        .unwrap_err();
        assert!(
            e.to_string().contains("organization_profile.regions"),
            "{e}"
        );
    }

    #[test]
    fn needs_are_the_topic_words_else_the_sentences() {
        let texts = [
            "Wir sanieren unser Vereinsheim energetisch. Kurz. Wir suchen Geld für Ferienfreizeiten. \
             Wir brauchen Zuschüsse; Kredite können wir nicht tragen.",
            "Integration von Geflüchteten durch Sport",
        ];
        let keywords = |ks: &[&str]| ks.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert_eq!(
            needs_of(
                &keywords(&["Solaranlage", "Ferienfreizeit", "solaranlage"]),
                &texts
            ),
            ["Solaranlage", "Ferienfreizeit"]
        );
        assert_eq!(
            needs_of(&[], &texts),
            [
                "Wir sanieren unser Vereinsheim energetisch.",
                "Wir suchen Geld für Ferienfreizeiten.",
                "Integration von Geflüchteten durch Sport",
            ]
        );
        // A sentence naming funding instruments says how, not what for: no need.
        assert!(names_instrument(
            "We would prefer grants, but a loan is possible."
        ));
        assert!(!names_instrument(texts[1]));
        // A sentence of size or history alone says who, not what for: no need.
        assert!(only_who("Wir haben 380 Mitglieder und 60 Ehrenamtliche."));
        assert!(only_who(
            "The business was founded in 2019 and has four permanent staff."
        ));
        assert!(!only_who(
            "Mit unseren 12 Mitarbeitern wollen wir eine Halle bauen."
        ));
        // A sentence that joins several needs (", and") gives one need per clause; a
        // bare comma does not split, and a part of four words stays joined.
        assert_eq!(
            needs_of(
                &[],
                &["We make die-cast parts near Heilbronn, Baden-Württemberg, with 260 employees. \
                   We want to develop lightweight castings with a research institute, replace \
                   our gas-fired furnaces with induction furnaces, and retrain our operators \
                   for the new processes."]
            ),
            [
                "We want to develop lightweight castings with a research institute, replace \
                 our gas-fired furnaces with induction furnaces",
                "and retrain our operators for the new processes.",
            ]
        );
        assert_eq!(
            clauses(
                "Wir wollen eine Wasch-, Pack- und Kühlhalle bauen, damit wir Schulkantinen, \
                 Kitas und den Handel beliefern können; dafür brauchen wir eine Förderung."
            ),
            [
                "Wir wollen eine Wasch-, Pack- und Kühlhalle bauen, damit wir Schulkantinen, \
                 Kitas und den Handel beliefern können",
                " dafür brauchen wir eine Förderung.",
            ]
        );
        // One sentence is the whole profile: no needs of its own.
        assert!(needs_of(&[], &[texts[1]]).is_empty());
        let many: Vec<String> = (0..20).map(|i| format!("Thema {i}")).collect();
        assert_eq!(needs_of(&many, &texts).len(), MAX_NEEDS);
    }
}
