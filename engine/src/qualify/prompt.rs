//! Reading a qualification prompt: clauses, negations and "nur", grant types, the
//! non-profit restriction, regions and eligible entities, applicant types, programme
//! kinds and topics wanted or ruled out, and the topic that is left.

use crate::catalogue::{Catalogue, Idx};
use crate::error::Result;
use crate::facts::{applicant_words, ApplicantType, ProgrammeKind};
use crate::model::{GrantType, RegionType};
use crate::text::{analyze, fold_name, places};

use super::{ProgrammeLevel, QualificationPrompt, QualificationRules};

/// Folded words that stand for companies in general.
const COMPANY_WORDS: &[&str] = &[
    "kmu",
    "sme",
    "smes",
    "unternehmen",
    "unternehmer",
    "firmen",
    "firma",
    "betriebe",
    "mittelstand",
    "mittelstandische",
    "mittelstandischen",
    "startups",
    "startup",
    "companies",
    "company",
    "businesses",
    "enterprises",
    "handwerksbetriebe",
];
/// Aliases of the entity vocabulary too ambiguous to read as an eligibility constraint
/// in free text ("Jugendarbeit an Schulen" does not restrict applicants to schools).
const AMBIGUOUS_ENTITY_WORDS: &[&str] = &[
    "stadt",
    "kreis",
    "institut",
    "schule",
    "kammer",
    "kirche",
    "burger",
    "burgerin",
    "initiative",
    "korperschaft",
    "anstalt",
    "eigentumer",
    "akademie",
    "partnerschaft",
    "uni",
    "se",
    "ag",
    "kg",
    "eg",
    "verband",
    "vereinigung",
    "stiftung",
];

const NEGATORS: &[&str] = &[
    "kein",
    "keine",
    "keinen",
    "keiner",
    "keines",
    "ohne",
    "nicht",
    "ausser",
    "ausgenommen",
    "ausgeschlossen",
    "no",
    "not",
    "without",
    "except",
    "excluding",
    "neither",
    "nor",
    "weder",
];
const ONLY_WORDS: &[&str] = &["nur", "ausschliesslich", "lediglich", "only", "exclusively"];
/// How many words after a negation or "nur" it governs.
const MODIFIER_REACH: usize = 6;

/// Words after which organisations are partners, not the users ("Verbundprojekte mit
/// Unternehmen", "collaborative R&D with companies", "gemeinsam mit Kommunen").
const PARTNER_WORDS: &[&str] = &["mit", "with"];
/// How many tokens after a partner word name the partners (up to a comma).
const PARTNER_REACH: usize = 4;

/// Words that carry no topic ("Programme, die ... nutzen können").
const FILLER_WORDS: &[&str] = &[
    "plattform",
    "richtet",
    "richten",
    "sich",
    "qualifiziert",
    "qualifizieren",
    "freistaat",
    "freistaats",
    "landes",
    "bundes",
    "eu",
    "denen",
    "selbst",
    "zuwendungsempfanger",
    "antragsteller",
    "zwar",
    "wir",
    "vermitteln",
    "unterstutzt",
    "unterstutzen",
    "begleitet",
    "beraten",
    "berat",
    "betreuen",
    "betreut",
    "gefordert",
    "akzeptiert",
    "relevant",
    "platform",
    "serves",
    "advise",
    "advises",
    "support",
    "supports",
    "qualifies",
    "programme",
    "receive",
    "directly",
    "itself",
    "such",
    "if",
    "a",
    "an",
    "we",
    "us",
    "located",
    "working",
    "all",
    "vorhaben",
    "sitz",
    "z.",
    "b.",
    "programm",
    "programme",
    "programmen",
    "forderprogramm",
    "forderprogramme",
    "forderprogrammen",
    "forderung",
    "forderungen",
    "fordermittel",
    "forderangebote",
    "angebote",
    "zuwendungen",
    "mittel",
    "nutzen",
    "konnen",
    "kann",
    "sollen",
    "sollten",
    "passen",
    "passend",
    "passende",
    "passenden",
    "solcher",
    "solche",
    "solchen",
    "forderportal",
    "portal",
    "geeignet",
    "geeignete",
    "eignen",
    "beantragen",
    "bewerben",
    "welche",
    "alle",
    "unsere",
    "unserer",
    "unseren",
    "nutzer",
    "nutzerinnen",
    "mitglieder",
    "kunden",
    "zielgruppe",
    "die",
    "der",
    "das",
    "den",
    "dem",
    "des",
    "fur",
    "und",
    "oder",
    "in",
    "im",
    "mit",
    "von",
    "zu",
    "zur",
    "zum",
    "bei",
    "auf",
    "aus",
    "an",
    "als",
    "wie",
    "sowie",
    "auch",
    "insbesondere",
    "vor",
    "allem",
    "bzw",
    "z",
    "b",
    "etc",
    "programs",
    "programmes",
    "program",
    "funding",
    "grants",
    "that",
    "which",
    "can",
    "could",
    "use",
    "apply",
    "our",
    "users",
    "members",
    "suitable",
    "fit",
    "for",
    "and",
    "or",
    "the",
    "of",
    "to",
    "with",
    "from",
    "by",
    "on",
    "at",
    "is",
    "are",
    "sind",
    "ist",
    "werden",
    "wird",
    "ihr",
    "ihre",
    "ihren",
    "ihrer",
    "wollen",
    "mochten",
    "want",
    "their",
    "they",
    // size words of "kleine und mittlere Unternehmen", "small and medium-sized"
    "kleine",
    "kleinen",
    "kleiner",
    "mittlere",
    "mittleren",
    "mittlerer",
    "small",
    "medium",
    "sized",
    // How a partner speaks of the terms and the source of the money rather than a topic.
    "zinsgunstig",
    "zinsgunstige",
    "zinsgunstigen",
    "zinsverbilligt",
    "zinsverbilligte",
    "zinsverbilligten",
    "low",
    "interest",
    "qualified",
    "help",
    "helps",
    "federal",
    "government",
    "state",
];

