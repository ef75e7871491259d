//! Per-partner AI qualification and custom categories, with the local model and rules.
//!
//! ## Qualification
//! A partner describes in free German or English text which programmes fit its users
//! ("Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit nutzen können;
//! keine Kredite"). [`QualificationPrompt::parse`] reads the constraints that map onto
//! catalogue facts and applies them as rules:
//!
//! - **regions** — Land (or country/continent) names, also adjectives ("sächsische") and
//!   multi-word names ("Sachsen-Anhalt"): a grant fits when one of its regions is the
//!   named region, lies inside it or contains it (national and EU programmes apply to a
//!   Land), as in partner scopes;
//! - **eligible entities** — names, plurals and aliases of the vocabulary ("Vereine",
//!   "e.V.", "Kommunen", "Gemeinden") plus company words ("KMU", "Unternehmen",
//!   "Start-ups", "Mittelstand") that stand for every company form: a grant with known
//!   eligible entities fits when it shares one; grants without eligibility data fit;
//! - **grant type** — "keine Kredite/Darlehen", "keine Bürgschaften", "keine
//!   Beteiligungen" exclude a type, "nur Zuschüsse" allows only that type (a negation
//!   or "nur" governs the grant-type words that follow it in the same clause);
//! - **non-profit** — "gemeinnützig", "non-profit", "NGO": grants whose known eligible
//!   entities are only companies, freelancers or private persons do not fit.
//!
//! The rest of the prompt (without constraint and filler words) is its **topic**. It
//! is embedded as an e5 `query: ` and compared with every grant's passage vector. The
//! threshold is relative to the catalogue: cosines of all grants give a mean and a
//! standard deviation, and a grant's z-score decides — z ≥ [`TOPIC_Z_STRONG`] (about
//! the top 7 % of the catalogue) alone, or z ≥ [`TOPIC_Z_WEAK`] (about the top 30 %)
//! together with at least one topic keyword found in the grant's title or texts
//! ([`crate::text::analyze`] terms, compounds included). Only specific words count as
//! keywords: a word found in more than [`MAX_KEYWORD_SHARE`] of the catalogue
//! ("Projekt", "Förderung") is no evidence of a topic. A prompt without topic words
//! decides by the rules alone. A grant whose title restricts it to a sector
//! ([`crate::facts::sector`]) the topic does not speak of, while the topic speaks of
//! others, fits only at z ≥ [`TOPIC_Z_STRONG`] (care providers' "Ausbildung" is no
//! evidence for "Ausbildungsplatzförderung in der Seeschifffahrt"; `other_sectors`).
//! A loan, guarantee, equity or investment grant open to any topic
//! (`finances_any_topic`) fits any topic when the programme names the users as
//! applicants. A grant is qualified when every rule and the topic fit.
//! For an English prompt the German terms of its topic ([`crate::glossary`]) join the
//! topic's embedding and its keywords. A partner can correct the reading
//! ([`QualificationRules`], `--rules-file`); [`QualificationPrompt::read`] applies it.
//!
//! The reasoning is two or three German sentences built from facts only: the decisive
//! rule facts (region, grant type, eligibility, non-profit), the similarity (cosine and
//! catalogue percentile) and the keywords found. Programme texts are never quoted or
//! paraphrased.
//!
//! ## Custom categories
//! Each category's "name. description. keywords" is embedded as a query and compared with
//! every grant (z-scores over the catalogue as above); so is each of its keywords on its
//! own, and a grant's z is 0.7 × the whole text's + 0.3 × its best keyword's
//! ([`CATEGORY_KEYWORD_SHARE`]: a programme that fits one keyword well is not lost in
//! the average of a long description). A category is assigned when
//! z ≥ [`CATEGORY_Z_STRONG`], or a keyword (an explicit keyword phrase, else a part of the
//! name) occurs in the grant's title or short description, or z ≥ [`CATEGORY_Z_WEAK`]
//! and a keyword occurs in the full text. Multi-label: any number per grant. A category
//! whose name stands for repayable or equity instruments ("Kredite & Bürgschaften",
//! "Beteiligungskapital", "Venture capital") is a question of the funding instrument, not
//! of the topic: the grant type decides, or a keyword in the title or short description.
//! A category's description is read like a prompt for what it rules out: a programme
//! whose kind it excludes ("reine Forschungsförderung zählt nicht"), or whose stated
//! applicants are all of types it excludes ("Programme, die sich ausschließlich an
//! Unternehmen richten, zählen nicht"), does not get it.
//! Likewise a category named for a programme kind ("Forschung & Entwicklung", "Beratung",
//! "Preise & Stipendien", "Investitionen", "Infrastruktur"): the programme's kind
//! ([`crate::facts`]) decides, or a keyword in the title or short description.
//!
//! All thresholds were fixed before measuring (see the README for the measurements).
//!
//! Files: `prompt.rs` reads a prompt (clauses, negations, rules, topic), `rules.rs`
//! applies a partner's corrections to the reading, `categories.rs` assigns custom
//! categories; this file holds the types, the assessment and its reasoning.

use std::collections::{BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::facts::sector::Sector;
use crate::facts::{ApplicantType, ProgrammeKind, Source};
use crate::model::{Grant, GrantType, RegionType};
use crate::text::analyze;
use crate::vectors::{dot, grant_text, GrantVectors};
use crate::Engine;

mod categories;
mod prompt;
mod rules;
pub use categories::{categorize, category_text};
pub(crate) use prompt::grant_type_of_word;
pub use rules::QualificationRules;

/// Version of the method: stored with results so that a change re-assesses them (27: the
/// grant facts it reads — forestry and fisheries as sectors, applicants read from a
/// funder's sentence).
pub const METHOD_VERSION: u32 = 27;

/// z-score of the topic similarity that qualifies on its own (≈ top 7 %).
pub const TOPIC_Z_STRONG: f32 = 1.5;
/// z-score of the topic similarity that qualifies with a keyword hit (≈ top 30 %).
pub const TOPIC_Z_WEAK: f32 = 0.5;
/// z-score of the topic similarity that qualifies when the programme states that the
/// prompt's users may apply.
pub const TOPIC_Z_CONFIRMED: f32 = 0.0;
/// z-score of the similarity to one list item of the prompt ("Radwege") that fits the
/// topic on its own.
pub const TOPIC_ITEM_Z: f32 = 2.5;
/// A topic word found in more than this share of the catalogue's grants ("Projekt",
/// "Förderung", "Unternehmen") is no evidence of the topic and counts as no keyword hit.
pub const MAX_KEYWORD_SHARE: f32 = 0.10;
/// Longest analysed topic term that counts as no keyword evidence when it names an
/// applicant type (method version 17; v3: macro-F1 0.652 → 0.667, v2's tuning half
/// unchanged).
pub const APPLICANT_TERM_MAX_CHARS: usize = 8;
/// z-score of a category's similarity that assigns it on its own (≈ top 4 %).
pub const CATEGORY_Z_STRONG: f32 = 1.75;
/// How far below the best z of the set's other categories a category's z may lie and
/// still assign it by similarity alone: an English "Health & life sciences" category is
/// close to every research call, but a call on e-mobility is closer to "R&D funding".
/// 0.25 / 0.5 / 1.0 / 1.5 / none on the tuning halves: macro-F1 A 0.817 / 0.826 / 0.826 /
/// 0.826 / 0.826, B 0.647 / 0.647 / 0.647 / 0.647 / 0.641, C 0.740 / 0.740 / 0.732 / 0.729 /
/// 0.727.
pub const CATEGORY_Z_MARGIN: f32 = 0.5;
/// z-score that assigns a category together with a keyword in the full text.
pub const CATEGORY_Z_WEAK: f32 = 0.75;
/// [`CATEGORY_Z_STRONG`] for a category written in English: its similarity to German
/// programme texts spreads less, and its keywords rarely occur in them.
pub const CATEGORY_Z_STRONG_EN: f32 = 1.0;
/// Share of the best keyword's z in a category's z (0.2–0.4 gave the same macro-F1 on the
/// tuning halves; see the README).
pub const CATEGORY_KEYWORD_SHARE: f32 = 0.3;
/// z-score of the similarity to an excluded topic that rules a grant out, when the grant
/// is also closer to it than to the prompt's own topic.
pub const EXCLUDED_TOPIC_Z: f32 = 2.0;

/// A qualification prompt read into rules plus a topic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QualificationPrompt {
    /// The prompt as written.
    pub text: String,
    /// Regions named (catalogue indices); empty = any region.
    pub regions: Vec<Idx>,
    /// Eligible entities named (catalogue indices); empty = any applicant.
    pub entities: Vec<Idx>,
    /// Grant types allowed only ("nur Zuschüsse"); empty = no such restriction.
    pub only_types: Vec<GrantType>,
    /// Grant types excluded ("keine Kredite").
    pub excluded_types: Vec<GrantType>,
    /// `Some(true)` when the users are non-profit ("gemeinnützig").
    pub non_profit: Option<bool>,
    /// The remaining topic text of the inclusion sentences (empty = none).
    pub topic: String,
    /// Applicant types the prompt's users are (from its inclusion sentences).
    #[serde(default)]
    pub applicant_types: Vec<ApplicantType>,
    /// Applicant types named only in exclusion sentences ("Programme, die nur
    /// Unternehmen offenstehen").
    #[serde(default)]
    pub excluded_applicant_types: Vec<ApplicantType>,
    /// Programme kinds ruled out ("Reine Forschungsförderung reicht nicht aus",
    /// "Stipendien und Preise").
    #[serde(default)]
    pub excluded_kinds: Vec<ProgrammeKind>,
    /// Topics ruled out: the list items of the exclusion sentences.
    #[serde(default)]
    pub excluded_topics: Vec<String>,
    /// The list items of the inclusion sentences ("z. B. Straßen, Radwege und ÖPNV"):
    /// a programme that serves one of them well fits the topic.
    #[serde(default)]
    pub topic_items: Vec<String>,
    /// Programme levels ruled out: "Landesprogramme zählen nicht", or every other level
    /// for "nur Bundesprogramme" / "only EU programmes". Regions cannot say this: a
    /// national programme also applies in every Land.
    #[serde(default)]
    pub excluded_levels: Vec<ProgrammeLevel>,
}

