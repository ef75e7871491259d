//! English → German funding vocabulary for profiles and prompts written in English.
//!
//! The programme texts are German; the multilingual model bridges the languages only
//! loosely and BM25 not at all. [`translate`] finds the glossary's English phrases in a
//! text (word boundaries, longest phrase first, plural "s" folded on both sides) and
//! returns their German terms, which the matcher uses as a German lexical query and a
//! German topic vector. The list (`en_de.tsv`) is data: one phrase per line, a tab, the
//! German terms separated by `|`. The lines below its "topic phrases" marker are topical
//! (not instruments or applicants): [`topics_de`] reads their German terms in a German
//! profile that names no keywords, up to the "English phrases only" marker: the lines
//! below it translate English texts but are no topics of German ones.

use std::collections::HashMap;
use std::sync::OnceLock;

const SOURCE: &str = include_str!("en_de.tsv");

struct Glossary {
    /// Folded English phrase (words joined by one space) → German terms.
    phrases: HashMap<String, Vec<&'static str>>,
    /// The German terms of the topical phrases (the lines below the file's "topic
    /// phrases" marker; not instruments or applicant words), each with its analysed terms
    /// ([`crate::text::analyze`]).
    topics_de: Vec<(&'static str, Vec<String>)>,
    /// [`Glossary::topics_de`] by their first analysed term (indices in file order): a
    /// text is read in one pass over its words.
    topics_by_first: HashMap<String, Vec<usize>>,
    /// The German terms of each topical line: terms that stand for one another.
    lines_de: Vec<Vec<&'static str>>,
    /// The topical lines (indices in file order) each German term is on.
    lines_by_term: HashMap<&'static str, Vec<usize>>,
    /// Words in the longest phrase.
    longest: usize,
}

fn glossary() -> &'static Glossary {
    static GLOSSARY: OnceLock<Glossary> = OnceLock::new();
    GLOSSARY.get_or_init(|| {
        let mut phrases = HashMap::new();
        let mut topics_de: Vec<(&'static str, Vec<String>)> = Vec::new();
        let mut lines_de: Vec<Vec<&'static str>> = Vec::new();
        let mut topical = false;
        let mut longest = 1;
        for line in SOURCE.lines() {
            let line = line.trim_end();
            if line.starts_with("# ---- topic phrases") {
                topical = true;
            }
            if line.starts_with("# ---- English phrases only") {
                topical = false;
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (en, de) = line
                .split_once('\t')
                .expect("glossary lines are `english<TAB>deutsch|deutsch`");
            let key = words(en);
            longest = longest.max(key.len());
            if topical {
                lines_de.push(de.split('|').map(str::trim).collect());
                for t in de.split('|').map(str::trim) {
                    let terms = crate::text::analyze(t);
                    if !terms.is_empty() && !topics_de.iter().any(|(d, _)| *d == t) {
                        topics_de.push((t, terms));
                    }
                }
            }
            // Phrases that fold alike ("grant", "grants") share their terms.
            let terms: &mut Vec<&str> = phrases.entry(key.join(" ")).or_default();
            for t in de.split('|').map(str::trim) {
                if !terms.contains(&t) {
                    terms.push(t);
                }
            }
        }
        let mut topics_by_first: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (_, terms)) in topics_de.iter().enumerate() {
            topics_by_first.entry(terms[0].clone()).or_default().push(i);
        }
        let mut lines_by_term: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (i, line) in lines_de.iter().enumerate() {
            for &t in line {
                let on = lines_by_term.entry(t).or_default();
                if on.last() != Some(&i) {
                    on.push(i);
                }
            }
        }
        Glossary {
            phrases,
            topics_de,
            topics_by_first,
            lines_de,
            lines_by_term,
            longest,
        }
    })
}

/// Lower-cased words of `text` (letters, digits, inner `-` and `&`), with a plural `s`
/// folded ("grants" → "grant", "facilities" → "facility"; not "business").
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '&'))
        .map(|w| w.trim_matches(|c| c == '-' || c == '&').to_lowercase())
        .filter(|w| !w.is_empty())
        .map(|w| fold_plural(&w))
        .collect()
}