#[derive(Debug, Clone)]
struct Word {
    folded: String,
    clause: usize,
    token: usize,
}

/// The funding type a folded word names ("zinsgunstige" none, "kredite" loan, "grundungszuschuss"
/// subsidy): one lexicon for prompts and profiles.
pub(crate) fn grant_type_of_word(w: &str) -> Option<GrantType> {
    const TABLE: &[(&str, GrantType)] = &[
        ("kredit", GrantType::Loan),
        ("darlehen", GrantType::Loan),
        ("loan", GrantType::Loan),
        ("burgschaft", GrantType::Guarantee),
        ("garantie", GrantType::Guarantee),
        ("guarantee", GrantType::Guarantee),
        ("haftungsfreistellung", GrantType::Guarantee),
        ("beteiligung", GrantType::Equity),
        ("eigenkapital", GrantType::Equity),
        ("wagniskapital", GrantType::Equity),
        ("risikokapital", GrantType::Equity),
        ("equity", GrantType::Equity),
        ("zuschuss", GrantType::Subsidy),
        ("zuschusse", GrantType::Subsidy),
        ("grants", GrantType::Subsidy),
        ("beihilfe", GrantType::Subsidy),
        ("subvention", GrantType::Subsidy),
        ("subsid", GrantType::Subsidy),
        ("zuwendung", GrantType::Subsidy),
    ];
    TABLE
        .iter()
        .find(|(stem, _)| w.contains(stem) && !w.starts_with("kreditinstitut"))
        .map(|(_, t)| *t)
}

/// The word names a funding instrument and nothing else ("Zuschüsse", "Förderkredite",
/// "loans"), not a compound whose head is a topic ("Investitionszuschüsse",
/// "Gründungskredit"). Deliberately not the list of `categories::instrument_word_starts`:
/// subsidies count here, and "Wagniskapital" or "Risikokapital" stay topic words (a
/// start-up platform looks for venture-capital programmes; reading them as instruments
/// cost the second v2 prompt a held-out programme).
fn names_only_an_instrument(w: &str) -> bool {
    let w = w.strip_prefix("forder").unwrap_or(w);
    grant_type_of_word(w).is_some()
        && [
            "kredit",
            "darlehen",
            "loan",
            "burgschaft",
            "garantie",
            "guarantee",
            "beteiligungen",
            "beteiligungskapital",
            "eigenkapital",
            "equity",
            "zuschuss",
            "zuschusse",
            "grant",
            "beihilfe",
            "subvention",
            "subsid",
            "zuwendung",
        ]
        .iter()
        .any(|stem| w.starts_with(stem))
}

/// Words for Germany and an abbreviation of a Land (folded word prefix → region code);
/// the Länder's adjectives come from [`crate::text::places::land_of_adjective`].
const REGION_WORDS: &[(&str, &str)] = &[
    ("nrw", "DE-NW"),
    ("bundesweit", "DE"),
    ("deutschlandweit", "DE"),
    ("nationwide", "DE"),
];

/// The part of a clause before the verb that states its purpose ("Unsere Nutzer suchen
/// Geld für … Schulen", "Our users invest in … daycare centres"): what follows is what
/// the users fund, not who they are, so its institution words are no applicant types.
/// Only verbs: "Zuschüsse für Vereine" names the users.
fn before_purpose(clause: &str) -> &str {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let rx = R.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(suchen|brauchen|benötigen)( \w+){0,2} für\b|\binvestieren( \w+){0,2} in\b|\barbeiten an\b|\b(seek|need)s?( \w+){0,2} for\b|\binvest(s|ing)?( \w+){0,2} in\b|\bwork(s|ing)? on\b",
        )
        .expect("valid purpose pattern")
    });
    rx.find(clause).map_or(clause, |m| &clause[..m.start()])
}