/// The level of a programme, from the type of its regions: an EU programme (a
/// continent), a federal one (the country), a state one (a Land).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgrammeLevel {
    Eu,
    Federal,
    State,
}

impl ProgrammeLevel {
    pub const ALL: [ProgrammeLevel; 3] = [Self::Eu, Self::Federal, Self::State];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eu => "eu",
            Self::Federal => "federal",
            Self::State => "state",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s.trim())
    }

    /// The level of grant `g`: its widest region's; `None` without regions.
    pub fn of_grant(cat: &Catalogue, g: Idx) -> Option<Self> {
        cat.grant_regions(g)
            .iter()
            .map(|&r| match cat.regions[r as usize].region_type {
                RegionType::Continent => Self::Eu,
                RegionType::Country => Self::Federal,
                RegionType::State => Self::State,
            })
            .min()
    }
}

/// The decision for one grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qualification {
    pub qualified: bool,
    /// Two or three German sentences citing the deciding facts.
    pub reasoning: String,
}

/// A partner's category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomCategory {
    pub id: Uuid,
    /// German, canonical.
    pub name: String,
    pub name_en: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
}

impl CustomCategory {
    /// A category from user input, trimmed: names are required, an empty description is
    /// none, empty keywords are dropped. The one normalisation of the CLI, the server
    /// and the Python module, so that all assign alike.
    pub fn new(
        id: Uuid,
        name: &str,
        name_en: &str,
        description: Option<&str>,
        keywords: &[String],
    ) -> std::result::Result<Self, String> {
        let (name, name_en) = (name.trim(), name_en.trim());
        if name.is_empty() || name_en.is_empty() {
            return Err("a category needs a German name and an English name".into());
        }
        Ok(CustomCategory {
            id,
            name: name.to_string(),
            name_en: name_en.to_string(),
            description: description
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            keywords: keywords
                .iter()
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect(),
        })
    }
}

/// German label of a grant type (singular, plural).
fn type_label(t: GrantType) -> (&'static str, &'static str) {
    let plural = match t {
        GrantType::Subsidy => "Zuschüsse",
        GrantType::Loan => "Kredite",
        GrantType::Guarantee => "Bürgschaften",
        GrantType::Equity => "Beteiligungen",
    };
    (t.label_de(), plural)
}

/// Similarity of a query to every grant: cosines, their mean, standard deviation and
/// sorted copy (for percentiles).
struct Similarity {
    cos: Vec<f32>,
    mean: f32,
    std: f32,
    sorted: Vec<f32>,
}

impl Similarity {
    fn new(vectors: &GrantVectors, query: &[f32]) -> Self {
        let q = crate::vectors::normalized(query);
        let cos: Vec<f32> = (0..vectors.len())
            .map(|i| dot(vectors.row(i), &q))
            .collect();
        let n = cos.len().max(1) as f32;
        let mean = cos.iter().sum::<f32>() / n;
        let var = cos.iter().map(|c| (c - mean) * (c - mean)).sum::<f32>() / n;
        let mut sorted = cos.clone();
        sorted.sort_by(f32::total_cmp);
        Similarity {
            cos,
            mean,
            std: var.sqrt().max(1e-6),
            sorted,
        }
    }

    fn z(&self, g: Idx) -> f32 {
        (self.cos[g as usize] - self.mean) / self.std
    }

    /// Share of the catalogue (in %) with a lower cosine than `g`.
    fn percentile(&self, g: Idx) -> u32 {
        let c = self.cos[g as usize];
        let below = self.sorted.partition_point(|x| *x < c);
        (100.0 * below as f32 / self.sorted.len().max(1) as f32).floor() as u32
    }
}

fn vectors_for<'a>(engine: &'a Engine, embedder: &Embedder) -> Result<&'a GrantVectors> {
    let v = engine.vectors().ok_or_else(|| {
        Error::Model("the catalogue has no embeddings: import it with the model available".into())
    })?;
    if v.model_id != embedder.model_id() {
        return Err(Error::Model(format!(
            "the catalogue was embedded with {} but the loaded model is {}; re-import the catalogue",
            v.model_id,
            embedder.model_id()
        )));
    }
    Ok(v)
}

/// The analysed terms of a grant's title + short description, and of its full text.
fn grant_terms(g: &Grant) -> (HashSet<String>, HashSet<String>) {
    let mut head = g.title.clone();
    if let Some(s) = &g.short_description {
        head.push(' ');
        head.push_str(s);
    }
    let head_terms: HashSet<String> = analyze(&head).into_iter().collect();
    let mut all: HashSet<String> = analyze(&grant_text(g)).into_iter().collect();
    all.extend(head_terms.iter().cloned());
    (head_terms, all)
}

/// A term occurs among `terms`: exactly, or (5+ characters) inside a compound.
fn term_in(term: &str, terms: &HashSet<String>) -> bool {
    terms.contains(term) || (term.len() >= 5 && terms.iter().any(|t| t.contains(term)))
}

/// German decimal.
fn de(x: f32) -> String {
    format!("{x:.2}").replace('.', ",")
}

/// The outcome of one rule for one grant: passed?, the fact sentence part.
struct RuleFact {
    ok: bool,
    fact: String,
}

/// The language of a prompt's reasoning: English for prompts written in English.
#[derive(Debug, Clone, Copy)]
struct Lang {
    en: bool,
}

impl Lang {
    fn of(p: &QualificationPrompt) -> Self {
        Lang {
            en: crate::profile::text_language(&p.text) == crate::profile::Locale::En,
        }
    }

    fn pick(self, de: &str, en: &str) -> String {
        if self.en { en } else { de }.to_string()
    }

    fn join(self, items: &[String]) -> String {
        match items.len() {
            0 => String::new(),
            1 => items[0].clone(),
            n => format!(
                "{} {} {}",
                items[..n - 1].join(", "),
                if self.en { "and" } else { "und" },
                items[n - 1]
            ),
        }
    }

    fn regions(self, cat: &Catalogue, rs: &[Idx]) -> String {
        let names: Vec<String> = rs
            .iter()
            .map(|&r| {
                let r = &cat.regions[r as usize];
                if self.en { &r.name_en } else { &r.name_de }.clone()
            })
            .collect();
        self.join(&names)
    }

    /// At most four names; more are "weitere" / "others" (the caller puts the ones that
    /// matter first).
    fn applicants(self, ts: &[ApplicantType]) -> String {
        let mut names: Vec<String> = ts
            .iter()
            .take(4)
            .map(|t| if self.en { t.label_en() } else { t.plural_de() }.to_string())
            .collect();
        if ts.len() > 4 {
            names.push(self.pick("weitere", "others"));
        }
        self.join(&names)
    }

    fn grant_type(self, t: GrantType) -> (&'static str, &'static str) {
        if !self.en {
            return type_label(t);
        }
        match t {
            GrantType::Subsidy => ("grant", "grants"),
            GrantType::Loan => ("loan", "loans"),
            GrantType::Guarantee => ("guarantee", "guarantees"),
            GrantType::Equity => ("equity", "equity"),
        }
    }

    fn kind(self, k: ProgrammeKind) -> &'static str {
        if self.en {
            k.label_en()
        } else {
            k.label_de()
        }
    }

    fn num(self, x: f32) -> String {
        if self.en {
            format!("{x:.2}")
        } else {
            de(x)
        }
    }
}

fn region_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    if p.regions.is_empty() {
        return None;
    }
    let wanted = l.regions(cat, &p.regions);
    let grant_regions = cat.grant_regions(g);
    if grant_regions.is_empty() {
        return Some(RuleFact {
            ok: true,
            fact: l.pick(
                "das Programm hat keine Regionsangabe",
                "the programme names no region",
            ),
        });
    }
    let names = l.regions(cat, grant_regions);
    let related = grant_regions.iter().any(|&gr| {
        p.regions
            .iter()
            .any(|&w| cat.region_within(gr, w) || cat.region_within(w, gr))
    });
    if !related {
        return Some(RuleFact {
            ok: false,
            fact: if l.en {
                format!("the programme applies in {names}, not in {wanted}")
            } else {
                format!("das Programm gilt in {names}, nicht in {wanted}")
            },
        });
    }
    let exact = grant_regions
        .iter()
        .any(|&gr| p.regions.iter().any(|&w| cat.region_within(gr, w)));
    Some(RuleFact {
        ok: true,
        fact: match (exact, l.en) {
            (true, false) => format!("das Programm gilt in {names}"),
            (true, true) => format!("the programme applies in {names}"),
            (false, false) => format!("das Programm gilt in {names} und damit auch in {wanted}"),
            (false, true) => format!("the programme applies in {names} and thus in {wanted}"),
        },
    })
}

/// The funding-type rule, on the grant's funding instrument (a loan whose title says so
/// even where the record calls it a subsidy).
fn type_rule(t: GrantType, p: &QualificationPrompt, l: Lang) -> Option<RuleFact> {
    if p.only_types.is_empty() && p.excluded_types.is_empty() {
        return None;
    }
    let (label, plural) = l.grant_type(t);
    if p.excluded_types.contains(&t) {
        return Some(RuleFact {
            ok: false,
            fact: if l.en {
                format!("funding type {label}; {plural} are excluded")
            } else {
                format!("Förderart {label}, {plural} sind ausgeschlossen")
            },
        });
    }
    if !p.only_types.is_empty() && !p.only_types.contains(&t) {
        let allowed: Vec<String> = p
            .only_types
            .iter()
            .map(|&o| l.grant_type(o).1.to_string())
            .collect();
        let allowed = l.join(&allowed);
        return Some(RuleFact {
            ok: false,
            fact: if l.en {
                format!("funding type {label}; only {allowed} are wanted")
            } else {
                format!("Förderart {label}, gewünscht sind nur {allowed}")
            },
        });
    }
    Some(RuleFact {
        ok: true,
        fact: if l.en {
            format!("funding type {label}")
        } else {
            format!("Förderart {label}")
        },
    })
}

