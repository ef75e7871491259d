//! Text: German-aware analysis (here) shared by full-text search ([`search`]) and keyword
//! scoring, and the English → German glossary ([`glossary`]) for English profiles,
//! prompts and categories.
//!
//! Pipeline per token: split on non-alphanumerics → lower-case → Snowball German stem →
//! fold umlauts and ß (ä→a, ö→o, ü→u, ß→ss) → strip the derivational suffix `isier`
//! (so that "Digitalisierung" and "digitale" both become `digital`). Stop words are
//! dropped. Index and query go through the same function, so folding is symmetric.

pub mod compound;
pub mod glossary;
pub mod places;
pub mod search;

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::German))
}

const STOP_WORDS: &[&str] = &[
    "der",
    "die",
    "das",
    "den",
    "dem",
    "des",
    "ein",
    "eine",
    "einer",
    "eines",
    "einem",
    "einen",
    "und",
    "oder",
    "in",
    "im",
    "am",
    "an",
    "auf",
    "aus",
    "bei",
    "mit",
    "von",
    "vom",
    "zu",
    "zum",
    "zur",
    "für",
    "fur",
    "fuer",
    "über",
    "uber",
    "ist",
    "sind",
    "wird",
    "werden",
    "sie",
    "es",
    "sich",
    "als",
    "auch",
    "nicht",
    "wenn",
    "können",
    "konnen",
    "unter",
    "bestimmten",
    "voraussetzungen",
    "the",
    "and",
    "of",
    "for",
    "to",
    "a",
    "an",
    "is",
    "are",
    "on",
    "with",
    "by",
    "or",
    "we",
    "our",
    "this",
    "that",
    "be",
    "as",
    "at",
    "from",
    "it",
    "its",
    // Further function words: they carry no topic, and a keyword check that reports
    // them ("Stichwörter im Programmtext: sein") states nothing.
    "sein",
    "seine",
    "seinen",
    "seiner",
    "ihr",
    "ihre",
    "ihren",
    "ihrer",
    "bis",
    "nach",
    "wie",
    "so",
    "was",
    "dass",
    "durch",
    "um",
    "noch",
    "nur",
    "kann",
    "soll",
    "wir",
    "unser",
    "unsere",
    "hat",
    "haben",
    "war",
    "wurde",
    "wurden",
    "diese",
    "dieser",
    "dieses",
    "sowie",
    "ohne",
    "gegen",
    "their",
    "they",
    "which",
    "who",
    "were",
    "has",
    "have",
    "not",
    "but",
    "can",
    "into",
    "such",
    "also",
    // Pronouns whose stems are other stop words' forms ("deren" → "der", "denen" →
    // "den"): after stemming they would be rare terms — "den" only from the 59
    // programmes that say "denen" — and count as topic words. Stop words are dropped
    // before stemming, so each form is listed.
    "deren",
    "dessen",
    "denen",
    "derer",
    "jede",
    "jeder",
    "jedes",
    "jeden",
    "jedem",
    "welche",
    "welcher",
    "welches",
    "welchen",
    "welchem",
    // Likewise the possessives' and personal pronouns' other cases ("die Digitalisierung
    // ihres Betriebs" → "ihr").
    "ihrem",
    "ihres",
    "seinem",
    "seines",
    "unserem",
    "unseren",
    "unserer",
    "unseres",
    "ihnen",
    "ihn",
    "ihm",
];

/// Folds German umlauts and ß to ASCII (ä→a, ö→o, ü→u, ß→ss) on already lower-cased text.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            'ä' | 'à' | 'á' | 'â' => out.push('a'),
            'ö' | 'ó' | 'ò' | 'ô' => out.push('o'),
            'ü' | 'ú' | 'ù' | 'û' => out.push('u'),
            'é' | 'è' | 'ê' => out.push('e'),
            'ß' => out.push_str("ss"),
            _ => out.push(c),
        }
    }
    out
}

pub(crate) fn normalize_token(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    if lower.chars().count() < 2 || STOP_WORDS.contains(&lower.as_str()) {
        return None;
    }
    // Snowball "german2": the transliterations ae/oe/ue stand for ä/ö/ü (not after q).
    let lower = transliterate(&lower);
    let stemmed = stemmer().stem(&lower);
    let mut t = fold(&stemmed);
    if let Some(stripped) = t.strip_suffix("isier") {
        if stripped.len() >= 4 {
            t.truncate(stripped.len());
        }
    }
    Some(t)
}

fn transliterate(word: &str) -> String {
    if !(word.contains("ae") || word.contains("oe") || word.contains("ue")) {
        return word.to_string();
    }
    let mut out = String::with_capacity(word.len());
    let mut prev: Option<char> = None;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'e') && prev != Some('q') {
            let replaced = match c {
                'a' => Some('ä'),
                'o' => Some('ö'),
                'u' => Some('ü'),
                _ => None,
            };
            if let Some(r) = replaced {
                out.push(r);
                chars.next();
                prev = Some(r);
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// Analyses text into normalised terms, in order (duplicates kept).
pub fn analyze(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter_map(normalize_token)
        .collect()
}

/// Folds a name for exact, case- and umlaut-insensitive lookups ("Baden-Württemberg"
/// → "baden wurttemberg").
pub fn fold_name(s: &str) -> String {
    fold(&s.to_lowercase())
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digitalisierung_meets_digitale() {
        assert_eq!(analyze("Digitalisierung"), analyze("digitale"));
        assert_eq!(analyze("DIGITALISIERUNG"), vec!["digital".to_string()]);
    }

    #[test]
    fn umlauts_and_sharp_s_fold() {
        assert_eq!(
            analyze("Förderung"),
            analyze("Foerderung".replace("oe", "o").as_str())
        );
        assert_eq!(analyze("Straße"), analyze("strasse"));
        assert_eq!(analyze("Gründung"), analyze("gründungen"));
    }

    #[test]
    fn stop_words_dropped() {
        assert!(analyze("für die und der").is_empty());
        // Pronouns that stem to a stop word's form are no terms either.
        assert!(analyze("deren denen dessen jede welche ihres unserem Ihnen").is_empty());
        assert_eq!(analyze("Waren"), ["war"], "goods are a word");
    }

    #[test]
    fn names_fold() {
        assert_eq!(fold_name("Baden-Württemberg"), "baden wurttemberg");
        assert_eq!(fold_name("  e.V. "), "e v");
    }
}