/// Folded words of a clause that admit commercial organisations next to non-profit ones:
/// "privat geführt", "privatwirtschaftlich", "gewerblich", "kommerziell", "private
/// Träger/Anbieter/Betreiber", "for-profit", "commercial", "privately run", "private
/// providers/operators".
fn names_for_profit(words: &[&str]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).copied().unwrap_or("");
        w.starts_with("privatwirtschaft")
            || w.starts_with("gewerblich")
            || w.starts_with("kommerziell")
            || *w == "commercial"
            || *w == "forprofit"
            || (*w == "for" && next == "profit")
            || (*w == "privat" && (next.starts_with("gefuhrt") || next.starts_with("betrieben")))
            || (*w == "privately" && matches!(next, "run" | "owned" | "operated" | "managed"))
            || (w.starts_with("private")
                && ["trager", "anbieter", "betreiber", "providers", "operators"]
                    .iter()
                    .any(|n| next.starts_with(n)))
    })
}

/// Splits a prompt into clauses at `;`, `:`, `!`, `?`, line breaks, at a full stop
/// that ends a word of three or more letters before a space (so "e.V." and "z.B." stay),
/// and at a comma that starts a negation after a positive part ("Vereine in Sachsen,
/// keine Kredite": the exclusion does not reach back to the Vereine) or before a part that
/// ends in one ("Zuschüsse und Darlehen kommen in Frage, reine Bürgschaften nicht").
fn clauses(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    // Inside a parenthesis that starts with a negation ("(no state programmes)"): it is a
    // clause of its own, so it does not make the sentence around it an exclusion.
    let mut negated_paren = false;
    for (i, &c) in chars.iter().enumerate() {
        let boundary = match c {
            ';' | ':' | '!' | '?' | '\n' => true,
            '(' => {
                let rest: String = chars[i + 1..].iter().take(40).collect();
                negated_paren = starts_negation(&rest);
                negated_paren
            }
            ')' if negated_paren => {
                negated_paren = false;
                true
            }
            ',' => {
                let rest: String = chars[i + 1..].iter().take(40).collect();
                let segment: String = chars[i + 1..]
                    .iter()
                    .take_while(|c| !matches!(c, ',' | '.' | ';' | ':'))
                    .collect();
                (starts_negation(&rest) || ends_negation(&segment)) && !is_exclusion(&cur)
            }
            '.' => {
                let next_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
                let run = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|p| p.is_alphabetic())
                    .count();
                let closing = i > 0 && matches!(chars[i - 1], ')' | '"' | '“' | '”' | '»');
                next_space && (run >= 3 || closing)
            }
            _ => false,
        };
        if boundary {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out
}

/// The text starts with a negation, possibly after "aber", "jedoch", "but" ("keine
/// Kredite", "aber nicht für Unternehmen", "but no loans").
fn starts_negation(text: &str) -> bool {
    let folded = fold_name(text);
    let mut words = folded.split(' ');
    let mut w = words.next().unwrap_or("");
    if matches!(w, "aber" | "jedoch" | "but" | "and" | "und") {
        w = words.next().unwrap_or("");
    }
    NEGATORS.contains(&w)
}

/// The text is an elliptical exclusion after a positive part: a noun phrase and a bare
/// negation ("Zuschüsse und Darlehen kommen in Frage, reine Bürgschaften nicht"; "grants
/// are fine, loans not") — not the end of a list whose verb rules out all of it
/// ("Programme, die …, sowie reine Forschungsförderung zählen nicht").
fn ends_negation(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some((last, head)) = words.split_last() else {
        return false;
    };
    let continues_list = head.first().is_some_and(|w| {
        matches!(
            fold_name(w).as_str(),
            "sowie" | "und" | "oder" | "and" | "or" | "as"
        )
    });
    // The word before the negation is a noun (German capitalises nouns, not verbs).
    let noun_phrase = head
        .last()
        .and_then(|w| w.chars().next())
        .is_some_and(char::is_uppercase);
    match fold_name(last).as_str() {
        "nicht" => !continues_list && noun_phrase,
        // "loans not", not "whether or not" / "… do not".
        "not" => {
            !continues_list
                && head.last().is_some_and(|w| {
                    !matches!(
                        fold_name(w).as_str(),
                        "or" | "do"
                            | "does"
                            | "did"
                            | "is"
                            | "are"
                            | "was"
                            | "were"
                            | "can"
                            | "may"
                            | "will"
                            | "should"
                            | "could"
                            | "would"
                    )
                })
        }
        _ => false,
    }
}

/// The clause names private persons as such ("Privatpersonen", "Bürgerinnen und
/// Bürger", "private households", "homeowners"), not only people by their role.
fn names_private_persons(clause: &str) -> bool {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)privatperson|private[nrs]? (person|individual|household|haushalt)|privathaushalt|\bbürger|natürliche (und juristische )?person|eigentümer|hausbesitzer|bauherr|\bhomeowner|\bcitizens?\b")
            .expect("valid private-person pattern")
    })
    .is_match(clause)
}