/// Who may apply, on the grant's facts: with users named, a grant whose stated
/// applicants (record or programme text) include none of them fails; with only
/// excluded types named, a grant open only to those fails. Guessed applicants decide
/// nothing (the topic does).
fn applicant_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    if p.applicant_types.is_empty() && p.excluded_applicant_types.is_empty() {
        return None;
    }
    let Some(fact) = cat.facts(g).applicants.as_ref() else {
        return Some(RuleFact {
            ok: true,
            fact: l.pick(
                "zu den Antragsberechtigten liegen keine Angaben vor",
                "nothing is known about who may apply",
            ),
        });
    };
    if fact.source == Source::Derived {
        return Some(RuleFact {
            ok: true,
            fact: if l.en {
                format!(
                    "who may apply is only inferred from similar programmes ({})",
                    l.applicants(&fact.value)
                )
            } else {
                format!(
                    "die Antragsberechtigten sind nur aus ähnlichen Programmen abgeleitet ({})",
                    l.applicants(&fact.value)
                )
            },
        });
    }
    let source = match (fact.source, l.en) {
        (Source::Text, false) => "laut Programmtext ",
        (Source::Text, true) => " according to the programme text",
        (_, false) => "laut Programmdaten ",
        (_, true) => " according to the programme data",
    };
    let ok = if p.applicant_types.is_empty() {
        !fact
            .value
            .iter()
            .all(|t| p.excluded_applicant_types.contains(t))
    } else {
        fact.value.iter().any(|t| p.applicant_types.contains(t))
    };
    let quote = match (&fact.evidence, fact.source) {
        (Some(e), Source::Text) if e.chars().count() <= 160 => format!(" („{e}“)"),
        _ => String::new(),
    };
    // The prompt's users first: a list cut at four never hides the type that decided.
    let mut types = fact.value.clone();
    types.sort_by_key(|t| !p.applicant_types.contains(t));
    let names = l.applicants(&types);
    let users = l.applicants(if p.applicant_types.is_empty() {
        &p.excluded_applicant_types
    } else {
        &p.applicant_types
    });
    Some(RuleFact {
        ok,
        fact: match (ok, l.en) {
            (true, false) => format!("antragsberechtigt sind {source}{names}{quote}"),
            (true, true) => format!("eligible applicants{source} are {names}{quote}"),
            (false, false) => {
                format!("antragsberechtigt sind {source}{names}{quote}, nicht {users}")
            }
            (false, true) => format!("eligible applicants{source} are {names}{quote}, not {users}"),
        },
    })
}

/// A programme for those who support companies or founders
/// ([`crate::facts::GrantFacts::only_supports`]: "Wenn Sie kleine und mittlere
/// Unternehmen … unterstützen, können Sie …") fails a prompt whose users are only such:
/// they benefit from someone else's project, their own is not funded.
fn supported_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    let facts = cat.facts(g);
    if !facts.only_supports(&p.applicant_types) {
        return None;
    }
    let supported = facts.supported.as_ref()?;
    let names = l.applicants(&supported.value);
    let quote = supported
        .evidence
        .as_ref()
        .filter(|e| e.chars().count() <= 160)
        .map_or(String::new(), |e| format!(" („{e}“)"));
    Some(RuleFact {
        ok: false,
        fact: if l.en {
            format!("according to the programme text it funds those who support {names}{quote}, not their own projects")
        } else {
            format!("laut Programmtext fördert es, wer {names} unterstützt{quote}, nicht deren eigene Vorhaben")
        },
    })
}

/// Programme kinds the prompt rules out (research calls, prizes and scholarships …).
fn kind_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    if p.excluded_kinds.is_empty() {
        return None;
    }
    let k = cat.facts(g).kind.value;
    let excluded = p.excluded_kinds.contains(&k);
    Some(RuleFact {
        ok: !excluded,
        fact: match (excluded, l.en) {
            (true, false) => format!("es ist eine {}, die ausgeschlossen ist", l.kind(k)),
            (true, true) => format!("it is {}, which is excluded", l.kind(k)),
            (false, false) => format!("Programmart {}", l.kind(k)),
            (false, true) => format!("kind of programme: {}", l.kind(k)),
        },
    })
}

/// A programme whose title restricts it to residential buildings ("Energieberatung für
/// Wohngebäude") for a prompt that does not speak of housing (a portal of craft
/// businesses that want to save energy): it serves owners of homes, however near its
/// topic. Only this sector: the others (health, tourism, media …) name industries a
/// prompt's population may include without naming them (all sectors: v2 tuning half
/// 0.843 → 0.825, v3 0.610 → 0.667; residential only: 0.843, 0.636; see the README).
fn sector_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    use crate::facts::sector::{in_profile, Sector};
    let housing_only = cat.facts(g).sectors.contains(&Sector::Housing);
    if !housing_only || in_profile(&p.text).contains(&Sector::Housing) {
        return None;
    }
    Some(RuleFact {
        ok: false,
        fact: l.pick(
            "das Programm gilt nur für Wohngebäude und Wohnraum, die der Prompt nicht nennt",
            "the programme is only for residential buildings and housing, which the prompt does not name",
        ),
    })
}

/// Programme levels the prompt rules out ("nur Bundesprogramme", "no state programmes").
fn level_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    if p.excluded_levels.is_empty() {
        return None;
    }
    let level = ProgrammeLevel::of_grant(cat, g)?;
    let name = match (level, l.en) {
        (ProgrammeLevel::Eu, false) => "ein EU-Programm",
        (ProgrammeLevel::Federal, false) => "ein Bundesprogramm",
        (ProgrammeLevel::State, false) => "ein Landesprogramm",
        (ProgrammeLevel::Eu, true) => "an EU programme",
        (ProgrammeLevel::Federal, true) => "a federal programme",
        (ProgrammeLevel::State, true) => "a state programme",
    };
    let excluded = p.excluded_levels.contains(&level);
    Some(RuleFact {
        ok: !excluded,
        fact: match (excluded, l.en) {
            (true, false) => format!("es ist {name}, und solche Programme sind ausgeschlossen"),
            (true, true) => format!("it is {name}, and such programmes are excluded"),
            (false, false) => format!("es ist {name}"),
            (false, true) => format!("it is {name}"),
        },
    })
}

fn non_profit_rule(cat: &Catalogue, p: &QualificationPrompt, g: Idx, l: Lang) -> Option<RuleFact> {
    if p.non_profit != Some(true) {
        return None;
    }
    let grant = &cat.grants[g as usize];
    if grant.non_profit_only == Some(true) {
        return Some(RuleFact {
            ok: true,
            fact: l.pick(
                "das Programm ist gemeinnützigen Trägern vorbehalten",
                "the programme is reserved for non-profit organisations",
            ),
        });
    }
    use ApplicantType::{Company, Founder, PrivatePerson};
    let only_for_profit = cat.facts(g).applicants.as_ref().is_some_and(|f| {
        f.source != Source::Derived
            && f.value
                .iter()
                .all(|t| matches!(t, Company | Founder | PrivatePerson))
    });
    Some(if only_for_profit {
        RuleFact {
            ok: false,
            fact: l.pick(
                "es richtet sich nur an Unternehmen, Selbstständige oder Privatpersonen, nicht an gemeinnützige Träger",
                "it is open only to companies, the self-employed or private individuals, not to non-profit organisations",
            ),
        }
    } else {
        RuleFact {
            ok: true,
            fact: l.pick(
                "gemeinnützige Träger sind nicht ausgeschlossen",
                "non-profit organisations are not excluded",
            ),
        }
    })
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Qualifies grants for a prompt. Grants are given by index; the order is kept.
pub fn qualify(
    engine: &Engine,
    embedder: &Embedder,
    prompt: &QualificationPrompt,
    grant_ids: &[Idx],
) -> Result<Vec<(Idx, Qualification)>> {
    let cat = &engine.catalogue;
    let english = crate::profile::text_language(&prompt.text) == crate::profile::Locale::En;
    let topic = if prompt.topic.is_empty() {
        None
    } else {
        let vectors = vectors_for(engine, embedder)?;
        // An English prompt's topic also speaks through its German glossary terms.
        let german = if english {
            crate::glossary::translate(&prompt.topic)
        } else {
            Vec::new()
        };
        let q = crate::glossary::embed_bilingual(
            embedder,
            &prompt.topic,
            &german,
            crate::glossary::GERMAN_TERMS_WEIGHT,
        )?;
        let mut terms: Vec<String> = analyze(&prompt.topic);
        terms.extend(german.iter().flat_map(|t| analyze(t)));
        let mut seen = HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        let mut specific = Vec::with_capacity(terms.len());
        for t in terms {
            if engine.term_share(&t)? <= MAX_KEYWORD_SHARE {
                specific.push(t);
            }
        }
        specific.retain(|t| !names_applicants(t));
        Some(Topic {
            sim: Similarity::new(vectors, &q),
            terms: specific,
            sectors: topic_sectors(prompt),
        })
    };
    let mut items = Vec::new();
    for item in &prompt.topic_items {
        let vectors = vectors_for(engine, embedder)?;
        let q = embedder.embed_query(item)?;
        items.push((item.clone(), Similarity::new(vectors, &q)));
    }
    let mut excluded = Vec::new();
    for item in &prompt.excluded_topics {
        let vectors = vectors_for(engine, embedder)?;
        // An English prompt's excluded topic also speaks through its German glossary
        // terms, as its topic does: "elite sport funding" is "Spitzensport" in the texts.
        let (q, german) = if english {
            let german = crate::glossary::translate(item);
            let q = crate::glossary::embed_bilingual(
                embedder,
                item,
                &german,
                crate::glossary::GERMAN_TERMS_WEIGHT,
            )?;
            // Each phrase's specific terms, as for the item's own words ("Förderung" of
            // "Spitzensport Förderung" names nearly every programme).
            let mut phrases: Vec<Vec<String>> = Vec::new();
            for p in crate::glossary::german_phrases(item) {
                let mut terms = Vec::new();
                for t in analyze(&p) {
                    if engine.term_share(&t)? <= MAX_KEYWORD_SHARE && !terms.contains(&t) {
                        terms.push(t);
                    }
                }
                if !terms.is_empty() && !phrases.contains(&terms) {
                    phrases.push(terms);
                }
            }
            (q, phrases)
        } else {
            (embedder.embed_query(item)?.to_vec(), Vec::new())
        };
        let mut terms = Vec::new();
        for t in analyze(item) {
            if engine.term_share(&t)? <= MAX_KEYWORD_SHARE && !terms.contains(&t) {
                terms.push(t);
            }
        }
        excluded.push(ExcludedTopic {
            text: item.clone(),
            sim: Similarity::new(vectors, &q),
            terms,
            german,
        });
    }
    Ok(grant_ids
        .iter()
        .map(|&g| {
            (
                g,
                qualify_one(cat, prompt, topic.as_ref(), &items, &excluded, g),
            )
        })
        .collect())
}

/// A short analysed term that names applicants ("kommun", "stadt", "betrieb", "verein")
/// says who applies — the applicant rule's business — not what for, so it is no keyword
/// evidence of the topic; longer ones are compounds with a topic ("vereinsheim",
/// "unternehmensnachfolg").
fn names_applicants(term: &str) -> bool {
    term.chars().count() <= APPLICANT_TERM_MAX_CHARS
        && !crate::facts::applicant_words(term).is_empty()
}

/// The prompt's topic names research itself.
fn names_research(topic: &str) -> bool {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)\bresearch\b|forschung|\bf&e\b|\bfue\b|\br&d\b")
            .expect("valid research pattern")
    })
    .is_match(topic)
}

