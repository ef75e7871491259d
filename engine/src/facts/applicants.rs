//! Who may apply, read from a programme's own texts.
//!
//! Förderdatenbank teasers address the applicant: "Wenn Sie als Kommune …",
//! "Als Unternehmen der Sicherheits- und Verteidigungswirtschaft können Sie …"; full
//! texts have sentences such as "Antragsberechtigt sind …". The rules read the noun
//! phrases after "als" in the conditional clause (up to "können Sie") of every sentence
//! that addresses an applicant (list items included: funding rates per applicant type
//! name them all), together with the first explicit applicant sentence; failing both,
//! a possessive ("für Ihr Unternehmen", "Ihre private Immobilie"). Each hit keeps the
//! sentences it was read from.

use std::sync::OnceLock;

use regex::Regex;

use super::lexicon::{applicant_words, ApplicantType};

/// Applicant types read from a text, with the sentence they were read from.
#[derive(Debug, Clone, PartialEq)]
pub struct TextApplicants {
    pub types: Vec<ApplicantType>,
    pub sentence: String,
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("valid applicant pattern")
}

/// A sentence that addresses the applicant.
fn addressing() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"\b(Wenn|Sofern|Falls|Soweit) (Sie|Ihnen|Ihr)\b|^Als\b|\b(können|kann) Sie als\b|\bSie können als\b")
    })
}

/// The main clause that ends the condition ("…, können Sie …").
fn main_clause() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r",\s*(können|kann|erhalten|bekommen|wird|werden|unterstützt|fördert|gewährt|bietet)\b|\bkönnen Sie\b")
    })
}

/// Possessives that name the applicant's own organisation or property.
fn possessive() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"\b[Ii]hr(e|en|em|er|es)? (eigenes? )?(Unternehmen|Betriebs?|Firma|Praxis|Kommune|Gemeinde|Stadt|Vereins?|Hochschule|Schule|Unternehmens|Bildungseinrichtung|Bildungsstätte|Kita|Kindertagesstätte|Kindertageseinrichtung)\b")
    })
}

/// Situations that make the applicant a private person or a founder.
fn situation() -> &'static [(Regex, &'static [ApplicantType])] {
    use ApplicantType::*;
    static R: OnceLock<Vec<(Regex, &'static [ApplicantType])>> = OnceLock::new();
    R.get_or_init(|| {
        vec![
            (
                re(r"\b(sich selbst(st)?ändig machen|ein Unternehmen gründen|eine Existenz gründen|ein Unternehmen übernehmen|Ihr(e|en)? (Gründung|Existenzgründung|Geschäftsidee))"),
                &[Founder, Company][..],
            ),
            (
                re(r"\b([Ii]hre?n? (private[nr]?|selbstgenutzte[nr]?|eigene[nr]?) (Immobilie|Wohnung|Wohnraum|Haus|Eigenheim|Wohneigentum)|selbstgenutzte[nmr]? Wohn|\bstudieren\b|Ihr(em|es)? Studium|promovieren\b)"),
                &[PrivatePerson][..],
            ),
            (
                re(r"\b([Ii]hr(e|en|em)? (landwirtschaftlichen?|forstwirtschaftlichen?) (Betrieb|Flächen)|auf Ihrem (Acker|Grünland|Betrieb))"),
                &[Company][..],
            ),
            (
                // The person's own training or home: "Ihre berufliche Ausbildung … sich
                // weiterqualifizieren", "Ihr Wohngebäude sanieren".
                re(r"\b([Ii]hre?n? (berufliche[n]? )?(Ausbildung|Weiterbildung|Fortbildung|Meisterprüfung|Aufstiegsfortbildung)\b|sich (beruflich )?weiter(qualifizieren|bilden)\b|[Ii]hr(em|es)? (Wohngebäude|Eigenheim|Einfamilienhaus)\b)"),
                &[PrivatePerson][..],
            ),
        ]
    })
}

/// A sentence whose subject is the applicant: "Landwirte und Gärtner können unter
/// bestimmten Bedingungen eine Förderung … erhalten", "Eingetragene Vereine können einen
/// Zuschuss … erhalten" (the subject is the first group).
fn subject_applies() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"^([^,]{3,80}?)\s+(können|kann)\s+(\S+\s+){0,14}?(erhalten|bekommen|beantragen)\b")
    })
}