fn fold_plural(w: &str) -> String {
    if w.chars().count() <= 3 || w.ends_with("ss") || w.ends_with("us") || w.ends_with("is") {
        return w.to_string();
    }
    if let Some(stem) = w.strip_suffix("ies") {
        return format!("{stem}y");
    }
    w.strip_suffix('s').unwrap_or(w).to_string()
}

/// The German terms of the glossary phrases found in `text`, in order of appearance,
/// each once. A longer phrase wins over the phrases inside it ("heat pump" before
/// "heat").
pub fn translate(text: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for t in phrases_in(text).0.into_iter().flatten() {
        if !out.contains(t) {
            out.push(t);
        }
    }
    out
}

/// The German terms of each glossary phrase of `text` when the phrases cover all of its
/// words but the small ones ("of", "and" …): "start-up loan" → [Gründung, Start-up, …],
/// [Darlehen, Kredit]. `None` when a word has no translation ("market development":
/// "development" alone would not say what the text means).
pub fn translate_whole(text: &str) -> Option<Vec<&'static [&'static str]>> {
    const SMALL: &[&str] = &[
        "a", "an", "the", "of", "and", "or", "for", "in", "on", "to", "with", "by", "at", "&",
    ];
    let (parts, uncovered) = phrases_in(text);
    let complete = uncovered.iter().all(|w| SMALL.contains(&w.as_str()));
    (complete && !parts.is_empty()).then_some(parts)
}

/// The German phrases of an English keyword: each German term of a keyword that is one
/// glossary phrase; for a keyword of several, every combination of one term per phrase
/// (at most [`MAX_GERMAN_COMBINATIONS`]); none when a word of it has no translation.
pub fn german_phrases(keyword: &str) -> Vec<String> {
    let Some(parts) = translate_whole(keyword) else {
        return Vec::new();
    };
    let mut out: Vec<String> = vec![String::new()];
    for terms in &parts {
        out = out
            .iter()
            .flat_map(|head| terms.iter().map(move |t| format!("{head} {t}")))
            .take(MAX_GERMAN_COMBINATIONS)
            .collect();
    }
    out.into_iter().map(|p| p.trim().to_string()).collect()
}

/// Most German phrases one English keyword of several glossary phrases becomes.
const MAX_GERMAN_COMBINATIONS: usize = 16;

/// The glossary phrases found in `text`, in order, each as its German terms (a longer
/// phrase wins over the phrases inside it), and the words no phrase covers.
fn phrases_in(text: &str) -> (Vec<&'static [&'static str]>, Vec<String>) {
    let g = glossary();
    let ws = words(text);
    let mut out = Vec::new();
    let mut uncovered = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let found = (1..=g.longest.min(ws.len() - i))
            .rev()
            .find_map(|n| g.phrases.get(&ws[i..i + n].join(" ")).map(|t| (n, t)));
        match found {
            Some((n, terms)) => {
                out.push(terms.as_slice());
                i += n;
            }
            None => {
                uncovered.push(ws[i].clone());
                i += 1;
            }
        }
    }
    (out, uncovered)
}