/// True when a clause rules something out: "Nicht qualifiziert sind …", "… sind
/// ausgeschlossen", "keine …", "reicht nicht aus", "do not qualify", "excluded",
/// "neither do scholarships …", "weder … noch …". The
/// positive "nicht rückzahlbar" (non-repayable) is no negation.
fn is_exclusion(clause: &str) -> bool {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let rx = R.get_or_init(|| {
        regex::Regex::new(r"(?i)\bnicht\b|\bkein(e|en|er|em|es)?\b|ausgeschlossen|ausgenommen|ausschlie(ß|ss)en\b|\bausklammern|\bausser\b|\baußer\b|\bweder\b|\bnot\b|\bno\b|\bneither\b|\bnor\b|\bexclud|\bnon-qualif|do(es)?n't|\bnever\b|\bnone\b|out of scope|not (relevant|eligible|covered)|ineligible")
            .expect("valid exclusion pattern")
    });
    static POSITIVE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let positive = POSITIVE.get_or_init(|| {
        regex::Regex::new(r"(?i)nicht[- ]rückzahlbar\w*|non-repayable|not only|nicht nur")
            .expect("valid pattern")
    });
    rx.is_match(&positive.replace_all(clause, " "))
}

/// Programme levels named in a clause ("Bundesprogramme", "Landesprogramme", "EU
/// programmes"); none when the clause is about other Länder ("Landesprogramme anderer
/// Länder zählen nicht" rules out other regions, which the regions do).
fn levels_in(clause: &str) -> Vec<ProgrammeLevel> {
    use ProgrammeLevel::*;
    static R: std::sync::OnceLock<Vec<(regex::Regex, ProgrammeLevel)>> = std::sync::OnceLock::new();
    static OTHER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let other = OTHER.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(ander(e|en|er|es)|fremde[nr]?|other)\b").expect("valid pattern")
    });
    if other.is_match(clause) {
        return Vec::new();
    }
    let rules = R.get_or_init(|| {
        [
            (r"\beu-(förder)?programm|programme?n? der (eu|europäischen union)\b|\beu (funding )?program|programmes? of the (eu|european union)\b|european union programm", Eu),
            (r"\bbundes(förder)?programm|(förder)?programme?n? des bundes\b|\bfederal (funding )?program|\bnational (funding )?program|\bnationale[n]? (förder)?programm", Federal),
            (r"\blandes(förder)?programm|(förder)?programme?n? der (bundes)?länder\b|\bstate (funding )?program|programmes? of the (federal )?states\b", State),
        ]
        .into_iter()
        .map(|(p, l)| (regex::Regex::new(&format!("(?i){p}")).expect("valid level word"), l))
        .collect()
    });
    rules
        .iter()
        .filter(|(rx, _)| rx.is_match(clause))
        .map(|(_, l)| *l)
        .collect()
}

/// Programme kinds named in a clause.
fn kinds_in(clause: &str) -> Vec<ProgrammeKind> {
    use ProgrammeKind::*;
    static R: std::sync::OnceLock<Vec<(regex::Regex, ProgrammeKind)>> = std::sync::OnceLock::new();
    let rules = R.get_or_init(|| {
        [
            (r"forschungsförderung|forschungsprogramm|forschungsvorhaben|forschungsprojekt|\bf&e\b|\bfue\b|reine forschung|research (funding|programmes?|calls?|projects?)|pure research", ResearchCall),
            (r"stipendi|preise?\b|preisen|auszeichnung|wettbewerb|scholarship|prizes?\b|awards?\b|fellowship", PrizeScholarship),
            (r"beratungsförderung|beratungsprogramm|coaching|consulting|advisory", Advisory),
            (r"investitionsförderung|investitionszusch|investment grants?", InvestmentGrant),
        ]
        .into_iter()
        .map(|(p, k)| (regex::Regex::new(&format!("(?i){p}")).expect("valid kind word"), k))
        .collect()
    });
    rules
        .iter()
        .filter(|(rx, _)| rx.is_match(clause))
        .map(|(_, k)| *k)
        .collect()
}

/// The list items of an exclusion clause that name topics: split at commas, "oder",
/// "sowie", "or"; items about regions, applicants, funding types or kinds are left out
/// (their rules read them).
fn excluded_topic_items(clause: &str) -> Vec<String> {
    static SPLIT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let split = SPLIT.get_or_init(|| {
        regex::Regex::new(r",|\boder\b|\bsowie\b|\bor\b|\bas well as\b|\bz\. ?b\.|\be\.g\.")
            .expect("valid pattern")
    });
    static SKIP: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let skip = SKIP.get_or_init(|| {
        regex::Regex::new(r"(?i)bundesl(ä|a)nd|länder|\bstates?\b|region|kredit|darlehen|bürgschaft|beteiligung|\bloans?\b|guarantee|equity|zuschüsse|\bgrants\b|qualifiziert|ausgeschlossen|excluded|qualify").expect("valid pattern")
    });
    static CUE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let cue = CUE.get_or_init(|| {
        regex::Regex::new(r"(?i)^\s*(ebenfalls|außerdem|auch|nicht|keine?|ausgeschlossen sind|ausgenommen sind|ausgenommen|nicht qualifiziert sind|excluded are|except|programme (der|zu|zur|zum|für)|programmes? (for|on|of)|sind|also|not|no|and|und|for|für)\b").expect("valid pattern")
    });
    split
        .split(clause)
        .map(|item| {
            let mut t = item.trim().to_string();
            while let Some(m) = cue.find(&t) {
                t = t[m.end()..].trim().to_string();
            }
            t.trim_matches(|c: char| !c.is_alphanumeric()).to_string()
        })
        .filter(|t| {
            !t.is_empty()
                && !skip.is_match(t)
                // "Landwirtschaft" is a sector (a topic), not the farmers who apply.
                && (applicant_words(t).is_empty() || t.to_lowercase().contains("wirtschaft"))
                && kinds_in(t).is_empty()
                && analyze(t).iter().any(|w| w.len() >= 4)
        })
        .collect()
}