/// A sentence whose subject funds the applicant ("Das Bundesministerium … fördert
/// Maßnahmen von Unternehmen zur …", "Das Land unterstützt Privatpersonen beim Kauf …"):
/// the funder (a definite article opens the sentence) and what follows its verb, up to
/// the first comma or full stop.
fn funder_funds() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"^(Das|Der|Die)\s[^,.]{2,120}?\s(fördert|unterstützt)\s+(?:(Maßnahmen|Vorhaben|Projekte|Investitionen|Verbundvorhaben)\s+von\s+)?([^,.;:]{3,100})")
    })
}

/// The applicants a funder's sentence names ([`funder_funds`]): the noun phrase after
/// the verb (or after "Maßnahmen von"), up to the first word that opens what is funded
/// ("bei", "beim", "zur", "in" …), when its first noun names an applicant. "Das Land
/// fördert Investitionen in Kitas" and "Die Stiftung unterstützt künstlerische
/// Produktionen" name none: what is funded, not who.
fn funded_applicants(sentence: &str) -> Vec<ApplicantType> {
    let Some(m) = funder_funds().captures(sentence) else {
        return Vec::new();
    };
    let phrase: Vec<&str> = m[4]
        .split_whitespace()
        .take_while(|w| {
            let w = w.to_lowercase();
            !STOP.contains(&w.as_str()) && !matches!(w.as_str(), "beim" | "vom" | "von")
        })
        .take(8)
        .collect();
    let head = phrase
        .iter()
        .find(|w| w.chars().next().is_some_and(char::is_uppercase));
    if head.is_none_or(|h| applicant_words(h).is_empty()) {
        return Vec::new();
    }
    applicant_words(&phrase.join(" "))
}

/// Reads the applicants of a text whose only statement of them is the funder's
/// ("Das Bundesministerium … fördert Maßnahmen von Unternehmen …"): the fallback after
/// [`read`] found nothing in any of the programme's texts, as a full text's explicit
/// applicant sentence says more.
pub fn read_funded(text: &str) -> Option<TextApplicants> {
    sentences(text).find_map(|sentence| {
        let types = funded_applicants(sentence);
        (!types.is_empty()).then(|| TextApplicants {
            types,
            sentence: sentence.to_string(),
        })
    })
}

/// An explicit applicant sentence of a full text.
fn entitled() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"(?i)(antragsberechtigt sind|antragsberechtigt:|antrag stellen können|anträge stellen können|zuwendungsempfänger(innen)? sind|zuwendungsempfangende sind|gefördert werden können|förderberechtigt sind|wer wird gefördert\??:?)")
    })
}

/// Words that end the noun phrase after "als".
const STOP: &[&str] = &[
    "in", "im", "an", "am", "auf", "mit", "für", "zur", "zum", "bei", "durch", "über", "unter",
    "die", "das", "den", "dem", "ein", "eine", "einen", "einem", "einer", "ihr", "ihre", "ihren",
    "ihrem", "ihrer", "ihres", "sich", "bis", "nach", "vor", "aus", "neue", "neuen", "eigene",
    "ihnen", "als", "können", "kann", "wollen", "möchten", "planen", "sind", "tätig", "nicht",
];

/// Words that continue an "als" phrase after a word naming an applicant: lists and
/// genitives ("als Unternehmen oder Hochschule", "als Unternehmen der gewerblichen
/// Wirtschaft").
const CONTINUES: &[&str] = &[
    "oder",
    "und",
    "sowie",
    "bzw.",
    "beziehungsweise",
    "/",
    "der",
    "des",
    "einer",
    "eines",
];

/// Nouns of an "als" phrase that stand for what they hold or run ("Träger einer Schule").
const HOLDERS: &[&str] = &["träger", "betreiber", "inhaber"];
/// Articles of [`STOP`] that may follow such a noun ("der", "des" and "von" do not end
/// a phrase anyway: "als Träger der freien Jugendhilfe" stays whole).
const ARTICLES: &[&str] = &[
    "ein", "eine", "einer", "einem", "einen", "die", "das", "den", "dem",
];

/// "als Familie mit geringem Einkommen", "als ungewollt kinderloses Paar", "als Haushalt
/// mit niedrigem Einkommen": a household applies for itself, a private person. Read in
/// the "als" phrases of programme texts only: in a profile or a prompt, families are
/// whom an organisation serves.
fn household(phrase: &str) -> Option<ApplicantType> {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| re(r"^(\S+ ){0,3}(Familie|Paar|Haushalt|Ehepaar|Alleinerziehende)\b"))
        .is_match(phrase)
        .then_some(ApplicantType::PrivatePerson)
}