/// The topic words of a German text that names none: the German terms of the
/// glossary's topical phrases found in it (by analysed terms, in a row), in order of
/// appearance, one per stem family ("Digitalisierung", not also "digital"), at least
/// four letters, at most `limit`.
pub fn topics_de(text: &str, limit: usize) -> Vec<&'static str> {
    let g = glossary();
    // The analysed terms of the text, each with whether its word was capitalised: a
    // glossary noun of one short stem needs a capitalised word ("Sucht", not the verb
    // "sucht"); longer stems are read from adjectives and verbs too ("landwirtschaftlichen
    // Betrieb" is about "Landwirtschaft").
    let (terms, words): (Vec<String>, Vec<&str>) = text
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|w| Some((crate::text::normalize_token(w)?, w)))
        .unzip();
    let capitalised: Vec<bool> = words
        .iter()
        .map(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    let noun = |de: &str, seq: &[String]| {
        de.chars().next().is_some_and(char::is_uppercase)
            && seq.len() == 1
            && seq[0].chars().count() <= 5
    };
    // Each topic at the first word where it stands (and, as a noun, is capitalised).
    let mut found: Vec<(usize, &'static str)> = Vec::new();
    let mut seen = vec![false; g.topics_de.len()];
    for (pos, term) in terms.iter().enumerate() {
        // A compound noun whose last part is a topic ("Waldschwimmbad").
        if capitalised[pos] {
            if let Some(e) = compound_tail(g, term, words[pos]).filter(|&e| !seen[e]) {
                seen[e] = true;
                found.push((pos, g.topics_de[e].0));
            }
        }
        for &e in g.topics_by_first.get(term).into_iter().flatten() {
            let (de, seq) = &g.topics_de[e];
            let end = pos + seq.len();
            if !seen[e]
                && terms.get(pos..end) == Some(seq.as_slice())
                && (!noun(de, seq) || capitalised[pos..end].iter().any(|&c| c))
            {
                seen[e] = true;
                found.push((pos, de));
            }
        }
    }
    // A longer term first where two start at the same word.
    found.sort_by_key(|(pos, de)| (*pos, std::cmp::Reverse(de.len())));
    // One word per stem family: "Digitalisierung" and "digital", "Jugendliche" and
    // "Jugend" share their first five letters.
    let family = |t: &str| -> String { t.to_lowercase().chars().take(5).collect() };
    let mut out: Vec<&'static str> = Vec::new();
    for (_, t) in found {
        if t.chars().count() >= 4 && !out.iter().any(|o| family(o) == family(t)) {
            out.push(t);
        }
    }
    out.truncate(limit);
    out
}

/// Shortest stem of a one-word topic that a compound's last part may stand for (measured
/// before the spelling check, as the sums of the six tuning figures' nDCG@10 / Recall@25:
/// 4: 2.417 / 2.552, 5: 2.444 / 2.533, 6: 2.414 / 2.533, 8: 2.396 / 2.518; see the README).
const TAIL_STEM: usize = 5;
/// Shortest part before it.
const TAIL_PREFIX: usize = 3;
/// Endings a compound's last part may have after the topic's own spelling (plural and
/// genitive: "Tagespflegen", "Radverkehrs"). Not "er": "Transporter" is no "Sport".
const TAIL_ENDINGS: [&str; 6] = ["", "e", "n", "en", "s", "es"];

/// The one-word topic that a compound noun ends with ("Waldschwimmbad" → "Schwimmbad",
/// "Großwärmepumpe" → "Wärmepumpe"), by `term`, its analysed form: the longest whose stem has
/// at least [`TAIL_STEM`] letters after at least [`TAIL_PREFIX`] others, and which the
/// `word` as written ends with, but for a plural or genitive ending ("Mitarbeitende" is
/// no "Arbeit").
fn compound_tail(g: &Glossary, term: &str, word: &str) -> Option<usize> {
    let mut written: Option<String> = None;
    for (i, _) in term.char_indices().skip(TAIL_PREFIX) {
        let tail = &term[i..];
        if tail.chars().count() < TAIL_STEM {
            break;
        }
        for &e in g.topics_by_first.get(tail).into_iter().flatten() {
            let (de, seq) = &g.topics_de[e];
            if seq.len() != 1 {
                continue;
            }
            let written = written.get_or_insert_with(|| crate::text::fold(&word.to_lowercase()));
            let topic = crate::text::fold(&de.to_lowercase());
            let ends_with_topic = TAIL_ENDINGS.iter().any(|end| {
                written
                    .strip_suffix(end)
                    .is_some_and(|w| w.len() > topic.len() && w.ends_with(&topic))
            });
            if ends_with_topic {
                return Some(e);
            }
        }
    }
    None
}

/// German terms related to the topics a German text names: the other German terms of
/// each topical glossary line with a term [`topics_de`] finds in the text ("Dämmung"
/// brings "Wärmedämmung" and "Gebäude", "Export" brings "Außenwirtschaft"), in order,
/// each once, none the text names, at most `limit`. A German profile reaches the
/// programmes' own words for what it describes as an English one does through
/// [`translate`].
pub fn related_de(text: &str, limit: usize) -> Vec<&'static str> {
    let g = glossary();
    let found = topics_de(text, usize::MAX);
    let mut out: Vec<&'static str> = Vec::new();
    for f in &found {
        for &l in g.lines_by_term.get(f).into_iter().flatten() {
            for &t in &g.lines_de[l] {
                if !found.contains(&t) && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out.truncate(limit);
    out
}

/// Weight of the German terms' embedding next to an English text (matching's default
/// `glossary_weight` and qualification's topic): chosen on the tuning halves.
pub const GERMAN_TERMS_WEIGHT: f32 = 1.0;

/// Embeds `text` as a query and, when `german` terms are given, adds the embedding of
/// those terms with `weight`: a direction between the English text and its German terms.
pub fn embed_bilingual(
    embedder: &crate::embed::Embedder,
    text: &str,
    german: &[&str],
    weight: f32,
) -> crate::Result<Vec<f32>> {
    let mut q = embedder.embed_query(text)?.to_vec();
    if weight > 0.0 && !german.is_empty() {
        let g = embedder.embed_query(&german.join(", "))?;
        for (a, b) in q.iter_mut().zip(g.iter()) {
            *a += weight * b;
        }
    }
    Ok(q)
}

/// [`embed_bilingual`] for several English texts in one batch: each text's query vector
/// plus `weight` × the vector of its German glossary terms (none: the text alone).
pub fn embed_bilingual_all(
    embedder: &crate::embed::Embedder,
    texts: &[&str],
    weight: f32,
) -> crate::Result<Vec<Vec<f32>>> {
    let german: Vec<String> = texts.iter().map(|t| translate(t).join(", ")).collect();
    let mut batch: Vec<&str> = texts.to_vec();
    batch.extend(german.iter().filter(|g| !g.is_empty()).map(String::as_str));
    let rows = embedder.embed_queries(&batch)?;
    let mut extra = rows[texts.len()..].iter();
    Ok(rows[..texts.len()]
        .iter()
        .zip(&german)
        .map(|(q, g)| {
            let mut q = q.to_vec();
            if !g.is_empty() {
                if let Some(v) = extra.next() {
                    for (a, b) in q.iter_mut().zip(v.iter()) {
                        *a += weight * b;
                    }
                }
            }
            q
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_only_phrases_translate_but_are_no_german_topics() {
        assert_eq!(translate("a gaming arcade (gambling)"), ["Glücksspiel"]);
        assert_eq!(
            translate("inter-company training centre")[0],
            "überbetrieblich"
        );
        let german =
            "Wir betreiben eine Spielhalle mit Glücksspiel und bilden überbetrieblich aus.";
        assert!(
            topics_de(german, 8).is_empty(),
            "{:?}",
            topics_de(german, 8)
        );
        assert!(
            related_de(german, 8).is_empty(),
            "{:?}",
            related_de(german, 8)
        );
    }

    #[test]
    fn related_terms_reach_the_words_of_programme_titles() {
        // "Bundesförderung für effiziente Gebäude für Kommunen", "Kommunalrichtlinie
        // (kommunaler Klimaschutz)", "Kommunale Verkehrsinfrastruktur".
        let related = related_de(
            "Das Dorfgemeinschaftshaus soll energetisch saniert werden (energetische \
             Sanierung); wir wollen die Straßenbeleuchtung auf LED umstellen und einen Radweg bauen.",
            usize::MAX,
        );
        for term in [
            "effiziente Gebäude",
            "kommunaler Klimaschutz",
            "Verkehrsinfrastruktur",
        ] {
            assert!(related.contains(&term), "{term} in {related:?}");
        }
    }

    /// Measures name the programmes that fund them: ventilation of an existing building
    /// is building efficiency (BEG), a furnace's waste heat is process heat (EEW).
    #[test]
    fn energy_measures_reach_the_programmes_that_fund_them() {
        let related = related_de(
            "Die Lüftung ist veraltet; wir wollen eine Lüftungsanlage mit Wärmerückgewinnung einbauen.",
            usize::MAX,
        );
        for term in ["effiziente Gebäude", "Energieeffizienz"] {
            assert!(related.contains(&term), "{term} in {related:?}");
        }
        let t = translate("We want to replace our melting furnaces and use the waste heat.");
        for term in ["Prozesswärme", "Abwärme", "Energieeffizienz"] {
            assert!(t.contains(&term), "{term} in {t:?}");
        }
    }

    #[test]
    fn longest_phrase_wins_and_plurals_fold() {
        let t = translate("We plan heat pumps and roof insulation for our buildings.");
        assert_eq!(
            t,
            vec![
                "Wärmepumpe",
                "Heizungsförderung",
                "effiziente Gebäude",
                "Dach",
                "Dämmung",
                "Wärmedämmung",
                "Gebäude",
                "Bau"
            ]
        );
    }

    #[test]
    fn unknown_words_give_nothing_and_terms_appear_once() {
        assert!(translate("Lorem ipsum dolor").is_empty());
        let t = translate("export, exports and export");
        assert_eq!(
            t,
            vec![
                "Export",
                "Außenwirtschaft",
                "Auslandsmärkte",
                "Markterschließung"
            ]
        );
    }

    #[test]
    fn related_terms_of_a_german_text_are_the_other_terms_of_its_lines() {
        let t = related_de("Wir wollen das Dach mit einer Dämmung versehen.", 16);
        assert!(t.contains(&"Wärmedämmung"), "{t:?}");
        assert!(t.contains(&"Dämmstoff"), "{t:?}");
        // Only terms the text does not name, each once.
        assert!(!t.contains(&"Dämmung"), "{t:?}");
        let unique: std::collections::HashSet<_> = t.iter().collect();
        assert_eq!(unique.len(), t.len());
        assert!(related_de("Lorem ipsum dolor", 16).is_empty());
        assert!(related_de("Wir wollen das Dach mit einer Dämmung versehen.", 1).len() <= 1);
    }

    #[test]
    fn related_terms_lead_to_the_words_programmes_use() {
        // A forest swimming pool is a sports facility, a winery a farm business, a cinema
        // film and media: the words of the programmes that fund them.
        let pool = related_de("Unser Verein betreibt das Waldschwimmbad der Stadt.", 16);
        assert!(pool.contains(&"Sportstätte"), "{pool:?}");
        let winery = related_de("Wir sind ein Weingut an der Mosel.", 16);
        assert!(winery.contains(&"Landwirtschaft"), "{winery:?}");
        let cinema = related_de("Das Kino zeigt Arthouse-Filme.", 16);
        assert!(cinema.contains(&"Filmtheater"), "{cinema:?}");
        // A place named after the forest is no forest topic: "Wald" is on no line of
        // forest conversion or bark beetles.
        let place = related_de("Eine Glasbläserei im Thüringer Wald.", 16);
        assert!(!place.contains(&"Borkenkäfer"), "{place:?}");
        assert!(!place.contains(&"Waldumbau"), "{place:?}");
    }

    #[test]
    fn a_compound_noun_names_the_topic_it_ends_with() {
        let topics = topics_de(
            "Das Waldschwimmbad braucht Tagespflegen und eine Großwärmepumpe.",
            usize::MAX,
        );
        for t in ["Schwimmbad", "Pflege", "Wärmepumpe"] {
            assert!(topics.contains(&t), "{t}: {topics:?}");
        }
        // "Transporter" is no "Sport", "Mitarbeitende" no "Arbeit", and a verb is no
        // compound noun.
        assert!(topics_de("Wir kaufen einen Transporter.", usize::MAX).is_empty());
        assert!(!topics_de("Unsere Mitarbeitenden", usize::MAX).contains(&"Arbeit"));
    }

    #[test]
    fn topics_of_a_german_text_are_topical_terms_in_order() {
        let t = topics_de(
            "Wir sind ein Sportverein mit 48 Beschäftigten und wollen eine Wärmepumpe und \
             Photovoltaik für das Vereinsheim; außerdem Digitalisierung und digitale Kurse.",
            8,
        );
        assert_eq!(
            t,
            vec![
                "Beschäftigte",
                "Wärmepumpe",
                "Photovoltaik",
                "Vereinsheim",
                "Digitalisierung"
            ]
        );
        // Instruments and applicants are no topics; the limit holds.
        assert!(topics_de("Ein Verein sucht einen Zuschuss oder ein Darlehen.", 8).is_empty());
        assert_eq!(topics_de("Wärmepumpe, Photovoltaik, Dämmung", 2).len(), 2);
        // A noun needs its capital: the verb "sucht" is no "Sucht" (addiction).
        assert!(topics_de("Der Verein sucht Helfer.", 8).is_empty());
        assert_eq!(
            topics_de("Beratung bei Sucht", 8),
            vec!["Beratung", "Sucht"]
        );
    }

    #[test]
    fn every_line_has_german_terms() {
        let g = glossary();
        assert!(g.phrases.len() > 400);
        assert!(g
            .phrases
            .values()
            .all(|ts| !ts.is_empty() && ts.iter().all(|t| !t.is_empty())));
    }
}
