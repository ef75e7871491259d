//! Custom categories: a partner's own multi-label classification of the programmes
//! (see the module overview of [`super`] for the method).

use uuid::Uuid;

use crate::catalogue::{Catalogue, Idx};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::facts::{ApplicantType, ProgrammeKind, Source};
use crate::model::GrantType;
use crate::text::{analyze, fold_name};
use crate::vectors::GrantVectors;
use crate::Engine;

use super::{
    grant_terms, grant_type_of_word, term_in, vectors_for, CustomCategory, QualificationPrompt,
    Similarity, CATEGORY_KEYWORD_SHARE, CATEGORY_Z_MARGIN, CATEGORY_Z_STRONG, CATEGORY_Z_STRONG_EN,
    CATEGORY_Z_WEAK,
};

/// The keyword phrases of a category: its keywords, else the parts of its name; for a
/// category written in English also their German glossary terms ([`crate::glossary`]:
/// "medical technology" → "Medizintechnik"), since the programme texts are German. A
/// keyword of several glossary phrases needs a term of each ("start-up loan" →
/// "Gründung" with "Kredit" or "Darlehen", …), not any one of them: "Kredit" alone would
/// name every loan; a keyword the glossary translates only in part gives none.
fn category_phrases(c: &CustomCategory, english: bool) -> Vec<Vec<String>> {
    let raw: Vec<String> = if c.keywords.iter().any(|k| !k.trim().is_empty()) {
        c.keywords.clone()
    } else {
        c.name
            .split([',', '&', '/', '(', ')'])
            .flat_map(|p| p.split(" und "))
            .map(str::to_string)
            .collect()
    };
    let german: Vec<String> = if english {
        raw.iter()
            .flat_map(|k| crate::glossary::german_phrases(k))
            .collect()
    } else {
        Vec::new()
    };
    raw.iter()
        .chain(&german)
        .map(|k| analyze(k))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The topics a category's description lists: the comma-separated items after a colon
/// of each sentence that rules nothing out ("…: Angebote für Menschen mit Behinderung,
/// ältere und pflegebedürftige Menschen, Geflüchtete und Zugewanderte, …").
fn description_items(d: &str) -> Vec<String> {
    const RULING_OUT: &[&str] = &[
        "nicht",
        "kein",
        "keine",
        "ausgenommen",
        "ausgeschlossen",
        "not",
        "excluded",
        "except",
    ];
    let mut out = Vec::new();
    for sentence in crate::facts::applicants::sentences(d) {
        let folded = fold_name(sentence);
        if folded.split(' ').any(|w| RULING_OUT.contains(&w)) {
            continue;
        }
        let Some((_, list)) = sentence.split_once(':') else {
            continue;
        };
        for item in list
            .trim_end_matches(['.', ' '])
            .split([',', ';'])
            .flat_map(|i| i.split(" sowie "))
            .flat_map(|i| i.split(" such as "))
            .map(|i| {
                i.trim()
                    .trim_start_matches("and ")
                    .trim_start_matches("und ")
                    .trim()
            })
        {
            if item.chars().count() >= 3 && !out.iter().any(|o| o == item) {
                out.push(item.to_string());
            }
        }
    }
    out
}

/// The text a category is embedded from: name, description and keywords.
pub fn category_text(c: &CustomCategory) -> String {
    let mut t = c.name.clone();
    if let Some(d) = c.description.as_deref().filter(|d| !d.trim().is_empty()) {
        t.push_str(". ");
        t.push_str(d);
    }
    if !c.keywords.is_empty() {
        t.push_str(". ");
        t.push_str(&c.keywords.join(", "));
    }
    t
}

/// A category ready to assign: its similarity to every grant, its threshold and its
/// keyword phrases.
struct PreparedCategory {
    /// The funding instruments the category's name stands for ([`instruments_of_name`]);
    /// when set, the grant type decides instead of the topic similarity.
    instruments: Vec<GrantType>,
    /// The programme kinds the category's name stands for ([`kinds_of_name`]).
    kinds: Vec<ProgrammeKind>,
    /// Applicant types and programme kinds the description rules out ("Programme, die
    /// sich ausschließlich an Unternehmen richten, … zählen nicht"), read as a
    /// qualification prompt's exclusions are.
    excluded_applicants: Vec<ApplicantType>,
    excluded_kinds: Vec<ProgrammeKind>,
    strong_z: f32,
    main: Similarity,
    /// One per keyword.
    keywords: Vec<Similarity>,
    /// One per topic the description lists ([`description_items`]).
    items: Vec<Similarity>,
    phrases: Vec<Vec<String>>,
}

impl PreparedCategory {
    /// The description rules grant `g` out: its kind is excluded, or every applicant
    /// type the record or the programme text states is (guessed applicants never
    /// exclude).
    fn excludes(&self, cat: &Catalogue, g: Idx) -> bool {
        let facts = cat.facts(g);
        let only_excluded = facts.applicants.as_ref().is_some_and(|a| {
            a.source != Source::Derived
                && !a.value.is_empty()
                && a.value.iter().all(|t| self.excluded_applicants.contains(t))
        });
        only_excluded || self.excluded_kinds.contains(&facts.kind.value)
    }

    /// The category's z-score for grant `g`, with its best keyword's or listed topic's
    /// share.
    fn z(&self, g: Idx) -> f32 {
        let whole = self.main.z(g);
        let best = self.keywords.iter().chain(&self.items).map(|k| k.z(g));
        match best.reduce(f32::max) {
            Some(best) => (1.0 - CATEGORY_KEYWORD_SHARE) * whole + CATEGORY_KEYWORD_SHARE * best,
            None => whole,
        }
    }
}

fn prepare_category(
    cat: &Catalogue,
    embedder: &Embedder,
    vectors: &GrantVectors,
    c: &CustomCategory,
) -> Result<PreparedCategory> {
    let reading = c
        .description
        .as_deref()
        .map(|d| QualificationPrompt::parse(cat, d));
    let text = category_text(c);
    let (instruments, kinds) = (instruments_of_name(&c.name), kinds_of_name(&c.name));
    let english = crate::profile::text_language(&text) == crate::profile::Locale::En;
    // A category named for instruments or kinds is decided by them and by its own words
    // in the title; the glossary's broader German terms ("equity" → "Beteiligung") would
    // add every programme that mentions them.
    let bilingual = english && instruments.is_empty() && kinds.is_empty();
    let strong_z = if english {
        CATEGORY_Z_STRONG_EN
    } else {
        CATEGORY_Z_STRONG
    };
    let items = c
        .description
        .as_deref()
        .map(description_items)
        .unwrap_or_default();
    let mut texts = vec![text.as_str()];
    texts.extend(c.keywords.iter().map(String::as_str));
    texts.extend(items.iter().map(String::as_str));
    // An English category also speaks through the German glossary terms of its name,
    // description, keywords and listed topics, since the programme texts are German.
    let rows: Vec<Vec<f32>> = if bilingual {
        crate::glossary::embed_bilingual_all(
            embedder,
            &texts,
            crate::glossary::GERMAN_TERMS_WEIGHT,
        )?
    } else {
        embedder
            .embed_queries(&texts)?
            .iter()
            .map(|v| v.to_vec())
            .collect()
    };
    let mut rows = rows.into_iter();
    let main = rows
        .next()
        .ok_or_else(|| Error::Model("no embedding returned".into()))?;
    Ok(PreparedCategory {
        instruments,
        kinds,
        excluded_applicants: reading
            .as_ref()
            .map(|r| r.excluded_applicant_types.clone())
            .unwrap_or_default(),
        excluded_kinds: reading
            .as_ref()
            .map(|r| r.excluded_kinds.clone())
            .unwrap_or_default(),
        strong_z,
        main: Similarity::new(vectors, &main),
        keywords: rows
            .by_ref()
            .take(c.keywords.len())
            .map(|v| Similarity::new(vectors, &v))
            .collect(),
        items: rows.map(|v| Similarity::new(vectors, &v)).collect(),
        phrases: category_phrases(c, bilingual),
    })
}

/// The repayable or equity instruments a category's name stands for: "Kredite &
/// Bürgschaften" → loan, guarantee; "Beteiligungskapital & Wagniskapital", "Venture
/// capital" → equity. Only a word that starts with an instrument's word counts
/// ("Bürgerbeteiligung" is no equity), and subsidies never do (nearly every programme
/// is one, so a category naming them is about its topic).
fn instruments_of_name(name: &str) -> Vec<GrantType> {
    const EXTRA: &[(&str, GrantType)] = &[
        ("venture", GrantType::Equity),
        ("mezzanin", GrantType::Equity),
        ("forderkredit", GrantType::Loan),
        ("forderdarlehen", GrantType::Loan),
        ("mikrokredit", GrantType::Loan),
        ("mikrodarlehen", GrantType::Loan),
    ];
    let mut out = Vec::new();
    for w in fold_name(name).split(' ') {
        let t = EXTRA
            .iter()
            .find(|(stem, _)| w.starts_with(stem))
            .map(|(_, t)| *t)
            .or_else(|| grant_type_of_word(w).filter(|_| instrument_word_starts(w)));
        if let Some(t) = t.filter(|t| *t != GrantType::Subsidy) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// The word begins with the instrument word it contains (not a compound that ends in it).
fn instrument_word_starts(w: &str) -> bool {
    [
        "kredit",
        "darlehen",
        "loan",
        "burgschaft",
        "garantie",
        "guarantee",
        "haftungsfreistellung",
        "beteiligung",
        "eigenkapital",
        "wagniskapital",
        "risikokapital",
        "equity",
    ]
    .iter()
    .any(|stem| w.starts_with(stem))
}

/// The programme kinds a category's name stands for: "Forschung & Entwicklung" →
/// research calls, "Beratung & Coaching" → advisory, "Preise & Wettbewerbe" → prizes and
/// scholarships, "Investitionen" → investment grants, "Infrastruktur" → infrastructure.
/// Only a word that starts with a kind's word counts ("Wirtschaftsförderung" or
/// "Stadtentwicklung" name no kind).
fn kinds_of_name(name: &str) -> Vec<ProgrammeKind> {
    use ProgrammeKind::*;
    // A word ending in `*` is a word start; the others are whole words ("Preise" is
    // prizes, "Preisgünstig" is not; "Wettbewerbe" are contests, "Wettbewerbsfähigkeit"
    // is not).
    const WORDS: &[(&str, ProgrammeKind)] = &[
        ("forschung*", ResearchCall),
        ("research*", ResearchCall),
        ("fue", ResearchCall),
        ("beratung*", Advisory),
        ("coaching*", Advisory),
        ("consulting", Advisory),
        ("advisory", Advisory),
        ("advice", Advisory),
        ("preis", PrizeScholarship),
        ("preise", PrizeScholarship),
        ("wettbewerb", PrizeScholarship),
        ("wettbewerbe", PrizeScholarship),
        ("stipendi*", PrizeScholarship),
        ("award*", PrizeScholarship),
        ("prize*", PrizeScholarship),
        ("scholarship*", PrizeScholarship),
        ("fellowship*", PrizeScholarship),
        ("investition*", InvestmentGrant),
        ("investment*", InvestmentGrant),
        ("infrastruktur*", Infrastructure),
        ("infrastructure*", Infrastructure),
    ];
    let names = |w: &str, entry: &str| match entry.strip_suffix('*') {
        Some(start) => w.starts_with(start),
        None => w == entry,
    };
    let folded = fold_name(&name.replace("F&E", "FuE").replace("R&D", "research"));
    let mut out = Vec::new();
    for w in folded.split(' ') {
        if let Some((_, k)) = WORDS.iter().find(|(entry, _)| names(w, entry)) {
            if !out.contains(k) {
                out.push(*k);
            }
        }
    }
    out
}

/// Category `i`'s z is within [`CATEGORY_Z_MARGIN`] of the best z of the set's other
/// categories: the programme is about it at least nearly as much as about any other.
fn near_the_closest(zs: &[f32], i: usize) -> bool {
    let best_other = zs
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, &z)| z)
        .fold(f32::NEG_INFINITY, f32::max);
    zs[i] >= best_other - CATEGORY_Z_MARGIN
}

/// Assigns categories to grants (multi-label). Returns the category ids per grant, in
/// the order of `categories`. A category is assigned at a similarity z ≥
/// [`CATEGORY_Z_STRONG`] ([`CATEGORY_Z_STRONG_EN`] for English categories) to its text
/// that is also near the best z of the set's other categories, when a keyword phrase
/// occurs in the title or short description, or at z ≥
/// [`CATEGORY_Z_WEAK`] with a keyword phrase in the full text.
pub fn categorize(
    engine: &Engine,
    embedder: &Embedder,
    categories: &[CustomCategory],
    grant_ids: &[Idx],
) -> Result<Vec<(Idx, Vec<Uuid>)>> {
    if categories.is_empty() {
        return Ok(grant_ids.iter().map(|&g| (g, Vec::new())).collect());
    }
    let vectors = vectors_for(engine, embedder)?;
    let prepared: Vec<PreparedCategory> = categories
        .iter()
        .map(|c| prepare_category(&engine.catalogue, embedder, vectors, c))
        .collect::<Result<_>>()?;
    let cat = &engine.catalogue;
    Ok(grant_ids
        .iter()
        .map(|&g| {
            let grant = &cat.grants[g as usize];
            let (head, all) = grant_terms(grant);
            let zs: Vec<f32> = prepared.iter().map(|p| p.z(g)).collect();
            let ids = categories
                .iter()
                .zip(&prepared)
                .enumerate()
                .filter(|(i, (_, p))| {
                    let in_head = p
                        .phrases
                        .iter()
                        .any(|ph| ph.iter().all(|t| term_in(t, &head)));
                    if !p.instruments.is_empty() {
                        return p.instruments.contains(&cat.facts(g).grant_type.value) || in_head;
                    }
                    if !p.kinds.is_empty() {
                        return p.kinds.contains(&cat.facts(g).kind.value) || in_head;
                    }
                    if p.excludes(cat, g) {
                        return false;
                    }
                    let z = zs[*i];
                    let in_all = p
                        .phrases
                        .iter()
                        .any(|ph| ph.iter().all(|t| term_in(t, &all)));
                    (z >= p.strong_z && near_the_closest(&zs, *i))
                        || in_head
                        || (z >= CATEGORY_Z_WEAK && in_all)
                })
                .map(|(_, (c, _))| c.id)
                .collect();
            (g, ids)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qualify::tests::real;

    #[test]
    fn a_category_named_for_instruments_is_read_as_them() {
        use GrantType::*;
        assert_eq!(
            instruments_of_name("Kredite & Bürgschaften"),
            vec![Loan, Guarantee]
        );
        assert_eq!(
            instruments_of_name("Beteiligungskapital & Wagniskapital"),
            vec![Equity]
        );
        assert_eq!(
            instruments_of_name("Venture capital and equity"),
            vec![Equity]
        );
        assert_eq!(instruments_of_name("Förderkredite für KMU"), vec![Loan]);
        // A compound that ends in an instrument word is a topic, and so are subsidies.
        assert!(instruments_of_name("Bürgerbeteiligung & Demokratie").is_empty());
        assert!(instruments_of_name("Zuschüsse für Digitalisierung").is_empty());
        assert!(instruments_of_name("Forschung & Entwicklung").is_empty());
    }

    #[test]
    fn a_description_lists_its_topics_after_a_colon() {
        assert_eq!(
            description_items(
                "Förderung für Vereine, die Inklusion stärken: Angebote für Menschen mit \
                 Behinderung, Geflüchtete und Zugewanderte sowie soziale Beratung. Programme \
                 für Unternehmen: Personal, Maschinen zählen nicht."
            ),
            [
                "Angebote für Menschen mit Behinderung",
                "Geflüchtete und Zugewanderte",
                "soziale Beratung"
            ]
        );
        assert_eq!(
            description_items("Health care: hospitals, nursing care and prevention."),
            ["hospitals", "nursing care and prevention"]
        );
        assert!(description_items("Alles rund um Sport und Bewegung.").is_empty());
    }

    #[test]
    fn english_keywords_also_match_through_their_german_terms() {
        let c = CustomCategory {
            id: Uuid::nil(),
            name: "Gesundheit".into(),
            name_en: "Health".into(),
            description: None,
            keywords: vec!["medical technology".into(), "biotechnology".into()],
        };
        let german = |english| {
            category_phrases(&c, english)
                .into_iter()
                .filter(|p| p == &analyze("Medizintechnik") || p == &analyze("Biotechnologie"))
                .count()
        };
        assert_eq!(german(true), 2);
        assert_eq!(german(false), 0, "a German category keeps its own words");
        assert_eq!(category_phrases(&c, false).len(), 2);
    }

    #[test]
    fn an_english_keyword_of_several_phrases_needs_a_german_term_of_each() {
        let phrases = crate::glossary::german_phrases("start-up loan");
        assert!(
            phrases.contains(&"Gründung Kredit".to_string()),
            "{phrases:?}"
        );
        assert!(phrases.contains(&"Existenzgründung Darlehen".to_string()));
        assert!(
            !phrases.iter().any(|p| p == "Kredit" || p == "Gründung"),
            "one part alone would name every loan or every founding programme: {phrases:?}"
        );
        assert_eq!(
            crate::glossary::german_phrases("business succession"),
            ["Unternehmensnachfolge", "Nachfolge"]
        );
        assert!(
            crate::glossary::german_phrases("market development").is_empty(),
            "\"development\" alone is not what the keyword means"
        );
        assert!(crate::glossary::german_phrases("trade fairs in Europe").is_empty());
        assert!(
            !crate::glossary::german_phrases("trade fairs and export").is_empty(),
            "small words need no translation"
        );
    }

    #[test]
    fn a_category_named_for_programme_kinds_is_read_as_them() {
        use ProgrammeKind::*;
        assert_eq!(kinds_of_name("Forschung & Entwicklung"), vec![ResearchCall]);
        assert_eq!(kinds_of_name("F&E-Förderung"), vec![ResearchCall]);
        assert_eq!(
            kinds_of_name("Research and development"),
            vec![ResearchCall]
        );
        assert_eq!(kinds_of_name("Beratung & Coaching"), vec![Advisory]);
        assert_eq!(
            kinds_of_name("Preise, Wettbewerbe und Stipendien"),
            vec![PrizeScholarship]
        );
        assert_eq!(
            kinds_of_name("Investitionen & Infrastruktur"),
            vec![InvestmentGrant, Infrastructure]
        );
        // Topics that merely contain a kind's word.
        assert!(kinds_of_name("Wettbewerbsfähigkeit & Export").is_empty());
        assert!(kinds_of_name("Stadtentwicklung").is_empty());
        assert!(kinds_of_name("Gesundheitsforschung").is_empty());
        assert!(kinds_of_name("Digitalisierung & IT").is_empty());
    }

    #[test]
    fn a_category_description_rules_out_what_it_excludes() {
        let cat = real();
        let reading = QualificationPrompt::parse(
            cat,
            "Naturschutz und Umweltbildung von Vereinen und Kommunen. Programme, die sich \
             ausschließlich an Unternehmen richten, sowie reine Forschungsförderung zählen nicht.",
        );
        let p = PreparedCategory {
            instruments: Vec::new(),
            kinds: Vec::new(),
            excluded_applicants: reading.excluded_applicant_types.clone(),
            excluded_kinds: reading.excluded_kinds.clone(),
            strong_z: CATEGORY_Z_STRONG,
            main: Similarity {
                cos: Vec::new(),
                mean: 0.0,
                std: 1.0,
                sorted: Vec::new(),
            },
            keywords: Vec::new(),
            items: Vec::new(),
            phrases: Vec::new(),
        };
        let stated = |g: Idx| {
            cat.facts(g)
                .applicants
                .as_ref()
                .filter(|a| a.source != Source::Derived)
                .map(|a| a.value.clone())
        };
        let n = cat.grants.len() as Idx;
        let not_research = |g: &Idx| cat.facts(*g).kind.value != ProgrammeKind::ResearchCall;
        let companies_only = (0..n)
            .filter(not_research)
            .find(|&g| stated(g) == Some(vec![ApplicantType::Company]))
            .expect("a programme stated for companies only");
        assert!(p.excludes(cat, companies_only));
        let also_municipalities = (0..n)
            .filter(not_research)
            .find(|&g| {
                stated(g).is_some_and(|t| {
                    t.contains(&ApplicantType::Company) && t.contains(&ApplicantType::Municipality)
                })
            })
            .expect("a programme for companies and Kommunen");
        assert!(!p.excludes(cat, also_municipalities));
        let research = (0..n)
            .find(|&g| cat.facts(g).kind.value == ProgrammeKind::ResearchCall)
            .expect("a research call");
        assert!(p.excludes(cat, research));
    }

    #[test]
    fn similarity_alone_assigns_only_a_category_near_the_closest() {
        // "Health" at z 2.0 next to "R&D" at 3.0: the programme is about R&D.
        let zs = [3.0, 2.0, 2.6];
        assert!(near_the_closest(&zs, 0));
        assert!(!near_the_closest(&zs, 1));
        assert!(near_the_closest(&zs, 2), "within the margin of the closest");
        assert!(
            near_the_closest(&[1.0], 0),
            "a single category has no rival"
        );
    }

    #[test]
    fn a_category_z_takes_its_best_keyword_in_part() {
        // z-scores given directly: mean 0, spread 1.
        let sim = |cos: &[f32]| Similarity {
            cos: cos.to_vec(),
            mean: 0.0,
            std: 1.0,
            sorted: Vec::new(),
        };
        let mut p = PreparedCategory {
            instruments: Vec::new(),
            kinds: Vec::new(),
            excluded_applicants: Vec::new(),
            excluded_kinds: Vec::new(),
            strong_z: CATEGORY_Z_STRONG,
            main: sim(&[1.0, 2.0]),
            keywords: vec![sim(&[3.0, -1.0]), sim(&[0.5, 0.0])],
            items: Vec::new(),
            phrases: Vec::new(),
        };
        // Grant 0 fits the first keyword well: 0.7 × 1 + 0.3 × 3.
        assert!((p.z(0) - 1.6).abs() < 1e-6, "{}", p.z(0));
        // Grant 1 fits no keyword: its whole-text z is pulled down.
        assert!((p.z(1) - 1.4).abs() < 1e-6, "{}", p.z(1));
        // A topic the description lists counts as a keyword does: 0.7 × 2 + 0.3 × 4.
        p.items = vec![sim(&[0.0, 4.0])];
        assert!((p.z(1) - 2.6).abs() < 1e-6, "{}", p.z(1));
        // Without keywords and topics the whole text alone.
        p.keywords.clear();
        p.items.clear();
        assert_eq!(p.z(0), 1.0);
    }
}