/// The sentences of a text (split after . ! ? followed by a space or line break).
pub fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        let end_mark = matches!(b, b'.' | b'!' | b'?') || b == b'\n';
        let next_space = bytes.get(i + 1).is_none_or(|c| c.is_ascii_whitespace());
        if end_mark && next_space {
            // "z. B." and "bzw." are not sentence ends: require a longer previous word.
            // After the last whitespace character, which may be wider than one byte
            // (U+2008 PUNCTUATION SPACE, a no-break space).
            let word_start = text[..i]
                .char_indices()
                .rfind(|(_, c)| c.is_whitespace())
                .map_or(0, |(p, c)| p + c.len_utf8());
            let word = &text[word_start..i];
            if b == b'.'
                && (word.chars().count() <= 2
                    || matches!(
                        word,
                        "bzw" | "ggf" | "ca" | "vgl" | "Nr" | "inkl" | "max" | "mind"
                    ))
            {
                continue;
            }
            out.push(text[start..=i].trim());
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(text[start..].trim());
    }
    out.into_iter().filter(|s| !s.is_empty())
}

/// The noun phrases after each "als" of a clause ("als Kommune oder Unternehmen",
/// "als kleines oder mittleres Unternehmen (KMU)").
fn als_phrases(clause: &str) -> Vec<String> {
    let words: Vec<&str> = clause.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !w.eq_ignore_ascii_case("als") {
            continue;
        }
        let mut phrase: Vec<&str> = Vec::new();
        // "als ein kleines oder mittleres Unternehmen": the article opens the phrase.
        let start = i
            + 1
            + words[i + 1..]
                .iter()
                .take(1)
                .filter(|w| ARTICLES.contains(&w.to_lowercase().as_str()))
                .count();
        for w in &words[start..] {
            let bare = w
                .trim_matches(|c: char| ",;:()„“\"".contains(c))
                .to_lowercase();
            // "als Träger einer Altenpflegeschule": the holder is what it holds.
            let holder = phrase.last().is_some_and(|l| {
                let l = l.to_lowercase();
                HOLDERS.iter().any(|h| l.starts_with(h))
            });
            if holder && ARTICLES.contains(&bare.as_str()) {
                continue;
            }
            if STOP.contains(&bare.as_str()) {
                break;
            }
            // "als Unternehmen japanischen Studierenden ein Praktikum anbieten": after a
            // noun that names an applicant (not a holder: "Träger von Einrichtungen …")
            // only a list ("oder", ",") or a genitive ("der gewerblichen Wirtschaft")
            // continues the phrase; anything else is the rest of the clause (its
            // object). A parenthesis may add types ("(auch Start-ups)").
            let after_applicant = phrase.last().is_some_and(|l| {
                let noun = l.chars().next().is_some_and(char::is_uppercase);
                let holder = HOLDERS.iter().any(|h| l.to_lowercase().starts_with(h));
                noun && !holder && !l.ends_with(',') && !applicant_words(l).is_empty()
            });
            if after_applicant && !w.starts_with('(') && !CONTINUES.contains(&bare.as_str()) {
                break;
            }
            phrase.push(*w);
            if phrase.len() >= 12 {
                break;
            }
        }
        if !phrase.is_empty() {
            out.push(phrase.join(" "));
        }
    }
    out
}

/// Reads the applicant types a title addresses: the noun phrase after "für" or "an"
/// ("Beratungsförderung für Unternehmen", "Darlehen an Kommunen", "Zuschüsse für
/// Studierende"); `None` when it names none. The fallback for a programme whose texts do
/// not say who may apply.
pub fn read_title(title: &str) -> Option<TextApplicants> {
    let clause: String = title
        .chars()
        .map(|c| if "–—-,;:()".contains(c) { ' ' } else { c })
        .collect();
    let words: Vec<&str> = clause.split_whitespace().collect();
    let mut types: Vec<ApplicantType> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !matches!(w.to_lowercase().as_str(), "für" | "an") {
            continue;
        }
        let phrase: Vec<&str> = words[i + 1..]
            .iter()
            .take_while(|w| !STOP.contains(&w.to_lowercase().as_str()))
            .take(6)
            .copied()
            .collect();
        for t in applicant_words(&phrase.join(" ")) {
            if !types.contains(&t) {
                types.push(t);
            }
        }
    }
    (!types.is_empty()).then(|| TextApplicants {
        types,
        sentence: title.to_string(),
    })
}