/// The items of the lists of an inclusion clause (at least two items, split at commas,
/// "und", "oder", "sowie", "and", "or"), without applicant, region and funding words.
fn topic_list_items(clause: &str) -> Vec<String> {
    static SPLIT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let split = SPLIT.get_or_init(|| {
        regex::Regex::new(r",|;|\bund\b|\boder\b|\bsowie\b|\band\b|\bor\b|\bz\. ?b\.|\be\.g\.|\bfor example\b|\betwa\b|:").expect("valid pattern")
    });
    static SKIP: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let skip = SKIP.get_or_init(|| {
        regex::Regex::new(r"(?i)bundesl(ä|a)nd|freistaat|\bstate\b|\bbundes\b|\beu\b|kredit|darlehen|bürgschaft|beteiligung|zuschüss|\bloans?\b|guarantee|equity|\bgrants?\b|qualifi|plattform|platform|programm|relevant").expect("valid pattern")
    });
    let items: Vec<String> = split
        .split(clause)
        .map(|i| {
            i.trim()
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_string()
        })
        .filter(|t| {
            !t.is_empty()
                && !skip.is_match(t)
                && applicant_words(t).is_empty()
                && analyze(t)
                    .iter()
                    .filter(|w| w.len() >= 4 && !FILLER_WORDS.contains(&w.as_str()))
                    .count()
                    >= 1
                && t.split_whitespace().count() <= 6
        })
        .collect();
    if items.len() >= 2 {
        items
    } else {
        Vec::new()
    }
}

/// Per token: it follows a partner word ([`PARTNER_WORDS`]) in its clause, by at most
/// [`PARTNER_REACH`] tokens and before a comma.
fn partner_tokens(tokens: &[(usize, String)]) -> Vec<bool> {
    let mut out = vec![false; tokens.len()];
    let mut left = 0;
    for (i, (c, t)) in tokens.iter().enumerate() {
        if i > 0 && tokens[i - 1].0 != *c {
            left = 0;
        }
        if left > 0 {
            out[i] = true;
            left -= 1;
            if t.ends_with([',', '.', ';']) {
                left = 0;
            }
        }
        let bare = t
            .trim_matches(|ch: char| !ch.is_alphanumeric())
            .to_lowercase();
        if PARTNER_WORDS.contains(&bare.as_str()) && !t.ends_with([',', '.', ';']) {
            left = PARTNER_REACH;
        }
    }
    out
}

fn is_modifier_context(words: &[Word], i: usize, set: &[&str]) -> bool {
    let clause = words[i].clause;
    (i.saturating_sub(MODIFIER_REACH)..i)
        .rev()
        .take_while(|&j| words[j].clause == clause)
        .any(|j| set.contains(&words[j].folded.as_str()))
}

/// A prompt cut into clauses, tokens and folded words, with the tokens a rule has read
/// (what is left is the topic).
struct Reading {
    clauses: Vec<String>,
    /// Per clause: it rules something out.
    excl: Vec<bool>,
    /// (clause, original token).
    tokens: Vec<(usize, String)>,
    words: Vec<Word>,
    /// Per token: read by a rule, so no topic.
    consumed: Vec<bool>,
    /// Per token: read as a place (a region, a town, "bundesweit").
    place: Vec<bool>,
    /// Per token: names partners of the users, not the users ("mit Unternehmen").
    partner: Vec<bool>,
}

impl Reading {
    fn new(text: &str) -> Self {
        // Clauses → original tokens → folded words. A clause is an exclusion when it
        // rules something out, or when it is the list after "Nicht qualifiziert sind:".
        let clause_texts: Vec<String> = clauses(text)
            .into_iter()
            .filter(|c| !c.trim().is_empty())
            .collect();
        let mut excl: Vec<bool> = clause_texts.iter().map(|c| is_exclusion(c)).collect();
        for i in 1..clause_texts.len() {
            let prev = clause_texts[i - 1].trim_end();
            if excl[i - 1]
                && prev.split_whitespace().count() <= 6
                && text.contains(&format!("{prev}:"))
            {
                excl[i] = true;
            }
        }
        let mut tokens: Vec<(usize, String)> = Vec::new();
        for (c, clause) in clause_texts.iter().enumerate() {
            for t in clause.split_whitespace() {
                tokens.push((c, t.to_string()));
            }
        }
        let mut words: Vec<Word> = Vec::new();
        for (ti, (clause, tok)) in tokens.iter().enumerate() {
            for f in fold_name(tok).split(' ').filter(|s| !s.is_empty()) {
                words.push(Word {
                    folded: f.to_string(),
                    clause: *clause,
                    token: ti,
                });
            }
        }
        let consumed = vec![false; tokens.len()];
        let place = vec![false; tokens.len()];
        let partner = partner_tokens(&tokens);
        Reading {
            clauses: clause_texts,
            excl,
            tokens,
            words,
            consumed,
            place,
            partner,
        }
    }