/// The prompt's topic: its similarity to every grant, its specific words and the
/// sectors it speaks of.
struct Topic {
    sim: Similarity,
    terms: Vec<String>,
    /// Read from the topic and its listed items only, not from the exclusions ("nicht
    /// passend sind Programme für Kindertagesstätten" speaks of no users in childcare).
    sectors: Vec<Sector>,
}

/// The sectors the prompt's topic speaks of ([`crate::facts::sector::in_profile`]) —
/// empty for a research topic: researchers work on every sector's subjects.
fn topic_sectors(p: &QualificationPrompt) -> Vec<Sector> {
    if names_research(&p.topic) {
        return Vec::new();
    }
    let text = format!("{} {}", p.topic, p.topic_items.join(", "));
    crate::facts::sector::in_profile(&text)
        .into_iter()
        .filter(|s| s.names_a_trade())
        .collect()
}

/// The sectors grant `g`'s title restricts it to when the prompt's topic speaks of
/// sectors but of none of these ("Ausbildungsplatzförderung in der Seeschifffahrt" for
/// care providers): such a programme fits only on the whole topic's strong similarity,
/// not on a keyword, a listed example or the users' stated eligibility. Empty when the
/// topic names no sector (founders, SMEs of any trade: their programmes may be
/// restricted to any sector) or the title names none. Business abroad is no sector here
/// ("AusbildungWeltweit" serves every trade's apprentices), nor are new buildings (a
/// population builds and renovates) or production ("developing innovative products" is
/// any company's topic): [`Sector::names_a_trade`]. Since method version 23.
fn other_sectors(cat: &Catalogue, topic_sectors: &[Sector], g: Idx) -> Vec<Sector> {
    if topic_sectors.is_empty() {
        return Vec::new();
    }
    let own: Vec<Sector> = cat
        .facts(g)
        .sectors
        .iter()
        .copied()
        .filter(|s| s.names_a_trade())
        .collect();
    if own.iter().any(|s| topic_sectors.contains(s)) {
        return Vec::new();
    }
    own
}

/// Grant `g` finances projects on any topic: a programme open to any topic
/// ([`crate::facts::GrantFacts::topic_open`]: company financing, regional economic
/// promotion …) that is a loan, guarantee or equity, or an investment grant ("Bürgschaft
/// der Investitionsbank", "Landesförderprogramm für regionale Investitionen"). Its text
/// speaks of financing, so its similarity to any topic is low; for users it names as
/// applicants it fits their topic. Not a project grant: those open to any topic are
/// founding and innovation programmes, which serve founders and innovators, not every
/// user. Since method version 23.
fn finances_any_topic(cat: &Catalogue, g: Idx) -> bool {
    let facts = cat.facts(g);
    facts.topic_open
        && (facts.grant_type.value != GrantType::Subsidy
            || facts.kind.value == ProgrammeKind::InvestmentGrant)
}

/// A topic the prompt rules out, with its similarity to every grant and its words.
struct ExcludedTopic {
    text: String,
    sim: Similarity,
    terms: Vec<String>,
    /// For an English prompt: the item's German phrases ([`crate::glossary::german_phrases`]),
    /// as analysed terms.
    german: Vec<Vec<String>>,
}

/// The excluded topic a grant is about: every specific word of the item in its title,
/// or a similarity in the catalogue's top few percent that beats the prompt's topic.
fn excluded_topic<'a>(
    grant: &Grant,
    topic: Option<&Similarity>,
    excluded: &'a [ExcludedTopic],
    g: Idx,
) -> Option<&'a ExcludedTopic> {
    if excluded.is_empty() {
        return None;
    }
    let title: HashSet<String> = analyze(&grant.title).into_iter().collect();
    excluded.iter().find(|x| {
        let words = (!x.terms.is_empty() && x.terms.iter().all(|t| term_in(t, &title)))
            || x.german
                .iter()
                .any(|p| p.iter().all(|t| term_in(t, &title)));
        let closer = topic.is_none_or(|sim| x.sim.cos[g as usize] > sim.cos[g as usize]);
        words || (x.sim.z(g) >= EXCLUDED_TOPIC_Z && closer)
    })
}

fn qualify_one(
    cat: &Catalogue,
    p: &QualificationPrompt,
    topic: Option<&Topic>,
    items: &[(String, Similarity)],
    excluded: &[ExcludedTopic],
    g: Idx,
) -> Qualification {
    let l = Lang::of(p);
    let rules = rule_facts(cat, p, topic, excluded, g);
    let (topic_ok, topic_sentence) = match topic {
        None => (
            true,
            l.pick(
                "Der Prompt nennt kein Thema; entschieden haben allein die Regeln.",
                "The prompt names no topic; the rules alone decided.",
            ),
        ),
        Some(topic) => topic_verdict(cat, p, topic, items, g),
    };
    Qualification {
        qualified: rules.iter().all(|r| r.ok) && topic_ok,
        reasoning: format!("{} {topic_sentence}", verdict(l, &rules, topic_ok)),
    }
}

/// The prompt's rules checked on grant `g` (region, funding type, programme kind,
/// applicants, non-profit), and an excluded topic the grant belongs to.
fn rule_facts(
    cat: &Catalogue,
    p: &QualificationPrompt,
    topic: Option<&Topic>,
    excluded: &[ExcludedTopic],
    g: Idx,
) -> Vec<RuleFact> {
    let l = Lang::of(p);
    let grant = &cat.grants[g as usize];
    let excluded_hit = excluded_topic(grant, topic.map(|t| &t.sim), excluded, g);
    [
        region_rule(cat, p, g, l),
        type_rule(cat.facts(g).grant_type.value, p, l),
        kind_rule(cat, p, g, l),
        sector_rule(cat, p, g, l),
        level_rule(cat, p, g, l),
        applicant_rule(cat, p, g, l),
        supported_rule(cat, p, g, l),
        non_profit_rule(cat, p, g, l),
    ]
    .into_iter()
    .flatten()
    .chain(excluded_hit.map(|x| RuleFact {
        ok: false,
        fact: if l.en {
            format!("the programme belongs to the excluded topic “{}”", x.text)
        } else {
            format!(
                "das Programm gehört zum ausgeschlossenen Thema „{}“",
                x.text
            )
        },
    }))
    .collect()
}

/// Whether grant `g` fits the prompt's topic, and the sentence that says how close it
/// is and why.
fn topic_verdict(
    cat: &Catalogue,
    p: &QualificationPrompt,
    topic: &Topic,
    items: &[(String, Similarity)],
    g: Idx,
) -> (bool, String) {
    let l = Lang::of(p);
    let (_, all) = grant_terms(&cat.grants[g as usize]);
    let hits: Vec<String> = topic
        .terms
        .iter()
        .filter(|t| term_in(t, &all))
        .cloned()
        .collect();
    let z = topic.sim.z(g);
    // The users' applicant type stated by the programme itself is strong
    // evidence: then a topic above the catalogue's average suffices.
    let confirmed = !p.applicant_types.is_empty()
        && cat.facts(g).applicants.as_ref().is_some_and(|f| {
            f.source != Source::Derived && f.value.iter().any(|t| p.applicant_types.contains(t))
        });
    let item = items.iter().find(|(_, s)| s.z(g) >= TOPIC_ITEM_Z);
    // A prompt whose topic is research itself ("research projects in any discipline",
    // "Forschung und Entwicklung") takes every research call: its subject is the
    // researchers' own. Who may apply is the applicant rule's question.
    let research_call =
        names_research(&p.topic) && cat.facts(g).kind.value == ProgrammeKind::ResearchCall;
    let finances_any_topic = finances_any_topic(cat, g);
    let weak_evidence = (z >= TOPIC_Z_WEAK && !hits.is_empty())
        || (confirmed && z >= TOPIC_Z_CONFIRMED)
        || (confirmed && finances_any_topic)
        || item.is_some()
        || research_call;
    let other_sectors = other_sectors(cat, &topic.sectors, g);
    let ok = z >= TOPIC_Z_STRONG || (weak_evidence && other_sectors.is_empty());
    let band = match (z >= TOPIC_Z_STRONG, z >= TOPIC_Z_WEAK, l.en) {
        (true, _, false) => "hoch",
        (true, _, true) => "high",
        (false, true, false) => "mittel",
        (false, true, true) => "medium",
        (false, false, false) => "gering",
        (false, false, true) => "low",
    };
    let listed = hits.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    let mut kw = match (hits.is_empty(), l.en) {
        (true, false) => "keine Stichwörter des Themas im Programmtext".to_string(),
        (true, true) => "no topic keywords in the programme text".to_string(),
        (false, false) => format!("Stichwörter im Programmtext: {listed}"),
        (false, true) => format!("keywords in the programme text: {listed}"),
    };
    if let Some((text, _)) = item {
        kw.push_str(&if l.en {
            format!("; very close to the example “{text}”")
        } else {
            format!("; sehr nah am genannten Beispiel „{text}“")
        });
    } else if research_call && z < TOPIC_Z_WEAK {
        kw.push_str(&l.pick(
            "; es ist eine Forschungsförderung, und der Prompt nennt Forschung als Thema",
            "; it is a research call, and the prompt's topic is research",
        ));
    } else if confirmed && finances_any_topic && z < TOPIC_Z_CONFIRMED && ok {
        kw.push_str(&l.pick(
            "; es finanziert Vorhaben jedes Themas, und die Antragsberechtigung der Nutzer steht im Programm",
            "; it finances projects on any topic, and the programme states that the users may apply",
        ));
    } else if confirmed && z < TOPIC_Z_WEAK && ok {
        kw.push_str(&l.pick(
            "; die Antragsberechtigung der Nutzer steht im Programm",
            "; the programme states that the users may apply",
        ));
    }
    if weak_evidence && !ok {
        let names: Vec<&str> = other_sectors
            .iter()
            .map(|s| if l.en { s.label_en() } else { s.label_de() })
            .collect();
        kw.push_str(&if l.en {
            format!(
                "; but its title restricts it to {}, a sector the prompt's topic does not name",
                names.join(" and ")
            )
        } else {
            format!(
                "; laut Titel gilt das Programm aber nur für {}, eine Branche, die das Thema des Prompts nicht nennt",
                names.join(" und ")
            )
        });
    }
    let short_topic: String = if p.topic.chars().count() > 80 {
        format!(
            "{} …",
            p.topic.chars().take(80).collect::<String>().trim_end()
        )
    } else {
        p.topic.clone()
    };
    let cos = l.num(topic.sim.cos[g as usize]);
    let pct = topic.sim.percentile(g);
    let sentence = if l.en {
        format!("Topical similarity to “{short_topic}” {band} (cosine {cos}, closer than {pct} % of the catalogue); {kw}.")
    } else {
        format!("Thematische Nähe zu „{short_topic}“ {band} (Kosinus {cos}, ähnlicher als {pct} % des Katalogs); {kw}.")
    };
    (ok, sentence)
}