/// Reads the applicant types of a teaser or full text; `None` when the text does not
/// say who may apply.
pub fn read(text: &str) -> Option<TextApplicants> {
    let mut possessive_hit = None;
    let mut addressed: Option<TextApplicants> = None;
    let all: Vec<&str> = sentences(text).collect();
    for (at, &sentence) in all.iter().enumerate() {
        // A list item ("* Als Unternehmen erhalten Sie …") is a sentence of its own.
        let sentence =
            sentence.trim_start_matches(|c: char| "*-•·".contains(c) || c.is_whitespace());
        if addressing().is_match(sentence) {
            let clause = main_clause()
                .find(sentence)
                .map_or(sentence, |m| &sentence[..m.start()]);
            let mut types: Vec<ApplicantType> = Vec::new();
            for phrase in als_phrases(clause) {
                for t in applicant_words(&phrase)
                    .into_iter()
                    .chain(household(&phrase))
                {
                    if !types.contains(&t) {
                        types.push(t);
                    }
                }
            }
            if types.is_empty() {
                for (rx, ts) in situation() {
                    if rx.is_match(clause) {
                        types.extend(ts.iter().copied());
                    }
                }
            }
            if !types.is_empty() {
                // Every sentence that addresses an applicant names one who may apply
                // ("Als Unternehmen erhalten Sie 50 % …", "Als Hochschule … bis zu 100 %"):
                // read them all, and keep them all as the evidence.
                match addressed.as_mut() {
                    None => {
                        addressed = Some(TextApplicants {
                            types,
                            sentence: sentence.to_string(),
                        })
                    }
                    Some(a) => {
                        a.types.extend(types);
                        a.sentence.push(' ');
                        a.sentence.push_str(sentence);
                    }
                }
                continue;
            }
            if possessive_hit.is_none() {
                if let Some(m) = possessive().captures(clause) {
                    let types = applicant_words(&m[3]);
                    if !types.is_empty() {
                        possessive_hit = Some(TextApplicants {
                            types,
                            sentence: sentence.to_string(),
                        });
                    }
                }
            }
        }
        if possessive_hit.is_none() && addressed.is_none() {
            if let Some(m) = subject_applies().captures(sentence) {
                let subject = &m[1];
                let types = applicant_words(subject);
                if !subject.contains("Sie") && !types.is_empty() {
                    possessive_hit = Some(TextApplicants {
                        types,
                        sentence: sentence.to_string(),
                    });
                }
            }
        }
        if let Some(mut a) = entitled_block(&all, at) {
            // A text may name more applicants in a later block ("Im Bereich … sind
            // zudem auch antragsberechtigt: * Unternehmen …").
            for later in at + 1..all.len() {
                if !all[later].to_lowercase().contains("antragsberechtigt") {
                    continue;
                }
                if let Some(b) = entitled_block(&all, later) {
                    a.types.extend(b.types);
                    a.sentence.push(' ');
                    a.sentence.push_str(&b.sentence);
                }
            }
            if let Some(addressed) = addressed {
                a.types.extend(addressed.types);
                a.sentence = format!("{} {}", addressed.sentence, a.sentence);
            }
            a.types.sort();
            a.types.dedup();
            return Some(a);
        }
    }
    if let Some(mut a) = addressed {
        a.types.sort();
        a.types.dedup();
        return Some(a);
    }
    possessive_hit
}

/// The applicants of an explicit applicant sentence at `all[at]`, with the list that
/// follows it when the sentence ends without a full stop ("Antragsberechtigt sind" and
/// then "* Hochschulen," "* außeruniversitäre Forschungseinrichtungen." as items of
/// their own): the items up to the first sentence that is no list item. A sentence that
/// ends as an item does (",", ";") heads no list, and a negated one ("Nicht gefördert
/// werden können …", "keine …") names no applicants.
fn entitled_block(all: &[&str], at: usize) -> Option<TextApplicants> {
    let sentence = all[at];
    let m = entitled().find(sentence)?;
    let before = sentence[..m.start()].to_lowercase();
    if before.contains("nicht") || before.contains("kein") {
        return None;
    }
    let mut words = sentence[m.end()..].to_string();
    let mut evidence = sentence.to_string();
    if !sentence.ends_with(['.', ',', ';']) {
        for item in all[at + 1..]
            .iter()
            .take_while(|s| s.starts_with(|c: char| "*-•·".contains(c)))
        {
            let item = item.trim_start_matches(|c: char| "*-•·".contains(c) || c.is_whitespace());
            words.push_str(" \n ");
            words.push_str(item);
            evidence.push(' ');
            evidence.push_str(item);
        }
    }
    let types = applicant_words(&words);
    (!types.is_empty()).then_some(TextApplicants {
        types,
        sentence: evidence,
    })
}