    /// Clause `c` without the tokens that name partners: whom it names as users.
    fn users_text(&self, c: usize) -> String {
        self.tokens
            .iter()
            .zip(&self.partner)
            .filter(|((tc, _), partner)| *tc == c && !**partner)
            .map(|((_, t), _)| t.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The item names nothing but places read in clause `c` ("in Schleswig-Holstein",
    /// "bundesweit"): a region, not a topic.
    fn only_places(&self, c: usize, item: &str) -> bool {
        let bare = |t: &str| t.trim_matches(|ch: char| !ch.is_alphanumeric()).to_string();
        let places: Vec<String> = self
            .tokens
            .iter()
            .enumerate()
            .filter(|(i, (tc, _))| *tc == c && self.place[*i])
            .map(|(_, (_, t))| bare(t))
            .collect();
        item.split_whitespace()
            .filter(|w| !analyze(w).is_empty())
            .all(|w| places.contains(&bare(w)))
    }

    /// Negation and "nur" words carry no topic.
    fn consume_modifiers(&mut self) {
        for w in &self.words {
            if NEGATORS.contains(&w.folded.as_str()) || ONLY_WORDS.contains(&w.folded.as_str()) {
                self.consumed[w.token] = true;
            }
        }
    }

    /// The tokens no rule has read, outside exclusions, without filler and function
    /// words: the prompt's topic (empty when nothing of substance is left).
    fn topic(&self) -> String {
        let (tokens, consumed, excl) = (&self.tokens, &self.consumed, &self.excl);
        let topic: Vec<&str> = tokens
            .iter()
            .enumerate()
            .filter(|(i, (c, t))| {
                !consumed[*i] && !excl[*c] && {
                    let f = fold_name(t);
                    // Neither filler of a prompt nor a function word ("vom", "sein").
                    !f.is_empty()
                        && !f.split(' ').all(|w| FILLER_WORDS.contains(&w))
                        && !analyze(t).is_empty()
                }
            })
            .map(|(_, (_, t))| t.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|t| !t.is_empty())
            .collect();
        let topic = topic.join(" ");
        if analyze(&topic).is_empty() {
            String::new()
        } else {
            topic
        }
    }
}

impl QualificationPrompt {
    /// Reads a prompt and applies the partner's corrections ([`QualificationRules`]) to
    /// the reading: what every front-end assesses with.
    pub fn read(cat: &Catalogue, text: &str, rules: Option<&QualificationRules>) -> Result<Self> {
        let mut p = Self::parse(cat, text);
        if let Some(r) = rules {
            r.apply(cat, &mut p)?;
        }
        Ok(p)
    }

    /// Reads a prompt: constraints that map onto catalogue facts, plus the topic.
    pub fn parse(cat: &Catalogue, text: &str) -> Self {
        let mut r = Reading::new(text);
        let mut p = QualificationPrompt {
            text: text.to_string(),
            ..Default::default()
        };
        p.read_grant_types(&mut r);
        p.read_non_profit(&mut r);
        p.read_regions_and_entities(cat, &mut r);
        p.read_levels(&mut r);
        r.consume_modifiers();
        p.read_clause_rules(&r, text);
        p.excluded_types.retain(|t| !p.only_types.contains(t));
        p.applicant_types.sort();
        p.excluded_applicant_types
            .retain(|t| !p.applicant_types.contains(t));
        p.excluded_applicant_types.sort();
        p.topic = r.topic();
        p
    }

    /// Grant types under a negation or "nur".
    fn read_grant_types(&mut self, r: &mut Reading) {
        let (words, excl, consumed) = (&r.words, &r.excl, &mut r.consumed);
        for i in 0..words.len() {
            let Some(t) = grant_type_of_word(&words[i].folded) else {
                continue;
            };
            let compound_subsidy = t == GrantType::Subsidy
                && !matches!(
                    words[i].folded.as_str(),
                    "zuschuss" | "zuschusse" | "grants" | "grant" | "subsidies"
                );
            let in_exclusion = excl[words[i].clause] && !compound_subsidy;
            if is_modifier_context(words, i, NEGATORS) || in_exclusion {
                if !self.excluded_types.contains(&t) {
                    self.excluded_types.push(t);
                }
                consumed[words[i].token] = true;
            } else if is_modifier_context(words, i, ONLY_WORDS) {
                if !self.only_types.contains(&t) {
                    self.only_types.push(t);
                }
                consumed[words[i].token] = true;
            } else if names_only_an_instrument(&words[i].folded) {
                // "Qualifiziert sind Zuschüsse und Kredite für …": the instrument is
                // what is paid, not what the programme is about.
                consumed[words[i].token] = true;
            }
        }
    }

    /// Non-profit ("gemeinnützig", "non-profit", "NGO") outside a negation, unless its
    /// clause also admits commercial organisations ([`names_for_profit`]).
    fn read_non_profit(&mut self, r: &mut Reading) {
        let (words, excl, consumed) = (&r.words, &r.excl, &mut r.consumed);
        for (i, w) in words.iter().enumerate() {
            let next = words.get(i + 1).map(|n| n.folded.as_str());
            let np = w.folded.starts_with("gemeinnutzig")
                || w.folded == "nonprofit"
                || w.folded == "ngo"
                || w.folded == "ngos"
                || (w.folded == "non" && next == Some("profit"));
            if np && !is_modifier_context(words, i, NEGATORS) && !excl[w.clause] {
                // "gemeinnützig …, aber auch privat geführt": non-profit and commercial
                // organisations alike; no restriction (and still no topic word).
                consumed[w.token] = true;
                let clause: Vec<&str> = words
                    .iter()
                    .filter(|x| x.clause == w.clause)
                    .map(|x| x.folded.as_str())
                    .collect();
                if !names_for_profit(&clause) {
                    self.non_profit = Some(true);
                }
                if w.folded == "non" {
                    if let Some(n) = words.get(i + 1) {
                        consumed[n.token] = true;
                    }
                }
            }
        }
    }

    /// Regions and eligible entities: n-grams of up to 5 words, longest first.
    fn read_regions_and_entities(&mut self, cat: &Catalogue, r: &mut Reading) {
        let (words, excl, consumed, place) = (&r.words, &r.excl, &mut r.consumed, &mut r.place);
        let partner = &r.partner;
        let region_names: Vec<(String, Idx)> = cat
            .regions
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                [fold_name(&r.name_de), fold_name(&r.name_en)]
                    .into_iter()
                    .map(move |n| (n, i as Idx))
            })
            .collect();
        let entity_names: Vec<(String, Idx)> = cat
            .eligible_entities
            .iter()
            .enumerate()
            .flat_map(|(i, e)| {
                [&e.name_de, &e.name_en, &e.name_plural_de, &e.name_plural_en]
                    .into_iter()
                    .chain(e.aliases.iter())
                    .map(|n| fold_name(n))
                    .filter(|n| !n.is_empty() && !AMBIGUOUS_ENTITY_WORDS.contains(&n.as_str()))
                    .map(move |n| (n, i as Idx))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut used_word = vec![false; words.len()];
        for n in (1..=5).rev() {
            for start in 0..words.len().saturating_sub(n - 1) {
                let span = &words[start..start + n];
                if span.iter().any(|w| w.clause != span[0].clause)
                    || used_word[start..start + n].iter().any(|u| *u)
                {
                    continue;
                }
                let gram = span
                    .iter()
                    .map(|w| w.folded.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let negated = is_modifier_context(words, start, NEGATORS) || excl[span[0].clause];
                // Partners ("mit Unternehmen") are read, so no topic, but are no users.
                let users = !negated && !partner[span[0].token];
                let preposition = start > 0
                    && ["in", "aus", "nach", "within"].contains(&words[start - 1].folded.as_str());
                let mut hit = false;
                let mut is_place = false;
                let named = region_names.iter().find(|(name, r)| {
                    *name == gram && {
                        let reg = &cat.regions[*r as usize];
                        reg.region_type == RegionType::State
                            || reg.code == "DE"
                            || reg.code == "continent:EU"
                            || preposition
                    }
                });
                // A German town after "in"/"aus" stands for its Land ("Kitas in Leipzig").
                let town = || {
                    preposition
                        .then(|| places::town_land(&gram))
                        .flatten()
                        .and_then(|code| cat.find_region(code))
                };
                if let Some(r) = named.map(|&(_, r)| r).or_else(town) {
                    if !negated && !self.regions.contains(&r) {
                        self.regions.push(r);
                    }
                    hit = true;
                    is_place = true;
                } else if let Some(&(_, e)) = entity_names.iter().find(|(name, _)| {
                    *name == gram
                        || (n == 1
                            && gram.len() > 4
                            && [gram.strip_suffix('n'), gram.strip_suffix('e')]
                                .into_iter()
                                .flatten()
                                .any(|s| s == name))
                }) {
                    if users && !self.entities.contains(&e) {
                        self.entities.push(e);
                    }
                    hit = true;
                } else if n == 1 {
                    let w = gram.as_str();
                    let region_word = REGION_WORDS
                        .iter()
                        .find(|(stem, _)| w.starts_with(stem))
                        .map(|(_, code)| *code)
                        .or_else(|| places::land_of_adjective(w));
                    if let Some(code) = region_word {
                        if let Some(r) = cat.regions.iter().position(|r| r.code == code) {
                            if !negated && !self.regions.contains(&(r as Idx)) {
                                self.regions.push(r as Idx);
                            }
                            hit = true;
                            is_place = true;
                        }
                    } else if COMPANY_WORDS.contains(&w)
                        || (w.starts_with("start") && w.ends_with("ups"))
                    {
                        for (e, ent) in cat.eligible_entities.iter().enumerate() {
                            if ApplicantType::Company
                                .entity_codes()
                                .contains(&ent.code.as_str())
                                && users
                                && !self.entities.contains(&(e as Idx))
                            {
                                self.entities.push(e as Idx);
                            }
                        }
                        hit = true;
                    }
                }
                if hit {
                    for (k, w) in span.iter().enumerate() {
                        used_word[start + k] = true;
                        consumed[w.token] = true;
                        place[w.token] |= is_place;
                    }
                }
            }
        }
    }

    /// Programme levels: those named in an exclusion are ruled out; "nur
    /// Bundesprogramme", "only EU programmes" rule out every other level. Their words
    /// carry no topic.
    fn read_levels(&mut self, r: &mut Reading) {
        for (c, clause) in r.clauses.iter().enumerate() {
            let levels = levels_in(clause);
            if levels.is_empty() {
                continue;
            }
            let only = fold_name(clause)
                .split(' ')
                .any(|w| ONLY_WORDS.contains(&w));
            let ruled_out: Vec<ProgrammeLevel> = if r.excl[c] {
                levels.clone()
            } else if only {
                ProgrammeLevel::ALL
                    .into_iter()
                    .filter(|l| !levels.contains(l))
                    .collect()
            } else {
                Vec::new()
            };
            for l in ruled_out {
                if !self.excluded_levels.contains(&l) {
                    self.excluded_levels.push(l);
                }
            }
            for (i, (tc, tok)) in r.tokens.iter().enumerate() {
                let f = fold_name(tok);
                let level_word = !levels_in(tok).is_empty()
                    || matches!(
                        f.as_str(),
                        "federal"
                            | "national"
                            | "eu"
                            | "european"
                            | "union"
                            | "europaischen"
                            | "europaische"
                            | "state"
                            | "states"
                    );
                if *tc == c && level_word {
                    r.consumed[i] = true;
                }
            }
        }
        self.excluded_levels.sort();
    }

    /// Per clause: applicant types, programme kinds and topics, wanted or (in an
    /// exclusion) ruled out.
    fn read_clause_rules(&mut self, r: &Reading, text: &str) {
        let (clause_texts, excl) = (&r.clauses, &r.excl);
        // People named by what they are, not as private persons ("Auszubildende",
        // "students", "artists"): the users only when the prompt names no organisation;
        // next to one, they are whom the organisations hire, train or serve ("Einstellung
        // und Qualifizierung von Personal, etwa Auszubildende").
        let mut people_served = false;
        for (c, clause) in clause_texts.iter().enumerate() {
            if excl[c] {
                for t in applicant_words(clause) {
                    if !self.excluded_applicant_types.contains(&t) {
                        self.excluded_applicant_types.push(t);
                    }
                }
                for k in kinds_in(clause) {
                    if !self.excluded_kinds.contains(&k) {
                        self.excluded_kinds.push(k);
                    }
                }
                let german = crate::profile::text_language(text) == crate::profile::Locale::De;
                for item in excluded_topic_items(clause)
                    .into_iter()
                    // "Landesprogramme zählen nicht" is a level, not a topic.
                    .filter(|i| levels_in(i).is_empty())
                    // German topics are nouns: an item without one is a verb or filler.
                    .filter(|i| {
                        !german
                            || i.split_whitespace()
                                .any(|w| w.starts_with(char::is_uppercase))
                    })
                    // "Nicht passend sind Programme, die …": no topic, only filler.
                    .filter(|i| {
                        i.split_whitespace().any(|w| {
                            let f = fold_name(w);
                            !FILLER_WORDS.contains(&f.as_str()) && !analyze(w).is_empty()
                        })
                    })
                {
                    if !self.excluded_topics.contains(&item) {
                        self.excluded_topics.push(item);
                    }
                }
            } else {
                let users = r.users_text(c);
                for t in applicant_words(before_purpose(&users)) {
                    if t == ApplicantType::PrivatePerson && !names_private_persons(&users) {
                        people_served = true;
                    } else if !self.applicant_types.contains(&t) {
                        self.applicant_types.push(t);
                    }
                }
                for item in topic_list_items(clause) {
                    // "in Hamburg oder bundesweit" is a region rule: as a topic item it
                    // would qualify every programme that names the place.
                    if r.only_places(c, &item) {
                        continue;
                    }
                    if !self.topic_items.contains(&item) {
                        self.topic_items.push(item);
                    }
                }
            }
        }
        if people_served && self.applicant_types.is_empty() {
            self.applicant_types.push(ApplicantType::PrivatePerson);
        }
    }

    /// True when the prompt says nothing at all (no rule, no topic).
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
            && self.entities.is_empty()
            && self.applicant_types.is_empty()
            && self.excluded_applicant_types.is_empty()
            && self.excluded_kinds.is_empty()
            && self.excluded_topics.is_empty()
            && self.only_types.is_empty()
            && self.excluded_types.is_empty()
            && self.non_profit.is_none()
            && self.topic.is_empty()
    }
}