/// The first sentence of a reasoning: the verdict with the rules that decided it.
fn verdict(l: Lang, rules: &[RuleFact], topic_ok: bool) -> String {
    let failed: Vec<&RuleFact> = rules.iter().filter(|r| !r.ok).collect();
    let all_facts = || {
        rules
            .iter()
            .map(|r| r.fact.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    if !failed.is_empty() {
        let facts: Vec<String> = failed.iter().take(2).map(|r| r.fact.clone()).collect();
        format!(
            "{}: {}.",
            l.pick("Nicht qualifiziert", "Not qualified"),
            capitalize(&facts.join("; "))
        )
    } else if !topic_ok {
        if rules.is_empty() {
            l.pick(
                "Nicht qualifiziert: Das Thema passt nicht ausreichend.",
                "Not qualified: the topic does not fit well enough.",
            )
        } else if l.en {
            format!(
                "Not qualified although the rules hold ({}): the topic does not fit well enough.",
                all_facts()
            )
        } else {
            format!(
                "Nicht qualifiziert trotz erfüllter Regeln ({}): Das Thema passt nicht ausreichend.",
                all_facts()
            )
        }
    } else if rules.is_empty() {
        l.pick(
            "Qualifiziert: Das Thema passt.",
            "Qualified: the topic fits.",
        )
    } else {
        format!(
            "{}: {}.",
            l.pick("Qualifiziert", "Qualified"),
            capitalize(&all_facts())
        )
    }
}

/// Names of the rule constraints of a prompt (diagnostics, CLI).
pub fn describe(cat: &Catalogue, p: &QualificationPrompt) -> Vec<String> {
    let mut out = Vec::new();
    if !p.regions.is_empty() {
        let names: BTreeSet<&str> = p
            .regions
            .iter()
            .map(|&r| cat.regions[r as usize].name_de.as_str())
            .collect();
        out.push(format!(
            "regions: {}",
            names.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if !p.entities.is_empty() {
        let names: Vec<&str> = p
            .entities
            .iter()
            .map(|&e| cat.eligible_entities[e as usize].code.as_str())
            .collect();
        out.push(format!("eligible entities: {}", names.join(", ")));
    }
    if !p.only_types.is_empty() {
        let t: Vec<&str> = p.only_types.iter().map(|t| t.as_str()).collect();
        out.push(format!("only grant types: {}", t.join(", ")));
    }
    if !p.excluded_types.is_empty() {
        let t: Vec<&str> = p.excluded_types.iter().map(|t| t.as_str()).collect();
        out.push(format!("excluded grant types: {}", t.join(", ")));
    }
    if p.non_profit == Some(true) {
        out.push("non-profit users".into());
    }
    let applicants = |ts: &[ApplicantType]| -> String {
        ts.iter()
            .map(|t| t.label_de())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !p.applicant_types.is_empty() {
        out.push(format!(
            "applicant types: {}",
            applicants(&p.applicant_types)
        ));
    }
    if !p.excluded_applicant_types.is_empty() {
        out.push(format!(
            "excluded applicant types: {}",
            applicants(&p.excluded_applicant_types)
        ));
    }
    if !p.excluded_kinds.is_empty() {
        let k: Vec<&str> = p.excluded_kinds.iter().map(|k| k.as_str()).collect();
        out.push(format!("excluded programme kinds: {}", k.join(", ")));
    }
    if !p.excluded_levels.is_empty() {
        let k: Vec<&str> = p.excluded_levels.iter().map(|k| k.as_str()).collect();
        out.push(format!("excluded programme levels: {}", k.join(", ")));
    }
    if !p.topic.is_empty() {
        out.push(format!("topic: {}", p.topic));
    }
    if !p.topic_items.is_empty() {
        out.push(format!("topic items: {}", p.topic_items.join(" | ")));
    }
    if !p.excluded_topics.is_empty() {
        out.push(format!(
            "excluded topics: {}",
            p.excluded_topics.join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::CatalogueRecords;
    use std::path::Path;

    /// The shipped catalogue, loaded once (also for the tests of `rules`).
    pub(super) fn real() -> &'static Catalogue {
        static C: std::sync::OnceLock<Catalogue> = std::sync::OnceLock::new();
        C.get_or_init(|| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
            Catalogue::new(CatalogueRecords::read_dir(&dir).expect("catalogue"))
        })
    }

    fn region_codes(cat: &Catalogue, p: &QualificationPrompt) -> Vec<String> {
        p.regions
            .iter()
            .map(|&r| cat.regions[r as usize].code.clone())
            .collect()
    }

    fn entity_codes(cat: &Catalogue, p: &QualificationPrompt) -> Vec<String> {
        let mut v: Vec<String> = p
            .entities
            .iter()
            .map(|&e| cat.eligible_entities[e as usize].code.clone())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn size_words_and_pronouns_are_no_topic() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Nur Zuschüsse für kleine und mittlere Unternehmen in Bayern, die ihre Digitalisierung voranbringen wollen",
        );
        assert_eq!(region_codes(cat, &p), vec!["DE-BY"]);
        assert_eq!(p.only_types, vec![GrantType::Subsidy]);
        assert!(entity_codes(cat, &p).contains(&"gmbh".to_string()));
        assert_eq!(p.topic, "Digitalisierung voranbringen");
    }

    #[test]
    fn words_about_the_prompt_are_no_topic_and_exclude_nothing() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Wir sind ein Förderportal für Handwerksbetriebe in Niedersachsen. Passend sind \
             Programme, die ein solcher Betrieb selbst beantragen kann. Nicht passend sind \
             Programme, die nur Kommunen offenstehen.",
        );
        assert!(p.excluded_topics.is_empty(), "{:?}", p.excluded_topics);
        assert!(p
            .excluded_applicant_types
            .contains(&ApplicantType::Municipality));
        for w in ["Förderportal", "Passend", "solcher"] {
            assert!(!p.topic.contains(w), "{}", p.topic);
        }
    }

    /// A German town after "in"/"aus" stands for its Land and is no topic word; a Land's
    /// adjective names the Land; a town named like a word elsewhere is neither.
    #[test]
    fn towns_and_adjectives_name_the_land() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Zuschüsse für Kitas in Leipzig und Träger aus Frankfurt am Main, die Inklusion fördern",
        );
        let mut codes = region_codes(cat, &p);
        codes.sort();
        assert_eq!(codes, vec!["DE-HE", "DE-SN"]);
        assert!(
            !p.topic.contains("Leipzig") && !p.topic.contains("Frankfurt"),
            "{}",
            p.topic
        );
        let p = QualificationPrompt::parse(cat, "Programme für Berliner Start-ups");
        assert_eq!(region_codes(cat, &p), vec!["DE-BE"]);
        let p = QualificationPrompt::parse(cat, "Förderung für Essen auf Rädern");
        assert!(p.regions.is_empty());
    }

    #[test]
    fn parses_the_example_of_the_issue() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit nutzen können; keine Kredite",
        );
        assert_eq!(region_codes(cat, &p), vec!["DE-SN"]);
        assert_eq!(entity_codes(cat, &p), vec!["ev"]);
        assert_eq!(p.excluded_types, vec![GrantType::Loan]);
        assert!(p.only_types.is_empty());
        assert_eq!(p.non_profit, Some(true));
        assert_eq!(p.topic, "Jugendarbeit");
    }

    /// "gemeinnützig …, aber auch privat geführt": non-profit and commercial providers
    /// alike, so no non-profit restriction; alone, "gemeinnützig" restricts.
    #[test]
    fn non_profit_next_to_commercial_providers_restricts_nothing() {
        let cat = real();
        for prompt in [
            "Wir beraten Pflegedienste in Sachsen, gemeinnützig als gGmbH oder e. V., aber auch privat geführt.",
            "Our users are care providers in Saxony, non-profit as well as commercial.",
            "Unsere Nutzer sind gemeinnützige und privatwirtschaftliche Träger der Jugendhilfe.",
            "We serve non-profit and for-profit social enterprises.",
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(p.non_profit, None, "{prompt}");
            // A legal status, not a topic.
            assert!(!p.topic.to_lowercase().contains("gemeinn"), "{}", p.topic);
        }
        for prompt in [
            "Wir beraten gemeinnützige Pflegedienste in Sachsen.",
            "Our users are non-profit care providers; commercial loans are out of scope.",
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(p.non_profit, Some(true), "{prompt}");
        }
    }

    /// What users seek money for ("Bau von Schulen", "renovation of schools") names no
    /// applicant; who they are does ("Schulträger", "schools").
    #[test]
    fn what_users_fund_names_no_applicant() {
        let cat = real();
        for prompt in [
            "Unser Dienst unterstützt Gemeinden in Thüringen. Unsere Nutzer suchen Geld für den Bau und die Sanierung von Kindertagesstätten und Schulen.",
            "Our platform serves municipalities in Hesse. Our users work on the renovation of schools and daycare centres.",
            "We help municipalities in Brandenburg. Our users invest in social infrastructure, especially daycare centres and schools.",
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(
                p.applicant_types,
                vec![ApplicantType::Municipality],
                "{prompt}"
            );
        }
        let p = QualificationPrompt::parse(
            cat,
            "Unsere Nutzer sind Schulen und Kitas in Bayern, die Geld für Digitalisierung suchen.",
        );
        assert!(
            p.applicant_types
                .contains(&ApplicantType::EducationInstitution),
            "{:?}",
            p.applicant_types
        );
    }

    #[test]
    fn a_negation_after_a_comma_rules_out_only_what_follows() {
        let cat = real();
        for prompt in [
            "Programme für gemeinnützige Vereine in Sachsen, keine Kredite.",
            "Programme für gemeinnützige Vereine in Sachsen, aber keine Kredite.",
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(region_codes(cat, &p), vec!["DE-SN"], "{prompt}");
            assert_eq!(p.applicant_types, vec![ApplicantType::Association]);
            assert!(p.excluded_applicant_types.is_empty(), "{prompt}");
            assert_eq!(p.excluded_types, vec![GrantType::Loan]);
            assert_eq!(p.non_profit, Some(true));
        }
        // A negated head keeps its comma list: everything in it is ruled out.
        let p = QualificationPrompt::parse(
            cat,
            "Nicht qualifiziert sind Programme, die nur Unternehmen, Kommunen oder Privatpersonen offenstehen.",
        );
        assert!(p.applicant_types.is_empty());
        assert_eq!(
            p.excluded_applicant_types,
            vec![
                ApplicantType::Company,
                ApplicantType::Municipality,
                ApplicantType::PrivatePerson
            ]
        );
    }

    #[test]
    fn programme_levels_only_and_excluded() {
        use ProgrammeLevel::*;
        let cat = real();
        for (prompt, levels) in [
            (
                "Qualifiziert sind nur Bundesprogramme für Digitalisierung im Mittelstand; Landesprogramme zählen nicht.",
                vec![Eu, State],
            ),
            ("Only EU programmes qualify; topics: climate and environment.", vec![Federal, State]),
            (
                "Qualifiziert sind ausschließlich Programme der Europäischen Union für Kultur.",
                vec![Federal, State],
            ),
            ("We list federal programmes only (no state programmes) for hospitals.", vec![Eu, State]),
            ("Programme für Vereine in Hessen, keine Landesprogramme.", vec![State]),
            // Other Länder are a matter of regions, not of levels.
            ("Programme für Vereine in Hessen; Landesprogramme anderer Länder zählen nicht.", vec![]),
            ("Programme des Landes Hessen, des Bundes oder der EU für Vereine.", vec![]),
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(p.excluded_levels, levels, "{prompt}");
            assert!(
                p.excluded_topics.iter().all(|t| !t.contains("programm")),
                "{prompt}: {:?}",
                p.excluded_topics
            );
            let topic = p.topic.to_lowercase();
            assert!(
                !topic.contains("programm") && !topic.contains("europ"),
                "{prompt}: {topic}"
            );
        }
        // The rule: a Land's programme fails "nur Bundesprogramme", a national one passes.
        let p = QualificationPrompt::parse(cat, "Nur Bundesprogramme für Digitalisierung.");
        let of_level = |level| {
            (0..cat.grants.len() as Idx)
                .find(|&g| ProgrammeLevel::of_grant(cat, g) == Some(level))
                .expect("a programme of each level")
        };
        let facts = rule_facts(cat, &p, None, &[], of_level(State));
        assert!(
            facts
                .iter()
                .any(|f| !f.ok && f.fact.contains("ein Landesprogramm")),
            "{:?}",
            facts.iter().map(|f| &f.fact).collect::<Vec<_>>()
        );
        let facts = rule_facts(cat, &p, None, &[], of_level(Federal));
        assert!(
            facts.iter().all(|f| f.ok),
            "{:?}",
            facts.iter().map(|f| &f.fact).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_negated_parenthesis_rules_out_only_itself() {
        let cat = real();
        for prompt in [
            "Zuschüsse für Vereine in Hessen (keine Kredite) für Sportstätten und Schwimmbäder.",
            "Grants for associations in Hesse (no loans) for sports facilities and swimming pools.",
        ] {
            let p = QualificationPrompt::parse(cat, prompt);
            assert_eq!(region_codes(cat, &p), vec!["DE-HE"], "{prompt}");
            assert_eq!(
                p.applicant_types,
                vec![ApplicantType::Association],
                "{prompt}"
            );
            assert_eq!(p.excluded_types, vec![GrantType::Loan], "{prompt}");
            assert!(
                p.excluded_topics.is_empty(),
                "{prompt}: {:?}",
                p.excluded_topics
            );
            let topic = p.topic.to_lowercase();
            assert!(
                topic.contains("sport") && topic.contains("schwimm") || topic.contains("swimming"),
                "{prompt}: {topic}"
            );
        }
    }

    #[test]
    fn exclusion_verbs_markers_and_places_read_as_rules() {
        let cat = real();
        // "bitte ausschließen" rules out what its sentence names.
        let p = QualificationPrompt::parse(
            cat,
            "Qualifiziert sind Programme, die Vereine für Sportstätten oder Vereinsheime \
             beantragen können. Kredite und Programme nur für Unternehmen bitte ausschließen.",
        );
        assert_eq!(p.applicant_types, vec![ApplicantType::Association]);
        assert_eq!(p.excluded_applicant_types, vec![ApplicantType::Company]);
        assert_eq!(p.excluded_types, vec![GrantType::Loan]);
        assert!(!p.topic.contains("Kredite"), "{}", p.topic);
        // The exclusion marker is no part of the excluded topic.
        let p = QualificationPrompt::parse(
            cat,
            "Förderungen für Kultur: Theater, Museen, Musik und freie Kunstszene in Hamburg \
             oder bundesweit. Ausgenommen sind Film und Medien.",
        );
        assert_eq!(p.excluded_topics, vec!["Film und Medien".to_string()]);
        assert_eq!(region_codes(cat, &p), vec!["DE-HH", "DE"]);
        // Nor is the conjunction or preposition that joins an item to the list.
        let p = QualificationPrompt::parse(
            cat,
            "Grants for non-profit associations in Thuringia. Also excluded are elite sport \
             funding, programmes for vocational training or for labour market support, and \
             programmes on agriculture.",
        );
        assert_eq!(
            p.excluded_topics,
            [
                "elite sport funding",
                "vocational training",
                "labour market support",
                "agriculture"
            ]
        );
        // A place is a region, never a topic item of its own.
        assert!(
            !p.topic_items.iter().any(|i| i == "bundesweit"),
            "{:?}",
            p.topic_items
        );
        let p = QualificationPrompt::parse(
            cat,
            "Programmes on digitalisation, energy efficiency or staff training, in \
             Schleswig-Holstein or nationwide.",
        );
        assert_eq!(region_codes(cat, &p), vec!["DE-SH", "DE"]);
        assert!(
            p.topic_items
                .iter()
                .all(|i| !i.contains("Schleswig") && i != "nationwide"),
            "{:?}",
            p.topic_items
        );
        assert!(p.topic_items.iter().any(|i| i == "staff training"));
    }

    #[test]
    fn civic_engagement_is_no_private_person() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Vereine in Thüringen für Ehrenamt und bürgerschaftliches Engagement. Nicht \
             qualifiziert sind Programme, die nur Privatpersonen offenstehen.",
        );
        assert_eq!(p.applicant_types, vec![ApplicantType::Association]);
        assert_eq!(
            p.excluded_applicant_types,
            vec![ApplicantType::PrivatePerson]
        );
        assert!(!p.topic.split(' ').any(|w| w == "für" || w == "und"));
    }

    #[test]
    fn people_the_users_hire_or_serve_are_no_applicants() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Kleine und mittlere Unternehmen in Sachsen suchen Geld für die Einstellung und \
             Qualifizierung von Personal, etwa Auszubildende oder Fachkräfte.",
        );
        assert_eq!(p.applicant_types, vec![ApplicantType::Company]);
        let p = QualificationPrompt::parse(
            cat,
            "Stipendien und Zuschüsse für Studierende und Auszubildende in Sachsen.",
        );
        assert_eq!(p.applicant_types, vec![ApplicantType::PrivatePerson]);
        let p = QualificationPrompt::parse(
            cat,
            "Programmes for associations and private persons in Saxony that renovate buildings.",
        );
        assert_eq!(
            p.applicant_types,
            vec![ApplicantType::Association, ApplicantType::PrivatePerson]
        );
    }

    #[test]
    fn partners_named_after_with_are_no_users() {
        use ApplicantType::*;
        let cat = real();
        // A university portal: the companies are its users' partners, and "open only to
        // companies" rules out programmes for companies alone.
        let p = QualificationPrompt::parse(
            cat,
            "Our service helps universities and research institutes in Bavaria find funding: \
             research projects in any discipline, collaborative R&D with companies, and \
             technology transfer. Programmes open only to companies do not qualify.",
        );
        assert_eq!(p.applicant_types, vec![University, ResearchInstitution]);
        assert!(p.excluded_applicant_types.contains(&Company));
        let company_forms = ApplicantType::Company.entity_codes();
        assert!(p
            .entities
            .iter()
            .all(|&e| !company_forms.contains(&cat.eligible_entities[e as usize].code.as_str())));
        // German, a list of partners after "gemeinsam mit", up to the comma.
        let p = QualificationPrompt::parse(
            cat,
            "Vereine in Sachsen, die gemeinsam mit Kommunen und Schulen Jugendarbeit \
             organisieren, suchen Zuschüsse.",
        );
        assert_eq!(p.applicant_types, vec![Association]);
        // Without "mit" the same words are users.
        let p = QualificationPrompt::parse(
            cat,
            "Vereine und Kommunen in Sachsen, die Jugendarbeit organisieren, suchen Zuschüsse.",
        );
        assert_eq!(p.applicant_types, vec![Association, Municipality]);
    }

    #[test]
    fn neither_and_nor_rule_out() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Our service helps universities in Saxony find research funding. Programmes \
             open only to companies do not qualify; neither do scholarships or prizes for \
             individuals.",
        );
        assert_eq!(p.applicant_types, vec![ApplicantType::University]);
        assert!(p
            .excluded_applicant_types
            .contains(&ApplicantType::PrivatePerson));
        assert!(p.excluded_kinds.contains(&ProgrammeKind::PrizeScholarship));
        let p =
            QualificationPrompt::parse(cat, "Vereine in Sachsen; weder Kredite noch Bürgschaften.");
        assert!(p.excluded_types.contains(&GrantType::Loan));
    }

    #[test]
    fn multi_word_lands_win_over_their_parts() {
        let cat = real();
        let p =
            QualificationPrompt::parse(cat, "Kommunen in Sachsen-Anhalt und Nordrhein-Westfalen");
        let mut codes = region_codes(cat, &p);
        codes.sort();
        assert_eq!(codes, vec!["DE-NW", "DE-ST"]);
        assert_eq!(entity_codes(cat, &p), vec!["kommune"]);
        assert!(p.topic.is_empty());
        let p = QualificationPrompt::parse(cat, "sächsische Städte und Gemeinden, Radverkehr");
        assert_eq!(region_codes(cat, &p), vec!["DE-SN"]);
        assert_eq!(entity_codes(cat, &p), vec!["kommune"]);
        assert_eq!(p.topic, "Städte Radverkehr");
    }

    #[test]
    fn grant_types_only_and_excluded() {
        let cat = real();
        let p =
            QualificationPrompt::parse(cat, "Nur Zuschüsse für KMU in Bayern zur Digitalisierung");
        assert_eq!(p.only_types, vec![GrantType::Subsidy]);
        assert!(p.excluded_types.is_empty());
        assert_eq!(region_codes(cat, &p), vec!["DE-BY"]);
        assert!(entity_codes(cat, &p).contains(&"gmbh".to_string()));
        assert!(!entity_codes(cat, &p).contains(&"ev".to_string()));
        assert_eq!(p.topic, "Digitalisierung");
        let p = QualificationPrompt::parse(
            cat,
            "Energieeffizienz im Handwerk. Keine Kredite, Darlehen oder Bürgschaften!",
        );
        assert_eq!(
            p.excluded_types,
            vec![GrantType::Loan, GrantType::Guarantee]
        );
        assert_eq!(p.topic, "Energieeffizienz Handwerk");
        // An elliptical exclusion after the accepted types rules out only its own part.
        let p = QualificationPrompt::parse(
            cat,
            "Gründungen in Thüringen. Zuschüsse, Darlehen und Beteiligungskapital kommen in Frage, reine Bürgschaften nicht.",
        );
        assert_eq!(p.excluded_types, vec![GrantType::Guarantee]);
        // A grant-type word without negation or "nur" is no constraint.
        let p = QualificationPrompt::parse(cat, "Kredite für Gründer");
        assert!(p.excluded_types.is_empty() && p.only_types.is_empty());
    }

    /// The instruments a prompt accepts are what is paid, not its topic; a compound whose
    /// head is a topic ("Investitionszuschüsse") stays.
    #[test]
    fn instrument_words_are_no_topic() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Qualifiziert sind Zuschüsse, Förderkredite und zinsgünstige Darlehen für \
             Energieeffizienz und Investitionszuschüsse für Maschinen.",
        );
        assert!(p.excluded_types.is_empty() && p.only_types.is_empty());
        assert_eq!(
            p.topic, "Energieeffizienz Investitionszuschüsse Maschinen",
            "{}",
            p.topic
        );
        let p = QualificationPrompt::parse(cat, "Low-interest loans and grants for digitalisation");
        assert_eq!(p.topic, "digitalisation");
    }

    /// Inclusion and exclusion sentences of a long partner prompt
    /// (`fixtures/eval/qualification_v2.json`, P1).
    #[test]
    fn reads_inclusions_and_exclusions_of_a_long_prompt() {
        use crate::facts::ApplicantType::*;
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Unsere Plattform unterstützt gemeinnützige eingetragene Vereine mit Sitz in Thüringen – vom Sportverein über den Jugendclub bis zum Kultur- oder Heimatverein. \
             Qualifiziert sind Förderprogramme des Freistaats Thüringen, des Bundes oder der EU, bei denen ein gemeinnütziger Verein selbst Antragsteller sein kann. \
             Wir vermitteln ausschließlich Zuschüsse; Kredite, Bürgschaften und Beteiligungen sind ausgeschlossen. \
             Nicht qualifiziert sind Programme, die nur Unternehmen, Existenzgründern, Kommunen oder Privatpersonen offenstehen, sowie Stipendien und Preise für Einzelpersonen. \
             Reine Forschungsförderung reicht nicht aus, auch wenn Vereine als Verbundpartner denkbar wären. \
             Ebenfalls ausgeschlossen sind Landesprogramme anderer Bundesländer, Spitzensportförderung sowie Programme zu Landwirtschaft oder Wohnungsbau.",
        );
        assert!(
            region_codes(cat, &p).contains(&"DE-TH".to_string()),
            "{:?}",
            region_codes(cat, &p)
        );
        assert_eq!(p.only_types, vec![GrantType::Subsidy]);
        for t in [GrantType::Loan, GrantType::Guarantee, GrantType::Equity] {
            assert!(p.excluded_types.contains(&t), "{:?}", p.excluded_types);
        }
        assert_eq!(p.applicant_types, vec![Association]);
        for t in [Company, Municipality, PrivatePerson] {
            assert!(
                p.excluded_applicant_types.contains(&t),
                "{:?}",
                p.excluded_applicant_types
            );
        }
        assert!(p.excluded_kinds.contains(&ProgrammeKind::ResearchCall));
        assert!(p.excluded_kinds.contains(&ProgrammeKind::PrizeScholarship));
        assert!(
            p.excluded_topics.iter().any(|t| t.contains("Spitzensport")),
            "{:?}",
            p.excluded_topics
        );
        assert!(
            p.excluded_topics
                .iter()
                .any(|t| t.contains("Landwirtschaft")),
            "{:?}",
            p.excluded_topics
        );
        // Region words of an exclusion are no topic to rule out, and exclusions are no
        // part of the topic.
        assert!(!p.excluded_topics.iter().any(|t| t.contains("Bundesländer")));
        assert!(
            !p.topic.contains("Landwirtschaft") && !p.topic.contains("Forschungsförderung"),
            "{}",
            p.topic
        );
        assert!(p.non_profit == Some(true));
    }

    #[test]
    fn reads_an_english_prompt_with_exclusions() {
        use crate::facts::ApplicantType::*;
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Our platform serves public universities and non-university research institutes located in Saxony. \
             We only list non-repayable grants; loans, guarantees and equity are excluded. \
             Programmes that only companies may apply for do not qualify. \
             Scholarships paid directly to individual students are out of scope.",
        );
        assert!(
            region_codes(cat, &p).contains(&"DE-SN".to_string()),
            "{:?}",
            region_codes(cat, &p)
        );
        assert_eq!(p.applicant_types, vec![University, ResearchInstitution]);
        assert!(p.excluded_applicant_types.contains(&Company));
        assert_eq!(p.only_types, vec![GrantType::Subsidy]);
        assert!(p.excluded_types.contains(&GrantType::Loan));
        assert!(p.excluded_kinds.contains(&ProgrammeKind::PrizeScholarship));
    }

    #[test]
    fn english_prompts_and_e_v() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Funding for non-profit associations (e.V.) in Bavaria for sports; no loans",
        );
        assert_eq!(region_codes(cat, &p), vec!["DE-BY"]);
        assert_eq!(entity_codes(cat, &p), vec!["ev"]);
        assert_eq!(p.non_profit, Some(true));
        assert_eq!(p.excluded_types, vec![GrantType::Loan]);
        assert!(p.topic.contains("sports"), "{}", p.topic);
    }

    #[test]
    fn ambiguous_words_are_topic_not_rules() {
        let cat = real();
        let p = QualificationPrompt::parse(cat, "Jugendarbeit an Schulen in der Stadt");
        assert!(p.entities.is_empty(), "{:?}", entity_codes(cat, &p));
        assert!(p.regions.is_empty());
        assert!(p.topic.contains("Schulen"));
        // "in" is not the code of India, "de" not Germany.
        let p = QualificationPrompt::parse(cat, "Projekte in de Regionen");
        assert!(p.regions.is_empty());
    }

    #[test]
    fn applicant_words_are_no_topic_evidence() {
        for t in analyze("kommunaler Stadt Betrieb Verein") {
            assert!(names_applicants(&t), "{t}");
        }
        for t in analyze("Klimaschutz Radwege Vereinsheim Unternehmensnachfolge Digitalisierung") {
            assert!(!names_applicants(&t), "{t}");
        }
    }

    #[test]
    fn a_sector_programme_needs_a_prompt_topic_of_its_sector() {
        use crate::facts::sector::Sector::*;
        let cat = real();
        let grant = |slug: &str| cat.grant_by_slug(slug).expect(slug);
        let care = QualificationPrompt::parse(
            cat,
            "Wir beraten Träger von Pflegeeinrichtungen in Sachsen. Unsere Nutzer brauchen Geld \
             für die Ausbildung von Fachkräften. Nicht passend sind Programme für \
             Kindertagesstätten und Schulen.",
        );
        let sectors = topic_sectors(&care);
        assert!(sectors.contains(&Health), "{sectors:?}");
        assert!(
            !sectors.contains(&Childcare),
            "an exclusion names no users: {sectors:?}"
        );
        let shipping = grant("ausbildungsplatzfoerderung-in-der-seeschifffahrt");
        assert_eq!(other_sectors(cat, &sectors, shipping), vec![Maritime]);
        // Business abroad restricts no trade; a programme of the topic's sector fits.
        let abroad = grant("pilotprojekt-ausbildung-weltweit");
        assert!(cat.facts(abroad).sectors.contains(&International));
        assert!(other_sectors(cat, &sectors, abroad).is_empty());
        let nursing = grant("pflege-azubi-richtlinie");
        assert!(cat.facts(nursing).sectors.contains(&Health));
        assert!(other_sectors(cat, &sectors, nursing).is_empty());
        // A topic of no sector (founders of any trade) and research restrict nothing.
        let founders = QualificationPrompt::parse(
            cat,
            "Programme für Gründerinnen und Gründer in Thüringen: Geld für die Gründung und \
             für die Entwicklung innovativer Produkte.",
        );
        assert!(topic_sectors(&founders).is_empty(), "{:?}", founders.topic);
        let research = QualificationPrompt::parse(
            cat,
            "Universities in Saxony: research projects in life sciences and medicine.",
        );
        assert!(topic_sectors(&research).is_empty());
    }

    #[test]
    fn a_programme_for_those_who_support_companies_fails_a_prompt_for_companies() {
        let cat = real();
        let g = cat
            .grant_by_slug("passgenaue-besetzung-willkommenslotsen")
            .expect("programme");
        let smes = QualificationPrompt::parse(
            cat,
            "Kleine und mittlere Unternehmen in Sachsen suchen Geld für die Ausbildung und \
             die Gewinnung von Fachkräften.",
        );
        assert_eq!(smes.applicant_types, [ApplicantType::Company]);
        let rule = supported_rule(cat, &smes, g, Lang::of(&smes)).expect("the rule applies");
        assert!(!rule.ok);
        assert_eq!(
            rule.fact,
            "laut Programmtext fördert es, wer Unternehmen unterstützt, nicht deren eigene Vorhaben"
        );
        // Chambers and associations, who support companies, are its applicants.
        let chambers = QualificationPrompt::parse(
            cat,
            "Kammern und Wirtschaftsverbände in Sachsen, die Betriebe bei der Gewinnung von \
             Fachkräften beraten.",
        );
        assert!(supported_rule(cat, &chambers, g, Lang::of(&chambers)).is_none());
        // A programme for companies' own projects is no such programme.
        let own = cat
            .grant_by_slug("pflege-azubi-richtlinie")
            .expect("programme");
        assert!(supported_rule(cat, &smes, own, Lang::of(&smes)).is_none());
    }

    #[test]
    fn financing_open_to_any_topic_fits_every_topic() {
        let cat = real();
        let grant = |slug: &str| cat.grant_by_slug(slug).expect(slug);
        // A guarantee and a regional investment grant finance any project.
        assert!(finances_any_topic(
            cat,
            grant("buergschaft-investitionsbank-rheinland")
        ));
        assert!(finances_any_topic(
            cat,
            grant("landesfoerderprogramm-regio")
        ));
        // A founders' programme open to any topic serves founders, not every user.
        assert!(cat.facts(grant("erasmus-fuer-jungunternehmer")).topic_open);
        assert!(!finances_any_topic(
            cat,
            grant("erasmus-fuer-jungunternehmer")
        ));
        // A programme with a topic does not.
        assert!(!finances_any_topic(cat, grant("pflege-azubi-richtlinie")));
    }

    #[test]
    fn residential_programmes_need_a_prompt_about_housing() {
        let cat = real();
        let g = cat
            .grant_by_slug("bundesfoerderung-effiziente-wohngebaeude")
            .unwrap();
        let crafts = QualificationPrompt::parse(
            cat,
            "Handwerksbetriebe in Niedersachsen, die Energie sparen wollen.",
        );
        let rule = sector_rule(cat, &crafts, g, Lang::of(&crafts)).expect("a failed rule");
        assert!(!rule.ok);
        assert!(rule.fact.contains("Wohngebäude"), "{}", rule.fact);
        let landlords = QualificationPrompt::parse(
            cat,
            "Vermieter in Niedersachsen, die ihre Wohngebäude sanieren wollen.",
        );
        assert!(sector_rule(cat, &landlords, g, Lang::of(&landlords)).is_none());
        // Not residential: no rule.
        let other = cat.grant_by_slug("erp-foerderkredit-kmu").unwrap();
        assert!(sector_rule(cat, &crafts, other, Lang::of(&crafts)).is_none());
    }

    #[test]
    fn a_long_applicant_list_is_cut_with_others_after_the_deciding_type() {
        use ApplicantType::*;
        let l = Lang { en: true };
        let five = [
            Company,
            Association,
            University,
            ResearchInstitution,
            Municipality,
        ];
        assert_eq!(
            l.applicants(&five),
            "companies, associations, universities, research institutions and others"
        );
        assert_eq!(l.applicants(&five[..2]), "companies and associations");
        // The rule names the users' type first, so the cut never hides it.
        let cat = real();
        let g = cat
            .grant_by_slug("transformative-klimaschutzprojekte-862636")
            .unwrap();
        let applicants = &cat.facts(g).applicants.as_ref().unwrap().value;
        assert!(applicants.len() > 4 && applicants[0] != EducationInstitution);
        let p =
            QualificationPrompt::parse(cat, "Programmes for educational institutions in Hesse.");
        assert_eq!(p.applicant_types, [EducationInstitution]);
        let rule = applicant_rule(cat, &p, g, Lang::of(&p)).unwrap();
        assert!(rule.ok);
        assert!(
            rule.fact.contains("are educational institutions, "),
            "{}",
            rule.fact
        );
    }

    #[test]
    fn reasoning_cites_the_failed_rule() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/test-catalogues/tiny");
        let cat = Catalogue::new(CatalogueRecords::read_dir(&dir).unwrap());
        let p = QualificationPrompt::parse(&cat, "Vereine in Sachsen; keine Kredite");
        assert!(p.topic.is_empty());
        let by_slug = |s: &str| cat.grant_by_slug(s).unwrap();
        // Seniorentreffpunkte Sachsen und Berlin: e.V., Sachsen, subsidy.
        let q = qualify_one(&cat, &p, None, &[], &[], by_slug("testprogramm-12"));
        assert!(q.qualified, "{}", q.reasoning);
        assert!(q.reasoning.contains("Sachsen"), "{}", q.reasoning);
        // Bayern only.
        let q = qualify_one(&cat, &p, None, &[], &[], by_slug("testprogramm-2"));
        assert!(!q.qualified);
        assert!(q.reasoning.contains("nicht in Sachsen"), "{}", q.reasoning);
        // Federal loan for companies and municipalities.
        let q = qualify_one(&cat, &p, None, &[], &[], by_slug("testprogramm-8"));
        assert!(!q.qualified);
        assert!(q.reasoning.contains("Kredit"), "{}", q.reasoning);
        let sentences = q.reasoning.matches(". ").count() + 1;
        assert!((2..=3).contains(&sentences), "{}", q.reasoning);
    }

    /// A prompt whose topic is research itself takes a research call however far its
    /// subject lies from the prompt's words; another programme as far does not qualify.
    #[test]
    fn a_research_topic_takes_every_research_call() {
        let cat = real();
        let p = QualificationPrompt::parse(
            cat,
            "Our platform serves universities in Saxony: research projects in any \
             discipline. Loans are excluded.",
        );
        assert!(names_research(&p.topic), "{}", p.topic);
        // Every programme equally close: the topic alone qualifies none.
        let n = cat.grants.len();
        let flat = Similarity {
            cos: vec![0.8; n],
            mean: 0.8,
            std: 0.01,
            sorted: vec![0.8; n],
        };
        let topic = Topic {
            sectors: topic_sectors(&p),
            sim: flat,
            terms: Vec::new(),
        };
        let by_slug = |s: &str| cat.grant_by_slug(s).unwrap();
        // ErUM-Pro "Universum": a research call open to universities.
        let q = qualify_one(cat, &p, Some(&topic), &[], &[], by_slug("erum-2025"));
        assert!(q.qualified, "{}", q.reasoning);
        assert!(q.reasoning.contains("research call"), "{}", q.reasoning);
        // BEG EM, an investment grant for buildings: the topic does not fit.
        let q = qualify_one(
            cat,
            &p,
            Some(&topic),
            &[],
            &[],
            by_slug("bundesfoerderung-effiziente-gebaeude-em"),
        );
        assert!(!q.qualified, "{}", q.reasoning);
        // KMU-innovativ Biomedizin: a research call, but for companies only.
        let q = qualify_one(cat, &p, Some(&topic), &[], &[], by_slug("biomedizin"));
        assert!(!q.qualified, "{}", q.reasoning);
        assert!(!names_research("Klimaschutz Radwege Kitas"));
    }

    /// A prompt written in English gets its reasoning in English.
    #[test]
    fn reasoning_follows_the_language_of_the_prompt() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/test-catalogues/tiny");
        let cat = Catalogue::new(CatalogueRecords::read_dir(&dir).unwrap());
        let p = QualificationPrompt::parse(
            &cat,
            "Our users are associations in Saxony and they are looking for grants; no loans.",
        );
        let by_slug = |s: &str| cat.grant_by_slug(s).unwrap();
        let q = qualify_one(&cat, &p, None, &[], &[], by_slug("testprogramm-2"));
        assert!(!q.qualified);
        assert!(
            q.reasoning.starts_with("Not qualified: "),
            "{}",
            q.reasoning
        );
        assert!(q.reasoning.contains("not in Saxony"), "{}", q.reasoning);
        let q = qualify_one(&cat, &p, None, &[], &[], by_slug("testprogramm-8"));
        assert!(
            q.reasoning.contains("loans are excluded"),
            "{}",
            q.reasoning
        );
    }
}