/// Verbs of supporting others: "Wenn Sie kleine oder mittlere Unternehmen … beraten und
/// unterstützen", "… Start-ups in der Frühphase intensiv betreuen möchten".
fn supporting() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"\b(beraten|unterstützen|begleiten|betreuen|sensibilisieren|coachen|informieren|vernetzen|qualifizieren|schulen)\b")
    })
}

/// Companies and founders a teaser names as those its applicant supports — the object of
/// a verb of support in the condition ("Wenn Sie kleine oder mittlere Unternehmen (KMU)
/// bei der passgenauen Besetzung von Ausbildungsplätzen … beraten und unterstützen,
/// können Sie …", "Wenn Sie Gründerinnen oder Gründer … beim Markteinstieg unterstützen
/// wollen"): they benefit, someone else applies. Not when the clause speaks of the applicant's own
/// organisation or people ("Ihr Unternehmen", "sich beraten lassen"); the "als" phrases
/// (the applicant) are left out. Only companies and founders: the types whose own
/// projects such a programme does not fund although its topic is theirs.
pub fn supported(text: &str) -> Option<TextApplicants> {
    static R: OnceLock<[Regex; 4]> = OnceLock::new();
    let [condition, own, companies, founders] = R.get_or_init(|| {
        [
            re(r"^(Wenn|Sofern|Falls) Sie\b"),
            re(r"\b([Ii]hr(e|en|em|er|es)?|sich|lassen|selbst)\b"),
            // Whole words: "Landwirtschaftsanpassung" names no company.
            re(r"\b(Unternehmen|KMU|\w*[Bb]etrieben?|\w*[Bb]etriebe|Firmen|Unternehmerinnen|Unternehmern?|Selbst(st)?ändigen?|Mittelstand)\b"),
            re(r"\b(Gründerinnen|Gründern?|Existenzgründer\w*|Start-ups?|Startups?|Gründungsteams?)\b"),
        ]
    });
    for sentence in sentences(text) {
        let sentence = sentence.trim_start();
        let Some(start) = condition.find(sentence) else {
            continue;
        };
        let clause = main_clause()
            .find(sentence)
            .map_or(sentence, |m| &sentence[..m.start()]);
        let Some(verb) = supporting().find_at(clause, start.end()) else {
            continue;
        };
        if own.is_match(clause) {
            continue;
        }
        let mut object = clause[start.end()..verb.start()].to_string();
        for phrase in als_phrases(clause) {
            object = object.replace(&format!("als {phrase}"), " ");
        }
        // Founders found companies: a start-up is both.
        let mut types: Vec<ApplicantType> = Vec::new();
        if founders.is_match(&object) {
            types.extend([ApplicantType::Company, ApplicantType::Founder]);
        } else if companies.is_match(&object) {
            types.push(ApplicantType::Company);
        }
        if !types.is_empty() {
            return Some(TextApplicants {
                types,
                sentence: sentence.to_string(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::ApplicantType::*;
    use super::*;

    fn types(t: &str) -> Vec<ApplicantType> {
        read(t).map(|r| r.types).unwrap_or_default()
    }

    /// A title names its applicants after "für" or "an"; other nouns there are not read.
    #[test]
    fn a_title_names_the_applicants_after_fuer_or_an() {
        let title = |t: &str| read_title(t).map(|r| r.types).unwrap_or_default();
        assert_eq!(title("Beratungsförderung für Unternehmen"), vec![Company]);
        assert_eq!(
            title("Darlehen an Kommunen – Breitband"),
            vec![Municipality]
        );
        assert_eq!(title("Zuschüsse für Studierende"), vec![PrivatePerson]);
        assert_eq!(
            title("Programm für junge Unternehmen"),
            vec![Company, Founder]
        );
        // What is funded, not who applies.
        assert!(title("Förderung für Investitionen in Unternehmen").is_empty());
        assert!(title("Förderung von Vereinen").is_empty());
        assert!(title("Heizungsförderung – Nichtwohngebäude").is_empty());
    }

    /// Whitespace wider than one byte before a full stop does not split a character.
    #[test]
    fn companies_supported_by_the_applicant_are_no_applicants() {
        let supported = |t: &str| super::supported(t).map(|r| r.types);
        assert_eq!(
            supported(
                "Wenn Sie kleine oder mittlere Unternehmen (KMU) bei der passgenauen Besetzung \
                 von Ausbildungsplätzen beraten und unterstützen, können Sie unter bestimmten \
                 Voraussetzungen einen Zuschuss erhalten."
            ),
            Some(vec![Company])
        );
        assert_eq!(
            supported(
                "Wenn Sie als Kammer oder berufsständische Vereinigung kleine oder mittlere \
                 Unternehmen für das Themenfeld Unternehmensnachfolge sensibilisieren wollen, \
                 können Sie einen Zuschuss erhalten."
            ),
            Some(vec![Company])
        );
        assert_eq!(
            supported(
                "Wenn Sie Gründerinnen oder Gründer beim Markteinstieg unterstützen wollen, \
                 können Sie einen Zuschuss erhalten."
            ),
            Some(vec![Company, Founder])
        );
        // The applicant's own company, people or advice is its own project.
        for own in [
            "Wenn Sie Ihr Unternehmen von externen Fachleuten beraten lassen, können Sie einen Zuschuss erhalten.",
            "Wenn Sie die Beschäftigten in Ihrem Betrieb qualifizieren, können Sie einen Zuschuss erhalten.",
            "Wenn Sie sich als Unternehmen beraten lassen wollen, können Sie einen Zuschuss erhalten.",
            // A compound is no company; a plan of the applicant's own is no support.
            "Wenn Sie ländliche Räume durch Maßnahmen der Landwirtschaftsanpassung unterstützen, können Sie einen Zuschuss erhalten.",
            "Wenn Sie als Unternehmen in neue Maschinen investieren, können Sie einen Zuschuss erhalten.",
        ] {
            assert_eq!(supported(own), None, "{own}");
        }
    }

    #[test]
    fn sentences_split_after_wide_whitespace() {
        let text = "Wir sind\u{2008}hier. Wir\u{a0}bleiben. Ende";
        let got: Vec<&str> = sentences(text).collect();
        assert_eq!(
            got,
            vec!["Wir sind\u{2008}hier.", "Wir\u{a0}bleiben.", "Ende"]
        );
    }

    /// A sentence whose subject is the applicant, when no sentence addresses one.
    #[test]
    fn the_subject_of_a_sentence_may_be_the_applicant() {
        assert_eq!(
            types("Landwirte und Gärtner können unter bestimmten Bedingungen eine Förderung für die Durchführung von energieeffizienten Maßnahmen erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Eingetragene Vereine können einen Zuschuss für den Kauf einer Drohne mit Wärmebildkamera erhalten."),
            vec![Association]
        );
        // Not a subject that applies: an adverbial, or "Sie" (read as addressing).
        assert!(read(
            "Unter bestimmten Voraussetzungen können Unternehmen zusätzlich eine Prämie erhalten."
        )
        .is_none());
        assert!(read("Dafür können Zuschüsse von bis zu 150.000 EUR gewährt werden.").is_none());
    }

    /// A funder's sentence names the applicants whose measures it funds; what it funds
    /// ("Investitionen in Kitas", "künstlerische Produktionen") names none.
    #[test]
    fn a_funder_names_whom_it_funds() {
        let funded = |t: &str| read_funded(t).map(|r| r.types).unwrap_or_default();
        assert_eq!(
            funded("Das Bundesministerium für Wirtschaft und Energie (BMWE) fördert Maßnahmen von Unternehmen zur Steigerung der Energie- und Ressourceneffizienz."),
            vec![Company]
        );
        assert_eq!(
            funded("Das Land unterstützt Privatpersonen beim Kauf eines Elektroautos."),
            vec![PrivatePerson]
        );
        assert_eq!(
            funded("Das Ministerium unterstützt Hochschulen und Forschungseinrichtungen bei der Gründungsberatung."),
            vec![University, ResearchInstitution]
        );
        assert!(funded("Das Land fördert Investitionen in Kindertagesstätten.").is_empty());
        assert!(
            funded("Die Kulturstiftung des Bundes unterstützt künstlerische Produktionen.")
                .is_empty()
        );
        assert!(funded("Das Land fördert die Gründung von Unternehmen.").is_empty());
        // Not read by `read`: a full text's applicant sentence says more.
        assert!(read("Das Land unterstützt Unternehmen und Verwaltungen.").is_none());
    }

    /// The noun phrase after "als" ends at the applicant it names unless a list or a
    /// genitive continues it: the clause's object is no applicant.
    #[test]
    fn the_object_after_the_applicant_is_no_applicant() {
        assert_eq!(
            types("Wenn Sie als Unternehmen japanischen Studierenden ein Praktikum anbieten, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Wenn Sie als Privatperson Wohneigentum bauen oder kaufen, können Sie unter bestimmten Voraussetzungen ein Darlehen erhalten."),
            vec![PrivatePerson]
        );
        // Lists, adjectives before the noun and genitives still continue the phrase.
        assert_eq!(
            types("Wenn Sie als Hochschule oder außerhochschulische Forschungseinrichtung ein Vorhaben planen, können Sie einen Zuschuss erhalten."),
            vec![University, ResearchInstitution]
        );
        assert_eq!(
            types("Wenn Sie als Unternehmen der gewerblichen Wirtschaft, Hochschule oder Verein investieren, können Sie einen Zuschuss erhalten."),
            vec![Company, Association, University]
        );
    }

    /// Real teasers of the Förderdatenbank.
    #[test]
    fn teasers() {
        assert_eq!(
            types("Wenn Sie als kleines oder mittleres Unternehmen (KMU) an einer Messe, Ausstellung und vergleichbaren Veranstaltung im Ausland teilnehmen möchten, um neue Absatzmärkte zu erschließen, können Sie unter bestimmten Bedingungen einen Zuschuss erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Wenn Sie als Kommune oder Unternehmen in verkehrswichtige Anlagen für den Rad- und/oder Fußverkehr investieren, können Sie unter bestimmten Voraussetzungen einen Zuschuss bekommen."),
            vec![Company, Municipality]
        );
        assert_eq!(
            types("Wenn Sie sich als Hochschule an europäischen Forschungsprojekten beteiligen wollen, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![University]
        );
        assert_eq!(
            types("Wenn Sie als Stadt- und Landkreis die Angebote der sozialpsychiatrischen Dienste ausbauen, können Sie unter bestimmten Voraussetzungen einen Zuschuss bekommen."),
            vec![Municipality]
        );
        assert_eq!(
            types("Als Unternehmen der Sicherheits- und Verteidigungswirtschaft können Sie unter bestimmten Voraussetzungen Unterstützung bei der Erschließung von Auslandsmärkten erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Wenn Sie Ausbildungswillige aus Ländern außerhalb der EU für Ihr Unternehmen gewinnen wollen, können Sie unter bestimmte Voraussetzungen einen Zuschuss erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Wenn Sie Humanmedizin studieren und nach Ihrer Weiterbildung zur Fachärztin oder zum Facharzt im ländlichen Raum hausärztlich tätig werden, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![PrivatePerson]
        );
        assert_eq!(
            types("Wenn Sie als Verein oder Verband ein Projekt für mehr bürgerschaftliches Engagement in Ihrer Region planen, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![Association]
        );
        assert_eq!(
            types("Wenn Sie sich selbstständig machen wollen und Ihnen die nötigen Sicherheiten für ein Bankdarlehen fehlen, können Sie unter bestimmten Voraussetzungen eine Bürgschaft erhalten."),
            vec![Company, Founder]
        );
        // An article after "als"; a household applies for itself.
        assert_eq!(
            types("Wenn Sie als ein kleines oder mittleres Unternehmen der Aquakultur und Fischwirtschaft investieren, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![Company]
        );
        assert_eq!(
            types("Wenn Sie als Familie mit geringem Einkommen einmal im Jahr einen gemeinsamen Urlaub machen möchten, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![PrivatePerson]
        );
        assert_eq!(
            types("Wenn Sie als ungewollt kinderloses Paar eine Behandlung zur künstlichen Befruchtung durchführen lassen, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![PrivatePerson]
        );
        // The teaser says what is funded, not who applies: unknown.
        assert_eq!(
            types("Wenn Sie Maßnahmen planen, um städtebauliche Missstände und Mängel zu beseitigen, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![]
        );
        assert_eq!(
            types("Wenn Sie Auszubildende für den Pflegeberuf in Drittstaaten anwerben und vorbereiten, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten."),
            vec![]
        );
    }

    #[test]
    fn holders_possessives_and_the_persons_own_training() {
        assert_eq!(
            types("Wenn Sie als Träger einer staatlich anerkannten Altenpflegeschule eine fachgerechte Ausbildung sicherstellen, können Sie unter bestimmten Bedingungen einen Zuschuss erhalten."),
            vec![EducationInstitution]
        );
        assert_eq!(
            types("Wenn Sie Maßnahmen zur Verbesserung der Barrierefreiheit in Ihrer Bildungseinrichtung für Erwachsene durchführen, können Sie unter bestimmten Voraussetzungen einen Zuschuss bekommen."),
            vec![EducationInstitution]
        );
        assert_eq!(
            types("Wenn Sie Ihre berufliche Ausbildung besonders erfolgreich abgeschlossen haben und sich daran anschließend in Ihrem Beruf weiterqualifizieren wollen, können Sie ein Stipendium erhalten."),
            vec![PrivatePerson]
        );
        assert_eq!(
            types("Wenn Sie Ihr Wohngebäude energetisch sanieren wollen, können Sie für eine Energieberatung einen Zuschuss erhalten."),
            vec![PrivatePerson]
        );
        assert_eq!(
            types("Wenn Sie als Träger der freien Jugendhilfe Projekte planen, können Sie einen Zuschuss erhalten."),
            vec![Association]
        );
        // A company that trains its staff is no private person.
        assert_eq!(
            types("Wenn Sie die Weiterbildung Ihrer Beschäftigten planen, können Sie einen Zuschuss erhalten."),
            vec![]
        );
    }

    #[test]
    fn the_sentence_is_the_evidence() {
        let t = "Das Land fördert Vorhaben. Antragsberechtigt sind Gemeinden und Landkreise. Weitere Hinweise folgen.";
        let r = read(t).unwrap();
        assert_eq!(r.types, vec![Municipality]);
        assert_eq!(
            r.sentence,
            "Antragsberechtigt sind Gemeinden und Landkreise."
        );
    }

    /// An applicant sentence that goes on as a list (shortened from "Grundlagenfragen
    /// der Quantentechnologien und der Photonik" and "Forschungskooperation
    /// Waldbewirtschaftung"): the items are the applicants, up to the first sentence that
    /// is no item, and a later block adds its own.
    #[test]
    fn an_applicant_list_names_its_items() {
        let t = "Antragsberechtigt sind \n\n  * Hochschulen und \n  * außeruniversitäre Forschungseinrichtungen. \n\nFür die Förderung gelten folgende Bedingungen: \n\n  * Antragstellende benötigen eine Einrichtung in Deutschland, etwa ein Unternehmen.";
        let r = read(t).unwrap();
        assert_eq!(r.types, vec![University, ResearchInstitution]);
        assert!(r
            .sentence
            .contains("außeruniversitäre Forschungseinrichtungen"));
        assert!(!r.sentence.contains("Bedingungen"), "{}", r.sentence);
        let t = "Antragsberechtigt sind \n\n  * Hochschulen und \n  * Forschungsinstitute. \n\nIm Bereich „Wissen im Forstbereich“ sind zudem auch antragsberechtigt: \n\n  * Unternehmen der gewerblichen Wirtschaft.";
        assert_eq!(
            read(t).unwrap().types,
            vec![Company, University, ResearchInstitution]
        );
        // A sentence that ends with its full stop takes no list after it, a list item
        // that ends with a comma heads none, and a negated one names no applicants.
        let t = "Antragsberechtigt sind Gemeinden. \n\n  * Vereine können Partner sein.";
        assert_eq!(read(t).unwrap().types, vec![Municipality]);
        let t = "Sie erhalten keine Förderung für \n\n  * Projekte, die durch die Filmförderung gefördert werden können, \n  * überwiegend eigene unternehmerische Betätigungen.";
        assert_eq!(read(t), None);
        let t = "Nicht gefördert werden können Unternehmen in Schwierigkeiten. Antragsberechtigt sind Gemeinden.";
        assert_eq!(read(t).unwrap().types, vec![Municipality]);
    }

    /// Funding rates per applicant type, as list items of a full text (shortened from
    /// "Unternehmensgründungen in den Quantentechnologien und der Photonik"): every
    /// addressed type may apply, not only the first one read.
    #[test]
    fn a_list_of_rates_names_every_applicant() {
        let t = "Sie erhalten die Förderung als Zuschuss.\n\n  * Als Unternehmen der gewerblichen Wirtschaft erhalten Sie normalerweise 50 Prozent Ihrer förderfähigen Kosten.\n  * Als Hochschule oder außeruniversitäre Forschungseinrichtung können Sie bis zu 100 Prozent der zuwendungsfähigen Ausgaben erhalten.\n";
        let r = read(t).unwrap();
        assert_eq!(r.types, vec![Company, University, ResearchInstitution]);
        assert!(r
            .sentence
            .starts_with("Als Unternehmen der gewerblichen Wirtschaft"));
        assert!(r.sentence.contains("Als Hochschule oder außeruniversitäre"));
    }
}
